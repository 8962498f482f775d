"""Event simulation of the time to the first wipe-out when failed groups are repaired.

Independent of the model it checks (:mod:`spare_theory.cycles.repairs`): it
imports only the scenario and the argument validators; the strategy supplies
its wipe-out *units* (:meth:`spare_theory.strategies.base.Strategy.wipeout_units`).
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

Trials run in lockstep (numpy arrays over trials), each with its own stream
``child_seed(seed, i)`` read through a per-trial buffer, so trial ``i`` is
the same whatever ``trials`` is.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._parallel import map_tasks
from .._samples import TrialSamples
from .._validation import as_count, as_seed_sequence, child_seed
from .scenario import Scenario

__all__ = ["WipeoutTimes", "repair_hours", "simulate_wipeout_times"]

# Uniforms drawn per trial at a time.
_BUFFER = 256
# Trials per task when the trials are spread over an executor (run in lockstep).
_TRIALS_PER_TASK = 64


@dataclass(frozen=True)
class WipeoutTimes(TrialSamples):
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

    @property
    def mean_hours(self) -> float:
        """Mean hours to the first wipe-out."""
        return float(self.hours.mean())

    @property
    def standard_error_hours(self) -> float:
        """Standard error of :attr:`mean_hours` (0 for one trial)."""
        n = self.hours.size
        return float(self.hours.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


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


class _Streams:
    """Per-trial uniform streams read in lockstep (each trial's own generator)."""

    def __init__(self, seed: np.random.SeedSequence, first: int, trials: int) -> None:
        self.rngs = [np.random.default_rng(child_seed(seed, first + i)) for i in range(trials)]
        self.buffer = np.empty((trials, _BUFFER))
        for i, rng in enumerate(self.rngs):
            self.buffer[i] = rng.random(_BUFFER)
        self.next = np.zeros(trials, dtype=np.int64)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """One uniform in ``[0, 1)`` for each trial of ``rows``."""
        for i in rows[self.next[rows] >= _BUFFER]:
            self.buffer[i] = self.rngs[i].random(_BUFFER)
            self.next[i] = 0
        out = self.buffer[rows, self.next[rows]]
        self.next[rows] += 1
        return out


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
    tasks = [
        (scenario, units, size, first, min(_TRIALS_PER_TASK, trials - first), root, max_events)
        for first in range(0, trials, _TRIALS_PER_TASK)
    ]
    parts = map_tasks(_block, tasks, executor=executor, desc="trials", progress=progress)
    return WipeoutTimes(*(np.concatenate(column) for column in zip(*parts)))


def _block(task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trials ``first .. first + trials - 1``, in lockstep."""
    scenario, units, size, first, trials, seed, max_events = task
    streams = _Streams(seed, first, trials)
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    due = np.full((trials, N), np.inf)  # repair due time (inf: up, or down for good)
    is_up = np.ones((trials, N), dtype=bool)
    down = np.zeros((trials, size.size), dtype=np.int64)
    f = np.zeros(trials, dtype=np.int64)
    t = np.zeros(trials)
    failures = np.zeros(trials, dtype=np.int64)
    repairs = np.zeros(trials, dtype=np.int64)
    active = np.arange(trials)
    events = 0
    while active.size:
        events += 1
        if events > max_events:
            raise ValueError(
                f"max_events = {max_events} events without a wipe-out in some trial: "
                "wipe-outs too rare to simulate here (raise max_events or use the model)"
            )
        with np.errstate(divide="ignore"):
            t_fail = t[active] - np.log1p(-streams.take(active)) / ((N - f[active]) * lam)
        g_rep = np.argmin(due[active], axis=1)
        t_rep = due[active, g_rep]
        fails = t_fail < t_rep
        # Repairs: the group is up again.
        rows, g = active[~fails], g_rep[~fails]
        t[rows] = t_rep[~fails]
        due[rows, g] = np.inf
        is_up[rows, g] = True
        f[rows] -= 1
        repairs[rows] += 1
        for k in range(units.shape[1]):
            down[rows, units[g, k]] -= 1
        # Failures: a uniformly random up group goes down.
        rows = active[fails]
        t[rows] = t_fail[fails]
        pick = np.floor(streams.take(rows) * (N - f[rows])).astype(np.int64)
        g = np.argmax(np.cumsum(is_up[rows], axis=1) > pick[:, None], axis=1)
        is_up[rows, g] = False
        due[rows, g] = t[rows] + repair_hours(scenario, streams.take(rows))
        f[rows] += 1
        failures[rows] += 1
        wiped = np.zeros(rows.size, dtype=bool)
        for k in range(units.shape[1]):
            down[rows, units[g, k]] += 1
            wiped |= down[rows, units[g, k]] >= size[units[g, k]]
        active = np.setdiff1d(active, rows[wiped], assume_unique=True)
    return t, failures, repairs
