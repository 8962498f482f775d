"""Event simulation of the time to the first wipe-out when failed groups are repaired.

Independent of the model it checks (:mod:`spare_theory.cycles.repairs`): it
imports only the scenario, the argument validators and the compiler switch
:mod:`spare_theory._jit`; the strategy supplies its wipe-out *units*
(:meth:`spare_theory.strategies.base.Strategy.wipeout_units`).
One trial starts with all ``N`` groups up at time 0 and plays events until
the first wipe-out:

* the next failure comes ``Exp((N - f) lambda)`` after the last event
  (``f`` groups down) and hits a uniformly random up group, which is then
  down for a repair time drawn from ``scenario.repair_law`` (mean
  ``repair_minutes``; never back without repairs);
* the next repair is the earliest due one; the group is up again;
* a wipe-out is a failure after which some *unit* has all its members down:
  every group (CKPT-only, ``r = 1``), a replica set (Rep), a shard type's
  ``r`` hosts on the cyclic modular-ruler placement (SPARe).

Each trial has its own stream ``child_seed(seed, i)``, so trial ``i`` is the
same whatever ``trials`` is; its events run in one compiled loop
(:mod:`spare_theory._jit`) over buffers of its uniforms.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rv_continuous

from .._jit import compiled
from .._parallel import map_tasks
from .._samples import HourSamples
from .._validation import as_count, as_real, as_seed_sequence, child_seed
from .scenario import Scenario

__all__ = ["WipeoutTimes", "repair_hours", "repair_sampler", "simulate_wipeout_times"]

# Uniforms drawn per trial at a time.
_BUFFER = 1024
# Trials per task when the trials are spread over an executor.
_TRIALS_PER_TASK = 64


@dataclass(frozen=True)
class WipeoutTimes(HourSamples):
    """Per-trial results of :func:`spare_theory.simulate_time_to_wipeout` (arrays of ``trials``).

    Attributes
    ----------
    hours : numpy.ndarray
        Time of the first wipe-out, hours.
    failures, repairs : numpy.ndarray
        Failures (the wipe-out included) and repairs before it.

    Examples
    --------
    >>> t = WipeoutTimes(np.array([1.0, 3.0]), np.array([2, 4]), np.array([0, 1]))
    >>> t.mean_hours, round(t.standard_error_hours, 3), t.mean("failures")
    (2.0, 1.0, 3.0)
    """

    hours: np.ndarray
    failures: np.ndarray
    repairs: np.ndarray


def repair_hours(scenario: Scenario, q: ArrayLike) -> np.ndarray:
    """Repair times at quantiles ``q`` of ``scenario.repair_law``, hours (``inf`` without repairs).

    ``"exponential"``: ``-m log(1 - q)``; ``"fixed"``: ``m``; a scipy
    distribution: its ``ppf(q)`` (minutes), divided by 60.

    Examples
    --------
    >>> sc = Scenario(gpus=64, gpus_per_group=1, gpu_mtbf_hours=100.0, restart_minutes=1,
    ...               checkpoint_minutes=1, work_hours=1, repair_minutes=30, repair_law="fixed")
    >>> repair_hours(sc, [0.1, 0.9]).tolist()
    [0.5, 0.5]
    """
    q = np.asarray(q, dtype=float)
    m = scenario.repair_minutes
    if m is None:
        return np.full(q.shape, np.inf)
    law: Any = scenario.repair_law
    if law == "exponential":
        return -m * np.log1p(-q) / 60.0
    if law == "fixed":
        return np.full(q.shape, m / 60.0)
    return np.asarray(law.ppf(q), dtype=float) / 60.0


def repair_sampler(scenario: Scenario) -> Callable[[float], float]:
    """``q -> float(repair_hours(scenario, q))`` for one quantile at a time, hours.

    The event loops draw one repair per failure; a scipy distribution's
    ``ppf`` checks its arguments at every call (about 80 us, 90 % of a run
    with a lognormal repair law).  Here they are parsed once and each call
    evaluates the law's ``_ppf`` on a one-element array as ``ppf`` does:
    the same bits (``tests/test_repairs.py``), some 15 times faster.  A law
    that overrides ``ppf`` itself, or a quantile outside ``(0, 1)``, goes
    through ``ppf``.

    Examples
    --------
    >>> from scipy import stats
    >>> sc = Scenario(gpus=64, gpus_per_group=1, gpu_mtbf_hours=100.0, restart_minutes=1,
    ...               checkpoint_minutes=1, work_hours=1, repair_minutes=60,
    ...               repair_law=stats.lognorm(1.2, scale=60 / np.exp(1.2**2 / 2)))
    >>> draw = repair_sampler(sc)
    >>> draw(0.3) == float(repair_hours(sc, 0.3))
    True
    """
    law: Any = scenario.repair_law
    dist: Any = getattr(law, "dist", None)
    frozen = isinstance(dist, rv_continuous) and type(dist).ppf is rv_continuous.ppf
    if scenario.repair_minutes is None or not frozen:
        return lambda q: float(repair_hours(scenario, q))
    shapes, loc, scale = dist._parse_args(*law.args, **law.kwds)
    args = [np.asarray([a], dtype=float) for a in shapes]
    loc, scale = np.asarray([loc], dtype=float), np.asarray([scale], dtype=float)
    quantile = dist._ppf

    def draw(q: float) -> float:
        if not 0.0 < q < 1.0:
            return float(law.ppf(q)) / 60.0
        return float((quantile(np.asarray([q]), *args) * scale + loc)[0]) / 60.0

    return draw


def simulate_wipeout_times(
    scenario: Scenario,
    units: np.ndarray,
    size: np.ndarray,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    max_events: int = 10**6,
    executor: cf.Executor | None = None,
    progress: bool = False,
    heal_hours: float = 0.0,
) -> WipeoutTimes:
    """Simulate the time from a healthy start to the first wipe-out of some unit, with repairs.

    The checked core of :func:`spare_theory.simulate_time_to_wipeout`, which
    takes the units from the strategy.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, repair law (``repair_minutes=None``: failed
        groups never come back).
    units : numpy.ndarray of int
        ``units[g]``: the units group ``g`` belongs to, shape ``(N, k)``.
    size : numpy.ndarray of int
        Members of each unit.
    trials : int
        Independent trials, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` uses ``child_seed(seed, i)``, whatever the executor.
    max_events : int
        Cap on the events of one trial (a guard on the cost of very rare
        wipe-outs).
    executor : concurrent.futures.Executor, optional
        Runs blocks of trials in parallel; ``None`` runs them here.
    progress : bool
        Show a progress bar over blocks of trials.
    heal_hours : float
        Hours a repaired group stays out after its repair, ``>= 0`` (an
        elastic job's heal; default 0).

    Returns
    -------
    WipeoutTimes

    Raises
    ------
    ValueError
        Naming ``max_events`` when a trial needs more events.

    Examples
    --------
    >>> import numpy as np
    >>> sc = Scenario(gpus=8, gpus_per_group=1, gpu_mtbf_hours=10.0, restart_minutes=1,
    ...               checkpoint_minutes=1, work_hours=1)
    >>> units, size = np.arange(8)[:, None], np.ones(8, dtype=np.int64)
    >>> t = simulate_wipeout_times(sc, units, size, 4000, seed=0)
    >>> abs(t.mean_hours - 10 / 8) < 4 * t.standard_error_hours
    True
    """
    trials = as_count(trials, "trials")
    max_events = as_count(max_events, "max_events")
    root = as_seed_sequence(seed)
    heal_hours = as_real(heal_hours, "heal_hours", minimum=0.0)
    tasks = [
        (
            scenario,
            units,
            size,
            first,
            min(_TRIALS_PER_TASK, trials - first),
            root,
            max_events,
            heal_hours,
        )
        for first in range(0, trials, _TRIALS_PER_TASK)
    ]
    parts = map_tasks(_block, tasks, executor=executor, desc="trials", progress=progress)
    return WipeoutTimes(*(np.concatenate(column) for column in zip(*parts)))


def _block(task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trials ``first .. first + trials - 1``, one after another.

    Trial ``i`` reads the uniforms of ``child_seed(seed, first + i)`` in
    order, ``_BUFFER`` at a time (the same doubles as one long draw); the
    events run in :func:`_play` on each buffer.  The transcendental parts
    (``log1p(-u)`` of the failure gaps, the repair-law quantiles) are numpy's,
    applied to the whole buffer, so the numbers are the ones the numpy calls
    give element by element.
    """
    scenario, units, size, first, trials, seed, max_events, heal_hours = task
    units = np.ascontiguousarray(units, dtype=np.int64)
    size = np.ascontiguousarray(size, dtype=np.int64)
    N, lam = scenario.groups, float(scenario.group_failure_rate_per_hour)
    t = np.zeros(trials)
    counts = np.zeros((trials, 4), dtype=np.int64)  # f, failures, repairs, events
    for i in range(trials):
        rng = np.random.default_rng(child_seed(seed, first + i))
        due = np.full(N, np.inf)  # repair due time (inf: up, or down for good)
        is_up = np.ones(N, dtype=bool)
        down = np.zeros(size.size, dtype=np.int64)
        u = np.empty(0)
        while True:
            u = np.concatenate([u, rng.random(_BUFFER)])
            used, status = _play(
                u,
                np.log1p(-u),
                repair_hours(scenario, u) + heal_hours,
                counts[i],
                t[i : i + 1],
                due,
                is_up,
                down,
                units,
                size,
                lam,
                max_events,
            )
            if status == _WIPED:
                break
            if status == _TOO_MANY:
                raise ValueError(
                    f"max_events = {max_events} events without a wipe-out in some trial: "
                    "wipe-outs too rare to simulate here (raise max_events or use the model)"
                )
            u = u[used:]
    return t, counts[:, 1].copy(), counts[:, 2].copy()


# What _play stopped at: uniforms used up, a wipe-out, or max_events reached.
_MORE, _WIPED, _TOO_MANY = 0, 1, 2


@compiled
def _play(
    u: np.ndarray,
    log_u: np.ndarray,
    repair_u: np.ndarray,
    counts: np.ndarray,
    clock: np.ndarray,
    due: np.ndarray,
    is_up: np.ndarray,
    down: np.ndarray,
    units: np.ndarray,
    size: np.ndarray,
    lam: float,
    max_events: int,
) -> tuple[int, int]:
    """Play one trial's events on uniforms ``u``; return ``(uniforms used, status)``.

    ``log_u = log1p(-u)`` and ``repair_u`` (repair hours at quantile ``u``)
    are given per uniform.  An event takes ``u`` for the next failure time
    (``t - log1p(-u) / ((N - f) lam)``); if it comes before the earliest due
    repair (first lowest index on ties), two more: the ``floor(u (N - f))``-th
    up group fails, repaired after the hours of the third.  An event starts
    only with three uniforms left, so it never stops half-way.  ``counts``
    (``f``, failures, repairs, events) and ``clock`` (``t``) carry the state
    between calls.
    """
    N = due.size
    f, failures, repairs, events = counts[0], counts[1], counts[2], counts[3]
    t = clock[0]
    pos, status = 0, _MORE
    while pos + 3 <= u.size:
        if events >= max_events:
            status = _TOO_MANY
            break
        events += 1
        t_fail = t - log_u[pos] / ((N - f) * lam)
        pos += 1
        g = int(np.argmin(due))  # the earliest due repair, first lowest index on ties
        t_rep = due[g]
        if not t_fail < t_rep:  # a repair: the group is up again
            t = t_rep
            due[g] = np.inf
            is_up[g] = True
            f -= 1
            repairs += 1
            for k in range(units.shape[1]):
                down[units[g, k]] -= 1
            continue
        # A failure: the pick-th up group (0-based) goes down.
        t = t_fail
        pick = int(np.floor(u[pos] * (N - f)))
        pos += 1
        g, up = 0, 0
        for j in range(N):
            up += is_up[j]
            if up > pick:
                g = j
                break
        is_up[g] = False
        due[g] = t + repair_u[pos]
        pos += 1
        f += 1
        failures += 1
        wiped = False
        for k in range(units.shape[1]):
            down[units[g, k]] += 1
            wiped |= down[units[g, k]] >= size[units[g, k]]
        if wiped:
            status = _WIPED
            break
    counts[0], counts[1], counts[2], counts[3] = f, failures, repairs, events
    clock[0] = t
    return pos, status
