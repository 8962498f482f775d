"""SPARe's restart cycle table in the published simulator (whole shards or micro-batches).

With ``T`` the wipe-out count (:func:`spare_theory.wipeout.law.wipeout_law`)
the chance of no wipe-out by ``t`` is ``Q(t) = sum_f Binom(f; N, p) P(T > f)``
(``p(t)`` as in :mod:`spare_theory.steps.cycles`); in state ``f`` the level
is ``S_f = expected_stacks(N, r, f)`` (it only grows in a cycle) and the
attempt ``tau_f = c (S_f + v sqrt(S_f) e_{N-f}) + a`` on ``N - f`` workers.

A failure that leaves the survivors' top ``S`` stacks covering every type
costs a partial recovery; otherwise the step is retried.  A retry
recomputes one stack per changed worker (all survivors when ``S`` grows):
``c (1 + v e_m) + a``.  Its probability per failure is a mean-field
coverage law: ``S n`` prefix slots on ``n = N - f`` survivors hold
``s = 2N - S n`` singly covered types (multiplicities at most 2), spread
uniformly, so ``P_retry = 1 - (1 - s/(S n))^S``, per failure
``(1 - e^{-mu P})/mu``; ``m = S q / P`` orphans (``q = s/(S n)``).  At
``S = r`` the prefix is the whole stack and an uncovered type is a
wipe-out: no retry.  The burst at the resume costs one more attempt with a
failure and a retry on every survivor (``S`` grows from 1) unless it wipes
out.  Every worker waits for a checkpoint.

With ``m > 1`` micro-batches a step costs the largest worker load instead
of ``S_f`` whole stacks and every failure costs a retry (see
:class:`SpareStates`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._caching import cached
from ..stacking.load import expected_load
from ..stacking.overhead import expected_stacks
from ..wipeout.law import wipeout_law
from .cycles import (
    CYCLE_POINTS,
    StepCycle,
    cycle_bound_seconds,
    first_failure_grid,
    rep_step_cycle,
    time_to_failure_share,
)
from .extremes import expected_max_two_classes, tabulated_max_normal
from .restarts import restart_windows
from .scenario import StepScenario

__all__ = ["SpareStates", "spare_step_cycle"]

# Rows of the SPARe cycle table summed at once.
_BLOCK_ROWS = 64


def _split_costs(sc: StepScenario, r: int, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(tau_f, retry_f)``: SPARe's attempt and retry seconds in state ``f`` with ``m`` pieces.

    **Attempt.**  The ``n = N - f`` survivors compute ``m N`` pieces at most
    ``L`` shard units a worker (the model's load
    :func:`spare_theory.stacking.load.expected_load`, at least the
    counting bound ``P/m``, ``P = ceil(m N / n)``); the spread is that of the
    balanced bound, ``n_hi = m N - n (P - 1)`` workers at ``P`` pieces and
    the rest one fewer, and the load's excess over the bound shifts the mean.
    Work-additive jitter (``w`` shard units last ``Normal(c w, (c v)^2 w)``),
    so with ``s = c v sqrt(L)``
    ``tau_f = c L + s E[max(n_hi Z, n_lo (rho Z - delta))] + a`` where
    ``delta = (c/m)/s`` and ``rho = sqrt(1 - 1/P)``.

    **Retry.**  A failed worker's pieces of the step are lost: every noticed
    failure without a wipe-out costs a retry.  Its ``m`` pieces of its own
    type go, water-filled, to the ``A = (r - 1) n / N`` surviving holders of
    that type: ``q = ceil(m / A)`` pieces on ``k = m - A (q - 1)`` of them,
    ``retry_f = c q/m + c v sqrt(q/m) e_k + a``.
    """
    N, m = sc.groups, sc.microbatches
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    n = (N - f).astype(float)
    L = np.asarray(expected_load(N, r, f, microbatches=m), dtype=float)
    # The classes of the counting bound: P = ceil(m N / n) pieces on n_hi workers.
    cap = np.ceil(m * N / n)
    n_hi = m * N - n * (cap - 1.0)
    n_lo = n - n_hi
    s = c * v * np.sqrt(L)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(s > 0, (c / m) / s, np.inf)
    delta = np.minimum(delta, 40.0)  # beyond, the lower class never holds the maximum
    ratio = np.sqrt(np.maximum(cap - 1.0, 1.0) / cap)
    keys = np.stack([n_hi, n_lo, delta, ratio], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    e = expected_max_two_classes(*uniq.T)[inverse.ravel()]
    tau_f = c * L + s * e + a
    holders = np.maximum((r - 1) * n / N, 1.0)
    q = np.ceil(m / holders)
    k = np.clip(m - holders * (q - 1.0), 1.0, None)
    retry = c * q / m + c * v * np.sqrt(q / m) * tabulated_max_normal(N, np.minimum(k, N)) + a
    return tau_f, retry


class SpareStates:
    """SPARe's per-state quantities for ``f = 0 .. f_end + 1`` failed workers.

    Parameters
    ----------
    sc : StepScenario
        The workload and failure law (``microbatches`` honoured).
    r : int
        Redundancy, ``>= 2`` with a cyclic placement at ``N`` (no checks).

    Attributes
    ----------
    f : numpy.ndarray
        Failed workers.
    f_end : int
        Last state before a sure wipe-out (the wipe-out law's tail end).
    log_sf : numpy.ndarray
        ``log P(T > f)`` (``-inf`` beyond ``f_end``).
    stacks : numpy.ndarray
        ``S_f``, expected stacks per worker.
    workers : numpy.ndarray
        ``n = N - f``.
    tau : numpy.ndarray
        ``tau_f``, the attempt, seconds.
    p_retry : numpy.ndarray
        Chance that a non-wiping failure out of ``f`` needs a retry.
    retry_cost : numpy.ndarray
        Seconds of a retry out of ``f``.
    levelup : numpy.ndarray
        Seconds of the retry after the resume burst (``S`` grows from 1; with
        micro-batches the burst's lost pieces).

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> st = SpareStates(paper_scenario(200), 9)
    >>> int(st.f[0]), float(st.stacks[0]), float(st.p_retry[0])  # at S = 1 a failure retries
    (0, 1.0, 1.0)
    """

    def __init__(self, sc: StepScenario, r: int) -> None:
        N = sc.groups
        c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
        wl = wipeout_law(N, r)
        f_end = min(wl.tail_end(-40.0), N - math.ceil(N / r))
        f = np.arange(f_end + 2)
        log_sf = np.asarray(wl.logsf(f), dtype=float)
        log_sf[f > f_end] = -np.inf
        S = np.asarray(expected_stacks(N, r, np.minimum(f, f_end)), dtype=float)
        n = (N - f).astype(float)
        tau_f = c * (S + v * np.sqrt(S) * tabulated_max_normal(N, np.maximum(n, 1))) + a
        # Retry after a non-wiping failure in state f (it moves to f + 1).
        S_next = np.append(S[1:], S[-1])
        slots = S * n
        q = np.clip((2.0 * N - slots) / slots, 0.0, 1.0)  # share of prefix slots singly covered
        p_retry = np.where(S_next > S, 1.0, -np.expm1(S * np.log1p(-np.minimum(q, 1 - 1e-16))))
        # At S = r the prefix is the whole stack: an uncovered type is a wipe-out, never a retry.
        p_retry = np.where((S_next <= S) & (r <= S), 0.0, p_retry)
        orphans = np.where(S_next > S, n - 1, np.maximum(S * q / np.maximum(p_retry, 1e-300), 1.0))
        retry_cost = c * (1.0 + v * tabulated_max_normal(N, np.maximum(orphans, 1.0))) + a
        levelup = c * (1.0 + v * tabulated_max_normal(N, np.maximum(n, 1.0))) + a
        if sc.microbatches > 1:
            # Loads instead of whole stacks; every failure loses the worker's pieces: a retry.
            tau_f, retry_cost = _split_costs(sc, r, np.minimum(f, f_end))
            p_retry = np.ones(f.size)
            levelup = retry_cost  # the burst's lost pieces, spread over their holders
        self.f, self.f_end, self.log_sf, self.stacks, self.workers = f, f_end, log_sf, S, n
        self.tau, self.p_retry, self.retry_cost, self.levelup = tau_f, p_retry, retry_cost, levelup

    def log_binomial(self, N: int) -> np.ndarray:
        """``log C(N, f)`` per state."""
        f = self.f
        return special.gammaln(N + 1) - special.gammaln(f + 1) - special.gammaln(N - f + 1)


@cached(maxsize=256)
def spare_step_cycle(scenario: StepScenario, r: int) -> StepCycle:
    """SPARe's cycle table at redundancy ``r``, cached by value.

    ``Q(t)``, attempts, retries and partial recoveries of the module
    docstring, mixed over the resume burst's classes; ``r = 1`` is plain
    checkpointing (:func:`~spare_theory.steps.cycles.rep_step_cycle` at 1).
    No argument checks (a cyclic placement must exist at ``N`` for
    ``r >= 2``).  Repairs are ignored
    (:func:`spare_theory.steps.repairs.spare_repair_step_cycle`).

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law (``microbatches`` honoured).
    r : int
        Redundancy.

    Returns
    -------
    StepCycle

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> cyc = spare_step_cycle(paper_scenario(200), 9)
    >>> print(round(cyc.tau0, 1), round(cyc.ckpt, 1), cyc.burst_handling > 0)
    74.8 58.8 True
    """
    if r == 1:  # CKPT-only's cycle, but SPARe's rules make every worker wait for the write
        return rep_step_cycle(scenario, 1, overlapped_write=False)
    sc = scenario
    N, law = sc.groups, sc.failure_law
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    st = SpareStates(sc, r)
    f, f_end, n, tau_f = st.f, st.f_end, st.workers, st.tau
    # Grid in time up to where Q < e^-30 (the binomial mass passes f_end).
    p_end = min((f_end + 12.0 * math.sqrt(f_end + 1.0) + 10.0) / N, 1.0 - 1e-9)
    pis = restart_windows(sc).burst
    burst = float(pis.mean())
    p_end = max(p_end, min(float(pis.max()) + 1e-6, 1.0 - 1e-9))
    age = sc.clock_age_seconds
    t_end = time_to_failure_share(law, p_end, float(pis.max()), age)
    t = np.linspace(0.0, min(t_end, cycle_bound_seconds(sc, r)), CYCLE_POINTS)
    p_nodes, hz = first_failure_grid(law, t, pis, age)
    log_binom = st.log_binomial(N)
    # log of the failure-count law at t: a mixture over the burst classes.
    sf = np.exp(st.log_sf)  # P(T > f), 0 beyond f_end
    part_cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a
    out = np.empty((6, t.size))
    # Row blocks, each summed over the band of f where some class's binomial
    # weight exceeds e^-72 relative (12 standard deviations and 10 failures).
    mean = N * p_nodes
    spread = 12.0 * np.sqrt(N * p_nodes * (1 - p_nodes)) + 10.0
    for i in range(0, t.size, _BLOCK_ROWS):
        rows = slice(i, i + _BLOCK_ROWS)
        lo = int(max(np.floor((mean[:, rows] - spread[:, rows]).min()), 0))
        hi = int(min(np.ceil((mean[:, rows] + spread[:, rows]).max()), f_end) + 1)
        lo = min(lo, hi - 1)  # past the support: Q is negligible there anyway
        fb = f[lo:hi]
        logs = []
        for p in p_nodes[:, rows]:
            log_p = np.log(np.maximum(p, 1e-300))[:, None]
            log_1mp = np.log1p(-np.minimum(p, 1 - 1e-16))[:, None]
            logs.append(
                log_binom[None, lo:hi]
                + np.where(fb[None, :] > 0, fb[None, :] * log_p, 0.0)
                + (N - fb)[None, :] * log_1mp
            )
        top = np.max([x.max(axis=1) for x in logs], axis=0)
        mix = sum(np.exp(x - top[:, None]) for x in logs) / len(logs)
        w = mix * sf[None, lo:hi]
        total = w.sum(axis=1)
        # A non-wiping failure out of state f: P(T > f + 1) instead of P(T > f).
        w_next = mix * sf[None, lo + 1 : hi + 1]
        rate = n[None, lo:hi] * hz[rows, None]
        mu = rate * tau_f[None, lo:hi]
        safe = np.maximum(mu, 1e-300)
        per_attempt = np.where(mu > 1e-12, -np.expm1(-mu) / safe, 1.0)
        pr = st.p_retry[None, lo:hi]
        retries = np.where(mu > 1e-12, -np.expm1(-mu * pr) / safe, pr)
        handling = per_attempt * part_cost + retries * st.retry_cost[None, lo:hi]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[0, rows] = top + np.log(total)
            out[1, rows] = (w / tau_f[None, lo:hi]).sum(axis=1) / total
            out[2, rows] = (w_next * rate * handling).sum(axis=1) / total
            out[3, rows] = (w_next * rate * per_attempt).sum(axis=1) / total
            out[4, rows] = (w * rate).sum(axis=1) / total
            out[5, rows] = (w * fb[None, :]).sum(axis=1) / total
    log_q, inv_tau, phi, partial, noticed, failed = out
    # The burst at the resume: the failure-count law at t = 0.
    w0 = np.zeros(f.size)
    for p in p_nodes[:, 0]:
        w0 += np.exp(
            log_binom
            + np.where(f > 0, f * math.log(max(p, 1e-300)), 0.0)
            + (N - f) * math.log1p(-p)
        )
    w0 = w0 / p_nodes.shape[0] * sf
    tau0 = float(c * (1.0 + v * tabulated_max_normal(N, N)) + a)
    # The failures noticed at the resume: one attempt with a failure, a retry
    # on every survivor (S grows from 1) unless they wipe out.
    burst_cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a + st.levelup
    burst_handling = float((w0[1:] * burst_cost[1:]).sum())
    return StepCycle(
        t=t,
        log_q=np.minimum(log_q, 0.0),
        tau=1.0 / inv_tau,
        phi=np.clip(phi, -1.0, 0.95),
        partial=partial,
        noticed=noticed,
        failed=failed,
        post=np.full(t.size, a),
        tau0=tau0,
        ckpt=sc.checkpoint_seconds,
        useful=c + a,
        burst_handling=burst_handling,
        burst_failures=N * burst,
    )
