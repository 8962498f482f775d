"""The run's two ends in the step-level estimate: a fresh first cycle, a last one cut by the work.

Renewal reward (:func:`~spare_theory.steps.estimate.estimate_steps`) prices a
run of ``J`` checkpoint intervals as ``J / E[X]`` whole cycles, ``E[X]`` the
intervals a cycle keeps.  That is exact as ``J`` grows, but off by about a
cycle's waste on a run of a few cycles: the last cycle ends when the work is
done, with no wipe-out, rollback or restart, and it keeps exactly the
intervals left, not ``E[X]``; on a cycle whose hazard grows (an elastic job
wiped out at its ``K``-th failure) the cycle that reaches the end has
survived long and is nearer its own end than a fresh one.  The first cycle
starts fresh: no resume burst and no redone, re-checkpointed step.

**The last cycle.**  Let ``s_j`` be the probability that a cycle keeps its
``j``-th checkpoint (``s_0 = 1``), ``U_j = E[min(wipe-out, c_j)]`` its
expected time until the wipe-out or that checkpoint's completion ``c_j``,
and ``w`` a wipe-out's cost beyond the cycle (the restart ``E[D]`` and the
detection remainder).  A cycle started with ``j`` intervals left either keeps
them all (the run ends at ``c_j``) or keeps exactly ``i < j``, with
probability ``pi_i = s_i - s_{i+1}``, and starts over with ``j - i`` left:

    T(j) = U_j + (1 - s_j) w + sum_{i=0}^{j-1} pi_i T(j - i),

solved forward in ``j`` (``pi_0`` moves to the left: divide by ``s_1``),
and likewise the restarts ``R(j)`` with ``1 - s_j`` in place of the cost.
``T(j) / j`` tends to renewal reward's ``E[C] / E[X]``: past
:data:`RENEWAL_CYCLES` cycles' worth of intervals the rest is priced at that
rate.  The recursion is an all-pole filter (``scipy.signal.lfilter``); a cycle
keeping more than :data:`BLOCK_CYCLE` intervals is solved in blocks of them
(a block kept with its intervals' mean chance).  A fractional ``J`` (a last
interval shorter than ``k`` steps, or an elastic job's mean work per interval)
interpolates between its neighbours.

**The first cycle** starts fresh: no failure waits at its start, so it is
the resumed cycle given no wipe-out at the resume (``q0`` =
``resume_survival``): ``s'_j = s_j / q0``, ``U'_j = U_j / q0``, and

    T_first(J) = U'_J + (1 - s'_J) w + sum_{i=0}^{J-1} pi'_i T(J - i),

a convolution of the resumed cycles' solve.  The resume's redone step, its
checkpoint and the burst's handling (``t0`` of the estimate) are the
caller's to take off.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

__all__ = ["BLOCK_CYCLE", "RENEWAL_CYCLES", "finite_run"]

#: Cycles' worth of intervals solved exactly; beyond, renewal reward's rate (the
#: transient of the first-passage equation has died out well before: tested).
RENEWAL_CYCLES = 8
#: Intervals a cycle keeps, at most, in the solve: longer cycles are solved in blocks of
#: intervals (within 0.2 % of the exact solve on Weibull-shaped cycles: tested).
BLOCK_CYCLE = 100


def finite_run(
    kept: np.ndarray,
    until_seconds: np.ndarray,
    cycle_seconds: float,
    wipeout_seconds: float,
    wiped: float,
    intervals: float,
    *,
    resume_survival: float = 1.0,
) -> tuple[float, float]:
    """``(seconds, restarts)`` of a run of ``intervals`` checkpoint intervals (module docstring).

    Parameters
    ----------
    kept : numpy.ndarray
        ``s_j``, ``j = 1, ...``: a cycle keeps its ``j``-th checkpoint
        (non-increasing; beyond the array none is kept).
    until_seconds : numpy.ndarray
        ``U_j``, seconds: a cycle's expected time until its wipe-out or
        checkpoint ``j``'s completion, whichever is first (same length).
    cycle_seconds : float
        A whole cycle's expected time, its wipe-out's cost included, seconds:
        renewal reward's ``E[C]``, the cost of a cycle that keeps
        ``len(kept)`` checkpoints or fewer.
    wipeout_seconds : float
        ``w``: a wipe-out's cost beyond the cycle's own time, seconds.
    wiped : float
        The share of whole cycles that end in a wipe-out (renewal reward's).
    intervals : float
        ``J > 0``: the run's checkpoint intervals.
    resume_survival : float, optional
        ``q0`` in ``(0, 1]``: the chance a resume is not wiped out at once (by
        its burst of failures).  The first cycle is the resumed one given that.

    Returns
    -------
    tuple of float
        Expected seconds and restarts (wipe-outs) of the run; the first
        cycle's saved redone step is the caller's.

    Examples
    --------
    A memoryless cycle (a wipe-out at rate 1 per interval, nothing else to
    pay) needs ``J / E[X]`` cycles, and renewal reward is exact for it:

    >>> j = np.arange(1, 200)
    >>> s = np.exp(-j * 0.5)  # each interval survives with e^-0.5
    >>> U = (1 - np.exp(-0.5 * j)) / 0.5  # E[min(Exp(0.5), j)]
    >>> seconds, restarts = finite_run(s, U, 1 / 0.5, 0.0, 1.0, 40.0)
    >>> rate = (1 / 0.5) / s.sum()
    >>> print(round(seconds / (40 * rate), 3))
    1.0
    """
    s = np.asarray(kept, dtype=np.float64)
    U = np.asarray(until_seconds, dtype=np.float64)
    J = float(intervals)
    q0 = float(resume_survival)
    if not (s.size and s[0] > 0 and J > 0):
        raise ValueError("finite_run: the first checkpoint must be kept with some chance")
    if not 0.0 < q0 <= 1.0:
        raise ValueError(f"resume_survival must be in (0, 1], got {resume_survival!r}")
    # Blocks of b intervals keep the solve small on long cycles: a block is kept with
    # its intervals' mean chance (the same kept work), and ends where its last does.
    b = max(1, math.ceil(float(s.sum()) / BLOCK_CYCLE))
    pad = -s.size % b
    s = np.concatenate([s, np.zeros(pad)]).reshape(-1, b).mean(axis=1)
    U = np.concatenate([U, np.full(pad, U[-1])])[b - 1 :: b]
    x = J / b
    n = min(math.ceil(x), math.ceil(RENEWAL_CYCLES * float(s.sum())) + 1)
    m = min(n, s.size)
    s_j = np.zeros(n + 1)  # s_j, j = 0..n (none kept beyond the array)
    s_j[0], s_j[1 : m + 1] = 1.0, s[:m]
    # Beyond the array a cycle is surely wiped out: its whole time and its wipe-out.
    until = np.full(n + 1, cycle_seconds - wiped * wipeout_seconds)
    until[1 : m + 1] = U[:m]
    cost = until + (1.0 - s_j) * wipeout_seconds
    cost[m + 1 :] = cycle_seconds
    # T(j) s_1 = cost_j + sum_{i=1}^{j-1} pi_i T(j - i): an all-pole filter over j.
    poles = np.concatenate([[s_j[1]], s_j[2:] - s_j[1:-1]])  # s_1, -pi_1, ..., -pi_{n-1}
    # The fresh first cycle: the resumed one given no wipe-out at the resume.
    fresh = np.minimum(s_j / q0, 1.0)
    fresh[0] = 1.0
    fresh_pi = fresh[:-1] - fresh[1:]  # pi'_i, i = 0..n-1
    fresh_cost = until / q0 + (1.0 - fresh) * wipeout_seconds
    # A hopeless plan (a first checkpoint kept with a chance near 1e-308) costs inf, as
    # renewal reward's n / E[P] does.
    with np.errstate(over="ignore", invalid="ignore"):
        T = np.concatenate([[0.0], signal.lfilter([1.0], poles, cost[1:])])
        R = np.concatenate([[0.0], signal.lfilter([1.0], poles, 1.0 - s_j[1:])])
        # sum_{i=0}^{j-1} pi'_i T(j - i): the later cycles after the first.
        T_first = fresh_cost + np.convolve(fresh_pi, T)[: n + 1]
        R_first = 1.0 - fresh + np.convolve(fresh_pi, R)[: n + 1]
        T_first[0] = R_first[0] = 0.0
        if x > n:  # renewal reward's rates beyond
            per_cycle = float(s.sum())
            return (
                float(T_first[n] + (x - n) * cycle_seconds / per_cycle),
                float(R_first[n] + (x - n) * wiped / per_cycle),
            )
        grid = np.arange(n + 1)
        return float(np.interp(x, grid, T_first)), float(np.interp(x, grid, R_first))
