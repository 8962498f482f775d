"""The run machinery of the step-level event simulation, shared by every strategy's rules.

The simulation replays, step by step, the discrete-event simulation behind
the SPARe paper's time-to-train and availability figures (the authors'
SimGrid simulator, public repository tsinghua-fib-lab/AutoSOTA, folder
``ICML-2026/paper-3612-SPARe/best_code``, BSD).  It imports no model module:
it is the independent check of the closed forms.  A strategy's rules
(:mod:`spare_theory.steps.rep_run`, :mod:`spare_theory.steps.spare_run`)
drive a :class:`StepRun`; :func:`spare_theory.steps.trials.simulate_step_trials`
runs the trials.

Workers and failures
--------------------
``N`` workers (one per data-parallel group) each keep a renewal failure
clock (:class:`~spare_theory.lifetimes.clocks.RenewalClocks`, fresh at time
0 or as old as ``clock_age_seconds`` says, lifetimes floored at ``1e-9`` s):
the next failure time is drawn from ``scenario.failure_law`` when the
previous failure is noticed, and clocks are never reset at a global restart.
A failure is only noticed at a check: before each stack's compute, at the
all-reduce and (the leader, the lowest active worker id, only) at a
checkpoint.  A failed worker stays out until the next global restart, or,
with repairs (``StepScenario.repair_seconds``), until it rejoins at a step
boundary after its repair (:class:`RepairTimes`).

Checkpoints, restarts, accounting
---------------------------------
After step ``j`` (0-based) with ``(j + 1) % k == 0`` or ``j + 1 == steps``
the leader checks its clock: if it failed the checkpoint is lost and the
leader counts as failed in the next attempt; otherwise the checkpoint
(``checkpoint_seconds``) records step ``j``.  A global restart rolls back to
the last checkpointed step (that step is redone; step 0 before any
checkpoint).  With ``restart_semantics="window"`` every worker must complete
an uninterrupted window of ``restart_seconds``: a worker whose clock expires
during its window (or had already expired) counts a failure, renews its clock
from the expiry time and starts its window again; the restart ends when the
last window ends.  With ``"fixed"`` it lasts ``restart_seconds`` exactly and
expired clocks renew silently.  ``down`` is the time in global restarts plus
``partial_recovery_seconds`` times the largest number of partial recoveries a
single worker took part in (each worker sleeps through the recoveries it is
active for; the run's figure is the per-worker maximum), plus an elastic
job's reconfiguration stalls (:mod:`spare_theory.steps.elastic_run`);
``up = total - down`` (rework and checkpoint writes count as up).  The share
of the global batch an elastic job skipped is its rule's to set (0 for the
exact-batch strategies).

The bill's breakdown
--------------------
Beside the totals a run reports its wall time by cause
(:data:`BREAKDOWN_FIELDS`, the causes of :data:`spare_theory.planning.bill.BADPUT_CAUSES`
with :attr:`spare_theory.steps.estimate.StepEstimate.badput_hours`'s meaning),
accumulated on the run's own clock so that they add up to ``total``:

- ``useful``: ``T0 = steps (stack_seconds + allreduce_seconds)``;
- ``checkpoint_save``: the checkpoint writes every worker waits for; where only
  the leader writes (Rep, CKPT-only) what the write adds to the step it
  overlaps, ``T1 - T1'`` with ``T1'`` the attempt's end had the writer
  started at once;
- ``restart``: the global restarts;
- ``reconfiguration``: the wall time in partial recoveries
  (``partial_recovery_seconds`` per recovery, not the per-worker maximum of
  ``down``), an elastic job's stalls and the rejoin stalls of repaired workers;
- the *kept* steps (the last execution of each step the run finishes with) last
  their first attempt's compute and all-reduce (the shortened one after a
  failure); beyond ``T0`` that is ``redundant_compute`` (stacks beyond one,
  Rep's copies, the slowest worker's jitter), less an elastic job's
  ``skipped_samples`` (``(A - m) / N`` of a step's ``stack + all-reduce`` for
  each kept step trained by ``m`` of ``A`` workers) and ``idle_spares``
  (``(N - A) / N`` of it per kept step); the rule sets the last two;
- ``wasted_progress``: the rest, ``total`` less all the above: attempts retried
  or lost at a wipe-out, the step redone after each resume, checkpoint writes
  lost to a wipe-out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..lifetimes.clocks import RenewalClocks
from ..lifetimes.laws import memoryless
from ..planning.bill import BADPUT_CAUSES
from .scenario import StepScenario

__all__ = ["BREAKDOWN_FIELDS", "RUN_FIELDS", "RepairTimes", "RunCut", "StepRun"]

#: What a run reports, in the order of :meth:`StepRun.result`.
RUN_FIELDS = (
    "total_seconds",
    "up_seconds",
    "failures",
    "global_restarts",
    "recomputed_stacks",
    "samples_skipped",
)

#: The wall time by cause a run reports after :data:`RUN_FIELDS` (module docstring),
#: seconds: the useful work, then :data:`spare_theory.planning.bill.BADPUT_CAUSES`.
BREAKDOWN_FIELDS = tuple(f"{cause}_seconds" for cause in ("useful", *BADPUT_CAUSES))

# Lifetimes drawn at once by the failure clocks.
_LIFETIME_BATCH = 4096
# A zero lifetime would fail again at the same check: floor it as the
# published simulator does.
_LIFETIME_FLOOR = 1e-9


class RepairTimes:
    """When each removed worker is ready to rejoin (``StepScenario.repair_seconds``).

    A repair starts when the controller removes the worker (the end of the
    attempt in which it acts on the failure) and lasts a draw of
    ``scenario.repair_law`` (seconds); the draws come from their own stream,
    so the failure and jitter streams are those of the run without repairs
    until the first rejoin.

    Parameters
    ----------
    scenario : StepScenario
        ``groups``, ``repair_seconds``, ``repair_law``.
    seed : int or numpy.random.SeedSequence
        The repair stream.
    durations : callable, optional
        ``durations(idx)``: repair seconds of workers ``idx`` instead of draws
        of the law (a replayed log's outages).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> rep = RepairTimes(replace(paper_scenario(4), repair_seconds=60.0, repair_law="fixed"), 0)
    >>> rep.start(np.array([2]), 10.0)
    >>> rep.due(69.0).tolist(), rep.due(70.0).tolist()
    ([], [2])
    """

    def __init__(self, scenario: StepScenario, seed: Any, durations: Any = None) -> None:
        self._sc = scenario
        self._rng = np.random.default_rng(seed)
        self.ready = np.full(scenario.groups, np.inf)
        #: ``durations(idx)``: the repair seconds of workers ``idx`` (``None``: draws of the law).
        self.durations = durations

    def draw(self, idx: np.ndarray) -> np.ndarray:
        """Repair times of workers ``idx``, seconds (the law's draws, or ``durations``)."""
        if self.durations is not None:
            return np.asarray(self.durations(idx), dtype=float)
        law, mean = self._sc.repair_law, float(self._sc.repair_seconds or 0.0)
        if law == "exponential":
            return self._rng.exponential(mean, idx.size)
        if law == "fixed":
            return np.full(idx.size, mean)
        return np.asarray(law.rvs(size=idx.size, random_state=self._rng), dtype=float)

    def start(self, idx: np.ndarray, at: float) -> None:
        """Start the repairs of workers ``idx`` at time ``at``."""
        idx = np.asarray(idx, dtype=np.int64)
        if not idx.size:
            return
        self.ready[idx] = at + np.maximum(self.draw(idx), 0.0)

    def due(self, t: float) -> np.ndarray:
        """Workers whose repair is done by ``t`` (removed from the pending repairs)."""
        back = np.flatnonzero(self.ready <= t)
        self.ready[back] = np.inf
        return back

    def clear(self) -> None:
        """A global restart restores every worker: pending repairs are dropped."""
        self.ready[:] = np.inf


class RunCut(Exception):
    """A run stopped at its horizon (:attr:`StepRun.max_seconds`), unfinished.

    Its :meth:`result` is the run's row with an infinite total time.
    """

    def __init__(self, run: StepRun) -> None:
        super().__init__(
            f"run unfinished at {run.t:.6g} s, past its horizon {run.max_seconds:.6g} s"
        )
        self.run = run

    def result(self) -> tuple[float, ...]:
        """:meth:`StepRun.result` with ``total = inf`` (the run did not finish)."""
        row = self.run.result()
        return (math.inf, *row[1:])


class StepRun:
    """One simulated run's shared state: clocks, time, counters, restarts, repairs.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law.
    rng : numpy.random.Generator
        The run's failure and jitter stream.
    repairs : RepairTimes, optional
        Repairs of removed workers; ``None``: none (out until the next
        global restart).
    clocks : optional
        The workers' failure clocks (``next``, ``renew``), e.g. a log's
        (:class:`~spare_theory.steps.sources.LogClocks`); default renewal
        clocks of ``scenario.failure_law``.
    max_seconds : float
        Horizon, seconds (default none): a global restart that ends after it
        raises :class:`RunCut`, so that a plan whose runs never finish costs
        a bounded time to rule out (as the hour-level ``max_hours``).

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> run = StepRun(paper_scenario(20), np.random.default_rng(0))
    >>> run.global_restart()
    >>> run.restarts, run.t >= 3600.0, len(run.result()) == len(RUN_FIELDS + BREAKDOWN_FIELDS)
    (1, True, True)
    >>> dict(zip(BREAKDOWN_FIELDS, run.breakdown()))["restart_seconds"] == run.t
    True
    """

    def __init__(
        self,
        scenario: StepScenario,
        rng: np.random.Generator,
        repairs: RepairTimes | None = None,
        clocks: Any = None,
        *,
        max_seconds: float = math.inf,
    ) -> None:
        self.sc = scenario
        self.max_seconds = max_seconds
        self.N = scenario.groups
        self.rng = rng
        # The first check happens at time 0: every clock starts there.  A replay
        # brings its own clocks (the next fault of each worker's nodes).
        # An exponential clock is the same at every age: its draws stay those of a fresh one.
        age = 0.0 if memoryless(scenario.failure_law) else scenario.clock_age_seconds
        self.clocks = clocks or RenewalClocks(
            scenario.failure_law,
            self.N,
            rng,
            batch=_LIFETIME_BATCH,
            start="equilibrium" if age is None else age,
            floor=_LIFETIME_FLOOR,
        )
        self.repairs = repairs
        self.t = 0.0
        self.failures = 0
        self.restarts = 0
        self.recomputed = 0
        self.restart_seconds = 0.0
        self.partial_count = np.zeros(self.N, dtype=np.int64)
        # Set by an elastic rule: time stalled in reconfigurations, batch share skipped,
        # and the kept steps' time charged to skipped samples and idle spares.
        self.stalled_seconds = 0.0
        self.samples_skipped = 0.0
        self.skipped_seconds = 0.0
        self.idle_spares_seconds = 0.0
        # The bill's breakdown (module docstring): checkpoint writes, partial
        # recoveries and rejoin stalls, and each kept step's time by its index.
        self.checkpoint_save_seconds = 0.0
        self.reconfiguration_seconds = 0.0
        self.kept: list[float] = []

    def jitter(self, shape: tuple[int, ...]) -> np.ndarray:
        """``max(0.1, Normal(1, cv))`` factors."""
        z = self.rng.standard_normal(shape)
        return np.maximum(0.1, 1.0 + self.sc.stack_jitter_cv * z)

    def fail(self, w: int, at: float) -> None:
        """Count worker ``w``'s failure, noticed at ``at``, and renew its clock from there."""
        self.failures += 1
        self.clocks.renew(int(w), at)

    def fails(self, w: int, at: float) -> bool:
        """A clock check of worker ``w`` at ``at``: a failure is counted and renewed."""
        if self.clocks.next[w] <= at:
            self.fail(w, at)
            return True
        return False

    def check(self, workers: np.ndarray, at: float) -> np.ndarray:
        """Clock checks of ``workers`` at ``at``; the failed ones, counted and renewed."""
        failed = workers[self.clocks.next[workers] <= at]
        for w in failed:
            self.fail(int(w), at)
        return failed

    def checkpoint_due(self, step: int, k: int) -> bool:
        """Whether a checkpoint follows step ``step`` (0-based): every ``k``-th and the last."""
        return (step + 1) % k == 0 or step + 1 == self.sc.steps

    def rejoin(self) -> np.ndarray:
        """Workers rejoining at this step boundary: each stalls every worker ``rejoin_seconds``.

        A rejoining worker starts a fresh lifetime when its stall ends.
        """
        if self.repairs is None:
            return np.zeros(0, dtype=np.int64)
        back = self.repairs.due(self.t)
        if back.size:
            stall = self.sc.rejoin_seconds * back.size
            self.t += stall
            self.reconfiguration_seconds += stall
            self.clocks.renew(back, self.t)
        return back

    def keep_step(self, index: int, seconds: float) -> None:
        """Step ``index`` (0-based) is done in ``seconds``: it replaces any earlier execution."""
        del self.kept[index:]
        self.kept.append(seconds)

    def partial_recovery(self, workers: np.ndarray, at: float) -> None:
        """A partial recovery of ``workers`` from ``at``: ``self.t`` moves past it."""
        pr = self.sc.partial_recovery_seconds
        self.partial_count[workers] += 1
        self.reconfiguration_seconds += pr
        self.t = at + pr

    def start_repairs(self, idx: np.ndarray, at: float) -> None:
        """Removed workers ``idx`` start their repairs at ``at`` (nothing without repairs)."""
        if self.repairs is not None:
            self.repairs.start(idx, at)

    def global_restart(self) -> None:
        """Run a global restart starting at ``self.t``; advance ``self.t`` past it.

        Every worker is back afterwards: pending repairs are dropped.
        """
        sc, nxt, start = self.sc, self.clocks.next, self.t
        R = sc.restart_seconds
        if sc.restart_semantics == "fixed":
            end = start + R
            due = np.flatnonzero(nxt < end)
            while due.size:
                self.clocks.renew(due, nxt[due])  # renew from the expiry, silently
                due = due[nxt[due] < end]
        else:
            window = np.full(self.N, start)
            due = np.flatnonzero(nxt < window + R)
            while due.size:
                self.failures += due.size
                window[due] = np.maximum(window[due], nxt[due])
                self.clocks.renew(due, nxt[due])  # renewal from the expiry time
                due = due[nxt[due] < window[due] + R]
            end = float((window + R).max())
        self.restart_seconds += end - start
        self.restarts += 1
        self.t = end
        if end > self.max_seconds:
            raise RunCut(self)
        if self.repairs is not None:
            self.repairs.clear()

    def breakdown(self) -> tuple[float, ...]:
        """The wall time so far by cause, seconds: :data:`BREAKDOWN_FIELDS` (module docstring).

        The parts add up to ``self.t`` (``wasted_progress`` is the rest).
        """
        useful = self.sc.failure_free_seconds
        kept = math.fsum(self.kept)
        reconfiguration = self.reconfiguration_seconds + self.stalled_seconds
        parts = {
            "checkpoint_save": self.checkpoint_save_seconds,
            "wasted_progress": self.t
            - kept
            - self.checkpoint_save_seconds
            - self.restart_seconds
            - reconfiguration,
            "restart": self.restart_seconds,
            "redundant_compute": kept - useful - self.skipped_seconds - self.idle_spares_seconds,
            "reconfiguration": reconfiguration,
            "skipped_samples": self.skipped_seconds,
            "idle_spares": self.idle_spares_seconds,
        }
        # Failure classes are not played at the step level: their causes are 0.
        return (useful, *(parts.get(cause, 0.0) for cause in BADPUT_CAUSES))

    def result(self) -> tuple[float, ...]:
        """``(total, up, failures, restarts, recomputed, skipped)`` (:data:`RUN_FIELDS`), then
        :meth:`breakdown` (:data:`BREAKDOWN_FIELDS`)."""
        down = (
            self.restart_seconds
            + self.sc.partial_recovery_seconds * int(self.partial_count.max())
            + self.stalled_seconds
        )
        return (
            self.t,
            self.t - down,
            self.failures,
            self.restarts,
            self.recomputed,
            self.samples_skipped,
            *self.breakdown(),
        )
