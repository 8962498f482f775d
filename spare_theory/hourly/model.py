"""The hour-level model of a plan: its cycle law, its best checkpoint interval, its repairs.

A restart cycle's law (:class:`~spare_theory.cycles.base.CycleLaw`: how long
the cycle survives and its throughput in each state) depends on the strategy
and on the process its groups undergo
(:class:`~spare_theory.hourly.process.GroupProcess`).  Every front door asks
:func:`priced_law` for both: the process whose repairs the plan's law waits
for (:meth:`~spare_theory.strategies.base.Strategy.prices_repairs`), and the
law on it, got the one way
(:meth:`~spare_theory.strategies.base.Strategy.cycle_law`), which
:func:`process_law` builds in one declared order, so a scenario field is
either modelled or refused here, never silently ignored: the strategy's own
law on the process
(:meth:`~spare_theory.strategies.base.Strategy.own_law`, elastic DP and hot
spares, which refuse what they do not model,
:meth:`~spare_theory.strategies.base.Strategy.check_process`), else its bare
law (:meth:`~spare_theory.strategies.base.Strategy.split_law`) over the
process's lifetimes (stationary renewal clocks, lemons:
:func:`group_lifetimes`), domains
(:meth:`~spare_theory.strategies.base.Strategy.correlated_law`), planned
restarts (:func:`~spare_theory.cycles.planned.planned_cycle`, at the down
count ``k(c)`` of a ``planned_restart_cost``) or repairs
(:func:`~spare_theory.cycles.repairs.repair_cycle`); then the burst
wipe-outs.  The fresh start's term is added by :func:`evaluate_law`.  The
best interval of a law is :func:`best_interval` (the one interval search of
:mod:`spare_theory.planning.search` on the renewal-reward hours).

A little over 500 lines because the choice of a scenario's cycle law is kept
in this one place, every refusal with it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import integrate
from scipy.special import lambertw

from .._caching import cached
from .._numerics import restart_fixed_point
from .._validation import NoClosedFormError
from ..cycles.base import LOG_CUTOFF, CycleLaw
from ..cycles.bursts import BurstWipeouts
from ..cycles.detection import DetectionStall
from ..cycles.domains import FromFailure, LemonLifetimes, PooledLemons, ScaledExponential
from ..cycles.late import LateFailures
from ..cycles.planned import cost_trigger_failures, planned_cycle
from ..cycles.repairs import repair_cycle
from ..lifetimes.laws import EXPONENTIAL, EquilibriumLifetimes, SuperposedLifetimes
from ..placement.domains import failure_domains
from ..planning.resolved import ModelStrategy, Resolved
from ..planning.search import minimize_log_interval
from .fresh_start import with_finite_run
from .process import GroupProcess, group_process
from .renewal import TrainingEstimate, estimate_from, evaluate, hours_grid
from .scenario import Scenario

__all__ = [
    "attach_repairs",
    "best_interval",
    "estimate_plan",
    "evaluate_law",
    "expected_repairs",
    "group_lifetimes",
    "planned_trigger",
    "priced_law",
    "process_law",
    "wipeout_mean_hours",
]

# The fine grid of the interval search covers tau with at most this many
# segments per cycle; the longest interval searched (r > 1), as a share of the
# time M to Q = 1/e.
_FEW_SEGMENTS = 50
_MAX_TAU_SHARE = 0.5
# A best log-interval this close to an end of the range searched sits at that end.
_AT_LIMIT = 1e-4
# The fixed point of the restart-cut outages (priced_law): most steps, tolerance,
# and the points on which a cycle's mean time is integrated.
_OUTAGE_STEPS = 30
_OUTAGE_TOLERANCE = 1e-4
_CYCLE_POINTS = 4097


def planned_trigger(scenario: Scenario, law: CycleLaw, microbatches: int = 1) -> int | None:
    """The planned-restart trigger of a plan as a down count ``k`` (``None``: none).

    ``planned_restart_failures`` as it is; ``planned_restart_cost = c``
    becomes ``k(c)``, the least down count whose closed-form step cost
    ``ceil(m N/(N-d))/m`` reaches ``c``
    (:func:`~spare_theory.cycles.planned.cost_trigger_failures`), when the
    law's step cost grows with failures (SPARe); a cost that does not grow
    never fires (``None``).

    Parameters
    ----------
    scenario : Scenario
        The run.
    law : CycleLaw
        The plan's cycle law without planned restarts.
    microbatches : int, default 1
        Pieces per shard ``m`` (the cost is then the load in shard units).

    Returns
    -------
    int or None

    Examples
    --------
    >>> import dataclasses
    >>> from spare_theory import strategy
    >>> sc = dataclasses.replace(Scenario.published_600k(2048), planned_restart_cost=3.0)
    >>> planned_trigger(sc, strategy("spare").cycle_law(292, 8))
    147
    >>> planned_trigger(sc, strategy("rep").cycle_law(292, 3)) is None
    True
    """
    if scenario.planned_restart_failures is not None:
        return scenario.planned_restart_failures
    c = scenario.planned_restart_cost
    if c is None or not law.cost_grows:
        return None
    return int(cost_trigger_failures(scenario.groups, c, microbatches=microbatches))


def _correlated_cycle(process: GroupProcess, strategy: ModelStrategy, r: int) -> CycleLaw:
    """The law under failure domains (``r = 1``: on top of any law; else exponential)."""
    sc = process.scenario
    N, size = sc.groups, int(sc.domain_size or 1)
    delta = 1.0 / (float(sc.domain_mtbf_hours or 0.0) * process.rate_per_hour)
    if r == 1:
        # Any failure ends the cycle: rate N lambda + D lambda_D = N lambda (1 + delta D / N),
        # the domain events on top of the groups' own law (lemons, stationary clocks).
        D = -(-N // size)
        base = group_lifetimes(process, every_failure=True)
        extra = delta * D / N
        return strategy.base_law(
            N,
            1,
            ScaledExponential(extra) if base is EXPONENTIAL else ScaledExponential(extra, base),
        )
    return strategy.correlated_law(
        N,
        r,
        domain_size=size,
        domain_rate_ratio=round(delta, 12),
        lifetimes=None,
        placement=sc.placement,
    )


def group_lifetimes(process: GroupProcess, *, every_failure: bool = False) -> Any:
    """A group's lifetime law in dimensionless time, as the cycle laws take it (no repairs).

    Exponential: :data:`~spare_theory.lifetimes.laws.EXPONENTIAL`; renewal
    clocks kept by the process with ``renewal="group"``: the group clock in
    equilibrium (:class:`~spare_theory.lifetimes.laws.EquilibriumLifetimes`),
    with ``renewal="node"``: the first failure of its nodes' equilibrium
    clocks (:class:`~spare_theory.lifetimes.laws.SuperposedLifetimes`); lemon
    groups on top (:class:`~spare_theory.cycles.domains.LemonLifetimes`, a
    lemon's clock ``L`` times as fast), or, for a law whose cycle ends at
    ``every_failure`` (CKPT-only), the product over a fixed set of lemons
    (:class:`~spare_theory.cycles.domains.PooledLemons`).

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> sc = Scenario(gpus=1024, gpus_per_group=64, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=48, failure_law="weibull", renewal="node")
    >>> group_lifetimes(group_process(sc)).key
    ('weibull', 0.78, 8)
    """
    sc = process.scenario
    base: Any = None
    if process.clocks:
        if sc.renewal == "node":
            base = SuperposedLifetimes(sc.node_lifetime_law, sc.nodes_per_group)
        else:
            base = EquilibriumLifetimes(sc.group_lifetime_law)
    if process.lemons and sc.lemon_share > 0:
        kind = PooledLemons if every_failure else LemonLifetimes
        base = kind(sc.lemon_share, sc.lemon_rate_factor, base)
    # Each cycle starts at a failure: where the law ages (a non-exponential clock, or lemons
    # over one), the Palm law of the clock that fired.
    starts_at_failure = isinstance(base, EquilibriumLifetimes) or (
        isinstance(base, PooledLemons) and base.base is not None
    )
    if every_failure and not process.domains and starts_at_failure:
        return FromFailure(base, sc.groups)
    return EXPONENTIAL if base is None else base


def priced_law(
    scenario: Scenario, strategy: ModelStrategy, r: int, plan: dict[str, Any] | None = None
) -> tuple[GroupProcess, CycleLaw]:
    """The process the model prices and the cycle law of a checked plan on it.

    The process of :func:`~spare_theory.hourly.process.group_process`: with
    repairs for a law that waits for failed groups, without for one that
    ends its cycle at every failure (CKPT-only, ``r = 1``), and the law of the
    checked plan ``(strategy, r)`` at the plan variables ``plan`` (``None``:
    their defaults; checked by the front door,
    :func:`spare_theory.training.resolve.resolve`).  The renewal-reward
    estimate (:func:`evaluate_law`) takes both.

    Raises ``ValueError`` naming the fields, for combinations no model
    covers: a strategy with no model under failure domains or lemons (Rep),
    planned restarts with a non-exponential failure law, domains or lemons.

    The process has repairs where the plan's law waits for failed groups
    (:meth:`Strategy.prices_repairs
    <spare_theory.strategies.base.Strategy.prices_repairs>`); the law is
    got the one way, :meth:`Strategy.cycle_law
    <spare_theory.strategies.base.Strategy.cycle_law>` on that process
    (:func:`process_law`, in one declared order); the fresh start's term is
    added to the estimate (:func:`evaluate_law`).

    Under a non-exponential law with repairs and no spare pool, an outage
    ends at the next global restart if that comes before its repair, so the
    clustering of
    the renewal clocks (``compose``, step 2) depends on the plan's own
    cycle: ``restart_hours``, the mean hours from a restart to its wipe-out
    plus the restart, is iterated from ``inf`` (outages end at repairs)
    until it moves by less than ``1e-4`` of itself (a few steps: a shorter
    cycle cuts the outages, which raises the rate and shortens the cycle,
    bounded by ``c >= 1``).  Measured against the event simulation on the
    StepFun log's law without a pool (Rep ``r = 3`` at 600k GPUs: -6.3 %
    before, -1.1 % after; ``docs/theory.md`` section 9).  With a spare pool
    (node slots) the restart ends the pool's wait instead: it fills the
    waiting slots with nodes the pool then owes, and a node back serves a
    waiting slot before it repays them
    (:func:`~spare_theory.lifetimes.spares.spare_wait_hours` with restarts;
    ``docs/audit.md``, mend 8); the clustering is not cut there.  The cycle
    falls as the outages grow, so an iterate and its image lie on either
    side of the fixed point; where the iterates swing (a pool's wait moves
    the cycle of an elastic job tenfold), it is solved between them
    (``scipy.optimize.brentq``).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=48, repair_minutes=30)
    >>> process, law = priced_law(sc, strategy("spare"), 1)
    >>> process.repair_minutes, type(law).__name__
    (None, 'CkptOnly')
    >>> type(priced_law(sc, strategy("rep"), 2)[1]).__name__
    'RepairCycle'
    >>> racks = Scenario(gpus=256 * 8, gpus_per_group=8, restart_minutes=20,
    ...                  checkpoint_minutes=5, work_hours=48, domain_size=16,
    ...                  domain_mtbf_hours=20000.0)
    >>> priced_law(racks, strategy("spare"), 6)[1]
    DomainSpare(N=256, r=6, domain_size=16, delta=0.316731)
    >>> plain = dataclasses.replace(racks, domain_size=None, domain_mtbf_hours=None)
    >>> priced_law(plain, strategy("elastic"), 0, {"min_groups": 100})[1]
    ElasticCycle(N=256, active=256, quorum=100)
    """
    bursts = _wiping_domains(scenario, strategy, r, plan)

    def priced_at(restart_hours: float) -> tuple[float | None, tuple[GroupProcess, CycleLaw]]:
        process, law = _priced_law_at(scenario, strategy, r, plan, restart_hours, bursts)
        if process.repair_minutes is None or not (
            "pool" in process.approximations or not (scenario.exponential or scenario.pool)
        ):
            return None, (process, law)  # nothing a restart ends: no clock cut, no pool filled
        return _cycle_mean_hours(process, law) + process.restart_minutes / 60.0, (process, law)

    # The outages end at the plan's restarts: priced at the cycle it prices.
    priced: tuple[GroupProcess, CycleLaw] = restart_fixed_point(
        priced_at, rtol=_OUTAGE_TOLERANCE, max_steps=_OUTAGE_STEPS
    )
    return priced


def _cycle_mean_hours(process: GroupProcess, law: CycleLaw) -> float:
    """``int_0^inf Q du / lambda``: mean hours from a restart to the wipe-out (``inf``: none)."""
    with np.errstate(divide="ignore"):
        try:
            end = law.u_at(-LOG_CUTOFF)
        except ZeroDivisionError:  # a law whose log Q stops falling
            return math.inf
    if not math.isfinite(end) or end <= 0.0:
        return math.inf
    u = np.linspace(0.0, end, _CYCLE_POINTS)
    mean_u = float(integrate.simpson(np.exp(law.logq(u)), x=u))
    return mean_u / process.rate_per_hour


def _priced_law_at(
    scenario: Scenario,
    strategy: ModelStrategy,
    r: int,
    plan: dict[str, Any] | None,
    restart_hours: float,
    bursts: tuple[int, float, float],
) -> tuple[GroupProcess, CycleLaw]:
    """:func:`priced_law` with the outages cut at restarts ``restart_hours`` apart."""
    process = group_process(
        scenario,
        repairs=strategy.prices_repairs(r),
        restart_hours=restart_hours,
        bursts=bursts,
    )
    return process, strategy.cycle_law(scenario.groups, r, process, **(plan or {}))


def process_law(
    process: GroupProcess, strategy: ModelStrategy, r: int, plan: dict[str, Any]
) -> CycleLaw:
    """The law of a checked plan ``(strategy, r, plan)`` on ``process``
    (:meth:`Strategy.cycle_law <spare_theory.strategies.base.Strategy.cycle_law>`
    with a process), in one declared order: the strategy's own law on the
    process, else its bare law extended by the process's mechanisms
    (:func:`_extended_law`) and, for a law that outlives a failure, the
    stalls until each failure is noticed
    (:class:`~spare_theory.cycles.detection.DetectionStall`) and the failures that
    reach it late, stragglers and corruption
    (:class:`~spare_theory.cycles.late.LateFailures`); then the domain
    events that alone end the cycle
    (:class:`~spare_theory.cycles.bursts.BurstWipeouts`).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=48, repair_minutes=30)
    >>> process_law(group_process(sc), strategy("elastic"), 0, {"min_groups": 100})
    ElasticCycle(N=128, active=128, quorum=100)
    """
    sc = process.scenario
    late = process.stragglers or process.corruptions
    misdiagnosed = any(c.misdiagnosis > 0.0 for c in sc.failure_classes)
    if (late or misdiagnosed) and (
        not sc.exponential or sc.pool or sc.domain_size or sc.lemon_fraction > 0
    ):
        raise NoClosedFormError(
            "failure_classes with stragglers, corruption or misdiagnosis are modelled on "
            "independent exponential groups: drop the renewal clocks, spare pool, lemons or "
            "failure domains, or those classes"
        )
    if misdiagnosed and not process.every_failure_wipes:
        # Each wrong call evicts a healthy group a detection time after the failure, in a
        # batch: priced as independent failures at the rate they add, Rep's and SPARe's hours
        # at r = 2 came out 1-25 % high against the simulation (docs/failure_classes.md).
        raise NoClosedFormError(
            "failure_classes with misdiagnosis are modelled where every failure ends the cycle "
            "(CKPT-only, r = 1): a law that outlives a failure meets the healthy groups the "
            "wrong calls evict, which have no closed form (simulate_training runs it)"
        )
    law = strategy.own_law(process, r, **plan)
    if law is None:
        inner, scale = process, None
        if late and process.repair_minutes is not None:
            # A repaired group fails again: each failure waits its straggler's window, and
            # a corruption ends the cycle instead of failing a group, so the groups fail at
            # the rate of an up time lengthened by the mean window, less the corruptions.
            stretch = 1.0 + math.fsum(s * share for s, share, _ in process.stragglers)
            clean = 1.0 - math.fsum(share for _, share, _ in process.corruptions)
            scale = clean / stretch
            inner = dataclasses.replace(process, rate_per_hour=process.rate_per_hour * scale)
        law = _extended_law(inner, strategy, r, process.scenario.microbatches)
        if process.detect > 0.0 and r > 1:  # r = 1: every failure wipes out, the restart waits
            windows = inner.detections if scale is None else inner.repaired_detections
            law = DetectionStall(law, windows)
        if late:
            law = LateFailures(law, process.stragglers, process.corruptions, time_scale=scale)
    elif process.detect > 0.0 or process.stragglers or process.corruptions:
        raise NoClosedFormError(
            f"failure_classes with a detection time have no model for strategy "
            f"{strategy.name!r}'s own law: drop the detection time (simulate_training runs it)"
        )
    if process.burst_ratio > 0.0:
        law = BurstWipeouts(law, process.burst_ratio)
    return law


def _wiping_domains(
    scenario: Scenario, strategy: ModelStrategy, r: int, plan: dict[str, Any] | None
) -> tuple[int, float, float]:
    """``(domains, share, merged)``: how many domains end the plan's cycle by their event
    alone (:meth:`~spare_theory.strategies.base.Strategy.burst_wipeouts`), the share of
    the groups in them, and the failures per hour and group that the other domains'
    events bring beside a first one (``sum (m_j - 1) / (N mtbf)``): none without
    domains or repairs.

    Asking the strategy also checks the plan against the placement, which the
    fold into the rate does not need: an ``r`` that no placement of the
    scenario's rule can host has no plan.
    """
    size = scenario.domain_size
    if size is None or scenario.repair_minutes is None:
        return 0, 0.0, 0.0
    N = scenario.groups
    wiping = np.asarray(
        strategy.burst_wipeouts(
            N, r, domain_size=size, placement=scenario.placement, **(plan or {})
        ),
        dtype=bool,
    )
    sizes = np.bincount(failure_domains(N, size))
    groups = sizes[wiping].sum()
    merged = float((sizes[~wiping] - 1).sum()) / (N * float(scenario.domain_mtbf_hours or math.inf))
    return int(np.count_nonzero(wiping)), float(groups) / N, merged


def _extended_law(process: GroupProcess, strategy: ModelStrategy, r: int, m: int) -> CycleLaw:
    """The strategy's law extended by the process's mechanisms (module docstring)."""
    sc = process.scenario
    N = sc.groups
    base = strategy.split_law(N, r, m)
    k = planned_trigger(sc, base, m)
    unnoticed = process.detect > 0.0 or process.stragglers or process.corruptions
    if (k is not None or sc.planned_restart_cost is not None) and unnoticed:
        raise NoClosedFormError(
            "planned_restart_failures and planned_restart_cost are modelled with failures "
            "noticed at once: drop them or the failure_classes' detection time "
            "(simulate_training runs the combination)"
        )
    plain = not (process.clocks or process.lemons or process.domains)
    if m != 1 and r > 1 and plain and process.repair_minutes is None:
        return base if k is None else planned_cycle(base, k)
    planned = k is not None or sc.planned_restart_cost is not None
    if not plain and planned:
        raise NoClosedFormError(
            "planned_restart_failures and planned_restart_cost are modelled with "
            "failure_law='exponential', no failure domains and no lemons: drop them, or the "
            "planned restart (simulate_training runs the combination)"
        )
    if process.domains:
        return _correlated_cycle(process, strategy, r)
    if not plain:  # a stationary renewal law, lemons, or both (no repairs: group_process)
        lifetimes = group_lifetimes(process, every_failure=r == 1)
        if process.lemons and r > 1 and m == 1:
            return strategy.correlated_law(
                N, r, domain_size=None, domain_rate_ratio=0.0, lifetimes=lifetimes
            )
        return strategy.split_law(N, r, m, lifetimes)
    if r == 1 or (process.repair_minutes is None and k is None):
        return base
    if k is not None:
        return planned_cycle(base, k, process.mu, process.stall)
    return repair_cycle(base, process.mu, process.stall, process.repair_law)


@cached(maxsize=64, shared=True)
def best_interval(process: GroupProcess, law: CycleLaw) -> TrainingEstimate:
    """The estimate of ``law`` on ``process`` at the checkpoint interval that minimises the hours.

    Search range: within a factor 100 of Young's interval
    ``sqrt(2 delta M)`` (``M``: time to ``Q = 1/e``), clipped to
    ``[1 s, 600 W]`` and, for ``r > 1``, to ``tau <= M / 2``.  The last bound
    is a modelling choice: when the wipe-out time is sharp (large ``N`` and
    ``r``) the model also has a minimum at ``tau ~ 0.74 M``, one checkpoint
    per cycle timed just before the predicted wipe-out, up to 4 % better at
    ``r ~ 30-50``; it rests entirely on the sharpness of the wipe-out law
    where it is least tested, and it makes hours against ``r`` bimodal.  The
    main minima sit at ``tau <= 0.31 M`` (measured on the 30 reference
    scenarios).

    The search is :func:`~spare_theory.planning.search.minimize_log_interval`
    on the vectorised renewal hours, its fine grid over ``[S / 50, S]`` with
    ``S`` the span of the cycle that counts (until ``Q`` falls to
    ``e^-30 Q(rho)``): every ``tau`` with at most 50 segments per cycle,
    where a sharp cycle's whole-number-of-segments minima are.  Near a
    minimum ``hours ~ h0 (1 + c x^2 / 2)`` with ``c < 1`` (about 0.15 on the
    published scenarios), and the search ends with Brent's method to ``1e-5``
    in ``x = log tau``.  A law with a constant hazard (CKPT-only, exponential
    lifetimes) has its optimum in closed form (Daly's, through Lambert's
    ``W``).  With no checkpoint cost the best interval is the smallest, and 1
    second is used.  An optimum at either end of the range searched is
    flagged in :attr:`TrainingEstimate.interval_limit
    <spare_theory.hourly.renewal.TrainingEstimate.interval_limit>`
    (``"upper"``: the hours still fall as the interval grows; at ``600 W``
    no periodic checkpoint pays off).  Cached per scenario and law (values).

    Parameters
    ----------
    process : GroupProcess
        The run as priced (:func:`priced_law`).
    law : CycleLaw
        The plan's cycle law on it (:func:`priced_law`).

    Returns
    -------
    TrainingEstimate
        Labelled with the law's name (the front doors relabel it), without
        the expected repairs (:func:`attach_repairs`).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> best = best_interval(group_process(sc), strategy("ckpt").cycle_law(128, 1))
    >>> round(best.checkpoint_interval_minutes, 2), best.interval_limit
    (30.98, None)

    With repairs of an hour, SPARe at ``r = 10`` on 600k GPUs almost never
    wipes out: the hours fall all the way to the search's limit, ``600 W``
    minutes, and no periodic checkpoint pays off:

    >>> fast = dataclasses.replace(Scenario.published_600k(), repair_minutes=60)
    >>> top = best_interval(*priced_law(fast, strategy("spare"), 10))
    >>> round(top.checkpoint_interval_minutes), 600 * fast.work_hours, top.interval_limit
    (432000, 432000.0, 'upper')
    """
    scenario, lam = process.scenario, process.rate_per_hour
    delta = scenario.checkpoint_minutes
    if delta == 0:
        return dataclasses.replace(evaluate(process, law, 1 / 60), interval_limit="lower")
    young = math.log(math.sqrt(2 * delta * 60 * law.mean_u / lam))
    # Cycles far longer than the run (fast repairs): no interval beyond 600 W.
    young = min(young, math.log(600 * scenario.work_hours))
    lo = max(young - math.log(100), math.log(1 / 60))
    hi = max(min(young + math.log(100), math.log(600 * scenario.work_hours)), lo + 1e-6)
    if law.constant_hazard is not None:
        # Daly's model, hours ~ (e^{(tau + delta)/M} - 1) / tau, whose minimum
        # solves e^{(tau + delta)/M} (1 - tau/M) = 1:
        # tau = M (1 + W0(-e^{-1 - delta/M})), M = 1/(k lambda) (in minutes).
        M = 60 / (law.constant_hazard * lam)
        tau = M * (1 + float(lambertw(-math.exp(-1 - delta / M)).real))
        x = min(max(math.log(tau), lo), hi)
        return _at_limit(evaluate(process, law, math.exp(x)), x, lo, hi)
    # No plan of one checkpoint per cycle timed just before a predicted wipe-out
    # (CKPT-only under another failure law: uncapped).
    if law.r > 1:
        hi = max(min(hi, math.log(_MAX_TAU_SHARE * 60 * law.mean_u / lam)), lo + 1e-6)
    rho = lam * process.restart_minutes / 60
    span = math.log(max(law.restart_terms(rho)[2] - rho, 1e-300) * 60 / lam)
    x, terms, i = minimize_log_interval(
        lambda log_tau: hours_grid(process, law, log_tau),
        lo,
        hi,
        span - math.log(_FEW_SEGMENTS),
        span,
    )
    return _at_limit(estimate_from(process, law.name, law.r, math.exp(x), terms, i), x, lo, hi)


def _at_limit(estimate: TrainingEstimate, x: float, lo: float, hi: float) -> TrainingEstimate:
    """``estimate`` flagged when ``x = log tau`` ends at ``lo`` or ``hi`` (Brent's 1e-5 in x)."""
    limit = "upper" if x >= hi - _AT_LIMIT else "lower" if x <= lo + _AT_LIMIT else None
    return estimate if limit is None else dataclasses.replace(estimate, interval_limit=limit)


def evaluate_law(
    process: GroupProcess, law: CycleLaw, tau_minutes: float | None, name: str
) -> TrainingEstimate:
    """The estimate of ``law`` at ``tau_minutes`` (``None``: the best), labelled ``name``.

    ``process`` is the one the law is priced on (:func:`priced_law`).

    With the expected repairs and planned restarts filled in
    (:func:`attach_repairs`), and the finite-run term of a law that asks for
    it (:func:`~spare_theory.hourly.fresh_start.with_finite_run`).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> law = strategy("rep").cycle_law(128, 2)
    >>> round(evaluate_law(group_process(sc), law, 60.0, "rep").hours, 2)
    107.14
    """
    if tau_minutes is None:
        estimate = best_interval(process, law)
    else:
        estimate = evaluate(process, law, tau_minutes)
    estimate = with_finite_run(attach_repairs(process, law, estimate), law, process)
    return estimate if estimate.strategy == name else dataclasses.replace(estimate, strategy=name)


def attach_repairs(process: GroupProcess, law: CycleLaw, estimate: Any) -> Any:
    """``estimate`` with :func:`expected_repairs` and the planned restarts filled in.

    Unchanged for a law without repairs or planned restarts.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30)
    >>> process = group_process(sc)
    >>> law = repair_cycle(Rep(sc.groups, 2), process.mu)
    >>> round(attach_repairs(process, law, evaluate(process, law, 60.0)).repairs)
    53
    """
    if law.planned:
        planned = estimate.restarts * law.planned_share if math.isfinite(estimate.restarts) else 0.0
        estimate = dataclasses.replace(estimate, planned_restarts=float(planned))
    if law.mu == 0:
        return estimate
    return dataclasses.replace(estimate, repairs=expected_repairs(process, law, estimate.hours))


def expected_repairs(process: GroupProcess, law: CycleLaw, hours: float) -> float:
    """Expected repairs over a run of ``hours``: ``hours lambda int Q N mu p du / int Q du``.

    The repair rate averaged over the cycle (restarts included); 0 for a law
    without repairs.

    Examples
    --------
    >>> from spare_theory.cycles.spare import Spare
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30)
    >>> process = group_process(sc)
    >>> law = repair_cycle(Spare(sc.groups, 4), process.mu)
    >>> round(expected_repairs(process, law, 100.0), 1)
    51.1
    """
    if not math.isfinite(hours):
        return math.inf
    return hours * process.rate_per_hour * law.repairs_per_cycle_time()


def wipeout_mean_hours(process: GroupProcess, law: CycleLaw) -> float:
    """Expected hours from a healthy start to the first wipe-out under ``law``.

    The law's closed form where it has one (CKPT-only ``1 / (N lambda)``;
    SPARe without repairs ``sum_f P(T > f) / ((N - f) lambda)``), else
    ``int_0^inf Q(u) du / lambda`` with ``Q`` of the repair cycle over the
    law (exact per set for Rep, the no-repair hazard along the path corrected
    by the per-type and pair chains for SPARe; ``mu = 0`` without repairs).

    Examples
    --------
    >>> from spare_theory.cycles.spare import Spare
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100)
    >>> round(wipeout_mean_hours(group_process(sc), Spare(64, 3)), 2)
    6.71
    """
    closed = law.mean_time_to_wipeout(process.mu)
    if closed is None:
        closed = repair_cycle(law, process.mu, 0.0, process.repair_law).mean_time
    return closed / process.rate_per_hour


def estimate_plan(resolved: Resolved) -> TrainingEstimate:
    """The hour-level estimate of a resolved plan (its interval, or the best one).

    Its process and law (:func:`priced_law`) evaluated by
    :func:`evaluate_law`, labelled with the strategy's name, with a caveat per
    approximation the process applied (:attr:`GroupProcess.caveats
    <spare_theory.hourly.process.GroupProcess.caveats>`).

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> resolved = Resolved(sc, strategy("rep"), 2, checkpoint_interval_minutes=60.0)
    >>> round(estimate_plan(resolved).hours, 2)
    107.14
    """
    process, law = priced_law(
        resolved.scenario, resolved.strategy, resolved.chosen_r, resolved.variables
    )
    estimate = evaluate_law(
        process, law, resolved.checkpoint_interval_minutes, resolved.strategy.name
    )
    return dataclasses.replace(estimate, caveats=process.caveats) if process.caveats else estimate
