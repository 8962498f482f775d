"""What a strategy returns, as typed protocols.

Every layer asks a :class:`~spare_theory.strategies.base.Strategy` for
objects it then uses without knowing the strategy: the hour-level cycle law
(:class:`HourlyCycleLaw`, what :mod:`spare_theory.hourly.renewal`, the
hour-level model and the mechanisms of :mod:`spare_theory.cycles` read),
the hour-level failure rule and its factory (:class:`FailureRule`,
:class:`FailureRuleFactory`, what :mod:`spare_theory.hourly.simulation`
plays), the step-level cycle table (:class:`StepCycleTable`, what
:mod:`spare_theory.steps.estimate` reads), the step-level trial
(:class:`StepTrialRule`, what :mod:`spare_theory.steps.trials` runs) and
SPARe's trajectory pool (:class:`TrajectoryPool`).  The built-in classes
(:class:`~spare_theory.cycles.base.CycleLaw`,
:class:`~spare_theory.steps.cycles.StepCycle`, the rules of
:mod:`spare_theory.hourly.rules`) satisfy them; a new strategy may return
anything that does.  :data:`spare_theory.strategies.parts.PARTS` says which
part of a strategy returns which.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from ..steps.scenario import StepScenario

__all__ = [
    "FailureRule",
    "FailureRuleFactory",
    "HourlyCycleLaw",
    "StepCycleTable",
    "StepTrialRule",
    "TrajectoryPool",
    "conforms",
    "law_problem",
    "members",
    "rule_factory_problem",
]


@runtime_checkable
class HourlyCycleLaw(Protocol):
    """A restart cycle in dimensionless time ``u = lambda t``: what the hour-level model reads.

    ``logq(u) = log P(no wipe-out by u)`` (0 at ``u = 0``, non-increasing) and
    ``theta(u)``, the expected throughput given no wipe-out, in ``(0, 1]``
    relative to the failure-free run without redundancy.  The other members
    are what the renewal sums, the hour-level model, the fresh-start term and
    the mechanisms (repairs, planned restarts) read (``tests/test_parts.py``
    checks the first three); a law without a model for a mechanism raises
    ``ValueError``.  :class:`~spare_theory.cycles.base.CycleLaw`
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
    idle_share: float
    redundancy_cause: str
    mu: float
    planned_share: float
    finite_run: bool
    mean_u: float

    def logq(self, u: ArrayLike) -> np.ndarray: ...
    def theta(self, u: ArrayLike) -> np.ndarray: ...
    def batch_theta(self, u: ArrayLike) -> np.ndarray: ...
    def checkpoint_loss(
        self, start: np.ndarray, d: float
    ) -> tuple[np.ndarray, np.ndarray] | None: ...
    def planned_hazard(self, u: ArrayLike) -> np.ndarray: ...
    def segment_theta(self, start: np.ndarray, k: np.ndarray, d: float) -> np.ndarray: ...
    def theta_losses(self, u: ArrayLike) -> dict[str, np.ndarray]: ...
    def segment_losses(
        self, start: np.ndarray, k: np.ndarray, d: float
    ) -> dict[str, np.ndarray]: ...
    def rollback_segments(self) -> float: ...
    def late_endings(self) -> tuple[float, ...]: ...
    def cache_key(self) -> tuple: ...
    def u_at(self, level: float) -> float: ...
    def restart_terms(self, rho: float) -> tuple[float, float, float]: ...
    def mean_time_to_wipeout(self, mu: float) -> float | None: ...
    def wipeout_refusal(self, mu: float, repair_law: Any) -> str | None: ...
    def repairs_per_cycle_time(self) -> float: ...
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


def members(protocol: type) -> list[str]:
    """The names a protocol declares: its annotations and public methods (``__call__`` too)."""
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {k for k, v in vars(protocol).items() if callable(v) and not k.startswith("_")}
    if "__call__" in vars(protocol):
        names.add("__call__")
    return sorted(names)


def conforms(protocol: type, *, picklable: bool = False) -> Callable[[Any], str | None]:
    """A check that a result has every member of ``protocol`` (and pickles, if asked)."""

    def check(result: Any) -> str | None:
        missing = [m for m in members(protocol) if not hasattr(result, m)]
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


def law_problem(law: Any) -> str | None:
    """A law with every member, ``log Q(0) = 0``, non-increasing ``log Q``, ``theta`` in (0, 1]."""
    missing = conforms(HourlyCycleLaw)(law)
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


def rule_factory_problem(factory: Any) -> str | None:
    """A picklable factory whose rule has every member (``batch_throughput`` if it reconfigures)."""
    wrong = conforms(FailureRuleFactory, picklable=True)(factory)
    if wrong:
        return wrong
    rule = factory(np.random.default_rng(0))
    wrong = conforms(FailureRule)(rule)
    if wrong:
        return f"gave a factory whose rule {wrong.removeprefix('returned ')}"
    if rule.reconfigures and not hasattr(rule, "batch_throughput"):
        return "gave a rule that reconfigures without batch_throughput"
    if not 0 < rule.throughput <= 1:
        return f"gave a rule whose throughput at the start, {rule.throughput}, is not in (0, 1]"
    return None
