"""What a fault-tolerance strategy is: one class that every layer asks.

A strategy is one :class:`Strategy` subclass, registered by name
(:func:`spare_theory.register_strategy`, looked up with
:func:`spare_theory.strategy`).  It carries everything the rest of the package
needs to know about it, so that no other module compares a strategy's name:

- **what a plan is**: the redundancies it accepts (:meth:`Strategy.check_r`,
  :meth:`Strategy.accepts`), how the planner walks them
  (:meth:`Strategy.redundancy_legs`), whether it splits shards into
  micro-batches (:meth:`Strategy.check_microbatches`), its plan variables
  beyond ``r`` and the interval (:attr:`Strategy.plan_variables`, checked by
  :meth:`Strategy.check_plan`, searched as :meth:`Strategy.plan_search`
  says) and whether its plans keep the global batch exact
  (:meth:`Strategy.batch_is_exact`);
- **its hour-level model**: the one way to get its restart-cycle law,
  :meth:`Strategy.cycle_law` (bare, or on the process the model prices),
  built from the parts it writes: its bare law (:meth:`Strategy.base_law`,
  and the variants for micro-batches and correlated failures,
  :meth:`Strategy.split_law`, :meth:`Strategy.correlated_law`), which the
  mechanisms of :mod:`spare_theory.cycles` (repairs, planned restarts,
  bursts) extend, or its own law on a whole process
  (:meth:`Strategy.own_law`) when those mechanisms do not describe it;
  whether that law waits for failed groups (:meth:`Strategy.prices_repairs`);
  the scenario fields it does not model (:meth:`Strategy.check_process`);
- **its step-level model**: its cycle tables for the published step-level
  simulator's closed form (:meth:`Strategy.step_cycle`,
  :meth:`Strategy.step_repair_cycle`);
- **its event-simulation rules**: how the hour-level simulation's job reacts
  to groups going down and coming back (:meth:`Strategy.failure_rules`) and
  how the step-level simulation plays a trial (:meth:`Strategy.step_rule`).

A new strategy is one subclass in one file plus one
:func:`~spare_theory.register_strategy` call; the front doors
(:func:`spare_theory.time_to_train`, :func:`spare_theory.optimal_plan`,
:func:`spare_theory.simulate_training`) then take it by name on both kinds of
scenario.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from .._validation import NoClosedFormError, as_count
from ..hourly.scenario import Scenario
from ..lifetimes.laws import EXPONENTIAL
from ..placement.domains import domains_holding_a_unit
from ..steps.scenario import StepScenario
from .coverage import audit_caveat, audit_refusal
from .protocols import FailureRuleFactory, StepTrialRule, TrajectoryPool

if TYPE_CHECKING:  # the estimates are models: the simulations import this module without them
    from ..hourly.renewal import TrainingEstimate
    from ..steps.estimate import StepEstimate

if TYPE_CHECKING:
    from ..cycles.base import CycleLaw
    from ..planning.search import Bracket, Leg
    from ..steps.cycles import StepCycle

# The models (cycle laws, step cycle tables, the planner's legs) are imported by the methods
# that build them: importing a strategy, as the event simulations do, loads no model.

__all__ = ["PATIENCE", "Strategy", "single_units"]

#: An estimate of either level.
EstimateT = TypeVar("EstimateT", "TrainingEstimate", "StepEstimate")

#: Consecutive ``r`` without improvement after which a walk over ``r`` stops.
PATIENCE = 3


class Strategy(ABC):
    """A fault-tolerance strategy (see the module docstring).

    Subclasses set :attr:`name` and :attr:`label` and implement
    :meth:`base_law`, :meth:`failure_rules`, :meth:`step_cycle` and
    :meth:`step_rule`; the rest has defaults.  What the methods return
    follows the protocols of :mod:`spare_theory.strategies.protocols`;
    :data:`~spare_theory.strategies.parts.PARTS` lists every part, and
    :func:`spare_theory.check_strategy` checks a subclass
    (``examples/standby.py`` is one written from scratch).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> rep = strategy("rep")
    >>> isinstance(rep, Strategy), rep.name, rep.label, rep.check_r(100, 3.0)
    (True, 'rep', 'Rep+CKPT', 3)
    """

    #: Registered name (``time_to_train(scenario, name, ...)``).
    name: ClassVar[str]
    #: Name in tables and figures (``"SPARe+CKPT"``).
    label: ClassVar[str]
    #: Whether every step trains the whole global batch (``False``: an elastic
    #: job skips the samples of the groups that are down).
    exact_batch: ClassVar[bool] = True
    #: What the plan's ``r`` is, as the CLI and its JSON name it: ``"r"`` (a
    #: redundancy), another key (hot spares' ``"spare_groups"``), or ``None``
    #: for a strategy without one (CKPT-only, elastic DP): its plans and
    #: estimates report ``r = None``, while its methods take the one ``r``
    #: :meth:`check_r` returns.
    r_variable: ClassVar[str | None] = "r"
    #: Whether the job outlives a group's failure (``False``: every failure is a
    #: wipe-out, so repairs and a spare pool change nothing, CKPT-only).
    waits_for_groups: ClassVar[bool] = True

    def cache_key(self) -> tuple[str, str]:
        """Caches of laws and searches are keyed on the strategy's class and name."""
        return (type(self).__qualname__, self.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # -- what a plan is -------------------------------------------------------

    def check_r(self, N: int, r: Any) -> int:
        """``r`` checked for ``N`` groups: an integer ``1 <= r <= N`` (required).

        Raises
        ------
        ValueError
            Naming ``r``: missing, not an integer, out of range, or refused by
            :meth:`accepts` (which names its reason).
        """
        if r is None:
            raise ValueError(f"r is required for strategy {self.name!r} (an integer >= 1)")
        r = as_count(r, "r", maximum=N)
        self.require(N, r)
        return r

    def accepts(self, N: int, r: int) -> bool:
        """Whether ``r`` is a plan of this strategy at ``N`` (a walk over ``r`` stops where not)."""
        return 1 <= r <= N

    def require(self, N: int, r: int) -> None:
        """Raise ``ValueError`` naming ``N`` and ``r`` if :meth:`accepts` refuses ``r``."""
        if not self.accepts(N, r):
            raise ValueError(f"r={r} is not a plan of strategy {self.name!r} at N={N}")

    def redundancy_legs(self, N: int, *, flat: bool = False) -> Sequence[Leg | Bracket]:
        """How the planner walks ``r``: from 1 upwards, stopping after 3 ``r`` without improvement.

        Legs (:class:`~spare_theory.planning.search.Leg`) or geometric brackets
        searched by :func:`~spare_theory.planning.search.minimize_integer`
        (:class:`~spare_theory.planning.search.Bracket`), walked in order.

        ``flat``: hours are known to be nearly flat in ``r`` (repairs); a
        strategy may then scan further.
        """
        from ..planning.search import Leg

        return [Leg(1, N, PATIENCE)]

    def check_microbatches(self, microbatches: int) -> int:
        """``microbatches`` checked: only ``1`` unless the strategy splits shards.

        Raises
        ------
        ValueError
            Naming ``microbatches``.
        """
        m = as_count(microbatches, "microbatches", minimum=1)
        if m != 1:
            raise ValueError(
                f"microbatches must be 1 for strategy {self.name!r} (only SPARe splits a "
                f"failed group's shard), got {m}"
            )
        return m

    #: Plan variables beyond ``r`` and the checkpoint interval: keywords of the
    #: front doors (``time_to_train(..., min_groups=q)``, which refuse any other
    #: name), keys of :attr:`Plan.variables <spare_theory.planning.plan.Plan.variables>`,
    #: and keywords of every method that takes ``**plan``.
    plan_variables: ClassVar[tuple[str, ...]] = ()

    def check_plan(self, N: int, r: int, plan: Mapping[str, Any]) -> dict[str, Any]:
        """The plan variables ``plan`` checked at ``N`` groups and ``r``, defaults filled in.

        ``plan`` names only variables of :attr:`plan_variables` (the front
        doors refuse the others), ``None`` standing for "not given"; the
        result has a value for each of them.  The default: no variables.

        Raises
        ------
        ValueError
            Naming a variable whose value is out of range.

        Examples
        --------
        >>> from spare_theory import strategy
        >>> strategy("spare").check_plan(64, 4, {}), strategy("elastic").check_plan(64, 0, {})
        ({}, {'min_groups': 32})
        """
        return {}

    def plan_search(self, N: int, r: int) -> tuple[str, np.ndarray] | None:
        """The plan variable the planner optimises at each ``r``, with the grid that brackets it.

        ``(name, ascending integer grid)``, searched by
        :func:`~spare_theory.planning.search.minimize_integer`; ``None`` (the
        default): every plan variable keeps its default
        (:meth:`check_plan`).
        """
        return None

    def batch_is_exact(self, N: int, r: int, plan: Mapping[str, Any]) -> bool:
        """Whether every step of the plan trains the whole batch (default: :attr:`exact_batch`)."""
        return self.exact_batch

    def caveats(self, scenario: Any, r: int | None) -> list[str]:
        """The biases of the strategy's models measured in the docs that apply to a plan.

        The plan is the strategy at ``r`` on ``scenario`` (either kind).
        Sentences with the measured size and where the docs measure it; a
        caveat is given only where its measurement applies.  The front doors
        attach them to the estimates and plans they return (``caveats``);
        none by default.
        """
        return []

    # -- hour-level model ------------------------------------------------------

    def check_process(self, process: Any) -> None:
        """Raise ``ValueError`` naming the fields the strategy's closed form does not model.

        ``process``: the :class:`~spare_theory.hourly.process.GroupProcess` the
        hour-level model prices (what it keeps of the scenario's fields after
        its approximations).  Asked by the hour-level model only: the event
        simulations play every field.  The default refuses none (the
        published strategies' other refusals live in the model).
        """
        return None

    def model_refusal(self, scenario: Any) -> str | None:
        """Why no closed form of the strategy covers ``scenario`` (``None``: one may).

        :func:`spare_theory.optimal_plan` then plans by the event simulation
        (``Plan.method == "simulation"``) and says this reason.  The default
        is the message of :meth:`check_process`'s refusal of the process
        the model prices (:func:`~spare_theory.hourly.process.group_process`:
        a spare pool and non-exponential repairs, laws and lemons mapped onto
        exponential ones, as :func:`~spare_theory.time_to_train` prices
        them); a strategy may also name a region where its closed form is
        measured to be off.  Then the audit's: where the strategy's audited
        model answers on scenarios with these fields are off
        (:func:`~spare_theory.strategies.coverage.audit_refusal`).

        Examples
        --------
        >>> from spare_theory import Scenario, strategy
        >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
        ...               work_hours=10, failure_law="weibull")
        >>> strategy("rep").model_refusal(sc) is None, strategy("elastic").model_refusal(sc)[:30]
        (True, "strategy 'elastic' is not mode")
        """
        reason = self._closed_form_refusal(scenario)
        return reason if reason is not None else audit_refusal(self.name, scenario)

    def _closed_form_refusal(self, scenario: Any) -> str | None:
        """Where the closed forms do not reach or are measured off (:meth:`model_refusal`)."""
        if not isinstance(scenario, Scenario):
            return None
        # Imported here: the simulations import this module and load no model.
        from ..hourly.process import group_process

        try:
            process = group_process(scenario)
        except ValueError:  # as the model does: a law ending at every failure may price it
            process = group_process(scenario, repairs=False)
        try:
            self.check_process(process)
        except ValueError as exc:
            return str(exc)
        if scenario.exponential or scenario.renewal != "group":
            return None
        grows = self._step_cost_grows(scenario.groups)
        if grows and scenario.repair_minutes is not None:
            return (
                "a non-exponential failure_law on group clocks (renewal='group') with repairs "
                "has no closed form for a step cost that grows with the groups down: the "
                "repair model prices the groups as exponential at their outage rate and "
                "misses the young clocks of rejoined groups and the shape of the down time "
                "(measured beyond 3 % in docs/theory.md section 4); planned by the event "
                "simulation"
            )
        if grows and scenario.microbatches > 1:
            return (
                "a non-exponential failure_law on group clocks (renewal='group') has no "
                "closed form within 3 % for a step cost that grows with the groups down "
                "split into micro-batches: the split load adds to the stationary-clock bias "
                "(measured beyond 3 % in docs/theory.md section 4); planned by the event "
                "simulation"
            )
        if scenario.pool and self.waits_for_groups:
            return (
                "a non-exponential failure_law on group clocks (renewal='group') through a "
                "spare pool has no closed form within 3 %: the groups are priced as "
                "exponential at their outage rate, with exponential repairs of the pool's "
                "mean down time (measured beyond 3 % or 3 SE in docs/theory.md section 4); "
                "planned by the event simulation"
            )
        return None

    def _step_cost_grows(self, N: int) -> bool:
        """Whether the strategy's step cost grows with the groups down (its law at ``r = 2``)."""
        try:
            return bool(self.base_law(N, 2).cost_grows)
        except ValueError:  # no r = 2 (CKPT-only): a constant step cost
            return False

    def cycle_law(self, N: int, r: int, process: Any = None, **plan: Any) -> CycleLaw:
        """The strategy's restart-cycle law at ``N`` groups and redundancy ``r``:
        the one way to get one.

        Without ``process``: the bare law (exponential lifetimes, no repairs,
        domains or lemons; :meth:`base_law`).  With ``process`` (a
        :class:`~spare_theory.hourly.process.GroupProcess` of ``N`` groups):
        the law the hour-level model prices on it
        (:func:`~spare_theory.hourly.model.process_law`): the strategy's own
        law on the whole process (:meth:`own_law`), else its bare law extended
        by the process's mechanisms in one declared order (lifetimes, domains
        and lemons, planned restarts, repairs), then the domain events that
        alone wipe out.  ``plan``: the checked plan variables
        (:meth:`check_plan`).

        Examples
        --------
        >>> from spare_theory import Scenario, strategy
        >>> from spare_theory.hourly.process import group_process
        >>> strategy("rep").cycle_law(100, 2)
        Rep(N=100, r=2)
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20,
        ...               checkpoint_minutes=5, work_hours=48, repair_minutes=30)
        >>> type(strategy("rep").cycle_law(128, 2, group_process(sc))).__name__
        'RepairCycle'
        """
        if process is None:
            return self.base_law(N, r)
        if process.groups != N:
            raise ValueError(f"N must be the process's {process.groups} groups, got N={N}")
        from ..hourly.model import process_law

        return process_law(process, self, r, plan)

    def prices_repairs(self, r: int) -> bool:
        """Whether the hour-level law at ``r`` waits for failed groups, so that the
        model prices their repairs, the spare pool and the outages
        (:func:`~spare_theory.hourly.process.group_process`'s ``repairs``).

        By default: a job that outlives a group's failure
        (:attr:`waits_for_groups`) at ``r > 1``; at ``r = 1`` every failure
        ends the cycle and the restart brings every group back, so no group
        waits for a repair.  A strategy with its own law on the whole process
        (:meth:`own_law`) that reads the repairs at every ``r`` says ``True``.
        """
        return self.waits_for_groups and r > 1

    def own_law(self, process: Any, r: int, **plan: Any) -> CycleLaw | None:
        """The strategy's own cycle law on a whole priced process (``None``, the
        default: :meth:`base_law` extended by the process's mechanisms,
        :meth:`cycle_law`).

        ``process``: the :class:`~spare_theory.hourly.process.GroupProcess` the
        model prices (its rate, repairs, and ``merged``: the share of a
        group's failures that come with another of the same folded burst).
        ``plan``: the checked plan variables (:meth:`check_plan`).
        """
        return None

    @abstractmethod
    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        """The bare restart-cycle law at ``N`` groups and redundancy ``r`` (no repairs),
        the part :meth:`cycle_law` extends.

        ``lifetimes`` is the group lifetime law in dimensionless time (the
        exponential law, stationary renewal clocks, lemons).
        """

    def split_law(
        self, N: int, r: int, microbatches: int, lifetimes: Any = EXPONENTIAL
    ) -> CycleLaw:
        """The bare law when a failed group's shard is split into ``microbatches`` pieces."""
        self.check_microbatches(microbatches)
        return self.base_law(N, r, lifetimes)

    def correlated_law(
        self,
        N: int,
        r: int,
        *,
        domain_size: int | None,
        domain_rate_ratio: float,
        lifetimes: Any,
        placement: str = "ruler",
    ) -> CycleLaw:
        """The bare law under failure domains (``domain_size`` groups failing at once at
        ``domain_rate_ratio`` times a group's own rate) or lemon ``lifetimes`` (``r >= 2``),
        on the scenario's ``placement`` (:attr:`~spare_theory.hourly.scenario.Scenario.placement`).

        Raises
        ------
        ValueError
            For a strategy with no such model.
        """
        raise NoClosedFormError(
            f"strategy {self.name!r} is not modelled under failure domains or lemons "
            "(domain_size, lemon_fraction): drop them, or use 'spare' or 'ckpt' "
            "(simulate_training runs the combination)"
        )

    # -- step-level model -----------------------------------------------------------

    @abstractmethod
    def step_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        """The cycle table of the step-level closed form at ``r`` (a scenario without repairs).

        ``plan``: the strategy's plan variables (:meth:`check_plan`).
        """

    def step_repair_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        """The step-level cycle table when failed workers are repaired and rejoin."""
        raise NoClosedFormError(f"strategy {self.name!r} has no step-level model with repairs")

    def check_step_plan(self, scenario: StepScenario, r: int) -> None:
        """Refuse step-level plans the strategy's model and simulation do not cover (none here)."""
        return None

    # -- event simulations --------------------------------------------------------

    @abstractmethod
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
    ) -> FailureRuleFactory:
        """A factory of the hour-level simulation's failure rule, one rule per cycle.

        ``rules(rng)`` returns a fresh rule at each cycle's start (all groups
        up): an object with ``throughput`` (work per hour relative to the
        failure-free run), ``fail(group) -> bool`` (True at a wipe-out),
        ``rejoin(group)`` (with repairs), ``needs_group`` (whether the rule
        must know which group failed), ``cost_grows`` and ``reconfigures``
        (the elastic stall semantics of :mod:`spare_theory.hourly.simulation`).
        ``pool``: SPARe's trajectory pool (``None``: the exact controller).
        ``placement`` and ``domain_size``: the scenario's
        :attr:`~spare_theory.hourly.scenario.Scenario.placement` and failure
        domains, for a strategy whose layout follows them (SPARe).  A
        strategy with plan variables takes them as keywords too.  The
        protocols: :class:`~spare_theory.strategies.protocols.FailureRuleFactory`,
        :class:`~spare_theory.strategies.protocols.FailureRule`.
        """

    @abstractmethod
    def step_rule(
        self, scenario: StepScenario, r: int, *, rep_recovery: str, **plan: Any
    ) -> StepTrialRule:
        """The step-level simulation's trial: ``trial(scenario, r, k, rng, repairs=...)``.

        A picklable callable (trials may run on a process pool) returning a
        run's totals (:mod:`spare_theory.steps.runs`).  ``rep_recovery``: the
        published controller's quirks for replica sets (``"published"``) or
        not (``"all"``); strategies without replica sets ignore it.
        ``plan``: the strategy's plan variables (:meth:`check_plan`).  A trial
        that also takes ``max_seconds`` (and hands it to
        :class:`~spare_theory.steps.runs.StepRun`) stops a hopeless run at the
        simulation search's or the audit's horizon; one that does not plays
        every run to its end.
        """

    def wipeout_units(
        self,
        N: int,
        r: int,
        *,
        placement: str = "ruler",
        domain_size: int | None = None,
        **plan: Any,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(units, size)``: the units each group belongs to, and each unit's size.

        A wipe-out is a unit with ``size`` of its members down at once (the
        time to it with repairs: :func:`spare_theory.simulate_time_to_wipeout`):
        all of them, but for the elastic strategies' one unit of every group,
        out once fewer than the quorum are up; ``units`` has shape ``(N, units
        per group)``; ``placement`` and ``domain_size`` as for
        :meth:`failure_rules`, ``plan`` the strategy's plan variables.

        Raises
        ------
        ValueError
            For a strategy whose wipe-out is not a unit all down.
        """
        raise ValueError(
            f"strategy {self.name!r} has no wipe-out units (its wipe-out is not a set of "
            "groups all down at once)"
        )

    def burst_wipeouts(
        self, N: int, r: int, *, domain_size: int, placement: str = "ruler", **plan: Any
    ) -> np.ndarray:
        """Which failure domains end a healthy cycle by their event alone (a bool per domain).

        Domains are contiguous blocks of ``domain_size`` groups
        (:func:`~spare_theory.placement.domains.failure_domains`); the model
        prices their events as wipe-outs where repairs fold the other domain
        events into the groups' rate
        (:class:`~spare_theory.cycles.bursts.BurstWipeouts`).  Default: the
        domains holding every member of one of :meth:`wipeout_units`.
        ``plan``: the strategy's plan variables.

        Examples
        --------
        >>> from spare_theory import strategy
        >>> strategy("rep").burst_wipeouts(8, 2, domain_size=4).tolist()
        [False, False]
        >>> strategy("ckpt").burst_wipeouts(8, 1, domain_size=4).tolist()
        [True, True]
        """
        units, _ = self.wipeout_units(N, r, placement=placement, domain_size=domain_size)
        return domains_holding_a_unit(units, domain_size)

    def trajectory_pool(
        self,
        N: int,
        r: int,
        *,
        size: int,
        seed: Any,
        microbatches: int,
        placement: str = "ruler",
        domain_size: int | None = None,
    ) -> TrajectoryPool | None:
        """Failure trajectories drawn once for the whole simulation (``None``: none needed);
        ``placement`` and ``domain_size`` as for :meth:`failure_rules`."""
        return None

    # -- results --------------------------------------------------------------------

    def with_caveats(self, estimate: EstimateT, scenario: Any) -> EstimateT:
        """``estimate`` of a plan on ``scenario`` with its :meth:`caveats` attached.

        What the front doors return.  The estimate's own caveats (the
        approximations the hour-level model applied,
        :attr:`~spare_theory.hourly.process.GroupProcess.caveats`) come first,
        then the strategy's :meth:`caveats`.  The last caveat is
        what the shipped audit measured for the strategy's model answers on
        scenarios with the same optional fields
        (:func:`~spare_theory.strategies.coverage.audit_caveat`).

        Examples
        --------
        >>> from spare_theory import Scenario, strategy, time_to_train
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
        ...               failure_law="weibull")
        >>> est = time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=60)
        >>> len(est.caveats), est.caveats[-1][:5], strategy("spare").with_caveats(est, sc) == est
        (2, 'audit', True)
        """
        # The model's own approximations first (hourly.compose), then the strategy's, and
        # last what the audit measured for model answers like this one (strategies.coverage).
        measured = audit_caveat(self.name, scenario)
        kept: tuple[str, ...] = tuple(
            c for c in estimate.caveats if c.startswith("model approximation (")
        )
        return dataclasses.replace(
            estimate, caveats=(*kept, *self.caveats(scenario, estimate.r), measured)
        )


def single_units(N: int) -> tuple[np.ndarray, np.ndarray]:
    """Every group alone is a unit: any failure is a wipe-out (no redundancy).

    Examples
    --------
    >>> units, size = single_units(3)
    >>> units.ravel().tolist(), size.tolist()
    ([0, 1, 2], [1, 1, 1])
    """
    return np.arange(N)[:, None], np.ones(N, dtype=np.int64)
