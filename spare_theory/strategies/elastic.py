"""Elastic data parallelism and hot spares: groups drop out and rejoin without a global restart.

The contract of issue 21 (the model and the simulation both implement it,
and the checks compare them on it) is quoted in :class:`ElasticStrategy`;
hot spares are the same law with ``A = N - r`` active groups.

Where the issue is silent this package does what the systems do:

- **Quorum and spares** (torchft, ``torchft/manager.py``): ``Manager(
  min_replica_size=q)`` never lets the world shrink below ``q`` replica
  groups; ``WorldSizeMode.DYNAMIC`` uses every live group (elastic DP),
  ``WorldSizeMode.FIXED_WITH_SPARES`` keeps ``min_replica_size`` groups
  active and the others as spares contributing zero gradients.  So a hot
  spares plan's quorum defaults to its ``A = N - r`` active groups: it never
  computes on fewer than ``A`` and its batch is always exact; a smaller
  ``min_groups`` rides out exhausted spares on a shrinking batch (NVIDIA's
  resiliency extension does the same with its ``ActiveWorldSizeDivisibleBy``
  rank assignment: the healthy ranks beyond the active world size wait as
  reserve, and the active world shrinks once they are gone).
- **Spares are groups**: a spare fails like any group, and its failure
  changes the quorum's membership (torchft's spares take part in every
  quorum), so it stalls the job too; which group computes does not matter.
- **Heal** (torchft): a recovering group fetches the state of a live peer
  at the max step (``checkpoint_transport``) while the others train; it
  joins the next quorum, so its heal time adds to its time out and its
  rejoin is one membership change.
- **Compute time** ``tau`` is wall time in the compute phase, stalls
  included (as the published strategies' rejoin stalls): a checkpoint due
  during a stall starts on time and the stall runs on through it.
- **Wipe-out**: torchft's lighthouse issues no quorum below
  ``min_replicas``; the job then restarts from the last checkpoint (a
  global restart of ``R``).

``exact_batch``: elastic DP's is ``False`` (its default quorum
``ceil(N/2)`` lets the batch shrink to half); hot spares' is ``True``: the
default plan (quorum ``A``) keeps the whole global batch at every step, and
a plan with a smaller quorum reports ``exact_batch=False`` and its samples
skipped (:meth:`ElasticStrategy.batch_is_exact`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from .._validation import NoClosedFormError, as_count
from ..hourly.rules import QuorumRules
from ..lifetimes.laws import EXPONENTIAL
from ..placement.domains import failure_domains
from ..steps.elastic_run import run_elastic
from ..steps.scenario import StepScenario
from ..steps.trials import StepTrial
from .base import PATIENCE, Strategy

if TYPE_CHECKING:
    from ..cycles.base import CycleLaw
    from ..cycles.elastic import ElasticCycle
    from ..planning.search import Bracket, Leg
    from ..steps.cycles import StepCycle

# The models (cycle laws, step cycle tables, the planner's legs) are imported by the methods
# that build them: importing a strategy, as the event simulations do, loads no model.

__all__ = ["ElasticStrategy", "HotSparesStrategy"]

# Points of the grid over q (geometric from both ends) that brackets the best quorum.
_QUORUM_GRID = 8


class ElasticStrategy(Strategy):
    """Elastic DP (``"elastic"``, torchft's fault-tolerant HSDP): ``r = 0``, quorum ``min_groups``.

    Failed groups drop out at the next quorum, the others go on with a
    smaller global batch.  Its plan variable is the quorum ``min_groups``
    (default ``ceil(N/2)``), which :func:`spare_theory.optimal_plan`
    chooses.  The contract (issue 21), with ``A`` computing groups (``A = N``
    here, ``N - r`` for :class:`HotSparesStrategy`) and quorum ``q``:

    - ``N`` groups fail independently whenever they are up (also while stalled,
      checkpointing or restarting).
    - While computing with ``f`` groups down, work accrues at
      ``min(A, N - f) / N`` per wall hour (``A = N``: plain elastic;
      ``work_hours`` stays the failure-free time on all ``N`` groups, so skipped
      samples count as work not done).
    - A failure that leaves at least ``q`` groups up starts a stall of
      ``reconfigure_minutes`` (no progress); a failure or a rejoin during a
      stall starts the stall over.
    - Fewer than ``q`` groups up is a wipe-out: a global restart of ``R``,
      rollback to the last completed checkpoint, all groups up when it ends; a
      restart starts over only if fewer than ``q`` groups are up during it;
      groups that failed during a restart are down when it ends, and no stall
      follows a restart.
    - Checkpoints after every ``tau`` of compute time, cost ``delta``; kept iff
      complete before a wipe-out; failures and rejoins during a checkpoint do
      not interrupt it, and one stall follows it if any happened.
    - With repairs, a down group comes back after its repair time (plus
      ``heal_minutes``, the live recovery from a peer) and its rejoin starts a
      stall.
    - The run ends when the checkpoint that saves the last of ``W`` completes.

    What the issue leaves open is decided as the module docstring says.

    Examples
    --------
    >>> from spare_theory import strategy
    >>> s = strategy("elastic")
    >>> s.check_r(64, None), s.check_plan(64, 0, {}), s.exact_batch
    (0, {'min_groups': 32}, False)
    >>> s.cycle_law(64, 0)
    ElasticCycle(N=64, active=64, quorum=32)
    """

    name = "elastic"
    label = "Elastic DP"
    exact_batch = False
    plan_variables = ("min_groups",)
    r_variable: ClassVar[str | None] = None  # r is always 0: no spare groups

    # -- what a plan is -----------------------------------------------------------

    def check_r(self, N: int, r: Any) -> int:
        """``r`` must be ``None`` or 0: elastic DP holds no spare groups."""
        if r is not None and as_count(r, "r", minimum=0) != 0:
            raise ValueError(
                f"r must be 0 (or None) for strategy {self.name!r}: it holds no spares "
                f"(use 'hot_spares' for r spare groups), got {r}"
            )
        return 0

    def accepts(self, N: int, r: int) -> bool:
        return r == 0

    def redundancy_legs(self, N: int, *, flat: bool = False) -> Sequence[Leg | Bracket]:
        from ..planning.search import Leg

        return [Leg(0, 0)]

    def default_quorum(self, N: int, r: int) -> int:
        """``ceil(N/2)`` (the issue's default)."""
        return -(-N // 2)

    def check_plan(self, N: int, r: int, plan: Mapping[str, Any]) -> dict[str, Any]:
        """``min_groups``: the quorum ``q``, an integer ``1 <= q <= A = N - r``.

        Default :meth:`default_quorum` (``ceil(N/2)``; ``A`` for hot spares).

        Raises
        ------
        ValueError
            Naming ``min_groups`` (``q > N``, ``q`` above the ``A`` active
            groups, not a positive integer) or an unknown variable.

        Examples
        --------
        >>> from spare_theory import strategy
        >>> strategy("hot_spares").check_plan(64, 4, {"min_groups": None})
        {'min_groups': 60}
        >>> strategy("elastic").check_plan(64, 0, {"min_groups": 65})
        Traceback (most recent call last):
        ...
        ValueError: min_groups must be <= N = 64 groups, got 65
        """
        super().check_plan(N, r, plan)
        q = plan.get("min_groups")
        if q is None:
            return {"min_groups": self.default_quorum(N, r)}
        q = as_count(q, "min_groups")
        if q > N:
            raise ValueError(f"min_groups must be <= N = {N} groups, got {q}")
        if q > N - r:
            raise ValueError(
                f"min_groups = {q} is above the A = N - r = {N - r} active groups "
                f"(A < q: the job could never compute), with r = {r}"
            )
        return {"min_groups": q}

    def plan_search(self, N: int, r: int) -> tuple[str, np.ndarray] | None:
        """The quorum, on a grid geometric from both ends of ``[1, N - r]``."""
        A = N - r
        ends = np.geomspace(1, A, _QUORUM_GRID)
        grid = np.unique(np.round(np.concatenate([ends, A + 1 - ends])).astype(np.int64))
        return "min_groups", grid[(grid >= 1) & (grid <= A)]

    def batch_is_exact(self, N: int, r: int, plan: Mapping[str, Any]) -> bool:
        """``q >= A``: the job never computes on fewer than its ``A`` active groups."""
        return int(self.check_plan(N, r, plan)["min_groups"]) >= N - r

    # -- hour-level model -----------------------------------------------------------

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        """The law at the default quorum, without stalls or repairs (exponential lifetimes)."""
        if lifetimes is not EXPONENTIAL:
            raise NoClosedFormError(
                f"strategy {self.name!r} is modelled with exponential lifetimes only "
                "(failure_law='exponential')"
            )
        from ..cycles.elastic import elastic_cycle

        return elastic_cycle(N, N - r, self.default_quorum(N, r))

    def check_process(self, process: Any) -> None:
        """Refuse what the elastic law has no model for (failure laws, domains, lemons, ...).

        Raises
        ------
        ValueError
            Naming the fields the process keeps that the law does not model:
            ``failure_law`` other than exponential, ``domain_size``,
            ``lemon_fraction`` (under repairs all three are priced at their
            mean rate, :func:`~spare_theory.hourly.process.group_process`),
            ``planned_restart_failures`` or ``planned_restart_cost``, a
            ``rejoin_minutes`` (an elastic job stalls ``reconfigure_minutes``
            per rejoin and heals in ``heal_minutes``), a ``repair_law`` other
            than exponential (the down-count chain needs memoryless repairs:
            fixed 1 h repairs are 8.7 % off, ``docs/theory.md`` section 8).
        """
        scenario = process.scenario
        fields = {
            "failure_law": process.clocks,
            "domain_size": process.domains,
            "lemon_fraction": process.lemons,
            "planned_restart_failures": scenario.planned_restart_failures is not None,
            "planned_restart_cost": scenario.planned_restart_cost is not None,
            "rejoin_minutes": scenario.rejoin_minutes > 0,
            "repair_law": process.repair_minutes is not None
            and not (isinstance(process.repair_law, str) and process.repair_law == "exponential"),
        }
        clashes = [name for name, on in fields.items() if on]
        if clashes:
            raise NoClosedFormError(
                f"strategy {self.name!r} is not modelled with {', '.join(clashes)} set "
                "(an elastic job stalls reconfigure_minutes per membership change and "
                "heals a rejoining group in heal_minutes; exponential lifetimes and "
                "repairs, no domains, lemons or planned restarts)"
            )

    def prices_repairs(self, r: int) -> bool:
        """``True``: its own law reads the repairs (and the heal) at every ``r``."""
        return True

    def own_law(self, process: Any, r: int, **plan: Any) -> ElasticCycle:
        """:class:`~spare_theory.cycles.elastic.ElasticCycle` on the process's rate and costs.

        ``rho = lambda R``, ``s = lambda * reconfigure_minutes``, ``mu = 1 /
        (lambda (repair_minutes + heal_minutes))`` (0 without repairs), with
        ``lambda`` the process's priced rate; a burst's failures are one
        membership change (the process's ``merged``).
        """
        self.check_process(process)
        scenario, lam = process.scenario, process.rate_per_hour
        N = scenario.groups
        q = int(self.check_plan(N, r, plan)["min_groups"])
        out = process.repair_minutes
        mu = 0.0 if out is None else 60.0 / (lam * (out + scenario.heal_minutes))
        from ..cycles.elastic import elastic_cycle

        return elastic_cycle(
            N,
            N - r,
            q,
            rho=lam * scenario.restart_minutes / 60,
            stall=lam * scenario.reconfigure_minutes / 60,
            mu=mu,
            merged=process.merged,
        )

    def caveats(self, scenario: Any, r: int | None) -> list[str]:
        """The measured biases of the elastic models where they apply (docs/theory.md section 8).

        At the hour level without repairs, for a quorum below the active
        groups (elastic DP; hot spares' default quorum is all of them, and
        its cells show no bias); at the step level with repairs and a heal
        time.

        Examples
        --------
        >>> from spare_theory import Scenario, strategy
        >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20,
        ...               checkpoint_minutes=2, work_hours=100)
        >>> len(strategy("elastic").caveats(sc, 0)), strategy("hot_spares").caveats(sc, 4)
        (1, [])
        """
        if isinstance(scenario, StepScenario):
            if scenario.repairs and scenario.heal_seconds > 0:
                return [
                    "with repairs and a heal time the step-level model runs low: the time out "
                    "is taken exponential at its mean, so a rejoin falls into its own "
                    "failure's stall too often (docs/theory.md section 8, the step level)"
                ]
            return []
        N, spares = scenario.groups, r or 0  # elastic DP: no r (None) or r = 0
        if scenario.repair_minutes is not None or self.default_quorum(N, spares) >= N - spares:
            return []
        return [
            "without repairs the model runs a little above simulation (the quorum's "
            "fresh start is a term of the long-run expansion) and overstates "
            "samples_skipped (docs/theory.md section 8, model against simulation; "
            "verify=True measures it at the plan)"
        ]

    # -- step level ----------------------------------------------------------------

    def step_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        """The table of :mod:`spare_theory.steps.elastic_cycle` at ``A = N - r``, the quorum."""
        q = int(self.check_plan(scenario.groups, r, plan)["min_groups"])
        from ..steps.elastic_cycle import elastic_step_cycle

        return elastic_step_cycle(scenario, scenario.groups - r, q)

    def step_repair_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        """The same table: it follows the scenario's repairs (its rejoins stall the job)."""
        return self.step_cycle(scenario, r, **plan)

    def check_step_plan(self, scenario: StepScenario, r: int) -> None:
        """Refuse the step-level fields the elastic model and simulation do not cover.

        Raises
        ------
        ValueError
            Naming ``microbatches`` (above 1: only SPARe splits shards),
            ``rejoin_seconds`` (an elastic job's rejoin stalls
            ``reconfigure_seconds`` and heals in ``heal_seconds``) or a
            ``repair_law`` other than exponential (the down-count chain takes
            the repair time memoryless, as the hour-level model).
        """
        fields = {
            "microbatches": scenario.microbatches > 1,
            "rejoin_seconds": scenario.rejoin_seconds > 0,
            "repair_law": scenario.repairs
            and not (isinstance(scenario.repair_law, str) and scenario.repair_law == "exponential"),
        }
        clashes = [name for name, on in fields.items() if on]
        if clashes:
            raise NoClosedFormError(
                f"strategy {self.name!r} is not modelled at the step level with "
                f"{', '.join(clashes)} set (whole shards; a rejoin stalls reconfigure_seconds "
                "after heal_seconds; exponential repairs)"
            )

    def burst_wipeouts(
        self, N: int, r: int, *, domain_size: int, placement: str = "ruler", **plan: Any
    ) -> np.ndarray:
        """The domains of at least ``K = N - q + 1`` groups: their event leaves fewer than ``q`` up.

        Examples
        --------
        >>> from spare_theory import strategy
        >>> strategy("hot_spares").burst_wipeouts(16, 1, domain_size=3).tolist()
        [True, True, True, True, True, False]
        """
        q = int(self.check_plan(N, r, plan)["min_groups"])
        return np.bincount(failure_domains(N, domain_size)) >= N - q + 1

    def step_rule(
        self, scenario: StepScenario, r: int, *, rep_recovery: str, **plan: Any
    ) -> StepTrial:
        """:func:`~spare_theory.steps.elastic_run.run_elastic` with the plan's quorum."""
        self.check_step_plan(scenario, r)
        q = int(self.check_plan(scenario.groups, r, plan)["min_groups"])
        return functools.partial(run_elastic, quorum=q)

    # -- event simulation -------------------------------------------------------------

    def wipeout_units(
        self,
        N: int,
        r: int,
        *,
        placement: str = "ruler",
        domain_size: int | None = None,
        **plan: Any,
    ) -> tuple[np.ndarray, np.ndarray]:
        """One unit of all ``N`` groups, out once ``N - q + 1`` are down (``q``: the quorum)."""
        q = int(self.check_plan(N, r, plan)["min_groups"])
        return np.zeros((N, 1), dtype=np.int64), np.array([N - q + 1], dtype=np.int64)

    def failure_rules(
        self,
        N: int,
        r: int,
        *,
        microbatches: int,
        repairs: bool,
        pool: Any,
        placement: str = "ruler",
        domain_size: int | None = None,
        min_groups: int | None = None,
    ) -> QuorumRules:
        q = int(self.check_plan(N, r, {"min_groups": min_groups})["min_groups"])
        return QuorumRules(N, N - r, q)


class HotSparesStrategy(ElasticStrategy):
    """Hot spares (``"hot_spares"``): ``r`` spare groups, ``A = N - r`` compute, quorum ``A``.

    torchft's ``WorldSizeMode.FIXED_WITH_SPARES`` and NVIDIA's warm spares: a
    spare takes a failed group's place after the same stall, so the global
    batch stays exact while spares last; with the default quorum ``q = A``
    the failure of a group with no spare left is a wipe-out.  The planner
    walks ``r`` like a redundancy, from 1 up.  The contract is
    :class:`ElasticStrategy`'s with ``A = N - r`` computing groups: the
    global batch stays exact while spares last (``exact_batch``: always, at
    the default quorum ``A``).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> s = strategy("hot_spares")
    >>> s.check_r(64, 4), s.exact_batch, s.cycle_law(64, 4)
    (4, True, ElasticCycle(N=64, active=60, quorum=60))
    """

    name = "hot_spares"
    label = "Hot spares"
    exact_batch = True
    r_variable = "spare_groups"

    def check_r(self, N: int, r: Any) -> int:
        """``r`` spare groups, ``1 <= r <= N - 1`` (required)."""
        if r is None:
            raise ValueError(f"r is required for strategy {self.name!r} (spare groups, >= 1)")
        if N < 2:
            raise ValueError(f"strategy {self.name!r} needs N >= 2 groups, got N={N}")
        return as_count(r, "r", maximum=N - 1)

    def accepts(self, N: int, r: int) -> bool:
        return 1 <= r <= N - 1

    def redundancy_legs(self, N: int, *, flat: bool = False) -> Sequence[Leg | Bracket]:
        """A geometric bracket over ``[1, N - 1]``: the best ``r`` runs to thousands at 600k."""
        from ..planning.search import Bracket

        return [Bracket.geometric(1, N - 1, patience=PATIENCE)] if N >= 2 else []

    def default_quorum(self, N: int, r: int) -> int:
        """``A = N - r``: the world never shrinks below the active groups (FIXED_WITH_SPARES)."""
        return N - r

    def plan_search(self, N: int, r: int) -> tuple[str, np.ndarray] | None:
        """None: the quorum stays ``A`` (the exact-batch plan); the planner walks ``r``."""
        return None
