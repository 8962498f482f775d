"""Event-driven Monte Carlo of whole training runs, independent of the closed form.

One trial plays a run from a fresh start (all groups healthy, computing, no
restart) until ``work_hours`` of work are saved by a checkpoint.  Events:

* **failures**: with exponential lifetimes every healthy group fails after
  an exponential time of rate ``lambda``: the next failure comes after
  ``Exp((N - f) lambda)`` and hits a uniformly random healthy group.  With
  another ``Scenario.failure_law`` every group keeps a renewal clock (its
  next failure is its last one plus a lifetime drawn from
  ``Scenario.group_lifetime_law``; clocks are never reset at global
  restarts, the published simulator's semantics; a down group's clock renews
  silently); each run starts with stationary clocks (first lifetimes from the
  equilibrium residual-life law: a cluster that has run for a long time).
* **the strategy's rule** (:mod:`spare_theory.hourly.rules`): each failure
  asks whether it is a wipe-out and what the throughput is now.  The work
  since the last completed checkpoint is lost at a wipe-out and a global
  restart of ``R`` follows, after which all groups are healthy; a wipe-out
  during a restart starts a new restart.
* **repairs** (``Scenario.repair_minutes``): a failing group is down for a
  repair time drawn from the scenario's repair law; it then rejoins (the rule
  is told) and the whole job stalls ``rejoin_minutes`` (stalls queue; no work
  is done while stalled).  Without repairs failed groups stay down until the
  next restart.
* **compute**: between events work advances at the rule's throughput; after
  ``tau`` of compute time (stalls included) or when the remaining work is
  done, a checkpoint of ``delta`` saves the segment's work if no wipe-out
  strikes before it ends.
* **planned restarts**: a restart without rollback (the segment's work is
  kept) once ``planned_restart_failures`` groups are down at once, or once a
  rule whose step cost grows (SPARe) reaches ``planned_restart_cost``.
* **reconfiguring rules** (elastic DP and hot spares,
  :class:`~spare_theory.hourly.rules.QuorumRules`), the issue's contract: a
  failure that leaves the quorum up starts a stall of
  ``reconfigure_minutes``, and so does a rejoin; an event during a stall
  starts it over (stalls do not queue).  Events during a restart start no
  stall, none follows it; events during a checkpoint do not interrupt it
  and one stall starts at its end if any happened (a stall already running
  goes on through the checkpoint).  A failed group is out for its repair
  time plus ``heal_minutes`` (its live recovery from a peer).  The work
  that every step would have done at the whole global batch is summed
  beside the work, for the samples skipped.

**Independence.**  Nothing here uses the model it checks: this module
imports the scenario, the rules (real placements, exact controllers) and the
argument validators, never a cycle law, the renewal model or the searches
(``tests/test_training_sim.py`` checks the imports in a fresh interpreter).

The module is a little over 500 lines: one run's event loop and the
per-run breakdown by cause that its bill reads are measured on the same clock,
so they stay together.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import Any

import numpy as np

from .._parallel import map_tasks
from .._samples import HourSamples
from .._validation import as_count, as_seed_sequence, child_seed
from ..lifetimes.clocks import RenewalClocks
from ..planning.bill import BADPUT_CAUSES, BillSamples, CostModel, make_bill
from .repairs_sim import repair_sampler
from .scenario import Scenario
from .sources import NodeWorld, Replay, needs_nodes

__all__ = [
    "BREAKDOWN",
    "CONTROLLER_MAX_GROUPS",
    "OVERHEAD_SOURCES",
    "TrainingSamples",
    "simulate_runs",
]

#: Columns of :attr:`TrainingSamples.breakdown_hours`: the work saved, then the
#: badput causes (:func:`_one_run` returns them in this order).
BREAKDOWN = ("useful", *BADPUT_CAUSES)

#: Where SPARe's ``S*`` and wipe-outs come from in :func:`spare_theory.simulate_training`.
OVERHEAD_SOURCES = ("auto", "controller", "pool")
#: ``"auto"`` runs the controller per cycle up to this many groups (about 0.1 s per
#: trajectory at N = 20,000, r = 9) and draws from a trajectory pool beyond.
CONTROLLER_MAX_GROUPS = 20_000
# Step costs are multiples of 1/m: a cost within this relative slack of the
# threshold reaches it (m c in floating point may land just above an integer).
_COST_SLACK = 1e-12
# Lifetimes drawn from a law at once (one rvs call per batch).
_LIFETIME_BATCH = 1024
# Trials per task of a simulation spread over an executor.
_TRIALS_PER_TASK = 4
# The group of a wrong call's eviction in the heap of late events: a healthy one, drawn then.
_EVICT = -2


@dataclass(frozen=True)
class TrainingSamples(HourSamples):
    """Per-run results of :func:`spare_theory.simulate_training` (arrays of length ``trials``).

    Attributes
    ----------
    hours : numpy.ndarray
        Wall-clock hours of each run.
    restarts : numpy.ndarray
        Global restarts (wipe-outs and planned restarts) in each run.
    repairs : numpy.ndarray or None
        Repairs (failed groups rejoining without a restart) in each run;
        all 0 without repairs (``None`` when built without it).
    planned_restarts : numpy.ndarray or None
        Planned restarts (no rollback; ``Scenario.planned_restart_failures``
        or ``planned_restart_cost``) among ``restarts`` in each run (``None``
        when built without it).
    samples_skipped : numpy.ndarray or None
        Share of the global batch not trained over each run's saved work (0
        for the exact-batch strategies; ``None`` when built without it).
    exact_batch : bool
        Whether every step trains the whole global batch.
    breakdown_hours : numpy.ndarray or None
        Each run's wall time split (one row per run, columns :data:`BREAKDOWN`:
        the work saved, then the badput causes), for :meth:`bill`; ``None``
        when built without it.
    reserved_gpus, grouped_gpus : int
        GPUs reserved (the scenario's plus its spare nodes') and in groups,
        for :meth:`bill` (0: unknown).

    Examples
    --------
    >>> import numpy as np
    >>> runs = TrainingSamples(hours=np.array([10.0, 12.0]), restarts=np.array([1, 2]))
    >>> runs.mean_hours, round(runs.standard_error_hours, 3), runs.mean("restarts")
    (11.0, 1.0, 1.5)
    >>> runs.to_frame().columns.tolist()
    ['trial', 'hours', 'restarts']
    """

    hours: np.ndarray
    restarts: np.ndarray
    repairs: np.ndarray | None = None
    planned_restarts: np.ndarray | None = None
    samples_skipped: np.ndarray | None = None
    exact_batch: bool = True
    breakdown_hours: np.ndarray | None = None
    reserved_gpus: int = 0
    grouped_gpus: int = 0

    def bill(self, cost: CostModel) -> BillSamples:
        """Each run's bill under ``cost``, from its own measured breakdown.

        ``mean(name)`` and ``standard_error(name)`` of the result compare
        with an estimate's :class:`~spare_theory.planning.bill.Bill`.

        Parameters
        ----------
        cost : CostModel

        Returns
        -------
        BillSamples

        Raises
        ------
        ValueError
            When the samples were built without a breakdown.

        Examples
        --------
        >>> from spare_theory import CostModel, Scenario, simulate_training
        >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
        >>> runs = simulate_training(sc, "rep", r=2, checkpoint_interval_minutes=60,
        ...                          trials=4, seed=1)
        >>> bills = runs.bill(CostModel())
        >>> bool(np.allclose(bills.gpu_hours, 256 * runs.hours))
        True
        """
        if self.breakdown_hours is None:
            raise ValueError("these samples carry no breakdown_hours: no bill")
        parts = self.breakdown_hours.T
        return make_bill(
            cost,
            hours=self.hours,
            useful_hours=parts[0],
            badput_hours=dict(zip(BREAKDOWN[1:], parts[1:])),
            reserved_gpus=self.reserved_gpus,
            grouped_gpus=self.grouped_gpus,
        )


class _ExponentialFailures:
    """Failures ``Exp(healthy lambda)`` apart, each hitting a uniformly random healthy group."""

    # Groups are exchangeable: a rule that needs no group identity draws none.
    owns_repairs, needs_pick, draws_ahead = False, False, True

    def __init__(self, N: int, lam: float, rng: np.random.Generator) -> None:
        self.alive = np.arange(N)
        self.lam, self.rng = lam, rng

    def next_time(self, t: float, healthy: int) -> float:
        return t + self.rng.exponential(1.0 / (healthy * self.lam)) if healthy else math.inf

    def pick(self, healthy: int) -> int:
        i = int(self.rng.integers(healthy))
        g = int(self.alive[i])
        self.alive[i] = self.alive[healthy - 1]
        return g

    def restore(self, group: int, healthy: int) -> None:
        self.alive[healthy] = group


class _RenewalFailures:
    """The earliest expiring renewal clock of a healthy group fails next."""

    # The clock that expired must be fired (and its group marked down) at every failure,
    # whether or not the rule asks which group it was: asking for the next failure renews
    # the down groups' clocks silently, and at a wipe-out, after which every group is up,
    # the just-failed group's clock would be renewed unfired (one failure in N lost).
    owns_repairs, needs_pick, draws_ahead = False, True, False

    def __init__(self, clocks: RenewalClocks, N: int) -> None:
        self.clocks = clocks
        self.down = np.zeros(N, dtype=bool)  # all groups healthy at a restart

    def next_time(self, t: float, healthy: int) -> float:
        return self.clocks.next_healthy(self.down)[0] if healthy else math.inf

    def pick(self, healthy: int) -> int:
        g = self.clocks.fire()
        self.down[g] = True
        return g

    def restore(self, group: int, healthy: int) -> None:
        self.down[group] = False


class _Cycle:
    """One cycle from a restart's start: its clock, the rule, the failures, the repairs due."""

    def __init__(
        self,
        rule: Any,
        failures: Any,
        N: int,
        t: float,
        rng: np.random.Generator,
        repair_hours: Callable[[float], float] | None,
        stall_hours: float,
        detect_hours: Callable[[], tuple[float, float, int, int]] | None = None,
    ) -> None:
        self.rule, self.failures, self.rng = rule, failures, rng
        #: Draws of a failure's ``(hours to a detection, slowdown, rollback, wrong calls)``
        #: by its class (``None``: every failure noticed at once), and the hours the restart
        #: waits for the wiping failure's faulty group to be found.
        self.detect_hours, self.wipe_detect = detect_hours, 0.0
        #: Stragglers and corruptions not yet noticed and the evictions of healthy groups by
        #: wrong calls, a heap of (at, group or _EVICT, slowdown, rollback, hours until the
        #: faulty group is found from then), and the largest slowdown among them (1:
        #: none): every step takes that much longer.
        self.slow: list[tuple[float, int, float, int, float]] = []
        self.slowdown = 1.0
        #: Checkpoints back the wipe-out sends the job (a corruption found; 1: the last).
        self.rollback = 1
        self.N = self.healthy = N
        self.t = t
        self.repair_hours, self.stall, self.stall_end = repair_hours, stall_hours, t
        #: Elastic stall semantics (module docstring): events while ``holding``
        #: (restart, checkpoint) start no stall; ``held`` records that one happened.
        self.reconfigures, self.holding, self.held = rule.reconfigures, False, False
        # (repair done, group), a heap; a node-level source keeps its own returns there.
        self.due: list[tuple[float, int]] = failures.due if failures.owns_repairs else []
        self.picks = failures.owns_repairs or failures.needs_pick or rule.needs_group
        self.repairs = 0
        #: Planned restart (no rollback) once this many groups are down at once,
        #: or once a growing step cost ``1 / throughput`` reaches ``cost_trigger``.
        self.trigger, self.cost_trigger = math.inf, math.inf
        #: Whether the cycle ended at a trigger (then not a wipe-out).
        self.planned = False
        self.next_fail = failures.next_time(t, N)
        #: Hours of compute time spent stalled (rejoins, reconfigurations, failures not yet
        #: noticed) so far, of them until a failure was noticed, and the hours a straggler's
        #: slowed steps took beyond their work (:meth:`_spent`); the time the last failure
        #: unnoticed is noticed.
        self.stalled = self.detect_stalled = self.slowed = 0.0
        self.detect_end = t

    def _next_event(self) -> float:
        """Time of the next failure, rejoin, straggler noticed or eviction."""
        due, nxt = self.due, self.next_fail
        if self.slow and self.slow[0][0] < nxt:
            nxt = self.slow[0][0]
        return due[0][0] if due and due[0][0] < nxt else nxt

    def _event(self) -> bool:
        """Apply the next failure or rejoin (the clock moves to it); True at a wipe-out.

        After an event changing the groups up, True also when the groups down
        or the step cost reach a trigger (then :attr:`planned` is set).
        """
        due, failures, rule, slow = self.due, self.failures, self.rule, self.slow
        noticed = slow[0][0] if slow else math.inf
        if due and due[0][0] <= self.next_fail and due[0][0] <= noticed:
            self.t, g = heappop(due)
            failures.restore(g, self.healthy)
            self.healthy += 1
            self.repairs += 1
            if not self.reconfigures:
                self.stall_end = max(self.stall_end, self.t) + self.stall
            # A membership change: the stall starts over now, or after the wait holding it
            # (inlined in both branches: the loop's hottest lines).
            elif self.holding:
                self.held = True
            else:
                self.stall_end = self.t + self.stall
            rule.rejoin(g)
        elif noticed <= self.next_fail:
            # A straggler noticed: its group fails now, as any failure; a corruption found:
            # the whole job goes back, whatever the redundancy; a wrong call: a healthy group
            # is evicted, as a failure noticed at once.
            self.t, g, _, rollback, left = heappop(slow)
            self.slowdown = max((e[2] for e in slow), default=1.0)
            if rollback:
                self.rollback, self.wipe_detect = rollback, left
                return True
            if g == _EVICT:
                if self.healthy and self._evict(left):
                    return True
            elif self._fail(g, 0.0):
                return True
        else:
            self.t = t = self.next_fail
            g = failures.pick(self.healthy) if self.picks else -1
            if g is None:  # a node-level event that fails no group
                self.next_fail = failures.next_time(t, self.healthy)
                return False
            self.healthy -= 1
            unseen, slowdown, rollback, wrong = (
                (0.0, 0.0, 0, 0) if self.detect_hours is None else self.detect_hours()
            )
            if rollback and unseen == 0.0:
                self.rollback, self.wipe_detect = rollback, 0.0
                return True
            if rollback:
                # A corruption: its group computes on corrupted state until found; each wrong
                # call then delays the restart by a detection time.
                heappush(slow, (t + unseen, g, 1.0, rollback, wrong * unseen))
            elif slowdown and unseen > 0.0:
                # A straggler: its group keeps running slowed until found (after the wrong
                # calls), and no other failure of it is drawn meanwhile: it is out of the
                # healthy groups.
                heappush(slow, (t + (wrong + 1) * unseen, g, slowdown, 0, 0.0))
                self.slowdown = max(self.slowdown, slowdown)
                self._wrong_calls(t, unseen, wrong)
            elif self._fail(g, (wrong + 1) * unseen):
                if self.repair_hours is None and self.failures.draws_ahead:
                    # Without repairs the next failure is drawn before the cycle ends:
                    # the stream order every seeded exponential result without repairs
                    # rests on (renewal clocks draw none: that would renew them unfired).
                    self.next_fail = failures.next_time(t, self.healthy)
                return True
            else:
                self._wrong_calls(t, unseen, wrong)
        # The failure rate changed (or a failure happened): draw the next one afresh.
        self.next_fail = failures.next_time(self.t, self.healthy)
        self.planned = self.N - self.healthy >= self.trigger or (
            rule.cost_grows and 1.0 / rule.throughput >= self.cost_trigger
        )
        return self.planned

    def _wrong_calls(self, t: float, unseen: float, wrong: int) -> None:
        """Schedule the evictions of a failure at ``t`` found after ``wrong`` wrong calls
        ``unseen`` hours apart, each with the hours left until the right one."""
        for j in range(1, wrong + 1):
            heappush(self.slow, (t + j * unseen, _EVICT, 1.0, 0, (wrong + 1 - j) * unseen))

    def _evict(self, left: float) -> bool:
        """A wrong call evicts a healthy group, noticed at once; True at a wipe-out, whose
        restart waits ``left`` hours more for the faulty group to be found."""
        g = self.failures.pick(self.healthy) if self.picks else -1
        self.healthy -= 1
        if self._fail(g, 0.0):
            self.wipe_detect = left
            return True
        return False

    def _fail(self, g: int, unseen: float) -> bool:
        """Group ``g`` fails now, noticed ``unseen`` hours later; True at a wipe-out."""
        t = self.t
        if self.repair_hours is not None:
            heappush(self.due, (t + self.repair_hours(self.rng.random()), g))
        if self.rule.fail(g):
            self.wipe_detect = unseen
            return True
        # Unnoticed for its class's detection time: the job makes no progress.
        if unseen > 0.0:
            self.stall_end = max(self.stall_end, t + unseen)
            self.detect_end = max(self.detect_end, t + unseen)
        if self.reconfigures:
            if self.holding:
                self.held = True
            else:  # the membership change once the failure is noticed
                self.stall_end = t + unseen + self.stall
        return False

    def wait(self, duration: float, *, checkpoint: bool = False) -> bool:
        """Spend ``duration`` hours without computing (restart, checkpoint); True at a wipe-out.

        A reconfiguring rule's events start no stall meanwhile; after a
        ``checkpoint`` during which some happened, one stall starts.
        """
        end = self.t + duration
        self.holding, self.held = self.reconfigures, False
        while self._next_event() < end:
            if self._event():
                self.holding = False
                return True
        self.t = end
        self.holding = False
        if checkpoint and self.held:
            self.stall_end = end + self.stall
        return False

    def _spent(self, t: float, end: float, stalled: bool) -> None:
        """Book ``[t, end]`` of compute time: a stall (the part before the last failure
        unnoticed is noticed: a detection stall), or steps slowed by a straggler (the
        share ``1 - 1 / slowdown`` of the time)."""
        if stalled:
            self.stalled += end - t
            if t < self.detect_end:
                self.detect_stalled += (end if end < self.detect_end else self.detect_end) - t
        elif self.slowdown > 1.0:
            self.slowed += (end - t) * (1.0 - 1.0 / self.slowdown)

    def compute(self, tau: float, work_left: float) -> tuple[float, float, bool]:
        """Compute for ``tau`` hours or until ``work_left`` is done: ``(work, batch, wiped)``.

        Work accrues at the rule's throughput, which changes at each event,
        and not at all while a rejoin (or, for a reconfiguring rule, any
        membership change) stalls the job.  ``batch``: the work at the
        whole global batch (a reconfiguring rule's ``batch_throughput``;
        ``work`` itself for the others).
        """
        work, batch, left = 0.0, 0.0, tau
        # Locals and inlined min()s: this loop runs once per event (same operations).
        rule, due, reconfigures = self.rule, self.due, self.reconfigures
        t = self.t
        while True:
            # The next stop: the stall's end, the interval's end or the work's end.
            stall_end = self.stall_end
            if t < stall_end:
                rate, done = 0.0, t + left <= stall_end
                end = t + left if done else stall_end
                stalled = True
            else:
                rate, done, stalled = rule.throughput / self.slowdown, True, False
                need = (work_left - work) / rate
                end = t + (need if need < left else left)
            nxt = self.next_fail
            if due and due[0][0] < nxt:
                nxt = due[0][0]
            if self.slow and self.slow[0][0] < nxt:
                nxt = self.slow[0][0]
            if reconfigures and rate > 0:
                batch += rule.batch_throughput / self.slowdown * ((nxt if nxt < end else end) - t)
            if nxt >= end:
                work += rate * (end - t)
                left -= end - t
                self._spent(t, end, stalled)
                self.t = t = end
                if done:
                    return work, batch if reconfigures else work, False
                continue
            work += rate * (nxt - t)
            left -= nxt - t
            self._spent(t, nxt, stalled)
            if self._event():
                return work, batch if reconfigures else work, True
            t = self.t


def detection_sampler(
    scenario: Scenario, rng: np.random.Generator
) -> Callable[[], tuple[float, float, int, int]] | None:
    """Draws of a failure's ``(hours to a detection, slowdown, rollback, wrong calls)``, its
    class drawn by share: a straggler's slowdown (0 for the other kinds), a corruption's
    checkpoints back (0 for the other kinds) and the detections that blame a healthy group
    before the right one (geometric, drawn only for a class with a misdiagnosis);
    ``None``: every failure is a crash or a hang noticed at once, and no draw is made, so
    seeded runs are as before classes.

    Examples
    --------
    >>> from spare_theory.lifetimes.classes import FailureClass
    >>> sc = Scenario(gpus=64, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=48, failure_classes=(FailureClass("hang", 1.0, "hang", 30),))
    >>> detection_sampler(sc, np.random.default_rng(0))()
    (0.5, 0.0, 0, 0)
    """
    classes = scenario.failure_classes
    drawn = [
        (
            c.detect_minutes / 60,
            c.slowdown if c.kind == "straggler" else 0.0,
            c.rollback_checkpoints if c.kind == "corruption" else 0,
            c.misdiagnosis,
        )
        for c in classes
    ]
    if not any(hours or rollback or wrong for hours, _, rollback, wrong in drawn):
        return None
    edges = np.cumsum([c.share for c in classes])[:-1]

    def draw() -> tuple[float, float, int, int]:
        i = 0 if len(drawn) == 1 else int(np.searchsorted(edges, rng.random(), side="right"))
        hours, slowdown, rollback, wrong = drawn[i]
        calls = int(rng.geometric(1.0 - wrong)) - 1 if wrong > 0.0 else 0
        return hours, slowdown, rollback, calls

    return draw


def _one_run(
    scenario: Scenario,
    rules: Callable[[np.random.Generator], Any],
    tau: float,
    rng: Any,
    replay: Replay | None = None,
    max_hours: float = math.inf,
) -> tuple[float, int, int, int, float, tuple[float, ...]]:
    """Hours, restarts, repairs, planned restarts, samples skipped and breakdown of one run.

    A run still unfinished when a restart begins after ``max_hours`` stops
    there with ``hours = inf`` (a hopeless plan costs a bounded time to rule out).

    A planned restart keeps the work of the current segment, then restarts
    as a wipe-out does.  The breakdown (hours, :data:`BREAKDOWN` order): the
    work saved, then the wall time by badput cause, measured on the clock:
    checkpoint waits, the compute of segments lost at wipe-outs, restart
    waits (cut short or not), the compute of kept segments beyond their
    work, and every stall (rejoins, reconfigurations: the GPUs wait).  The
    compute beyond the work is redundant compute for a rule that does not
    reconfigure; for one that does, the batch it skipped (``batch - work``)
    and its idle spares (the rest: the spare groups' share of the time).
    Then the failure classes' causes, each taken from one of those: the
    waits until a wiping failure is noticed (from the restart waits) and
    the stalls until a failure the job survives is noticed (from the
    stalls), the time a straggler's slowed steps of the kept segments took
    beyond their work (``1 - 1 / slowdown`` of it, from the compute beyond
    the work), and the kept compute a corruption's rollback sent back (no
    longer kept).
    """
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    R, delta, W = (
        scenario.restart_minutes / 60,
        scenario.checkpoint_minutes / 60,
        scenario.work_hours,
    )
    # Work within this tolerance of W counts as done (float rounding of sums).
    eps = 1e-12 * W
    world = NodeWorld(scenario, rng, replay) if replay or needs_nodes(scenario) else None
    clocks = (
        None
        if scenario.exponential or world is not None
        else RenewalClocks(
            scenario.group_lifetime_law, N, rng, batch=_LIFETIME_BATCH, start="equilibrium"
        )
    )

    draw_repair: Callable[[float], float] = repair_sampler(scenario)
    heal_hours = scenario.heal_minutes / 60
    detect = detection_sampler(scenario, rng)

    def draw_healed(q: float) -> float:
        return draw_repair(q) + heal_hours

    t, saved, saved_batch, restarts, repairs, planned = 0.0, 0.0, 0.0, 0, 0, 0
    # Wall time in restarts, checkpoints, compute lost and kept (stalls apart), and of it:
    # the waits and stalls until a failure is noticed, the kept compute a straggler's slowed
    # steps took beyond their work, the compute a corruption's rollback sent back.
    restart_h, checkpoint_h, lost_h, kept_h, stalled_h = 0.0, 0.0, 0.0, 0.0, 0.0
    detect_h, detect_stalled_h, slowed_h, rollback_h = 0.0, 0.0, 0.0, 0.0
    fresh = True  # the run starts computing, with no initial restart (as Daly)
    unseen = 0.0  # hours the last wiping failure went unnoticed
    # (saved, saved_batch, kept_h, slowed_h) at the last checkpoints, for a corruption's
    # rollback; kept only when a class can send the job further back than the last one.
    back = max(c.rollback_checkpoints for c in scenario.failure_classes)
    history: list[tuple[float, ...]] | None = [(0.0, 0.0, 0.0, 0.0)] if back > 1 else None
    while True:
        rule = rules(rng)
        failures: Any
        if world is not None:
            repairing = world.repairs and rule.repairable
            heal = scenario.heal_minutes / 60 if rule.reconfigures else 0.0
            failures = world.cycle(t, returns=repairing, heal_hours=heal)
        else:
            repairing = scenario.repair_minutes is not None and rule.repairable
            failures = (
                _ExponentialFailures(N, lam, rng) if clocks is None else _RenewalFailures(clocks, N)
            )
        draw: Callable[[float], float]
        if rule.reconfigures:
            draw, stall = draw_healed, scenario.reconfigure_minutes / 60
        else:
            draw, stall = draw_repair, scenario.rejoin_minutes / 60 if repairing else 0.0
        own = repairing and world is None
        cycle = _Cycle(rule, failures, N, t, rng, draw if own else None, stall, detect)
        cycle.trigger = scenario.planned_restart_failures or math.inf
        if scenario.planned_restart_cost is not None:
            cycle.cost_trigger = scenario.planned_restart_cost * (1.0 - _COST_SLACK)
        # A restart begins once the wiping failure is noticed (a planned one at once).
        wiped = False if fresh else cycle.wait(R + unseen)
        # The wait until the wiping failure is noticed comes first, then the restart.
        detect_h += min(unseen, cycle.t - t)
        restart_h += cycle.t - t - min(unseen, cycle.t - t)
        fresh = False
        while not wiped:
            start, stalled, slowed = cycle.t, cycle.stalled, cycle.slowed
            work, batch, wiped = cycle.compute(tau, W - saved)
            computed, written = cycle.t - start - (cycle.stalled - stalled), cycle.t
            wiped = wiped or cycle.wait(delta, checkpoint=True)
            checkpoint_h += cycle.t - written
            if not wiped or cycle.planned:
                saved += work
                saved_batch += batch
                kept_h += computed
                slowed_h += cycle.slowed - slowed
                if history is not None:
                    history.append((saved, saved_batch, kept_h, slowed_h))
                if saved >= W - eps:
                    skipped = 1.0 - saved / saved_batch if saved_batch > 0 else 0.0
                    detect_stalls = detect_stalled_h + cycle.detect_stalled
                    stalls = stalled_h + cycle.stalled - detect_stalls
                    # A straggler's slowed steps are compute beyond the work (or idle spares'
                    # time, for a reconfiguring rule): they are taken out of it.
                    if rule.reconfigures:
                        beyond = (0.0, saved_batch - saved, kept_h - saved_batch - slowed_h)
                    else:
                        beyond = (kept_h - saved - slowed_h, 0.0, 0.0)
                    parts = (saved, checkpoint_h, lost_h, restart_h, beyond[0], stalls)
                    return (
                        cycle.t,
                        restarts,
                        repairs + cycle.repairs,
                        planned,
                        skipped,
                        (*parts, *beyond[1:], detect_h + detect_stalls, slowed_h, rollback_h),
                    )
            else:
                lost_h += computed
        t = cycle.t
        unseen = 0.0 if cycle.planned else cycle.wipe_detect
        if history is not None and cycle.rollback > 1 and not cycle.planned:
            # A corruption found: back to the checkpoint rollback - 1 before the last (the
            # run's start at most); the compute kept since is rolled back.
            for _ in range(min(cycle.rollback, len(history)) - 1):
                history.pop()
            saved, saved_batch, kept, slowed_h = history[-1]
            rollback_h += kept_h - kept
            kept_h = kept
        stalled_h += cycle.stalled
        detect_stalled_h += cycle.detect_stalled
        restarts += 1
        planned += cycle.planned
        repairs += cycle.repairs
        if t > max_hours:
            censored = (saved, checkpoint_h, lost_h, restart_h, kept_h - saved, stalled_h)
            return math.inf, restarts, repairs, planned, 0.0, (*censored, 0, 0, 0, 0, 0)


def _runs(task: tuple) -> list[tuple[float, int, int, int, float, tuple[float, ...]]]:
    scenario, rules, tau, seed, first, count, replay, max_hours = task
    return [
        _one_run(
            scenario, rules, tau, np.random.default_rng(child_seed(seed, i)), replay, max_hours
        )
        for i in range(first, first + count)
    ]


def simulate_runs(
    scenario: Scenario,
    rules: Callable[[np.random.Generator], Any],
    *,
    checkpoint_interval_minutes: float,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    exact_batch: bool = True,
    replay: Replay | None = None,
    first_trial: int = 0,
    max_hours: float = math.inf,
) -> TrainingSamples:
    """Simulate ``trials`` runs of ``scenario`` under a strategy's failure rules.

    The checked core of :func:`spare_theory.simulate_training` (which picks the
    rules from the strategy and checks the plan).

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure law, costs, repairs and work.
    rules : callable
        ``rules(rng)`` gives a fresh failure rule at each cycle's start
        (:mod:`spare_theory.hourly.rules`); picklable to run on a process pool.
    checkpoint_interval_minutes : float
        Compute time between checkpoints, minutes, ``> 0``.
    trials : int
        Independent runs, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Run ``i`` uses ``child_seed(seed, i)``: results do not depend on the
        executor or on how the runs are split.
    executor : concurrent.futures.Executor, optional
        Runs blocks of trials in parallel; ``None`` runs them here.
    progress : bool
        Show a progress bar over blocks of trials.
    exact_batch : bool
        Reported as :attr:`TrainingSamples.exact_batch` (the plan's
        :meth:`Strategy.batch_is_exact <spare_theory.strategies.base.Strategy.batch_is_exact>`).
    replay : Replay, optional
        Fault times from a failure log instead of the scenario's law
        (:class:`~spare_theory.hourly.sources.NodeWorld`).
    first_trial : int
        Index of the first run, ``>= 0``: runs ``first_trial, ...,
        first_trial + trials - 1`` are played, so that more runs can be
        added to a sample (common random numbers across plans).
    max_hours : float
        Stop a run still unfinished when a restart begins after this many
        hours; its ``hours`` are then ``inf`` (default: never).

    Returns
    -------
    TrainingSamples

    Examples
    --------
    >>> from spare_theory.hourly.rules import ReplicaSetRules
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> runs = simulate_runs(sc, ReplicaSetRules(128, 2), checkpoint_interval_minutes=60.0,
    ...                      trials=4, seed=0)
    >>> runs.hours.shape, bool((runs.hours > 10 / 0.5).all())
    ((4,), True)
    """
    trials = as_count(trials, "trials")
    first_trial = as_count(first_trial, "first_trial", minimum=0)
    node_level = bool(replay) or needs_nodes(scenario)
    for c in scenario.failure_classes:
        if (node_level and not c.stops_job and c.detect_minutes > 0) or (
            c.misdiagnosis > 0 and (node_level or not scenario.exponential)
        ):
            raise ValueError(
                "failure_classes: stragglers and corruption noticed late and misdiagnosis are "
                "simulated on exponential or renewal groups, not yet with node-level failures "
                "(a spare pool, lemons, failure domains, node clocks or a replayed log), and "
                f"misdiagnosis not on renewal clocks: class {c.name!r}"
            )
    root = as_seed_sequence(seed)
    tau = checkpoint_interval_minutes / 60
    end = first_trial + trials
    tasks = [
        (scenario, rules, tau, root, first, min(_TRIALS_PER_TASK, end - first), replay, max_hours)
        for first in range(first_trial, end, _TRIALS_PER_TASK)
    ]
    rows = [
        row
        for block in map_tasks(_runs, tasks, executor=executor, desc="runs", progress=progress)
        for row in block
    ]
    hours, restarts, repairs, planned, skipped, parts = (np.array(column) for column in zip(*rows))
    return TrainingSamples(
        hours.astype(np.float64),
        restarts.astype(np.int64),
        repairs.astype(np.int64),
        planned.astype(np.int64),
        skipped.astype(np.float64),
        exact_batch,
        breakdown_hours=parts.astype(np.float64),
        reserved_gpus=scenario.gpus + (scenario.spare_nodes or 0) * scenario.gpus_per_node,
        grouped_gpus=scenario.groups * scenario.gpus_per_group,
    )
