"""The one plan type: the best plan of a strategy for a scenario, and how flat its optimum is.

Every front door that plans (:func:`spare_theory.optimal_plan` for hour-level
and step-level scenarios, with or without domains, micro-batches, repairs or
planned restarts) returns a :class:`Plan`: the full estimate at the best plan,
the best hours at every redundancy scanned, and the plan variables beyond
``r`` and the checkpoint interval that the search chose.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from .._samples import summary_text
from .._validation import as_real
from .bill import Bill, CostModel

__all__ = ["Plan"]


class _Estimate(Protocol):
    """What a plan needs of an estimate (both levels' estimates have it)."""

    @property
    def strategy(self) -> str: ...

    @property
    def r(self) -> int | None: ...

    @property
    def hours(self) -> float: ...

    @property
    def caveats(self) -> tuple[str, ...]: ...

    @property
    def breakdown_hours(self) -> dict[str, float]: ...

    def summary_rows(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]: ...
    def bill(self, cost: CostModel) -> Bill: ...


#: The estimate type of a :class:`Plan` (hour-level or step-level).
EstimateT = TypeVar("EstimateT", bound=_Estimate)


@dataclass(frozen=True)
class Plan(Generic[EstimateT]):
    """The best plan of one strategy for one scenario.

    Attributes
    ----------
    estimate : TrainingEstimate or StepEstimate
        The full estimate of the plan (breakdown, availability, restarts): a
        :class:`TrainingEstimate` for a :class:`Scenario`, a
        :class:`~spare_theory.steps.estimate.StepEstimate` for a
        :class:`~spare_theory.steps.scenario.StepScenario`.
    r_values : numpy.ndarray
        The ``r`` scanned, ascending.
    hours_by_r : numpy.ndarray
        Best hours (interval optimised) at each scanned ``r``: how flat the
        optimum is.
    strategy, r, checkpoint_interval_minutes, hours
        Those of :attr:`estimate` (properties): the strategy, the best
        redundancy, the best compute time between checkpoints at that ``r``
        (minutes; ``None`` for a step-level plan) and the expected
        wall-clock hours.
    checkpoint_every_steps
        The best checkpoint interval in steps (step-level plans; ``None``
        for a :class:`Scenario`).
    caveats
        The documented biases of the model that apply to this plan (those of
        :attr:`estimate`; empty when none applies).  :meth:`summary` says it
        all as text.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> from spare_theory import optimal_plan
    >>> plan = optimal_plan(sc, "ckpt")  # CKPT-only has no r
    >>> plan.r, round(plan.checkpoint_interval_minutes, 2), round(plan.hours, 2)
    (None, 30.98, 77.4)
    """

    estimate: EstimateT
    r_values: np.ndarray
    hours_by_r: np.ndarray
    #: Best planned-restart trigger ``k`` (groups down at once) at :attr:`r`, from
    #: ``optimal_plan(..., planned_restarts=True)``; ``None``: restart only at wipe-outs.
    planned_restart_failures: int | None = None
    #: The step-cost threshold ``c`` (SPARe's ``S*``, stack layers) that realises
    #: :attr:`planned_restart_failures` under the model (``k(c) = k``,
    #: :func:`~spare_theory.cycles.planned.cost_trigger_failures`): the cost reached when the
    #: ``k``-th group goes down, ``ceil(N/(N-k))``; ``None`` when no threshold gives
    #: that ``k`` (the cost does not step up at ``k``; Rep) or without planned restarts.
    planned_restart_cost: float | None = None
    #: The strategy's own plan variables beyond ``r`` and the interval, by the names its
    #: ``plan_variables`` declares (:class:`~spare_theory.strategies.base.Strategy`): the
    #: quorum of elastic DP and hot spares, ``{"min_groups": q}``; empty for a strategy
    #: without any.
    variables: Mapping[str, Any] = field(default_factory=dict)
    #: Pieces per shard ``m`` the plan was made with (the scenario's field, or the
    #: ``microbatches`` keyword folded into it); 1: whole shards.
    microbatches: int = 1
    #: How the plan was searched: ``"model"`` (the closed forms) or ``"simulation"``
    #: (the event simulation, where no closed form covers the scenario).
    method: str = "model"
    #: Mean hours of the plan in the verifying simulation (``optimal_plan(..., verify=...)``),
    #: and their standard error; ``None`` when not verified.
    verified_hours: float | None = None
    verified_standard_error: float | None = None
    #: Runs behind :attr:`verified_hours` (trials ``0, ..., n - 1`` of the seed's streams).
    verified_trials: int | None = None
    #: Whether verification replaced the searched plan by a neighbour that simulated
    #: better by more than two standard errors of the paired difference.
    moved_by_verification: bool = False

    @property
    def min_groups(self) -> int | None:
        """Best quorum ``q`` (fewest groups up for the job to go on) of an elastic plan.

        ``variables["min_groups"]``; ``None`` for the strategies that have no quorum.
        """
        return self.variables.get("min_groups")

    @property
    def model_error(self) -> float | None:
        """``hours / verified_hours - 1``: the model's measured error at this plan.

        ``None`` for a plan not verified, not from the model (``method="simulation"``),
        or whose simulated runs did not finish within the horizon (``verified_hours``
        is then ``inf``: there is no finite mean to compare with).
        """
        if self.verified_hours is None or self.method != "model":
            return None
        if not math.isfinite(self.verified_hours):
            return None
        return self.hours / self.verified_hours - 1.0

    @property
    def strategy(self) -> str:
        """The strategy's registered name (``"ckpt"``, ``"rep"``, ``"spare"``, ...)."""
        return self.estimate.strategy

    @property
    def r(self) -> int | None:
        """Best ``r`` of the strategy (``None`` for one without: CKPT-only, elastic DP)."""
        return self.estimate.r

    @property
    def checkpoint_interval_minutes(self) -> float | None:
        """Best compute time between checkpoints at :attr:`r`, minutes (``None``: step-level)."""
        return getattr(self.estimate, "checkpoint_interval_minutes", None)

    @property
    def checkpoint_every_steps(self) -> int | None:
        """Best checkpoint interval at :attr:`r`, steps (``None`` for an hour-level plan)."""
        return getattr(self.estimate, "checkpoint_every_steps", None)

    @property
    def hours(self) -> float:
        """Expected wall-clock hours of the plan."""
        return self.estimate.hours

    def smallest_r_within(self, tolerance: float) -> int:
        """The smallest scanned ``r`` whose best hours are within ``tolerance`` of the optimum.

        ``min {r : hours_by_r[r] <= (1 + tolerance) hours}``: with fast repairs
        hours are nearly flat in ``r`` and a much smaller ``r`` than the
        optimum costs almost nothing (``optimal_plan`` then scans every ``r``
        down to 2).

        Parameters
        ----------
        tolerance : float
            Relative excess over the best hours allowed, ``>= 0`` (0.01: 1 %).

        Returns
        -------
        int
            An ``r`` of :attr:`r_values` (at most :attr:`r`).

        Raises
        ------
        ValueError
            If ``tolerance`` is negative or not finite.

        Examples
        --------
        >>> from spare_theory import Scenario, optimal_plan
        >>> plan = optimal_plan(Scenario.published_600k(4096), "spare")
        >>> plan.r, plan.smallest_r_within(0.0), plan.smallest_r_within(0.01)
        (9, 9, 8)
        """
        return self.r_within(tolerance)[0]

    def r_within(self, tolerance: float) -> tuple[int, int]:
        """``(smallest, largest)`` scanned ``r`` within ``tolerance`` of the best hours.

        ``{r : hours_by_r[r] <= (1 + tolerance) hours}`` is an interval of the
        scan in practice (hours are unimodal in ``r``); its ends say how flat
        the optimum is.  ``(r, r)`` when no other ``r`` comes close.

        Parameters
        ----------
        tolerance : float
            Relative excess over the best hours allowed, ``>= 0`` (0.01: 1 %).

        Returns
        -------
        tuple of (int, int)

        Raises
        ------
        ValueError
            If ``tolerance`` is negative or not finite.

        Examples
        --------
        >>> from spare_theory import Scenario, optimal_plan
        >>> optimal_plan(Scenario.published_600k(4096), "spare").r_within(0.01)
        (8, 10)
        """
        tolerance = as_real(tolerance, "tolerance", minimum=0.0)
        if not math.isfinite(self.hours):
            best = int(self.r_values[int(np.argmin(self.hours_by_r))])
            return best, best
        within = self.r_values[self.hours_by_r <= (1.0 + tolerance) * self.hours]
        return int(within.min()), int(within.max())

    @property
    def caveats(self) -> tuple[str, ...]:
        """The documented model biases that apply to this plan, then the audit's measured error."""
        return self.estimate.caveats

    def summary(self) -> str:
        """The plan as text: its variables, hours, availability, the breakdown, the caveats.

        The layout of the estimates' ``summary()``, with the plan variables
        the search chose (a quorum, a planned-restart trigger: only those
        the plan has) and how flat the optimum is in ``r``.

        Examples
        --------
        >>> from spare_theory import Scenario, optimal_plan
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=60, checkpoint_minutes=5, work_hours=48,
        ...               failure_law="weibull")
        >>> print(optimal_plan(sc, "spare").summary())
                                   Best plan (optimal_plan)
        ==============================================================================
        strategy:                       spare    hours:                        101.497
        r:                                  6    availability:                  0.4729
        checkpoint every:           224.7 min    uptime:                        0.9891
        r within 1 %:                     5-7    cycle hours:                    92.11
        r scanned:                       1-10    samples skipped:   none (exact batch)
        restarts:                       1.102
        ------------------------------------------------------------------------------
        breakdown                        hours    share
          useful                            48    0.473
          redundancy                   48.1848    0.475
          checkpoint                    2.1414    0.021
          restart                      1.10196    0.011
          lost                          2.0685    0.020
        ------------------------------------------------------------------------------
        caveats (model approximations and biases, then the audit's error):
          [1] under non-exponential GPU lifetimes the model runs high against
              simulation: groups that just failed restart with young clocks, which the
              stationary clocks miss (docs/theory.md section 4, non-exponential
              failure laws)
          [2] audit (150 random scenarios, seed 2026; docs/audit.md): 90 % of its 9
              model answers on scenarios with weibull within 1.0 % of the simulation
              (worst +1.2 %, 0 outside 3 % and 3 SE); it drew 8 to 64 groups, this
              scenario has 128
        ==============================================================================
        """
        plan, figures, notes = self.estimate.summary_rows()
        chosen: list[tuple[str, Any]] = list(self.variables.items())
        if self.planned_restart_failures is not None:
            chosen.append(("planned restart at", f"{self.planned_restart_failures} down"))
        if self.r is not None and len(self.r_values) > 1:
            low, high = self.r_within(0.01)
            chosen.append(("r within 1 %", str(low) if low == high else f"{low}-{high}"))
            chosen.append(("r scanned", f"{self.r_values.min()}-{self.r_values.max()}"))
        return summary_text(
            "Best plan (optimal_plan)",
            [*plan[:3], *chosen, *plan[3:]],
            figures,
            breakdown_hours=self.estimate.breakdown_hours,
            notes=notes,
            caveats=self.caveats,
        )

    def bill(self, cost: CostModel) -> Bill:
        """What the plan costs under ``cost``: its estimate's :class:`~spare_theory.Bill`.

        Parameters
        ----------
        cost : CostModel

        Returns
        -------
        Bill

        Examples
        --------
        >>> from spare_theory import CostModel, Scenario, optimal_plan
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> bill = optimal_plan(sc, "ckpt").bill(CostModel(gpu_hour_usd=1.0))
        >>> round(bill.usd / 1024, 2), round(bill.badput_hours["restart"], 2)
        (77.4, 12.14)
        """
        return self.estimate.bill(cost)
