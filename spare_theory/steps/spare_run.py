"""SPARe's rules in the step-level event simulation: whole shards or micro-batches.

Shard types sit on the cyclic placement ``cyclic_placement(N, r)`` (an
optimal Golomb ruler at the paper's sizes).  An attempt of a step: every
active worker computes its work, checking its clock before each unit (a
stack, or a piece of a shard); a worker whose check fails stops.  The
attempt's compute ends when the slowest worker is done; then the all-reduce
check of every active, not yet failed worker, then the all-reduce
(``allreduce_seconds``, times ``allreduce_failure_scale`` if any failure was
noticed in the attempt).  A failure is followed by a partial recovery
(``partial_recovery_seconds``) and the step is done or retried, or, if a
type has no survivor (wipe-out), by a global restart.  Every worker waits
for a checkpoint.  Shared machinery: :mod:`spare_theory.steps.runs`.

The two layouts of an attempt's work differ in how it is laid out and retried:

- **Whole shards** (``microbatches = 1``, the published scheme): worker
  ``g`` holds its ``r`` types in a stack order, top first; ``S`` starts at 1
  after every global restart and each stack lasts
  ``stack_seconds * max(0.1, Normal(1, cv))``.  If the survivors' top ``S``
  stacks still cover every type the step is done; otherwise the stacks are
  reordered with the fewest moves
  (:func:`spare_theory.stacking.reordering.reorder`, which uses ``S*`` of
  :func:`spare_theory.stacking.stacks.min_stacks`, the smallest feasible
  ``S`` in ``[S, r]``) and the step is retried: a worker whose top ``S``
  changed recomputes one stack (its first changed position); an unchanged
  worker computes the new position ``S_old`` if ``S`` grew.  Repaired
  workers take back their rows at a step boundary and ``S*`` is recomputed
  (it may fall).
- **Micro-batches** (``microbatches = m > 1``): each shard is ``m`` pieces
  that any surviving holder of its type may compute, routed by
  :class:`~spare_theory.stacking.reordering.ReorderingController`; ``w``
  pieces last ``max(c w/m + (c v / sqrt(m)) sqrt(w) Z, 0.1 c w/m)``
  (work-additive jitter), with checks evenly spaced before each piece.  A
  failed worker's pieces of the step are lost: they are spread over their
  types' surviving holders by water-filling and the step is retried.
  Repairs are not simulated in this layout.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ..placement.placements import cyclic_placement, group_stacks
from ..stacking.reordering import ReorderingController, StackReorderer
from ..stacking.stacks import WipedOut
from .runs import RepairTimes, StepRun
from .scenario import StepScenario

__all__ = ["check_spare_run", "run_spare"]

# What a failed attempt leads to: the step done, a retry, or a wipe-out.
Outcome = Literal["done", "retry", "wiped"]


class _Stacks:
    """Whole shards: stacks in an order per worker, the top ``S`` computed (``m = 1``)."""

    def __init__(self, run: StepRun, r: int) -> None:
        self.run, self.N = run, run.N
        self.hosts = cyclic_placement(self.N, r)
        self.reorder = StackReorderer(self.hosts)
        self.base_order = group_stacks(self.hosts)  # order[g, p]: type at stack position p
        self.reset()

    def reset(self) -> None:
        """Every worker back, ``S = 1`` (after a global restart)."""
        self.S, self.order = 1, self.base_order.copy()
        self.active = np.arange(self.N)

    def start_step(self) -> bool:
        """Take back repaired workers; lay out the first attempt.  Whether any rejoined."""
        N = self.N
        back = self.run.rejoin()
        if back.size:
            # Repaired workers take back their rows; the controller recomputes S*
            # (it may fall) with the fewest moves.  No stack is recomputed.
            self.active = np.union1d(self.active, back)
            out = np.ones(N, dtype=bool)
            out[self.active] = False
            gone = np.flatnonzero(out)
            plan = self.reorder(gone, self.order)
            order_new = plan.order.copy()
            order_new[gone] = self.order[gone]
            self.S, self.order = plan.stacks, order_new
        # First attempt: every active worker computes positions [0, S).
        self.lo = np.zeros(N, dtype=np.int64)
        self.hi = np.full(N, self.S, dtype=np.int64)
        return bool(back.size)

    def attempt(self, t: float, pending: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(workers, finish times, stacks)`` of the attempt's busy workers from ``t``."""
        act = self.active
        workers = act[~pending[act]]
        widths = self.hi[workers] - self.lo[workers]
        busy = widths > 0
        workers, widths = workers[busy], widths[busy]
        if not workers.size:
            return workers, np.empty(0), widths
        W = int(widths.max())
        durations = self.run.sc.stack_seconds * self.run.jitter((workers.size, W))
        if W > 1 and int(widths.min()) < W:
            durations[np.arange(W)[None, :] >= widths[:, None]] = 0.0
        self._t = t
        self._done_at = t + np.cumsum(durations, axis=1)  # end of each stack
        return workers, self._done_at[:, -1], widths.copy()

    def failed_check(self, pos: int, units: int, expiry: float) -> tuple[int, float]:
        """``(j, time)``: the first check of busy worker ``pos`` at or after ``expiry``."""
        starts = np.concatenate(([self._t], self._done_at[pos, : units - 1]))
        j = int(np.searchsorted(starts, expiry, side="left"))
        return j, (starts[j] if j < units else math.inf)

    def recover(self, pending: np.ndarray, at: float) -> Outcome:
        """After the attempt's failures (``pending``), noticed at ``at``: the next layout."""
        N, order, S, act = self.N, self.order, self.S, self.active
        flagged = pending[act]
        survivors = act[~flagged]
        covered = np.zeros(N, dtype=bool)
        covered[order[survivors, :S]] = True
        if covered.all():  # the survivors' top S stacks still cover every type
            self.run.start_repairs(act[flagged], at)
            self.active = survivors
            return "done"
        out = np.ones(N, dtype=bool)
        out[survivors] = False
        failed = np.flatnonzero(out)
        try:
            plan = self.reorder(failed, order)
        except WipedOut:
            return "wiped"
        self.run.start_repairs(act[flagged], at)
        new_S = plan.stacks
        new_order = plan.order.copy()
        new_order[failed] = order[failed]  # keep full rows: failed workers stay out
        changed = new_order[survivors, :new_S] != order[survivors, :new_S]
        first = np.where(changed.any(axis=1), changed.argmax(axis=1), -1)
        row_changed = (new_order[survivors] != order[survivors]).any(axis=1)
        self.lo[:] = 0
        self.hi[:] = 0
        rec_lo = np.where(first >= 0, first, new_S)
        grow = (~row_changed) & (new_S > S)
        rec_lo = np.where(grow, S, rec_lo)
        self.lo[survivors] = rec_lo
        self.hi[survivors] = np.where((first >= 0) | grow, rec_lo + 1, rec_lo)
        self.S, self.order = new_S, new_order
        self.active = survivors
        return "retry"


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


class _Pieces:
    """Micro-batches: ``m`` pieces a shard routed over the holders of its type (``m > 1``)."""

    def __init__(self, run: StepRun, r: int) -> None:
        sc = run.sc
        self.run, self.N, self.m = run, run.N, sc.microbatches
        self.hosts = cyclic_placement(self.N, r)
        self.flat = self.hosts.ravel()
        self.piece = sc.stack_seconds / self.m
        # Work-additive jitter: w shard units take Normal(c w, (c v)^2 w) seconds.
        self.piece_sd = sc.stack_seconds * sc.stack_jitter_cv / math.sqrt(self.m)
        self.alive = np.ones(self.N, dtype=bool)
        self.reset()

    def reset(self) -> None:
        """Every worker back, the placement's own routing (after a global restart)."""
        self.controller = ReorderingController(self.hosts, microbatches=self.m)
        self.flow = self.controller.pieces  # flow[t, j]: pieces of type t on group hosts[t, j]
        self.alive[:] = True

    @property
    def active(self) -> np.ndarray:
        """Active workers, in increasing id."""
        return np.flatnonzero(self.alive)

    def start_step(self) -> bool:
        """Lay out the first attempt of a step (no repairs: nobody rejoins)."""
        self.todo = self.flow.copy()  # pieces to compute in this attempt
        self.done = np.zeros_like(self.flow)  # pieces computed in earlier attempts of this step
        return False

    def attempt(self, t: float, pending: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(workers, finish times, pieces)`` of the attempt's busy workers from ``t``."""
        count = np.bincount(self.flat, weights=self.todo.ravel(), minlength=self.N)
        count = count.astype(np.int64)
        workers = np.flatnonzero((count > 0) & self.alive & ~pending)
        if not workers.size:
            return workers, np.empty(0), count[workers]
        pieces = count[workers].astype(float)
        z = self.run.rng.standard_normal(workers.size)
        seconds = np.maximum(
            self.piece * pieces + self.piece_sd * np.sqrt(pieces) * z, 0.1 * self.piece * pieces
        )
        self._t, self._gap = t, seconds / pieces  # checks before each piece, evenly spaced
        return workers, t + seconds, count[workers].copy()

    def failed_check(self, pos: int, units: int, expiry: float) -> tuple[int, float]:
        """``(j, time)``: the first check of busy worker ``pos`` at or after ``expiry``."""
        gap = self._gap[pos]
        j = max(math.ceil((expiry - self._t) / gap), 0)
        return j, self._t + j * gap

    def recover(self, pending: np.ndarray, at: float) -> Outcome:
        """After the attempt's failures (``pending``): their pieces are lost, the step retried."""
        del at  # no repairs to start
        hosts, m = self.hosts, self.m
        # A failed worker's pieces of this step are lost (its gradients with it).
        on_failed = pending[hosts]
        self.done = np.where(on_failed, 0, self.done + self.todo)
        lost = (m - self.done.sum(axis=1)).astype(np.int64)
        try:
            for g in np.flatnonzero(pending).tolist():
                self.controller.fail(g)
        except WipedOut:
            return "wiped"
        self.alive &= ~pending
        self.flow = self.controller.pieces
        self.todo = _spread_lost(hosts, self.alive, lost)
        return "retry"


def check_spare_run(scenario: StepScenario, r: int) -> None:
    """Raise ``ValueError`` when :func:`run_spare` cannot simulate ``scenario`` at ``r``.

    A cyclic placement must exist at ``N`` (``N >= r(r-1) + 1``, the error
    names ``N``), and micro-batches are not simulated with repairs (a
    rejoining group's pieces are not modelled).

    Parameters
    ----------
    scenario : StepScenario
        The scenario to simulate.
    r : int
        Redundancy, ``>= 1``.

    Raises
    ------
    ValueError
        As above.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> check_spare_run(paper_scenario(13), 4)
    >>> check_spare_run(paper_scenario(13), 5)
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    cyclic_placement(scenario.groups, r)  # raises ValueError when no placement exists
    if scenario.microbatches > 1 and scenario.repairs:
        raise ValueError(
            "microbatches > 1 with repairs is not simulated (a rejoining group's "
            "pieces are not modelled); set microbatches=1 or repair_seconds=None"
        )


def run_spare(
    scenario: StepScenario,
    r: int,
    k: int,
    rng: np.random.Generator,
    *,
    repairs: RepairTimes | None = None,
    clocks: Any = None,
    max_seconds: float = math.inf,
) -> tuple[float, ...]:
    """One simulated run of SPARe at redundancy ``r``, a checkpoint every ``k`` steps.

    Whole shards when ``scenario.microbatches == 1``, micro-batches
    otherwise (module docstring).

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law.
    r : int
        Redundancy, ``2 <= r`` with a cyclic placement at ``N`` (no other
        checks; ``r = 1`` is CKPT-only: :func:`spare_theory.steps.rep_run.run_rep`).
    k : int
        Checkpoint interval, steps, ``>= 1``.
    rng : numpy.random.Generator
        The run's failure and jitter stream.
    repairs : RepairTimes, optional
        Repairs of removed workers (their own stream); whole shards only.
    clocks : optional
        The workers' failure clocks (a replayed log's); default the law's.
    max_seconds : float
        Horizon: a run still unfinished when a global restart ends after it
        stops there (:class:`~spare_theory.steps.runs.StepRun`).

    Returns
    -------
    tuple
        ``(total seconds, up seconds, failures, global restarts, recomputed
        stacks or pieces, 0.0)`` (:data:`spare_theory.steps.runs.RUN_FIELDS`),
        then the wall time by cause
        (:data:`~spare_theory.steps.runs.BREAKDOWN_FIELDS`).

    Raises
    ------
    ValueError
        As :func:`check_spare_run`.

    Examples
    --------
    >>> from scipy import stats
    >>> from spare_theory.steps.scenario import StepScenario
    >>> sc = StepScenario(groups=7, steps=20, allreduce_seconds=1.0, stack_jitter_cv=0.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> out = run_spare(sc, 3, 10, np.random.default_rng(0))
    >>> out[:6]
    (1417.6, 1417.6, 0, 0, 0, 0.0)
    >>> from spare_theory.steps.runs import BREAKDOWN_FIELDS
    >>> {name: round(x, 6) for name, x in zip(BREAKDOWN_FIELDS, out[6:]) if round(x, 6)}
    {'useful_seconds': 1300.0, 'checkpoint_save_seconds': 117.6}
    """
    check_spare_run(scenario, r)
    sc = scenario
    run = StepRun(sc, rng, repairs, clocks, max_seconds=max_seconds)
    N, nxt = run.N, run.clocks.next
    work: _Stacks | _Pieces = _Pieces(run, r) if sc.microbatches > 1 else _Stacks(run, r)
    leader, pending_leader = 0, False
    step, last_ckpt = 0, 0
    while step < sc.steps:
        if work.start_step() and not pending_leader:
            leader = int(work.active[0])
        retry = False
        restarted = False
        begin, first = run.t, math.nan  # the step's first attempt: its start and its end
        while True:
            t = run.t
            pending = np.zeros(N, dtype=bool)
            if pending_leader:
                pending[leader] = True
                pending_leader = False
            end = np.full(N, t)
            workers, finish, computed = work.attempt(t, pending)
            if workers.size:
                end[workers] = finish
                horizon = float(finish.max())
                for pos in np.flatnonzero(nxt[workers] <= horizon):
                    w = int(workers[pos])
                    j, at = work.failed_check(int(pos), int(computed[pos]), nxt[w])
                    if j < computed[pos]:  # the check before unit j fails
                        run.fail(w, at)
                        end[w] = at
                        pending[w] = True
                        computed[pos] = j
                if retry:
                    run.recomputed += int(computed.sum())
            T1 = float(end.max())
            # All-reduce check of every active worker that has not failed yet.
            act = work.active
            pending[run.check(act[~pending[act]], T1)] = True
            if not pending.any():
                run.t = T1 + sc.allreduce_seconds
                if not retry:
                    first = run.t
                break
            T2 = T1 + sc.allreduce_seconds * sc.allreduce_failure_scale
            outcome = work.recover(pending, T2)
            if outcome == "wiped":
                run.t = T2
                run.global_restart()
                restarted = True
                break
            if not retry:
                first = T2
            run.partial_recovery(work.active, T2)
            leader = int(work.active[0])
            if outcome == "done":
                break
            retry = True
        if restarted:
            work.reset()
            leader, pending_leader = 0, False
            step = last_ckpt
            continue
        run.keep_step(step, first - begin)  # retries are wasted progress
        if run.checkpoint_due(step, k):
            if run.fails(leader, run.t):
                pending_leader = True
            else:
                last_ckpt = step
                run.t += sc.checkpoint_seconds  # every worker waits for the write
                run.checkpoint_save_seconds += sc.checkpoint_seconds
        step += 1
    return run.result()
