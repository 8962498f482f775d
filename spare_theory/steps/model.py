"""Closed-form (renewal-reward) model of the published step-level simulator.

The SPARe paper's time-to-train and availability figures come from the
authors' discrete-event simulator (public repository tsinghua-fib-lab/AutoSOTA,
folder ``ICML-2026/paper-3612-SPARe/best_code``, BSD), whose workload is
counted in synchronous steps (:class:`~spare_theory.steps.scenario.StepScenario`).
:func:`step_time_to_train` predicts its expected wall time, uptime, restarts
and failures from the semantics of that simulator, without simulating; the
event simulation :func:`spare_theory.steps.simulation.simulate_steps` is the
independent check.  Derivation: ``docs/step_model.md``.

Notation (all times in seconds)
-------------------------------
``N`` workers, ``n`` steps, stack ``c`` (64 s) with jitter cv ``v`` (0.05),
all-reduce ``a``, checkpoint ``delta`` every ``k`` steps, restart ``R``,
partial recovery ``pr`` (0.1 s), all-reduce factor ``s_a`` (0.5) in an
attempt with a noticed failure; a worker's lifetime law has mean ``m`` and
survival ``sf``; ``lambda = 1/m``.

1. Extreme-value step time.  ``e_n = E[max of n iid Normal(0, 1)]`` by
   quadrature, ``e_n = int_0^inf (1 - Phi^n) dz - int_-inf^0 Phi^n dz``.
   SPARe, ``S`` stacks on ``n`` active workers, each stack
   ``c max(0.1, Normal(1, v))`` drawn per stack and worker: the sum of ``S``
   is ``Normal(c S, (c v)^2 S)``, so ``tau_S = c (S + v sqrt(S) e_n) + a``.
   Rep draws one jitter for its ``r``-fold compute:
   ``tau = c r (1 + v e_n) + a``.  Truncation at 0.1 is 18 standard
   deviations away and ignored.
2. Restart windows (``restart_semantics="window"``).  A worker's restart
   ends after an uninterrupted window of ``R``; its completion time ``W``
   satisfies ``P(W > t) = 1`` for ``t < R`` and, for ``t >= R``,
   ``G(t) = int_0^R dF(x) G_fresh(t - x)`` where ``F`` is the law of its
   first failure in the window: the fresh law for the worker that just
   failed and the equilibrium (residual-life) law
   ``F_e(x) = int_0^x sf / m`` for the others (clocks are never reset);
   after a failure the clock is fresh (``G_fresh`` solves the same renewal
   equation with ``F = 1 - sf``).  Solved by the trapezoid rule on a grid of
   ``R/400`` (second order: the jump of ``G`` at ``R`` is taken with its
   left limit); ``E[D] = int_0^inf [1 - (1 - G_e)^(N-1) (1 - G_fresh)] dt``
   (the restart waits for the slowest worker), with an exponential tail
   beyond the grid.  Exponential law: ``G_e = G_fresh`` and
   ``E[W] = (e^{lambda R} - 1)/lambda``.  ``"fixed"``: ``E[D] = R``.
3. Cycles.  A cycle is a restart plus the computation until the wipe-out is
   detected.  ``t`` counts time from the resume; each worker's first failure
   has law ``p(t) = F_e(t)`` (equilibrium clocks; exact for the exponential
   law, an approximation for Weibull), independently.

   - SPARe: with ``T`` the wipe-out count
     (:func:`spare_theory.wipeout.law.wipeout_law`), the chance of no wipe-out
     by ``t`` is ``Q(t) = sum_f Binom(f; N, p) P(T > f)``; in state ``f``
     the level is ``S_f = expected_stacks(N, r, f)`` (it only grows in a
     cycle), the attempt ``tau_f = tau_{S_f}`` on ``N - f`` workers.
   - Rep: consecutive replica sets ``id // r`` (the last one smaller),
     ``Q(t) = prod_sets (1 - p^{|set|})``, except that the published
     controller removes only the lowest flagged id per step: the flagged
     rest compute nothing, count as survivors and wait.  Fluid model: the
     removed count ``Rm`` grows by one per step while ``Rm < F = N p``, the
     removed workers are the failed ones below an id threshold
     ``x = Rm / p``, and only sets below ``x`` can be seen wiped out.
   - CKPT-only: Rep with ``r = 1`` (``Q = (1 - p)^N``).
   - The resume burst: a worker that completed its restart window waits
     ``D - W`` for the slowest one; a failure meanwhile is noticed only at
     the first check after the resume.  Given ``D`` each worker has failed
     at ``t = 0`` with ``pi(D) = E[F_e(D - W) | W <= D]``, so
     ``p(t) = pi + (1 - pi) F_e(t)``; the burst (about 12 failures at the
     paper's scenario) is over-dispersed, so every cycle table is a mixture
     over 5 equal-probability classes of ``D``.  ``"fixed"`` restarts have
     none (expired clocks renew silently).
4. Failure handling inside a cycle (failures arrive at ``(N - f) h(t)``,
   ``h`` the hazard of ``F_e``; an attempt of length ``tau`` sees
   ``mu = (N - f) h tau`` of them, Poisson).  Per noticed failure:
   ``(1 - e^{-mu})/mu`` attempts with a failure, each costing
   ``pr - (1 - s_a) a``; SPARe retries the step when the survivors' top
   ``S`` stacks no longer cover every type.  A retry recomputes one stack
   per changed worker (all survivors when ``S`` grows):
   ``c (1 + v e_m) + a``.  Its probability per failure is a mean-field
   coverage law: ``S n`` prefix slots on ``n = N - f`` survivors hold
   ``s = 2N - S n`` singly covered types (multiplicities at most 2), spread
   uniformly, so ``P_retry = 1 - (1 - s/(S n))^S``, per failure
   ``(1 - e^{-mu P})/mu``; ``m = S q / P`` orphans (``q = s/(S n)``).
   At ``S = r`` the prefix is the whole stack and an uncovered type is a
   wipe-out: no retry.  Rep never retries (a failure leaves the step done).
   The burst at the resume costs one more attempt with a failure and a
   retry on every survivor (``S`` grows from 1) unless it wipes out.
5. Checkpoints every ``k`` steps (work based).  SPARe: every worker waits
   ``delta``.  Rep: only the leader writes while the others start the next
   step, so a checkpoint costs ``E[max(delta + C_L, M_{n-1})] - E[M_n]``
   (``C`` a worker's compute, ``M`` maxima), by quadrature.  The leader
   checks its clock first: a failure since its last check (``w_L = b``
   below) loses the checkpoint, probability ``1 - e^{-lambda w_L}``.
6. Progress and rework.  Steps progress at ``(1 - phi)/(tau + delta/k)``
   (``phi`` the share of time in failure handling, ``tau`` the harmonic
   mean attempt given no wipe-out).  After a resume the checkpointed step is
   redone and checkpointed again; checkpoint ``j`` completes at ``c_j``.  A
   failure is noticed at the end of its attempt, or of the next one if it
   falls in the last ``b`` of it (SPARe ``b = a``; Rep ``b = c r v e_n + a``,
   its all-reduce check comes at its own end of compute), so checkpoint
   ``j`` is kept iff the wipe-out failure comes after ``c_j - delta - b``:
   ``E[P] = k sum_j Q(c_j - delta - b)`` steps.  The detection remainder
   ``rho`` (from the failure to the restart) is averaged over a uniform
   phase in the checkpoint period.  ``E[C] = int Q dt + E[rho]``.
7. Renewal reward: ``restarts = n / E[P]``,
   ``total = restarts (E[D] + E[C])``, ``down = restarts (E[D] + pr x
   partial recoveries per cycle)``, ``uptime = 1 - down/total``.  Boundary
   terms (the first cycle has no restart, the last no wipe-out) are
   ignored: ``O(1/restarts)``.  A cycle is followed for at most four runs'
   worth of steps; one that reaches that horizon counts as a renewal
   without a restart (so with no failures the estimate is the jittered
   failure-free run).

8. Repairs (``StepScenario.repair_seconds``; ``docs/step_model.md``
   section 11).  A removed worker rejoins after its repair at the next step
   boundary.  Its out time ``m_out`` (half an attempt, SPARe's retry, the
   repair past the retry, half a step) sets ``mu = m / m_out`` with up
   times at the lifetime's stationary rate; ``Q`` comes from the exact
   chains of Rep's replica sets or :class:`spare_theory.hourly.repairs.RepairCycle`
   (SPARe), started from the resume burst and never below today's ``Q``;
   the attempt and handling laws per state are today's at the down share
   past the retry; each rejoin stalls ``rejoin_seconds``.  Without a stall
   the estimate is never above today's (a repair only shrinks the down set).

Costs: the cycle tables depend on the scenario, strategy and ``r`` only
(cached); an estimate for another ``k`` costs well under a millisecond.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import integrate, signal, special

from .._validation import as_choice, as_count
from ..hourly.repairs import (
    chain_log_survival,
    down_count_generator,
    repair_cycle,
    set_mean_absorption,
)
from ..stacking.load import expected_load
from ..stacking.overhead import expected_stacks
from ..wipeout.law import wipeout_law
from .scenario import StepScenario

__all__ = [
    "STEP_MODEL_STRATEGIES",
    "StepEstimate",
    "expected_max_normal",
    "expected_restart_seconds",
    "expected_step_seconds",
    "step_time_to_train",
]

#: Strategies accepted by :func:`step_time_to_train`.
STEP_MODEL_STRATEGIES = ("ckpt", "rep", "spare")

# Quadrature grid of the standard normal maxima (z in [-10, 12 + shift]).
_Z_STEP = 0.005
# Points of the restart-window grid per restart length R.
_WINDOW_POINTS = 400
# Cycle tables: time points, and log Q below which the cycle is over.
_CYCLE_POINTS = 1000
# Equal-probability classes of the restart length D over which the burst of
# failures noticed at the resume is mixed.
_BURST_NODES = 5
# Rows of the SPARe cycle table summed at once.
_BLOCK_ROWS = 64


# ---------------------------------------------------------------------------
# Extreme values of the jitter
# ---------------------------------------------------------------------------


def _max_normal_shifted(m: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """``E[max(shift + Z_0, Z_1, ..., Z_m)]`` for iid standard normals (``m >= 0`` real).

    The CDF of the maximum is ``F(z) = Phi(z - shift) Phi(z)^m``; its mean is
    ``int_0^inf (1 - F) dz - int_-inf^0 F dz``, each piece by Simpson's rule
    with step 0.005 on a grid that has a node at 0 (``F`` in logs, so that
    ``Phi^m`` stays accurate for ``m`` up to ``1e9``).
    """
    m = np.atleast_1d(np.asarray(m, dtype=float))
    below = np.linspace(-10.0 + min(shift, 0.0), 0.0, 2001 + int(max(-shift, 0.0) / _Z_STEP))
    top = 12.0 + max(shift, 0.0)
    above = np.linspace(0.0, top, 1 + 2 * math.ceil(top / (2 * _Z_STEP)))

    def log_cdf(z: np.ndarray) -> np.ndarray:
        return special.log_ndtr(z - shift)[None, :] + m[:, None] * special.log_ndtr(z)[None, :]

    lower = integrate.simpson(np.exp(log_cdf(below)), x=below, axis=1)
    upper = integrate.simpson(-np.expm1(log_cdf(above)), x=above, axis=1)
    return upper - lower


def expected_max_normal(n: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
    """``e_n = E[max(Z_1, ..., Z_n)]`` for ``n`` iid standard normals (real ``n >= 1``).

    ``e_n = int_0^inf (1 - Phi(z)^n) dz - int_-inf^0 Phi(z)^n dz``, by
    Simpson's rule on ``[-10, 12]`` with step 0.005 (``Phi^n`` in logs);
    absolute error below ``1e-8`` for ``n`` up to ``1e9``.  Non-integer
    ``n`` interpolates smoothly (the formula holds for real ``n``).

    Parameters
    ----------
    n : float or array_like
        Number of normals, ``>= 1``.

    Returns
    -------
    float or numpy.ndarray
        Expected maximum (standard deviations above the mean).

    Examples
    --------
    >>> print(round(expected_max_normal(2), 6), round(expected_max_normal(200), 4))
    0.56419 2.7460
    """
    arr = np.asarray(n, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError(f"n must be finite and >= 1, got {n!r}")
    out = _max_normal_shifted(arr.ravel() - 1.0, 0.0).reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


@functools.lru_cache(maxsize=256)
def _e_table(N: int) -> tuple[np.ndarray, np.ndarray]:
    """``(log n, e_n)`` on a grid over ``[1, N]`` for interpolation in ``log n``.

    ``e_n`` is smooth in ``log n``; 400 geometric points plus every integer up
    to 64 interpolate it to about ``1e-5``.
    """
    n = np.unique(np.concatenate([np.arange(1.0, min(N, 64) + 1), np.geomspace(1.0, N, 400)]))
    return np.log(n), _max_normal_shifted(n - 1.0)


def _e_of(N: int, n) -> np.ndarray:
    """``e_n`` for real ``n`` in ``[1, N]`` (interpolated from :func:`_e_table`)."""
    log_n, e = _e_table(N)
    return np.interp(np.log(np.clip(np.asarray(n, dtype=float), 1.0, N)), log_n, e)


def expected_step_seconds(
    scenario: StepScenario, stacks: npt.ArrayLike, *, workers: npt.ArrayLike | None = None
) -> float | npt.NDArray[np.float64]:
    """Expected failure-free attempt with ``stacks`` jittered stacks per worker, seconds.

    ``tau_S = c (S + v sqrt(S) e_n) + a``: the slowest of ``n`` workers, each
    summing ``S`` stacks of ``c max(0.1, Normal(1, v))`` (the sum is normal
    with mean ``c S`` and sd ``c v sqrt(S)``; the truncation at 0.1 is 18
    standard deviations away), then the all-reduce ``a``.  SPARe's step at
    level ``S``; Rep's single-jitter ``r``-fold compute is ``c r (1 + v e_n) + a``
    (not this function).

    Parameters
    ----------
    scenario : StepScenario
        Supplies ``c = stack_seconds``, ``v = stack_jitter_cv``,
        ``a = allreduce_seconds`` and the default ``n = groups``.
    stacks : int or array_like
        Stacks per worker, ``S >= 1``.
    workers : int or array_like, optional
        Active workers ``n`` (``1 <= n``); default ``scenario.groups``.

    Returns
    -------
    float or numpy.ndarray
        Seconds.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> print(round(expected_step_seconds(paper_scenario(200), 2), 2))
    142.43
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    S = np.asarray(stacks, dtype=float)
    if not np.all(np.isfinite(S)) or np.any(S < 1):
        raise ValueError(f"stacks must be >= 1, got {stacks!r}")
    n = np.asarray(scenario.groups if workers is None else workers, dtype=float)
    if not np.all(np.isfinite(n)) or np.any(n < 1):
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    e = expected_max_normal(np.maximum(n, 1.0))
    c, v = scenario.stack_seconds, scenario.stack_jitter_cv
    out = c * (S + v * np.sqrt(S) * e) + scenario.allreduce_seconds
    return float(out) if np.ndim(out) == 0 else out


def _law_key(law) -> tuple:
    """A hashable description of a frozen distribution (cache key)."""
    kwds = tuple(sorted((str(k), float(v)) for k, v in law.kwds.items()))
    return (law.dist.name, tuple(float(a) for a in law.args), kwds)


# ---------------------------------------------------------------------------
# Lifetime law helpers: fresh and equilibrium (residual-life) laws
# ---------------------------------------------------------------------------


def _cdf_e(law, t: np.ndarray) -> np.ndarray:
    """Equilibrium (residual-life) CDF ``F_e(t) = int_0^t sf / m`` at ``t`` (seconds)."""
    t = np.asarray(t, dtype=float)
    mean = float(law.mean())
    if law.dist.name == "expon":
        return -np.expm1(-t / mean)
    # int_0^t sf = E[min(L, t)] = t sf(t) + int_0^t x dF: use the partial
    # expectation via quadrature on a dense grid (cached per law and horizon).
    grid = np.concatenate([[0.0], np.geomspace(1e-6 * mean, max(t.max(), 1e-6 * mean), 4000)])
    sf = np.asarray(law.sf(grid), dtype=float)
    cum = integrate.cumulative_trapezoid(sf, grid, initial=0.0) / mean
    return np.minimum(np.interp(t, grid, cum), 1.0)


def _hazard_e(law, t: np.ndarray, cdf_e: np.ndarray) -> np.ndarray:
    """Hazard of the equilibrium law: ``sf(t) / (m (1 - F_e(t)))`` per second."""
    mean = float(law.mean())
    if law.dist.name == "expon":
        return np.full(np.shape(t), 1.0 / mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(law.sf(t), dtype=float) / (mean * (1.0 - cdf_e))
    return np.where(np.isfinite(out), out, 1.0 / mean)


# ---------------------------------------------------------------------------
# Restart windows
# ---------------------------------------------------------------------------


def _window_survival(dF: np.ndarray, K: int, fresh: np.ndarray) -> np.ndarray:
    """``P(W > t_i)`` on the grid for a first-failure law with increments ``dF``.

    ``G(t) = sum_j dF_j (G_fresh(t - t_j) + G_fresh(t - t_{j-1}-))/2`` for
    ``t >= R = K h`` (the window completes at ``R`` with no failure; a
    failure at ``x < R`` restarts it with a fresh clock), ``G = 1`` below.
    ``G_fresh`` jumps at ``R``; its left limit there is 1, so the trapezoid
    pieces ending at ``R`` use 1 (first order in ``h`` otherwise).
    """
    M = fresh.size
    G = np.ones(M)
    if M > K:
        left = fresh.copy()
        left[K] = 1.0
        pair = 0.5 * (fresh[:-1] + left[1:])  # pair[m]: G_fresh over [m h, (m + 1) h]
        conv = np.convolve(pair, dF[1 : K + 1])  # conv[q] = sum_j dF[j] pair[q - j + 1]
        G[K:] = conv[K - 1 : M - 1]
    return G


def _fresh_window_survival(dF: np.ndarray, K: int, M: int) -> np.ndarray:
    """``G_fresh`` on ``M`` grid points: the renewal equation solved step by step (trapezoid).

    ``G_i = sum_{j=1}^{K} dF_j (G_{i-j} + G_{i-j+1}-)/2`` (left limit 1 at
    ``R``, where ``G`` jumps); the ``j = 1`` term holds ``G_i`` itself and is
    moved to the left side.
    """
    G = np.ones(M)
    left = np.ones(M)  # left limits: equal to G except at index K
    w = dF[1 : K + 1]
    rev = w[::-1]  # rev[K - j] = w_j
    for i in range(K, M):
        lo = i - K
        # sum_{j=1}^{K} w_j G_{i-j}  +  sum_{j=2}^{K} w_j left_{i-j+1}  (+ w_1 left_i)
        acc = 0.5 * (rev @ G[lo:i]) + 0.5 * (rev[:-1] @ left[lo + 1 : i])
        if i == K:
            G[i] = acc + 0.5 * w[0]
        else:
            G[i] = acc / (1.0 - 0.5 * w[0])
            left[i] = G[i]
    return G


@functools.lru_cache(maxsize=256)
def _restart_mean(law_key, law, N: int, R: float) -> tuple[float, float, np.ndarray]:
    """``(E[D], expected window failures of all N workers, burst probabilities)``.

    The last item holds ``pi_j``, the mean of ``pi(D) = E[F_e(D - W) | W <= D]``
    (the chance that a running clock expires while its worker waits for the
    slowest window) over ``_BURST_NODES`` equal-probability classes of ``D``.
    """
    if R == 0.0:
        return 0.0, 0.0, np.zeros(1)
    h = R / _WINDOW_POINTS
    K = _WINDOW_POINTS
    # Horizon: long enough that G_fresh < 1e-14 / N, in chunks.
    M = 12 * K
    while True:
        t = np.arange(M + 1) * h
        F = np.asarray(law.cdf(t), dtype=float)
        Fe = _cdf_e(law, t)
        G_fresh = _fresh_window_survival(np.diff(F, prepend=0.0), K, M + 1)
        if G_fresh[-1] * N < 1e-14 or M >= 400 * K:
            break
        M *= 2
    G_eq = _window_survival(np.diff(Fe, prepend=0.0), K, G_fresh)
    with np.errstate(divide="ignore"):
        log_fresh = np.log1p(-np.minimum(G_fresh, 1.0))
        log_all = log_fresh + (N - 1) * np.log1p(-np.minimum(G_eq, 1.0)) if N > 1 else log_fresh
    not_done = -np.expm1(log_all)
    # D >= R always; the integrand jumps at R (G falls from 1 to P(fail in window)),
    # so the trapezoid starts at R with the right-hand values.
    ED = R + float(integrate.trapezoid(not_done[K:], t[K:]))
    # pi(d) = int_0^d F_e(d - w) dF_W(w) / F_W(d), F_W = 1 - G_eq; classes of D by its CDF H.
    F_W = 1.0 - G_eq
    conv = signal.fftconvolve(Fe, np.diff(F_W, prepend=0.0))[: t.size]
    with np.errstate(divide="ignore", invalid="ignore"):
        pi_d = np.where(F_W > 1e-12, np.clip(conv, 0.0, None) / F_W, 0.0)
    H = np.exp(log_all)
    dH = np.diff(H, prepend=0.0)
    cls = np.minimum(
        (np.clip(H - dH / 2, 0.0, 1.0 - 1e-12) * _BURST_NODES).astype(int), _BURST_NODES - 1
    )
    mass = np.bincount(cls, weights=dH, minlength=_BURST_NODES)
    pis = np.bincount(cls, weights=dH * pi_d, minlength=_BURST_NODES) / np.maximum(mass, 1e-300)
    pis = np.clip(pis, 0.0, 1.0 - 1e-12)
    if not_done[-1] > 1e-12:
        # Exponential tail of G beyond the grid: rate from the last window.
        g1, g0 = G_fresh[-1], G_fresh[-1 - K]
        gamma = math.log(g0 / g1) / R if g1 > 0 and g0 > g1 else 1.0 / R
        tail, _ = integrate.quad(
            lambda u: -math.expm1(N * math.log1p(-g1 * math.exp(-gamma * u))), 0, np.inf
        )
        ED += tail
    # Failures per worker during its window process: first failure w.p. F(R)
    # (fresh) or F_e(R), then each window fails again w.p. F(R).
    FR, FeR = float(law.cdf(R)), float(_cdf_e(law, np.array([R]))[0])
    per_fresh = FR / (1 - FR) if FR < 1 else math.inf
    failures = (N - 1) * FeR / (1 - FR) + per_fresh if FR < 1 else math.inf
    return ED, failures, pis


def expected_restart_seconds(scenario: StepScenario) -> float:
    """Expected length ``E[D]`` of one global restart, seconds.

    ``"fixed"``: ``R``.  ``"window"``: every worker must complete an
    uninterrupted window of ``R``; a worker failing in its window starts it
    again; the restart ends with the slowest worker:
    ``E[D] = int_0^inf [1 - (1 - G_e(t))^(N-1) (1 - G_fresh(t))] dt`` with
    ``G(t) = P(W > t)`` of one worker's completion time ``W``: ``G = 1`` for
    ``t < R`` and ``G(t) = int_0^R dF(x) G_fresh(t - x)`` beyond, where ``F``
    is the law of the worker's first failure in the window (the residual life
    ``F_e(x) = int_0^x sf/m`` of a running clock, or the fresh law for the
    worker that just failed).  Solved by the trapezoid rule on a grid of
    ``R/400`` s; an exponential tail closes the integral.

    Parameters
    ----------
    scenario : StepScenario
        ``groups``, ``restart_seconds``, ``restart_semantics``, ``failure_law``.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    The paper's scenario (``R = 3600`` s, cluster MTBF 300 s): the restart
    lasts about twice ``R``:

    >>> from spare_theory.steps.scenario import paper_scenario
    >>> print(round(expected_restart_seconds(paper_scenario(200))))
    7385
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    if scenario.restart_semantics == "fixed":
        return float(scenario.restart_seconds)
    return _restart_mean(
        _law_key(scenario.failure_law),
        scenario.failure_law,
        scenario.groups,
        scenario.restart_seconds,
    )[0]


# ---------------------------------------------------------------------------
# Cycle tables (depend on the scenario, the strategy and r; not on k)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cycle:
    """A cycle's expectations on a time grid ``t`` (seconds since the resume).

    ``log_q``: ``log Q(t)``; ``tau``: harmonic-mean attempt given no
    wipe-out; ``phi``: share of time in failure handling; ``partial``:
    attempts with a noticed (non-wiping) failure per second; ``noticed``:
    failures noticed per second; ``failed``: expected failed workers;
    ``tau0``: the first attempt after a resume; ``ckpt``: cost of one
    checkpoint; ``post``: ``b``, the tail of an attempt whose failures are
    noticed only in the next one; ``useful``: the failure-free step
    ``c + a``; ``burst_handling``: expected handling of the failures
    noticed at the resume (per cycle, unconditional); ``burst_failures``:
    their expected number.
    """

    t: np.ndarray
    log_q: np.ndarray
    tau: np.ndarray
    phi: np.ndarray
    partial: np.ndarray
    noticed: np.ndarray
    failed: np.ndarray
    post: np.ndarray
    tau0: float
    ckpt: float
    useful: float
    burst_handling: float
    burst_failures: float


def _law_hazard_grid(law, t: np.ndarray, burst) -> tuple[np.ndarray, np.ndarray]:
    """``(p, h)``: a worker's first-failure CDF in the cycle and the hazard of the rest.

    ``p(t) = pi + (1 - pi) F_e(t)``: failed at the resume with probability
    ``pi`` (its clock expired while it waited for the slowest restart
    window), else at its equilibrium residual life.
    """
    p_e = _cdf_e(law, t)
    burst = np.asarray(burst, dtype=float)[:, None]
    return burst + (1.0 - burst) * p_e[None, :], _hazard_e(law, t, p_e)


def _burst_nodes(sc: StepScenario) -> np.ndarray:
    """``pi_j``: chance that a worker's clock expires between its window's end and the restart's.

    A worker that completed its window waits ``D - W`` for the slowest one; a
    failure meanwhile is only noticed at the first check after the resume.
    Given ``D``, ``pi(D) = E[F_e(D - W) | W <= D]`` (equilibrium clock) and the
    burst is ``Binomial(N, pi(D))``; ``D`` is taken in ``_BURST_NODES``
    equal-probability classes (the burst is over-dispersed: ``D`` varies).
    ``[0]`` for ``"fixed"`` restarts (expired clocks renew silently).
    """
    if sc.restart_semantics == "fixed" or sc.restart_seconds == 0.0:
        return np.zeros(1)
    return _restart_mean(_law_key(sc.failure_law), sc.failure_law, sc.groups, sc.restart_seconds)[2]


def _time_end(law, p_end: float, burst: float = 0.0) -> float:
    """Smallest ``t`` with ``F_e(t) >= p_end`` (seconds), by doubling and bisection."""
    mean = float(law.mean())
    p_end = (p_end - burst) / (1.0 - burst)
    hi = mean
    while float(_cdf_e(law, np.array([hi]))[0]) < p_end and hi < 1e6 * mean:
        hi *= 2.0
    grid = np.linspace(0.0, hi, 4097)
    cdf = _cdf_e(law, grid)
    return float(grid[min(int(np.searchsorted(cdf, p_end)), grid.size - 1)])


def _run_bound(sc: StepScenario, r: int) -> float:
    """Seconds beyond which a cycle need not be followed: five runs at the slowest step.

    A cycle longer than the run ends with the run; the estimate's horizon is
    four runs' worth of steps, always inside this bound.
    """
    step = sc.stack_seconds * r * (1.0 + 10.0 * sc.stack_jitter_cv) + sc.allreduce_seconds
    return 5.0 * sc.steps * (step + sc.checkpoint_seconds)


# ---------------------------------------------------------------------------
# Micro-batch splitting (StepScenario.microbatches = m > 1, SPARe only)
# ---------------------------------------------------------------------------


def _max_two_classes(n_hi: np.ndarray, n_lo: np.ndarray, delta: np.ndarray, ratio: np.ndarray):
    """``E[max]`` of ``n_hi`` standard normals and ``n_lo`` normals ``ratio Z - delta``.

    The CDF of the maximum is ``Phi(z)^n_hi Phi((z + delta)/ratio)^n_lo`` (in
    logs); its mean ``int_0^inf (1 - F) - int_-inf^0 F`` by Simpson's rule,
    step 0.01 on ``[-10, 12]`` (rows broadcast).
    """
    below = np.linspace(-10.0, 0.0, 1001)
    above = np.linspace(0.0, 12.0, 1201)
    n_hi, n_lo, delta, ratio = (
        np.asarray(x, dtype=float)[:, None] for x in (n_hi, n_lo, delta, ratio)
    )

    def log_cdf(z: np.ndarray) -> np.ndarray:
        hi = n_hi * special.log_ndtr(z)[None, :]
        lo = np.where(n_lo > 0, n_lo * special.log_ndtr((z[None, :] + delta) / ratio), 0.0)
        return hi + lo

    lower = integrate.simpson(np.exp(log_cdf(below)), x=below, axis=1)
    upper = integrate.simpson(-np.expm1(log_cdf(above)), x=above, axis=1)
    return upper - lower


def _split_costs(sc: StepScenario, r: int, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(tau_f, retry_f)``: SPARe's attempt and retry seconds in state ``f`` with ``m`` pieces.

    **Attempt.**  The ``n = N - f`` survivors compute ``m N`` pieces at most
    ``L`` shard units a worker (the model's load
    :func:`spare_theory.stacking.overhead.expected_load`, at least the
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
    e = _max_two_classes(*uniq.T)[inverse.ravel()]
    tau_f = c * L + s * e + a
    holders = np.maximum((r - 1) * n / N, 1.0)
    q = np.ceil(m / holders)
    k = np.clip(m - holders * (q - 1.0), 1.0, None)
    retry = c * q / m + c * v * np.sqrt(q / m) * _e_of(N, np.minimum(k, N)) + a
    return tau_f, retry


def _spare_states(sc: StepScenario, r: int) -> tuple:
    """SPARe's per-state quantities for ``f = 0..f_end + 1`` failed workers.

    Returns ``(f, f_end, log P(T > f), S_f, n = N - f, tau_f, P_retry,
    retry cost)`` (module docstring, items 1 and 4).
    """
    N = sc.groups
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    wl = wipeout_law(N, r)
    f_end = min(wl.tail_end(-40.0), N - math.ceil(N / r))
    f = np.arange(f_end + 2)
    log_sf = np.asarray(wl.logsf(f), dtype=float)
    log_sf[f > f_end] = -np.inf
    S = np.asarray(expected_stacks(N, r, np.minimum(f, f_end)), dtype=float)
    n = (N - f).astype(float)
    tau_f = c * (S + v * np.sqrt(S) * _e_of(N, np.maximum(n, 1))) + a
    # Retry after a non-wiping failure in state f (it moves to f + 1).
    S_next = np.append(S[1:], S[-1])
    slots = S * n
    q = np.clip((2.0 * N - slots) / slots, 0.0, 1.0)  # share of prefix slots singly covered
    p_retry = np.where(S_next > S, 1.0, -np.expm1(S * np.log1p(-np.minimum(q, 1 - 1e-16))))
    # At S = r the prefix is the whole stack: an uncovered type is a wipe-out, never a retry.
    p_retry = np.where((S_next <= S) & (r <= S), 0.0, p_retry)
    orphans = np.where(S_next > S, n - 1, np.maximum(S * q / np.maximum(p_retry, 1e-300), 1.0))
    retry_cost = c * (1.0 + v * _e_of(N, np.maximum(orphans, 1.0))) + a
    if sc.microbatches > 1:
        # Loads instead of whole stacks; every failure loses the worker's pieces: a retry.
        tau_f, retry_cost = _split_costs(sc, r, np.minimum(f, f_end))
        p_retry = np.ones(f.size)
    return f, f_end, log_sf, S, n, tau_f, p_retry, retry_cost


def _spare_cycle(sc: StepScenario, r: int) -> _Cycle:
    N, law = sc.groups, sc.failure_law
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    f, f_end, log_sf, _, n, tau_f, p_retry, retry_cost = _spare_states(sc, r)
    # Grid in time up to where Q < e^-30 (the binomial mass passes f_end).
    p_end = min((f_end + 12.0 * math.sqrt(f_end + 1.0) + 10.0) / N, 1.0 - 1e-9)
    pis = _burst_nodes(sc)
    burst = float(pis.mean())
    p_end = max(p_end, min(float(pis.max()) + 1e-6, 1.0 - 1e-9))
    t = np.linspace(
        0.0, min(_time_end(law, p_end, float(pis.max())), _run_bound(sc, r)), _CYCLE_POINTS
    )
    p_nodes, hz = _law_hazard_grid(law, t, pis)
    log_binom = special.gammaln(N + 1) - special.gammaln(f + 1) - special.gammaln(N - f + 1)
    # log of the failure-count law at t: a mixture over the burst classes.
    sf = np.exp(log_sf)  # P(T > f), 0 beyond f_end
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
        pr = p_retry[None, lo:hi]
        retries = np.where(mu > 1e-12, -np.expm1(-mu * pr) / safe, pr)
        handling = per_attempt * part_cost + retries * retry_cost[None, lo:hi]
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
    tau0 = float(c * (1.0 + v * _e_of(N, N)) + a)
    # The failures noticed at the resume: one attempt with a failure, a retry
    # on every survivor (S grows from 1) unless they wipe out.
    levelup = c * (1.0 + v * _e_of(N, np.maximum(n, 1.0))) + a
    if sc.microbatches > 1:
        levelup = retry_cost  # the burst's lost pieces, spread over their holders
    burst_cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a + levelup
    burst_handling = float((w0[1:] * burst_cost[1:]).sum())
    return _Cycle(
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


def _rep_cycle(sc: StepScenario, r: int) -> _Cycle:
    N, law = sc.groups, sc.failure_law
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    n_sets = -(-N // r)
    sizes = np.full(n_sets, r, dtype=float)
    sizes[-1] = N - r * (n_sets - 1)
    starts = np.arange(n_sets) * r
    # Time grid up to where even the removal-limited cycle is surely over.
    pis = _burst_nodes(sc)
    burst = float(pis.mean())
    t_hi = min(_time_end(law, 1.0 - 1e-6, float(pis.max())), _run_bound(sc, r))
    t = np.linspace(0.0, t_hi, _CYCLE_POINTS)
    p_nodes, hz = _law_hazard_grid(law, t, pis)
    parts = [_rep_node(sc, r, t, p, hz, sizes, starts) for p in p_nodes]
    log_qs = np.array([part[0] for part in parts])
    log_q = special.logsumexp(log_qs, axis=0) - math.log(pis.size)
    share = np.exp(log_qs - log_q[None, :]) / pis.size  # class weights given survival
    tau, phi, partial, noticed, failed, post = (
        (share * np.array([part[i] for part in parts])).sum(axis=0) for i in range(1, 7)
    )
    # Checkpoint: the leader writes while the others compute the next step.
    sd = c * r * v
    if sd > 0:
        shifted = float(
            _max_normal_shifted(np.array([max(N - 1, 0)]), sc.checkpoint_seconds / sd)[0]
        )
        ckpt = sd * (shifted - float(_e_of(N, N)))
    else:
        ckpt = sc.checkpoint_seconds
    tau0 = float(c * r * (1.0 + v * _e_of(N, N)) + a)
    return _Cycle(
        t=t,
        log_q=log_q,
        tau=tau,
        phi=phi,
        partial=partial,
        noticed=noticed,
        failed=failed,
        post=post,
        tau0=tau0,
        ckpt=max(ckpt, 0.0),
        useful=c + a,
        burst_handling=0.0,  # the flagged burst is in the queue model's flagged attempts
        burst_failures=N * burst,
    )


def _rep_node(sc: StepScenario, r: int, t, p, hz, sizes, starts) -> tuple:
    """Rep's cycle quantities for one burst class.

    Returns ``(log Q, tau, phi, partial, noticed, failed, post)`` on ``t``.
    """
    N = sc.groups
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    failed = N * p
    working = np.maximum(N - failed, 1.0)
    sd = c * r * v
    e = _e_of(N, working)
    tau = c * r * (1.0 + v * e) + a
    # Removal: one flagged worker (the lowest id) per step, never more than
    # have failed: removed_i = min(F_i, removed_{i-1} + dt/tau), removed_0 = 0,
    # solved as removed_i = D_i + min(0, min_{1<=j<=i} (F_j - D_j)), D = int dt/tau.
    D = integrate.cumulative_trapezoid(1.0 / tau, t, initial=0.0)
    slack = np.minimum.accumulate(np.concatenate([[0.0], (failed - D)[1:]]))
    removed = np.minimum(D + slack, failed)
    removed[0] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(removed >= failed - 1e-9, float(N), removed / np.maximum(p, 1e-300))
    x = np.minimum(x, float(N))
    eligible = np.clip((x[:, None] - starts[None, :]) / sizes[None, :], 0.0, 1.0)
    log_p = np.log(np.maximum(p, 1e-300))
    with np.errstate(divide="ignore"):
        log_alive = np.log(-np.expm1(sizes[None, :] * log_p[:, None]))
    log_q = (eligible * log_alive).sum(axis=1)
    mu = working * hz * tau
    queue = np.maximum(failed - removed, 0.0)
    flagged = -np.expm1(-(mu + queue))  # attempts with a flag
    cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a
    return (
        log_q,
        tau,
        np.clip(flagged * cost / tau, -1.0, 0.95),
        flagged / tau,
        working * hz,
        failed,
        sd * e + a,
    )


@functools.lru_cache(maxsize=256)
def _cycle(key: tuple, sc: StepScenario, strategy: str, r: int) -> _Cycle:
    """The cycle table of ``strategy`` at ``r`` (cached on the scenario's parameters)."""
    del key  # the cache key: the scenario's parameters (its law compared by value)
    if strategy == "spare" and r > 1:
        return _spare_cycle(sc, r)
    return _rep_cycle(sc, r if strategy == "rep" else 1)


def _scenario_key(sc: StepScenario) -> tuple:
    return (
        sc.groups,
        sc.steps,
        sc.stack_seconds,
        sc.allreduce_seconds,
        sc.stack_jitter_cv,
        sc.checkpoint_seconds,
        sc.partial_recovery_seconds,
        sc.allreduce_failure_scale,
        sc.restart_seconds,
        sc.restart_semantics,
        _law_key(sc.failure_law),
        sc.microbatches,
    )


# ---------------------------------------------------------------------------
# Repairs: failed workers rejoin the running job (StepScenario.repair_seconds)
# ---------------------------------------------------------------------------


def _set_log_survival(size: int, mu: float, u: np.ndarray, p0: float = 0.0) -> np.ndarray:
    """``log P(a set of size groups never all down by u)`` on a uniform grid ``u``.

    At ``u = 0`` each member is down with probability ``p0`` (the resume
    burst), independently; ``log P`` at 0 is that of the set not all down.

    The down count is a birth-death chain (``j -> j+1`` at ``size - j``,
    ``j -> j-1`` at ``j mu``, units ``1/lambda``) absorbed at ``size``;
    stepped with the matrix exponential and renormalised at every step.  For
    very fast repairs the step's loss is below the exponential's rounding and
    the chain is quasi-stationary within far less than a step: ``-u / mean``.
    """
    mean = set_mean_absorption(size, mu)
    down = np.arange(size + 1)
    start = special.comb(size, down) * p0**down * (1.0 - p0) ** (size - down)
    log_start = math.log(max(float(start[:size].sum()), 1e-300))
    G = down_count_generator(size, mu)
    return log_start + chain_log_survival(G, float(u[1] - u[0]), u.size - 1, mean, start[:size])


def _repair_excess(sc: StepScenario, rho: float) -> tuple[float, float]:
    """``(E[(D - rho)^+], P(D > rho))`` for the repair time ``D`` (``scenario.repair_law``).

    ``rho`` is the retry that follows the failure: a repair done by its end
    rejoins at once, a longer one at the next step boundary.
    """
    law, m = sc.repair_law, float(sc.repair_seconds or 0.0)
    if law == "exponential":
        return m * math.exp(-rho / m), math.exp(-rho / m)
    if law == "fixed":
        return max(m - rho, 0.0), float(m > rho)
    tail = integrate.quad(lambda x: float(law.sf(x)), rho, np.inf, limit=200)[0]
    return float(tail), float(law.sf(rho))


@functools.lru_cache(maxsize=256)
def _repair_cycle(sc: StepScenario, strategy: str, r: int) -> _Cycle:
    """The cycle table when failed workers are repaired and rejoin (docs/step_model.md s. 11).

    A worker is out from its failure to its rejoin, on average the repair
    ``m_R`` plus one attempt (the failure is acted on at the end of its
    attempt, the rejoin waits for the next step boundary): ``m_out = m_R +
    tau``, ``tau`` the failure-free attempt at the stationary level.  Up
    times are taken exponential at the lifetime's mean ``m`` (the group's
    stationary failure rate; exact for the exponential law), so
    ``mu = m / m_out`` and a worker is out at ``t`` with probability
    ``p(t) = pi + (p_0 - pi) e^{-(1 + mu) t / m}``, ``pi = 1/(1 + mu)``,
    ``p_0`` the resume burst.  ``Q``: Rep, the exact chains of its
    consecutive replica sets; SPARe, :class:`spare_theory.hourly.repairs.RepairCycle`
    (the sharp law corrected by the per-type and pair chains).  Per state
    ``f`` (binomial at ``p(t)``, not wiped), SPARe's attempt, retry and
    handling laws are today's; rejoins at ``N p(t) / m_out`` each stall the
    job ``rejoin_seconds``.  CKPT-only is unchanged (every failure restarts).
    """
    base = _cycle(_scenario_key(sc), sc, strategy, r)
    if strategy == "ckpt" or r == 1:
        return base
    N, mean_life = sc.groups, float(sc.failure_law.mean())
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    lam = 1.0 / mean_life
    burst = float(_burst_nodes(sc).mean())
    part_cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a
    if strategy == "spare":
        f, _, log_sf, _, n, tau_f, p_retry, retry_cost = _spare_states(sc, r)
        sf = np.exp(log_sf)
        log_binom = special.gammaln(N + 1) - special.gammaln(f + 1) - special.gammaln(N - f + 1)

        def weights(p: float) -> np.ndarray:
            log_w = log_binom + np.where(f > 0, f * math.log(max(p, 1e-300)), 0.0)
            log_w = log_w + (N - f) * math.log1p(-min(p, 1 - 1e-16))
            return np.exp(log_w - log_w.max())

        # The attempt and the retry at the stationary level (fixed-point passes
        # from the failure-free state).
        tau_bar, rho = float(tau_f[0]), float(p_retry[0] * retry_cost[0])
        for _ in range(3):
            excess, later = _repair_excess(sc, rho)
            out_time = tau_bar / 2 + rho + excess + later * tau_bar / 2
            elevated = (excess + later * tau_bar / 2) / (mean_life + out_time)
            w = weights(elevated) * sf
            tau_bar = float(w.sum() / (w / tau_f).sum())
            rho = float((w * p_retry * retry_cost).sum() / w.sum())
    else:
        tau_bar, rho = float(c * r * (1.0 + v * _e_of(N, N)) + a), 0.0
        excess, later = _repair_excess(sc, rho)
        out_time = tau_bar / 2 + excess + later * tau_bar / 2
    # Share of a worker's out time during which the steps run without it.
    share_out = (excess + later * tau_bar / 2) / out_time
    mu = mean_life / out_time
    pi = 1.0 / (1.0 + mu)
    if strategy == "spare":
        cycle = repair_cycle("spare", N, r, mu)
        mean_u = cycle.mean_time
    else:
        n_sets = -(-N // r)
        last = N - r * (n_sets - 1)
        sizes = {r: n_sets - 1}
        sizes[last] = sizes.get(last, 0) + 1  # consecutive ids: the last set may be smaller
        rate = sum(count / set_mean_absorption(size, mu) for size, count in sizes.items())
        mean_u = 1.0 / rate
    t_end = min((45.0 * mean_u + 30.0 / (1.0 + mu)) / lam, _run_bound(sc, r))
    t = np.linspace(0.0, t_end, _CYCLE_POINTS)
    u = lam * t
    if strategy == "spare":
        # The burst starts the cycle with about N burst workers out: the
        # repair cycle from the time its down share reaches the burst.
        u_b = -math.log1p(-min(burst / pi, 1.0 - 1e-9)) / (1.0 + mu)
        shifted = np.asarray(cycle.logq(u + u_b), dtype=float)
        log_q = shifted - shifted[0] + float(base.log_q[0])
    else:
        log_q = np.zeros(t.size)
        for size, count in sizes.items():
            if count:
                log_q = log_q + count * _set_log_survival(size, mu, u, burst)
    # Repairs only shrink the down set (a repaired group is down without them
    # too), so a wipe-out with repairs is one without: Q is at least today's.
    log_q = np.maximum(log_q, np.interp(t, base.t, base.log_q, right=-np.inf))
    p_out = pi + (burst - pi) * np.exp(-(1.0 + mu) * u)
    rejoin = N * p_out / out_time * sc.rejoin_seconds  # share of time stalled by rejoins
    p = p_out * share_out  # out and missed by the steps (past its retry, before its rejoin)
    if strategy == "spare":
        cols = np.empty((5, t.size))
        for i, p_i in enumerate(p):
            mix = weights(float(p_i))
            w, w_next = mix * sf, mix * np.append(sf[1:], 0.0)
            total = w.sum()
            rate_f = n * lam
            mu_f = rate_f * tau_f
            safe = np.maximum(mu_f, 1e-300)
            per_attempt = np.where(mu_f > 1e-12, -np.expm1(-mu_f) / safe, 1.0)
            retries = np.where(mu_f > 1e-12, -np.expm1(-mu_f * p_retry) / safe, p_retry)
            handling = per_attempt * part_cost + retries * retry_cost
            cols[:, i] = (
                (w / tau_f).sum() / total,
                (w_next * rate_f * handling).sum() / total,
                (w_next * rate_f * per_attempt).sum() / total,
                (w * rate_f).sum() / total,
                (w * f).sum() / total,
            )
        inv_tau, phi, partial, noticed, failed = cols
        tau = 1.0 / inv_tau
        post = np.full(t.size, a)
    else:
        failed = N * p
        working = np.maximum(N - failed, 1.0)
        e = _e_of(N, working)
        tau = c * r * (1.0 + v * e) + a
        flagged = -np.expm1(-working * lam * tau)
        phi = flagged * part_cost / tau
        partial = flagged / tau
        noticed = working * lam
        post = c * r * v * e + a
    return _Cycle(
        t=t,
        log_q=np.minimum(log_q, 0.0),
        tau=tau,
        phi=np.clip(phi + rejoin, -1.0, 0.95),
        partial=partial,
        noticed=noticed,
        failed=failed,
        post=post,
        tau0=base.tau0,
        ckpt=base.ckpt,
        useful=base.useful,
        burst_handling=base.burst_handling,
        burst_failures=base.burst_failures,
    )


# ---------------------------------------------------------------------------
# The estimate
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StepEstimate:
    """Expected outcome of a step-level training run (:func:`step_time_to_train`).

    The breakdown ``*_seconds`` fields add up to ``seconds``.

    Attributes
    ----------
    strategy : str
        ``"ckpt"``, ``"rep"`` or ``"spare"``.
    r : int
        Redundancy (1 for CKPT-only).
    checkpoint_every_steps : int
        ``k``: a checkpoint after every ``k`` steps (and the last).
    seconds : float
        Expected wall time of the run, seconds.
    hours : float
        ``seconds / 3600``.
    total_over_T0 : float
        ``seconds / T0`` with ``T0 = steps * (stack + all-reduce)``.
    uptime : float
        ``1 - down / seconds``: the paper's availability (down = global
        restarts and partial recoveries).
    restarts : float
        Expected global restarts.
    failures : float
        Expected failures noticed (computing, in restart windows, and
        clocks of removed workers replayed at the restart).
    mean_restart_seconds : float
        ``E[D]``, one global restart.
    cycle_steps : float
        ``E[P]``: net steps gained per cycle.
    useful_seconds : float
        ``steps * (stack + all-reduce)`` worth of kept steps (``T0``).
    redundancy_seconds : float
        Extra time of the kept steps: stacks beyond one, Rep's ``r``-fold
        compute, jitter.
    checkpoint_seconds : float
        Checkpoint writes.
    restart_seconds : float
        Global restarts.
    handling_seconds : float
        Retries, partial recoveries, minus the shortened all-reduces.
    rework_seconds : float
        Steps lost at wipe-outs, the redone step after each resume, the
        detection delay.
    down_seconds : float
        Global restarts plus partial recoveries.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> est = step_time_to_train(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6)
    >>> print(round(est.total_over_T0, 2), round(est.mean_restart_seconds))
    6.1 7385
    >>> parts = (est.useful_seconds + est.redundancy_seconds + est.checkpoint_seconds
    ...          + est.restart_seconds + est.handling_seconds + est.rework_seconds)
    >>> print(round(parts / est.seconds, 9))
    1.0
    """

    strategy: str
    r: int
    checkpoint_every_steps: int
    seconds: float
    hours: float
    total_over_T0: float
    uptime: float
    restarts: float
    failures: float
    mean_restart_seconds: float
    cycle_steps: float
    useful_seconds: float
    redundancy_seconds: float
    checkpoint_seconds: float
    restart_seconds: float
    handling_seconds: float
    rework_seconds: float
    down_seconds: float


def _validate(scenario, strategy, r, k) -> tuple[str, int, int]:
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_MODEL_STRATEGIES)
    N = scenario.groups
    if strategy == "ckpt":
        if as_count(r, "r") != 1:
            raise ValueError(f"r must be 1 for strategy 'ckpt', got {r}")
        r = 1
    else:
        r = as_count(r, "r", maximum=N)
    if strategy == "spare" and r > 1 and r * (r - 1) + 1 > N:
        raise ValueError(f"r={r} needs N >= r(r-1)+1 = {r * (r - 1) + 1} groups, got N={N}")
    if strategy == "spare" and scenario.microbatches > 1 and scenario.repair_seconds is not None:
        raise ValueError(
            "microbatches > 1 with repairs is not modelled; set microbatches=1 or "
            "repair_seconds=None"
        )
    k = as_count(k, "checkpoint_every_steps")
    return strategy, r, k


def step_time_to_train(
    scenario: StepScenario, strategy: str, *, r: int, checkpoint_every_steps: int
) -> StepEstimate:
    """Expected wall time, uptime and restarts of the published step-level simulator.

    Renewal reward over restart cycles (see the module docstring and
    ``docs/step_model.md``): ``restarts = n / E[P]`` and
    ``seconds = restarts (E[D] + E[C])``, with ``E[D]`` the restart
    (:func:`expected_restart_seconds`), ``E[C]`` the computation until the
    wipe-out is detected and ``E[P]`` the net steps kept per cycle.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : {"ckpt", "rep", "spare"}
        CKPT-only (every failure a global restart), Rep (``r`` times the
        compute per worker, consecutive replica sets, a restart when a set
        is empty) or SPARe (ruler placement, ``S*`` stacks, a restart at
        wipe-out).
    r : int
        Redundancy, ``1`` for ``"ckpt"``; ``1 <= r <= N`` (SPARe needs
        ``N >= r(r-1)+1``).
    checkpoint_every_steps : int
        ``k >= 1``: a checkpoint after every ``k`` steps and after the last.

    Returns
    -------
    StepEstimate

    Raises
    ------
    ValueError
        Naming the argument: not a StepScenario, unknown strategy, ``r`` out
        of range, ``k < 1``.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> est = step_time_to_train(paper_scenario(1000), "spare", r=9, checkpoint_every_steps=30)
    >>> print(round(est.total_over_T0, 2), round(est.uptime, 3), round(est.restarts, 1))
    2.39 0.961 9.8
    """
    strategy, r, k = _validate(scenario, strategy, r, checkpoint_every_steps)
    sc = scenario
    if sc.repair_seconds is not None and sc.rejoin_seconds == 0.0:
        # Without a rejoin stall a repair only shrinks the down set (same
        # clocks), so the run is never longer than without repairs; where the
        # repair cycle's stationary up-times (non-exponential laws, slow
        # repairs) would say otherwise, today's estimate stands.
        repaired = _estimate(sc, _repair_cycle(sc, strategy, r), strategy, r, k)
        today = dataclasses.replace(sc, repair_seconds=None, repair_law="exponential")
        plain = step_time_to_train(today, strategy, r=r, checkpoint_every_steps=k)
        return repaired if repaired.seconds <= plain.seconds else plain
    if sc.repair_seconds is None:
        cyc = _cycle(_scenario_key(sc), sc, strategy, r)
    else:
        cyc = _repair_cycle(sc, strategy, r)
    return _estimate(sc, cyc, strategy, r, k)


def _estimate(sc: StepScenario, cyc: _Cycle, strategy: str, r: int, k: int) -> StepEstimate:
    """The renewal-reward estimate from a cycle table (module docstring, items 5-7)."""
    if sc.restart_semantics == "fixed":
        ED, window_failures = float(sc.restart_seconds), 0.0
    else:
        ED, window_failures, _ = _restart_mean(
            _law_key(sc.failure_law), sc.failure_law, sc.groups, sc.restart_seconds
        )
    t, log_q = cyc.t, cyc.log_q
    q = np.exp(log_q)
    delta = cyc.ckpt
    # Step rate (steps per second) and the schedule of checkpoint completions.
    rate = (1.0 - cyc.phi) / (cyc.tau + delta / k)
    q0 = float(q[0])
    if not q0 > 0:
        raise ValueError("the cycle model finds a wipe-out at every resume: no progress")
    # The redone step and its checkpoint, after handling the failures noticed at the resume.
    t0 = cyc.tau0 + delta + cyc.burst_handling / q0
    done = integrate.cumulative_trapezoid(rate, t, initial=0.0)
    done = np.maximum.accumulate(done - np.interp(t0, t, done))
    # Horizon: the grid's end, or four runs' worth of steps if a cycle may outlast
    # the run (then cycles reaching it count as renewals without a restart).
    j_cap = math.ceil(4 * sc.steps / k) + 1
    j_max = min(int(done[-1] // k), j_cap)
    if j_max < 1:
        raise ValueError(
            f"checkpoint_every_steps={k} is beyond the cycle model's horizon "
            f"(about {max(done[-1], 0.0):.0f} steps per cycle at most)"
        )
    c_j = np.interp(k * np.arange(1, j_max + 1), done, t)
    horizon = float(c_j[-1]) if j_max == j_cap else float(t[-1])
    post_j = np.interp(c_j, t, cyc.post)
    kept = np.exp(np.interp(c_j - delta - post_j, t, log_q))
    kept[c_j >= t[-1]] = 0.0
    q_end = float(np.exp(np.interp(horizon, t, log_q))) if j_max == j_cap else 0.0
    mean_life = float(sc.failure_law.mean())
    # The leader's clock is checked first: a failure since its last check loses it.
    lost = -math.expm1(-float(np.interp(t0, t, cyc.post)) / mean_life)
    kept_steps = k * float(((1 - lost) * kept + lost * np.append(kept[1:], q_end)).sum())
    if not kept_steps > 0:
        raise ValueError(
            f"checkpoint_every_steps={k}: no checkpoint survives a cycle in expectation"
        )
    wiped = 1.0 - q_end  # cycles that end in a wipe-out (and a restart)

    def upto(y: np.ndarray) -> float:
        """``int_0^horizon y dt``."""
        return float(np.interp(horizon, t, integrate.cumulative_trapezoid(y, t, initial=0.0)))

    # Detection remainder rho, uniform phase in a checkpoint period, at the
    # wipe-out's attempt length.
    inside = t[1:] <= horizon
    dens = -np.diff(q) * inside
    if dens.sum() > 0:
        weight = dens / dens.sum()
        tau_w, b = float(weight @ cyc.tau[1:]), float(weight @ cyc.post[1:])
    else:  # no wipe-out within the horizon: rho does not count
        tau_w, b = float(cyc.tau[0]), float(cyc.post[0])
    a_half = (1 - sc.allreduce_failure_scale) * sc.allreduce_seconds
    pre = max(tau_w - b, 0.0)
    period = k * tau_w + delta
    rho_later = (
        k * pre * (pre / 2 + b - a_half)
        + (k - 1) * b * (b / 2 + tau_w - a_half)
        + b * (b / 2 + delta + tau_w - a_half)
        + delta * (delta / 2 + tau_w - a_half)
    ) / period
    # A wipe-out at the resume is detected at the end of the first attempt.
    rho = (1.0 - q0) * (cyc.tau0 - a_half) + max(q0 - q_end, 0.0) * rho_later
    compute = upto(q) + rho + cyc.burst_handling
    handling = upto(q * cyc.phi) + cyc.burst_handling
    partials = upto(q * cyc.partial) + (q0 if cyc.burst_failures else 0.0)
    noticed = upto(q * cyc.noticed) + wiped + cyc.burst_failures
    replays = upto(q * cyc.failed) / mean_life
    checkpoints = delta * (1.0 + float(kept.sum()))
    # Time of the kept steps: at the time-averaged attempt of productive time.
    productive = q * (1.0 - cyc.phi)
    step_time = upto(productive * cyc.tau / (cyc.tau + delta / k)) / upto(
        productive / (cyc.tau + delta / k)
    )
    cycles = sc.steps / kept_steps
    restarts = cycles * wiped
    useful = kept_steps * cyc.useful
    redundancy = kept_steps * (step_time - cyc.useful)
    rework = compute - useful - redundancy - checkpoints - handling
    seconds = cycles * (wiped * ED + compute)
    down = cycles * (wiped * ED + sc.partial_recovery_seconds * partials)
    T0 = sc.failure_free_seconds
    return StepEstimate(
        strategy=strategy,
        r=r,
        checkpoint_every_steps=k,
        seconds=seconds,
        hours=seconds / 3600.0,
        total_over_T0=seconds / T0,
        uptime=1.0 - down / seconds,
        restarts=restarts,
        failures=cycles * (noticed + wiped * window_failures + replays),
        mean_restart_seconds=ED,
        cycle_steps=kept_steps,
        useful_seconds=cycles * useful,
        redundancy_seconds=cycles * redundancy,
        checkpoint_seconds=cycles * checkpoints,
        restart_seconds=restarts * ED,
        handling_seconds=cycles * handling,
        rework_seconds=cycles * rework,
        down_seconds=down,
    )
