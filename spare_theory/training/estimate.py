"""Expected time to train, for any registered strategy, on either kind of scenario.

:func:`time_to_train` is the front door of the closed-form models: it
resolves its inputs once (:func:`spare_theory.training.resolve.resolve`) and
prices the plan with the hour-level renewal-reward model
(:mod:`spare_theory.hourly.model`) for a :class:`~spare_theory.hourly.scenario.Scenario`,
or the step-level closed form of the published simulator
(:mod:`spare_theory.steps`) for a :class:`~spare_theory.steps.scenario.StepScenario`.
A missing checkpoint interval is optimised by the searches of the planning
core (:mod:`spare_theory.planning`): :func:`~spare_theory.hourly.model.best_interval`
for minutes, :func:`optimal_checkpoint_steps` for steps.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, overload

import numpy as np

from .._validation import NoClosedFormError, as_count
from ..hourly.model import estimate_plan, wipeout_mean_hours
from ..hourly.process import check_split, group_process
from ..hourly.renewal import TrainingEstimate
from ..hourly.scenario import Scenario
from ..planning.resolved import Resolved
from ..planning.search import minimize_integer
from ..steps.estimate import StepEstimate
from ..steps.estimate import step_estimate as estimate_from_cycles
from ..steps.pool import pool_priced_scenario, priced_step_scenario
from ..steps.scenario import StepScenario
from ..strategies.base import Strategy
from .resolve import check_wipeout_fields, reported_r, resolve

__all__ = [
    "best_steps",
    "estimate_job",
    "mean_time_to_wipeout",
    "optimal_checkpoint_steps",
    "step_estimate",
    "time_to_train",
]

# Ratio of the geometric grid of checkpoint intervals k (steps) that brackets the
# minimum, and the widest bracket evaluated at every integer.
_K_RATIO = 1.5
_EXHAUSTIVE = 64


@overload
def time_to_train(
    scenario: Scenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> TrainingEstimate: ...


@overload
def time_to_train(
    scenario: StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> StepEstimate: ...


def time_to_train(
    scenario: Scenario | StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> TrainingEstimate | StepEstimate:
    """Expected wall-clock time of a training run and its breakdown.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        Cluster, failure rate, costs and work.  A
        :class:`~spare_theory.steps.scenario.StepScenario` (the published
        simulator's step-level workload) is priced by the step-level closed
        form (``docs/step_model.md``).
    strategy : str or Strategy
        A registered strategy (:func:`spare_theory.strategy`): ``"ckpt"``
        (every failure is a global restart), ``"rep"`` (``r`` replicas of
        every shard on disjoint groups; a restart when a whole replica set is
        dead), ``"spare"`` (stacked placement on a modular Golomb ruler; a
        restart at wipe-out), or one added by
        :func:`spare_theory.register_strategy`.
    strategy : str, Strategy or Plan
        A plan of :func:`spare_theory.optimal_plan` stands for its strategy
        and variables (``r``, interval, quorum, planned-restart trigger,
        micro-batches): ``time_to_train(scenario, plan)`` is ``plan.estimate``
        evaluated again, its ``hours`` exactly ``plan.hours``.  No other plan
        keyword may then be given.
    r : int, optional
        The strategy's ``r``: required for ``"rep"`` (replicas,
        ``1 <= r <= N``), ``"spare"`` (stack depth: a modular ruler with
        ``r`` marks must exist at ``N``) and ``"hot_spares"`` (spare groups,
        ``1 <= r < N``); ``None`` for ``"ckpt"`` and ``"elastic"``, which
        have none (their estimates report ``r = None``).
    checkpoint_interval_minutes : float, optional
        Compute time ``tau`` between checkpoints, minutes, ``> 0``; ``None``
        uses the interval that minimises the expected hours
        (:func:`spare_theory.hourly.model.best_interval`).  Must be ``None``
        for a StepScenario.
    checkpoint_every_steps : int, optional
        For step-level scenarios only: a checkpoint every ``k >= 1`` steps;
        ``None`` uses the ``k`` that minimises the expected time
        (:func:`spare_theory.optimal_checkpoint_steps`).  Must be ``None``
        for a :class:`Scenario`.
    microbatches : int, default 1
        SPARe only: every shard is cut into ``m`` micro-batches that any
        surviving host of its type may compute
        (:class:`spare_theory.cycles.spare.SpareSplit`).  Folded into the
        scenario's ``microbatches`` field: used when that field is 1, an
        equal value agrees, another raises ``ValueError``.
    **plan
        The strategy's own plan variables, by the names it declares
        (:attr:`Strategy.plan_variables
        <spare_theory.strategies.base.Strategy.plan_variables>`; ``None``
        or absent: its default): ``min_groups``, the quorum ``q`` (fewest
        groups up for the job to go on) of ``"elastic"`` (default
        ``ceil(N/2)``) and ``"hot_spares"`` (default ``N - r``).  A name
        the strategy does not declare raises ``ValueError`` naming it.

    Returns
    -------
    TrainingEstimate or StepEstimate
        ``hours`` (the breakdown adding up to it), ``availability`` (useful
        share of wall time), ``uptime`` (share outside global restarts),
        ``restarts``, ``feasible`` and ``reason``; a
        :class:`~spare_theory.steps.estimate.StepEstimate` also has
        ``total_over_T0`` and ``checkpoint_every_steps``.

    Raises
    ------
    ValueError
        Naming the argument: not a Scenario, unknown strategy, missing or out
        of range ``r``, no modular ruler for ``(N, r)``, ``tau <= 0``; for
        SPARe with ``r > 1``, ``N`` above
        :data:`~spare_theory.cycles.spare.MAX_SPARE_GROUPS` (``2**25``);
        ``microbatches`` not 1 for another strategy or with a field it is not
        modelled with; a plan variable the strategy does not declare or out
        of range (``min_groups`` above ``N`` or above the active groups).

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario.published_600k(4096)  # N = 146 groups, 60 min restarts
    >>> est = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60)
    >>> round(est.hours, 1), round(est.restarts, 2), round(est.uptime, 4)
    (1929.2, 212.43, 0.8899)
    >>> ckpt = time_to_train(sc, "ckpt")
    >>> round(ckpt.checkpoint_interval_minutes, 2), ckpt.r
    (4.26, None)

    The SPARe paper's simulated scenario, Rep at ``r = 3`` with a checkpoint
    every 6 steps (the published simulator: 6.02 x T0):

    >>> from spare_theory import paper_scenario
    >>> step = time_to_train(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6)
    >>> round(step.total_over_T0, 2), round(step.uptime, 3), round(step.restarts)
    (6.07, 0.612, 210)

    SPARe with each failed group's shard split into 16 micro-batches:

    >>> split = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60, microbatches=16)
    >>> round(split.hours / est.hours, 3) < 1
    True

    Elastic DP with a quorum of 100 of the 146 groups (3 min stalls, the
    default ``reconfigure_minutes``), and 8 hot spares:

    >>> el = time_to_train(sc, "elastic", checkpoint_interval_minutes=60, min_groups=100)
    >>> round(el.hours), round(el.samples_skipped, 3), el.exact_batch
    (2305, 0.188, False)
    >>> hot = time_to_train(sc, "hot_spares", r=8, checkpoint_interval_minutes=60)
    >>> hot.samples_skipped, hot.exact_batch
    (0.0, True)

    A plan of the optimiser, evaluated again:

    >>> from spare_theory import optimal_plan
    >>> plan = optimal_plan(sc, "spare")
    >>> time_to_train(sc, plan).hours == plan.hours
    True
    """
    resolved = resolve(
        scenario,
        strategy,
        r=r,
        checkpoint_interval_minutes=checkpoint_interval_minutes,
        checkpoint_every_steps=checkpoint_every_steps,
        microbatches=microbatches,
        **plan,
    )
    if isinstance(resolved.scenario, Scenario):
        check_split(resolved.scenario, resolved.strategy)  # the split model's limits
    return resolved.strategy.with_caveats(estimate_job(resolved), resolved.scenario)


def estimate_job(resolved: Resolved) -> Any:
    """The estimate of a resolved plan at its interval (or the best), as a front door reports it.

    Hour level: :func:`~spare_theory.hourly.model.estimate_plan`; step level:
    :func:`step_estimate` at ``k``, or :func:`best_steps` for the best ``k``.
    Labelled with the strategy's name and ``r`` (``None`` for a strategy
    without one).

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> est = estimate_job(resolve(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6))
    >>> est.r, round(est.total_over_T0, 2)
    (3, 6.07)
    """
    if isinstance(resolved.scenario, StepScenario):
        if resolved.checkpoint_every_steps is None:
            estimate: Any = best_steps(resolved)
        else:
            estimate = step_estimate(
                resolved.scenario,
                resolved.strategy,
                resolved.chosen_r,
                resolved.checkpoint_every_steps,
                resolved.variables,
            )
    else:
        estimate = estimate_plan(resolved)
    r = reported_r(resolved)
    return estimate if estimate.r == r else dataclasses.replace(estimate, r=r)


def mean_time_to_wipeout(
    scenario: Scenario, strategy: Any, *, r: int | None = None, **plan: Any
) -> float:
    """Expected hours from a healthy start to the first wipe-out (with or without repairs).

    Without repairs (``repair_minutes=None``) the strategy's own law: CKPT-only
    ``1 / (N lambda)``; SPARe ``sum_f P(T > f) / ((N - f) lambda)``, exact
    given ``P(T > f)`` (state ``f`` lasts ``1/((N - f) lambda)`` on average),
    which is exact where cheap and the sharp law elsewhere; Rep
    ``int prod_sets (1 - p^{|set|}) du / lambda``.  With repairs
    ``int_0^inf Q(u) du / lambda`` with ``Q`` of the repair cycle
    (:class:`~spare_theory.cycles.repairs.RepairCycle`): exact per set for
    Rep; for SPARe the no-repair hazard along the path corrected by the
    per-type and pair chains (:meth:`~spare_theory.cycles.spare.Spare.repair_log_q`).
    Fast repairs give about ``1 / (lambda N r pi^{r-1})`` (``r`` overlapping
    outages), slow ones today's law.  A strategy with its own law on the
    scenario (:meth:`Strategy.own_law
    <spare_theory.strategies.base.Strategy.own_law>`) gives its own mean:
    elastic DP and hot spares the exact mean passage time of the down count
    to ``N - q + 1`` (a group out for its repair plus heal time).

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate and repairs.
    strategy : str or Strategy
        A registered strategy.
    r : int or None
        Redundancy (as for :func:`time_to_train`).
    **plan
        The strategy's plan variables (as for :func:`time_to_train`): the
        quorum ``min_groups`` of the elastic strategies.

    Returns
    -------
    float
        Hours.

    Raises
    ------
    ValueError
        Naming the argument.
    NoClosedFormError
        Naming each field this door does not price and its simulation does not
        play (:data:`~spare_theory.training.resolve.WIPEOUT_FIELDS`: a
        non-exponential law, failure domains, lemons, a spare pool, planned
        restarts); or naming the repair field where the strategy's law was
        measured off (:meth:`CycleLaw.wipeout_refusal
        <spare_theory.cycles.base.CycleLaw.wipeout_refusal>`: SPARe with a
        repair law other than exponential, or at ``r >= 3`` with repairs
        slower than a fifth of a group's mean lifetime), which
        :func:`simulate_time_to_wipeout` plays.

    Notes
    -----
    Fields with no effect here:

    - ``restart_minutes``, ``checkpoint_minutes``, ``work_hours``,
      ``rejoin_minutes``, ``reconfigure_minutes``: costs and stalls of the
      run, not of its groups' failures and repairs, which alone decide when a
      wipe-out comes;
    - ``microbatches``: splitting changes what a step costs, not which
      failures wipe the job out;
    - ``failure_classes``: how long a failure goes unnoticed, not when it
      happens;
    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100)
    >>> round(mean_time_to_wipeout(sc, "spare", r=3), 2)
    6.71
    >>> fast = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...                 restart_minutes=60, checkpoint_minutes=5, work_hours=100,
    ...                 repair_minutes=10)
    >>> round(mean_time_to_wipeout(fast, "spare", r=3))
    2911
    >>> round(mean_time_to_wipeout(sc, "elastic", min_groups=32), 2)  # 33 of 64 groups down
    17.73
    """
    resolved = resolve(scenario, strategy, r=r, **plan)
    if not isinstance(resolved.scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    check_wipeout_fields(resolved.scenario, NoClosedFormError)
    chosen, r = resolved.strategy, resolved.chosen_r
    process = group_process(resolved.scenario)
    own = chosen.own_law(process, r, **resolved.variables)
    if own is not None:
        # The own law carries its repair rate (the elastic one: repair plus heal).
        mean = own.mean_time_to_wipeout(own.mu)
        if mean is not None:
            return mean / process.rate_per_hour
        return wipeout_mean_hours(process, own)
    law = chosen.cycle_law(process.groups, r)
    refusal = law.wipeout_refusal(process.mu, process.repair_law)
    if refusal is not None:
        raise NoClosedFormError(refusal)
    return wipeout_mean_hours(process, law)


def step_estimate(
    scenario: StepScenario,
    strategy: Strategy,
    r: int,
    k: int,
    plan: dict[str, Any] | None = None,
) -> StepEstimate:
    """The step-level estimate of a checked plan ``(strategy, r)``, a checkpoint every ``k`` steps.

    ``plan``: the strategy's checked plan variables (:meth:`Strategy.check_plan
    <spare_theory.strategies.base.Strategy.check_plan>`; none by default).

    Examples
    --------
    >>> from spare_theory import paper_scenario, strategy
    >>> est = step_estimate(paper_scenario(200), strategy("rep"), 3, 6)
    >>> round(est.total_over_T0, 2)
    6.07
    """
    strategy.check_step_plan(priced_step_scenario(scenario), r)
    variables = plan or {}
    scenario = pool_priced_scenario(
        scenario, functools.partial(strategy.step_repair_cycle, r=r, **variables)
    )
    return estimate_from_cycles(
        scenario,
        functools.partial(strategy.step_cycle, **variables),
        functools.partial(strategy.step_repair_cycle, **variables),
        strategy=strategy.name,
        r=r,
        checkpoint_every_steps=as_count(k, "checkpoint_every_steps"),
    )


def optimal_checkpoint_steps(
    scenario: StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> StepEstimate:
    """The step-level estimate at the checkpoint interval ``k`` that minimises the expected time.

    ``time_to_train(scenario, strategy, r=r)`` on a step-level scenario; the
    search is :func:`best_steps`.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : str or Strategy
        A registered strategy.
    r, microbatches, **plan
        As for :func:`spare_theory.time_to_train`.

    Returns
    -------
    StepEstimate
        The estimate at the best ``k`` (``checkpoint_every_steps``).

    Raises
    ------
    ValueError
        Naming the argument (not a StepScenario, unknown strategy, ``r``
        missing or out of range), or when no ``k`` lets the run progress.

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> est = optimal_checkpoint_steps(paper_scenario(200), "rep", r=3)
    >>> est.checkpoint_every_steps, round(est.total_over_T0, 2)
    (4, 6.03)
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    resolved = resolve(scenario, strategy, r=r, microbatches=microbatches, **plan)
    return resolved.strategy.with_caveats(estimate_job(resolved), resolved.scenario)


def best_steps(resolved: Resolved) -> StepEstimate:
    """The step-level estimate of a resolved plan at the ``k`` that minimises the expected time.

    Minimises the expected time over integers ``1 <= k <= steps`` with
    :func:`~spare_theory.planning.search.minimize_integer`: a geometric grid
    ``k ~ 1.5^j`` brackets the minimum, then every integer between the best
    grid point's neighbours is evaluated (a bracket wider than 64 is first
    narrowed by an integer ternary search; exact when the time is unimodal in
    ``k`` on that bracket).  Ties go to the smaller ``k``.  A ``k`` beyond the
    model's horizon (no checkpoint survives a cycle) counts as infinitely
    slow.

    Raises
    ------
    ValueError
        When the model refuses the plan (at ``k = 1``) or no ``k`` lets the
        run progress.

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> best = best_steps(resolve(paper_scenario(200), "rep", r=3))
    >>> best.checkpoint_every_steps
    4
    """
    scenario, chosen, r, variables = (
        resolved.scenario,
        resolved.strategy,
        resolved.chosen_r,
        resolved.variables,
    )
    # k = 1 first: it raises ValueError naming the argument for a plan the model refuses.
    found: dict[int, StepEstimate | None] = {1: step_estimate(scenario, chosen, r, 1, variables)}

    def seconds_at(k: int) -> float:
        if k not in found:
            try:
                found[k] = step_estimate(scenario, chosen, r, k, variables)
            except ValueError:
                found[k] = None  # beyond the model's horizon: no progress
        est = found[k]
        return math.inf if est is None or not math.isfinite(est.seconds) else est.seconds

    steps = scenario.steps
    n_grid = math.ceil(math.log(steps) / math.log(_K_RATIO)) + 1 if steps > 1 else 1
    grid = np.unique(np.clip(np.round(_K_RATIO ** np.arange(n_grid)), 1, steps).astype(int))
    best, _ = minimize_integer(seconds_at, grid, exhaustive=_EXHAUSTIVE)
    est = found[best]
    if est is None or not math.isfinite(est.seconds):
        raise ValueError(
            f"no checkpoint interval lets strategy {chosen.name!r} at r={r} progress on this "
            "scenario"
        )
    return est
