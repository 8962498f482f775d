"""Plans: the best redundancy, checkpoint interval and plan variables for a scenario.

One planner for every strategy and both kinds of scenario, built on the
searches of :mod:`spare_theory.planning.search`:

- **over r**: :func:`~spare_theory.planning.search.walk_redundancy` along the
  legs the strategy names (:meth:`Strategy.redundancy_legs
  <spare_theory.strategies.base.Strategy.redundancy_legs>`: CKPT-only
  ``r = 1``; Rep upwards from 1; SPARe ``r = 1`` and both ways from the
  published rule ``r*``, down to 2 when hours are flat in ``r`` (repairs));
- **over the interval** at each ``r``: an hour-level scenario's continuous
  ``tau`` (:func:`~spare_theory.hourly.model.best_interval`, the one interval
  search); a step-level scenario's integer ``k``
  (:func:`~spare_theory.training.estimate.best_steps`, the one integer search);
- **over planned-restart triggers** (``planned_restarts=True``): the integer
  ``k`` at each ``r`` (:func:`best_trigger`, the same integer search), walking
  ``r`` again from the best plain ``r``;
- **over a strategy's own plan variable** (:meth:`Strategy.plan_search
  <spare_theory.strategies.base.Strategy.plan_search>`: elastic DP's quorum
  ``min_groups``): the integer at each ``r`` (:func:`best_plan_variable`,
  the same integer search).

The inputs are checked once (:func:`~spare_theory.training.resolve.resolve`),
each ``r`` tried gets its plan variables checked once, and the estimates
trust them.  Everything returns one :class:`~spare_theory.planning.plan.Plan`.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._caching import cached
from .._validation import NoClosedFormError, as_choice, as_seed_sequence, child_seed
from ..cycles.planned import cost_trigger_failures
from ..hourly.process import check_split
from ..hourly.renewal import TrainingEstimate
from ..hourly.scenario import Scenario
from ..planning.bill import CostModel
from ..planning.plan import Plan
from ..planning.resolved import Resolved
from ..planning.search import (
    REFUSED,
    Bracket,
    Leg,
    first_least,
    minimize_integer,
    walk_redundancy,
)
from ..steps.scenario import StepScenario
from ..strategies.base import PATIENCE
from .estimate import estimate_job
from .objective import check_objective, energy_interval, objective_value
from .resolve import resolve
from .simsearch import DEFAULT_MAX_TRIALS, DEFAULT_REL_SE, simulated_plan, simulation_player
from .verify import LOG_SOURCE, verify_plan

__all__ = ["PLAN_METHODS", "best_plan_variable", "best_trigger", "optimal_plan"]

#: How :func:`optimal_plan` values candidate plans (``method=``).
PLAN_METHODS = ("auto", "model", "simulation")

# best_trigger: with repairs and fewer expected restarts per run, no search.
_FEW_WIPEOUTS = 0.01
# The stream key of the fresh runs a simulated plan's figures come from (not the search's).
_CONFIRM_STREAM = 2**62
# Widest bracket of a strategy's plan variable searched integer by integer.
_PLAN_EXHAUSTIVE = 8


def optimal_plan(
    scenario: Scenario | StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    planned_restarts: bool = False,
    r_values: Any = None,
    objective: str = "hours",
    cost: CostModel | None = None,
    method: str = "auto",
    verify: Any = False,
    seed: int | np.random.SeedSequence = 0,
    rel_se: float = DEFAULT_REL_SE,
    max_trials: int = DEFAULT_MAX_TRIALS,
    executor: cf.Executor | None = None,
    progress: bool = False,
    **plan: Any,
) -> Plan:
    """Minimise the expected time to train over ``r`` (integer) and the checkpoint interval.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        The run to plan: an hour-level scenario is planned over ``r`` and the
        continuous interval ``tau``; a
        :class:`~spare_theory.steps.scenario.StepScenario` over ``r`` and the
        integer interval ``k`` (steps).  Domains, lemons, repairs,
        micro-batches and failure laws are scenario fields.
    strategy : str or Strategy
        A registered strategy; it names the ``r`` walked (SPARe only those with
        a modular Golomb ruler at ``N = scenario.groups``).
    r, checkpoint_interval_minutes, checkpoint_every_steps, **plan : optional
        Plan variables held fixed (as for :func:`spare_theory.time_to_train`:
        ``plan``, the strategy's own); the others are optimised; ``r`` is ``r_values=[r]``.
    microbatches : int, default 1
        Folded into the scenario's ``microbatches`` field (SPARe with every
        failed group's shard cut into ``m`` pieces for its survivors).
    planned_restarts : bool, default False
        Also choose a planned-restart trigger ``k`` (restart without rollback
        once ``k`` groups are down; ``Scenario.planned_restart_failures``)
        jointly with ``r`` and the interval: from the best ``r`` without
        planned restarts the walk goes both ways, each ``r`` at its best
        ``k`` (:func:`best_trigger`); reported as
        :attr:`Plan.planned_restart_failures` (``None``: none pays).
        Hour-level scenarios without micro-batches.  Cost triggers
        (``Scenario.planned_restart_cost``) are covered by the same search:
        under the model a threshold ``c`` is the count trigger ``k(c)``
        (:func:`~spare_theory.cycles.planned.cost_trigger_failures`), so the
        best count is at least as good as the best threshold; when the best
        ``k`` is where SPARe's cost steps up (``k = k(c)``) the plan also
        reports that ``c`` as :attr:`Plan.planned_restart_cost`.
    r_values : sequence of int, optional
        Evaluate exactly these redundancies (each at its best interval)
        instead of walking ``r``; each must be a plan of the strategy.

    objective : {"hours", "usd", "energy"}, default "hours"
        What the plan minimises (:mod:`spare_theory.training.objective`):
        dollars are proportional to hours (the reserved GPUs are fixed by the
        scenario), so ``"usd"`` gives the hours plan; ``"energy"`` searches
        the interval again at each ``r`` for the least energy under ``cost``
        (hour-level scenarios, without planned restarts).
    cost : CostModel, optional
        Prices and powers of the objective (default ``CostModel()``).
    method : {"auto", "model", "simulation"}, default "auto"
        How candidate plans are valued: ``"model"``, the closed forms (a
        scenario none covers raises
        :class:`~spare_theory._validation.NoClosedFormError`, a
        ``ValueError``); ``"simulation"``, the event simulation
        (:func:`~spare_theory.training.simsearch.simulated_plan`: common
        random numbers, each candidate's mean to ``rel_se``, the same walk
        over ``r`` and plan variables, a log-interval search); ``"auto"``,
        the model where a closed form covers the scenario
        (:meth:`Strategy.model_refusal
        <spare_theory.strategies.base.Strategy.model_refusal>` and the
        model's own refusals), else the simulation.  :attr:`Plan.method`
        says which answered.  The simulation plans for ``objective="hours"``
        without planned restarts.
    verify : bool or FailureLog, default False
        Simulate the plan and its neighbours (``r +- 1``, the interval ``x
        0.7`` and ``x 1.4``, the quorum one step either way) on common random
        numbers (:func:`~spare_theory.training.verify.verify_plan`): the plan
        then carries ``verified_hours``, ``verified_standard_error`` and
        ``model_error``, moves to a neighbour that simulates better by more
        than two paired standard errors (``moved_by_verification``), and its
        caveats are its measured error.  A
        :class:`~spare_theory.traces.failure_log.FailureLog` verifies against
        the replay of that log (an hour-level scenario) instead of the law.
        Under ``objective="energy"`` the plan is measured but not moved
        (neighbours are compared by their hours).
    seed : int or numpy.random.SeedSequence, default 0
        Root of the simulations' streams (search and verification): trial
        ``i`` of every candidate plays ``child_seed(seed, i)``.
    rel_se : float, default 0.005
        Relative standard error of each simulated candidate's mean hours;
        in verification, of the plan's mean and of each neighbour's paired
        difference from it.
    max_trials : int, default 512
        Most trials per simulated candidate.
    executor : concurrent.futures.Executor, optional
        Spreads the simulated trials (a Dask client's executor included);
        results do not depend on it.
    progress : bool
        Progress bars over the simulated trials.

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
        If ``scenario`` is neither a Scenario nor a StepScenario, the
        strategy is unknown, ``microbatches`` does not fit the strategy or
        the scenario, or no plan progresses.

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    The published scenario at 4096 GPUs per group (``N = 146``, 60 min
    restart, 5 min checkpoints, 720 h of work):

    >>> plan = optimal_plan(Scenario.published_600k(4096), "spare")
    >>> plan.r, round(plan.hours, 1), plan.r_values.tolist()
    (9, 1922.9, [1, 5, 6, 7, 8, 9, 10, 11])
    >>> round(plan.checkpoint_interval_minutes, 2), round(plan.estimate.restarts)
    (82.75, 190)

    The SPARe paper's simulated scenario (step level, 2,000 of its 10,000 steps):

    >>> from spare_theory import paper_scenario
    >>> step_plan = optimal_plan(paper_scenario(200, steps=2000), "spare")
    >>> step_plan.r, step_plan.checkpoint_every_steps, step_plan.checkpoint_interval_minutes
    (9, 15, None)

    SPARe with each failed group's shard split into 16 micro-batches:

    >>> split = optimal_plan(Scenario.published_600k(4096), "spare", microbatches=16)
    >>> split.hours < plan.hours
    True

    Elastic DP has no ``r`` (``None``); its quorum is chosen:

    >>> elastic = optimal_plan(Scenario.published_600k(4096), "elastic")
    >>> elastic.r, elastic.min_groups, elastic.method
    (None, 70, 'model')

    Hot spares under Weibull lifetimes have no closed form: the event
    simulation plans them, and verification measures the model's error:

    >>> sc = Scenario(gpus=512, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=10, failure_law="weibull")
    >>> spares = optimal_plan(sc, "hot_spares", rel_se=0.01)
    >>> spares.method, bool(spares.estimate.standard_error_hours < 0.01 * spares.hours)
    ('simulation', True)
    >>> checked = optimal_plan(sc, "rep", verify=True, rel_se=0.01)
    >>> checked.method, abs(checked.model_error) < 0.1, len(checked.caveats)
    ('model', True, 1)
    """
    if r is not None and r_values is not None:
        raise ValueError("give r (one redundancy) or r_values (several), not both")
    method = as_choice(method, "method", PLAN_METHODS)
    objective, prices = check_objective(objective, cost)
    if objective == "energy" and (planned_restarts or not isinstance(scenario, Scenario)):
        raise ValueError("objective='energy' plans hour-level scenarios without planned restarts")
    resolved = resolve(
        scenario,
        strategy,
        r=r,
        checkpoint_interval_minutes=checkpoint_interval_minutes,
        checkpoint_every_steps=checkpoint_every_steps,
        microbatches=microbatches,
        walk=True,
        **plan,
    )
    if resolved.r is not None:
        r_values = [resolved.r]
    elif r_values is not None:
        r_values = sorted(
            {
                resolved.strategy.check_r(resolved.scenario.groups, v)
                for v in np.atleast_1d(r_values).tolist()
            }
        )
    root = as_seed_sequence(seed)
    play = simulation_player(seed=root, executor=executor, progress=progress)
    reason = (
        "method='simulation'"
        if method == "simulation"
        else resolved.strategy.model_refusal(resolved.scenario)
    )
    best = None
    if reason is None:
        try:
            best = _model_plan(resolved, r_values, planned_restarts, objective, prices)
        except NoClosedFormError as exc:
            if method == "model":
                raise
            reason = str(exc)
    elif method == "model":
        raise NoClosedFormError(reason)
    if best is None:
        if planned_restarts or objective == "energy":
            raise ValueError(
                "planned_restarts and objective='energy' are planned by the model, which does "
                f"not cover this scenario ({reason})"
            )
        best = simulated_plan(
            resolved,
            r_values=r_values,
            search_variables=not resolved.variables,
            play=play,
            confirm=simulation_player(
                seed=child_seed(root, _CONFIRM_STREAM), executor=executor, progress=progress
            ),
            rel_se=rel_se,
            max_trials=max_trials,
            reason=str(reason),
        )
    if verify is False or verify is None:
        return best
    fixed = frozenset(
        [*resolved.variables, *(["r"] if resolved.r is not None else [])]
        + (["interval"] if checkpoint_interval_minutes or checkpoint_every_steps else [])
    )
    if objective == "energy":
        # Neighbours are compared by their hours: an energy plan is measured, never moved.
        fixed |= {"r", "interval", *resolved.strategy.plan_variables}
    if verify is True:
        source = "the event simulation of the scenario's law"
    else:
        from ..traces.replay import log_player

        play = log_player(verify, seed=root, executor=executor, progress=progress)
        source = LOG_SOURCE
    return verify_plan(
        best,
        resolved.scenario,
        play=play,
        rel_se=rel_se,
        max_trials=max_trials,
        source=source,
        fixed=fixed,
    )


def _model_plan(
    resolved: Resolved,
    r_values: list[int] | None,
    planned_restarts: bool,
    objective: str,
    prices: CostModel,
) -> Plan:
    """The plan searched with the closed forms (:func:`optimal_plan`'s model method)."""
    chosen, N = resolved.strategy, resolved.scenario.groups
    if isinstance(resolved.scenario, Scenario):
        check_split(resolved.scenario, chosen)  # the split model's limits
    fixed = resolved.variables  # the plan variables the caller fixed
    # Dollars are proportional to hours (training.objective): only energy has its own key.
    key = (
        functools.partial(objective_value, objective=objective, cost=prices)
        if objective == "energy"
        else _hours
    )

    def accepts(r: int) -> bool:
        return chosen.accepts(N, r)

    def walk(evaluate: Any, legs: Sequence[Leg | Bracket]) -> dict[int, Any]:
        if r_values is None:
            return walk_redundancy(evaluate, key, legs, accepts)
        plans = {r: evaluate(r) for r in r_values}
        return {r: plan for r, plan in plans.items() if plan is not None and plan is not REFUSED}

    def at(r: int) -> Resolved:
        return resolved.with_plan(r=r, **chosen.check_plan(N, r, fixed))

    hourly = resolved.scenario if isinstance(resolved.scenario, Scenario) else None
    variables: dict[int, dict[str, Any]] = {}
    refused: list[ValueError] = []

    def plan_at(r: int) -> Any:
        # A model may refuse some r (with failure domains, more hosts per type than
        # domains): no plan there.  A refusal at the walk's first r is about the
        # scenario, not r, and is raised.
        try:
            variables[r], estimate = best_plan_variable(at(r), search=not fixed)
        except ValueError as exc:
            if not variables and not refused:
                raise
            refused.append(exc)
            return REFUSED
        if objective == "energy" and estimate is not None:
            return energy_interval(resolved.with_plan(r=r, **variables[r]), estimate, prices)
        return estimate

    # With repairs hours are nearly flat in r: the walk down may go on to r = 2, so
    # Plan.smallest_r_within can name the small r that cost almost nothing.
    flat = hourly is not None and hourly.repair_minutes is not None
    curve = walk(plan_at, chosen.redundancy_legs(N, flat=flat))
    if refused and not any(r > 1 for r in curve):
        raise refused[0]  # no redundancy is modelled here: say why, not a plan of r = 1
    if not curve:
        raise ValueError(f"no plan of strategy {chosen.name!r} progresses on this scenario")
    triggers: dict[int, int | None] = {}
    if planned_restarts and hourly is not None and hourly.microbatches == 1:
        plain = {r: e for r, e in curve.items() if r > 1}
        if plain:
            start = min(plain, key=lambda r: (plain[r].hours, r))

            def planned_at(r: int) -> TrainingEstimate:
                triggers[r], estimate = best_trigger(at(r))
                return estimate

            def above_one(r: int) -> bool:
                return r >= 2 and accepts(r)

            legs = [Leg(start, 2, PATIENCE), Leg(start + 1, N, PATIENCE)]
            curve = walk_redundancy(planned_at, _hours, legs, above_one, dict(curve))
    best_r, plan = _plan(curve, key)
    k = triggers.get(best_r)
    threshold = None
    if k is not None and chosen.cycle_law(N, best_r).cost_grows:
        threshold = _cost_realising(N, k)
    # The caveats of the scenario the plan prices: its planned-restart trigger included.
    priced = (
        resolved.scenario
        if k is None
        else dataclasses.replace(resolved.scenario, planned_restart_failures=k)
    )
    return dataclasses.replace(
        plan,
        estimate=chosen.with_caveats(plan.estimate, priced),
        planned_restart_failures=k,
        planned_restart_cost=threshold,
        microbatches=resolved.scenario.microbatches,
        method="model",
        variables=variables.get(best_r, {}),
    )


def _hours(estimate: Any) -> float:
    return float(estimate.hours)


def _plan(curve: dict[int, Any], key: Any = _hours) -> tuple[int, Plan]:
    """The ``r`` of least ``key`` (hours; a plateau: its smallest ``r``) and its plan."""
    r_values = np.array(sorted(curve), dtype=np.int64)
    hours = np.array([curve[int(r)].hours for r in r_values])
    best = int(r_values[first_least([key(curve[int(r)]) for r in r_values])])
    return best, Plan(estimate=curve[best], r_values=r_values, hours_by_r=hours)


def _cost_realising(N: int, k: int | None) -> float | None:
    """The stack threshold ``c = ceil(N/(N-k))`` if ``k(c) = k`` (the cost steps up at ``k``)."""
    if k is None or k >= N:
        return None
    c = float(-(-N // (N - k)))
    return c if c > 1 and cost_trigger_failures(N, c) == k else None


@cached(maxsize=256, shared=True)
def best_trigger(resolved: Resolved) -> tuple[int | None, TrainingEstimate]:
    """The best planned-restart trigger ``k`` at ``r`` (interval optimised at each ``k``).

    ``k`` (``Scenario.planned_restart_failures``, groups down at once) by
    :func:`~spare_theory.planning.search.minimize_integer` on a geometric grid
    of ratio about 2 from 1 up to the first ``k`` whose planned restarts are
    below ``1e-6`` of the restarts (later ``k`` never fire), then the bracket
    around the best grid point (hours are unimodal in ``k`` in practice:
    early triggers restart too often, late ones do not prevent wipe-outs).
    ``None`` (no planned restarts) wins ties and is kept, without a search,
    when repairs are on and the plain plan expects fewer than 0.01 restarts
    per run: a restart then has no wipe-out to prevent, and the step cost it
    resets climbs back to its stationary level within about one repair time.

    Parameters
    ----------
    resolved : Resolved
        A resolved hour-level plan (:func:`~spare_theory.training.resolve.resolve`;
        its scenario's own ``planned_restart_failures`` is replaced).

    Returns
    -------
    tuple of (int or None, TrainingEstimate)
        The best ``k`` and the estimate at it.

    Examples
    --------
    >>> from spare_theory.training.resolve import resolve
    >>> k, est = best_trigger(resolve(Scenario.published_600k(4096), "spare", r=9))
    >>> k, round(est.hours, 1), round(est.planned_restarts / est.restarts, 2)
    (74, 1668.7, 0.78)
    """
    r, scenario = resolved.chosen_r, resolved.scenario
    plain = estimate_job(_with_trigger(resolved, None))
    if r == 1 or (scenario.repair_minutes is not None and plain.restarts < _FEW_WIPEOUTS):
        return None, plain
    N = scenario.groups
    estimates: dict[int, TrainingEstimate] = {}

    def hours_at(k: int) -> float:
        estimates[k] = estimate_job(_with_trigger(resolved, k))
        return estimates[k].hours

    def never_fires(k: int) -> bool:
        est = estimates[k]
        return not est.planned_restarts > 1e-6 * est.restarts

    grid = np.unique(np.round(np.geomspace(1, N, max(int(math.log(N) / math.log(2)), 1) + 1)))
    k_best, _ = minimize_integer(hours_at, grid.astype(int), exhaustive=2, stop=never_fires)
    est = estimates[k_best]
    if not (est.hours < plain.hours * (1 - 1e-9) and est.planned_restarts > 0):
        return None, plain
    return k_best, est


def _with_trigger(resolved: Resolved, k: int | None) -> Resolved:
    return dataclasses.replace(
        resolved, scenario=dataclasses.replace(resolved.scenario, planned_restart_failures=k)
    )


# Small entries (a scenario, a strategy, r -> an estimate): a report's crossovers plan
# thousands of (scenario, r) and ask again for the reference's, which 256 had dropped.
@cached(maxsize=4096, shared=True)
def best_plan_variable(resolved: Resolved, *, search: bool = True) -> tuple[dict[str, Any], Any]:
    """The best value of the strategy's searched plan variable at ``r`` (interval optimised).

    The variable and its bracketing grid come from :meth:`Strategy.plan_search
    <spare_theory.strategies.base.Strategy.plan_search>` (elastic DP: the
    quorum ``min_groups`` on a grid geometric from both ends of ``[1, N]``);
    :func:`~spare_theory.planning.search.minimize_integer` narrows the
    bracket around the best grid point by a ternary search to 8 integers and
    evaluates those (exact when the hours are unimodal in the variable;
    ties go to the smaller value).  A strategy with none searched: ``{}``
    and the estimate at its defaults (and so with ``search=False``: the
    plan's own variables).  The interval is the continuous
    ``tau`` of a :class:`Scenario` or the checkpoint interval in steps of a
    :class:`~spare_theory.steps.scenario.StepScenario`, unless the plan fixes
    it (:func:`~spare_theory.training.estimate.estimate_job`).

    Parameters
    ----------
    resolved : Resolved
        A resolved plan (:func:`~spare_theory.training.resolve.resolve`).
    search : bool
        Search the variable (``False``: keep the plan's).

    Returns
    -------
    tuple of (dict, TrainingEstimate or StepEstimate or None)
        ``{name: best value}`` and the estimate there; the estimate is
        ``None`` for a step-level plan that no checkpoint interval lets
        progress.

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 8, gpus_per_group=8, gpu_mtbf_hours=128.0,
    ...               restart_minutes=20, checkpoint_minutes=2, work_hours=40,
    ...               reconfigure_minutes=1)
    >>> from spare_theory.training.resolve import resolve
    >>> best, est = best_plan_variable(resolve(sc, "elastic"))
    >>> best, round(est.hours, 1)
    ({'min_groups': 47}, 59.1)
    >>> best_plan_variable(resolve(sc, "ckpt"))[0]
    {}
    """
    chosen, r = resolved.strategy, resolved.chosen_r
    found = chosen.plan_search(resolved.scenario.groups, r) if search else None
    if found is None:
        return resolved.variables, _best_interval(resolved)
    name, grid = found
    estimates: dict[int, Any] = {}

    def hours_at(value: int) -> float:
        estimates[value] = _best_interval(
            resolved.with_plan(r=r, **{**resolved.variables, name: value})
        )
        return math.inf if estimates[value] is None else estimates[value].hours

    best, _ = minimize_integer(hours_at, grid.tolist(), exhaustive=_PLAN_EXHAUSTIVE)
    return {**resolved.variables, name: best}, estimates[best]


def _best_interval(resolved: Resolved) -> Any:
    """The estimate at the best interval; ``None`` for a step-level plan that never progresses."""
    if not isinstance(resolved.scenario, StepScenario):
        return estimate_job(resolved)
    resolved.strategy.check_step_plan(
        resolved.scenario, resolved.r
    )  # a refusal says why, not "no progress"
    try:
        return estimate_job(resolved)
    except ValueError:  # no checkpoint interval lets this plan progress
        return None
