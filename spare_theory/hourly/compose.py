"""What the hour-level model prices when a scenario combines fields, and how it approximates.

A scenario built from a failure log combines a non-exponential lifetime
law, lemon groups, failure domains (bursts) and repairs through a pool of
spare nodes.  The cycle laws of :mod:`spare_theory.cycles` cover each
mechanism on its own; :func:`group_process` maps a combination onto the
process they cover (a :class:`GroupProcess`), one stated approximation per
step, named in its ``approximations``, in this order
(``docs/theory.md`` section 9 gives the derivations and the errors measured
against the event simulation, which plays every combination exactly):

1. **Spare pool** (``spare_nodes >= 1``): a group's repair becomes the time
   until all its failed nodes are swapped in,
   ``E[B] = (exp(a E[W]) - 1) / a`` with ``E[W] = swap + E[wait]`` and
   ``a = (g - 1) nu`` the failure rate of its other nodes
   (:func:`~spare_theory.lifetimes.spares.group_down_hours`; the nodes in
   repair are Poisson by Palm's theorem, whatever the repair law), as an
   exponential repair law of that mean.  The cluster's node failure rate is
   ``N`` groups at their mean rate (lemons and domain events included).
   Only the mean of the node repair law enters.
   Under non-exponential group clocks (``renewal="group"``) a group is one
   slot whose failures while it waits are absorbed: the pool is fed by the
   up groups only, a birth-death fixed point (:func:`pool_down_minutes`).
2. **Repairs with a non-exponential law, lemons or domains**: each group is
   taken to alternate between exponential up times and its repairs, at the
   rate ``lambda / c + lambda (kappa - 1) phi / c + lambda_D`` (lemons
   averaged over the groups, domain events counted as independent failures
   of each of their groups, except the events of a domain that alone ends
   the plan's cycle: those are wipe-outs, priced on top by
   :class:`~spare_theory.cycles.bursts.BurstWipeouts`, ``wiping_share``),
   and the repair cycle of exponential lifetimes is priced at that rate.
   ``c = 1 + M(D) - D / m`` carries a renewal law's clustering: a clock that
   has just fired is young, and the failures it brings within the down time
   ``D`` are absorbed in the same outage. An outage ends at its repair or at
   the next global restart, which makes every group whole, so ``D`` is the
   mean of the shorter (:func:`outage_hours`): the mean repair when restarts
   are rare, far less when they come every few hours (Rep at ``r = 3`` on
   600k GPUs fitted to the StepFun log: ``D`` 5.6 h against a mean repair of
   133 h, and ``c`` 1.10, not 1.37); the time to the restart is the plan's
   own cycle, found as a fixed point
   (:func:`~spare_theory.hourly.model.priced_law`; not through a pool, whose
   wait a restart does not end).
   ``M`` is the renewal function of the clock
   that fired (:func:`~spare_theory.lifetimes.laws.renewal_function`: the
   node's law, mean ``m``, with ``renewal="node"``, the group's with
   ``"group"``), so that the alternating process has the renewal process's
   rate of outages, ``lambda / (1 + lambda D c)`` (exponential: ``c = 1``).
   The stationary down share and the rate of ``r`` overlapping outages of
   independent alternating groups depend on the means only; what is
   dropped is the transient from a restart (young clocks, lemons failing
   first), the correlation of the outages of the groups of one domain (but
   for the events that alone wipe out) or of one lemon's bursts, and, with a
   pool, of the groups waiting together.
3. **Without repairs, domains and lemons together**: the lemons are folded
   into the groups' independent rate ``lambda (1 + (kappa - 1) phi)`` and
   the domain law is kept.
4. Without repairs, a non-exponential law with lemons is modelled exactly on
   the average over the lemons' placement (a lemon's clock runs ``kappa``
   times as fast, :class:`~spare_theory.cycles.domains.LemonLifetimes`), as
   the exponential one; a non-exponential law with failure domains has no
   model: :func:`group_process` raises a ``ValueError`` that says which
   field to drop.

Everything else is priced as it is, so every number the model gave before
these combinations were allowed is unchanged.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._caching import cached
from .._validation import NoClosedFormError
from ..lifetimes.laws import renewal_function
from ..lifetimes.spares import group_down_hours
from ..planning.resolved import ModelStrategy
from .scenario import Scenario

# Gauss-Legendre nodes over a repair law's quantiles (outage_hours).
_OUTAGE_NODES = 128

__all__ = [
    "APPROXIMATIONS",
    "GroupProcess",
    "check_split",
    "cluster_node_failure_rate",
    "clustering",
    "group_process",
    "mean_group_rate",
    "outage_hours",
    "pool_down_minutes",
]


def mean_group_rate(scenario: Scenario) -> float:
    """A group's mean failure rate per hour: ``lambda (1 + (kappa - 1) phi) + lambda_D``.

    ``lambda`` is an ordinary group's rate
    (:attr:`~spare_theory.hourly.scenario.Scenario.group_failure_rate_per_hour`),
    ``phi`` and ``kappa`` the lemon share (:attr:`Scenario.lemon_share`, the whole count
    of lemons the simulation plays) and rate factor, ``lambda_D`` the
    rate of the group's domain events (0 without domains).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, lemon_fraction=0.1,
    ...               lemon_rate_factor=11.0)
    >>> round(mean_group_rate(sc), 6)
    0.008
    """
    rate = scenario.group_failure_rate_per_hour
    rate *= 1.0 + (scenario.lemon_rate_factor - 1.0) * scenario.lemon_share
    if scenario.domain_mtbf_hours is not None:
        rate += 1.0 / scenario.domain_mtbf_hours
    return rate


def outage_hours(
    repair_minutes: float, repair_law: Any = "exponential", restart_hours: float = math.inf
) -> float:
    """Mean hours a group's outage lasts: ``D = E[min(repair, E)]``, ``E ~ Exp(restart_hours)``.

    An outage ends when the repair (mean ``repair_minutes``, law
    ``repair_law``: ``"exponential"``, ``"fixed"`` or a frozen scipy law in
    minutes) does or when a global restart makes every group whole,
    whichever comes first; the time from a failure to the end of the next
    restart is taken as exponential of mean ``restart_hours`` (``inf``: none
    comes, ``D`` is the mean repair).  ``D = int_0^inf S(t) e^{-t / T} dt``
    with ``S`` the repair law's survival (``D T / (D + T)`` for an
    exponential repair of mean ``D``).

    Examples
    --------
    >>> outage_hours(60.0), outage_hours(60.0, "exponential", 3.0)
    (1.0, 0.75)
    >>> from scipy import stats, integrate
    >>> law = stats.lognorm(1.9, scale=1200.0)  # minutes, heavy-tailed
    >>> quad, _ = integrate.quad(lambda t: law.sf(t) * np.exp(-t / 300.0), 0, np.inf)
    >>> round(outage_hours(float(law.mean()), law, 5.0), 4), round(quad / 60.0, 4)
    (4.0256, 4.0256)
    """
    repair = repair_minutes / 60.0
    if not math.isfinite(restart_hours):
        return repair
    if repair_law == "exponential":
        return repair * restart_hours / (repair + restart_hours)
    if repair_law == "fixed":
        return restart_hours * -math.expm1(-repair / restart_hours)
    # A frozen scipy law in minutes: T E[1 - exp(-X / T)], by Gauss-Legendre over its
    # quantiles (smooth there: the integrand saturates where the quantile diverges).
    nodes, weights = np.polynomial.legendre.leggauss(_OUTAGE_NODES)
    minutes = repair_law.ppf(0.5 * (nodes + 1.0)) / (60.0 * restart_hours)
    return restart_hours * 0.5 * float(weights @ -np.expm1(-minutes))


def clustering(
    scenario: Scenario,
    repair_minutes: float | None,
    repair_law: Any = "exponential",
    restart_hours: float = math.inf,
) -> float:
    """``c = 1 + M(D) - D / m``: extra failures a renewal clock brings within an outage.

    ``D`` the mean outage (:func:`outage_hours` of the repairs priced,
    ``repair_minutes`` of law ``repair_law``, cut short by the next global
    restart ``restart_hours`` away on average), ``M`` the renewal function of
    the clock that fired (the node's law with ``renewal="node"``, the
    group's with ``"group"``), ``m`` its mean (module docstring, step 2); 1
    for exponential lifetimes or without repairs (``repair_minutes=None``).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, failure_law="weibull")
    >>> round(clustering(sc, 60.0), 4), round(clustering(sc, 60.0, restart_hours=0.5), 4)
    (1.0167, 1.0077)
    """
    if scenario.exponential or repair_minutes is None:
        return 1.0
    law = scenario.node_lifetime_law if scenario.renewal == "node" else scenario.group_lifetime_law
    down = outage_hours(repair_minutes, repair_law, restart_hours)
    return 1.0 + renewal_function(law, down) - down / float(law.mean())


def cluster_node_failure_rate(scenario: Scenario) -> float:
    """Node failures per hour of the cluster's ``N`` groups (one node per group failure).

    ``N`` times :func:`mean_group_rate`: what feeds the spare pool.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=64, gpu_mtbf_hours=8000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48)
    >>> cluster_node_failure_rate(sc)
    0.128
    """
    return scenario.groups * mean_group_rate(scenario)


def pool_down_minutes(scenario: Scenario) -> float:
    """Mean minutes from a group's failure until all its nodes are swapped in (with the pool).

    :func:`~spare_theory.lifetimes.spares.group_down_hours` at the cluster's
    node failure rate (:func:`cluster_node_failure_rate`), the nodes' mean
    repair ``repair_minutes``, ``spare_nodes`` and ``swap_minutes``, groups
    of ``nodes_per_group`` nodes among ``N nodes_per_group``.

    Raises
    ------
    ValueError
        Naming ``spare_nodes`` for a scenario without a pool.

    Examples
    --------
    >>> sc = Scenario(gpus=2048 * 64, gpus_per_group=2048, gpu_mtbf_hours=8 * 5623.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=720,
    ...               repair_minutes=133 * 60, spare_nodes=450, swap_minutes=30)
    >>> round(pool_down_minutes(sc), 1)
    30.5
    """
    if not scenario.pool:
        raise ValueError("spare_nodes: the scenario has no spare pool")
    repair = float(scenario.repair_minutes or 0.0) / 60.0
    swap = float(scenario.swap_minutes or 0.0)
    if not scenario.exponential and scenario.renewal == "group":
        return 60.0 * _group_clock_down_hours(scenario, repair, swap / 60.0)
    hours = group_down_hours(
        cluster_node_failure_rate(scenario),
        repair,
        int(scenario.spare_nodes or 0),
        swap_minutes=swap,
        group_nodes=scenario.nodes_per_group,
        nodes=scenario.groups * scenario.nodes_per_group,
    )
    return 60.0 * hours


def _group_clock_down_hours(scenario: Scenario, repair: float, swap: float) -> float:
    """The pool's down time when one group clock sends one node per outage (a fixed point).

    A group clock of a non-exponential law (``renewal="group"``) fires while
    its group waits for a node too, and those failures are absorbed in the
    outage (no node is sent, the outage is not extended): a group is one
    slot and an up group sends nodes at ``lambda / c`` (:func:`clustering`'s
    ``c = 1 + M(D) - D / m`` at its down time ``D``).  A group waiting for a
    node sends none, which thins the pool's arrivals exactly when it is
    short, so the nodes in repair ``n`` are the birth-death chain with births
    ``(N - (n - S)^+) lambda / c`` and deaths ``n / E[repair]`` (``S`` spares),
    not Poisson at ``N lambda``; ``D = swap + E[(n - S)^+] / (arrival rate)``
    by Little's law, ``D`` and ``c`` solved together by damped iteration
    from ``D = swap`` (``swap``, ``repair`` in hours).
    """
    law = scenario.group_lifetime_law
    spares, N = int(scenario.spare_nodes or 0), scenario.groups
    mean = float(law.mean())
    n = np.arange(spares + N + 1)
    waiting = np.maximum(n - spares, 0)
    down = swap
    for _ in range(200):
        up_rate = 1.0 / (mean * (1.0 + renewal_function(law, down, steps=800)) - down)
        births = (N - waiting[:-1]) * up_rate
        if repair > 0:
            log_pi = np.concatenate(([0.0], np.cumsum(np.log(births * repair / n[1:]))))
            pi = np.exp(log_pi - log_pi.max())
            pi /= pi.sum()
            wait = float(pi @ waiting) / float(pi @ ((N - waiting) * up_rate))
        else:
            wait = 0.0
        new = swap + wait
        if abs(new - down) <= 1e-9 * max(down, 1e-12):
            break
        down = 0.5 * (down + new)
    return float(down)


#: What each named step of :func:`group_process` approximates and what it drops, as an
#: estimate's caveat says it; the size of the miss is the audit's to state
#: (:func:`~spare_theory.strategies.coverage.audit_caveat`), not this text's.
APPROXIMATIONS = {
    "pool": "a spare pool is priced as an exponential group repair of the pool's mean down "
    "time (Palm's theorem), without the correlation of the groups waiting together",
    "group-clock pool": "a spare pool fed by group clocks is priced at the birth-death "
    "fixed point of its mean down time, as an exponential group repair",
    "mean rate": "under repairs the groups are priced as exponential at their mean outage "
    "rate, without the transient after a restart",
    "clustering": "a renewal clock's failures within an outage are absorbed at the rate "
    "c = 1 + M(D) - D/m of its stationary law (young clocks after a rejoin are not followed)",
    "restart-cut outages": "an outage ends at its repair or at the next global restart, "
    "the restart's distance taken as exponential at the plan's mean cycle",
    "lemons averaged": "under repairs lemon groups are averaged into every group's rate "
    "(a lemon's bursts are not correlated)",
    "domains folded": "under repairs failure domain events are priced as independent "
    "failures of their groups (their outages are not correlated)",
    "burst wipe-outs": "the domain events that alone end the plan's cycle are priced as "
    "wipe-outs on top of the folded rate",
    "lemons folded": "beside failure domains lemon groups are folded into the groups' "
    "independent rate",
}


@dataclasses.dataclass(frozen=True)
class GroupProcess:
    """What the groups of a scenario undergo, as the hour-level model prices it.

    Built once per plan by :func:`group_process` from the run as given
    (``scenario``): the steps of the module docstring, each recorded by its
    short name in ``approximations``.  The cycle laws and the renewal core read
    this object, never a scenario rewritten to look like one they cover.

    Attributes
    ----------
    scenario : Scenario
        The run as given: its sizes, costs, work and laws.
    rate_per_hour : float
        ``lambda``: failures per hour of one group as priced, the unit of
        the cycle laws' dimensionless time (step 2's outage rate under
        repairs, step 3's lemon-weighted rate beside domains).
    clocks : bool
        The non-exponential lifetime law is kept as renewal clocks
        (``False``: exponential at ``rate_per_hour``).
    lemons : bool
        Lemon groups are kept as a law of their own (``False``: none, or
        averaged into the rate).
    domains : bool
        Failure domains are kept as events of ``domain_size`` groups
        (``False``: none, or folded into the rate and the bursts).
    repair_minutes : float or None
        Mean minutes a failed group is out (step 1: the pool's down time);
        ``None``: no repairs priced.
    repair_law : str or frozen distribution
        The law of that time (the pool's: exponential).
    burst_ratio : float
        Domain events per hour that alone end the plan's cycle, in units of
        ``rate_per_hour`` (priced as wipe-outs,
        :class:`~spare_theory.cycles.bursts.BurstWipeouts`).
    merged : float
        Share of a group's priced failures that come with another of the same
        folded burst (a strategy's own law counts them as one change).
    approximations : tuple of str
        The steps applied, in order: ``"pool"`` (step 1), ``"group-clock
        pool"`` (its fixed point on group clocks), ``"mean rate"`` (step 2),
        ``"clustering"`` and ``"restart-cut outages"`` (its renewal-clock
        factor ``c``, at outages cut by restarts), ``"lemons averaged"``,
        ``"domains folded"``, ``"burst wipe-outs"``, ``"lemons folded"``
        (step 3).  Empty: the scenario is priced as it is.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, failure_law="weibull",
    ...               repair_minutes=60.0)
    >>> process = group_process(sc)
    >>> process.clocks, round(process.rate_per_hour, 6), process.approximations
    (False, 0.007073, ('mean rate', 'clustering'))
    >>> group_process(Scenario.published_600k()).approximations
    ()
    """

    scenario: Scenario
    rate_per_hour: float
    clocks: bool
    lemons: bool
    domains: bool
    repair_minutes: float | None
    repair_law: Any
    burst_ratio: float = 0.0
    merged: float = 0.0
    approximations: tuple[str, ...] = ()

    @property
    def groups(self) -> int:
        """``N``, the scenario's groups."""
        return self.scenario.groups

    @property
    def mu(self) -> float:
        """``mu = 1 / (lambda m)``: repairs per priced mean group lifetime (0 without repairs)."""
        if self.repair_minutes is None:
            return 0.0
        return 60.0 / (self.rate_per_hour * self.repair_minutes)

    @property
    def caveats(self) -> tuple[str, ...]:
        """One sentence per approximation applied (:data:`APPROXIMATIONS`), in order."""
        return tuple(
            f"model approximation ({name}): {APPROXIMATIONS[name]}" for name in self.approximations
        )

    @property
    def stall(self) -> float:
        """``lambda * rejoin_minutes``: a rejoin's stall in units of ``1 / lambda``."""
        return self.rate_per_hour * self.scenario.rejoin_minutes / 60.0


@cached(maxsize=256)
def group_process(
    scenario: Scenario,
    *,
    repairs: bool = True,
    restart_hours: float = math.inf,
    bursts: tuple[int, float, float] = (0, 0.0, 0.0),
) -> GroupProcess:
    """The process the groups of ``scenario`` undergo, after the steps of the module docstring.

    Parameters
    ----------
    scenario : Scenario
        The run.
    repairs : bool
        ``False`` for a law that ends its cycle at every failure (CKPT-only,
        ``r = 1``): repairs and the pool change nothing there, so they are
        dropped first, and the law, lemons and domain events are priced
        together exactly (domain events on top of the groups' own law,
        :class:`~spare_theory.cycles.domains.ScaledExponential`).
    restart_hours : float
        Mean hours from a group's failure to the end of the next global
        restart, which ends its outage (step 2's ``c`` at
        :func:`outage_hours`); ``inf`` (the default): outages end at
        repairs.  The model finds it as a fixed point with the plan's cycle
        law (:func:`~spare_theory.hourly.model.priced_law`).
    bursts : tuple
        ``(wiping, share, merged_per_hour)``: the domains whose event alone
        ends the plan's cycle, the share of the groups in them, and the
        failures per hour and group the other domains' events bring beside a
        first one (:meth:`~spare_theory.strategies.base.Strategy.burst_wipeouts`,
        :func:`~spare_theory.hourly.model.priced_law`).  Where step 2 folds the
        domain events into the rate, the wiping ones are priced as wipe-outs
        instead (``burst_ratio``); none (the default): every event is folded.

    Returns
    -------
    GroupProcess

    Raises
    ------
    NoClosedFormError
        For a non-exponential ``failure_law`` with failure domains and no
        repairs: no model, drop ``domain_size`` (``simulate_training`` runs it).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, repair_minutes=30.0,
    ...               spare_nodes=2, swap_minutes=10.0)
    >>> process = group_process(sc)
    >>> process.approximations, process.repair_law  # out for the swap and a short wait
    (('pool',), 'exponential')
    >>> 10.0 < process.repair_minutes < 30.0
    True
    >>> group_process(sc, repairs=False).repair_minutes is None
    True
    """
    sc, steps = scenario, []
    repair_minutes = sc.repair_minutes if repairs else None
    repair_law = sc.repair_law if repair_minutes is not None else "exponential"
    if repair_minutes is not None and sc.pool:
        steps.append("pool" if sc.exponential or sc.renewal == "node" else "group-clock pool")
        repair_minutes, repair_law = pool_down_minutes(sc), "exponential"
    lam = sc.group_failure_rate_per_hour
    lemons = sc.lemon_fraction > 0 and sc.lemon_rate_factor > 1
    domains = sc.domain_size is not None and sc.domain_mtbf_hours is not None
    kept = dict(clocks=not sc.exponential, lemons=lemons, domains=domains)
    if repair_minutes is not None and (lemons or domains or not sc.exponential):
        wiping, share, merged_per_hour = bursts
        burst = 0.0 if sc.domain_mtbf_hours is None else 1.0 / sc.domain_mtbf_hours
        c = clustering(sc, repair_minutes, repair_law, restart_hours)
        steps += ["mean rate"] + ["clustering"] * (not sc.exponential)
        steps += ["restart-cut outages"] * (not sc.exponential and math.isfinite(restart_hours))
        steps += ["lemons averaged"] * lemons + ["domains folded"] * domains
        steps += ["burst wipe-outs"] * (wiping > 0)
        lam = (mean_group_rate(sc) - burst) / c + burst * (1.0 - share)
        return GroupProcess(
            sc,
            lam,
            clocks=False,
            lemons=False,
            domains=False,
            repair_minutes=repair_minutes,
            repair_law=repair_law,
            burst_ratio=wiping / float(sc.domain_mtbf_hours or math.inf) / lam,
            merged=merged_per_hour / lam,
            approximations=tuple(steps),
        )
    if repairs and domains and not sc.exponential:
        raise NoClosedFormError(
            "failure domains (domain_size) with a non-exponential failure_law have no model "
            "without repairs: drop domain_size or use failure_law='exponential' "
            "(simulate_training runs the combination)"
        )
    if repairs and domains and lemons:
        steps.append("lemons folded")
        lam *= 1.0 + (sc.lemon_rate_factor - 1.0) * sc.lemon_fraction
        kept["lemons"] = False
    return GroupProcess(
        sc,
        lam,
        **kept,
        repair_minutes=repair_minutes,
        repair_law=repair_law,
        approximations=tuple(steps),
    )


def check_split(scenario: Scenario, strategy: ModelStrategy) -> int:
    """``scenario.microbatches`` checked against the strategy and the scenario's other fields.

    Splitting is modelled for a strategy that splits (SPARe) under any
    lifetime law, lemons, repairs and planned restarts (by count or by
    cost), not under failure domains (after the approximations of
    :func:`group_process`, which fold domains
    into the rate when repairs are on).

    Parameters
    ----------
    scenario : Scenario
        The run (its ``microbatches`` field).
    strategy : Strategy
        The strategy object (:func:`spare_theory.strategy`).

    Returns
    -------
    int
        ``m`` as an int.

    Raises
    ------
    ValueError
        Naming ``microbatches`` and the field it cannot be combined with.

    Examples
    --------
    >>> from spare_theory import strategy
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, microbatches=8)
    >>> check_split(sc, strategy("spare"))
    8
    """
    m = strategy.check_microbatches(scenario.microbatches)
    if m != 1 and group_process(scenario).domains:
        raise NoClosedFormError(
            "microbatches must be 1 with domain_size set (no split model under failure "
            "domains without repairs): drop domain_size or microbatches "
            "(simulate_training runs the combination)"
        )
    return m
