"""Event simulation of a spare-node pool: the independent check of :mod:`.spares`.

It imports no closed form.  ``groups`` groups of ``group_nodes`` slots each
hold a working node; every working node fails after its own
``Exp(failure_rate_per_hour / nodes)`` uptime (so a slot waiting for a node
cannot fail, and the cluster's failure rate drops while slots wait: the
closed forms take it as constant).  A failed node goes to repair for a time
drawn from ``repair_law`` (all repairs in parallel) and then joins the pool.
A failure takes a spare from the pool at once if there is one (its slot is
filled ``swap_minutes`` later), else joins a first-come-first-served queue
that the next repaired node serves (then the swap).  Pool nodes do not fail.

Each trial starts with every slot filled, ``spare_nodes`` in the pool and
nothing in repair, runs ``warmup_hours`` unmeasured, then measures
``hours``: time averages over the window, and the failures and group down
periods that *start* in it (followed to their end, past the window if need
be).  Trial ``i`` draws uptimes from ``child_seed(seed, i, 0)`` and repairs
from ``child_seed(seed, i, 1)``, so it is the same whatever ``trials`` is.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._samples import TrialSamples
from .._validation import as_count, as_real, as_seed_sequence, child_seed

__all__ = ["SparePoolSamples", "simulate_spare_pool"]

_BLOCK = 4096  # random draws taken from a stream at a time
_FAIL, _REPAIRED, _FILLED = 0, 1, 2  # event kinds


@dataclass(frozen=True)
class SparePoolSamples(TrialSamples):
    """Per-trial results of :func:`simulate_spare_pool` (arrays of length ``trials``).

    Attributes
    ----------
    failures : numpy.ndarray
        Failures in the window.
    shortage_share : numpy.ndarray
        Share of them that found the pool empty.
    mean_in_repair : numpy.ndarray
        Time-average number of nodes in repair.
    time_short_share : numpy.ndarray
        Share of time with ``spare_nodes`` or more nodes in repair (the pool empty).
    fill_hours : numpy.ndarray
        Mean time from a failure to its slot being filled (wait and swap), hours.
    down_hours : numpy.ndarray
        Mean down period of a group (first failure to all slots filled), hours.
    whole_share : numpy.ndarray
        Time-average share of groups with all slots filled.

    Examples
    --------
    >>> s = simulate_spare_pool(groups=20, group_nodes=4, failure_rate_per_hour=1.0,
    ...                         repair_law="fixed", mean_repair_hours=2.0, spare_nodes=2,
    ...                         swap_minutes=6.0, hours=200.0, trials=3, seed=1)
    >>> s.trials, round(s.mean("mean_in_repair"), 1)
    (3, 2.1)
    """

    failures: np.ndarray
    shortage_share: np.ndarray
    mean_in_repair: np.ndarray
    time_short_share: np.ndarray
    fill_hours: np.ndarray
    down_hours: np.ndarray
    whole_share: np.ndarray

    derived: ClassVar[tuple[str, ...]] = ()


class _Stream:
    """Draws from one generator ``_BLOCK`` at a time (same values however they are used)."""

    def __init__(self, seed: np.random.SeedSequence, draw: Any) -> None:
        self.rng, self.draw = np.random.default_rng(seed), draw
        self.values: list[float] = []

    def next(self) -> float:
        if not self.values:
            self.values = self.draw(self.rng, _BLOCK).tolist()[::-1]
        return self.values.pop()


def _repair_sampler(law: Any, mean: float | None) -> Any:
    if law == "exponential":
        return lambda rng, size: rng.exponential(mean, size)
    if law == "fixed":
        return lambda rng, size: np.full(size, mean)
    return lambda rng, size: np.asarray(law.rvs(size=size, random_state=rng), dtype=float)


def _trial(
    groups: int,
    group_nodes: int,
    node_rate: float,
    repairs: Any,
    spares: int,
    swap: float,
    warmup: float,
    end: float,
    seed: np.random.SeedSequence,
) -> tuple[float, ...]:
    uptime = _Stream(child_seed(seed, 0), lambda rng, size: rng.exponential(1 / node_rate, size))
    repair = _Stream(child_seed(seed, 1), repairs)
    # (time, kind, group, failure time, measured): failures, repairs done, slots filled.
    events: list[tuple[float, int, int, float, bool]] = [
        (uptime.next(), _FAIL, g, 0.0, False) for g in range(groups) for _ in range(group_nodes)
    ]
    heapq.heapify(events)
    pool, in_repair = spares, 0
    queue: deque[tuple[int, float, bool]] = deque()  # slots waiting for a node
    missing = [0] * groups
    down_since = [0.0] * groups
    down_measured = [False] * groups  # the group's down period started in the window
    whole, last = groups, warmup
    area_repair = area_short = area_whole = fill_total = down_total = 0.0
    failures = shortages = downs = outstanding = 0  # outstanding: measured, not yet over
    while events:
        t, kind, g, failed_at, measured = heapq.heappop(events)
        if t > end and outstanding == 0:
            break
        if t > warmup and last < end:  # time averages over [warmup, end]
            span = min(t, end) - last
            area_repair += in_repair * span
            area_short += (in_repair >= spares) * span
            area_whole += whole * span
            last = min(t, end)
        if kind == _FAIL:
            measured = warmup <= t < end
            in_repair += 1
            heapq.heappush(events, (t + repair.next(), _REPAIRED, -1, 0.0, False))
            if measured:
                failures += 1
                shortages += pool == 0
                outstanding += 1
            if missing[g] == 0:
                whole -= 1
                down_since[g], down_measured[g] = t, measured
                outstanding += measured
            missing[g] += 1
            if pool:
                pool -= 1
                heapq.heappush(events, (t + swap, _FILLED, g, t, measured))
            else:
                queue.append((g, t, measured))
        elif kind == _REPAIRED:
            in_repair -= 1
            if queue:
                h, failed, was_measured = queue.popleft()
                heapq.heappush(events, (t + swap, _FILLED, h, failed, was_measured))
            else:
                pool += 1
        else:  # the slot is filled and its new node starts working
            if measured:
                fill_total += t - failed_at
                outstanding -= 1
            missing[g] -= 1
            heapq.heappush(events, (t + uptime.next(), _FAIL, g, 0.0, False))
            if missing[g] == 0:
                whole += 1
                if down_measured[g]:
                    downs += 1
                    down_total += t - down_since[g]
                    outstanding -= 1
    return failures, shortages, area_repair, area_short, area_whole, fill_total, downs, down_total


def simulate_spare_pool(
    *,
    groups: int,
    group_nodes: int,
    failure_rate_per_hour: float,
    repair_law: Any,
    spare_nodes: int,
    swap_minutes: float,
    hours: float,
    trials: int,
    seed: int | np.random.SeedSequence,
    mean_repair_hours: float | None = None,
    warmup_hours: float | None = None,
) -> SparePoolSamples:
    """Simulate a cluster whose failed nodes are swapped for spares (module docstring).

    Parameters
    ----------
    groups, group_nodes : int
        Groups and node slots per group, ``>= 1`` (``nodes = groups x group_nodes``).
    failure_rate_per_hour : float
        Failures per hour of the whole cluster when every slot works, ``> 0``.
    repair_law : {"exponential", "fixed"} or frozen scipy.stats distribution
        Repair times, hours (the named laws need ``mean_repair_hours``).
    spare_nodes : int
        Spares in the pool at the start, ``>= 0``.
    swap_minutes : float
        Time to swap a node into a slot, minutes, ``>= 0``.
    hours : float
        Measured window per trial, hours, ``> 0``.
    trials : int
        Independent trials, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` uses ``child_seed(seed, i, 0)`` and ``child_seed(seed, i, 1)``.
    mean_repair_hours : float, optional
        Mean of the named repair laws, hours, ``> 0``.
    warmup_hours : float, optional
        Unmeasured start, hours, ``>= 0`` (default 20 mean repairs).

    Returns
    -------
    SparePoolSamples

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> s = simulate_spare_pool(groups=50, group_nodes=4, failure_rate_per_hour=0.5,
    ...                         repair_law="exponential", mean_repair_hours=10.0,
    ...                         spare_nodes=8, swap_minutes=30.0, hours=2000.0, trials=4,
    ...                         seed=3)
    >>> round(s.mean("mean_in_repair"), 1), round(s.mean("shortage_share"), 3)
    (5.2, 0.154)

    Against the closed form ``P(N >= 8) = 0.133`` for ``N ~ Poisson(5)``
    (:func:`~spare_theory.lifetimes.spares.shortage_probability`): 2.3
    standard errors (0.009) off in this short run.
    """
    groups = as_count(groups, "groups")
    group_nodes = as_count(group_nodes, "group_nodes")
    rate = as_real(failure_rate_per_hour, "failure_rate_per_hour", minimum=0.0, strict_minimum=True)
    spares = as_count(spare_nodes, "spare_nodes", minimum=0)
    swap = as_real(swap_minutes, "swap_minutes", minimum=0.0) / 60.0
    window = as_real(hours, "hours", minimum=0.0, strict_minimum=True)
    trials = as_count(trials, "trials")
    root = as_seed_sequence(seed)
    if isinstance(repair_law, str):
        if repair_law not in ("exponential", "fixed"):
            raise ValueError(
                "repair_law must be 'exponential', 'fixed' or a frozen scipy.stats "
                f"distribution, got {repair_law!r}"
            )
        if mean_repair_hours is None:
            raise ValueError(f"mean_repair_hours is required for repair_law={repair_law!r}")
        mean = as_real(mean_repair_hours, "mean_repair_hours", minimum=0.0, strict_minimum=True)
    elif callable(getattr(repair_law, "rvs", None)):
        mean = float(repair_law.mean())
    else:
        raise ValueError(
            f"repair_law must be a named law or a frozen distribution, got {repair_law!r}"
        )
    warmup = (
        20 * mean if warmup_hours is None else as_real(warmup_hours, "warmup_hours", minimum=0.0)
    )
    nodes = groups * group_nodes
    sampler = _repair_sampler(repair_law, mean)
    rows = [
        _trial(
            groups,
            group_nodes,
            rate / nodes,
            sampler,
            spares,
            swap,
            warmup,
            warmup + window,
            child_seed(root, i),
        )
        for i in range(trials)
    ]
    out = np.array(rows, dtype=float)
    failures, shortages = out[:, 0], out[:, 1]
    return SparePoolSamples(
        failures=failures.astype(np.int64),
        shortage_share=shortages / np.maximum(failures, 1),
        mean_in_repair=out[:, 2] / window,
        time_short_share=out[:, 3] / window,
        fill_hours=out[:, 5] / np.maximum(failures, 1),
        down_hours=out[:, 7] / np.maximum(out[:, 6], 1),
        whole_share=out[:, 4] / (window * groups),
    )
