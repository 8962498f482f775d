"""The event simulations' front door: any registered strategy, either kind of scenario.

:func:`simulate_training` resolves its inputs exactly as the model's front
door does (:func:`spare_theory.training.resolve.resolve`: strategy, ``r``,
plan variables, interval) and plays the runs with the strategy's own
simulation rules: the hour-level simulation
(:func:`spare_theory.hourly.simulation.simulate_runs`) for a
:class:`~spare_theory.hourly.scenario.Scenario`, the step-level replay of the
published simulator (:mod:`spare_theory.steps.runs`) for a
:class:`~spare_theory.steps.scenario.StepScenario`.  The simulations import
no model module of the training layer or the hour level (``tests/test_front_doors.py``
checks): they are the independent checks of the closed forms.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from typing import Any, overload

import numpy as np

from .._validation import as_choice, as_count, as_seed_sequence
from ..hourly.repairs_sim import WipeoutTimes, simulate_wipeout_times
from ..hourly.scenario import Scenario
from ..hourly.simulation import (
    CONTROLLER_MAX_GROUPS,
    OVERHEAD_SOURCES,
    TrainingSamples,
    simulate_runs,
)
from ..hourly.sources import Replay, needs_nodes
from ..planning.resolved import Resolved
from ..steps.rep_run import REP_RECOVERIES
from ..steps.scenario import StepScenario
from ..steps.trials import StepSimulation, simulate_step_trials
from .resolve import check_wipeout_fields, resolve

__all__ = ["simulate_hourly", "simulate_steps_job", "simulate_time_to_wipeout", "simulate_training"]


@overload
def simulate_training(
    scenario: Scenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    overhead_source: str = "auto",
    pool_size: int = 64,
    rep_recovery: str = "published",
    **plan: Any,
) -> TrainingSamples: ...


@overload
def simulate_training(
    scenario: StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    overhead_source: str = "auto",
    pool_size: int = 64,
    rep_recovery: str = "published",
    **plan: Any,
) -> StepSimulation: ...


def simulate_training(
    scenario: Scenario | StepScenario,
    strategy: Any,
    *,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    overhead_source: str = "auto",
    pool_size: int = 64,
    rep_recovery: str = "published",
    **plan: Any,
) -> TrainingSamples | StepSimulation:
    """Simulate ``trials`` whole training runs event by event.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        Cluster, failure law, costs, repairs and work
        (:mod:`spare_theory.hourly.simulation` for the events).  A
        :class:`~spare_theory.steps.scenario.StepScenario` is simulated step
        by step with the published simulator's semantics
        (:mod:`spare_theory.steps.runs`: jittered stacks, failure checks
        before each stack, at the all-reduce and at checkpoints, partial
        recoveries, retried steps with reordered stacks, rollback to the last
        checkpoint after a global restart; each strategy plays its own rule,
        :meth:`Strategy.step_rule
        <spare_theory.strategies.base.Strategy.step_rule>`); it needs
        ``checkpoint_every_steps`` and takes no
        ``checkpoint_interval_minutes``, ``overhead_source`` or ``pool_size``.
    strategy : str, Strategy or Plan
        A registered strategy (:func:`spare_theory.strategy`), or a plan of
        :func:`spare_theory.optimal_plan`: the runs then play exactly that
        plan (its ``r``, interval, quorum, planned-restart trigger and
        micro-batches), and no other plan keyword may be given.
    r : int, optional
        The strategy's ``r``, as for :func:`spare_theory.time_to_train`
        (``None`` for ``"ckpt"`` and ``"elastic"``).
    checkpoint_interval_minutes : float
        Compute time between checkpoints, minutes, ``> 0`` (required for a
        Scenario).
    checkpoint_every_steps : int, optional
        StepScenario only (required there): a checkpoint every ``k >= 1``
        steps.
    microbatches : int, default 1
        Folded into the scenario's ``microbatches`` field (SPARe only): the
        throughput in each state is ``1 / load`` with the exact load kept by
        the controller (recomputed after every failure and rejoin with
        repairs).
    trials : int
        Number of independent runs, ``>= 1`` (required).
    seed : int or numpy.random.SeedSequence
        Run ``i`` uses ``child_seed(seed, i)`` and pool trajectory ``k``
        ``child_seed(seed, 2**63, k)``: results do not depend on how the
        trials are split or spread.
    overhead_source : {"auto", "controller", "pool"}
        Where SPARe's ``S*`` and wipe-outs come from (ignored by strategies
        without a pool): the exact controller in every cycle, or a pool of
        ``pool_size`` controller trajectories
        (:class:`~spare_theory.hourly.rules.PoolRules`).  ``"auto"``: the
        controller for ``N <= 20,000`` (and under any non-exponential law),
        the pool beyond.
    pool_size : int
        Trajectories in the pool, ``>= 1``.  The pool costs ``pool_size``
        controller trajectories once (about 4 s each at ``N = 75,000``,
        ``r = 17``); run-to-run spread under-represents the trajectory
        variance when it is small.
    rep_recovery : {"published", "all"}
        StepScenario only, Rep and CKPT-only.  ``"published"`` (default)
        reproduces the published binary: after a failed step its controller
        acts on the lowest failed id only (it stops reading failure flags at
        the first set one), so the other workers that failed in the step stay
        active, compute nothing, are flagged again in each later step until
        removed (their clocks expiring meanwhile are renewed but not counted)
        and count as survivors in the replica-set test; and the checkpoint
        after a step is checked and written by the leader the step started
        with.  ``"all"``: every worker that failed in the step is removed at
        once and the current leader writes the checkpoint.
    executor : concurrent.futures.Executor, optional
        Runs blocks of trials in parallel (results identical); ``None``: here.
    progress : bool
        Show a progress bar.
    **plan
        The strategy's plan variables (the quorum ``min_groups`` of
        ``"elastic"`` and ``"hot_spares"``), as for
        :func:`spare_theory.time_to_train`.

    Returns
    -------
    TrainingSamples or StepSimulation
        ``hours`` and ``restarts`` of every run, with ``mean(name)``,
        ``standard_error(name)`` and ``to_frame()``.

    Notes
    -----
    Cost grows with the number of events (failures, segments); keep
    ``work_hours`` to a few dozen cycles.  SPARe in controller mode runs the
    exact online controller on every failure of every cycle; the pool mode
    runs it for ``pool_size`` trajectories only.

    Fields with no effect here:

    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> runs = simulate_training(sc, "spare", r=4, checkpoint_interval_minutes=60.0,
    ...                          trials=8, seed=0)
    >>> runs.hours.shape, round(runs.mean_hours, 1), round(runs.standard_error_hours, 1)
    ((8,), 19.4, 0.7)
    >>> split = simulate_training(sc, "spare", r=4, checkpoint_interval_minutes=60.0,
    ...                           trials=8, seed=0, microbatches=4)
    >>> bool(split.mean_hours < runs.mean_hours)
    True

    A step-level scenario (the SPARe paper's, shortened to 100 steps):

    >>> from spare_theory import paper_scenario
    >>> sim = simulate_training(paper_scenario(50, steps=100), "rep", r=3,
    ...                         checkpoint_every_steps=5, trials=2, seed=0)
    >>> sim.hours.shape, sim.restarts.shape, bool((sim.uptime <= 1).all())
    ((2,), (2,), True)

    Elastic DP (no ``r``) with a quorum of 32 of 128 groups:

    >>> el = simulate_training(sc, "elastic", checkpoint_interval_minutes=30, min_groups=32,
    ...                        trials=2, seed=7)
    >>> el.hours.shape
    (2,)
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
    rep_recovery = as_choice(rep_recovery, "rep_recovery", REP_RECOVERIES)
    if isinstance(resolved.scenario, StepScenario):
        if overhead_source != "auto" or pool_size != 64:
            raise ValueError("overhead_source and pool_size are for a Scenario, not a StepScenario")
        return simulate_steps_job(
            resolved,
            trials=trials,
            seed=seed,
            rep_recovery=rep_recovery,
            executor=executor,
            progress=progress,
        )
    if rep_recovery != "published":
        raise ValueError("rep_recovery is for a StepScenario, not a Scenario")
    return simulate_hourly(
        resolved,
        trials=trials,
        seed=seed,
        overhead_source=overhead_source,
        pool_size=pool_size,
        executor=executor,
        progress=progress,
    )


def simulate_hourly(
    resolved: Resolved,
    *,
    trials: int,
    seed: int | np.random.SeedSequence,
    overhead_source: str = "auto",
    pool_size: int = 64,
    executor: cf.Executor | None = None,
    progress: bool = False,
    replay: Replay | None = None,
    first_trial: int = 0,
    max_hours: float = math.inf,
) -> TrainingSamples:
    """The hour-level simulation of a resolved plan: :func:`simulate_training`'s core.

    ``resolved`` comes from :func:`~spare_theory.training.resolve.resolve` (its
    interval required); ``replay`` plays a log's faults
    (:func:`spare_theory.replay_training`); ``first_trial`` and ``max_hours``
    as for :func:`~spare_theory.hourly.simulation.simulate_runs` (the
    simulation search adds runs to a sample and stops hopeless ones).
    Any combination of the scenario's fields is simulated: lemons, domains,
    node clocks and a spare pool by the node-level source
    (:class:`~spare_theory.hourly.sources.NodeWorld`), which SPARe follows
    with the exact controller (a trajectory pool assumes a uniformly random
    failure order).

    Raises
    ------
    ValueError
        Naming the argument; no interval; ``overhead_source='pool'`` with
        repairs, a non-exponential law or the node-level source.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=10, lemon_fraction=0.1,
    ...               lemon_rate_factor=5.0, repair_minutes=30.0)
    >>> resolved = resolve(sc, "rep", r=2, checkpoint_interval_minutes=60.0)
    >>> runs = simulate_hourly(resolved, trials=2, seed=0)
    >>> runs.hours.shape, bool((runs.repairs > 0).all())
    ((2,), True)
    """
    scenario, chosen, r, variables = (
        resolved.scenario,
        resolved.strategy,
        resolved.chosen_r,
        resolved.variables,
    )
    tau = resolved.checkpoint_interval_minutes
    if tau is None:
        raise ValueError("checkpoint_interval_minutes is required for a Scenario")
    N = scenario.groups
    m = scenario.microbatches
    trials = as_count(trials, "trials")
    root = as_seed_sequence(seed)
    overhead_source = as_choice(overhead_source, "overhead_source", OVERHEAD_SOURCES)
    pool_size = as_count(pool_size, "pool_size")
    nodes = replay is not None or needs_nodes(scenario)
    repairs = scenario.repair_minutes is not None or (
        replay is not None and replay.repairs == "log"
    )
    if overhead_source == "auto":
        plain = N <= CONTROLLER_MAX_GROUPS or not scenario.exponential or nodes
        overhead_source = "controller" if plain else "pool"
    if overhead_source == "pool":
        reason = (
            "a failure_law other than 'exponential'"
            if not scenario.exponential
            else "lemons, domains, a spare pool or a replayed log"
            if nodes
            else None
        )
        if reason is not None:
            raise ValueError(
                "overhead_source='pool' assumes a uniformly random failure order, which "
                f"{reason} does not give; use 'controller'"
            )
        if repairs:
            raise ValueError(
                "overhead_source='pool' cannot follow repairs (a trajectory has no rejoins); "
                "use overhead_source='controller'"
            )
    layout = dict(placement=scenario.placement, domain_size=scenario.domain_size)
    pool = (
        chosen.trajectory_pool(N, r, size=pool_size, seed=root, microbatches=m, **layout)
        if overhead_source == "pool"
        else None
    )
    rules = chosen.failure_rules(
        N, r, microbatches=m, repairs=repairs, pool=pool, **layout, **variables
    )
    return simulate_runs(
        scenario,
        rules,
        checkpoint_interval_minutes=tau,
        trials=trials,
        seed=root,
        executor=executor,
        progress=progress,
        exact_batch=chosen.batch_is_exact(N, r, variables),
        replay=replay,
        first_trial=first_trial,
        max_hours=max_hours,
    )


def simulate_time_to_wipeout(
    scenario: Scenario,
    strategy: Any,
    *,
    r: int | None = None,
    trials: int,
    seed: int | np.random.SeedSequence,
    max_events: int = 10**6,
    executor: cf.Executor | None = None,
    progress: bool = False,
    **plan: Any,
) -> WipeoutTimes:
    """Simulate the time from a healthy start to the first wipe-out, with repairs.

    One trial starts with all ``N`` groups up and plays failures and repairs
    until some *unit* of the strategy has its members down at once
    (:meth:`Strategy.wipeout_units <spare_theory.strategies.base.Strategy.wipeout_units>`:
    every group for CKPT-only, a replica set for Rep, a shard type's ``r``
    hosts for SPARe, ``N - q + 1`` of all groups for elastic DP and hot
    spares, whose repaired groups are out ``heal_minutes`` more, as in the
    training simulation); see :mod:`spare_theory.hourly.repairs_sim`.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, repair law (``repair_minutes=None``: failed
        groups never come back).
    strategy : str or Strategy
        A registered strategy.
    r : int, optional
        The strategy's ``r`` (as for :func:`spare_theory.time_to_train`).
    trials : int
        Independent trials, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` uses ``child_seed(seed, i)``.
    max_events : int
        Cap on the events of one trial (a guard on the cost of very rare
        wipe-outs).
    executor : concurrent.futures.Executor, optional
        Runs blocks of trials in parallel (results identical); ``None``: here.
    progress : bool
        Show a progress bar.
    **plan
        The strategy's plan variables (as for :func:`spare_theory.time_to_train`):
        the quorum ``min_groups`` of the elastic strategies.

    Returns
    -------
    WipeoutTimes

    Raises
    ------
    ValueError
        Naming the argument; ``max_events`` when a trial needs more events;
        naming each field it does not play
        (:data:`~spare_theory.training.resolve.WIPEOUT_FIELDS`: a
        non-exponential law, failure domains, lemons, a spare pool, planned
        restarts).

    Notes
    -----
    Fields with no effect here:

    - ``restart_minutes``, ``checkpoint_minutes``, ``work_hours``, ``rejoin_minutes``,
      ``microbatches``, ``reconfigure_minutes``, ``provenance``: the run's costs,
      stalls and records; failures, repairs and heals alone decide a wipe-out;
    - ``failure_classes``: how long a failure goes unnoticed, not when it
      happens.

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100,
    ...               repair_minutes=60)
    >>> times = simulate_time_to_wipeout(sc, "spare", r=3, trials=200, seed=1)
    >>> round(times.mean_hours, -1), round(times.standard_error_hours, -1)
    (100.0, 10.0)
    """
    resolved = resolve(scenario, strategy, r=r, **plan)
    if not isinstance(resolved.scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    check_wipeout_fields(resolved.scenario)
    sc, chosen, r = resolved.scenario, resolved.strategy, resolved.chosen_r
    where = {"placement": sc.placement, "domain_size": sc.domain_size}
    units, size = chosen.wipeout_units(sc.groups, r, **where, **resolved.variables)
    # A job that reconfigures takes a repaired group back after its heal, as the training
    # simulation does (its rule says so; making one draws nothing from the trials' streams).
    rules = chosen.failure_rules(
        sc.groups, r, microbatches=1, repairs=True, pool=None, **where, **resolved.variables
    )
    heals = sc.repairs and rules(np.random.default_rng(0)).reconfigures
    return simulate_wipeout_times(
        sc,
        units,
        size,
        trials,
        seed=seed,
        max_events=max_events,
        executor=executor,
        progress=progress,
        heal_hours=sc.heal_minutes / 60 if heals else 0.0,
    )


def simulate_steps_job(
    resolved: Resolved,
    *,
    trials: int,
    seed: int | np.random.SeedSequence,
    rep_recovery: str = "published",
    executor: cf.Executor | None = None,
    progress: bool = False,
    replay: Replay | None = None,
    first_trial: int = 0,
    max_hours: float = math.inf,
) -> StepSimulation:
    """The step-level simulation of a resolved plan: :func:`simulate_training`'s core.

    Trial ``i`` uses the stream ``child_seed(seed, i)`` from ``first_trial`` on
    (:func:`~spare_theory.steps.trials.simulate_step_trials`); ``replay`` plays a
    log's faults (:func:`spare_theory.replay_training`); a run unfinished when a
    global restart ends after ``max_hours`` stops there with infinite hours.

    Raises
    ------
    ValueError
        Naming the argument; no ``checkpoint_every_steps``.

    Examples
    --------
    >>> from scipy import stats
    >>> from spare_theory import StepScenario
    >>> sc = StepScenario(groups=8, steps=50, allreduce_seconds=1.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> resolved = resolve(sc, "spare", r=2, checkpoint_every_steps=10)
    >>> sim = simulate_steps_job(resolved, trials=2, seed=1)  # no failure: the slowest of 8 stacks
    >>> int(sim.failures.sum()), round(sim.mean("total_over_T0"), 2)
    (0, 1.16)
    """
    if resolved.checkpoint_every_steps is None:
        raise ValueError("checkpoint_every_steps is required for a StepScenario")
    scenario, chosen, r, variables = (
        resolved.scenario,
        resolved.strategy,
        resolved.chosen_r,
        resolved.variables,
    )
    return simulate_step_trials(
        scenario,
        chosen.step_rule(scenario, r, rep_recovery=rep_recovery, **variables),
        strategy=chosen.name,
        r=r,
        checkpoint_every_steps=resolved.checkpoint_every_steps,
        trials=trials,
        seed=seed,
        executor=executor,
        progress=progress,
        exact_batch=chosen.batch_is_exact(scenario.groups, r, variables),
        replay=replay,
        first_trial=first_trial,
        max_hours=max_hours,
    )
