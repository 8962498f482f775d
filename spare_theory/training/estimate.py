"""Expected time to train, for any registered strategy, on either kind of scenario.

:func:`time_to_train` is the front door of the closed-form models: it
resolves the strategy (:func:`spare_theory.strategy`), checks the plan, and
prices it with the hour-level renewal-reward model
(:mod:`spare_theory.hourly.model`) for a :class:`~spare_theory.hourly.scenario.Scenario`,
or the step-level closed form of the published simulator
(:mod:`spare_theory.steps`) for a :class:`~spare_theory.steps.scenario.StepScenario`.
A missing checkpoint interval is optimised by the one search of the planning
core (:mod:`spare_theory.planning`).
"""

from __future__ import annotations

from typing import Any, overload

from .._validation import merge_microbatches
from ..hourly.compose import priced_scenario
from ..hourly.model import evaluate_law, scenario_cycle, wipeout_mean_hours
from ..hourly.renewal import TrainingEstimate
from ..hourly.scenario import Scenario, check_checkpoint_interval
from ..steps.estimate import StepEstimate
from ..steps.scenario import StepScenario
from ..strategies.registry import strategy as lookup
from .optimize import check_scenario, optimal_checkpoint_steps, step_estimate

__all__ = ["mean_time_to_wipeout", "step_time_to_train", "time_to_train"]


@overload
def time_to_train(
    scenario: Scenario,
    strategy: Any,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> TrainingEstimate: ...


@overload
def time_to_train(
    scenario: StepScenario,
    strategy: Any,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    **plan: Any,
) -> StepEstimate: ...


def time_to_train(
    scenario: Scenario | StepScenario,
    strategy: Any,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
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
    r : int, optional
        Redundancy: required for ``"rep"`` (``1 <= r <= N``) and ``"spare"``
        (a modular ruler with ``r`` marks must exist at ``N``); ``None`` or
        ``1`` for ``"ckpt"``.
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
        The strategy's plan variables beyond ``r`` and the interval
        (:attr:`Strategy.plan_variables
        <spare_theory.strategies.base.Strategy.plan_variables>`):
        ``min_groups`` (the quorum ``q``) for ``"elastic"`` (default
        ``ceil(N/2)``) and ``"hot_spares"`` (default ``N - r``).  A strategy
        without them refuses them.

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
        modelled with; a plan variable the strategy does not take or out of
        range (``min_groups`` above ``N`` or above the active groups).

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario.published_600k(4096)  # N = 146 groups, 60 min restarts
    >>> est = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60)
    >>> round(est.hours, 1), round(est.restarts, 2), round(est.uptime, 4)
    (1929.2, 212.43, 0.8899)
    >>> round(time_to_train(sc, "ckpt").checkpoint_interval_minutes, 2)
    4.26

    The SPARe paper's simulated scenario, Rep at ``r = 3`` with a checkpoint
    every 6 steps (the published simulator: 6.02 x T0):

    >>> from spare_theory import paper_scenario
    >>> step = time_to_train(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6)
    >>> round(step.total_over_T0, 2), round(step.uptime, 3), round(step.restarts)
    (6.1, 0.61, 212)

    SPARe with each failed group's shard split into 16 micro-batches:

    >>> split = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60, microbatches=16)
    >>> round(split.hours / est.hours, 3) < 1
    True

    Elastic DP with a quorum of 100 of the 146 groups (3 min stalls, the
    default ``reconfigure_minutes``), and 8 hot spares:

    >>> el = time_to_train(sc, "elastic", checkpoint_interval_minutes=60, min_groups=100)
    >>> round(el.hours), round(el.samples_skipped, 3), el.exact_batch
    (2263, 0.188, False)
    >>> hot = time_to_train(sc, "hot_spares", r=8, checkpoint_interval_minutes=60)
    >>> hot.samples_skipped, hot.exact_batch
    (0.0, True)
    """
    chosen = lookup(strategy)
    check_scenario(scenario)
    scenario = merge_microbatches(scenario, microbatches)
    if isinstance(scenario, StepScenario):
        if checkpoint_interval_minutes is not None:
            raise ValueError(
                "checkpoint_interval_minutes is for a Scenario; a StepScenario takes "
                "checkpoint_every_steps (checkpoints every k steps)"
            )
        if checkpoint_every_steps is None:
            return optimal_checkpoint_steps(scenario, chosen, r, **plan)
        r = chosen.check_r(scenario.groups, r)
        variables = chosen.check_plan(scenario.groups, r, plan)
        estimate = step_estimate(scenario, chosen, r, checkpoint_every_steps, variables)
        return chosen.with_caveats(estimate, scenario)
    if checkpoint_every_steps is not None:
        raise ValueError(
            "checkpoint_every_steps is for step-level scenarios; a Scenario takes "
            "checkpoint_interval_minutes"
        )
    r = chosen.check_r(scenario.groups, r)
    variables = chosen.check_plan(scenario.groups, r, plan)
    tau = (
        None
        if checkpoint_interval_minutes is None
        else check_checkpoint_interval(checkpoint_interval_minutes)
    )
    law = scenario_cycle(scenario, chosen, r, variables)  # the one place picking laws
    return chosen.with_caveats(evaluate_law(scenario, law, tau, chosen.name), scenario)


def mean_time_to_wipeout(
    scenario: Scenario, strategy: Any, r: int | None = None, **plan: Any
) -> float:
    """Expected hours from a healthy start to the first wipe-out (with or without repairs).

    Without repairs (``repair_minutes=None``) the strategy's own law: CKPT-only
    ``1 / (N lambda)``; SPARe ``sum_f P(T > f) / ((N - f) lambda)`` with the
    sharp wipe-out law (state ``f`` lasts ``1/((N - f) lambda)`` on average);
    Rep ``int prod_sets (1 - p^{|set|}) du / lambda``.  With repairs
    ``int_0^inf Q(u) du / lambda`` with ``Q`` of the repair cycle
    (:class:`~spare_theory.cycles.repairs.RepairCycle`): exact per set for
    Rep, the sharp law corrected by the per-type and pair chains for SPARe.
    Fast repairs give about ``1 / (lambda N r pi^{r-1})`` (``r`` overlapping
    outages), slow ones today's law.  A strategy with its own law on the
    scenario (:meth:`Strategy.hourly_law
    <spare_theory.strategies.base.Strategy.hourly_law>`) gives its own mean:
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
        The strategy's plan variables (``min_groups``).

    Returns
    -------
    float
        Hours.

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100)
    >>> round(mean_time_to_wipeout(sc, "spare", 3), 2)
    6.78
    >>> fast = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...                 restart_minutes=60, checkpoint_minutes=5, work_hours=100,
    ...                 repair_minutes=10)
    >>> round(mean_time_to_wipeout(fast, "spare", 3))
    2911
    >>> round(mean_time_to_wipeout(sc, "elastic", min_groups=32), 2)  # 33 of 64 groups down
    17.73
    """
    chosen = lookup(strategy)
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    r = chosen.check_r(scenario.groups, r)
    scenario = priced_scenario(scenario)
    own = chosen.hourly_law(scenario, r, **chosen.check_plan(scenario.groups, r, plan))
    if own is not None:
        # The own law carries its repair rate (the elastic one: repair plus heal).
        mean = own.mean_time_to_wipeout(getattr(own, "mu", 0.0))
        if mean is not None:
            return mean / scenario.group_failure_rate_per_hour
        return wipeout_mean_hours(scenario, own)
    return wipeout_mean_hours(scenario, chosen.cycle_law(scenario.groups, r))


def step_time_to_train(
    scenario: StepScenario, strategy: Any, *, r: int | None, checkpoint_every_steps: int
) -> StepEstimate:
    """Expected wall time, uptime and restarts of the published step-level simulator.

    Renewal reward over restart cycles (:mod:`spare_theory.steps.estimate` and
    ``docs/step_model.md``): ``restarts = n / E[P]`` and
    ``seconds = restarts (E[D] + E[C])``, with ``E[D]`` the restart
    (:func:`~spare_theory.steps.restarts.expected_restart_seconds`), ``E[C]``
    the computation until the wipe-out is detected and ``E[P]`` the net
    steps kept per cycle; the cycle tables are the strategy's
    (:meth:`Strategy.step_cycle <spare_theory.strategies.base.Strategy.step_cycle>`).
    ``time_to_train(scenario, strategy, r, checkpoint_every_steps=k)`` is the
    same.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : str or Strategy
        A registered strategy: ``"ckpt"`` (every failure a global restart),
        ``"rep"`` (``r`` times the compute per worker, consecutive replica
        sets, a restart when a set is empty), ``"spare"`` (ruler placement,
        ``S*`` stacks, a restart at wipe-out), or another.
    r : int or None
        Redundancy, ``None`` or ``1`` for ``"ckpt"``.
    checkpoint_every_steps : int
        ``k >= 1``: a checkpoint after every ``k`` steps and after the last.

    Returns
    -------
    StepEstimate

    Raises
    ------
    ValueError
        Naming the argument (unknown strategy, ``r`` out of range or without a
        ruler, ``k < 1``, a plan the model does not cover).

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> est = step_time_to_train(paper_scenario(1000), "spare", r=9, checkpoint_every_steps=30)
    >>> print(round(est.total_over_T0, 2), round(est.uptime, 3), round(est.restarts, 1))
    2.39 0.961 9.8
    """
    chosen = lookup(strategy)
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    return step_estimate(
        scenario, chosen, chosen.check_r(scenario.groups, r), checkpoint_every_steps
    )
