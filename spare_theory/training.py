"""Expected time to train under CKPT-only, Rep+CKPT and SPARe+CKPT: the front door.

:func:`time_to_train` checks its arguments and hands them to the parts of
the model, one module each (derivation in ``docs/theory.md`` section 4):

* :mod:`spare_theory.strategies`: the cycle law of each strategy (how long a
  restart cycle survives, its throughput in each state), one class per
  strategy;
* :mod:`spare_theory.renewal`: the renewal-reward estimate
  ``hours = W E[X] / E[P]`` of any cycle law;
* :mod:`spare_theory.optimize`: the searches (the best checkpoint interval
  when none is given; the best ``r`` in :func:`~spare_theory.optimize.optimal_plan`).

The names defined in those modules and long imported from here
(:class:`TrainingEstimate`, :data:`STRATEGIES`, :data:`MAX_SPARE_GROUPS`,
:func:`rep_survival_log`, :func:`rep_throughput`) are re-exported.
"""

from __future__ import annotations

from typing import Any

from .optimize import optimal_interval
from .renewal import TrainingEstimate, evaluate
from .scenario import STRATEGIES, Scenario, check_checkpoint_interval, check_plan
from .strategies import MAX_SPARE_GROUPS, cycle_law, rep_survival_log, rep_throughput

__all__ = [
    "MAX_SPARE_GROUPS",
    "STRATEGIES",
    "TrainingEstimate",
    "rep_survival_log",
    "rep_throughput",
    "time_to_train",
]


def time_to_train(
    scenario: Scenario | Any,
    strategy: str,
    r: int | None = None,
    checkpoint_interval_minutes: float | None = None,
    *,
    checkpoint_every_steps: int | None = None,
) -> TrainingEstimate:
    """Expected wall-clock time of a training run and its breakdown.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, costs and work.
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
        (:func:`spare_theory.optimize.optimal_interval`).
    checkpoint_every_steps : int, optional
        For step-level scenarios only (checkpoints every ``k`` steps); must
        be ``None`` for a :class:`Scenario`.

    Returns
    -------
    TrainingEstimate
        ``hours = W E[X] / E[P]`` (see :mod:`spare_theory.renewal`), the
        breakdown adding up to ``hours``, ``availability = W / hours``, the
        ``uptime`` and the expected number of restarts ``W / E[P]``.

    Raises
    ------
    ValueError
        Naming the argument: not a Scenario, unknown strategy, missing or out
        of range ``r``, no modular ruler for ``(N, r)``, ``tau <= 0``; for
        SPARe with ``r > 1``, ``N = gpus // gpus_per_group`` above
        :data:`MAX_SPARE_GROUPS` (``2**25``).

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario.published_600k(4096)  # N = 146 groups, 60 min restarts
    >>> est = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60)
    >>> round(est.hours, 1), round(est.restarts, 2), round(est.uptime, 4)
    (1929.2, 212.43, 0.8899)
    >>> round(time_to_train(sc, "ckpt").checkpoint_interval_minutes, 2)
    4.26
    """
    if not isinstance(scenario, Scenario):
        return _other_scenario(scenario, strategy, r, checkpoint_every_steps)
    if checkpoint_every_steps is not None:
        raise ValueError(
            "checkpoint_every_steps is for step-level scenarios; a Scenario takes "
            "checkpoint_interval_minutes"
        )
    strategy, r = check_plan(scenario, strategy, r)
    if checkpoint_interval_minutes is None:
        return optimal_interval(scenario, strategy, r)
    tau = check_checkpoint_interval(checkpoint_interval_minutes)
    return evaluate(scenario, cycle_law(strategy, scenario.groups, r), tau, strategy=strategy)


def _other_scenario(
    scenario: Any, strategy: str, r: int | None, checkpoint_every_steps: int | None
) -> TrainingEstimate:
    """The dispatch point for scenario types other than :class:`Scenario`.

    The step-level model (a ``StepScenario``: checkpoints every ``k`` steps,
    restart windows, Weibull lifetimes) hooks in here: its estimate for
    ``(strategy, r, checkpoint_every_steps)``, the best ``k`` when that is
    ``None``.
    """
    raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
