"""What a strategy returns, as typed protocols, and the one table of a strategy's parts.

Every layer asks a :class:`~spare_theory.strategies.base.Strategy` for
objects it then uses without knowing the strategy: the hour-level cycle law
(:class:`HourlyCycleLaw`, what :mod:`spare_theory.hourly.renewal` and the
mechanisms of :mod:`spare_theory.cycles` read), the hour-level failure rule
and its factory (:class:`FailureRule`, :class:`FailureRuleFactory`, what
:mod:`spare_theory.hourly.simulation` plays), the step-level cycle table
(:class:`StepCycleTable`, what :mod:`spare_theory.steps.estimate` reads),
the step-level trial (:class:`StepTrialRule`, what
:mod:`spare_theory.steps.trials` runs) and SPARe's trajectory pool
(:class:`TrajectoryPool`).  The built-in classes
(:class:`~spare_theory.cycles.base.CycleLaw`,
:class:`~spare_theory.steps.cycles.StepCycle`, the rules of
:mod:`spare_theory.hourly.rules`) satisfy them; a new strategy may return
anything that does.

:data:`PARTS` lists every part of a strategy once: whether it is required,
how :func:`spare_theory.check_strategy` calls it on a small probe scenario
(:class:`Probe`) and what the result must satisfy.  :func:`strategy_problems`
walks that table; the registry (:func:`spare_theory.check_strategy`) adds the
name clashes and raises.  Changing the interface of
:class:`~spare_theory.strategies.base.Strategy` is changing this table.

The module is a little over 500 lines: each protocol and each part, with
the probe that checks it, is written once here, so that the interface has
one place to change.
"""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ..hourly.compose import group_process
from ..hourly.scenario import Scenario
from ..lifetimes.laws import EXPONENTIAL
from ..steps.scenario import StepScenario

__all__ = [
    "PARTS",
    "PROBE_GROUPS",
    "FailureRule",
    "FailureRuleFactory",
    "HourlyCycleLaw",
    "Part",
    "Probe",
    "StepCycleTable",
    "StepTrialRule",
    "TrajectoryPool",
    "strategy_problems",
]


@runtime_checkable
class HourlyCycleLaw(Protocol):
    """A restart cycle in dimensionless time ``u = lambda t``: what the hour-level model reads.

    ``logq(u) = log P(no wipe-out by u)`` (0 at ``u = 0``, non-increasing) and
    ``theta(u)``, the expected throughput given no wipe-out, in ``(0, 1]``
    relative to the failure-free run without redundancy.  The hooks below
    them are what repairs and planned restarts ask; a law without a model for
    one raises ``ValueError``.  :class:`~spare_theory.cycles.base.CycleLaw`
    gives every member but ``logq`` and ``theta`` a default.
    """

    N: int
    r: int
    name: str
    max_segments: int | None
    planned: bool
    cost_grows: bool
    exact_batch: bool
    constant_hazard: float | None

    def logq(self, u: ArrayLike) -> np.ndarray: ...
    def theta(self, u: ArrayLike) -> np.ndarray: ...
    def batch_theta(self, u: ArrayLike) -> np.ndarray: ...
    def checkpoint_loss(
        self, start: np.ndarray, d: float
    ) -> tuple[np.ndarray, np.ndarray] | None: ...
    def planned_hazard(self, u: ArrayLike) -> np.ndarray: ...
    def cache_key(self) -> tuple: ...
    def u_at(self, level: float) -> float: ...
    def restart_terms(self, rho: float) -> tuple[float, float, float]: ...
    def mean_time_to_wipeout(self, mu: float) -> float | None: ...
    def repair_wipeout_rate(self, mu: float) -> float: ...
    def repair_log_q(self, u: np.ndarray, mu: float) -> np.ndarray: ...
    def throughput_at_down_share(self, p: np.ndarray) -> np.ndarray: ...
    def count_law(self) -> tuple[np.ndarray, np.ndarray]: ...


@runtime_checkable
class FailureRule(Protocol):
    """The state of one restart cycle in the hour-level event simulation (all groups up at start).

    ``throughput``: work per hour relative to the failure-free run;
    ``fail(group)``: ``True`` at a wipe-out; ``rejoin(group)``: a repaired
    group is back; ``needs_group``: whether the simulation must say which
    group failed; ``cost_grows``: whether ``1 / throughput`` can grow (only
    then can a planned restart on the step cost fire); ``repairable``:
    whether repairs change anything; ``reconfigures``: membership changes
    stall the job (the elastic contract), and then ``batch_throughput`` is
    read too.
    """

    throughput: float
    needs_group: bool
    cost_grows: bool
    repairable: bool
    reconfigures: bool

    def fail(self, group: int) -> bool: ...
    def rejoin(self, group: int) -> None: ...


@runtime_checkable
class FailureRuleFactory(Protocol):
    """A picklable factory of failure rules: ``factory(rng)`` gives a fresh rule per cycle."""

    def __call__(self, rng: np.random.Generator) -> FailureRule: ...


@runtime_checkable
class StepCycleTable(Protocol):
    """A strategy's restart cycle on a time grid (seconds since the resume): the step-level model.

    The fields of :class:`~spare_theory.steps.cycles.StepCycle`, which says
    what each one is.
    """

    t: np.ndarray
    log_q: np.ndarray
    tau: np.ndarray
    phi: np.ndarray
    partial: np.ndarray
    noticed: np.ndarray
    failed: np.ndarray
    post: np.ndarray
    tau0: float
    ckpt: float
    useful: float
    burst_handling: float
    burst_failures: float
    membership: Any

    def q_integral(self, weight: str | None = None) -> np.ndarray: ...


@runtime_checkable
class StepTrialRule(Protocol):
    """A picklable step-level trial: ``trial(scenario, r, k, rng, repairs=...)`` returns a run's
    totals (:data:`spare_theory.steps.runs.RUN_FIELDS`)."""

    def __call__(
        self, scenario: StepScenario, r: int, k: int, rng: Any, **kwargs: Any
    ) -> tuple: ...


@runtime_checkable
class TrajectoryPool(Protocol):
    """Failure trajectories drawn once per simulation (a sequence; its items are the strategy's)."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Any: ...


#: Groups of the probe scenarios: small, so that a probe takes milliseconds.
PROBE_GROUPS = 8


@dataclass(frozen=True)
class Probe:
    """The small scenario :func:`strategy_problems` calls a strategy's parts on.

    ``N`` groups of an hour-level :attr:`scenario` and a step-level
    :attr:`step_scenario`; :attr:`r` is the smallest ``r >= 2`` the strategy
    accepts at ``N`` (else the smallest it accepts) and :attr:`plan` its
    default plan variables there.
    """

    r: int
    plan: Mapping[str, Any] = field(default_factory=dict)
    N: int = PROBE_GROUPS
    scenario: Scenario = field(
        default_factory=lambda: Scenario(
            gpus=8 * PROBE_GROUPS,
            gpus_per_group=8,
            gpu_mtbf_hours=400.0,
            restart_minutes=20,
            checkpoint_minutes=5,
            work_hours=10,
        )
    )
    step_scenario: StepScenario = field(
        default_factory=lambda: StepScenario(
            groups=PROBE_GROUPS,
            steps=50,
            allreduce_seconds=1.0,
            failure_law=stats.expon(scale=36_000.0),
        )
    )


@dataclass(frozen=True)
class Part:
    """One part of a strategy: a class attribute or a method.

    Attributes
    ----------
    name : str
        The attribute's name on the strategy.
    required : bool
        Whether a strategy must define it (the base class has no default).
    what : str
        What it is, in a few words (said in the error).
    value_type : type or tuple of type
        A class attribute's type (``()`` for a method).
    call : callable or None
        ``call(strategy, probe)`` calls the method on the probe; ``None``:
        only its presence is checked.
    check : callable or None
        ``check(result)`` returns what is wrong with the result, or ``None``.
    may_refuse : bool
        A ``ValueError`` on the probe is the strategy refusing (no such
        model), not a fault.
    """

    name: str
    required: bool
    what: str
    value_type: type | tuple[type, ...] = ()
    call: Callable[[Any, Probe], Any] | None = None
    check: Callable[[Any], str | None] | None = None
    may_refuse: bool = False


def _members(protocol: type) -> list[str]:
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {k for k, v in vars(protocol).items() if callable(v) and not k.startswith("_")}
    if "__call__" in vars(protocol):
        names.add("__call__")
    return sorted(names)


def _conforms(protocol: type, *, picklable: bool = False) -> Callable[[Any], str | None]:
    """A check that a result has every member of ``protocol`` (and pickles, if asked)."""

    def check(result: Any) -> str | None:
        missing = [m for m in _members(protocol) if not hasattr(result, m)]
        if missing:
            return (
                f"returned a {type(result).__name__}, not a {protocol.__name__} "
                f"(missing {', '.join(missing)})"
            )
        if picklable:
            try:
                pickle.dumps(result)
            except Exception as exc:  # any pickling failure is the finding
                return f"returned a {type(result).__name__} that does not pickle ({exc})"
        return None

    return check


def _instance(kind: type | tuple[type, ...], what: str) -> Callable[[Any], str | None]:
    def check(result: Any) -> str | None:
        if isinstance(result, kind):
            return None
        return f"returned a {type(result).__name__}, not {what}"

    return check


def _optional(inner: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda result: None if result is None else inner(result)


def _cycle_law(law: Any) -> str | None:
    """A law with every member, ``log Q(0) = 0``, non-increasing ``log Q``, ``theta`` in (0, 1]."""
    missing = _conforms(HourlyCycleLaw)(law)
    if missing:
        return missing
    u = np.array([0.0, 0.01, 0.1, 1.0])
    log_q, theta = np.asarray(law.logq(u), float), np.asarray(law.theta(u), float)
    if log_q.shape != u.shape or theta.shape != u.shape:
        return "returned a law whose logq or theta does not keep the shape of u (broadcast)"
    if abs(log_q[0]) > 1e-9 or np.any(np.diff(log_q) > 1e-12) or np.any(log_q > 1e-12):
        return f"returned a law whose logq is not 0 at u = 0 and non-increasing: {log_q}"
    if not np.all((theta > 0) & (theta <= 1 + 1e-12)):
        return f"returned a law whose theta is not in (0, 1]: {theta}"
    return None


def _rule_factory(factory: Any) -> str | None:
    """A picklable factory whose rule has every member (``batch_throughput`` if it reconfigures)."""
    wrong = _conforms(FailureRuleFactory, picklable=True)(factory)
    if wrong:
        return wrong
    rule = factory(np.random.default_rng(0))
    wrong = _conforms(FailureRule)(rule)
    if wrong:
        return f"gave a factory whose rule {wrong.removeprefix('returned ')}"
    if rule.reconfigures and not hasattr(rule, "batch_throughput"):
        return "gave a rule that reconfigures without batch_throughput"
    if not 0 < rule.throughput <= 1:
        return f"gave a rule whose throughput at the start, {rule.throughput}, is not in (0, 1]"
    return None


def _units(result: Any) -> str | None:
    ok = isinstance(result, tuple) and len(result) == 2
    if ok and all(isinstance(a, np.ndarray) for a in result):
        return None
    return "returned something other than (units, size), two numpy arrays"


def _strs(result: Any) -> str | None:
    if isinstance(result, list | tuple) and all(isinstance(s, str) for s in result):
        return None
    return f"returned a {type(result).__name__}, not a list of str"


def _legs(result: Any) -> str | None:
    # The planner's legs are loaded by the check only: importing a strategy loads no planner.
    from ..planning.search import Bracket, Leg

    if isinstance(result, Sequence) and all(isinstance(leg, Leg | Bracket) for leg in result):
        return None
    return "returned something other than a sequence of Leg or Bracket"


def _search(result: Any) -> str | None:
    if result is None or (
        isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str)
    ):
        return None
    return "returned something other than None or (name, integer grid)"


def _nothing(result: Any) -> str | None:
    return None if result is None else f"returned {type(result).__name__}, not None"


#: Every part of a strategy, in the order of :class:`~spare_theory.strategies.base.Strategy`.
#: Required parts have no default in the base class; a part that ``may_refuse``
#: raises ``ValueError`` where the strategy has no such model.
PARTS: tuple[Part, ...] = (
    Part("name", True, "a non-empty str: its registered name", str),
    Part("label", True, "a str: its name in tables", str),
    Part("exact_batch", False, "a bool: whether every step trains the whole batch", bool),
    Part("plan_variables", False, "a tuple of str: its plan variables beyond r", tuple),
    Part("r_variable", False, "a str or None: what the CLI calls its r", (str, type(None))),
    Part(
        "check_r",
        False,
        "r checked for N groups",
        call=lambda s, p: s.check_r(p.N, p.r),
        check=_instance(int, "an int"),
    ),
    Part(
        "accepts",
        False,
        "whether r is a plan at N",
        call=lambda s, p: s.accepts(p.N, p.r),
        check=_instance(bool, "a bool"),
    ),
    Part(
        "redundancy_legs",
        False,
        "how the planner walks r",
        call=lambda s, p: s.redundancy_legs(p.N, flat=False),
        check=_legs,
    ),
    Part(
        "check_microbatches",
        False,
        "microbatches checked",
        call=lambda s, p: s.check_microbatches(1),
        check=_instance(int, "an int"),
    ),
    Part(
        "check_plan",
        False,
        "the plan variables checked, defaults filled in",
        call=lambda s, p: s.check_plan(p.N, p.r, {}),
        check=_instance(dict, "a dict"),
    ),
    Part(
        "plan_search",
        False,
        "the plan variable the planner searches",
        call=lambda s, p: s.plan_search(p.N, p.r),
        check=_search,
    ),
    Part(
        "batch_is_exact",
        False,
        "whether a plan trains the whole batch",
        call=lambda s, p: s.batch_is_exact(p.N, p.r, p.plan),
        check=_instance(bool, "a bool"),
    ),
    Part(
        "caveats",
        False,
        "the documented biases that apply to a plan",
        call=lambda s, p: s.caveats(p.scenario, p.r),
        check=_strs,
    ),
    Part(
        "check_process",
        False,
        "refuses the hour-level fields it does not model, on the process the model prices",
        call=lambda s, p: s.check_process(group_process(p.scenario)),
        check=_nothing,
        may_refuse=True,
    ),
    Part(
        "hourly_law",
        False,
        "its own cycle law on a priced process (None: cycle_law extended)",
        call=lambda s, p: s.hourly_law(group_process(p.scenario), p.r, **p.plan),
        check=_optional(_cycle_law),
        may_refuse=True,
    ),
    Part(
        "cycle_law",
        True,
        "its hour-level cycle law",
        call=lambda s, p: s.cycle_law(p.N, p.r, EXPONENTIAL),
        check=_cycle_law,
    ),
    Part(
        "split_cycle_law",
        False,
        "its cycle law with micro-batches",
        call=lambda s, p: s.split_cycle_law(p.N, p.r, 1),
        check=_cycle_law,
    ),
    Part(
        "correlated_cycle_law",
        False,
        "its cycle law under domains or lemons",
        call=lambda s, p: s.correlated_cycle_law(
            p.N, p.r, domain_size=None, domain_rate_ratio=0.0, lifetimes=EXPONENTIAL
        ),
        check=_cycle_law,
        may_refuse=True,
    ),
    Part(
        "step_cycle",
        True,
        "its step-level cycle table",
        call=lambda s, p: s.step_cycle(p.step_scenario, p.r, **p.plan),
        check=_conforms(StepCycleTable),
        may_refuse=True,
    ),
    Part("step_repair_cycle", False, "its step-level cycle table with repairs"),
    Part(
        "check_step_plan",
        False,
        "refuses the step-level plans it does not model",
        call=lambda s, p: s.check_step_plan(p.step_scenario, p.r),
        check=_nothing,
        may_refuse=True,
    ),
    Part(
        "failure_rules",
        True,
        "the factory of its hour-level failure rule",
        call=lambda s, p: s.failure_rules(
            p.N,
            p.r,
            microbatches=1,
            repairs=False,
            pool=None,
            placement="ruler",
            domain_size=None,
            **p.plan,
        ),
        check=_rule_factory,
    ),
    Part(
        "step_rule",
        True,
        "its step-level trial",
        call=lambda s, p: s.step_rule(p.step_scenario, p.r, rep_recovery="all", **p.plan),
        check=_conforms(StepTrialRule, picklable=True),
        may_refuse=True,
    ),
    Part(
        "wipeout_units",
        False,
        "the units whose members all down are a wipe-out",
        call=lambda s, p: s.wipeout_units(p.N, p.r),
        check=_units,
        may_refuse=True,
    ),
    Part(
        "trajectory_pool",
        False,
        "failure trajectories drawn once per simulation",
        call=lambda s, p: s.trajectory_pool(
            p.N,
            p.r,
            size=1,
            seed=np.random.SeedSequence(0),
            microbatches=1,
            placement="ruler",
            domain_size=None,
        ),
        check=_optional(_conforms(TrajectoryPool)),
    ),
)


def _probe_r(obj: Any, N: int) -> int | None:
    """The smallest ``r >= 2`` that ``obj`` accepts at ``N`` groups, else the smallest."""
    # Lazily, from r = 2 up: whether a large r is a plan can be slow to decide (rulers).
    return next((r for r in [*range(2, N + 1), 0, 1] if obj.accepts(N, r)), None)


def strategy_problems(obj: Any) -> list[str]:
    """What is missing or malformed in the strategy ``obj`` (a class or an instance), by part.

    Walks :data:`PARTS`: a missing attribute, a class attribute of the
    wrong type, an abstract method left unimplemented; then, on an instance,
    each method called on :class:`Probe` (exceptions other than an allowed
    refusal are problems) and its result checked against its protocol.

    Parameters
    ----------
    obj : Strategy or type
        A strategy object, or its class (then only what the class shows:
        methods are called when the class builds without arguments).

    Returns
    -------
    list of str
        One sentence per problem, starting with the part's name; empty when
        the strategy is well formed.

    Examples
    --------
    >>> from spare_theory import strategy
    >>> strategy_problems(strategy("rep"))
    []
    >>> class Half:
    ...     name = "half"
    ...     label = 3
    >>> for problem in strategy_problems(Half())[:3]:
    ...     print(problem)
    label: must be a str: its name in tables, got 3
    exact_batch: missing (a bool: whether every step trains the whole batch)
    plan_variables: missing (a tuple of str: its plan variables beyond r)
    """
    problems = []
    for part in PARTS:
        if not hasattr(obj, part.name):
            problems.append(f"{part.name}: missing ({part.what})")
        elif part.value_type:
            value = getattr(obj, part.name)
            if not isinstance(value, part.value_type) or (part.name == "name" and not value):
                problems.append(f"{part.name}: must be {part.what}, got {value!r}")
        elif getattr(getattr(obj, part.name), "__isabstractmethod__", False):
            problems.append(f"{part.name}: not implemented ({part.what}; required)")
    if isinstance(obj, type):
        if problems or inspect.isabstract(obj):
            return problems
        try:
            obj = obj()
        except Exception:  # a class that needs arguments: its instance is checked at registration
            return problems
    if problems:
        return problems  # the probe would trip over the same parts
    r = _probe_r(obj, PROBE_GROUPS)
    if r is None:
        return [f"accepts: no r accepted at N = {PROBE_GROUPS} groups (none to probe)"]
    try:
        probe = Probe(r=r, plan=obj.check_plan(PROBE_GROUPS, r, {}))
    except Exception as exc:  # reported below, with the check_plan part
        probe = Probe(r=r)
        problems.append(f"check_plan: raised {type(exc).__name__}: {exc}")
    for part in PARTS:
        if part.call is None or (part.name == "check_plan" and problems):
            continue
        try:
            result = part.call(obj, probe)
        except ValueError as exc:
            if not part.may_refuse:
                problems.append(f"{part.name}: raised ValueError at r = {r}, N = {probe.N}: {exc}")
            continue
        except Exception as exc:  # the finding is the exception, whatever it is
            problems.append(f"{part.name}: raised {type(exc).__name__}: {exc}")
            continue
        wrong = part.check(result) if part.check is not None else None
        if wrong:
            problems.append(f"{part.name}: {wrong}")
    return problems
