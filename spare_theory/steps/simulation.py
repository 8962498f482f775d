"""Step-level discrete-event simulation of a training run (the published simulator's semantics).

:func:`simulate_steps` replays, step by step, the discrete-event simulation
behind the SPARe paper's time-to-train and availability figures (the authors'
SimGrid simulator, public repository tsinghua-fib-lab/AutoSOTA, folder
``ICML-2026/paper-3612-SPARe/best_code``, BSD).  It imports no model module:
it is the independent check of the closed forms.

Workers and failures
--------------------
``N`` workers (one per data-parallel group) each keep a renewal failure
clock: the next failure time is drawn from ``scenario.failure_law`` when the
previous failure is noticed, and clocks are never reset at a global restart.
A failure is only noticed at a check: before each stack's compute, at the
all-reduce and (the leader, the lowest active worker id, only) at a
checkpoint.  A failed worker stays out until the next global restart.

SPARe (``strategy="spare"``)
----------------------------
Shard types sit on the cyclic placement ``cyclic_placement(N, r)`` (an
optimal Golomb ruler at the paper's sizes); worker ``g`` holds its ``r`` types
in a stack order, top first.  ``S`` starts at 1 after every global restart.
An attempt of a step: every active worker computes its stacks (each
``stack_seconds * max(0.1, Normal(1, cv))``), checking its clock before each;
a worker whose check fails stops.  The attempt's compute ends when the
slowest worker is done; then the all-reduce check of every active, not yet
failed worker, then the all-reduce (``allreduce_seconds``, times
``allreduce_failure_scale`` if any failure was noticed in the attempt).  After
a failure:

1. if the survivors' top ``S`` stacks still cover every type, the step is done
   after a partial recovery (``partial_recovery_seconds``);
2. otherwise the stacks are reordered with the fewest moves
   (:func:`spare_theory.stacking.reordering.reorder`, which uses ``S*`` of
   :func:`spare_theory.stacking.stacks.min_stacks`, the smallest feasible ``S`` in
   ``[S, r]``), and after a partial recovery the step is retried: a worker whose
   top ``S`` changed recomputes one stack (its first changed position); an
   unchanged worker computes the new position ``S_old`` if ``S`` grew;
3. if a type has no survivor (wipe-out), a global restart follows.

Rep (``strategy="rep"``; ``"ckpt"`` is Rep with ``r = 1``)
---------------------------------------------------------
Each worker computes ``r`` times the work in one compute of
``r * stack_seconds * max(0.1, Normal(1, cv))`` (one jitter draw), checking
its clock before the compute and again at its own end of compute (the
all-reduce check).  Replica sets are consecutive ids (``id // r``); a failed
step is done after a partial recovery while every set keeps a survivor, and
is a global restart otherwise.  Only the leader writes a checkpoint; the other
workers start the next step at once and wait for it at the all-reduce.  By
default (``rep_recovery="published"``) two quirks of the published binary
are kept: the controller acts on the lowest failed id of a step only (the
others stay in, flagged in each later step until removed, and count as
survivors in the replica-set test), and the checkpoint is taken by the leader
the step started with.  Without the first, counted failures at ``r = 9``,
``N = 200`` come out 23 % above the published ones.

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
active for; the run's figure is the per-worker maximum); ``up = total - down``
(rework and checkpoint writes count as up).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._parallel import map_tasks
from .._validation import as_choice, as_count, as_seed_sequence, child_seed
from ..placement.placements import cyclic_placement, group_stacks
from ..stacking.reordering import ReorderingController, reorder
from ..stacking.stacks import WipedOut
from .scenario import StepScenario

__all__ = ["REP_RECOVERIES", "STEP_STRATEGIES", "StepSimulation", "simulate_steps"]

#: Strategies accepted by :func:`simulate_steps`.
STEP_STRATEGIES = ("ckpt", "rep", "spare")

#: Rep recovery semantics accepted by :func:`simulate_steps` (``rep_recovery``).
REP_RECOVERIES = ("published", "all")

_FIELDS = ("total_seconds", "up_seconds", "failures", "global_restarts", "recomputed_stacks")
_LIFETIME_BATCH = 4096


@dataclass(frozen=True)
class StepSimulation:
    """Per-trial results of :func:`simulate_steps` (one entry per trial).

    Attributes
    ----------
    scenario : StepScenario
        The simulated scenario.
    strategy : str
        ``"ckpt"``, ``"rep"`` or ``"spare"``.
    r : int
        Redundancy (1 for ``"ckpt"``).
    checkpoint_every_steps : int
        Checkpoint interval ``k``, steps.
    total_seconds : numpy.ndarray
        Wall time to complete the steps, seconds.
    up_seconds : numpy.ndarray
        ``total - down``: wall time outside global and partial recoveries, seconds.
    failures : numpy.ndarray
        Failures noticed (at compute, all-reduce, checkpoint and restart checks).
    global_restarts : numpy.ndarray
        Global restarts.
    recomputed_stacks : numpy.ndarray
        Stacks computed in retried attempts of a step, summed over workers
        (SPARe only; 0 for Rep).

    Examples
    --------
    >>> from spare_theory import paper_scenario, simulate_steps
    >>> sim = simulate_steps(paper_scenario(50, steps=200), "rep", r=3,
    ...                      checkpoint_every_steps=5, trials=3, seed=0)
    >>> sim.trials, sim.total_seconds.shape, bool((sim.uptime <= 1.0).all())
    (3, (3,), True)
    >>> sim.mean("total_over_T0") > 1.0, sim.standard_error("failures") >= 0.0
    (True, True)
    """

    scenario: StepScenario
    strategy: str
    r: int
    checkpoint_every_steps: int
    total_seconds: np.ndarray
    up_seconds: np.ndarray
    failures: np.ndarray
    global_restarts: np.ndarray
    recomputed_stacks: np.ndarray

    @property
    def trials(self) -> int:
        """Number of trials."""
        return int(self.total_seconds.size)

    @property
    def restarts(self) -> np.ndarray:
        """Global restarts per trial (``global_restarts``; the name the other results use)."""
        return self.global_restarts

    @property
    def down_seconds(self) -> np.ndarray:
        """``total - up``: time in global and partial recoveries, seconds."""
        return self.total_seconds - self.up_seconds

    @property
    def hours(self) -> np.ndarray:
        """``total_seconds / 3600``, hours."""
        return self.total_seconds / 3600.0

    @property
    def uptime(self) -> np.ndarray:
        """``up / total`` per trial (the paper's "availability")."""
        return self.up_seconds / self.total_seconds

    @property
    def total_over_T0(self) -> np.ndarray:
        """``total / T0`` per trial, ``T0 = scenario.failure_free_seconds``."""
        return self.total_seconds / self.scenario.failure_free_seconds

    def _values(self, name: str) -> np.ndarray:
        allowed = (*_FIELDS, "restarts", "down_seconds", "hours", "uptime", "total_over_T0")
        as_choice(name, "name", allowed)
        return np.asarray(getattr(self, name), dtype=np.float64)

    def mean(self, name: str) -> float:
        """Mean over trials of the named per-trial quantity (a field or property name)."""
        return float(self._values(name).mean())

    def standard_error(self, name: str) -> float:
        """``sd / sqrt(trials)`` (sample sd) of the named quantity; needs ``trials >= 2``."""
        values = self._values(name)
        if values.size < 2:
            raise ValueError(f"standard_error needs trials >= 2, got trials={values.size}")
        return float(values.std(ddof=1) / math.sqrt(values.size))


class _Clocks:
    """Renewal failure clocks of ``N`` workers; lifetimes drawn from ``law`` in batches."""

    def __init__(self, law: Any, N: int, rng: np.random.Generator):
        self._law = law
        self._rng = rng
        self._buffer = np.empty(0)
        self._used = 0
        # The first check happens at time 0: every clock starts there.
        self.next = self.draw(N)

    def draw(self, n: int) -> np.ndarray:
        if self._used + n > self._buffer.size:
            fresh = np.asarray(
                self._law.rvs(size=max(_LIFETIME_BATCH, n), random_state=self._rng), dtype=float
            )
            self._buffer = np.concatenate([self._buffer[self._used :], fresh])
            self._used = 0
        out = self._buffer[self._used : self._used + n]
        self._used += n
        # A zero lifetime would fail again at the same check: floor it as the
        # published simulator does.
        return np.maximum(out, 1e-9)

    def renew(self, idx: np.ndarray | int, at: np.ndarray | float) -> None:
        count = np.size(idx)
        self.next[idx] = at + (self.draw(count) if np.ndim(idx) else self.draw(1)[0])


class _Repairs:
    """When each removed worker is ready to rejoin (``StepScenario.repair_seconds``).

    A repair starts when the controller removes the worker (the end of the
    attempt in which it acts on the failure) and lasts a draw of
    ``scenario.repair_law``; the draws come from their own stream, so the
    failure and jitter streams are those of the run without repairs until
    the first rejoin.
    """

    def __init__(self, scenario: StepScenario, N: int, seed: Any):
        self._sc = scenario
        self._rng = np.random.default_rng(seed)
        self.ready = np.full(N, np.inf)

    def start(self, idx: np.ndarray, at: float) -> None:
        """Start the repairs of workers ``idx`` at time ``at``."""
        idx = np.asarray(idx, dtype=np.int64)
        if not idx.size:
            return
        law, mean = self._sc.repair_law, float(self._sc.repair_seconds or 0.0)
        if law == "exponential":
            draws = self._rng.exponential(mean, idx.size)
        elif law == "fixed":
            draws = np.full(idx.size, mean)
        else:
            draws = np.asarray(law.rvs(size=idx.size, random_state=self._rng), dtype=float)
        self.ready[idx] = at + np.maximum(draws, 0.0)

    def due(self, t: float) -> np.ndarray:
        """Workers whose repair is done by ``t`` (removed from the pending repairs)."""
        back = np.flatnonzero(self.ready <= t)
        self.ready[back] = np.inf
        return back

    def clear(self) -> None:
        """A global restart restores every worker: pending repairs are dropped."""
        self.ready[:] = np.inf


def _rejoin(run: _Run, repairs: _Repairs | None) -> np.ndarray:
    """Workers rejoining at a step boundary: each stalls every worker ``rejoin_seconds``.

    A rejoining worker starts a fresh lifetime when its stall ends.
    """
    if repairs is None:
        return np.zeros(0, dtype=np.int64)
    back = repairs.due(run.t)
    if back.size:
        run.t += run.sc.rejoin_seconds * back.size
        run.clocks.renew(back, run.t)
    return back


class _Run:
    """State shared by both strategies: clocks, time, counters, restarts."""

    def __init__(self, scenario: StepScenario, rng: np.random.Generator):
        self.sc = scenario
        self.N = scenario.groups
        self.rng = rng
        self.clocks = _Clocks(scenario.failure_law, self.N, rng)
        self.t = 0.0
        self.failures = 0
        self.restarts = 0
        self.recomputed = 0
        self.restart_seconds = 0.0
        self.partial_count = np.zeros(self.N, dtype=np.int64)

    def jitter(self, shape: tuple[int, ...]) -> np.ndarray:
        """``max(0.1, Normal(1, cv))`` factors."""
        z = self.rng.standard_normal(shape)
        return np.maximum(0.1, 1.0 + self.sc.stack_jitter_cv * z)

    def global_restart(self) -> None:
        """Run a global restart starting at ``self.t``; advance ``self.t`` past it."""
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

    def result(self) -> tuple[float, float, int, int, int]:
        down = self.restart_seconds + self.sc.partial_recovery_seconds * int(
            self.partial_count.max()
        )
        return (self.t, self.t - down, self.failures, self.restarts, self.recomputed)


def _run_rep(
    sc: StepScenario,
    r: int,
    k: int,
    rng: np.random.Generator,
    published: bool,
    repairs: _Repairs | None = None,
) -> tuple:
    run = _Run(sc, rng)
    N, clocks = run.N, run.clocks
    nxt = clocks.next
    sets = np.arange(N) // r
    n_sets = int(sets[-1]) + 1
    compute_seconds = r * sc.stack_seconds
    active = np.ones(N, dtype=bool)
    # Active workers whose failure is noticed but not yet acted on: they compute
    # nothing and are flagged again in every attempt until removed.
    pending = np.zeros(N, dtype=bool)
    writer = -1  # the worker still writing the last checkpoint at the next step's start
    step, last_ckpt = 0, 0
    while step < sc.steps:
        back = _rejoin(run, repairs)
        if back.size:  # repaired workers take back their place in their replica sets
            active[back] = True
            pending[back] = False
        t = run.t
        leader = int(np.argmax(active))  # the lowest active id
        start = np.full(N, t)
        if writer >= 0:
            start[writer] += sc.checkpoint_seconds
            writer = -1
        finish = start.copy()
        computing = active & ~pending
        finish[computing] += compute_seconds * run.jitter((int(computing.sum()),))
        # Clock checks before the compute and, at its own end, the all-reduce.
        for w in np.flatnonzero(active & (nxt <= finish)):
            if pending[w]:
                clocks.renew(int(w), start[w])  # consumed, not counted (already failed)
            elif nxt[w] <= start[w]:
                run.failures += 1
                clocks.renew(int(w), start[w])
                finish[w] = start[w]
                pending[w] = True
            else:
                run.failures += 1
                clocks.renew(int(w), finish[w])
                pending[w] = True
        T1 = float(finish.max())
        if not pending.any():
            run.t = T1 + sc.allreduce_seconds
        else:
            T2 = T1 + sc.allreduce_seconds * sc.allreduce_failure_scale
            removed = pending.copy()
            if published:
                # The published controller reads failure flags up to the first
                # set one: only the lowest failed id is acted on this step.
                removed[:] = False
                removed[int(np.argmax(pending))] = True
            survivors = active & ~removed
            if np.bincount(sets[survivors], minlength=n_sets).all():
                if repairs is not None:
                    repairs.start(np.flatnonzero(active & removed), T2)
                active = survivors
                pending &= active
                run.partial_count[active] += 1
                run.t = T2 + sc.partial_recovery_seconds
            else:
                run.t = T2
                run.global_restart()
                if repairs is not None:
                    repairs.clear()
                active[:] = True
                pending[:] = False
                step = last_ckpt
                continue
        if (step + 1) % k == 0 or step + 1 == sc.steps:
            # The published binary lets the step's starting leader write; else the current one.
            checker = leader if published else int(np.argmax(active))
            if nxt[checker] <= run.t:
                run.failures += 1
                clocks.renew(checker, run.t)
                pending[checker] = bool(active[checker])
            else:
                last_ckpt = step
                writer = checker  # the others start the next step at once
                if step + 1 == sc.steps:
                    run.t += sc.checkpoint_seconds  # the final barrier waits for the write
        step += 1
    return run.result()


def _run_spare(
    sc: StepScenario, r: int, k: int, rng: np.random.Generator, repairs: _Repairs | None = None
) -> tuple:
    run = _Run(sc, rng)
    N, clocks = run.N, run.clocks
    nxt = clocks.next
    hosts = cyclic_placement(N, r)
    base_order = group_stacks(hosts)  # order[g, p]: type on worker g at stack position p
    order = base_order.copy()
    S = 1
    act_idx = np.arange(N)
    leader, pending_leader = 0, False
    step, last_ckpt = 0, 0
    while step < sc.steps:
        back = _rejoin(run, repairs)
        if back.size:
            # Repaired workers take back their rows; the controller recomputes S*
            # (it may fall) with the fewest moves.  No stack is recomputed.
            act_idx = np.union1d(act_idx, back)
            out = np.ones(N, dtype=bool)
            out[act_idx] = False
            gone = np.flatnonzero(out)
            plan = reorder(hosts, gone, order)
            order_new = plan.order.copy()
            order_new[gone] = order[gone]
            S, order = plan.stacks, order_new
            if not pending_leader:
                leader = int(act_idx[0])
        # First attempt: every active worker computes positions [0, S).
        lo = np.zeros(N, dtype=np.int64)
        hi = np.full(N, S, dtype=np.int64)
        retry = False
        restarted = False
        while True:
            t = run.t
            pending = np.zeros(N, dtype=bool)
            if pending_leader:
                pending[leader] = True
                pending_leader = False
            workers = act_idx[~pending[act_idx]]
            widths = hi[workers] - lo[workers]
            busy = widths > 0
            workers, widths = workers[busy], widths[busy]
            end = np.full(N, t)
            if workers.size:
                W = int(widths.max())
                durations = sc.stack_seconds * run.jitter((workers.size, W))
                if W > 1 and int(widths.min()) < W:
                    durations[np.arange(W)[None, :] >= widths[:, None]] = 0.0
                done_at = t + np.cumsum(durations, axis=1)  # end of each stack
                end[workers] = done_at[:, -1]
                computed = widths.copy()
                horizon = float(done_at[:, -1].max())
                for pos in np.flatnonzero(nxt[workers] <= horizon):
                    w = int(workers[pos])
                    w_len = int(widths[pos])
                    starts = np.concatenate(([t], done_at[pos, : w_len - 1]))
                    j = int(np.searchsorted(starts, nxt[w], side="left"))
                    if j < w_len:  # the check before stack j fails
                        run.failures += 1
                        clocks.renew(w, starts[j])
                        end[w] = starts[j]
                        pending[w] = True
                        computed[pos] = j
                if retry:
                    run.recomputed += int(computed.sum())
            T1 = float(end.max())
            # All-reduce check of every active worker that has not failed yet.
            alive = act_idx[~pending[act_idx]]
            for w in alive[nxt[alive] <= T1]:
                run.failures += 1
                clocks.renew(int(w), T1)
                pending[w] = True
            flagged = pending[act_idx]
            if not flagged.any():
                run.t = T1 + sc.allreduce_seconds
                break
            T2 = T1 + sc.allreduce_seconds * sc.allreduce_failure_scale
            survivors = act_idx[~flagged]
            covered = np.zeros(N, dtype=bool)
            covered[order[survivors, :S]] = True
            if covered.all():  # the survivors' top S stacks still cover every type
                if repairs is not None:
                    repairs.start(act_idx[flagged], T2)
                act_idx = survivors
                run.partial_count[act_idx] += 1
                leader = int(act_idx[0])
                run.t = T2 + sc.partial_recovery_seconds
                break
            out = np.ones(N, dtype=bool)
            out[survivors] = False
            failed = np.flatnonzero(out)
            try:
                plan = reorder(hosts, failed, order)
            except WipedOut:
                run.t = T2
                run.global_restart()
                if repairs is not None:
                    repairs.clear()
                restarted = True
                break
            if repairs is not None:
                repairs.start(act_idx[flagged], T2)
            new_S = plan.stacks
            new_order = plan.order.copy()
            new_order[failed] = order[failed]  # keep full rows: failed workers stay out
            changed = new_order[survivors, :new_S] != order[survivors, :new_S]
            first = np.where(changed.any(axis=1), changed.argmax(axis=1), -1)
            row_changed = (new_order[survivors] != order[survivors]).any(axis=1)
            lo[:] = 0
            hi[:] = 0
            rec_lo = np.where(first >= 0, first, new_S)
            grow = (~row_changed) & (new_S > S)
            rec_lo = np.where(grow, S, rec_lo)
            lo[survivors] = rec_lo
            hi[survivors] = np.where((first >= 0) | grow, rec_lo + 1, rec_lo)
            S, order = new_S, new_order
            act_idx = survivors
            run.partial_count[act_idx] += 1
            leader = int(act_idx[0])
            run.t = T2 + sc.partial_recovery_seconds
            retry = True
        if restarted:
            S, order = 1, base_order.copy()
            act_idx = np.arange(N)
            leader, pending_leader = 0, False
            step = last_ckpt
            continue
        if (step + 1) % k == 0 or step + 1 == sc.steps:
            if nxt[leader] <= run.t:
                run.failures += 1
                clocks.renew(leader, run.t)
                pending_leader = True
            else:
                last_ckpt = step
                run.t += sc.checkpoint_seconds  # every worker waits for the write
        step += 1
    return run.result()


def _water_fill(counts: np.ndarray, q: int) -> np.ndarray:
    """Integers ``add >= 0`` summing to ``q`` that minimise ``max(counts + add)``.

    The level ``L`` is the least integer with ``sum max(0, L - counts) >= q``;
    every host is filled to ``L - 1``, and the rest go one each, lowest index
    first, to the hosts that reach ``L``.
    """
    lo, hi = int(counts.min()), int(counts.min()) + q
    while lo < hi:  # least L with enough room below it
        mid = (lo + hi) // 2
        if int(np.maximum(mid - counts, 0).sum()) >= q:
            hi = mid
        else:
            lo = mid + 1
    add = np.maximum(lo - 1 - counts, 0)
    rest = q - int(add.sum())
    if rest:
        add[np.flatnonzero(counts + add == lo - 1)[:rest]] += 1
    return add


def _spread_lost(hosts: np.ndarray, alive: np.ndarray, lost: np.ndarray) -> np.ndarray:
    """Retry work ``todo[t, k]``: the lost pieces of each type on its surviving hosts.

    Types in decreasing order of lost pieces; each type's pieces are
    water-filled over its surviving hosts by the pieces they already retry,
    so the largest retry is as small as this greedy order allows.
    """
    todo = np.zeros(hosts.shape, dtype=np.int64)
    retry = np.zeros(alive.size, dtype=np.int64)
    types = np.flatnonzero(lost)
    for t in types[np.argsort(-lost[types], kind="stable")].tolist():
        cols = np.flatnonzero(alive[hosts[t]])
        add = _water_fill(retry[hosts[t, cols]], int(lost[t]))
        todo[t, cols] = add
        retry[hosts[t, cols]] += add
    return todo


def _run_spare_split(sc: StepScenario, r: int, k: int, rng: np.random.Generator) -> tuple:
    """SPARe with ``m = sc.microbatches > 1`` pieces a shard (see :func:`simulate_steps`)."""
    run = _Run(sc, rng)
    N, clocks = run.N, run.clocks
    nxt = clocks.next
    m = sc.microbatches
    hosts = cyclic_placement(N, r)
    flat = hosts.ravel()
    piece = sc.stack_seconds / m
    # Work-additive jitter: w shard units take Normal(c w, (c v)^2 w) seconds.
    piece_sd = sc.stack_seconds * sc.stack_jitter_cv / math.sqrt(m)
    controller = ReorderingController(hosts, microbatches=m)
    flow = controller.pieces  # flow[t, j]: pieces of type t on group hosts[t, j]
    alive = np.ones(N, dtype=bool)
    leader, pending_leader = 0, False
    step, last_ckpt = 0, 0
    while step < sc.steps:
        todo = flow.copy()  # pieces to compute in this attempt
        done = np.zeros_like(flow)  # pieces computed in earlier attempts of this step
        retry = False
        restarted = False
        while True:
            t = run.t
            pending = np.zeros(N, dtype=bool)
            if pending_leader:
                pending[leader] = True
                pending_leader = False
            count = np.bincount(flat, weights=todo.ravel(), minlength=N).astype(np.int64)
            workers = np.flatnonzero((count > 0) & alive & ~pending)
            end = np.full(N, t)
            if workers.size:
                pieces = count[workers].astype(float)
                z = run.rng.standard_normal(workers.size)
                seconds = np.maximum(
                    piece * pieces + piece_sd * np.sqrt(pieces) * z, 0.1 * piece * pieces
                )
                end[workers] = t + seconds
                computed = count[workers].copy()
                horizon = float(end[workers].max())
                for pos in np.flatnonzero(nxt[workers] <= horizon):
                    w = int(workers[pos])
                    gap = seconds[pos] / pieces[pos]  # checks before each piece, evenly spaced
                    j = max(math.ceil((nxt[w] - t) / gap), 0)
                    if j < computed[pos]:  # the check before piece j fails
                        at = t + j * gap
                        run.failures += 1
                        clocks.renew(w, at)
                        end[w] = at
                        pending[w] = True
                        computed[pos] = j
                if retry:
                    run.recomputed += int(computed.sum())
            T1 = float(end.max())
            # All-reduce check of every active worker that has not failed yet.
            ok = np.flatnonzero(alive & ~pending)
            for w in ok[nxt[ok] <= T1]:
                run.failures += 1
                clocks.renew(int(w), T1)
                pending[w] = True
            if not pending.any():
                run.t = T1 + sc.allreduce_seconds
                break
            T2 = T1 + sc.allreduce_seconds * sc.allreduce_failure_scale
            # A failed worker's pieces of this step are lost (its gradients with it).
            on_failed = pending[hosts]
            done = np.where(on_failed, 0, done + todo)
            lost = (m - done.sum(axis=1)).astype(np.int64)
            try:
                for g in np.flatnonzero(pending).tolist():
                    controller.fail(g)
            except WipedOut:
                run.t = T2
                run.global_restart()
                restarted = True
                break
            alive &= ~pending
            flow = controller.pieces
            todo = _spread_lost(hosts, alive, lost)
            run.partial_count[alive] += 1
            leader = int(np.argmax(alive))
            run.t = T2 + sc.partial_recovery_seconds
            retry = True
        if restarted:
            controller = ReorderingController(hosts, microbatches=m)
            flow = controller.pieces
            alive[:] = True
            leader, pending_leader = 0, False
            step = last_ckpt
            continue
        if (step + 1) % k == 0 or step + 1 == sc.steps:
            if nxt[leader] <= run.t:
                run.failures += 1
                clocks.renew(leader, run.t)
                pending_leader = True
            else:
                last_ckpt = step
                run.t += sc.checkpoint_seconds  # every worker waits for the write
        step += 1
    return run.result()


def _trial(task: tuple) -> tuple:
    scenario, strategy, r, k, rep_recovery, seed = task
    rng = np.random.default_rng(seed)
    # Repairs draw from their own child stream: without them nothing changes.
    repairs = (
        _Repairs(scenario, scenario.groups, child_seed(seed, 0))
        if scenario.repair_seconds is not None
        else None
    )
    if strategy == "spare" and scenario.microbatches > 1:
        return _run_spare_split(scenario, r, k, rng)
    if strategy == "spare":
        return _run_spare(scenario, r, k, rng, repairs)
    return _run_rep(scenario, r, k, rng, published=rep_recovery == "published", repairs=repairs)


def simulate_steps(
    scenario: StepScenario,
    strategy: str,
    *,
    r: int | None = None,
    checkpoint_every_steps: int,
    trials: int,
    seed: int | np.random.SeedSequence,
    rep_recovery: str = "published",
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> StepSimulation:
    """Simulate ``trials`` training runs of ``scenario`` step by step.

    The semantics are those of the SPARe authors' published discrete-event
    simulator (see the module docstring): jittered stacks, failure checks
    before each stack, at the all-reduce and at checkpoints, partial
    recoveries, retried steps with reordered stacks (SPARe), replica sets
    (Rep), rollback to the last checkpoint after a global restart.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law.
    strategy : {"spare", "rep", "ckpt"}
        SPARe, Rep (``r`` replicas per set, ``r`` times the compute per
        worker) or checkpointing alone (Rep with ``r = 1``).
    r : int
        Redundancy, ``1 <= r <= N`` (for ``"spare"`` a cyclic placement must
        exist: ``N >= r(r-1) + 1``); omitted or 1 for ``"ckpt"``.
    checkpoint_every_steps : int
        Checkpoint interval ``k >= 1``, steps (a checkpoint also follows the
        last step).
    trials : int
        Independent runs, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` uses the stream ``child_seed(seed, i)``: results do not
        depend on the executor.
    rep_recovery : {"published", "all"}
        Rep and ckpt only.  ``"published"`` (default) reproduces the published
        binary: after a failed step its controller acts on the lowest failed
        id only (it stops reading failure flags at the first set one), so the
        other workers that failed in the step stay active, compute nothing,
        are flagged again in each later step until removed (their clocks
        expiring meanwhile are renewed but not counted) and count as
        survivors in the replica-set test; and the checkpoint after a step is
        checked and written by the leader the step started with.  ``"all"``:
        every worker that failed in the step is removed at once and the
        current leader writes the checkpoint.
    executor : concurrent.futures.Executor, optional
        Runs trials in parallel; ``None`` runs them here.
    progress : bool
        Show a progress bar over trials.

    Returns
    -------
    StepSimulation

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    Without failures a step takes the slowest of ``N`` jittered stacks plus
    the all-reduce:

    >>> from scipy import stats
    >>> from spare_theory import StepScenario, simulate_steps
    >>> sc = StepScenario(groups=8, steps=50, allreduce_seconds=1.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> sim = simulate_steps(sc, "spare", r=2, checkpoint_every_steps=10, trials=2, seed=1)
    >>> int(sim.failures.sum()), round(sim.mean("total_over_T0"), 2)
    (0, 1.16)
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_STRATEGIES)
    N = scenario.groups
    if strategy == "ckpt":
        r_checked = as_count(1 if r is None else r, "r", minimum=1, maximum=1)
    else:
        if r is None:
            raise ValueError(f"r is required for strategy {strategy!r}")
        r_checked = as_count(r, "r", minimum=1, maximum=N)
    if strategy == "spare":
        cyclic_placement(N, r_checked)  # raises ValueError when no placement exists
        if scenario.microbatches > 1 and scenario.repair_seconds is not None:
            raise ValueError(
                "microbatches > 1 with repairs is not simulated (a rejoining group's "
                "pieces are not modelled); set microbatches=1 or repair_seconds=None"
            )
    k = as_count(checkpoint_every_steps, "checkpoint_every_steps")
    n = as_count(trials, "trials")
    root = as_seed_sequence(seed)
    rep_recovery = as_choice(rep_recovery, "rep_recovery", REP_RECOVERIES)
    tasks = [
        (scenario, strategy, r_checked, k, rep_recovery, child_seed(root, i)) for i in range(n)
    ]
    rows = map_tasks(_trial, tasks, executor=executor, desc="trials", progress=progress)
    columns = np.array(rows, dtype=np.float64).reshape(n, len(_FIELDS)).T
    ints = {"failures", "global_restarts", "recomputed_stacks"}
    values = {
        name: (col.astype(np.int64) if name in ints else col) for name, col in zip(_FIELDS, columns)
    }
    return StepSimulation(
        scenario=scenario,
        strategy=strategy,
        r=r_checked,
        checkpoint_every_steps=k,
        **values,
    )
