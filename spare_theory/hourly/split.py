"""Time to train with SPARe when a failed group's shard is split into micro-batches.

SPARe as published computes a failed group's shard whole on one survivor, so
a state with ``f`` failures costs ``E[S*_f] = ceil(N/(N-f))`` step times.  With
every shard cut into ``m`` pieces that any surviving host of its type may
compute (:func:`spare_theory.stacking.stacks.min_load`), the state costs the expected
load :func:`spare_theory.stacking.overhead.expected_load` instead: the counting
bound ``ceil(m N/(N-f))/m`` plus the window-scan excess of medium-sized sets
of types crowded on few surviving hosts (``docs/theory.md`` section 7).
Everything else (the wipe-out law, the renewal-reward estimate of
:mod:`spare_theory.hourly.renewal`, the checkpoint interval search) is the published
SPARe model's: :class:`SpareSplit` is :class:`spare_theory.cycles.laws.Spare`
with that one state cost, and ``microbatches = 1`` is exactly ``Spare``.

The closed-form average overhead is within about 0.3 % of the exact-load
simulation on the ``spare-theory table microbatch`` grid (mean absolute
error 0.29 % per failure, 0.33 % time weighted; the load model alone 0.23 % /
0.25 %); the time to train is within 2 % of ``simulate_training(...,
microbatches=m)``, a little high at ``r = 4`` on small clusters (the load
model's high bias there).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from .._validation import as_count
from ..cycles.laws import EXPONENTIAL, Spare
from ..placement.rulers import modular_ruler
from ..stacking.load import expected_load
from .renewal import TrainingEstimate, evaluate
from .scenario import Scenario, check_checkpoint_interval, check_plan

__all__ = [
    "SpareSplit",
    "check_microbatches",
    "split_law",
    "split_optimal_plan",
    "split_time_to_train",
]


class SpareSplit(Spare):
    """SPARe's cycle law with states priced by the expected micro-batch load ``E[load_f]``.

    Parameters
    ----------
    N : int
        Groups.
    r : int
        Redundancy (marks of the ruler).
    lifetimes : ExponentialLifetimes
        Group lifetime law in dimensionless time.
    microbatches : int
        Pieces per shard ``m >= 1``; ``1`` is :class:`~spare_theory.cycles.laws.Spare`.

    Examples
    --------
    >>> law = SpareSplit(200, 4, microbatches=8)
    >>> round(float(law.theta(0.05)), 4) > round(float(Spare(200, 4).theta(0.05)), 4)
    True
    """

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL, *, microbatches: int) -> None:
        self.microbatches = as_count(microbatches, "microbatches", minimum=1)
        super().__init__(N, r, lifetimes)

    def state_cost(self, failures: np.ndarray) -> np.ndarray:
        """``E[load_f]`` of :func:`~spare_theory.stacking.overhead.expected_load`."""
        return np.asarray(
            expected_load(self.N, self.r, failures, microbatches=self.microbatches), dtype=float
        )


@functools.lru_cache(maxsize=64)
def split_law(N: int, r: int, microbatches: int) -> SpareSplit:
    """The cached :class:`SpareSplit` cycle law of ``N`` groups at redundancy ``r``.

    Parameters
    ----------
    N : int
        Groups.
    r : int
        Redundancy.
    microbatches : int
        Pieces per shard ``m >= 1``.

    Returns
    -------
    SpareSplit
        The same object for the same arguments (``lru_cache``, 64 laws).

    Examples
    --------
    >>> split_law(146, 8, 4) is split_law(146, 8, 4)
    True
    """
    return SpareSplit(N, r, microbatches=microbatches)


def check_microbatches(strategy: str, microbatches: int) -> int:
    """``microbatches`` checked against ``strategy``: any ``m >= 1`` for SPARe, else only 1.

    Only SPARe moves a failed group's shard to survivors, so only SPARe can
    split it; the other strategies accept ``microbatches = 1`` (the default).

    Parameters
    ----------
    strategy : str
        A checked strategy name (``"ckpt"``, ``"rep"`` or ``"spare"``).
    microbatches : int
        Pieces per shard.

    Returns
    -------
    int
        ``microbatches`` as an int.

    Raises
    ------
    ValueError
        Naming ``microbatches`` when it is below 1, or not 1 for a strategy
        other than SPARe.

    Examples
    --------
    >>> check_microbatches("spare", 8), check_microbatches("rep", 1)
    (8, 1)
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    if m != 1 and strategy != "spare":
        raise ValueError(
            f"microbatches must be 1 for strategy {strategy!r} (only SPARe splits a "
            f"failed group's shard), got {m}"
        )
    return m


def _ruler_exists(N: int, r: int) -> bool:
    try:
        modular_ruler(N, r)
    except ValueError:
        return False
    return True


def split_time_to_train(
    scenario: Scenario,
    r: int,
    checkpoint_interval_minutes: float | None = None,
    *,
    microbatches: int,
) -> TrainingEstimate:
    """Expected hours of a SPARe run whose failed shards are split into ``m`` micro-batches.

    ``hours = W E[X] / E[P]`` (:mod:`spare_theory.hourly.renewal`) with the cycle law
    :class:`SpareSplit`: state ``f`` runs at ``1 / E[load_f]`` of full speed.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, costs and work (no repairs).
    r : int
        Redundancy; a modular ruler with ``r`` marks must exist at ``N``.
    checkpoint_interval_minutes : float, optional
        Compute time between checkpoints, minutes; ``None``: the interval
        minimising the hours (bounded search in ``log tau`` around Young's
        interval, a factor 100 either way).
    microbatches : int
        Pieces per shard ``m >= 1``.

    Returns
    -------
    TrainingEstimate
        With strategy ``"spare"``.

    Raises
    ------
    ValueError
        Naming the argument (as :func:`spare_theory.training.estimate.time_to_train`),
        or ``scenario`` when it has repairs switched on.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario.published_600k(4096)
    >>> a = split_time_to_train(sc, 8, 60, microbatches=1)
    >>> b = split_time_to_train(sc, 8, 60, microbatches=16)
    >>> round(a.hours, 1), b.hours < a.hours
    (1929.2, True)
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    if getattr(scenario, "repair_minutes", None) is not None:
        raise ValueError(
            "scenario must not have repairs (repair_minutes) for micro-batch splitting"
        )
    _, r = check_plan(scenario, "spare", r)
    if r == 1:
        raise ValueError("r must be >= 2 for micro-batch splitting (r = 1 is plain checkpointing)")
    law = split_law(scenario.groups, r, m)
    if checkpoint_interval_minutes is not None:
        tau = check_checkpoint_interval(checkpoint_interval_minutes)
        return evaluate(scenario, law, tau, strategy="spare")
    delta = scenario.checkpoint_minutes
    if delta == 0:
        return evaluate(scenario, law, 1 / 60, strategy="spare")
    lam = scenario.group_failure_rate_per_hour
    young = math.log(math.sqrt(2 * delta * 60 * law.mean_u / lam))
    young = min(young, math.log(600 * scenario.work_hours))
    lo = max(young - math.log(100), math.log(1 / 60))
    hi = max(min(young + math.log(100), math.log(600 * scenario.work_hours)), lo + 1e-6)
    best = minimize_scalar(
        lambda x: evaluate(scenario, law, math.exp(x), strategy="spare").hours,
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-4},
    )
    return evaluate(scenario, law, math.exp(float(best.x)), strategy="spare")


def split_optimal_plan(
    scenario: Scenario, *, microbatches: int, r_max: int = 24
) -> tuple[int, TrainingEstimate]:
    """Best ``r`` (and interval) for SPARe with ``m`` micro-batches per shard.

    Scans every ``r`` in ``2..r_max`` with a modular ruler at ``N`` (each at
    its best interval, :func:`split_time_to_train`) and returns the first
    minimum.

    Parameters
    ----------
    scenario : Scenario
        The run to plan.
    microbatches : int
        Pieces per shard ``m >= 1``.
    r_max : int
        Largest redundancy scanned.

    Returns
    -------
    tuple of (int, TrainingEstimate)
        The best ``r`` and its estimate.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> r, est = split_optimal_plan(Scenario.published_600k(4096), microbatches=4, r_max=8)
    >>> 2 <= r <= 8, est.hours > 0
    (True, True)
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    r_max = as_count(r_max, "r_max", minimum=2)
    N = scenario.groups
    best: tuple[int, TrainingEstimate] | None = None
    for r in range(2, min(r_max, N) + 1):
        if not _ruler_exists(N, r):
            continue
        est = split_time_to_train(scenario, r, microbatches=m)
        if best is None or est.hours < best[1].hours:
            best = (r, est)
    if best is None:
        raise ValueError(f"r_max must allow some r >= 2 with a modular ruler at N = {N}")
    return best
