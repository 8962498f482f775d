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
from typing import Any

import numpy as np

from .._validation import as_count
from ..hourly.scenario import Scenario
from ..hourly.sources import Replay
from ..steps.scenario import StepScenario
from ..training.estimate import time_to_train
from ..training.resolve import resolve
from ..training.simulate import simulate_hourly, simulate_steps_job
from .pools import fault_table

__all__ = ["replay_training"]


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
    min_groups: int | None = None,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    gpus_per_node: int = 8,
    mapping: str = "bootstrap",
    repairs: str = "log",
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
    microbatches, min_groups
        As for :func:`spare_theory.time_to_train`.
    executor, progress
        As :func:`spare_theory.simulate_training`.
    gpus_per_node : int
        GPUs per node (one row of the log is a node), dividing
        ``gpus_per_group`` (a Scenario); a StepScenario's workers have
        ``gpus_per_group / gpus_per_node`` nodes.

    Returns
    -------
    TrainingSamples or StepSimulation

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
    replay = Replay(fault_table(log), mapping, repairs)
    job = resolve(
        scenario,
        strategy,
        r=r,
        checkpoint_interval_minutes=checkpoint_interval_minutes,
        checkpoint_every_steps=checkpoint_every_steps,
        microbatches=microbatches,
        min_groups=min_groups,
    )
    if isinstance(job.scenario, StepScenario):
        return simulate_steps_job(
            job, trials=trials, seed=seed, executor=executor, progress=progress, replay=replay
        )
    played = job.scenario
    per_node = as_count(gpus_per_node, "gpus_per_node", maximum=played.gpus_per_group)
    if played.gpus_per_group % per_node:
        raise ValueError(
            f"gpus_per_node={per_node} must divide gpus_per_group={played.gpus_per_group}"
        )
    if job.checkpoint_interval_minutes is None:
        tau = time_to_train(
            played, job.strategy, r=job.chosen_r, **job.variables
        ).checkpoint_interval_minutes
        job = dataclasses.replace(job, checkpoint_interval_minutes=float(tau))
    played = _law_free(dataclasses.replace(played, gpus_per_node=per_node), repairs)
    return simulate_hourly(
        dataclasses.replace(job, scenario=played),
        trials=trials,
        seed=seed,
        executor=executor,
        progress=progress,
        replay=replay,
    )
