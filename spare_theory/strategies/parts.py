"""The one table of a strategy's parts, and the checker that walks it on a small probe.

:data:`PARTS` lists every part of a
:class:`~spare_theory.strategies.base.Strategy` once: whether it is
required, how :func:`spare_theory.check_strategy` calls it on a small probe
scenario (:class:`Probe`) and what the result must satisfy (the protocols of
:mod:`spare_theory.strategies.protocols`).  :func:`strategy_problems` walks
that table, then runs the probe's plan through the hour-level model, its
plan variables included; the registry (:func:`spare_theory.check_strategy`)
adds the name clashes and raises.  Changing the interface of
:class:`~spare_theory.strategies.base.Strategy` is changing this table
(``tests/test_parts.py`` checks that it names every public member).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from ..hourly.scenario import Scenario
from ..lifetimes.laws import EXPONENTIAL
from ..steps.scenario import StepScenario
from .protocols import (
    StepCycleTable,
    StepTrialRule,
    TrajectoryPool,
    conforms,
    law_problem,
    rule_factory_problem,
)

__all__ = ["PARTS", "PROBE_GROUPS", "Part", "Probe", "strategy_problems"]

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


def _instance(kind: type | tuple[type, ...], what: str) -> Callable[[Any], str | None]:
    wrong = "returned a {}, not " + what
    return lambda result: None if isinstance(result, kind) else wrong.format(type(result).__name__)


def _optional(inner: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    return lambda result: None if result is None else inner(result)


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


def _domains(result: Any) -> str | None:
    """A bool per failure domain of 2 groups (:data:`PROBE_GROUPS` of them)."""
    wiping = np.asarray(result)
    if wiping.dtype == bool and wiping.shape == (PROBE_GROUPS // 2,):
        return None
    return f"returned {wiping.dtype} of shape {wiping.shape}, not a bool per domain"


def _nothing(result: Any) -> str | None:
    return None if result is None else f"returned {type(result).__name__}, not None"


def _process(scenario: Scenario, repairs: bool = True) -> Any:
    """The process the hour-level model prices (imported here: the simulations, which
    import the strategies, load no model module)."""
    from ..hourly.process import group_process

    return group_process(scenario, repairs=repairs)


#: Every part of a strategy, in the order of :class:`~spare_theory.strategies.base.Strategy`.
#: Required parts have no default in the base class; a part that ``may_refuse``
#: raises ``ValueError`` where the strategy has no such model.
PARTS: tuple[Part, ...] = (
    Part("name", True, "a non-empty str: its registered name", str),
    Part("label", True, "a str: its name in tables", str),
    Part("exact_batch", False, "a bool: whether every step trains the whole batch", bool),
    Part("plan_variables", False, "a tuple of str: its plan variables beyond r", tuple),
    Part("r_variable", False, "a str or None: what the CLI calls its r", (str, type(None))),
    Part("waits_for_groups", False, "a bool: whether the job outlives a group's failure", bool),
    Part(
        "cache_key",
        False,
        "what caches of its laws and searches are keyed on",
        call=lambda s, p: s.cache_key(),
        check=_instance(tuple, "a tuple"),
    ),
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
        "require",
        False,
        "refuses an r that accepts refuses",
        call=lambda s, p: s.require(p.N, p.r),
        check=_nothing,
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
        call=lambda s, p: s.check_process(_process(p.scenario)),
        check=_nothing,
        may_refuse=True,
    ),
    Part(
        "model_refusal",
        False,
        "why no closed form covers a scenario (None: one may)",
        call=lambda s, p: s.model_refusal(p.scenario),
        check=_optional(_instance(str, "a str or None")),
    ),
    Part(
        "cycle_law",
        False,
        "the one way to get its cycle law: bare, or on the process the model prices",
        call=lambda s, p: s.cycle_law(
            p.N, p.r, _process(p.scenario, s.prices_repairs(p.r)), **p.plan
        ),
        check=law_problem,
        may_refuse=True,
    ),
    Part(
        "prices_repairs",
        False,
        "whether its law at r waits for failed groups, so the model prices their repairs",
        call=lambda s, p: s.prices_repairs(p.r),
        check=_instance(bool, "a bool"),
    ),
    Part(
        "own_law",
        False,
        "its own cycle law on a priced process (None: base_law extended)",
        call=lambda s, p: s.own_law(_process(p.scenario), p.r, **p.plan),
        check=_optional(law_problem),
        may_refuse=True,
    ),
    Part(
        "base_law",
        True,
        "its bare hour-level cycle law",
        call=lambda s, p: s.base_law(p.N, p.r, EXPONENTIAL),
        check=law_problem,
    ),
    Part(
        "split_law",
        False,
        "its bare cycle law with micro-batches",
        call=lambda s, p: s.split_law(p.N, p.r, 1),
        check=law_problem,
    ),
    Part(
        "correlated_law",
        False,
        "its bare cycle law under domains or lemons",
        call=lambda s, p: s.correlated_law(
            p.N, p.r, domain_size=None, domain_rate_ratio=0.0, lifetimes=EXPONENTIAL
        ),
        check=law_problem,
        may_refuse=True,
    ),
    Part(
        "step_cycle",
        True,
        "its step-level cycle table",
        call=lambda s, p: s.step_cycle(p.step_scenario, p.r, **p.plan),
        check=conforms(StepCycleTable),
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
        check=rule_factory_problem,
    ),
    Part(
        "step_rule",
        True,
        "its step-level trial",
        call=lambda s, p: s.step_rule(p.step_scenario, p.r, rep_recovery="all", **p.plan),
        check=conforms(StepTrialRule, picklable=True),
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
        "burst_wipeouts",
        False,
        "which failure domains end a healthy cycle alone",
        call=lambda s, p: s.burst_wipeouts(p.N, p.r, domain_size=2, **p.plan),
        check=_domains,
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
        check=_optional(conforms(TrajectoryPool)),
    ),
    Part("with_caveats", False, "an estimate with the caveats of its plan attached"),
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
    if not problems and sorted(probe.plan) != sorted(obj.plan_variables):
        return [  # the parts would trip over the missing variables
            f"check_plan: returned the variables {sorted(probe.plan)} for the declared "
            f"{sorted(obj.plan_variables)} (a value for each, defaults filled in)"
        ]
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
    return problems or _plan_problems(obj, probe)


def _plan_problems(obj: Any, probe: Probe) -> list[str]:
    """What keeps the probe's plan from running: its variables, then the model at them.

    ``check_plan`` fills in every declared variable and keeps a value it
    accepted; ``plan_search`` searches a declared one; the hour-level model
    (:func:`~spare_theory.hourly.model.estimate_plan`) prices the plan at its
    defaults and at the search's last value (``ValueError``: a refusal); two
    different own laws (``own_law``) do not share a ``cache_key``.
    """
    from ..hourly.model import estimate_plan  # the model is loaded by the check only
    from ..planning.resolved import Resolved

    declared, N, r = tuple(obj.plan_variables), probe.N, probe.r
    searched = obj.plan_search(N, r)
    plans = [dict(probe.plan)]
    if searched is not None:
        name, grid = searched
        if name not in declared:
            return [f"plan_search: searches {name!r}, not one of plan_variables {declared}"]
        plans.append({**probe.plan, name: int(np.asarray(grid)[-1])})
    problems, laws = [], []
    for plan in plans:
        resolved = Resolved(probe.scenario, obj, r, tuple(plan.items()), 60.0)  # 60 min interval
        try:
            if obj.check_plan(N, r, plan) != plan:
                problems.append(f"check_plan: does not keep the plan {plan} it accepted")
            laws.append(obj.own_law(_process(probe.scenario), r, **plan))
            hours = estimate_plan(resolved).hours
        except ValueError:  # no model of this plan: the strategy refuses it
            continue
        except Exception as exc:  # the finding is the exception, whatever it is
            problems.append(f"plan {plan}: the hour-level model raised {type(exc).__name__}: {exc}")
            continue
        if not hours > 0:
            problems.append(f"plan {plan}: the hour-level model gave {hours} hours")
    if len(laws) == 2 and None not in laws:
        u, (a, b) = np.array([0.01, 0.1, 1.0]), laws
        if a.cache_key() == b.cache_key() and not np.array_equal(a.logq(u), b.logq(u)):
            problems.append(
                f"own_law: its laws at {plans[0]} and {plans[1]} differ but share a "
                "cache_key (the key must hold the plan variables)"
            )
    return problems
