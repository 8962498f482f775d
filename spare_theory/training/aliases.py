"""Deprecated front doors kept for old calls: domain and split plans are scenario fields now.

Failure domains, lemons and micro-batch splitting are fields of
:class:`~spare_theory.hourly.scenario.Scenario` (``domain_size``,
``domain_mtbf_hours``, ``lemon_fraction``, ``microbatches``), so their
estimates and plans are :func:`spare_theory.time_to_train` and
:func:`spare_theory.optimal_plan` like any other, with the one interval
search.  The functions below keep their old signatures, warn with a
``DeprecationWarning`` and call those.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_count
from ..hourly.renewal import TrainingEstimate
from ..hourly.scenario import Scenario
from ..planning.plan import Plan
from ..strategies.registry import strategy as lookup
from .estimate import time_to_train
from .optimize import optimal_plan

__all__ = [
    "DomainPlan",
    "domain_optimal_plan",
    "domain_time_to_train",
    "split_optimal_plan",
    "split_time_to_train",
]

#: Deprecated name of :class:`~spare_theory.planning.plan.Plan` (the same class).
DomainPlan = Plan


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


def domain_time_to_train(
    scenario: Scenario, r: int, checkpoint_interval_minutes: float | None = None
) -> TrainingEstimate:
    """Deprecated: ``time_to_train(scenario, "spare", r, checkpoint_interval_minutes)``.

    Examples
    --------
    >>> import warnings
    >>> from spare_theory import Scenario, time_to_train
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               domain_size=16, domain_mtbf_hours=5000.0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     est = domain_time_to_train(sc, 6, 60.0)
    >>> round(est.hours, 1), caught[0].category.__name__
    (104.5, 'DeprecationWarning')
    """
    _deprecated("domain_time_to_train", 'time_to_train(scenario, "spare", r, ...)')
    return time_to_train(scenario, "spare", r, checkpoint_interval_minutes)


def domain_optimal_plan(scenario: Scenario, r_values: ArrayLike) -> Plan:
    """Deprecated: ``optimal_plan(scenario, "spare", r_values=r_values)``.

    Examples
    --------
    >>> import warnings
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               lemon_fraction=0.05, lemon_rate_factor=10.0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     plan = domain_optimal_plan(sc, [4, 6, 8])
    >>> plan.r, plan.hours_by_r.round(1).tolist()
    (6, [101.6, 100.1, 101.1])
    """
    _deprecated("domain_optimal_plan", 'optimal_plan(scenario, "spare", r_values=...)')
    values = [as_count(r, "r_values") for r in np.atleast_1d(r_values).tolist()]
    return optimal_plan(scenario, "spare", r_values=values)


def _split_checks(scenario: Any, r: int) -> int:
    if getattr(scenario, "repair_minutes", None) is not None:
        raise ValueError(
            "scenario must not have repairs (repair_minutes) for micro-batch splitting"
        )
    r = lookup("spare").check_r(scenario.groups, r)
    if r == 1:
        raise ValueError("r must be >= 2 for micro-batch splitting (r = 1 is plain checkpointing)")
    return r


def split_time_to_train(
    scenario: Scenario,
    r: int,
    checkpoint_interval_minutes: float | None = None,
    *,
    microbatches: int,
) -> TrainingEstimate:
    """Deprecated: ``time_to_train(scenario, "spare", r, ..., microbatches=m)``.

    Examples
    --------
    >>> import warnings
    >>> from spare_theory import Scenario
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     est = split_time_to_train(Scenario.published_600k(4096), 8, 60, microbatches=1)
    >>> round(est.hours, 1)
    1929.2
    """
    _deprecated("split_time_to_train", 'time_to_train(scenario, "spare", r, microbatches=m)')
    r = _split_checks(scenario, r)
    return time_to_train(
        scenario, "spare", r, checkpoint_interval_minutes, microbatches=microbatches
    )


def split_optimal_plan(
    scenario: Scenario, *, microbatches: int, r_max: int = 24
) -> tuple[int, TrainingEstimate]:
    """Deprecated: the best ``r`` in ``2..r_max`` for SPARe with ``m`` micro-batches.

    ``optimal_plan(scenario, "spare", microbatches=m)`` walks ``r`` itself
    (and returns a :class:`~spare_theory.planning.plan.Plan`); this keeps the
    old call and its ``(r, estimate)`` result (the first minimum).

    Examples
    --------
    >>> import warnings
    >>> from spare_theory import Scenario
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     r, est = split_optimal_plan(Scenario.published_600k(4096), microbatches=4, r_max=8)
    >>> 2 <= r <= 8, est.hours > 0
    (True, True)
    """
    _deprecated("split_optimal_plan", 'optimal_plan(scenario, "spare", microbatches=m)')
    m = as_count(microbatches, "microbatches", minimum=1)
    r_max = as_count(r_max, "r_max", minimum=2)
    spare = lookup("spare")
    best: tuple[int, TrainingEstimate] | None = None
    for r in range(2, min(r_max, scenario.groups) + 1):
        if not spare.accepts(scenario.groups, r):
            continue
        est = split_time_to_train(scenario, r, microbatches=m)
        if best is None or est.hours < best[1].hours:
            best = (r, est)
    if best is None:
        raise ValueError(
            f"r_max must allow some r >= 2 with a modular ruler at N = {scenario.groups}"
        )
    return best
