"""Event simulation of the time to the first wipe-out when failed groups are repaired.

Independent of the model it checks (:mod:`spare_theory.hourly.repairs`): it imports
only the scenario and its argument checks, the placement and the argument
validators.  One trial starts with all ``N`` groups up at time 0 and plays
events until the first wipe-out:

* the next failure comes ``Exp((N - f) lambda)`` after the last event
  (``f`` groups down) and hits a uniformly random up group, which is then
  down for a repair time drawn from ``scenario.repair_law`` (mean
  ``repair_minutes``; never back without repairs);
* the next repair is the earliest due one; the group is up again;
* a wipe-out is a failure after which some *unit* has all its members down:
  every group (CKPT-only, ``r = 1``), a replica set ``g mod floor(N/r)``
  (Rep), a shard type's ``r`` hosts on the cyclic modular-ruler placement
  (SPARe).

Trials run in lockstep (numpy arrays over trials), each with its own stream
``child_seed(seed, i)`` read through a per-trial buffer, so trial ``i`` is
the same whatever ``trials`` is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_count, as_seed_sequence, child_seed
from ..placement.placements import cyclic_placement
from .scenario import Scenario, check_plan

__all__ = ["WipeoutTimes", "repair_hours", "simulate_time_to_wipeout", "wipeout_units"]

# Uniforms drawn per trial at a time.
_BUFFER = 256


@dataclass(frozen=True)
class WipeoutTimes:
    """Per-trial results of :func:`simulate_time_to_wipeout` (arrays of length ``trials``).

    Attributes
    ----------
    hours : numpy.ndarray
        Time of the first wipe-out, hours.
    failures, repairs : numpy.ndarray
        Failures (the wipe-out included) and repairs before it.

    Examples
    --------
    >>> t = WipeoutTimes(np.array([1.0, 3.0]), np.array([2, 4]), np.array([0, 1]))
    >>> t.mean_hours, round(t.standard_error_hours, 3)
    (2.0, 1.0)
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


def wipeout_units(strategy: str, N: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """``(units, size)``: the units each group belongs to and each unit's size.

    A wipe-out is a unit with all its members down: each group alone
    (``r = 1``), the replica sets ``g mod floor(N/r)`` (Rep), the shard types
    of the cyclic modular-ruler placement (SPARe: group ``g`` hosts the
    types ``i`` with ``hosts[i, k] = g``).  ``units`` has shape
    ``(N, members per group)``.

    Examples
    --------
    >>> units, size = wipeout_units("rep", 5, 2)
    >>> units.ravel().tolist(), size.tolist()
    ([0, 1, 0, 1, 0], [3, 2])
    """
    if r == 1:
        return np.arange(N)[:, None], np.ones(N, dtype=np.int64)
    if strategy == "rep":
        sets = N // r
        return (np.arange(N) % sets)[:, None], np.bincount(np.arange(N) % sets)
    hosts = cyclic_placement(N, r)
    units = np.empty((N, r), dtype=np.int64)
    units[hosts, np.arange(r)[None, :]] = np.arange(N)[:, None]
    return units, np.full(N, r, dtype=np.int64)


class _Streams:
    """Per-trial uniform streams read in lockstep (each trial's own generator)."""

    def __init__(self, seed: np.random.SeedSequence, trials: int) -> None:
        self.rngs = [np.random.default_rng(child_seed(seed, i)) for i in range(trials)]
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


def simulate_time_to_wipeout(
    scenario: Scenario,
    strategy: str,
    r: int | None,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    max_events: int = 10**6,
) -> WipeoutTimes:
    """Simulate the time from a healthy start to the first wipe-out, with repairs.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, repair law (``repair_minutes=None``: failed
        groups never come back).
    strategy : {"ckpt", "rep", "spare"}
        Strategy (module docstring for each wipe-out rule).
    r : int or None
        Redundancy (as :func:`spare_theory.hourly.scenario.check_plan`).
    trials : int
        Independent trials, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` uses ``child_seed(seed, i)``.
    max_events : int
        Cap on the events of one trial (a guard on the cost of very rare
        wipe-outs).

    Returns
    -------
    WipeoutTimes

    Raises
    ------
    ValueError
        Naming the argument; ``max_events`` when a trial needs more events.

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100,
    ...               repair_minutes=60)
    >>> times = simulate_time_to_wipeout(sc, "spare", 3, 200, seed=1)
    >>> round(times.mean_hours, -1), round(times.standard_error_hours, -1)
    (100.0, 10.0)
    """
    strategy, r = check_plan(scenario, strategy, r)
    trials = as_count(trials, "trials")
    max_events = as_count(max_events, "max_events")
    streams = _Streams(as_seed_sequence(seed), trials)
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    units, size = wipeout_units(strategy, N, r)
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
    return WipeoutTimes(t, failures, repairs)
