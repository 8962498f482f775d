"""A training scenario: cluster size, group size, failure rate and costs.

Units live in the names (hours, minutes).  ``N = gpus // gpus_per_group``
data-parallel groups train the model; when ``gpus_per_group`` does not divide
``gpus`` the ``gpus mod gpus_per_group`` left-over GPUs sit outside every group
(they compute nothing and their failures stop nothing), which is how the
published "600k GPUs, N about 146 at 4096 GPUs per group" figures are counted.

A GPU fails at rate ``1 / gpu_mtbf_hours`` (exponential lifetimes, the
default ``failure_law``), so a group of ``M`` GPUs fails at rate
``lambda = M / gpu_mtbf_hours`` per hour and the ``N M`` grouped GPUs at
``N lambda``.  Other laws (``failure_law="weibull"`` or a frozen
``scipy.stats`` distribution of one GPU's lifetime) give each group the law of
the first of its ``M`` GPU failures (:attr:`Scenario.group_lifetime_law`) and
``lambda = 1 / E[group lifetime]``.  With ``renewal="node"`` the clocks are
the nodes' instead (``gpus_per_node`` GPUs renewing together): a group fails
at the first failure of its nodes' stationary renewal clocks, at rate
``(M / gpus_per_node) / E[node lifetime]``.

A pool of ``spare_nodes`` spare nodes (``swap_minutes`` to swap one in) turns
``repair_minutes`` into the repair time of a *node*: a group is whole again
when every failed node of it has been swapped for a spare, or, with the pool
empty, for the next repaired node (:mod:`spare_theory.lifetimes.spares`).

Which combinations of fields the closed forms price, and with which
approximations, is the model's business (:mod:`spare_theory.hourly.compose`);
the scenario only checks each field, and the event simulation plays any of
them.

The module is long (about 640 lines) for one class: every field's contract
is stated in full in its docstring (about two thirds of the module), and the
CLI's options and ``spare-theory optimize --help`` are generated from it.

The interval check shared by the model and the independent simulation
(:func:`check_checkpoint_interval`) lives here too; which redundancies a
strategy accepts is the strategy's own (:mod:`spare_theory.strategies`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from .._validation import as_choice, as_count, as_real
from ..lifetimes.classes import CRASH, FailureClass, check_failure_classes, mean_detect_minutes
from ..lifetimes.laws import (
    DEFAULT_WEIBULL_SHAPE,
    group_weibull_from_gpu,
    minimum_law,
    validate_lifetime_law,
)
from ..lifetimes.outages import REPAIR_LAWS, check_repair_fields
from ..lifetimes.spares import check_pool_fields
from ..stacking.domains_sim import lemon_count

__all__ = [
    "FAILURE_LAWS",
    "LLAMA3_H100_GPU_MTBF_HOURS",
    "PRESETS",
    "RENEWALS",
    "REPAIR_LAWS",
    "SCENARIO_PLACEMENTS",
    "Scenario",
    "check_checkpoint_interval",
]

# Llama 3 405B pre-training: 419 unexpected interruptions in 54 days on 16,384
# H100 GPUs (Dubey et al. 2024, "The Llama 3 Herd of Models"): 16384 * 54 * 24 / 419
# GPU-hours per failure = 50,677.0 (printed as 50,677 everywhere).
#: Per-GPU MTBF of an H100, hours: 16384 * 54 * 24 / 419 = 50,677.0, from the 419
#: unexpected interruptions in 54 days on 16,384 H100 GPUs of Llama 3 405B pre-training
#: (Dubey et al. 2024, "The Llama 3 Herd of Models").  The default of
#: ``Scenario.gpu_mtbf_hours``.
LLAMA3_H100_GPU_MTBF_HOURS = 16384 * 54 * 24 / 419

#: Named GPU lifetime laws (a frozen ``scipy.stats`` distribution, in hours, is also accepted).
FAILURE_LAWS = ("exponential", "weibull")

#: Which renewal clocks a non-exponential law drives: a group's or each node's.
RENEWALS = ("group", "node")

#: Accepted values of :attr:`Scenario.placement` (names of
#: :data:`~spare_theory.placement.domains.PLACEMENTS`).
SCENARIO_PLACEMENTS = ("domain_aware", "ruler")


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One training run on a cluster.

    Parameters
    ----------
    gpus : int
        GPUs available, ``G >= 1``.
    gpus_per_group : int
        GPUs per data-parallel group (one model replica), ``1 <= M <= G``.
    gpu_mtbf_hours : float
        Mean time between failures of one GPU, hours, ``> 0``; default
        :data:`LLAMA3_H100_GPU_MTBF_HOURS` (50,677 h, an H100 in the Llama 3
        paper, Dubey et al. 2024), as on the command line.
    restart_minutes : float
        Cost ``R`` of a global restart (communicator re-initialisation and
        reload), minutes, ``>= 0``.
    checkpoint_minutes : float
        Cost ``delta`` of writing one checkpoint, minutes, ``>= 0``.
    work_hours : float
        Failure-free wall time of the run on all ``N`` groups with no
        redundancy and no checkpoints, hours, ``> 0``.
    failure_law : str or frozen scipy.stats distribution
        Law of one GPU's lifetime: ``"exponential"`` (default) or
        ``"weibull"`` (shape ``weibull_shape``), both with mean
        ``gpu_mtbf_hours``, or a frozen continuous ``scipy.stats``
        distribution in hours (then ``gpu_mtbf_hours`` is not used for the
        failures).  Each group runs a renewal process: after a failure its
        next lifetime is drawn afresh from the group law (the first of its
        ``M`` GPUs to fail, :attr:`group_lifetime_law`), and clocks are not
        reset at global restarts (the published simulator's semantics).
        For Weibull GPUs the group law is Weibull(``k``, ``s M^(-1/k)``), the
        minimum of ``M`` iid Weibull(``k``, ``s``): for ``k < 1`` a group
        fails ``M^(1/k - 1)`` times as often as ``M`` exponential GPUs of the
        same mean.  The model treats every clock as stationary (the
        equilibrium residual-life law; ``docs/theory.md`` section 4); with
        repairs, domains or lemons it prices the exponential law of the same
        mean (:mod:`spare_theory.hourly.compose` states the approximations).
    weibull_shape : float
        Weibull shape ``k > 0`` of a GPU's lifetime for
        ``failure_law="weibull"`` (default 0.78, the SPARe paper's value).
    repair_minutes : float, optional
        Mean time from a group's failure until a replacement rejoins the
        running job without a global restart, minutes, ``> 0``.  ``None``
        (the default) is the model without repairs: a failed group stays out
        until the next global restart.
    repair_law : str or frozen scipy.stats distribution
        Law of the repair time: ``"exponential"`` (default) or ``"fixed"``
        with mean ``repair_minutes``, or a frozen ``scipy.stats``
        distribution in minutes (then ``repair_minutes`` defaults to its
        mean and, if given, must equal it).
    rejoin_minutes : float
        Stall of the whole job while a rejoining group loads the model
        state, minutes, ``>= 0`` (default 0).  Only with repairs.
    planned_restart_failures : int, optional
        Planned restarts: a global restart *without rollback* (the work of
        the current segment is kept) as soon as this many groups are down at
        once (failed and not yet repaired), ``1 <= k <= N``; the step cost
        has then grown to about ``E[S*_k]`` (SPARe).  ``None`` (default):
        restarts only at wipe-outs.  See ``docs/theory.md`` section 6.
    planned_restart_cost : float, optional
        Planned restarts triggered by the step cost: a global restart without
        rollback as soon as the current step cost reaches ``c > 1`` (SPARe:
        ``S*`` stack layers, or the micro-batch load with ``microbatches =
        m``, in shard units; a failure-free step costs 1).  Rep's and
        CKPT-only's steps do not grow with failures, so it never fires for
        them.  The model maps ``c`` to the down count ``k(c)`` at which the
        expected cost reaches ``c``
        (:func:`~spare_theory.cycles.planned.cost_trigger_failures`); the simulation
        triggers on the exact cost.  Not together with
        ``planned_restart_failures``.  ``None`` (default): no cost trigger.
    domain_size : int, optional
        Groups per failure domain (rack, switch; contiguous blocks of groups),
        ``1 <= m <= N``.  ``None`` (default): no domain failures, today's model.
    domain_mtbf_hours : float, optional
        Mean time between failures of one domain as a whole (all its groups
        at once), hours, ``> 0``, beside the independent group failures; set
        together with ``domain_size`` (:mod:`spare_theory.hourly.domains`).
    placement : {"domain_aware", "ruler"}
        Where SPARe puts the ``r`` hosts of each shard type, followed alike by
        the model and the event simulation.  ``"domain_aware"`` (default):
        the modular ruler relabelled so that every type's hosts lie in ``r``
        distinct failure domains
        (:func:`~spare_theory.placement.domains.domain_aware_placement`;
        it needs ``r <= N / domain_size``), the ruler itself without
        domains.  ``"ruler"``: the cyclic ruler ``(i + g_k) mod N``, whose
        hosts can share a domain, so that one domain event can wipe a type
        out; the model prices it under domains for up to 16 domains.
        Rep's replica sets and CKPT-only do not use it.
    lemon_fraction : float
        Share of *lemon* groups, ``0 <= phi <= 1`` (default 0).
    lemon_rate_factor : float
        Failure rate of a lemon group relative to the others, ``>= 1``
        (default 1).
    reconfigure_minutes : float
        Stall of an elastic job at each membership change (a group dropped at
        the next quorum, a group rejoining): failure detection, a new quorum
        and the communicators rebuilt, minutes, ``>= 0``.  Default 3 min,
        the stall per failure that Meta measured for fault-tolerant HSDP at
        O(100K) GPUs (Salpekar et al. 2026, "Training LLMs with Fault
        Tolerant HSDP on 100,000 GPUs", arXiv 2602.00277: 3 min against
        10 min for a synchronous restart); torchft's defaults bound the
        detection alone by a minute (``Manager(timeout=60 s,
        quorum_timeout=60 s)``, lighthouse ``heartbeat_timeout_ms=5000``).
        Used by the strategies that change membership without a global
        restart (``"elastic"``, ``"hot_spares"``); the published strategies
        have no reconfiguration (their rejoin stall is ``rejoin_minutes``).
    heal_minutes : float
        Live recovery of a repaired group from a peer before it rejoins an
        elastic job (torchft's *heal*: the state dict sent by a live
        replica), minutes, ``>= 0``, added to its repair time.  Default
        1 min: torchft bounds the transfer by ``Manager(timeout=60 s)``
        (its ``HTTPTransport(timeout=timeout)``).  Elastic strategies with
        repairs only (no group comes back without repairs).
    gpus_per_node : int
        GPUs per node (server), ``>= 1`` (default 8): the unit that fails,
        goes to repair and is swapped for a spare.  Used by ``renewal="node"``
        and ``spare_nodes``, which need it to divide ``gpus_per_group``.
    renewal : {"group", "node"}
        Which clocks renew for a ``failure_law`` other than exponential:
        ``"group"`` (default, the published simulator's semantics): each group
        draws its next lifetime from the group law after a failure;
        ``"node"``: each node keeps its own renewal clock (node law: the
        first of its ``gpus_per_node`` GPUs), and a group fails at the first
        failure of its ``M / gpus_per_node`` nodes, which is how a cluster
        whose failed servers are repaired or swapped one by one behaves.
        For ``k < 1`` Weibull nodes the group rate is
        ``(M / gpus_per_node)^(1/k - 1)`` times lower under ``"node"``.
        Exponential lifetimes are the same either way.
    spare_nodes : int, optional
        Spare nodes in a pool, ``>= 0``; ``None`` or 0 (default): no pool,
        ``repair_minutes`` is a group's repair time (today's model).  With
        ``S >= 1`` spares, ``repair_minutes`` and ``repair_law`` are a failed
        *node*'s repair time; a failed node is replaced after
        ``swap_minutes`` if the pool has a spare, else its group waits for
        the next repaired node (first come, first served); repaired nodes
        return to the pool.  Needs ``repair_minutes`` and ``swap_minutes``.
    swap_minutes : float, optional
        Time to swap a spare node into a failed node's place, minutes,
        ``>= 0``; only with ``spare_nodes >= 1``.
    microbatches : int
        ``m >= 1`` micro-batches (pieces) per shard (default 1).  SPARe only:
        a failed group's shard is cut into ``m`` pieces that any surviving
        host of its type may compute, so a state costs the expected load
        instead of ``E[S*]`` whole stacks
        (:class:`~spare_theory.cycles.spare.SpareSplit`); ``1`` is published
        SPARe.  The front doors' ``microbatches=`` keyword is folded into this
        field (:func:`~spare_theory._validation.merge_microbatches`).
    failure_classes : tuple of FailureClass
        The classes of the failures
        (:class:`~spare_theory.lifetimes.classes.FailureClass`: a share of
        them, a kind and minutes until detected, during which the whole job
        makes no progress); default one ``crash`` noticed at once
        (:data:`~spare_theory.lifetimes.classes.CRASH`).  The classes split
        the failures, they add none; ``docs/failure_classes.md``.
    provenance : tuple of (str, str)
        Where fields came from, ``(field, sentence)`` pairs (``dict(...)`` for
        a mapping), e.g. set by :meth:`FailureLog.scenario
        <spare_theory.traces.failure_log.FailureLog.scenario>`; default
        empty.  Not compared: two scenarios of equal fields are equal
        whatever their provenance; ``dataclasses.replace`` carries it along.

    Raises
    ------
    ValueError
        Naming the field: non-integer or boolean counts, ``gpus_per_group``
        larger than ``gpus``, NaN or infinite values, ``gpu_mtbf_hours <= 0``,
        negative costs, ``work_hours <= 0``, an unknown failure law; a
        ``repair_minutes`` not ``> 0``, an unknown ``repair_law`` or one
        whose mean differs from ``repair_minutes``, a ``rejoin_minutes``
        without repairs; both ``planned_restart_failures`` and
        ``planned_restart_cost`` set, or a ``planned_restart_cost`` not ``> 1``;
        a negative ``reconfigure_minutes`` or ``heal_minutes``; an unknown
        ``renewal``; ``spare_nodes`` without ``repair_minutes`` or
        ``swap_minutes`` (or ``swap_minutes`` without spares); a
        ``gpus_per_node`` that does not divide ``gpus_per_group`` when nodes
        are used.
    TypeError
        On positional arguments: every field is a keyword.


    Notes
    -----
    Fields read only with another: alone they leave a front door's answer
    exactly as it is (a test checks it), because what they describe does not
    arise without the other; ``replay_training`` takes repairs and nodes
    from its log, so there ``heal_minutes`` and ``gpus_per_node`` play.

    - ``placement``: only with ``domain_size``; without failure domains no
      host shares a domain.
    - ``lemon_fraction``: only with ``lemon_rate_factor`` above 1; a lemon
      failing at the others' rate is an ordinary group.
    - ``heal_minutes``: only with ``repair_minutes``, for elastic
      strategies; without repairs no group comes back to heal.
    - ``gpus_per_node``: only with ``spare_nodes`` or ``renewal="node"``
      under a non-exponential ``failure_law``; otherwise the group is the
      unit that fails and renews.
    - ``renewal``: only with a non-exponential ``failure_law``; exponential
      clocks have no age, so renewing nodes or groups is the same.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> sc.groups, round(sc.group_failure_rate_per_hour, 6), round(sc.cluster_mtbf_minutes, 2)
    (128, 0.004, 117.19)
    """

    gpus: int
    gpus_per_group: int
    gpu_mtbf_hours: float = LLAMA3_H100_GPU_MTBF_HOURS
    restart_minutes: float
    checkpoint_minutes: float
    work_hours: float
    failure_law: Any = "exponential"
    weibull_shape: float = DEFAULT_WEIBULL_SHAPE
    repair_minutes: float | None = None
    repair_law: Any = "exponential"
    rejoin_minutes: float = 0.0
    domain_size: int | None = None
    domain_mtbf_hours: float | None = None
    placement: str = "domain_aware"
    lemon_fraction: float = 0.0
    lemon_rate_factor: float = 1.0
    planned_restart_failures: int | None = None
    planned_restart_cost: float | None = None
    reconfigure_minutes: float = 3.0
    heal_minutes: float = 1.0
    gpus_per_node: int = 8
    renewal: str = "group"
    spare_nodes: int | None = None
    swap_minutes: float | None = None
    microbatches: int = 1
    failure_classes: tuple[FailureClass, ...] = (CRASH,)
    provenance: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        gpus = as_count(self.gpus, "gpus")
        per_group = as_count(self.gpus_per_group, "gpus_per_group", maximum=gpus)
        checked = {
            "gpus": gpus,
            "gpus_per_group": per_group,
            "gpu_mtbf_hours": as_real(
                self.gpu_mtbf_hours, "gpu_mtbf_hours", minimum=0.0, strict_minimum=True
            ),
            "restart_minutes": as_real(self.restart_minutes, "restart_minutes", minimum=0.0),
            "checkpoint_minutes": as_real(
                self.checkpoint_minutes, "checkpoint_minutes", minimum=0.0
            ),
            "work_hours": as_real(self.work_hours, "work_hours", minimum=0.0, strict_minimum=True),
            "failure_law": _check_failure_law(self.failure_law),
            "weibull_shape": as_real(
                self.weibull_shape, "weibull_shape", minimum=0.0, strict_minimum=True
            ),
        }
        shape = checked["weibull_shape"]
        if checked["failure_law"] != "weibull" and shape != DEFAULT_WEIBULL_SHAPE:
            raise ValueError(
                f"weibull_shape={shape:g} needs failure_law='weibull', got "
                f"failure_law={_law_name(checked['failure_law'])!r}"
            )
        checked.update(_check_repairs(self.repair_minutes, self.repair_law, self.rejoin_minutes))
        checked.update(
            _check_domains(
                gpus // per_group,
                self.domain_size,
                self.domain_mtbf_hours,
                self.lemon_fraction,
                self.lemon_rate_factor,
            )
        )
        checked["microbatches"] = as_count(self.microbatches, "microbatches", minimum=1)
        checked["failure_classes"] = check_failure_classes(self.failure_classes)
        checked["gpus_per_node"] = as_count(self.gpus_per_node, "gpus_per_node")
        checked["renewal"] = as_choice(self.renewal, "renewal", RENEWALS)
        checked["placement"] = as_choice(self.placement, "placement", SCENARIO_PLACEMENTS)
        checked.update(
            check_pool_fields(
                self.spare_nodes, self.swap_minutes, repairs=self.repair_minutes is not None
            )
        )
        if (checked["renewal"] == "node" or (checked["spare_nodes"] or 0) > 0) and (
            per_group % checked["gpus_per_node"]
        ):
            raise ValueError(
                f"gpus_per_node={checked['gpus_per_node']} must divide "
                f"gpus_per_group={per_group} with renewal='node' or spare_nodes"
            )
        for name in ("reconfigure_minutes", "heal_minutes"):
            checked[name] = as_real(getattr(self, name), name, minimum=0.0)
        if self.planned_restart_failures is not None:
            checked["planned_restart_failures"] = as_count(
                self.planned_restart_failures,
                "planned_restart_failures",
                maximum=gpus // per_group,
            )
        if self.planned_restart_cost is not None:
            if self.planned_restart_failures is not None:
                raise ValueError(
                    "planned_restart_failures and planned_restart_cost are two triggers of the "
                    "same planned restart: set at most one, got "
                    f"planned_restart_failures={self.planned_restart_failures!r}, "
                    f"planned_restart_cost={self.planned_restart_cost!r}"
                )
            checked["planned_restart_cost"] = as_real(
                self.planned_restart_cost,
                "planned_restart_cost",
                minimum=1.0,
                strict_minimum=True,
            )
        # Store the normalised values (ints for counts, floats for times).
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def groups(self) -> int:
        """``N = gpus // gpus_per_group`` data-parallel groups."""
        return self.gpus // self.gpus_per_group

    @property
    def detect_minutes(self) -> float:
        """A failure's mean minutes unnoticed over its classes (0 by default).

        Examples
        --------
        >>> from spare_theory.lifetimes.classes import FailureClass
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20,
        ...               checkpoint_minutes=5, work_hours=48,
        ...               failure_classes=(FailureClass("crash", 0.9, detect_minutes=1),
        ...                                FailureClass("hang", 0.1, "hang", 31)))
        >>> sc.detect_minutes
        4.0
        """
        return mean_detect_minutes(self.failure_classes)

    @property
    def lemon_share(self) -> float:
        """The share of lemon groups priced and played: ``round(phi N) / N``.

        The whole count every simulation plays
        (:func:`~spare_theory.stacking.domains_sim.lemon_count`), which the
        model prices too (``docs/audit.md``, mend 2).

        Examples
        --------
        >>> sc = Scenario(gpus=192, gpus_per_group=16, restart_minutes=20,
        ...               checkpoint_minutes=1, work_hours=10, lemon_fraction=0.281,
        ...               lemon_rate_factor=9.4)
        >>> sc.lemon_share
        0.25
        """
        return lemon_count(self.groups, self.lemon_fraction) / self.groups

    @property
    def repairs(self) -> bool:
        """Whether failed groups come back without a global restart (``repair_minutes`` set)."""
        return self.repair_minutes is not None

    @property
    def pool(self) -> bool:
        """Whether failed nodes are swapped for spares from a pool (``spare_nodes >= 1``)."""
        return (self.spare_nodes or 0) > 0

    @property
    def nodes_per_group(self) -> int:
        """Nodes of a group, ``gpus_per_group / gpus_per_node`` (at least 1)."""
        return max(self.gpus_per_group // self.gpus_per_node, 1)

    @property
    def exponential(self) -> bool:
        """Whether GPU lifetimes are exponential (``failure_law="exponential"``)."""
        return isinstance(self.failure_law, str) and self.failure_law == "exponential"

    @functools.cached_property
    def group_lifetime_law(self) -> Any:
        """Lifetime law of one group (its first GPU failure), a frozen distribution in hours.

        Exponential: ``expon(scale=gpu_mtbf_hours / M)``.  Weibull: the
        minimum of ``M`` iid Weibull(``k``, ``s``) with
        ``s = gpu_mtbf_hours / Gamma(1 + 1/k)`` is Weibull(``k``, ``s M^(-1/k)``)
        (:func:`~spare_theory.lifetimes.laws.group_weibull_from_gpu`).  Any other
        law: ``sf_group = sf^M``
        (:func:`~spare_theory.lifetimes.laws.minimum_law`, a ``rv_continuous``
        subclass with the exact inverse; its mean by quadrature).

        Examples
        --------
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
        ...               failure_law="weibull")
        >>> law = sc.group_lifetime_law
        >>> round(float(law.args[0]), 2), round(float(law.mean()), 2)
        (0.78, 139.07)
        """
        return self._first_of(self.gpus_per_group)

    @functools.cached_property
    def node_lifetime_law(self) -> Any:
        """Lifetime law of one node (its first GPU failure), a frozen distribution in hours.

        As :attr:`group_lifetime_law` for ``gpus_per_node`` GPUs; the clocks
        of ``renewal="node"``.

        Examples
        --------
        >>> sc = Scenario(gpus=1024, gpus_per_group=64, gpu_mtbf_hours=8000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> round(float(sc.node_lifetime_law.mean()), 6)
        1000.0
        """
        return self._first_of(self.gpus_per_node)

    def _first_of(self, M: int) -> Any:
        """The law of the first failure of ``M`` GPUs (hours)."""
        if self.exponential:
            return stats.expon(scale=self.gpu_mtbf_hours / M)
        if isinstance(self.failure_law, str):
            k = self.weibull_shape
            return group_weibull_from_gpu(k, self.gpu_mtbf_hours / math.gamma(1.0 + 1.0 / k), M)
        return minimum_law(self.failure_law, M)

    @property
    def group_failure_rate_per_hour(self) -> float:
        """``lambda``: failures of one group per hour, ``1 / E[group lifetime]``.

        ``gpus_per_group / gpu_mtbf_hours`` for exponential lifetimes;
        ``nodes_per_group / E[node lifetime]`` with ``renewal="node"`` (the
        rate of the nodes' superposed renewal processes).
        """
        if self.exponential:
            return self.gpus_per_group / self.gpu_mtbf_hours
        if self.renewal == "node":
            return self.nodes_per_group / float(self.node_lifetime_law.mean())
        return 1.0 / float(self.group_lifetime_law.mean())

    @property
    def cluster_mtbf_minutes(self) -> float:
        """``60 / (N lambda)``: mean minutes between failures of the grouped GPUs."""
        return 60.0 / (self.groups * self.group_failure_rate_per_hour)

    @classmethod
    def published_600k(
        cls,
        gpus_per_group: int = 2048,
        *,
        checkpoint_minutes: float = 5.0,
        work_hours: float = 720.0,
        restart_minutes: float = 60.0,
    ) -> Scenario:
        """The published scenario: 600,000 H100 GPUs, Llama-3-derived per-GPU MTBF, 60 min restart.

        The cluster MTBF is ``60 * 50,677 / 600,000 = 5.07`` minutes.  The
        checkpoint cost and the work are not published; the defaults (5 min,
        720 h = 30 days) are this package's choice.

        Examples
        --------
        >>> sc = Scenario.published_600k()
        >>> sc.groups, round(sc.cluster_mtbf_minutes, 2)
        (292, 5.07)
        """
        return cls(
            gpus=600_000,
            gpus_per_group=gpus_per_group,
            gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
            restart_minutes=restart_minutes,
            checkpoint_minutes=checkpoint_minutes,
            work_hours=work_hours,
        )

    @classmethod
    def preset(cls, name: str, **fields: Any) -> Scenario:
        """A scenario with the costs of a fast-restart technique, the other fields given.

        ``fields`` are the Scenario's own keywords; they override the
        preset's.  The presets (:data:`PRESETS`):

        - ``"in_process_restart"``: ``restart_minutes = 1``.  NVIDIA's
          resiliency extension restarts the training function inside the
          running processes (no new job, container, interpreter or CUDA
          context); its usage guide ("Restart latency") lists about 1.5 s
          for the wrapper (``destroy_process_group`` ~0.5 s, rank assignment
          ~0.5 s, a TCPStore barrier 0.5 s at 16k ranks) plus one training
          iteration, plus the user's re-initialisation: the communicators
          and the reload of the last checkpoint.  The minute is this
          package's allowance for those (no public figure at 100k GPUs).
        - ``"in_memory_checkpoints"``: ``checkpoint_minutes = 0.05`` (3 s).
          Gemini (Wang et al., SOSP 2023, "GEMINI: Fast Failure Recovery in
          Distributed Training with In-Memory Checkpoints") checkpoints to
          CPU memory of peer machines at every iteration with no measurable
          loss of training throughput; 3 s charges about one iteration.
        - ``"fast_restarts"``: both.

        Parameters
        ----------
        name : str
            One of :data:`PRESETS`.
        **fields
            Scenario fields (``gpus``, ``gpus_per_group``, ``work_hours``, ...).

        Returns
        -------
        Scenario

        Raises
        ------
        ValueError
            Naming ``name`` for an unknown preset, or a field as the
            constructor does.

        Examples
        --------
        >>> sc = Scenario.preset("fast_restarts", gpus=1024, gpus_per_group=8, work_hours=48)
        >>> sc.restart_minutes, sc.checkpoint_minutes
        (1.0, 0.05)
        >>> Scenario.preset("in_process_restart", gpus=1024, gpus_per_group=8,
        ...                 checkpoint_minutes=5, work_hours=48, restart_minutes=2).restart_minutes
        2.0
        """
        chosen = PRESETS[as_choice(name, "name", tuple(PRESETS))]
        return cls(**{**chosen, **fields})

    def __str__(self) -> str:
        return (
            f"{self.gpus:,} GPUs in N={self.groups:,} groups of {self.gpus_per_group}, "
            f"GPU MTBF {self.gpu_mtbf_hours:,.0f} h (cluster {self.cluster_mtbf_minutes:.3g} min), "
            f"R={self.restart_minutes:g} min, delta={self.checkpoint_minutes:g} min, "
            f"work {self.work_hours:g} h"
            + (
                f", repairs {self.repair_minutes:g} min ({_law_name(self.repair_law)}), "
                f"rejoin {self.rejoin_minutes:g} min"
                if self.repair_minutes is not None
                else ""
            )
            + (
                ""
                if self.exponential
                else f", {_law_name(self.failure_law)} GPU lifetimes"
                + (f" (shape {self.weibull_shape:g})" if self.failure_law == "weibull" else "")
                + (", node clocks" if self.renewal == "node" else "")
            )
            + (
                f", {self.spare_nodes} spare nodes (swap {self.swap_minutes:g} min)"
                if self.pool
                else ""
            )
        )


#: Scenario fields of the fast-restart presets (:meth:`Scenario.preset`, sources there).
PRESETS: dict[str, dict[str, float]] = {
    "in_process_restart": {"restart_minutes": 1.0},
    "in_memory_checkpoints": {"checkpoint_minutes": 0.05},
    "fast_restarts": {"restart_minutes": 1.0, "checkpoint_minutes": 0.05},
}


def _check_failure_law(law: Any) -> Any:
    """``failure_law`` checked: a name in :data:`FAILURE_LAWS` or a frozen distribution."""
    if isinstance(law, str) or law is None:
        return as_choice(law, "failure_law", FAILURE_LAWS)
    return validate_lifetime_law(law, "failure_law")


def _law_name(law: Any) -> str:
    """``"exponential"``, ``"fixed"`` or the scipy distribution's name."""
    return law if isinstance(law, str) else getattr(getattr(law, "dist", law), "name", "custom")


def _check_repairs(minutes: Any, law: Any, rejoin: Any) -> dict[str, Any]:
    """The normalised repair fields of a Scenario (see its docstring)."""
    return check_repair_fields(minutes, law, rejoin, unit="minutes")


def check_checkpoint_interval(minutes: Any) -> float:
    """Check a checkpoint interval (compute minutes between checkpoints, ``> 0``).

    Parameters
    ----------
    minutes : float
        Compute time ``tau`` between checkpoints, minutes.

    Returns
    -------
    float
        ``minutes`` as a float.

    Raises
    ------
    ValueError
        Naming ``checkpoint_interval_minutes`` if not a finite number ``> 0``.

    Examples
    --------
    >>> check_checkpoint_interval(30)
    30.0
    """
    return as_real(minutes, "checkpoint_interval_minutes", minimum=0.0, strict_minimum=True)


def _check_domains(
    groups: int, size: Any, mtbf: Any, lemon_fraction: Any, lemon_factor: Any
) -> dict[str, Any]:
    """The domain and lemon fields, checked (``None`` domains: today's model)."""
    if (size is None) != (mtbf is None):
        raise ValueError(
            "domain_size and domain_mtbf_hours must be given together (or both None), got "
            f"domain_size={size!r}, domain_mtbf_hours={mtbf!r}"
        )
    checked = {
        "domain_size": None if size is None else as_count(size, "domain_size", maximum=groups),
        "domain_mtbf_hours": None
        if mtbf is None
        else as_real(mtbf, "domain_mtbf_hours", minimum=0.0, strict_minimum=True),
        "lemon_fraction": as_real(lemon_fraction, "lemon_fraction", minimum=0.0, maximum=1.0),
        "lemon_rate_factor": as_real(lemon_factor, "lemon_rate_factor", minimum=1.0),
    }
    if checked["lemon_fraction"] == 0 and checked["lemon_rate_factor"] != 1:
        raise ValueError(
            f"lemon_rate_factor={checked['lemon_rate_factor']:g} needs lemons (set lemon_fraction)"
        )
    return checked
