"""Replay a failure log: the event simulations driven by the log's own fault times.

:func:`replay_training` plays a plan on a cluster whose node slots take the
histories of a log's nodes instead of drawing failures from a law: the
hour-level event simulation for a :class:`~spare_theory.hourly.scenario.Scenario`
(:class:`~spare_theory.hourly.sources.NodeWorld` over
:class:`~spare_theory.hourly.sources.LogFaults`), the step-level one for a
:class:`~spare_theory.steps.scenario.StepScenario`
(:class:`~spare_theory.steps.sources.LogClocks`).  The cluster has
``gpus_per_group / gpus_per_node`` node slots per group; a group fails when
any of its nodes does.  The scenario's failure law, lemons and domains are
not used (the log replaces them); its costs, work, plan fields, spare pool
and, with ``repairs="scenario"``, its repair fields are.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import NoClosedFormError, as_count
from ..hourly.scenario import Scenario
from ..hourly.sources import Replay
from ..lifetimes.laws import DEFAULT_WEIBULL_SHAPE
from ..planning.resolved import Resolved
from ..steps.scenario import StepScenario
from ..training.estimate import time_to_train
from ..training.resolve import resolve
from ..training.simulate import simulate_hourly, simulate_steps_job
from .pools import fault_table

__all__ = ["log_player", "replay_training"]


def _law_free(scenario: Scenario, repairs: str) -> Scenario:
    """The scenario with the fields the log replaces at their defaults (for the checks).

    With ``repairs="log"`` the repair law is the log's too (its mean stays:
    a spare pool needs one).
    """
    if repairs == "log" and scenario.repair_minutes is not None:
        scenario = dataclasses.replace(scenario, repair_law="exponential")
    return dataclasses.replace(
        scenario,
        failure_law="exponential",
        weibull_shape=DEFAULT_WEIBULL_SHAPE,
        renewal="group",
        lemon_fraction=0.0,
        lemon_rate_factor=1.0,
        domain_size=None,
        domain_mtbf_hours=None,
    )


def replay_training(
    log: Any,
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
    gpus_per_node: int | None = None,
    mapping: str = "bootstrap",
    repairs: str = "log",
    **plan: Any,
) -> Any:
    """Simulate ``trials`` runs of a plan on a cluster that fails as the log says.

    Parameters
    ----------
    log : FailureLog
        The log (:func:`~spare_theory.traces.failure_log.load_failure_log`).
    scenario : Scenario or StepScenario
        The run: cluster, costs, work, repairs, spare pool; its failure law,
        lemons and domains are replaced by the log.
    strategy : str, Strategy or Plan
        A registered strategy, or a plan of :func:`spare_theory.optimal_plan`
        (as for :func:`spare_theory.simulate_training`).
    r : int, optional
        The strategy's ``r``, as for :func:`spare_theory.time_to_train`.
    checkpoint_interval_minutes : float, optional
        Scenario: compute minutes between checkpoints; ``None``: the model's
        best interval for the plan (:func:`spare_theory.time_to_train` on
        ``scenario``, which must then be one the model prices).
    checkpoint_every_steps : int, optional
        StepScenario: a checkpoint every ``k`` steps (required there).
    trials : int
        Runs, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Run ``i`` uses ``child_seed(seed, i)`` (its shifts included), however
        the runs are spread.
    mapping : {"bootstrap", "identity", "nodes"}
        How the cluster's node slots take the log's nodes
        (:class:`~spare_theory.hourly.sources.LogFaults`): ``"identity"``
        (as many slots as the log has nodes; each run starts at its own
        uniform time of the log and wraps around its end), ``"bootstrap"``
        (copies of the whole log, each at its own uniform shift: bursts stay
        bursts within a copy), ``"nodes"`` (single histories drawn with
        replacement, each its own shift: keeps lemons and repair times,
        breaks bursts).
    repairs : {"log", "scenario"}
        ``"log"``: a failed node is back when the log says (or, with the
        scenario's ``spare_nodes``, swapped after ``swap_minutes`` and back in
        the pool when the log says); ``"scenario"``: only the fault times
        come from the log and the scenario's repair fields decide (none:
        down until the next global restart, as in the model).
    microbatches, **plan
        As for :func:`spare_theory.time_to_train` (``plan``: the strategy's
        plan variables).
    executor, progress
        As :func:`spare_theory.simulate_training`.
    gpus_per_node : int, optional
        GPUs per node (one row of the log is a node), dividing
        ``gpus_per_group``; a group (a StepScenario's worker) has
        ``gpus_per_group / gpus_per_node`` nodes.  Default: the scenario's
        ``gpus_per_node``; given, it replaces it.

    Returns
    -------
    TrainingSamples or StepSimulation

    Notes
    -----
    Fields with no effect here:

    - ``failure_law``, ``Scenario.gpu_mtbf_hours``, ``Scenario.weibull_shape``,
      ``Scenario.renewal``, ``Scenario.lemon_fraction``,
      ``Scenario.lemon_rate_factor``, ``Scenario.domain_size``,
      ``Scenario.domain_mtbf_hours``, ``StepScenario.clock_age_seconds``: the
      log gives every failure;
    - ``Scenario.placement``: without the scenario's domains (the log replaces
      them) both placements are the same ruler;
    - ``repair_law``, ``Scenario.repair_minutes``,
      ``StepScenario.repair_seconds``: with ``repairs="log"`` (the
      default) the log says when a failed node is back;
    - ``provenance``: where the fields came from, not what they are.

    Raises
    ------
    ValueError
        Naming the argument: an unknown mapping or repairs, ``"identity"``
        with another number of node slots than the log's nodes, a
        ``gpus_per_node`` that does not divide ``gpus_per_group``.

    Examples
    --------
    >>> from spare_theory import Scenario, infinitehbd_failure_log
    >>> log = infinitehbd_failure_log()
    >>> sc = Scenario(gpus=400 * 8, gpus_per_group=64, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=100)
    >>> runs = replay_training(log, sc, "rep", r=2, checkpoint_interval_minutes=120,
    ...                        trials=3, seed=0, mapping="identity")
    >>> runs.hours.shape, bool((runs.hours > 200).all())
    ((3,), True)
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
    if isinstance(resolved.scenario, Scenario) and resolved.checkpoint_interval_minutes is None:
        try:
            tau = time_to_train(
                resolved.scenario, resolved.strategy, r=resolved.chosen_r, **resolved.variables
            ).checkpoint_interval_minutes
        except NoClosedFormError as exc:
            raise ValueError(
                f"checkpoint_interval_minutes is required here: no closed form gives one ({exc}); "
                "or replay a plan of optimal_plan, which the simulation searches"
            ) from exc
        resolved = dataclasses.replace(resolved, checkpoint_interval_minutes=float(tau))
    play = log_player(
        log,
        seed=seed,
        executor=executor,
        progress=progress,
        gpus_per_node=gpus_per_node,
        mapping=mapping,
        repairs=repairs,
    )
    return play(resolved, 0, trials, math.inf)


def log_player(
    log: Any,
    *,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    gpus_per_node: int | None = None,
    mapping: str = "bootstrap",
    repairs: str = "log",
) -> Callable[[Resolved, int, int, float], Any]:
    """The replay of ``log`` as a player of resolved plans (:func:`replay_training`'s core).

    ``play(resolved, first_trial, trials, max_hours)`` replays trials
    ``first_trial, ...`` of ``resolved`` (its interval given), trial ``i`` on the
    stream ``child_seed(seed, i)`` as :func:`replay_training`'s: what
    ``optimal_plan(..., verify=log)`` measures plans with.  Arguments as for
    :func:`replay_training`.

    Examples
    --------
    >>> from spare_theory import Scenario, infinitehbd_failure_log
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=400 * 8, gpus_per_group=64, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=100)
    >>> play = log_player(infinitehbd_failure_log(), seed=0, mapping="identity")
    >>> resolved = resolve(sc, "rep", r=2, checkpoint_interval_minutes=120)
    >>> one, two = play(resolved, 1, 1, math.inf), play(resolved, 0, 2, math.inf)
    >>> bool((one.hours == two.hours[1:]).all())
    True
    """
    replay = Replay(fault_table(log), mapping, repairs)

    def play(resolved: Resolved, first_trial: int, trials: int, max_hours: float) -> Any:
        per_group = resolved.scenario.gpus_per_group
        given = resolved.scenario.gpus_per_node if gpus_per_node is None else gpus_per_node
        per_node = as_count(given, "gpus_per_node", maximum=per_group)
        if per_group % per_node:
            raise ValueError(f"gpus_per_node={per_node} must divide gpus_per_group={per_group}")
        resolved = dataclasses.replace(
            resolved, scenario=dataclasses.replace(resolved.scenario, gpus_per_node=per_node)
        )
        if isinstance(resolved.scenario, StepScenario):
            return simulate_steps_job(
                resolved,
                trials=trials,
                seed=seed,
                executor=executor,
                progress=progress,
                replay=replay,
                first_trial=first_trial,
            )
        played = _law_free(resolved.scenario, repairs)
        return simulate_hourly(
            dataclasses.replace(resolved, scenario=played),
            trials=trials,
            seed=seed,
            executor=executor,
            progress=progress,
            replay=replay,
            first_trial=first_trial,
            max_hours=max_hours,
        )

    return play
