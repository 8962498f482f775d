"""Event-driven Monte Carlo of whole training runs, independent of the closed form.

One trial plays a run from a fresh start (all groups healthy, computing, no
restart) until ``work_hours`` of work are saved by a checkpoint.  Events:

* **failures**: every healthy group fails after an exponential time of rate
  ``lambda``; the next failure comes after ``Exp((N - f) lambda)`` and hits a
  uniformly random healthy group.  Failed groups stay failed until the next
  restart, also during restarts and checkpoints.
* **wipe-out**: CKPT-only at every failure; Rep when every group of one replica
  set has failed (sets ``g mod floor(N/r)``); SPARe when
  :class:`~spare_theory.reordering.ReorderingController` on the real cyclic
  modular-ruler placement raises :class:`~spare_theory.stacks.WipedOut`.
  The work since the last completed checkpoint is lost and a global restart
  of ``R`` follows, after which all groups are healthy; a wipe-out during a
  restart starts a new restart.
* **compute**: between failures work advances at ``1 / S*`` (SPARe, ``S*``
  from the controller), ``floor(N/r) / N`` (Rep) or 1 (CKPT-only) per hour;
  after ``tau`` of compute time (or when the remaining work is done) a
  checkpoint of ``delta`` saves the segment's work if no wipe-out strikes
  before it ends.

Nothing here uses ``wipeout_survival``, ``expected_stacks`` or
:mod:`spare_theory.training`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import as_choice, as_count, as_real, as_seed_sequence, child_seed
from .placement import cyclic_placement
from .reordering import ReorderingController
from .scenario import Scenario
from .stacks import WipedOut

__all__ = ["TrainingSamples", "simulate_training"]

_STRATEGIES = ("ckpt", "rep", "spare")


@dataclass(frozen=True)
class TrainingSamples:
    """Per-run results of :func:`simulate_training` (arrays of length ``trials``).

    Attributes
    ----------
    hours : numpy.ndarray
        Wall-clock hours of each run.
    restarts : numpy.ndarray
        Global restarts (wipe-outs) in each run.
    """

    hours: np.ndarray
    restarts: np.ndarray

    @property
    def mean_hours(self) -> float:
        return float(self.hours.mean())

    @property
    def standard_error_hours(self) -> float:
        """Standard error of ``mean_hours`` (0 for one trial)."""
        n = self.hours.size
        return float(self.hours.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


class _Cycle:
    """Failure state between two restarts: healthy groups and the wipe-out rule."""

    def __init__(self, strategy: str, N: int, r: int, hosts, rng):
        self.rng = rng
        self.alive = np.arange(N)
        self.healthy = N
        self.strategy = strategy
        if strategy == "spare":
            self.controller = ReorderingController(hosts)
            self.throughput = 1.0
        elif strategy == "rep":
            self.sets = N // r
            self.dead = np.zeros(self.sets, dtype=np.int64)
            self.size = np.bincount(np.arange(N) % self.sets)
            self.throughput = self.sets / N
        else:
            self.throughput = 1.0

    def next_failure(self, t: float, lam: float) -> float:
        """Time of the next failure after ``t``: ``Exp(healthy * lam)`` later."""
        return t + self.rng.exponential(1.0 / (self.healthy * lam)) if self.healthy else math.inf

    def fail_next(self) -> bool:
        """Fail a uniformly random healthy group; True if this is a wipe-out."""
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


def _one_run(scenario: Scenario, strategy: str, r: int, tau: float, hosts, rng) -> tuple[float, int]:
    """Hours and restarts of one run (times in hours)."""
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    R, delta, W = scenario.restart_minutes / 60, scenario.checkpoint_minutes / 60, scenario.work_hours
    # Work within this tolerance of W counts as done (float rounding of sums).
    eps = 1e-12 * W
    t, saved, restarts = 0.0, 0.0, 0
    fresh = True
    while True:
        cycle = _Cycle(strategy, N, r, hosts, rng)
        next_fail = cycle.next_failure(t, lam)
        wiped = False
        if not fresh:
            end = t + R
            while next_fail < end and not wiped:
                t = next_fail
                wiped = cycle.fail_next()
                next_fail = cycle.next_failure(t, lam)
            if wiped:
                restarts += 1
                continue
            t = end
        fresh = False
        while not wiped:
            # Compute phase of one segment.
            work, left = 0.0, tau
            while True:
                end = t + min(left, (W - saved - work) / cycle.throughput)
                if next_fail >= end:
                    work += cycle.throughput * (end - t)
                    t = end
                    break
                work += cycle.throughput * (next_fail - t)
                left -= next_fail - t
                t = next_fail
                wiped = cycle.fail_next()
                next_fail = cycle.next_failure(t, lam)
                if wiped:
                    break
            if wiped:
                break
            # Checkpoint phase.
            end = t + delta
            while next_fail < end and not wiped:
                t = next_fail
                wiped = cycle.fail_next()
                next_fail = cycle.next_failure(t, lam)
            if wiped:
                break
            t = end
            saved += work
            if saved >= W - eps:
                return t, restarts
        restarts += 1


def simulate_training(scenario, strategy, r, checkpoint_interval_minutes, trials, *, seed) -> TrainingSamples:
    """Simulate ``trials`` whole training runs event by event.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, costs and work.
    strategy : {"ckpt", "rep", "spare"}
        Fault-tolerance strategy (see the module docstring).
    r : int or None
        Redundancy: ``None`` or 1 for CKPT-only; ``1 <= r <= N`` for Rep; for
        SPARe a modular ruler with ``r`` marks must exist at ``N``.
    checkpoint_interval_minutes : float
        Compute time between checkpoints, minutes, ``> 0``.
    trials : int
        Number of independent runs, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Run ``i`` uses ``child_seed(seed, i)``: results do not depend on how
        the trials are split or spread.

    Returns
    -------
    TrainingSamples
        ``hours`` and ``restarts`` of every run.

    Notes
    -----
    Cost grows with the number of events (failures, segments); keep
    ``work_hours`` to a few dozen cycles.  SPARe runs the exact online
    controller on every failure.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", _STRATEGIES)
    N = scenario.groups
    if strategy == "ckpt":
        if r is not None and as_count(r, "r") != 1:
            raise ValueError(f"r must be 1 (or None) for strategy 'ckpt', got {r}")
        r = 1
    else:
        r = as_count(r, "r", maximum=N)
    tau = as_real(checkpoint_interval_minutes, "checkpoint_interval_minutes", minimum=0.0, strict_minimum=True) / 60
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    hosts = cyclic_placement(N, r) if strategy == "spare" else None
    hours = np.empty(trials)
    restarts = np.empty(trials, dtype=np.int64)
    for i in range(trials):
        rng = np.random.default_rng(child_seed(seed, i))
        hours[i], restarts[i] = _one_run(scenario, strategy, r, tau, hosts, rng)
    return TrainingSamples(hours, restarts)
