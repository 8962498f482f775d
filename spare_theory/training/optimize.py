"""Every search of the time-to-train layer: over ``r`` and over the checkpoint interval.

**Over the interval** (:func:`optimal_interval`): a grid search in
``x = log tau`` on the vectorised renewal terms
(:func:`spare_theory.hourly.renewal.renewal_terms`), then zooms around the best
local minima (details in :func:`optimal_interval`); CKPT-only in closed form
(Daly's optimum through Lambert's ``W``).  No local search: hours against
``tau`` can have several local minima.

**Over r** (:func:`optimal_plan`): CKPT-only has ``r = 1``; Rep walks up from
``r = 1``; SPARe evaluates ``r = 1`` (no redundancy) and walks both ways
from the published rule ``r* = floor(log2 N + 0.833)`` (:func:`r_star_rule`)
over the ``r`` for which a modular Golomb ruler exists at ``N`` (with repairs
the walk down goes on to ``r = 2``: hours are then nearly flat in ``r``, see
:meth:`Plan.smallest_r_within`).  A walk
stops once ``hours`` has not beaten the best value for ``_PATIENCE = 3``
consecutive ``r`` (the curve is unimodal in practice: more redundancy first
buys longer cycles, then only costs overhead).

The cycle laws (:func:`spare_theory.cycles.laws.cycle_law`) and the interval
searches are cached; :func:`clear_caches` empties both.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import lambertw

from .._validation import as_count_array, as_real
from ..cycles.laws import cycle_law
from ..hourly.model import check_split, scenario_cycle
from ..hourly.renewal import TrainingEstimate, estimate_from, evaluate, hours_grid
from ..hourly.repairs import attach_repairs, cost_trigger_failures, planned_cycle, repair_cycle
from ..hourly.scenario import Scenario, check_plan
from ..placement.rulers import modular_ruler
from ..steps.model import StepEstimate

__all__ = [
    "R_STAR_CONSTANT",
    "Plan",
    "best_trigger",
    "clear_caches",
    "optimal_interval",
    "optimal_plan",
    "r_star_rule",
    "ruler_exists",
]

# Published constant of the rule r* = floor(log2 N + 0.833); its derivation
# (close to Euler's gamma / ln 2 = 0.8327) is symbolic.derive_r_star_constant.
R_STAR_CONSTANT = 0.833
_PATIENCE = 3
# best_trigger: with repairs and fewer expected restarts per run, no search.
_FEW_WIPEOUTS = 0.01

#: The estimate type of a :class:`Plan` (hour-level or step-level).
EstimateT = TypeVar("EstimateT", TrainingEstimate, StepEstimate)

# Interval search (steps in log tau): the fine grid covers tau with at most
# _FEW_SEGMENTS segments per cycle; smaller tau by coarse steps; zoom size.
_FEW_SEGMENTS = 50
_FINE_STEP = 0.025
_COARSE_STEP = 0.25
_ZOOM_POINTS = 11
_ZOOM_MINIMA = 3
# Longest interval searched (r > 1), as a share of the time M to Q = 1/e.
_MAX_TAU_SHARE = 0.5
_LAST_STEP = 0.01


@dataclass(frozen=True)
class Plan(Generic[EstimateT]):
    """The best plan of one strategy for one scenario.

    Attributes
    ----------
    estimate : TrainingEstimate or StepEstimate
        The full estimate of the plan (breakdown, availability, restarts): a
        :class:`TrainingEstimate` for a :class:`Scenario`, a
        :class:`~spare_theory.steps.model.StepEstimate` for a
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

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> plan = optimal_plan(sc, "ckpt")
    >>> plan.r, round(plan.checkpoint_interval_minutes, 2), round(plan.hours, 2)
    (1, 30.98, 77.4)
    """

    estimate: EstimateT
    r_values: np.ndarray
    hours_by_r: np.ndarray
    #: Best planned-restart trigger ``k`` (groups down at once) at :attr:`r`, from
    #: ``optimal_plan(..., planned_restarts=True)``; ``None``: restart only at wipe-outs.
    planned_restart_failures: int | None = None
    #: The step-cost threshold ``c`` (SPARe's ``S*``, stack layers) that realises
    #: :attr:`planned_restart_failures` under the model (``k(c) = k``,
    #: :func:`~spare_theory.hourly.repairs.cost_trigger_failures`): the cost reached when the
    #: ``k``-th group goes down, ``ceil(N/(N-k))``; ``None`` when no threshold gives
    #: that ``k`` (the cost does not step up at ``k``; Rep) or without planned restarts.
    planned_restart_cost: float | None = None

    @property
    def strategy(self) -> str:
        """``"ckpt"``, ``"rep"`` or ``"spare"``."""
        return self.estimate.strategy

    @property
    def r(self) -> int:
        """Best redundancy (1 for CKPT-only)."""
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
        >>> from spare_theory import Scenario
        >>> plan = optimal_plan(Scenario.published_600k(4096), "spare")
        >>> plan.r, plan.smallest_r_within(0.0), plan.smallest_r_within(0.01)
        (9, 9, 8)
        """
        tolerance = as_real(tolerance, "tolerance", minimum=0.0)
        within = self.r_values[self.hours_by_r <= (1.0 + tolerance) * self.hours]
        return int(within.min())


def ruler_exists(N: int, r: int) -> bool:
    """Whether a modular Golomb ruler with ``r`` marks exists at ``N`` (SPARe can use ``r``).

    Examples
    --------
    >>> ruler_exists(13, 4), ruler_exists(12, 4)
    (True, False)
    """
    try:
        modular_ruler(N, r)
    except ValueError:
        return False
    return True


def _grid(start: float, stop: float, step: float) -> np.ndarray:
    """Points from ``start`` to ``stop`` (both included) at most ``step`` apart."""
    return np.linspace(start, stop, max(math.ceil((stop - start) / step), 1) + 1)


def _batch_below(x: float, lo: float) -> np.ndarray:
    """Up to 8 coarse steps below ``x``, not below ``lo`` (empty at ``lo``)."""
    return np.unique(np.maximum(x - _COARSE_STEP * np.arange(8, 0, -1), lo))[: 8 if x > lo else 0]


def optimal_interval(
    scenario: Scenario, strategy: str, r: int | None, *, microbatches: int = 1
) -> TrainingEstimate:
    """The estimate at the checkpoint interval that minimises the expected hours.

    Minimises hours over ``tau`` by grids in ``x = log tau``, evaluated
    vectorised.  Search range: within a factor 100 of Young's interval
    ``sqrt(2 delta M)`` (``M``: time to ``Q = 1/e``), clipped to
    ``[1 s, 600 W]`` and, for ``r > 1``, to ``tau <= M / 2``.  The last bound
    is a modelling choice: when the wipe-out time is sharp (large ``N`` and
    ``r``) the model also has a minimum at ``tau ~ 0.74 M``, one checkpoint
    per cycle timed just before the predicted wipe-out, up to 4 % better at
    ``r ~ 30-50``; it rests entirely on the sharpness of the wipe-out law
    where it is least tested, and it makes hours against ``r`` bimodal.  The
    main minima sit at ``tau <= 0.31 M`` (measured on the 30 reference
    scenarios).

    Hours against ``tau`` can have several local minima (a sharp cycle holds
    a whole number ``k`` of segments: minima about ``1/k`` apart in ``x``;
    the midpoint rule for ``theta`` ripples likewise), so no local search:
    with ``S`` the span of the cycle that counts (until ``Q`` falls to
    ``e^-30 Q(rho)``),

    1. every ``tau`` in ``[S / 50, S]`` within the range (at most 50
       segments per cycle, where those minima are, and evaluations cheap) on
       a grid of step ``0.025``;
    2. smaller ``tau`` (many segments: a smooth curve, ripples below
       ``1e-5``), by batches of 8 steps of ``0.25`` until the best point is
       not the lowest one;
    3. zooms of 11 points, each ``5x`` finer: the first around each of the
       3 best local minima of the grid (the dips can be narrower than the
       grid step, so the deepest need not show as the lowest point), then
       around the best point, down to a step of at most ``0.01`` (one zoom
       after the fine grid, two after the coarse one).

    Near a minimum ``hours ~ h0 (1 + c x^2 / 2)`` with ``c < 1`` (about 0.15
    on the published scenarios), so a last step of ``0.01`` costs below
    ``1.25e-5 c`` relative hours.  CKPT-only (``r = 1``) has its optimum in
    closed form.  With no checkpoint cost the best interval is the
    smallest, and 1 second is used.  Cached per ``(scenario, strategy, r,
    microbatches)``.

    Parameters
    ----------
    scenario : Scenario
        The run.
    strategy : {"ckpt", "rep", "spare"}
        Strategy.
    r : int or None
        Redundancy (as in :func:`spare_theory.hourly.scenario.check_plan`).
    microbatches : int, default 1
        SPARe only: pieces per shard ``m``, states priced by the expected
        load (:class:`spare_theory.hourly.split.SpareSplit`); ``1`` is
        published SPARe.

    Returns
    -------
    TrainingEstimate
        At the best interval.

    Raises
    ------
    ValueError
        As :func:`spare_theory.training.estimate.time_to_train`.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> round(optimal_interval(sc, "ckpt", None).checkpoint_interval_minutes, 2)
    30.98
    """
    strategy, r = check_plan(scenario, strategy, r)
    m = check_split(scenario, strategy, microbatches)
    est = _search_interval(scenario, strategy if r > 1 else "ckpt", r, m if r > 1 else 1)
    if (
        scenario.repair_minutes is not None
        or scenario.planned_restart_failures is not None
        or scenario.planned_restart_cost is not None
    ):
        law = scenario_cycle(scenario, est.strategy, r, m if r > 1 else 1)
        est = attach_repairs(scenario, law, est)
    return est if est.strategy == strategy else dataclasses.replace(est, strategy=strategy)


@functools.lru_cache(maxsize=64)
def _search_interval(
    scenario: Scenario, strategy: str, r: int, microbatches: int = 1
) -> TrainingEstimate:
    """:func:`optimal_interval` for checked arguments (``strategy = "ckpt"`` at ``r = 1``)."""
    law = scenario_cycle(scenario, strategy, r, microbatches)  # the one place picking laws
    delta = scenario.checkpoint_minutes
    lam = scenario.group_failure_rate_per_hour
    if delta == 0:
        return evaluate(scenario, law, 1 / 60, strategy=strategy)
    young = math.log(math.sqrt(2 * delta * 60 * law.mean_u / lam))
    # Cycles far longer than the run (fast repairs): no interval beyond 600 W.
    young = min(young, math.log(600 * scenario.work_hours))
    lo = max(young - math.log(100), math.log(1 / 60))
    hi = max(min(young + math.log(100), math.log(600 * scenario.work_hours)), lo + 1e-6)
    if r == 1 and scenario.exponential:
        # CKPT-only is Daly's model, hours ~ (e^{(tau + delta)/M} - 1) / tau, whose
        # minimum solves e^{(tau + delta)/M} (1 - tau/M) = 1:
        # tau = M (1 + W0(-e^{-1 - delta/M})), M = 1/(N lambda) (in minutes).
        M = 60 / (scenario.groups * lam)
        tau = M * (1 + float(lambertw(-math.exp(-1 - delta / M)).real))
        return evaluate(scenario, law, min(max(tau, math.exp(lo)), math.exp(hi)), strategy=strategy)
    # No plan of one checkpoint per cycle timed just before a predicted wipe-out
    # (CKPT-only under another failure law: the search below, uncapped).
    if r > 1:
        hi = max(min(hi, math.log(_MAX_TAU_SHARE * 60 * law.mean_u / lam)), lo + 1e-6)
    rho = lam * scenario.restart_minutes / 60
    span = math.log(max(law.restart_terms(rho)[2] - rho, 1e-300) * 60 / lam)
    top = min(max(span, lo), hi)
    x = _grid(min(max(span - math.log(_FEW_SEGMENTS), lo), top), top, _FINE_STEP)
    # The curve's main (smooth) minimum may lie below, whatever the best point
    # above: one batch below always, more while the lowest point is the best.
    x = np.concatenate([_batch_below(x[0], lo), x])
    hours = hours_grid(scenario, law, x)[1]
    while x[0] > lo and np.argmin(hours) == 0:
        below = _batch_below(x[0], lo)
        x, hours = (
            np.concatenate([below, x]),
            np.concatenate([hours_grid(scenario, law, below)[1], hours]),
        )
    # Zoom around the _ZOOM_MINIMA best local minima of the grid at once: on a
    # coarse grid the deepest dip need not show as the lowest point.
    padded = np.concatenate([[np.inf], hours, [np.inf]])
    minima = np.flatnonzero((hours <= padded[:-2]) & (hours <= padded[2:]))
    picked = minima[np.argsort(hours[minima])][:_ZOOM_MINIMA]
    # Each zoom spans the grid step around its centre (fine or coarse part).
    gaps = np.diff(x, prepend=x[0], append=x[-1])
    centres, steps = x[picked], np.maximum(gaps[picked], gaps[picked + 1])
    offsets = np.arange(-(_ZOOM_POINTS // 2), _ZOOM_POINTS // 2 + 1)
    while True:
        steps = steps / 5
        zoom = np.clip((centres[:, None] + steps[:, None] * offsets[None, :]).ravel(), lo, hi)
        terms, ratio = hours_grid(scenario, law, zoom)
        i = int(np.argmin(ratio))
        centres, steps = zoom[i : i + 1], steps[i // _ZOOM_POINTS : i // _ZOOM_POINTS + 1]
        if steps[0] <= 1.01 * _LAST_STEP:
            return estimate_from(scenario, strategy, r, math.exp(float(zoom[i])), terms, i)


def optimal_plan(
    scenario: Scenario | Any,
    strategy: str,
    *,
    microbatches: int = 1,
    planned_restarts: bool = False,
) -> Plan:
    """Minimise the expected time to train over ``r`` (integer) and the interval (continuous).

    Parameters
    ----------
    scenario : Scenario or StepScenario
        The run to plan.  A :class:`~spare_theory.steps.scenario.StepScenario`
        is planned over ``r`` and the integer checkpoint interval ``k``
        (steps) by :func:`spare_theory.training.step_optimize.optimal_step_plan`.
    strategy : {"ckpt", "rep", "spare"}
        Strategy; SPARe only uses ``r`` for which ``placement.modular_ruler``
        finds a ruler at ``N = scenario.groups``.
    microbatches : int, default 1
        SPARe with every failed group's shard cut into ``m`` pieces for its
        survivors (:class:`spare_theory.hourly.split.SpareSplit`);
        ``1`` is published SPARe.  Hour-level scenarios without repairs; a
        StepScenario states its own ``microbatches``, and the keyword is
        used when that field is 1 (an equal value agrees, another raises
        ``ValueError``).
    planned_restarts : bool, default False
        Also choose a planned-restart trigger ``k`` (restart without rollback
        once ``k`` groups are down; ``Scenario.planned_restart_failures``)
        jointly with ``r`` and the interval: from the best ``r`` without
        planned restarts the walk goes both ways, each ``r`` at its best
        ``k`` (:func:`best_trigger`); reported as
        :attr:`Plan.planned_restart_failures` (``None``: none pays).  Rep
        and SPARe at ``microbatches = 1``.  Cost triggers
        (``Scenario.planned_restart_cost``) are covered by the same search:
        under the model a threshold ``c`` is the count trigger ``k(c)``
        (:func:`~spare_theory.hourly.repairs.cost_trigger_failures`), so the best
        count is at least as good as the best threshold; when the best ``k``
        is where SPARe's cost steps up (``k = k(c)``) the plan also reports
        that ``c`` as :attr:`Plan.planned_restart_cost`, the same modelled
        hours with a trigger that watches the cost itself.

    Returns
    -------
    Plan
        Best ``r``, interval (``checkpoint_interval_minutes``, or
        ``checkpoint_every_steps`` for a step-level scenario) and hours, the
        estimate, and ``hours`` against every scanned ``r``.  Ties go to the
        smaller ``r``.

    Raises
    ------
    ValueError
        If ``scenario`` is neither a Scenario nor a StepScenario, or
        ``strategy`` is unknown; naming ``microbatches`` when it is not 1 for
        a strategy other than SPARe, a StepScenario or a scenario with repairs.

    Examples
    --------
    The published scenario at 4096 GPUs per group (``N = 146``, 60 min
    restart, 5 min checkpoints, 720 h of work):

    >>> from spare_theory import Scenario
    >>> plan = optimal_plan(Scenario.published_600k(4096), "spare")
    >>> plan.r, round(plan.hours, 1), plan.r_values.tolist()
    (9, 1922.9, [1, 5, 6, 7, 8, 9, 10, 11])
    >>> round(plan.checkpoint_interval_minutes, 2), round(plan.estimate.restarts)
    (82.13, 190)

    The SPARe paper's simulated scenario (step level, 2,000 of its 10,000 steps):

    >>> from spare_theory import paper_scenario
    >>> step_plan = optimal_plan(paper_scenario(200, steps=2000), "spare")
    >>> step_plan.r, step_plan.checkpoint_every_steps, step_plan.checkpoint_interval_minutes
    (9, 14, None)

    SPARe with each failed group's shard split into 16 micro-batches:

    >>> split = optimal_plan(Scenario.published_600k(4096), "spare", microbatches=16)
    >>> split.hours < plan.hours
    True
    """
    if not isinstance(scenario, Scenario):
        return _other_scenario_plan(scenario, strategy, microbatches)
    strategy = check_plan(scenario, strategy, 1)[0]
    m = check_split(scenario, strategy, microbatches)
    N = scenario.groups
    if strategy == "ckpt":
        curve = {1: optimal_interval(scenario, strategy, 1)}
    elif strategy == "rep":
        curve = _walk(scenario, strategy, 1, N, {})
    else:
        # r = 1 (no redundancy: CKPT-only) is always a candidate: from r = 2 on,
        # S* >= 2 after the first failure, so the curve jumps there.  For r >= 2
        # start at the published rule (the largest r <= r* with a ruler) and
        # walk both ways: the r far below the optimum are never evaluated.
        curve = {1: optimal_interval(scenario, strategy, 1)}
        start = max(r for r in range(1, r_star_rule(N) + 1) if r == 1 or ruler_exists(N, r))
        if start > 1:
            curve = _walk(scenario, strategy, start, N, curve, microbatches=m)
            # With repairs hours are nearly flat in r: scan every r down to 2, so
            # Plan.smallest_r_within can name the small r that cost almost nothing.
            patience = math.inf if scenario.repair_minutes is not None else _PATIENCE
            curve = _walk(scenario, strategy, start - 1, 2, curve, patience, microbatches=m)
    triggers: dict[int, int | None] = {}
    if planned_restarts and strategy != "ckpt" and m == 1:
        curve = _planned_walk(scenario, strategy, curve, triggers)
    r_values = np.array(sorted(curve), dtype=np.int64)
    hours = np.array([curve[r].hours for r in r_values])
    r_best = int(r_values[np.argmin(hours)])  # the first minimum: ties go to the smaller r
    k = triggers.get(r_best)
    return Plan(
        estimate=curve[r_best],
        r_values=r_values,
        hours_by_r=hours,
        planned_restart_failures=k,
        planned_restart_cost=_cost_realising(N, k) if strategy == "spare" else None,
    )


def _cost_realising(N: int, k: int | None) -> float | None:
    """The stack threshold ``c = ceil(N/(N-k))`` if ``k(c) = k`` (the cost steps up at ``k``)."""
    if k is None or k >= N:
        return None
    c = float(-(-N // (N - k)))
    return c if c > 1 and cost_trigger_failures(N, c) == k else None


def _planned_walk(
    scenario: Scenario, strategy: str, curve: dict, triggers: dict[int, int | None]
) -> dict:
    """``curve`` with each ``r`` replaced by its best trigger, walking from the best ``r``.

    Starts at the best ``r >= 2`` without planned restarts and walks both
    ways (``_PATIENCE`` as :func:`_walk`), each ``r`` at its best trigger
    (:func:`best_trigger`); ``r`` not reached keep their plain estimate.
    """
    plain = {r: e for r, e in curve.items() if r > 1}
    if not plain:
        return curve
    start = min(plain, key=lambda r: (plain[r].hours, r))
    out = dict(curve)
    best = min(e.hours for e in curve.values())
    for step in (-1, 1):
        worse = 0
        r = start if step == -1 else start + 1
        while 2 <= r <= scenario.groups:
            if strategy == "spare" and not ruler_exists(scenario.groups, r):
                break
            triggers[r], out[r] = best_trigger(scenario, strategy, r)
            if out[r].hours < best:
                best, worse = out[r].hours, 0
            else:
                worse += 1
                if worse >= _PATIENCE:
                    break
            r += step
    return out


@functools.lru_cache(maxsize=256)
def best_trigger(scenario: Scenario, strategy: str, r: int) -> tuple[int | None, TrainingEstimate]:
    """The best planned-restart trigger ``k`` at ``r`` (interval optimised at each ``k``).

    ``k`` (``Scenario.planned_restart_failures``, groups down at once) on a
    geometric grid of ratio about 2 from 1 up to the first ``k`` whose
    planned restarts are below ``1e-6`` of the restarts (later ``k`` never
    fire), then the integers between the best point's neighbours by a
    ternary search (hours are unimodal in ``k`` in practice: early triggers
    restart too often, late ones do not prevent wipe-outs).  ``None`` (no
    planned restarts) wins ties and is kept, without a search, when repairs
    are on and the plain plan expects fewer than 0.01 restarts per run: a
    restart then has no wipe-out to prevent, and the step cost it resets
    climbs back to its stationary level within about one repair time.

    Parameters
    ----------
    scenario : Scenario
        The run (its own ``planned_restart_failures`` is replaced).
    strategy : {"rep", "spare"}
        Strategy.
    r : int
        Redundancy, ``>= 2``.

    Returns
    -------
    tuple of (int or None, TrainingEstimate)
        The best ``k`` and the estimate at it.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> k, est = best_trigger(Scenario.published_600k(4096), "spare", 9)
    >>> k, round(est.hours, 1), round(est.planned_restarts / est.restarts, 2)
    (74, 1668.7, 0.78)
    """
    strategy, r = check_plan(scenario, strategy, r)
    plain = optimal_interval(
        dataclasses.replace(scenario, planned_restart_failures=None), strategy, r
    )
    if r == 1 or (scenario.repair_minutes is not None and plain.restarts < _FEW_WIPEOUTS):
        return None, plain
    N = scenario.groups
    seen: dict[int, TrainingEstimate] = {}

    def at(k: int) -> float:
        if k not in seen:
            sc = dataclasses.replace(scenario, planned_restart_failures=k)
            seen[k] = optimal_interval(sc, strategy, r)
        return seen[k].hours

    grid: list[int] = []
    for k in np.unique(np.round(np.geomspace(1, N, max(int(math.log(N) / math.log(2)), 1) + 1))):
        grid.append(int(k))
        at(int(k))
        est = seen[int(k)]
        if not est.planned_restarts > 1e-6 * est.restarts:
            break
    i = int(np.argmin([seen[k].hours for k in grid]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    while hi - lo > 2:
        a, b = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if at(a) <= at(b):
            hi = b
        else:
            lo = a
    k_best = min(seen, key=lambda k: (seen[k].hours, k))
    est = seen[k_best]
    if not (est.hours < plain.hours * (1 - 1e-9) and est.planned_restarts > 0):
        return None, plain
    return k_best, seen[k_best]


def _other_scenario_plan(scenario: Any, strategy: str, microbatches: int = 1) -> Plan:
    """The dispatch point for scenario types other than :class:`Scenario`.

    A ``StepScenario`` (checkpoints every ``k`` steps) goes to the step-level
    search over ``r`` and ``checkpoint_every_steps``
    (:func:`spare_theory.training.step_optimize.optimal_step_plan`); ``microbatches``
    is folded into it by :func:`spare_theory.steps.scenario.merge_microbatches`.
    """
    from ..steps.scenario import StepScenario, merge_microbatches

    if isinstance(scenario, StepScenario):
        from .step_optimize import optimal_step_plan  # imports this module

        return optimal_step_plan(merge_microbatches(scenario, microbatches), strategy)
    if microbatches != 1:
        raise ValueError("microbatches must be 1 for a scenario other than Scenario/StepScenario")
    raise ValueError(
        f"scenario must be a Scenario or a StepScenario, got {type(scenario).__name__}"
    )


def _walk(
    scenario: Scenario,
    strategy: str,
    start: int,
    stop: int,
    curve: dict,
    patience: float = _PATIENCE,
    *,
    microbatches: int = 1,
) -> dict:
    """Add to ``curve`` the estimates from ``r = start`` towards ``stop`` (either way).

    The walk ends after ``stop``, at the first ``r`` without a modular ruler
    (SPARe), or once ``patience`` consecutive ``r`` have not beaten the best
    hours of the whole ``curve`` so far.
    """
    step = 1 if stop >= start else -1
    best = min((e.hours for e in curve.values()), default=math.inf)
    worse = 0
    for r in range(start, stop + step, step):
        if strategy == "spare" and r > 1 and not ruler_exists(scenario.groups, r):
            break
        est = curve[r] = optimal_interval(scenario, strategy, r, microbatches=microbatches)
        if est.hours < best:
            best, worse = est.hours, 0
        elif math.isfinite(best):
            worse += 1
            if worse >= patience:
                break
    return curve


def r_star_rule(N: ArrayLike) -> int | np.ndarray:
    """The published rule ``r* = floor(log2 N + 0.833)``.

    The constant is about ``gamma / ln 2 = 0.8327`` (Euler's gamma): the
    ``r`` at which the expected wipe-out comes when about half of the groups
    have failed, the point where two stack layers stop being enough; see
    :func:`spare_theory.wipeout.symbolic.derive_r_star_constant` for the sympy
    derivation.

    Where the rule holds, measured against :func:`optimal_plan` (SPARe, the
    interval optimised at both ``r``; 8 GPUs per group, 720 h of work):

    - cluster MTBF 5 to 30 min, restart 20 to 60 min, checkpoints 2 to 5
      min, ``N = 256`` to ``65,536``: the rule overshoots the optimal ``r``
      by 0 to 3 and costs 0 to 1.2 % more time (1.0 to 1.2 % around
      ``N = 12,500``, e.g. ``r = 14`` against the optimal 11 or 12);
    - the SPARe paper's scenario (cluster MTBF 5 min, 60 min restart, 5 min
      checkpoints): under 0.7 % for ``N >= 256`` (``tables/r_star.md``);
    - rare failures (cluster MTBF 120 min with a 20 min restart): the
      optimum is ``r = 1`` (plain checkpointing) and the rule costs 26 to
      44 %.  It assumes failures frequent enough for redundancy to pay;
      call :func:`optimal_plan` outside the first case.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= 1``.

    Returns
    -------
    int or numpy.ndarray of int
        ``floor(log2 N + 0.833)``, at least 1.

    Examples
    --------
    >>> r_star_rule(146), r_star_rule([64, 1_000_000]).tolist()
    (8, [6, 20])
    """
    N = as_count_array(N, "N", minimum=1)
    out = np.maximum(np.floor(np.log2(N) + R_STAR_CONSTANT), 1).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def clear_caches() -> None:
    """Empty the caches of the time-to-train layer: cycle laws (repairs too), interval searches.

    For cold-start measurements and to free the SPARe tables (about 36 bytes
    per group each).  Results do not change.

    Examples
    --------
    >>> clear_caches()
    >>> cycle_law.cache_info().currsize
    0
    """
    cycle_law.cache_clear()
    repair_cycle.cache_clear()
    planned_cycle.cache_clear()
    best_trigger.cache_clear()
    _search_interval.cache_clear()
