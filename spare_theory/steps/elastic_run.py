"""Elastic DP's and hot spares' rules in the step-level event simulation.

The hour-level contract of issue 21 (:class:`~spare_theory.strategies.elastic.ElasticStrategy`)
in the published simulator's step world (:mod:`spare_theory.steps.runs`):
``N`` workers (groups), ``A`` of them compute (``A = N``: elastic DP;
``A = N - r``: ``r`` hot spares), quorum ``q``.

- **Steps.**  An attempt: the ``m = min(A, n)`` computing workers of the
  ``n`` up each compute one stack (``stack_seconds * max(0.1, Normal(1,
  cv))``); then the all-reduce.  A committed step trains ``m / N`` of the
  global batch; the run needs the work of ``steps`` full steps.  Spares
  idle, but take part in every quorum and all-reduce (torchft's spares
  contribute zero gradients), so their failures count like any other.
- **Checks.**  Every up worker's clock is checked at the start of an
  attempt and at its all-reduce (``T1``, when the slowest stack is done);
  while stalled, restarting or waiting for nothing else, failures are seen
  when they happen.
- **A failure** seen at the all-reduce voids the attempt (torchft's
  ``should_commit`` is false: no work), after the shortened all-reduce
  (``allreduce_failure_scale``).  Then, if at least ``q`` workers are up, a
  stall of ``reconfigure_seconds`` (no progress); a failure or a rejoin
  during a stall starts it over.  A failure seen at the start of an attempt
  (it happened during the previous all-reduce or checkpoint) stalls the
  same way before the attempt; the committed step stands.
- **Fewer than ``q`` up** is a wipe-out: the published global restart
  (``restart_semantics``: every worker's restart window, or exactly ``R``),
  rollback to the last checkpoint, all workers up.  The failures of the
  resume burst (clocks that expired while waiting for the slowest window)
  are removed without a stall (the first quorum forms without them) and
  are a wipe-out again if they leave fewer than ``q``.  As in the
  published simulator the checkpointed step is redone and checkpointed
  again.
- **Checkpoints** after every ``k``-th committed step and when the work is
  done; every worker waits ``checkpoint_seconds``.  Any up group can write
  it (every group holds the whole state): it is kept iff it completes
  before the wipe-out, i.e. iff at least ``q`` workers are still up at its
  end; the failures during it are seen at its end and start one stall.
- **Repairs** (``repair_seconds``): a removed worker's repair starts when
  it is removed and lasts a draw of the repair law plus ``heal_seconds``
  (the live recovery from a peer); it rejoins at the next attempt start, or
  at once during a stall, with a fresh lifetime, and its rejoin starts a
  stall.  A global restart drops the pending repairs.
- The run ends when the checkpoint that saves the last of the work
  completes.  ``samples_skipped = 1 - work / (A/N * steps kept)`` over the
  steps of the final run; stalls count as down time (like the published
  partial recoveries).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .runs import RepairTimes, StepRun
from .scenario import StepScenario

__all__ = ["run_elastic"]


class _Elastic:
    """One run's membership: who is up, stalls, wipe-outs (module docstring)."""

    def __init__(self, run: StepRun, quorum: int) -> None:
        self.run, self.q = run, quorum
        self.up = np.ones(run.N, dtype=bool)
        self.heal = run.sc.heal_seconds

    def remove(self, workers: np.ndarray, seen: float, repair_from: float) -> bool:
        """Count the failures of ``workers`` seen at ``seen``; True if fewer than ``q`` are left."""
        for w in workers.tolist():
            self.run.fail(w, seen)
        self.up[workers] = False
        self.run.start_repairs(workers, repair_from + self.heal)
        return int(self.up.sum()) < self.q

    def rejoin(self, at: float) -> bool:
        """Repaired workers due by ``at`` rejoin with fresh lifetimes; whether any did."""
        repairs = self.run.repairs
        if repairs is None:
            return False
        back = repairs.due(at)
        if back.size:
            self.up[back] = True
            self.run.clocks.renew(back, at)
        return bool(back.size)

    def expired(self, at: float) -> np.ndarray:
        """Up workers whose clocks expired by ``at``."""
        workers = np.flatnonzero(self.up)
        return workers[self.run.clocks.next[workers] <= at]

    def boundary(self, quiet: bool = False) -> str:
        """At an attempt start: failures and rejoins due now.  ``"wiped"``, ``"stall"`` or ``""``.

        ``quiet`` (the resume after a restart): failures are removed without a stall.
        """
        t = self.run.t
        failed = self.expired(t)
        if failed.size and self.remove(failed, t, t):
            return "wiped"
        back = self.rejoin(t)
        return "stall" if (failed.size or back) and not quiet else ""

    def stall(self, start: float) -> bool:
        """Stall from ``start`` until ``reconfigure_seconds`` pass without an event; True if wiped.

        Failures and rejoins are seen as they happen (those between the
        failed all-reduce and ``start`` are absorbed at ``start``).
        """
        run = self.run
        s = run.sc.reconfigure_seconds
        end = start + s
        nxt = run.clocks.next
        ready = run.repairs.ready if run.repairs is not None else None
        while True:
            workers = np.flatnonzero(self.up)
            i = int(np.argmin(nxt[workers])) if workers.size else -1
            fail_at = float(nxt[workers[i]]) if workers.size else math.inf
            back_at = float(ready.min()) if ready is not None else math.inf
            at = min(fail_at, back_at)
            if at >= end:
                break
            at = max(at, start)
            if fail_at <= back_at:
                if self.remove(workers[i : i + 1], at, at):
                    run.stalled_seconds += at - start
                    run.t = at
                    return True
            else:
                self.rejoin(at)
            end = at + s
        run.stalled_seconds += end - start
        run.t = end
        return False


def run_elastic(
    scenario: StepScenario,
    r: int,
    k: int,
    rng: np.random.Generator,
    *,
    quorum: int,
    repairs: RepairTimes | None = None,
    clocks: Any = None,
    max_seconds: float = math.inf,
) -> tuple[float, ...]:
    """One simulated run of an elastic job with ``r`` hot spares and quorum ``quorum``.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs, lifetime law, ``reconfigure_seconds`` and
        ``heal_seconds``.
    r : int
        Spare groups, ``0 <= r < N`` (``A = N - r`` compute; no checks).
    k : int
        Checkpoint interval, committed steps, ``>= 1``.
    rng : numpy.random.Generator
        The run's failure and jitter stream.
    quorum : int
        ``q``: fewest workers up for the job to go on, ``1 <= q <= A`` (no
        checks).
    repairs : RepairTimes, optional
        Repairs of removed workers (their own stream).
    clocks : optional
        The workers' failure clocks (a replayed log's); default the law's.
    max_seconds : float
        Horizon: a run still unfinished when a global restart ends after it
        stops there (:class:`~spare_theory.steps.runs.StepRun`).

    Returns
    -------
    tuple
        ``(total seconds, up seconds, failures, global restarts, 0, samples
        skipped)`` (:data:`spare_theory.steps.runs.RUN_FIELDS`), then the wall
        time by cause (:data:`~spare_theory.steps.runs.BREAKDOWN_FIELDS`).

    Examples
    --------
    Without failures, 20 steps of a 4-stack job with 1 hot spare need 27
    steps (3 of 4 shards each) and 3 checkpoints:

    >>> from scipy import stats
    >>> sc = StepScenario(groups=4, steps=20, allreduce_seconds=1.0, stack_jitter_cv=0.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> out = run_elastic(sc, 1, 10, np.random.default_rng(0), quorum=3)
    >>> [round(x, 6) for x in out[:6]]
    [1931.4, 1931.4, 0, 0, 0, 0.0]

    The spare idles through a quarter of each of the 27 steps (65 s); the
    last step trains a quarter step more than needed:

    >>> from spare_theory.steps.runs import BREAKDOWN_FIELDS
    >>> parts = {name: round(x, 6) for name, x in zip(BREAKDOWN_FIELDS, out[6:]) if round(x, 6)}
    >>> parts["idle_spares_seconds"] == 27 * 65 / 4, parts["redundant_compute_seconds"]
    (True, 16.25)
    """
    sc = scenario
    run = StepRun(sc, rng, repairs, clocks, max_seconds=max_seconds)
    job = _Elastic(run, quorum)
    N = run.N
    A = N - r
    c, a = sc.stack_seconds, sc.allreduce_seconds
    # Committed steps and their work in shards (N shards: a full step), exact integers.
    done, shards = 0, 0
    saved = (0, 0)  # where a restart resumes: the checkpointed step, redone
    resume = False
    while True:
        outcome = job.boundary(quiet=resume)
        resume = False
        if outcome == "stall" and not job.stall(run.t):
            continue  # look again at the stall's end
        if not outcome:
            m = min(A, int(job.up.sum()))
            begin = run.t
            T1 = run.t + c * float(run.jitter((m,)).max())
            failed = job.expired(T1)
            if not failed.size:
                run.t = T1 + a
                run.keep_step(done, run.t - begin)
                done, shards = done + 1, shards + m
                finished = shards >= sc.steps * N
                if done % k and not finished:
                    continue
                run.t += sc.checkpoint_seconds
                if int(job.up.sum()) - job.expired(run.t).size < quorum:
                    continue  # a wipe-out during the write: it is lost, the boundary sees it
                run.checkpoint_save_seconds += sc.checkpoint_seconds  # a lost write is wasted
                saved = (done - 1, shards - m)
                if finished:
                    break
                continue
            # The attempt is void; stall after the shortened all-reduce.
            run.t = T1 + a * sc.allreduce_failure_scale
            if not job.remove(failed, T1, run.t) and not job.stall(run.t):
                continue
        # A wipe-out: the published global restart, rollback, the resume burst.
        run.global_restart()
        job.up[:] = True
        done, shards = saved
        resume = True
    run.samples_skipped = 1.0 - shards / (done * A)
    # The kept steps' share of the down groups and of the spares (module docstring of runs).
    step = (c + a) / N
    run.skipped_seconds = step * (done * A - shards)
    run.idle_spares_seconds = step * done * r
    return run.result()
