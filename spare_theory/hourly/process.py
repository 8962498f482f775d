"""The process the groups of a scenario undergo, as the hour-level model prices it.

:func:`group_process` turns a scenario, once per plan, into a
:class:`GroupProcess`: the priced failure rate, which of the scenario's
mechanisms are kept as they are (renewal clocks, lemons, domain events) and
which were approximated, each step by its name (:data:`APPROXIMATIONS`), by
the formulas and in the order of :mod:`spare_theory.hourly.compose`.  The
cycle laws, the renewal core and the strategies' own laws read this object;
nothing downstream works out what was folded.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._caching import cached
from .._validation import NoClosedFormError
from ..planning.resolved import ModelStrategy
from .compose import clustering, mean_group_rate, pool_down_minutes
from .scenario import Scenario

__all__ = [
    "APPROXIMATIONS",
    "GroupProcess",
    "check_split",
    "down_share_rate",
    "group_process",
]


#: What each named step of :func:`group_process` approximates and what it drops, as an
#: estimate's caveat says it; the size of the miss is the audit's to state
#: (:func:`~spare_theory.strategies.coverage.audit_caveat`), not this text's.
APPROXIMATIONS = {
    "pool": "a spare pool is priced as an exponential group repair of the pool's mean down "
    "time (Palm's theorem), without the correlation of the groups waiting together",
    "group-clock pool": "a spare pool fed by group clocks is priced at the birth-death "
    "fixed point of its mean down time, as an exponential group repair",
    "restart-filled pool": "a global restart fills the slots waiting for a node with nodes "
    "the pool then owes: the wait between restarts, taken at random at the plan's mean "
    "cycle, of the birth-death chain of exponential repairs",
    "mean rate": "under repairs the groups are priced as exponential at their mean outage "
    "rate, without the transient after a restart",
    "clustering": "a renewal clock's failures within an outage are absorbed at the rate "
    "c = 1 + M(D) - D/m of its stationary law (young clocks after a rejoin are not followed)",
    "restart-cut outages": "an outage ends at its repair or at the next global restart, "
    "the restart's distance taken as exponential at the plan's mean cycle",
    "lemons averaged": "under repairs every group is priced at the one rate whose outages "
    "give the lemons' and the others' mean down share (a lemon's bursts are not correlated)",
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
    (``scenario``): the steps of :mod:`~spare_theory.hourly.compose`, each recorded by its
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
    every_failure_wipes : bool
        Built for a law whose cycle ends at every failure (CKPT-only, ``r =
        1``: :func:`group_process`'s ``repairs=False``): a straggler's or a
        wrong call's eviction ends the cycle at its first detection.
    approximations : tuple of str
        The names (:data:`APPROXIMATIONS`) of the steps applied, in order;
        empty: the scenario is priced as it is.

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
    every_failure_wipes: bool = False
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

    @property
    def detect(self) -> float:
        """``lambda * sum share x detect`` over the classes that stop the job (crash, hang;
        each detection ``detect_minutes`` apart until the faulty group is found): a
        failure's mean time the job waits for it, in units of ``1 / lambda`` (0 by
        default)."""
        return self.rate_per_hour * self._stop_minutes / 60.0

    @property
    def _stop_minutes(self) -> float:
        return math.fsum(e.share * e.window for e in self.events() if e.kind in _STOPS)

    def events(self) -> tuple[_Event, ...]:
        """What a failure does, by share: each class's failures split by how many detections
        find the faulty group (:meth:`FailureClass.calls
        <spare_theory.lifetimes.classes.FailureClass.calls>`).  A crash or a hang stops the
        job until the right call and its restart waits that long; a straggler slows it
        until then.  Where the first detection ends the cycle whether or not it is right
        (a corruption; a straggler under a law whose cycle ends at every failure, where
        a wrong call's eviction wipes out too), each wrong call delays the restart."""
        found = []
        for c in self.scenario.failure_classes:
            d = c.detect_minutes
            first_ends = c.kind == "corruption" or (
                c.kind == "straggler" and self.every_failure_wipes
            )
            for g, p in c.calls():
                window = d if first_ends else g * d
                wait = (g - 1) * d if first_ends else (g * d if c.stops_job else 0.0)
                found.append(_Event(c.share * p, c.kind, window, wait, c.slowdown, c))
        return tuple(found)

    @property
    def detections(self) -> tuple[tuple[float, float], ...]:
        """``(s_c, share_c)``: the time unnoticed of each class that stops the job, in units of
        ``1 / lambda``, by share (classes noticed alike merged; a straggler's is
        :attr:`stragglers`')."""
        return self._detections(self.events())

    @property
    def repaired_detections(self) -> tuple[tuple[float, float], ...]:
        """:attr:`detections` among the failures that take a group down where repairs bring
        groups back: a corruption ends the cycle instead, and the groups fail at the rest's
        rate (:func:`~spare_theory.hourly.model.process_law`), so it is left out and each
        share is over the rest."""
        kept = [e for e in self.events() if e.kind != "corruption"]
        total = math.fsum(e.share for e in kept)
        return self._detections([dataclasses.replace(e, share=e.share / total) for e in kept])

    def _detections(self, events: Sequence[_Event]) -> tuple[tuple[float, float], ...]:
        shares: dict[float, float] = {}
        for e in events:
            window = self.rate_per_hour * e.window / 60.0 if e.kind in _STOPS else 0.0
            shares[window] = shares.get(window, 0.0) + e.share
        return tuple(shares.items())

    @property
    def stragglers(self) -> tuple[tuple[float, float, float], ...]:
        """``(s_c, share_c, slowdown_c)`` of each straggler class noticed after a while:
        its time unnoticed in units of ``1 / lambda``, its share, its slowdown
        (:class:`~spare_theory.cycles.late.LateFailures`; outcomes alike merged)."""
        return tuple(
            (self.rate_per_hour * e.window / 60.0, share, e.slowdown)
            for e, share in self._late_outcomes(self.events())
            if e.kind == "straggler"
        )

    @property
    def corruptions(self) -> tuple[tuple[float, float, int], ...]:
        """``(s_c, share_c, k_c)`` of each corruption class: its time undetected in units of
        ``1 / lambda``, its share and how many checkpoints back the job restarts
        (:class:`~spare_theory.cycles.late.LateFailures`; outcomes alike merged)."""
        return tuple(
            (self.rate_per_hour * e.window / 60.0, share, e.source.rollback_checkpoints)
            for e, share in self._late_outcomes(self.events())
            if e.kind == "corruption"
        )

    @staticmethod
    def _late_outcomes(events: tuple[_Event, ...]) -> list[tuple[_Event, float]]:
        """Of ``events``, those that reach their group late (stragglers noticed after a
        while, then corruptions), the ones the law cannot tell apart (kind, window,
        slowdown, rollback) merged: ``(first such event, their total share)``.  The wrong
        calls split one class into many events that differ only in the restart's wait."""
        merged: dict[tuple, list] = {}
        # Stragglers first (a stable sort keeps the classes' order within each kind).
        for e in sorted((e for e in events if e.reaches_late), key=lambda e: e.kind != "straggler"):
            merged.setdefault(e.outcome, [e, 0.0])[1] += e.share
        return [(e, share) for e, share in merged.values()]

    @property
    def restart_minutes(self) -> float:
        """Mean minutes from a wiping failure to the end of its restart: the wait until a
        failure that stops the job is found, then the restart (a straggler wipes out
        only once it is noticed)."""
        return self.scenario.restart_minutes + math.fsum(
            e.share * e.restart_wait for e in self.events() if e.kind in _STOPS
        )

    def restarts(self, late_endings: tuple[float, ...] = ()) -> tuple[tuple[float, float], ...]:
        """``(minutes, weight)`` of each restart length: the restart after the wiping
        failure's wait until found, by the chance that a wipe-out is of its class (one
        length by default).

        A straggler's group fails and a corruption ends the cycle ``s_c``
        after it starts, so only if the cycle outlives that window: each
        late class ends it with the chance ``late_endings`` gives, in the
        order of :attr:`stragglers` then :attr:`corruptions`, shared by share among
        the events each merges (the cycle law's
        :meth:`~spare_theory.cycles.base.CycleLaw.late_endings`); the classes
        that fail their group at once share the rest by share.  Without late
        classes: the shares themselves.
        """
        events = self.events()
        late = self._late_outcomes(events)
        if len(late_endings) != len(late):
            raise ValueError(
                f"late_endings must give one chance per late outcome ({len(late)}), "
                f"got {len(late_endings)}"
            )
        # Each merged outcome's chance, shared among its events by share (alike to the law).
        by_outcome = {e.outcome: p / share for (e, share), p in zip(late, late_endings)}
        per_share = [by_outcome[e.outcome] if e.reaches_late else None for e in events]
        weights: dict[float, float] = {}
        at_once = math.fsum(e.share for e, p in zip(events, per_share) if p is None)
        rest = max(1.0 - math.fsum(late_endings), 0.0) / at_once if late else 1.0
        for e, p in zip(events, per_share):
            minutes = self.scenario.restart_minutes + e.restart_wait
            weights[minutes] = weights.get(minutes, 0.0) + e.share * (rest if p is None else p)
        return tuple(weights.items())


_STOPS = ("crash", "hang")


@dataclasses.dataclass(frozen=True)
class _Event:
    """One outcome of a failure (:meth:`GroupProcess.events`): its share of the priced
    failures, its kind, the minutes it goes unnoticed (``window``), the minutes its wipe-out's
    restart waits for the faulty group, its slowdown and its class."""

    share: float
    kind: str
    window: float
    restart_wait: float
    slowdown: float
    source: Any

    @property
    def reaches_late(self) -> bool:
        """Whether it reaches its group late: a straggler noticed after a while, or a
        corruption (:class:`~spare_theory.cycles.late.LateFailures`)."""
        return self.kind == "corruption" or (self.kind == "straggler" and self.window > 0.0)

    @property
    def outcome(self) -> tuple:
        """What the cycle law sees of it: kind, window, slowdown and rollback."""
        return (self.kind, self.window, self.slowdown, self.source.rollback_checkpoints)


@cached(maxsize=256)
def group_process(
    scenario: Scenario,
    *,
    repairs: bool = True,
    restart_hours: float = math.inf,
    bursts: tuple[int, float, float] = (0, 0.0, 0.0),
) -> GroupProcess:
    """The process the groups of ``scenario`` undergo: the approximations of ``compose``, in order.

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
        :func:`outage_hours`; with a spare pool, the pool's wait instead:
        :func:`pool_down_minutes`); ``inf`` (the default): outages end at
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
        node_pool = sc.exponential or sc.renewal == "node"
        steps.append("pool" if node_pool else "group-clock pool")
        repair_minutes, repair_law = pool_down_minutes(sc, restart_hours), "exponential"
        steps += ["restart-filled pool"] * (node_pool and math.isfinite(restart_hours))
    lam = sc.group_failure_rate_per_hour
    lemons = sc.lemon_fraction > 0 and sc.lemon_rate_factor > 1
    domains = sc.domain_size is not None and sc.domain_mtbf_hours is not None
    kept = dict(clocks=not sc.exponential, lemons=lemons, domains=domains)
    if repair_minutes is not None and (lemons or domains or not sc.exponential):
        wiping, share, merged_per_hour = bursts
        burst = 0.0 if sc.domain_mtbf_hours is None else 1.0 / sc.domain_mtbf_hours
        # A pool's outage is its wait, cut by the restarts above; the clustering's is not.
        c = clustering(sc, repair_minutes, repair_law, math.inf if sc.pool else restart_hours)
        steps += ["mean rate"] + ["clustering"] * (not sc.exponential)
        steps += ["restart-cut outages"] * (
            not (sc.exponential or sc.pool) and math.isfinite(restart_hours)
        )
        steps += ["lemons averaged"] * lemons + ["domains folded"] * domains
        steps += ["burst wipe-outs"] * (wiping > 0)
        if lemons:
            lam = down_share_rate(sc, c, burst * (1.0 - share), repair_minutes / 60.0)
        else:
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
        every_failure_wipes=not repairs,
        approximations=tuple(steps),
    )


def down_share_rate(
    scenario: Scenario, c: float, independent_per_hour: float, down_hours: float
) -> float:
    """The one group rate per hour whose outages give lemons and others their mean down share.

    A group failing at rate ``x`` and out ``D`` hours a time is down ``pi(x)
    = x D / (1 + x D)`` of the time (any repair law: insensitivity), so an
    ordinary group at ``x_0 = lambda / c + b`` and a lemon at ``x_1 = L
    lambda / c + b`` (``c`` the clustering, ``b`` the independent domain
    events per hour) are down ``pi_0`` and ``pi_1``.  The rate returned,
    ``pi / (D (1 - pi))`` with ``pi = (1 - phi) pi_0 + phi pi_1``, gives
    identical groups that mean down share.  In steady state a group enters
    its outages at ``pi_i / D`` whatever its class, so with lemons placed
    apart from the strategy's units the chance that a unit is all down and
    the rate of entering that state depend on the classes only through
    ``pi``; averaging the rates instead (``lambda (1 + (L - 1) phi)``)
    overstates ``pi``, as ``pi(x)`` is concave.

    Examples
    --------
    >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=96.0, restart_minutes=20,
    ...               checkpoint_minutes=1, work_hours=40, repair_minutes=300,
    ...               lemon_fraction=0.25, lemon_rate_factor=9.0)
    >>> lam = sc.group_failure_rate_per_hour
    >>> round(down_share_rate(sc, 1.0, 0.0, 5.0) / lam, 3)  # the mean rate is 3 lambda
    1.723
    """
    phi = scenario.lemon_share
    lam = scenario.group_failure_rate_per_hour / c
    rates = np.array([lam, scenario.lemon_rate_factor * lam]) + independent_per_hour
    down = rates * down_hours / (1.0 + rates * down_hours)
    share = (1.0 - phi) * down[0] + phi * down[1]
    return float(share / (down_hours * (1.0 - share)))


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
