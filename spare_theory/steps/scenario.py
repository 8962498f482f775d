"""A step-level training scenario: the SPARe paper's simulated workload.

The SPARe paper's time-to-train figures come from the authors' discrete-event
simulator (public repository tsinghua-fib-lab/AutoSOTA, folder
``ICML-2026/paper-3612-SPARe/best_code``, BSD).  Its workload is counted in
synchronous training steps rather than hours:

- ``N`` workers, one per data-parallel group, train ``steps`` steps.  One
  stack (one shard of the global batch) costs ``stack_seconds`` (64 s: 2.56e16
  FLOP at 400 TFLOP/s), times a per-stack jitter ``max(0.1, Normal(1, cv))``;
  a step ends when the slowest worker has finished its stacks, then an
  all-reduce of ``allreduce_seconds`` (``N / 100`` s in the paper).
- Every group has its own lifetime law (``failure_law``, seconds); a failed
  group is replaced by a fresh lifetime drawn when the failure is noticed.
- A checkpoint (``checkpoint_seconds``, 58.8 s: 2e13 bytes at 340 GB/s) is
  written every ``k`` steps; a global restart costs ``restart_seconds`` and
  resumes at the last checkpointed step.

``T0 = steps * (stack_seconds + allreduce_seconds)`` is the jitter-free,
failure-free time of the run without redundancy; the paper reports the time
to train over ``T0``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .._caching import value_key
from .._validation import as_choice, as_count, as_real
from ..lifetimes.laws import lifetime_law, validate_lifetime_law
from ..lifetimes.outages import REPAIR_LAWS, check_repair_fields
from ..lifetimes.spares import check_pool_fields

__all__ = [
    "RESTART_SEMANTICS",
    "STEP_REPAIR_LAWS",
    "StepScenario",
    "check_step_repairs",
    "paper_scenario",
]

#: Accepted values of :attr:`StepScenario.restart_semantics`.
RESTART_SEMANTICS = ("window", "fixed")

#: Named repair-time laws of a StepScenario (a frozen scipy.stats law in seconds is also accepted).
STEP_REPAIR_LAWS = REPAIR_LAWS


@dataclass(frozen=True, kw_only=True, eq=False)
class StepScenario:
    """A synchronous training run of ``steps`` steps on ``groups`` workers.

    Parameters
    ----------
    groups : int
        ``N``, workers (data-parallel groups), ``>= 1``.
    steps : int
        Training steps to complete, ``>= 1``.
    stack_seconds : float
        Jitter-free compute time of one stack, seconds, ``> 0`` (64.0).
    allreduce_seconds : float
        All-reduce time at the end of a step, seconds, ``>= 0``.
    stack_jitter_cv : float
        Each stack takes ``stack_seconds * max(0.1, Normal(1, cv))``;
        ``cv >= 0`` (0.05).
    checkpoint_seconds : float
        Time to write one checkpoint while every worker waits, seconds,
        ``>= 0`` (58.8).
    restart_seconds : float
        Cost ``R`` of a global restart, seconds, ``>= 0`` (3600.0).
    restart_semantics : {"window", "fixed"}
        ``"window"`` (the published simulator): every worker must complete an
        uninterrupted window of ``R`` seconds; a worker failing during its
        window starts its own window again (its failure is counted) and the
        restart ends when the last worker completes its window, so it lasts
        longer than ``R`` on average.  ``"fixed"``: the restart takes exactly
        ``R``; failures during it are not counted (the workers' failure clocks
        still run and every worker is healthy afterwards).
    failure_law : frozen scipy.stats distribution
        Lifetime law of one group, seconds (see
        :func:`spare_theory.lifetime_law`).
    partial_recovery_seconds : float
        Cost of a partial recovery (the surviving stacks still cover every
        shard type), seconds, ``>= 0`` (0.1).
    allreduce_failure_scale : float
        Factor on the all-reduce time of an attempt in which a failure was
        noticed, ``>= 0`` (0.5).
    repair_seconds : float, optional
        Mean time from the moment a group's failure is noticed until a
        replacement is ready to rejoin the running job without a global
        restart, seconds, ``> 0``.  ``None`` (default): a failed group stays
        out until the next global restart (the published simulator).  A
        ready group rejoins at the next step boundary, takes back its place
        in the placement (SPARe re-optimises ``S*``) and starts a fresh
        lifetime.
    repair_law : str or frozen scipy.stats distribution
        Law of the repair time: ``"exponential"`` (default) or ``"fixed"``
        with mean ``repair_seconds``, or a frozen ``scipy.stats``
        distribution in seconds (then ``repair_seconds`` defaults to its mean).
    rejoin_seconds : float
        Stall of every worker while one rejoining group loads the model
        state, seconds, ``>= 0`` (default 0); each rejoining group stalls the
        job once.  Only with repairs.
    microbatches : int
        ``m >= 1`` micro-batches (pieces) per shard (default 1).  SPARe only:
        a failed worker's shard is cut into ``m`` pieces that any surviving
        worker holding its type may compute, so a step costs the largest
        worker load ``L`` (pieces / ``m``, shard units) instead of ``S*``
        whole stacks (:func:`spare_theory.stacking.stacks.min_load`).  ``1`` is the
        published whole-shard scheme, with identical numbers.  Rep and
        CKPT-only do not split: for them it changes nothing.
    reconfigure_seconds : float
        Stall of an elastic job (``"elastic"``, ``"hot_spares"``) at each
        membership change, seconds, ``>= 0`` (default 180, the hour-level
        :attr:`Scenario.reconfigure_minutes <spare_theory.hourly.scenario.Scenario>`
        default of 3 min: Meta's stall per failure recovery for
        fault-tolerant HSDP at O(100K) GPUs, arXiv 2602.00277).  The
        published strategies do not use it.
    heal_seconds : float
        Live recovery of a repaired group from a peer before it rejoins an
        elastic job, seconds, ``>= 0``, added to its repair time (default 60,
        the hour-level ``heal_minutes`` default: torchft bounds the transfer
        by ``Manager(timeout=60 s)``).  Elastic strategies with repairs only.
    gpus_per_group : int
        GPUs of one worker's data-parallel group, ``>= 1`` (default 8); with
        ``gpus_per_node`` it gives the nodes of a group
        (:attr:`nodes_per_group`), the units a spare pool swaps.
    gpus_per_node : int
        GPUs per node (server), dividing ``gpus_per_group`` (default 8: one
        node per group).
    spare_nodes : int, optional
        Spare nodes in a pool, ``>= 0``; ``None`` or 0 (default): no pool.
        With ``S >= 1`` spares ``repair_seconds`` and ``repair_law`` are a
        failed *node*'s repair time: a failed worker's node is replaced after
        ``swap_seconds`` if the pool has a spare, else it waits for the next
        repaired node (first come, first served); repaired nodes return to
        the pool (as :class:`~spare_theory.hourly.scenario.Scenario`).
    swap_seconds : float, optional
        Time to swap a spare node in, seconds (the hour-level
        ``swap_minutes``), ``>= 0``; only with ``spare_nodes >= 1``.
    clock_age_seconds : float, optional
        How long every worker's failure clock has run when the run starts,
        seconds, ``>= 0``: fresh then, renewed at each failure since.
        Default 0: every clock fresh at time 0, as in the published
        simulator.  ``None``: long-running clocks, each at its stationary
        residual life.  Changes nothing for the exponential law; for another
        law young clocks fail more often (Weibull shape below 1) or less
        (above 1) than running ones, and the model follows the clocks' age
        through the run (``docs/step_model.md``).
    provenance : tuple of (str, str)
        Where fields came from, ``(field, sentence)`` pairs, e.g. set by
        :meth:`FailureLog.step_scenario
        <spare_theory.traces.failure_log.FailureLog.step_scenario>`; default
        empty; not compared (two scenarios that differ only there are equal).

    Raises
    ------
    ValueError
        Naming the field.


    Notes
    -----
    Fields read only with another: alone they leave a front door's answer
    exactly as it is (a test checks it), because what they describe does not
    arise without the other; ``replay_training`` takes repairs and nodes
    from its log, so there they play.

    - ``gpus_per_group``, ``gpus_per_node``: only with ``spare_nodes``;
      without a pool of nodes a worker is the unit that fails and repairs,
      and they set only the node count an estimate reports
      (``StepEstimate.nodes``).
    - ``heal_seconds``: only with ``repair_seconds``, for elastic
      strategies; without repairs no worker comes back to heal.
    - ``clock_age_seconds``: only with a ``failure_law`` other than the
      exponential, whose clocks are the same at every age.

    Examples
    --------
    >>> from scipy import stats
    >>> s = StepScenario(groups=200, steps=10_000, allreduce_seconds=2.0,
    ...                  failure_law=stats.expon(scale=60_000.0))
    >>> s.failure_free_seconds, round(s.failure_free_hours, 2), s.cluster_mtbf_seconds
    (660000.0, 183.33, 300.0)
    >>> StepScenario(groups=200, steps=10, allreduce_seconds=2.0, repair_seconds=600.0,
    ...              failure_law=stats.expon(scale=60_000.0)).repairs
    True
    """

    groups: int
    steps: int
    stack_seconds: float = 64.0
    allreduce_seconds: float
    stack_jitter_cv: float = 0.05
    checkpoint_seconds: float = 58.8
    restart_seconds: float = 3600.0
    restart_semantics: str = "window"
    failure_law: Any
    partial_recovery_seconds: float = 0.1
    allreduce_failure_scale: float = 0.5
    repair_seconds: float | None = None
    repair_law: Any = "exponential"
    rejoin_seconds: float = 0.0
    microbatches: int = 1
    reconfigure_seconds: float = 180.0
    heal_seconds: float = 60.0
    gpus_per_group: int = 8
    gpus_per_node: int = 8
    spare_nodes: int | None = None
    swap_seconds: float | None = None
    clock_age_seconds: float | None = 0.0
    provenance: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        checked = {
            "groups": as_count(self.groups, "groups"),
            "steps": as_count(self.steps, "steps"),
            "stack_seconds": as_real(
                self.stack_seconds, "stack_seconds", minimum=0.0, strict_minimum=True
            ),
            "allreduce_seconds": as_real(self.allreduce_seconds, "allreduce_seconds", minimum=0.0),
            "stack_jitter_cv": as_real(self.stack_jitter_cv, "stack_jitter_cv", minimum=0.0),
            "checkpoint_seconds": as_real(
                self.checkpoint_seconds, "checkpoint_seconds", minimum=0.0
            ),
            "restart_seconds": as_real(self.restart_seconds, "restart_seconds", minimum=0.0),
            "restart_semantics": as_choice(
                self.restart_semantics, "restart_semantics", RESTART_SEMANTICS
            ),
            "failure_law": validate_lifetime_law(self.failure_law, "failure_law"),
            "partial_recovery_seconds": as_real(
                self.partial_recovery_seconds, "partial_recovery_seconds", minimum=0.0
            ),
            "allreduce_failure_scale": as_real(
                self.allreduce_failure_scale, "allreduce_failure_scale", minimum=0.0
            ),
            "microbatches": as_count(self.microbatches, "microbatches", minimum=1),
            "reconfigure_seconds": as_real(
                self.reconfigure_seconds, "reconfigure_seconds", minimum=0.0
            ),
            "heal_seconds": as_real(self.heal_seconds, "heal_seconds", minimum=0.0),
            "clock_age_seconds": None
            if self.clock_age_seconds is None
            else as_real(self.clock_age_seconds, "clock_age_seconds", minimum=0.0),
        }
        checked.update(
            check_step_repairs(self.repair_seconds, self.repair_law, self.rejoin_seconds)
        )
        checked["gpus_per_group"] = as_count(self.gpus_per_group, "gpus_per_group")
        checked["gpus_per_node"] = as_count(
            self.gpus_per_node, "gpus_per_node", maximum=checked["gpus_per_group"]
        )
        if checked["gpus_per_group"] % checked["gpus_per_node"]:
            raise ValueError(
                f"gpus_per_node={checked['gpus_per_node']} must divide "
                f"gpus_per_group={checked['gpus_per_group']}"
            )
        checked.update(
            check_pool_fields(
                self.spare_nodes,
                self.swap_seconds,
                repairs=checked["repair_seconds"] is not None,
                repair_field="repair_seconds",
                swap_field="swap_seconds",
            )
        )
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        # Frozen scipy distributions compare by identity: compare the fields by value.
        if not isinstance(other, StepScenario):
            return NotImplemented
        return value_key(self) == value_key(other)

    def __hash__(self) -> int:
        return hash(value_key(self))

    def without_repairs(self) -> StepScenario:
        """This scenario with failed groups out until the next global restart (no repairs).

        Examples
        --------
        >>> from dataclasses import replace
        >>> s = paper_scenario(200)
        >>> replace(s, repair_seconds=600.0).without_repairs() == s
        True
        """
        out = copy.copy(self)
        # The values set are valid whatever the rest: skip re-checking every
        # field (the failure law's checks cost most of a millisecond).
        fields = {
            "repair_seconds": None,
            "repair_law": "exponential",
            "rejoin_seconds": 0.0,
            "spare_nodes": None,
            "swap_seconds": None,
        }
        for name, value in fields.items():
            object.__setattr__(out, name, value)
        return out

    @property
    def nodes_per_group(self) -> int:
        """Nodes of one worker's group: ``gpus_per_group / gpus_per_node``.

        Examples
        --------
        >>> from dataclasses import replace
        >>> replace(paper_scenario(200), gpus_per_group=2048).nodes_per_group
        256
        """
        return self.gpus_per_group // self.gpus_per_node

    @property
    def repairs(self) -> bool:
        """Whether failed groups come back without a global restart (``repair_seconds`` set)."""
        return self.repair_seconds is not None

    @property
    def pool(self) -> bool:
        """Whether failed nodes are swapped for spares from a pool (``spare_nodes >= 1``)."""
        return (self.spare_nodes or 0) > 0

    @property
    def failure_free_seconds(self) -> float:
        """``T0 = steps * (stack_seconds + allreduce_seconds)``, seconds (no jitter, no failure)."""
        return self.steps * (self.stack_seconds + self.allreduce_seconds)

    @property
    def failure_free_hours(self) -> float:
        """``T0 / 3600``, hours."""
        return self.failure_free_seconds / 3600.0

    @property
    def group_mean_lifetime_seconds(self) -> float:
        """Mean lifetime of one group, ``E[L]``, seconds."""
        return float(self.failure_law.mean())

    @property
    def cluster_mtbf_seconds(self) -> float:
        """``E[L] / N``: long-run mean seconds between failures of the ``N`` renewing groups."""
        return self.group_mean_lifetime_seconds / self.groups


def check_step_repairs(seconds: Any, law: Any, rejoin: Any) -> dict[str, Any]:
    """Normalised repair fields of a :class:`StepScenario` (``ValueError`` naming the field).

    Parameters
    ----------
    seconds : float or None
        ``repair_seconds``: mean repair time, ``> 0``; ``None`` for no repairs
        (unless ``law`` is a distribution, whose mean it then takes).
    law : str or frozen scipy.stats distribution
        ``repair_law``: one of :data:`STEP_REPAIR_LAWS` or a distribution on
        ``[0, inf)`` in seconds whose mean equals ``seconds``.
    rejoin : float
        ``rejoin_seconds``, ``>= 0``; ``> 0`` needs repairs.

    Returns
    -------
    dict
        ``{"repair_seconds", "repair_law", "rejoin_seconds"}``.

    Examples
    --------
    >>> from scipy import stats
    >>> check_step_repairs(None, stats.uniform(0, 120), 5)["repair_seconds"]
    60.0
    """
    return check_repair_fields(seconds, law, rejoin, unit="seconds")


def paper_scenario(
    N: int,
    *,
    failure_law: Any = "exponential",
    restart_seconds: float = 3600.0,
    allreduce_seconds: float | None = None,
    steps: int = 10_000,
) -> StepScenario:
    """The SPARe paper's simulated scenario for ``N`` groups.

    Each group's mean lifetime is ``300 N`` s (cluster MTBF 300 s), the
    all-reduce takes ``N / 100`` s unless given, 64 s stacks with 5 % jitter,
    58.8 s checkpoints, restart windows of ``restart_seconds``.

    Parameters
    ----------
    N : int
        Groups, ``>= 1`` (the paper: 200, 600, 1000).
    failure_law : str or frozen scipy.stats distribution
        ``"exponential"`` or ``"weibull"`` (shape 0.78), both with mean
        ``300 N`` s; a frozen distribution is used as is.
    restart_seconds : float
        Global restart cost ``R``, seconds (3600).
    allreduce_seconds : float, optional
        All-reduce time, seconds; default ``N / 100``.
    steps : int
        Training steps (10,000).

    Returns
    -------
    StepScenario

    Examples
    --------
    >>> s = paper_scenario(1000, failure_law="weibull")
    >>> s.allreduce_seconds, round(float(s.failure_law.kwds["scale"])), s.cluster_mtbf_seconds
    (10.0, 259894, 300.0...)
    """
    groups = as_count(N, "N")
    if isinstance(failure_law, str):
        law = lifetime_law(failure_law, mean_seconds=300.0 * groups)
    else:
        law = lifetime_law(failure_law)
    allreduce = groups / 100.0 if allreduce_seconds is None else allreduce_seconds
    return StepScenario(
        groups=groups,
        steps=steps,
        allreduce_seconds=allreduce,
        restart_seconds=restart_seconds,
        failure_law=law,
    )
