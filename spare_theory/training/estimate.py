"""Expected time to train under CKPT-only, Rep+CKPT and SPARe+CKPT: the front door.

:func:`time_to_train` checks its arguments and hands them to the parts of
the model, one module each (derivation in ``docs/theory.md`` section 4):

* :mod:`spare_theory.cycles.laws`: the cycle law of each strategy (how long a
  restart cycle survives, its throughput in each state), one class per
  strategy;
* :mod:`spare_theory.hourly.renewal`: the renewal-reward estimate
  ``hours = W E[X] / E[P]`` of any cycle law;
* :mod:`spare_theory.training.optimize`: the searches (the best checkpoint interval
  when none is given; the best ``r`` in :func:`~spare_theory.training.optimize.optimal_plan`).

The names defined in those modules and long imported from here
(:class:`TrainingEstimate`, :data:`STRATEGIES`, :data:`MAX_SPARE_GROUPS`,
:func:`rep_survival_log`, :func:`rep_throughput`) are re-exported.
"""

from __future__ import annotations

from typing import Any, overload

from ..cycles.laws import MAX_SPARE_GROUPS, rep_survival_log, rep_throughput
from ..hourly.model import check_split, scenario_cycle
from ..hourly.renewal import TrainingEstimate, evaluate
from ..hourly.repairs import attach_repairs
from ..hourly.scenario import STRATEGIES, Scenario, check_checkpoint_interval, check_plan
from ..steps.estimate import StepEstimate
from ..steps.model import step_time_to_train
from ..steps.scenario import StepScenario, merge_microbatches
from .optimize import optimal_interval
from .step_optimize import optimal_checkpoint_steps

__all__ = [
    "MAX_SPARE_GROUPS",
    "STRATEGIES",
    "TrainingEstimate",
    "rep_survival_log",
    "rep_throughput",
    "time_to_train",
]


@overload
def time_to_train(
    scenario: Scenario,
    strategy: str,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> TrainingEstimate: ...


@overload
def time_to_train(
    scenario: StepScenario,
    strategy: str,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> StepEstimate: ...


def time_to_train(
    scenario: Scenario | StepScenario,
    strategy: str,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> TrainingEstimate | StepEstimate:
    """Expected wall-clock time of a training run and its breakdown.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        Cluster, failure rate, costs and work.  A
        :class:`~spare_theory.steps.scenario.StepScenario` (the published
        simulator's step-level workload) is priced by
        :func:`spare_theory.steps.model.step_time_to_train`.
    strategy : {"ckpt", "rep", "spare"}
        CKPT-only (every failure is a global restart), Rep+CKPT (``r``
        replicas of every shard on disjoint groups; a restart when a whole
        replica set is dead) or SPARe+CKPT (stacked placement on a modular
        Golomb ruler; a restart at wipe-out).
    r : int, optional
        Redundancy: required for ``"rep"`` (``1 <= r <= N``) and ``"spare"``
        (a modular ruler with ``r`` marks must exist at ``N``); ``None`` or
        ``1`` for ``"ckpt"``.
    checkpoint_interval_minutes : float, optional
        Compute time ``tau`` between checkpoints, minutes, ``> 0``; ``None``
        uses the interval that minimises the expected hours
        (:func:`spare_theory.training.optimize.optimal_interval`).
        Must be ``None`` for a StepScenario.
    checkpoint_every_steps : int, optional
        For step-level scenarios only: a checkpoint every ``k >= 1`` steps;
        ``None`` uses the ``k`` that minimises the expected time
        (:func:`spare_theory.training.step_optimize.optimal_checkpoint_steps`).  Must
        be ``None`` for a :class:`Scenario`.
    microbatches : int, default 1
        SPARe only (hour-level scenarios without repairs): every shard is cut
        into ``m`` micro-batches that any surviving host of its type may
        compute, so state ``f`` runs at ``1 / E[load_f]`` with ``E[load_f] =
        ceil(m N / (N - f)) / m``
        (:class:`spare_theory.hourly.split.SpareSplit`); ``1`` is
        published SPARe (whole shards, ``E[S*_f]``).  A StepScenario states
        its own ``microbatches``: the keyword is used when that field is 1,
        an equal value agrees, another raises ``ValueError``
        (:func:`spare_theory.steps.scenario.merge_microbatches`); Rep and
        CKPT-only ignore it there.

    Returns
    -------
    TrainingEstimate or StepEstimate
        ``hours = W E[X] / E[P]`` (see :mod:`spare_theory.hourly.renewal`), the
        breakdown adding up to ``hours``, ``availability = W / hours``, the
        ``uptime`` and the expected number of restarts ``W / E[P]``.  For a
        StepScenario a :class:`~spare_theory.steps.estimate.StepEstimate` with
        ``hours``, ``total_over_T0``, ``uptime`` (the paper's availability),
        ``restarts`` and ``checkpoint_every_steps``.

    Raises
    ------
    ValueError
        Naming the argument: not a Scenario, unknown strategy, missing or out
        of range ``r``, no modular ruler for ``(N, r)``, ``tau <= 0``; for
        SPARe with ``r > 1``, ``N = gpus // gpus_per_group`` above
        :data:`MAX_SPARE_GROUPS` (``2**25``); ``microbatches`` not 1 for
        another strategy or a scenario with repairs (a StepScenario: in
        conflict with its own field).

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
    """
    if not isinstance(scenario, Scenario):
        if isinstance(scenario, StepScenario):
            scenario = merge_microbatches(scenario, microbatches)
        elif microbatches != 1:
            raise ValueError(
                "microbatches must be 1 for a scenario other than Scenario/StepScenario"
            )
        return _other_scenario(
            scenario, strategy, r, checkpoint_every_steps, checkpoint_interval_minutes
        )
    if checkpoint_every_steps is not None:
        raise ValueError(
            "checkpoint_every_steps is for step-level scenarios; a Scenario takes "
            "checkpoint_interval_minutes"
        )
    strategy, r = check_plan(scenario, strategy, r)
    m = check_split(scenario, strategy, microbatches)
    if checkpoint_interval_minutes is None:
        return optimal_interval(scenario, strategy, r, microbatches=m)
    tau = check_checkpoint_interval(checkpoint_interval_minutes)
    law = scenario_cycle(scenario, strategy, r, microbatches=m)  # the one place picking laws
    return attach_repairs(scenario, law, evaluate(scenario, law, tau, strategy=strategy))


def _other_scenario(
    scenario: Any,
    strategy: str,
    r: int | None,
    checkpoint_every_steps: int | None,
    checkpoint_interval_minutes: float | None,
) -> Any:
    """The dispatch point for scenario types other than :class:`Scenario`.

    A ``StepScenario`` (checkpoints every ``k`` steps, restart windows, any
    lifetime law) goes to the step-level model: its estimate for
    ``(strategy, r, checkpoint_every_steps)``, at the best ``k`` when that is
    ``None``.
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(
            f"scenario must be a Scenario or a StepScenario, got {type(scenario).__name__}"
        )
    if checkpoint_interval_minutes is not None:
        raise ValueError(
            "checkpoint_interval_minutes is for a Scenario; a StepScenario takes "
            "checkpoint_every_steps (checkpoints every k steps)"
        )
    if checkpoint_every_steps is None:
        return optimal_checkpoint_steps(scenario, strategy, r)
    if r is None and strategy == "ckpt":
        r = 1
    if r is None:
        raise ValueError(f"r is required for strategy {strategy!r}")
    return step_time_to_train(
        scenario, strategy, r=r, checkpoint_every_steps=checkpoint_every_steps
    )
