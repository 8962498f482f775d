"""What every front door does first: its inputs checked once, into one :class:`Resolved`.

The four front doors (:func:`spare_theory.time_to_train`,
:func:`spare_theory.optimal_plan`, :func:`spare_theory.simulate_training`,
:func:`spare_theory.replay_training`) take the same keywords and call
:func:`resolve` once; the models and simulations below trust what it
returns.  A :class:`~spare_theory.planning.plan.Plan` stands for a strategy
with its variables (``time_to_train(scenario, plan)``).  This module imports
no model, so that the event simulations stay independent checks of the
closed forms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .._validation import as_count, merge_microbatches
from ..hourly.scenario import Scenario, check_checkpoint_interval
from ..planning.plan import Plan
from ..planning.resolved import Resolved
from ..steps.scenario import StepScenario
from ..strategies.base import Strategy
from ..strategies.registry import strategy as lookup

__all__ = [
    "WIPEOUT_FIELDS",
    "check_plan_names",
    "check_scenario",
    "check_wipeout_fields",
    "reported_r",
    "resolve",
]

#: Scenario fields the wipe-out doors (:func:`spare_theory.mean_time_to_wipeout`,
#: :func:`spare_theory.simulate_time_to_wipeout`) refuse, with why: the simulation
#: (:func:`~spare_theory.hourly.repairs_sim.simulate_wipeout_times`) plays exponential group
#: clocks at the scenario's rate, its repair law and placement, and nothing else, so the
#: model has no check there either.  Issue 41's table, before: the simulation returned the
#: same hours with and without a pool or lemons, and the model and it parted 2-5 times
#: under a Weibull law and failure domains.
WIPEOUT_FIELDS = {
    "failure_law": "a non-exponential lifetime law (the simulation's clocks are exponential)",
    "domain_mtbf_hours": "failure domains (the simulation plays no domain events)",
    "lemon_fraction": "lemon groups (lemon_rate_factor > 1; the simulation has one rate)",
    "spare_nodes": "a spare pool (the simulation repairs groups, not nodes through a pool)",
    "planned_restart_failures": "planned restarts (one brings every down group back)",
    "planned_restart_cost": "planned restarts (one brings every down group back)",
}


def check_wipeout_fields(scenario: Scenario, error: type[ValueError] = ValueError) -> None:
    """Raise ``error`` naming each field of :data:`WIPEOUT_FIELDS` that ``scenario`` sets.

    Examples
    --------
    >>> sc = Scenario(gpus=64, gpus_per_group=8, restart_minutes=1, checkpoint_minutes=1,
    ...               work_hours=1, lemon_fraction=0.1, lemon_rate_factor=3)
    >>> check_wipeout_fields(sc)
    Traceback (most recent call last):
    ...
    ValueError: lemon_fraction: the time to wipe-out is not modelled with lemon groups (...
    """
    present = {
        "failure_law": not scenario.exponential,
        "domain_mtbf_hours": scenario.domain_mtbf_hours is not None,
        "lemon_fraction": scenario.lemon_fraction > 0 and scenario.lemon_rate_factor != 1,
        "spare_nodes": scenario.pool,
        "planned_restart_failures": scenario.planned_restart_failures is not None,
        "planned_restart_cost": scenario.planned_restart_cost is not None,
    }
    named = [name for name, on in present.items() if on]
    if named:
        raise error(
            "; ".join(
                f"{name}: the time to wipe-out is not modelled with {WIPEOUT_FIELDS[name]}"
                for name in named
            )
            + "; time_to_train and simulate_training play it"
        )


def check_scenario(scenario: Any) -> None:
    """Raise ``ValueError`` unless ``scenario`` is a Scenario or a StepScenario.

    Examples
    --------
    >>> check_scenario(3)
    Traceback (most recent call last):
    ...
    ValueError: scenario must be a Scenario or a StepScenario, got int
    """
    if not isinstance(scenario, Scenario | StepScenario):
        raise ValueError(
            f"scenario must be a Scenario or a StepScenario, got {type(scenario).__name__}"
        )


def resolve(
    scenario: Any,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    walk: bool = False,
    **plan: Any,
) -> Resolved:
    """The front doors' shared checks: scenario, strategy, ``r``, plan variables, interval.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        The run.
    strategy : str, Strategy or Plan
        A registered strategy, or a plan of :func:`spare_theory.optimal_plan`
        (its strategy, ``r``, interval, plan variables, planned-restart
        trigger and micro-batches; then no other plan keyword may be given).
    r, checkpoint_interval_minutes, checkpoint_every_steps, microbatches
        As for :func:`spare_theory.time_to_train`.
    walk : bool
        For the planner: ``r=None`` is left to its walk (``Resolved.r`` is
        ``None``, the plan variables given are kept as they are, checked at
        each ``r`` tried).
    **plan
        The strategy's plan variables, as for :func:`spare_theory.time_to_train`
        (:func:`check_plan_names`).

    Returns
    -------
    Resolved

    Raises
    ------
    ValueError
        Naming the argument: not a scenario, unknown strategy, ``r`` or a
        plan variable out of range, an interval of the other scenario kind,
        a Plan together with plan keywords, a plan variable the strategy does
        not declare.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48)
    >>> resolved = resolve(sc, "elastic", min_groups=40, checkpoint_interval_minutes=30)
    >>> resolved.strategy.name, resolved.r, resolved.variables, resolved.checkpoint_interval_minutes
    ('elastic', 0, {'min_groups': 40}, 30.0)
    """
    check_scenario(scenario)
    if isinstance(strategy, Plan):
        fixed = (r, checkpoint_interval_minutes, checkpoint_every_steps, *plan.values())
        if any(value is not None for value in fixed) or microbatches != 1:
            raise ValueError(
                "strategy is a Plan, which fixes r, the interval, the plan variables and "
                "microbatches: give the Plan or those keywords, not both"
            )
        best = strategy
        strategy, r, plan = best.strategy, best.r, dict(best.variables)
        checkpoint_interval_minutes = best.checkpoint_interval_minutes
        checkpoint_every_steps = best.checkpoint_every_steps
        microbatches = best.microbatches
        if best.planned_restart_failures is not None:
            scenario = dataclasses.replace(
                scenario, planned_restart_failures=best.planned_restart_failures
            )
    chosen = lookup(strategy)
    scenario = merge_microbatches(scenario, microbatches)
    N = scenario.groups
    given = check_plan_names(chosen, plan)
    if walk and r is None:
        variables = given
    else:
        r = chosen.check_r(N, r)
        variables = chosen.check_plan(N, r, given)
    tau: float | None = None
    if isinstance(scenario, StepScenario):
        if checkpoint_interval_minutes is not None:
            raise ValueError(
                "checkpoint_interval_minutes is for a Scenario; a StepScenario takes "
                "checkpoint_every_steps (checkpoints every k steps)"
            )
        if checkpoint_every_steps is not None:
            checkpoint_every_steps = as_count(checkpoint_every_steps, "checkpoint_every_steps")
    else:
        if checkpoint_every_steps is not None:
            raise ValueError(
                "checkpoint_every_steps is for step-level scenarios; a Scenario takes "
                "checkpoint_interval_minutes"
            )
        chosen.check_microbatches(scenario.microbatches)  # the step level ignores it
        if checkpoint_interval_minutes is not None:
            tau = check_checkpoint_interval(checkpoint_interval_minutes)
    return Resolved(
        scenario=scenario,
        strategy=chosen,
        r=r,
        plan=tuple(variables.items()),
        checkpoint_interval_minutes=tau,
        checkpoint_every_steps=checkpoint_every_steps,
    )


def check_plan_names(strategy: Strategy, plan: Mapping[str, Any]) -> dict[str, Any]:
    """The plan variables given (``None`` stands for "not given"), each one ``strategy`` declares.

    The front doors' keywords beyond the shared ones are plan variables
    (:attr:`Strategy.plan_variables
    <spare_theory.strategies.base.Strategy.plan_variables>`); their values are
    the strategy's to check (:meth:`~spare_theory.strategies.base.Strategy.check_plan`).

    Raises
    ------
    ValueError
        Naming the first variable the strategy does not declare, and those it does.

    Examples
    --------
    >>> from spare_theory import strategy
    >>> check_plan_names(strategy("elastic"), {"min_groups": 30})
    {'min_groups': 30}
    >>> check_plan_names(strategy("spare"), {"min_groups": None})
    {}
    >>> check_plan_names(strategy("spare"), {"spare_delay": 3})
    Traceback (most recent call last):
    ...
    ValueError: spare_delay is not a plan variable of strategy 'spare' (it takes none)
    """
    given = {name: value for name, value in plan.items() if value is not None}
    for name in given:
        if name not in strategy.plan_variables:
            taken = ", ".join(strategy.plan_variables) or "none"
            raise ValueError(
                f"{name} is not a plan variable of strategy {strategy.name!r} (it takes {taken})"
            )
    return given


def reported_r(resolved: Resolved) -> int | None:
    """``r`` as a plan or estimate reports it: ``None`` for a strategy without one.

    Examples
    --------
    >>> from spare_theory import strategy
    >>> ckpt, rep = Resolved(None, strategy("ckpt"), 1), Resolved(None, strategy("rep"), 2)
    >>> reported_r(ckpt), reported_r(rep)
    (None, 2)
    """
    return resolved.r if resolved.strategy.r_variable is not None else None
