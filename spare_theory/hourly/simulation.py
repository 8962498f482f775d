"""Event-driven Monte Carlo of whole training runs, independent of the closed form.

One trial plays a run from a fresh start (all groups healthy, computing, no
restart) until ``work_hours`` of work are saved by a checkpoint.  Events:

* **failures**: every healthy group fails after an exponential time of rate
  ``lambda``; the next failure comes after ``Exp((N - f) lambda)`` and hits a
  uniformly random healthy group.  Failed groups stay failed until the next
  restart, also during restarts and checkpoints.
* **wipe-out**: CKPT-only at every failure; Rep when every group of one replica
  set has failed (sets ``g mod floor(N/r)``); SPARe when
  :class:`~spare_theory.stacking.reordering.ReorderingController` on the real cyclic
  modular-ruler placement raises :class:`~spare_theory.stacking.stacks.WipedOut`
  (``overhead_source="controller"``), or at the ``T``-th failure of a
  trajectory drawn from a pool (``"pool"``, below).
  The work since the last completed checkpoint is lost and a global restart
  of ``R`` follows, after which all groups are healthy; a wipe-out during a
  restart starts a new restart.
* **compute**: between failures work advances at ``1 / S*`` (SPARe, ``S*``
  from the controller; with ``microbatches = m > 1`` the exact micro-batch
  load ``min_load`` kept by the controller's piece flow instead),
  ``floor(N/r) / N`` (Rep) or 1 (CKPT-only) per hour;
  after ``tau`` of compute time (or when the remaining work is done) a
  checkpoint of ``delta`` saves the segment's work if no wipe-out strikes
  before it ends.
* **planned restarts**: a restart without rollback (the segment's work is
  kept) once ``planned_restart_failures`` groups are down at once, or once
  SPARe's actual step cost (``S*`` from the controller, the exact load with
  micro-batches, the pool trajectory's value, or ``min_stacks`` with
  repairs) reaches ``planned_restart_cost`` (Rep's and CKPT-only's step
  cost does not change with failures: never).

**Other failure laws.**  With ``Scenario.failure_law`` other than
exponential every group keeps a renewal clock: its next failure time is its
last failure (or the run's start) plus a lifetime drawn from
``Scenario.group_lifetime_law``, clocks are never reset at global restarts
(the published simulator's semantics) and a failed group's clock renews
silently until the restart.  Each run starts with stationary clocks (the
first lifetimes drawn from the equilibrium residual-life law,
:func:`~spare_theory.lifetimes.laws.equilibrium_law`: a cluster that has been
running for a long time).  The next failure is the earliest clock of a
healthy group; SPARe runs the controller (no pool: the failure order is not
uniform).  The exponential path is unchanged (same seed, same samples).

**Trajectory pool.**  The controller costs ``O(N r)`` per cycle plus a
matching step per failure (seconds per cycle at ``N = 75,000``, ``r = 17``).
Beyond ``CONTROLLER_MAX_GROUPS`` groups SPARe instead simulates
``pool_size`` whole failure trajectories to wipe-out once, on the same real
placement with the same exact controller
(:func:`~spare_theory.stacking.overhead.stacks_trajectory` of a uniformly
random failure order), each giving ``S*_f`` for ``f = 0..T-1`` and ``T``.
Every cycle draws one trajectory uniformly from the pool; failure *times*
are still simulated event by event, throughput in state ``f`` is
``1 / S*_f`` of that trajectory and the wipe-out comes at its ``T``-th
failure.  Each cycle's trajectory is a true sample of the failure process,
so the mean is unbiased, but cycles share the pool: with a small
``pool_size`` the spread between runs under-represents the trajectory
variance (and all runs of one call share the pool's sampling error).

**Independence.**  Nothing here uses the model it checks: this module
imports only the scenario and its argument checks
(:func:`~spare_theory.hourly.scenario.check_plan`, shared so that both accept the
same plans), the placement, the reordering controller and its trajectory
helper, and the argument validators; never :mod:`~spare_theory.training.estimate`,
:mod:`~spare_theory.cycles.laws`, :mod:`~spare_theory.hourly.renewal`,
:mod:`~spare_theory.training.optimize`, ``wipeout_survival`` or ``expected_stacks``
(``tests/test_training_sim.py`` checks the imports).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import overload

import numpy as np

from .._validation import as_choice, as_count, as_seed_sequence, child_seed
from ..lifetimes.laws import equilibrium_law
from ..placement.placements import cyclic_placement
from ..stacking.overhead import stacks_trajectory
from ..stacking.reordering import ReorderingController
from ..stacking.stacks import WipedOut, min_stacks
from ..steps.scenario import StepScenario, merge_microbatches
from ..steps.simulation import simulate_steps
from ..steps.trials import StepSimulation
from .repairs_sim import repair_hours
from .scenario import Scenario, check_checkpoint_interval, check_plan

__all__ = ["CONTROLLER_MAX_GROUPS", "TrainingSamples", "simulate_training"]

OVERHEAD_SOURCES = ("auto", "controller", "pool")
# "auto" runs the controller per cycle up to this many groups (about 0.1 s per
# trajectory at N = 20,000, r = 9) and draws from a trajectory pool beyond.
CONTROLLER_MAX_GROUPS = 20_000
# Step costs are multiples of 1/m: a cost within this relative slack of the
# threshold reaches it (m c in floating point may land just above an integer).
_COST_SLACK = 1e-12
# The pool's streams sit under this spawn-key prefix, out of reach of the trial
# indices i of child_seed(seed, i).
_POOL_KEY = 2**63


@dataclass(frozen=True)
class TrainingSamples:
    """Per-run results of :func:`simulate_training` (arrays of length ``trials``).

    Attributes
    ----------
    hours : numpy.ndarray
        Wall-clock hours of each run.
    restarts : numpy.ndarray
        Global restarts (wipe-outs) in each run.
    repairs : numpy.ndarray or None
        Repairs (failed groups rejoining without a restart) in each run;
        all 0 without repairs (``None`` when built without it).
    planned_restarts : numpy.ndarray or None
        Planned restarts (no rollback; ``Scenario.planned_restart_failures``
        or ``planned_restart_cost``) among ``restarts`` in each run (``None``
        when built without it).

    Examples
    --------
    >>> import numpy as np
    >>> runs = TrainingSamples(hours=np.array([10.0, 12.0]), restarts=np.array([1, 2]))
    >>> runs.mean_hours, round(runs.standard_error_hours, 3)
    (11.0, 1.0)
    """

    hours: np.ndarray
    restarts: np.ndarray
    repairs: np.ndarray | None = None
    planned_restarts: np.ndarray | None = None

    @property
    def mean_hours(self) -> float:
        """Mean wall-clock hours over the runs."""
        return float(self.hours.mean())

    @property
    def standard_error_hours(self) -> float:
        """Standard error of ``mean_hours`` (0 for one trial)."""
        n = self.hours.size
        return float(self.hours.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


class _Cycle:
    """One cycle from a restart's start: its clock, healthy groups and the wipe-out rule."""

    #: Planned restart (no rollback) once this many groups are down at once.
    trigger: float = math.inf
    #: Or once SPARe's step cost ``1 / throughput`` reaches this (slack included).
    cost_trigger: float = math.inf
    #: Whether the cycle ended at the trigger (then not a wipe-out).
    planned = False

    def _triggered(self) -> bool:
        """True (and :attr:`planned` set) when the groups down or the step cost reach a trigger."""
        self.planned = self.N - self.healthy >= self.trigger or (
            self.strategy == "spare" and 1.0 / self.throughput >= self.cost_trigger
        )
        return self.planned

    def __init__(
        self,
        strategy: str,
        N: int,
        r: int,
        hosts,
        pool,
        rng,
        t: float,
        lam: float,
        microbatches: int = 1,
    ):
        self.rng = rng
        self.t, self.lam = t, lam
        self.alive = np.arange(N)
        self.N = self.healthy = N
        self.strategy = strategy
        self.trajectory = None
        if strategy == "spare":
            if pool is None:
                self.controller = ReorderingController(hosts, microbatches=microbatches)
            else:
                self.trajectory = pool[int(rng.integers(len(pool)))]
            self.throughput = 1.0
        elif strategy == "rep":
            self.sets = N // r
            self.dead = np.zeros(self.sets, dtype=np.int64)
            self.size = np.bincount(np.arange(N) % self.sets)
            self.throughput = self.sets / N
        else:
            self.throughput = 1.0

        self.next_fail = self._draw_next_failure()

    def _draw_next_failure(self) -> float:
        """Time of the next failure after ``t``: ``Exp(healthy * lam)`` later."""
        return (
            self.t + self.rng.exponential(1.0 / (self.healthy * self.lam))
            if self.healthy
            else math.inf
        )

    def _fail(self) -> bool:
        """Move the clock to the next failure and apply it; True at a wipe-out."""
        self.t = self.next_fail
        wiped = self.fail_next()
        self.next_fail = self._draw_next_failure()
        return wiped or self._triggered()

    def wait(self, duration: float) -> bool:
        """Spend ``duration`` hours without computing (restart, checkpoint); True at a wipe-out."""
        end = self.t + duration
        while self.next_fail < end:
            if self._fail():
                return True
        self.t = end
        return False

    def compute(self, tau: float, work_left: float) -> tuple[float, bool]:
        """Compute for ``tau`` hours or until ``work_left`` is done: ``(work, wiped)``.

        Work accrues at the current throughput, which changes at each failure.
        """
        work, left = 0.0, tau
        while True:
            end = self.t + min(left, (work_left - work) / self.throughput)
            if self.next_fail >= end:
                work += self.throughput * (end - self.t)
                self.t = end
                return work, False
            work += self.throughput * (self.next_fail - self.t)
            left -= self.next_fail - self.t
            if self._fail():
                return work, True

    def fail_next(self) -> bool:
        """Fail a uniformly random healthy group; True if this is a wipe-out."""
        if self.trajectory is not None:
            # Pool mode: the drawn trajectory fixes S*_f and T, not the group.
            self.healthy -= 1
            f = self.N - self.healthy
            if f >= self.trajectory.size:
                return True
            self.throughput = 1.0 / self.trajectory[f]
            return False
        i = int(self.rng.integers(self.healthy))
        g = int(self.alive[i])
        self.healthy -= 1
        self.alive[i] = self.alive[self.healthy]
        if self.strategy == "ckpt":
            return True
        if self.strategy == "rep":
            s = g % self.sets
            self.dead[s] += 1
            return bool(self.dead[s] == self.size[s])
        try:
            self.throughput = 1.0 / self.controller.fail(g)
        except WipedOut:
            return True
        return False


class _RepairingCycle(_Cycle):
    """A cycle in which failed groups come back after a repair (``Scenario.repair_minutes``).

    A failing group is down for a repair time drawn from the scenario's
    repair law; it then rejoins (its replica set, or its place in the
    placement, whose ``S*`` is recomputed exactly with
    :func:`~spare_theory.stacking.stacks.min_stacks` after every failure and rejoin)
    and the whole job stalls ``rejoin_minutes`` (stalls queue; no work is
    done while stalled).  Failures stay ``Exp(healthy * lambda)`` apart.
    """

    def __init__(self, scenario: Scenario, strategy: str, r: int, hosts, rng, t: float) -> None:
        super().__init__(
            strategy, scenario.groups, r, hosts, None, rng, t, scenario.group_failure_rate_per_hour
        )
        self.scenario, self.hosts = scenario, hosts
        self.due: list[tuple[float, int]] = []  # (repair time, group), a heap
        self.failed: set[int] = set()
        self.stall = scenario.rejoin_minutes / 60
        self.stall_end = t
        self.repairs = 0

    def _next_event(self) -> float:
        return min(self.next_fail, self.due[0][0]) if self.due else self.next_fail

    def _event(self) -> bool:
        """Apply the next failure or rejoin (the clock moves to it); True at a wipe-out."""
        if self.due and self.due[0][0] <= self.next_fail:
            self.t, g = heapq.heappop(self.due)
            self.alive[self.healthy] = g
            self.healthy += 1
            self.failed.discard(g)
            self.repairs += 1
            self.stall_end = max(self.stall_end, self.t) + self.stall
            if self.strategy == "rep":
                self.dead[g % self.sets] -= 1
            elif self.strategy == "spare":
                self.throughput = 1.0 / min_stacks(self.hosts, self.failed)
        else:
            self.t = self.next_fail
            i = int(self.rng.integers(self.healthy))
            g = int(self.alive[i])
            self.healthy -= 1
            self.alive[i] = self.alive[self.healthy]
            self.failed.add(g)
            repair = float(repair_hours(self.scenario, self.rng.random()))
            heapq.heappush(self.due, (self.t + repair, g))
            if self.strategy == "rep":
                s = g % self.sets
                self.dead[s] += 1
                if self.dead[s] == self.size[s]:
                    return True
            else:
                try:
                    self.throughput = 1.0 / min_stacks(self.hosts, self.failed)
                except WipedOut:
                    return True
        # The failure rate changed (or a failure happened): draw the next one afresh.
        self.next_fail = self._draw_next_failure()
        return self._triggered()

    def wait(self, duration: float) -> bool:
        end = self.t + duration
        while self._next_event() < end:
            if self._event():
                return True
        self.t = end
        return False

    def compute(self, tau: float, work_left: float) -> tuple[float, bool]:
        work, left = 0.0, tau
        while True:
            # The next stop: the stall's end, the interval's end or the work's end.
            if self.t < self.stall_end:
                rate, done = 0.0, self.t + left <= self.stall_end
                end = self.t + left if done else self.stall_end
            else:
                rate, done = self.throughput, True
                end = self.t + min(left, (work_left - work) / rate)
            nxt = self._next_event()
            if nxt >= end:
                work += rate * (end - self.t)
                left -= end - self.t
                self.t = end
                if done:
                    return work, False
                continue
            work += rate * (nxt - self.t)
            left -= nxt - self.t
            if self._event():
                return work, True


# Lifetimes drawn from a law at once (one rvs call per batch).
_LIFETIME_BATCH = 1024


class _RenewalClocks:
    """Renewal failure clocks of ``N`` groups for one run: a heap of ``(expiry, group)``."""

    def __init__(self, law, N: int, rng) -> None:
        self.law, self.rng = law, rng
        self.buffer, self.used = np.empty(0), 0
        first = equilibrium_law(law).rvs(size=N, random_state=rng)
        self.heap = [(float(x), g) for g, x in enumerate(np.atleast_1d(first))]
        heapq.heapify(self.heap)

    def lifetime(self) -> float:
        if self.used == self.buffer.size:
            self.buffer = np.asarray(
                self.law.rvs(size=_LIFETIME_BATCH, random_state=self.rng), dtype=float
            )
            self.used = 0
        self.used += 1
        return float(self.buffer[self.used - 1])

    def next_healthy(self, down: np.ndarray) -> tuple[float, int]:
        """Earliest expiry of a healthy group; expiries of down groups renew silently."""
        while self.heap:
            t, g = self.heap[0]
            if not down[g]:
                return t, g
            heapq.heapreplace(self.heap, (t + self.lifetime(), g))
        return math.inf, -1

    def fire(self) -> int:
        """Renew the earliest clock from its expiry; return its group."""
        t, g = self.heap[0]
        heapq.heapreplace(self.heap, (t + self.lifetime(), g))
        return g


class _RenewalCycle(_Cycle):
    """A cycle under renewal clocks (a non-exponential ``failure_law``), shared across cycles."""

    def __init__(self, strategy, N, r, hosts, rng, t, clocks, microbatches=1) -> None:
        self.clocks = clocks
        self.down = np.zeros(N, dtype=bool)  # all groups healthy at a restart
        super().__init__(strategy, N, r, hosts, None, rng, t, math.nan, microbatches)

    def _draw_next_failure(self) -> float:
        return self.clocks.next_healthy(self.down)[0] if self.healthy else math.inf

    def fail_next(self) -> bool:
        """Fail the healthy group whose clock expires now; True if this is a wipe-out."""
        g = self.clocks.fire()
        self.down[g] = True
        self.healthy -= 1
        if self.strategy == "ckpt":
            return True
        if self.strategy == "rep":
            s = g % self.sets
            self.dead[s] += 1
            return bool(self.dead[s] == self.size[s])
        try:
            self.throughput = 1.0 / self.controller.fail(g)
        except WipedOut:
            return True
        return False


def _one_run(
    scenario: Scenario, strategy: str, r: int, tau: float, hosts, pool, rng, microbatches: int = 1
) -> tuple[float, int, int, int]:
    """Hours, restarts, repairs and planned restarts of one run (times in hours).

    A planned restart (the groups down reach ``planned_restart_failures``,
    or SPARe's step cost reaches ``planned_restart_cost``) keeps the work of
    the current segment, then restarts as a wipe-out does.
    """
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    R, delta, W = (
        scenario.restart_minutes / 60,
        scenario.checkpoint_minutes / 60,
        scenario.work_hours,
    )
    # Work within this tolerance of W counts as done (float rounding of sums).
    eps = 1e-12 * W
    clocks = None if scenario.exponential else _RenewalClocks(scenario.group_lifetime_law, N, rng)
    t, saved, restarts, repairs, planned = 0.0, 0.0, 0, 0, 0
    fresh = True  # the run starts computing, with no initial restart (as Daly)
    while True:
        if scenario.repair_minutes is not None and r > 1:
            cycle: _Cycle = _RepairingCycle(scenario, strategy, r, hosts, rng, t)
        elif clocks is not None:
            cycle = _RenewalCycle(strategy, N, r, hosts, rng, t, clocks, microbatches)
        else:
            cycle = _Cycle(strategy, N, r, hosts, pool, rng, t, lam, microbatches)
        cycle.trigger = scenario.planned_restart_failures or math.inf
        if scenario.planned_restart_cost is not None:
            cycle.cost_trigger = scenario.planned_restart_cost * (1.0 - _COST_SLACK)
        wiped = False if fresh else cycle.wait(R)
        fresh = False
        while not wiped:
            work, wiped = cycle.compute(tau, W - saved)
            wiped = wiped or cycle.wait(delta)
            if not wiped or cycle.planned:
                saved += work
                if saved >= W - eps:
                    return cycle.t, restarts, repairs + getattr(cycle, "repairs", 0), planned
        t = cycle.t
        restarts += 1
        planned += cycle.planned
        repairs += getattr(cycle, "repairs", 0)


def _trajectory_pool(hosts, size: int, seed, microbatches: int = 1) -> list[np.ndarray]:
    """``size`` trajectories of ``S*_f`` (or loads) to wipe-out, from random failure orders."""
    N = hosts.shape[0]
    return [
        stacks_trajectory(
            hosts,
            np.random.default_rng(child_seed(seed, _POOL_KEY, k)).permutation(N),
            microbatches=microbatches,
        )
        for k in range(size)
    ]


@overload
def simulate_training(
    scenario: Scenario,
    strategy: str,
    r: int | None,
    checkpoint_interval_minutes: float | None = None,
    trials: int | None = None,
    *,
    seed: int | np.random.SeedSequence,
    overhead_source: str = "auto",
    pool_size: int = 64,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> TrainingSamples: ...


@overload
def simulate_training(
    scenario: StepScenario,
    strategy: str,
    r: int | None,
    checkpoint_interval_minutes: float | None = None,
    trials: int | None = None,
    *,
    seed: int | np.random.SeedSequence,
    overhead_source: str = "auto",
    pool_size: int = 64,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> StepSimulation: ...


def simulate_training(
    scenario: Scenario | StepScenario,
    strategy: str,
    r: int | None,
    checkpoint_interval_minutes: float | None = None,
    trials: int | None = None,
    *,
    seed: int | np.random.SeedSequence,
    overhead_source: str = "auto",
    pool_size: int = 64,
    checkpoint_every_steps: int | None = None,
    microbatches: int = 1,
) -> TrainingSamples | StepSimulation:
    """Simulate ``trials`` whole training runs event by event.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        Cluster, failure rate, costs and work.  A
        :class:`~spare_theory.steps.scenario.StepScenario` is simulated step by
        step with the published simulator's semantics
        (:func:`spare_theory.steps.simulation.simulate_steps`; it needs
        ``checkpoint_every_steps`` and takes no ``checkpoint_interval_minutes``,
        ``overhead_source`` or ``pool_size``).
    strategy : {"ckpt", "rep", "spare"}
        Fault-tolerance strategy (see the module docstring).
    r : int or None
        Redundancy: ``None`` or 1 for CKPT-only; ``1 <= r <= N`` for Rep; for
        SPARe a modular ruler with ``r`` marks must exist at ``N``.
    checkpoint_interval_minutes : float
        Compute time between checkpoints, minutes, ``> 0`` (required for a
        Scenario).
    trials : int
        Number of independent runs, ``>= 1`` (required).
    seed : int or numpy.random.SeedSequence
        Run ``i`` uses ``child_seed(seed, i)`` and pool trajectory ``k``
        ``child_seed(seed, 2**63, k)``: results do not depend on how the
        trials are split or spread.
    overhead_source : {"auto", "controller", "pool"}
        Where SPARe's ``S*`` and wipe-outs come from (ignored for the other
        strategies): the exact controller in every cycle, or a pool of
        ``pool_size`` controller trajectories (module docstring).
        ``"auto"``: the controller for ``N <= CONTROLLER_MAX_GROUPS``
        (20,000), the pool beyond.
    pool_size : int
        Trajectories in the pool, ``>= 1``.  The pool costs ``pool_size``
        controller trajectories once (about 4 s each at ``N = 75,000``,
        ``r = 17``); run-to-run spread under-represents the trajectory
        variance when it is small.

    checkpoint_every_steps : int, optional
        StepScenario only (required there): a checkpoint every ``k >= 1``
        steps.
    microbatches : int, default 1
        SPARe only (a Scenario without repairs): pieces per shard ``m``; the
        throughput in each state is ``1 / load`` with the exact load kept by
        ``ReorderingController(hosts, microbatches=m)`` (or the pool's
        ``stacks_trajectory(..., microbatches=m)``).  Raises ``ValueError``
        naming ``microbatches`` when not 1 for another strategy.  A
        StepScenario states its own ``microbatches``; the keyword is used
        when that field is 1 (an equal value agrees, another raises).

    Returns
    -------
    TrainingSamples or StepSimulation
        ``hours`` and ``restarts`` of every run (a
        :class:`~spare_theory.steps.trials.StepSimulation`, also with ``uptime``,
        for a StepScenario).

    Notes
    -----
    Cost grows with the number of events (failures, segments); keep
    ``work_hours`` to a few dozen cycles.  SPARe in controller mode runs the
    exact online controller on every failure of every cycle; the pool mode
    runs it for ``pool_size`` trajectories only.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> runs = simulate_training(sc, "spare", 4, 60.0, 8, seed=0)
    >>> runs.hours.shape, round(runs.mean_hours, 1), round(runs.standard_error_hours, 1)
    ((8,), 19.4, 0.7)
    >>> split = simulate_training(sc, "spare", 4, 60.0, 8, seed=0, microbatches=4)
    >>> bool(split.mean_hours < runs.mean_hours)
    True

    A step-level scenario (the SPARe paper's, shortened to 100 steps):

    >>> from spare_theory import paper_scenario
    >>> sim = simulate_training(paper_scenario(50, steps=100), "rep", r=3,
    ...                         checkpoint_every_steps=5, trials=2, seed=0)
    >>> sim.hours.shape, sim.restarts.shape, bool((sim.uptime <= 1).all())
    ((2,), (2,), True)
    """
    if isinstance(scenario, StepScenario):
        return _simulate_step_training(
            merge_microbatches(scenario, microbatches),
            strategy,
            r,
            checkpoint_interval_minutes=checkpoint_interval_minutes,
            trials=trials,
            seed=seed,
            overhead_source=overhead_source,
            pool_size=pool_size,
            checkpoint_every_steps=checkpoint_every_steps,
        )
    if not isinstance(scenario, Scenario):
        raise ValueError(
            f"scenario must be a Scenario or a StepScenario, got {type(scenario).__name__}"
        )
    if checkpoint_every_steps is not None:
        raise ValueError(
            "checkpoint_every_steps is for step-level scenarios; a Scenario takes "
            "checkpoint_interval_minutes"
        )
    if checkpoint_interval_minutes is None:
        raise ValueError("checkpoint_interval_minutes is required for a Scenario")
    # The same checks as the model it is compared with (strategy, r, ruler at N).
    strategy, r = check_plan(scenario, strategy, r)
    if scenario.domain_size is not None or scenario.lemon_fraction > 0:
        # This simulation draws independent, equal group failures: never ignore the fields.
        raise ValueError(
            "failure domains and lemons (domain_size, lemon_fraction) are simulated by "
            "simulate_domain_training (any placement, an exclusion policy)"
        )
    microbatches = as_count(microbatches, "microbatches", minimum=1)
    if microbatches != 1 and (strategy != "spare" or scenario.repair_minutes is not None):
        raise ValueError(
            f"microbatches must be 1 for strategy {strategy!r} or with repairs (only SPARe "
            f"without rejoins splits a failed group's shard), got {microbatches}"
        )
    N = scenario.groups
    tau = check_checkpoint_interval(checkpoint_interval_minutes) / 60
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    overhead_source = as_choice(overhead_source, "overhead_source", OVERHEAD_SOURCES)
    pool_size = as_count(pool_size, "pool_size")
    if overhead_source == "auto":
        overhead_source = (
            "controller" if N <= CONTROLLER_MAX_GROUPS or not scenario.exponential else "pool"
        )
    if not scenario.exponential and overhead_source == "pool":
        raise ValueError(
            "overhead_source='pool' assumes a uniformly random failure order, which a "
            "failure_law other than 'exponential' does not give; use 'controller'"
        )
    if scenario.repair_minutes is not None and overhead_source == "pool":
        raise ValueError(
            "overhead_source='pool' cannot follow repairs (a trajectory has no rejoins); "
            "use overhead_source='controller'"
        )
    hosts = cyclic_placement(N, r) if strategy == "spare" else None
    pool = (
        _trajectory_pool(hosts, pool_size, seed, microbatches)
        if hosts is not None and overhead_source == "pool"
        else None
    )
    hours = np.empty(trials)
    restarts = np.empty(trials, dtype=np.int64)
    repairs = np.zeros(trials, dtype=np.int64)
    planned = np.zeros(trials, dtype=np.int64)
    for i in range(trials):
        rng = np.random.default_rng(child_seed(seed, i))
        hours[i], restarts[i], repairs[i], planned[i] = _one_run(
            scenario, strategy, r, tau, hosts, pool, rng, microbatches
        )
    return TrainingSamples(hours, restarts, repairs, planned)


def _simulate_step_training(
    scenario: StepScenario,
    strategy: str,
    r: int | None,
    *,
    checkpoint_interval_minutes: float | None,
    trials: int | None,
    seed: int | np.random.SeedSequence,
    overhead_source: str,
    pool_size: int,
    checkpoint_every_steps: int | None,
) -> StepSimulation:
    """:func:`simulate_training` of a StepScenario: checks, then :func:`simulate_steps`."""
    if checkpoint_interval_minutes is not None:
        raise ValueError(
            "checkpoint_interval_minutes is for a Scenario; a StepScenario takes "
            "checkpoint_every_steps (checkpoints every k steps)"
        )
    if overhead_source != "auto" or pool_size != 64:
        raise ValueError("overhead_source and pool_size are for a Scenario, not a StepScenario")
    if checkpoint_every_steps is None:
        raise ValueError("checkpoint_every_steps is required for a StepScenario")
    if trials is None:
        raise ValueError("trials is required")
    return simulate_steps(
        scenario,
        strategy,
        r=r,
        checkpoint_every_steps=checkpoint_every_steps,
        trials=trials,
        seed=seed,
    )
