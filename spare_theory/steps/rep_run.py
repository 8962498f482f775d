"""Rep's rules in the step-level event simulation (CKPT-only is Rep with ``r = 1``).

Each worker computes ``r`` times the work in one compute of
``r * stack_seconds * max(0.1, Normal(1, cv))`` (one jitter draw), checking
its clock before the compute and again at its own end of compute (the
all-reduce check).  Replica sets are consecutive ids (``id // r``); a failed
step is done after a partial recovery while every set keeps a survivor, and
is a global restart otherwise.  Only the leader writes a checkpoint; the
other workers start the next step at once and wait for it at the
all-reduce.  With ``published=True`` two quirks of the published binary are
kept: the controller acts on the lowest failed id of a step only (it stops
reading failure flags at the first set one, so the other workers that failed
in the step stay active, compute nothing, are flagged again in each later
step until removed, their clocks expiring meanwhile renewed but not
counted, and count as survivors in the replica-set test), and the
checkpoint is taken by the leader the step started with.  Without the
first, counted failures at ``r = 9``, ``N = 200`` come out 23 % above the
published ones.  Repaired workers take back their place in their replica
sets at a step boundary.  Shared machinery: :mod:`spare_theory.steps.runs`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..placement.replicas import replica_sets
from .runs import RepairTimes, StepRun
from .scenario import StepScenario

__all__ = ["REP_RECOVERIES", "run_rep"]


#: Rep recovery semantics of the step-level simulation (``simulate_training(rep_recovery=...)``).
REP_RECOVERIES = ("published", "all")


def run_rep(
    scenario: StepScenario,
    r: int,
    k: int,
    rng: np.random.Generator,
    *,
    published: bool = True,
    repairs: RepairTimes | None = None,
    clocks: Any = None,
    max_seconds: float = math.inf,
) -> tuple[float, ...]:
    """One simulated run of Rep with ``r`` replicas per set, a checkpoint every ``k`` steps.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law (``microbatches`` is ignored: Rep
        does not split).
    r : int
        Replicas per set, ``1 <= r <= N`` (no checks; 1 is CKPT-only).
    k : int
        Checkpoint interval, steps, ``>= 1``.
    rng : numpy.random.Generator
        The run's failure and jitter stream.
    published : bool
        Keep the published controller's two quirks (module docstring).
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
        ``(total seconds, up seconds, failures, global restarts, 0, 0.0)``
        (:data:`spare_theory.steps.runs.RUN_FIELDS`), then the wall time by
        cause (:data:`~spare_theory.steps.runs.BREAKDOWN_FIELDS`).

    Examples
    --------
    >>> from scipy import stats
    >>> from spare_theory.steps.scenario import StepScenario
    >>> sc = StepScenario(groups=6, steps=20, allreduce_seconds=1.0, stack_jitter_cv=0.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> out = run_rep(sc, 2, 10, np.random.default_rng(0))
    >>> [round(x, 6) for x in out[:6]]
    [2697.6, 2697.6, 0, 0, 0, 0.0]

    Each step computes twice its useful stack; the first checkpoint's write
    delays the step after it, the last one the end:

    >>> from spare_theory.steps.runs import BREAKDOWN_FIELDS
    >>> {name: round(x, 6) for name, x in zip(BREAKDOWN_FIELDS, out[6:]) if round(x, 6)}
    ... # doctest: +NORMALIZE_WHITESPACE
    {'useful_seconds': 1300.0, 'checkpoint_save_seconds': 117.6,
     'redundant_compute_seconds': 1280.0}
    """
    sc = scenario
    run = StepRun(sc, rng, repairs, clocks, max_seconds=max_seconds)
    N, clocks = run.N, run.clocks
    nxt = clocks.next
    sets = replica_sets(N, r, layout="consecutive")
    n_sets = int(sets[-1]) + 1
    compute_seconds = r * sc.stack_seconds
    active = np.ones(N, dtype=bool)
    # Active workers whose failure is noticed but not yet acted on: they compute
    # nothing and are flagged again in every attempt until removed.
    pending = np.zeros(N, dtype=bool)
    writer = -1  # the worker still writing the last checkpoint at the next step's start
    step, last_ckpt = 0, 0
    while step < sc.steps:
        back = run.rejoin()
        if back.size:  # repaired workers take back their place in their replica sets
            active[back] = True
            pending[back] = False
        t = run.t
        leader = int(np.argmax(active))  # the lowest active id
        start = np.full(N, t)
        wrote, writer = writer, -1
        if wrote >= 0:
            start[wrote] += sc.checkpoint_seconds
        finish = start.copy()
        computing = active & ~pending
        finish[computing] += compute_seconds * run.jitter((int(computing.sum()),))
        # Clock checks before the compute and, at its own end, the all-reduce.
        for w in np.flatnonzero(active & (nxt <= finish)).tolist():
            if pending[w]:
                clocks.renew(w, start[w])  # consumed, not counted (already failed)
            elif run.fails(w, start[w]):
                finish[w] = start[w]
                pending[w] = True
            else:
                run.fail(w, finish[w])
                pending[w] = True
        T1 = float(finish.max())
        # The write's cost: how much later the attempt ends than had the writer started at once.
        T1_now = T1
        if wrote >= 0:
            finish[wrote] -= sc.checkpoint_seconds
            T1_now = float(finish.max())
            run.checkpoint_save_seconds += T1 - T1_now
        if not pending.any():
            run.t = T1 + sc.allreduce_seconds
            run.keep_step(step, T1_now - t + sc.allreduce_seconds)
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
                run.start_repairs(np.flatnonzero(active & removed), T2)
                active = survivors
                pending &= active
                run.keep_step(step, T2 - (T1 - T1_now) - t)
                run.partial_recovery(active, T2)
            else:
                run.t = T2
                run.global_restart()
                active[:] = True
                pending[:] = False
                step = last_ckpt
                continue
        if run.checkpoint_due(step, k):
            # The published binary lets the step's starting leader write; else the current one.
            checker = leader if published else int(np.argmax(active))
            if run.fails(checker, run.t):
                pending[checker] = bool(active[checker])
            else:
                last_ckpt = step
                writer = checker  # the others start the next step at once
                if step + 1 == sc.steps:
                    run.t += sc.checkpoint_seconds  # the final barrier waits for the write
                    run.checkpoint_save_seconds += sc.checkpoint_seconds
        step += 1
    return run.result()
