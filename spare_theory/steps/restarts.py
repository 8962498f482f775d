"""Restart windows of the published simulator, and the residual life of a running clock.

A global restart of ``restart_semantics="window"`` ends when every worker
has completed an uninterrupted window of ``R`` seconds; a worker whose clock
expires in its window counts a failure and starts its window again
(``docs/step_model.md``).  A worker's completion time ``W`` satisfies
``P(W > t) = 1`` for ``t < R`` and, for ``t >= R``,
``G(t) = int_0^R dF(x) G_fresh(t - x)`` where ``F`` is the law of its first
failure in the window: the fresh law for the worker that just failed and
the residual life of the others' running clocks (never reset): the
equilibrium law ``F_e(x) = int_0^x sf / m`` of long-running ones, or
:func:`residual_life` at the clocks' age (``clock_age_seconds``); after a failure the clock is fresh
(``G_fresh`` solves the same renewal equation with ``F = 1 - sf``).  Solved
by the trapezoid rule on a grid of ``R/400`` (second order: the jump of
``G`` at ``R`` is taken with its left limit);
``E[D] = int_0^inf [1 - (1 - G_e)^(N-1) (1 - G_fresh)] dt`` (the restart
waits for the slowest worker), with an exponential tail beyond the grid.
Exponential law: ``G_e = G_fresh`` and ``E[W] = (e^{lambda R} - 1)/lambda``.
``"fixed"``: ``E[D] = R``.

The resume burst: a worker that completed its window waits ``D - W`` for
the slowest one; a failure meanwhile is noticed only at the first check
after the resume.  Given ``D`` each worker has failed at the resume with
``pi(D) = E[F_e(D - W) | W <= D]``; the burst is over-dispersed (``D``
varies), so it is given in ``5`` equal-probability classes of ``D``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy import integrate, signal

from .._caching import cached
from ..lifetimes.laws import memoryless, renewal_function_grid
from .scenario import StepScenario

__all__ = [
    "RestartWindows",
    "equilibrium_cdf",
    "equilibrium_hazard",
    "expected_restart_seconds",
    "mean_life_at",
    "residual_life",
    "restart_windows",
]

# Points of the restart-window grid per restart length R.
_WINDOW_POINTS = 400
# Equal-probability classes of the restart length D over which the burst of
# failures noticed at the resume is mixed.
_BURST_NODES = 5
# Cells of [0, age] over which a clock's renewals since its fresh start are summed.
_AGE_CELLS = 500
# Points of x at which a positive age's residual life is priced (twice: linear and geometric).
_AGE_KNOTS = 128


def equilibrium_cdf(law: Any, t: np.ndarray) -> np.ndarray:
    """Equilibrium (residual-life) CDF ``F_e(t) = int_0^t sf / m`` at ``t`` (seconds).

    Exponential: ``1 - e^{-t/m}``.  Otherwise ``int_0^t sf`` by the
    trapezoid rule on 4000 geometric points from ``1e-6 m`` to ``max(t)``,
    interpolated linearly.  No argument checks.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, seconds.
    t : numpy.ndarray
        Times, seconds, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        ``F_e(t)``.

    Examples
    --------
    >>> from scipy import stats
    >>> print(round(float(equilibrium_cdf(stats.expon(scale=2.0), np.array([2.0]))[0]), 6))
    0.632121
    """
    t = np.asarray(t, dtype=float)
    mean = float(law.mean())
    if memoryless(law):
        return -np.expm1(-t / mean)
    # int_0^t sf = E[min(L, t)]: quadrature on a dense grid up to the horizon.
    grid = np.concatenate([[0.0], np.geomspace(1e-6 * mean, max(t.max(), 1e-6 * mean), 4000)])
    sf = np.asarray(law.sf(grid), dtype=float)
    cum = integrate.cumulative_trapezoid(sf, grid, initial=0.0) / mean
    return np.minimum(np.interp(t, grid, cum), 1.0)


def equilibrium_hazard(law: Any, t: np.ndarray, cdf_e: np.ndarray) -> np.ndarray:
    """Hazard of the equilibrium law, ``sf(t) / (m (1 - F_e(t)))`` per second.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, seconds.
    t : numpy.ndarray
        Times, seconds.
    cdf_e : numpy.ndarray
        ``F_e(t)`` (:func:`equilibrium_cdf`); where the ratio is not finite
        the hazard is ``1/m``.

    Returns
    -------
    numpy.ndarray
        Per second.

    Examples
    --------
    >>> from scipy import stats
    >>> law = stats.expon(scale=4.0)
    >>> t = np.array([1.0, 9.0])
    >>> equilibrium_hazard(law, t, equilibrium_cdf(law, t)).tolist()
    [0.25, 0.25]
    """
    mean = float(law.mean())
    if memoryless(law):
        return np.full(np.shape(t), 1.0 / mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(law.sf(t), dtype=float) / (mean * (1.0 - cdf_e))
    return np.where(np.isfinite(out), out, 1.0 / mean)


@cached(maxsize=64)
def _renewal_steps(law: Any, age_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """``(u, dM)``: a renewal grid on ``[0, age]`` and the expected renewals per cell."""
    u, M = renewal_function_grid(law, age_seconds, _AGE_CELLS)
    return u, np.diff(M)


def residual_life(
    law: Any, t: np.ndarray, age_seconds: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(F_s, h_s)``: CDF and hazard of a running clock's residual life at ``t`` seconds.

    ``age_seconds=None``: a long-running clock, the equilibrium law
    (:func:`equilibrium_cdf`, :func:`equilibrium_hazard`).  Otherwise the
    clock was fresh ``s = age_seconds`` ago and has renewed at each expiry
    since (renewal function ``M``), so

        1 - F_s(x) = sf(s + x) + int_0^s sf(s - u + x) dM(u),

    taken with ``dM`` uniform within each of 500 cells of ``[0, s]``
    (``M`` by :func:`~spare_theory.lifetimes.laws.renewal_function`'s
    Stieltjes sum, scaled so that the identity at ``x = 0`` holds: its
    first-order error would otherwise leave an atom at 0), so that the
    cell's integral of ``sf`` is exact: ``m (F_e(b + x) - F_e(a + x))``;
    the density follows the same way, and
    ``h_s = f_s / (1 - F_s)``.  Exponential: ``1 - e^{-x/m}`` at every age.
    No argument checks.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, seconds.
    t : numpy.ndarray
        Times, seconds, ``>= 0``.
    age_seconds : float or None
        Time since the clock was fresh, seconds, ``>= 0``.

    Returns
    -------
    tuple of numpy.ndarray
        ``F_s(t)`` and ``h_s(t)`` (per second).

    Examples
    --------
    A Weibull clock of shape 0.5 is far likelier to fire soon when young;
    long after its start it nears the equilibrium law:

    >>> from scipy import stats
    >>> law = stats.weibull_min(0.5, scale=1000.0)
    >>> t = np.array([100.0])
    >>> [round(float(residual_life(law, t, age)[0][0]), 3) for age in (0.0, 50_000.0, None)]
    [0.271, 0.041, 0.041]
    """
    t = np.asarray(t, dtype=float)
    if age_seconds is None or memoryless(law):
        cdf = equilibrium_cdf(law, t)
        return cdf, equilibrium_hazard(law, t, cdf)
    s = float(age_seconds)
    if s > 0.0 and t.size > 2 * _AGE_KNOTS:
        # Smooth in x at a positive age: priced on fewer points, interpolated.
        top = float(t.max())
        knots = np.unique(
            np.concatenate(
                [np.linspace(0.0, top, _AGE_KNOTS), np.geomspace(1e-4 * top, top, _AGE_KNOTS)]
            )
        )
        cdf, density = _aged_sf_density(law, knots, s)
        sf, dens = 1.0 - np.interp(t, knots, cdf), np.interp(t, knots, density)
    else:
        cdf, dens = _aged_sf_density(law, t, s)
        sf = 1.0 - cdf
    mean = float(law.mean())
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(sf > 0.0, dens / sf, 1.0 / mean)
    return 1.0 - sf, np.where(np.isfinite(hazard), hazard, 1.0 / mean)


@cached(maxsize=64)
def _aged_cells(law: Any, age_seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(near, far, weight)``: each renewal cell's ages since it and its renewals per second.

    ``M``'s first-order error in level would leave an atom at ``x = 0``: the
    renewals are scaled so that ``1 = sf(s) + int_0^s sf(s - u) dM(u)`` holds.
    """
    u, dM = _renewal_steps(law, age_seconds)
    width = u[1] - u[0]
    near, far = age_seconds - u[1:], age_seconds - u[:-1]
    weight = dM / width
    whole = float(law.mean()) * float(
        (equilibrium_cdf(law, far) - equilibrium_cdf(law, near)) @ weight
    )
    return near, far, weight * (float(law.cdf(age_seconds)) / whole)


def _aged_sf_density(law: Any, x: np.ndarray, age_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """``(F_s, f_s)`` at ``x`` of a clock ``s = age_seconds`` old (:func:`residual_life`)."""
    s = age_seconds
    sf = np.asarray(law.sf(s + x), dtype=float)
    with np.errstate(divide="ignore"):  # a density infinite at 0 (Weibull shape below 1)
        dens = np.asarray(law.pdf(s + x), dtype=float)
    if s > 0.0:
        near, far, weight = _aged_cells(law, s)
        mean = float(law.mean())
        for chunk in np.array_split(np.arange(x.size), max(1, x.size // 64)):
            at = x[chunk, None]
            tails = equilibrium_cdf(law, np.concatenate([near + at, far + at], axis=1).ravel())
            tails = tails.reshape(chunk.size, 2, near.size)
            sf[chunk] += mean * ((tails[:, 1] - tails[:, 0]) @ weight)
            edges = np.asarray(law.sf(np.concatenate([near + at, far + at], axis=1)), dtype=float)
            dens[chunk] += (edges[:, : near.size] - edges[:, near.size :]) @ weight
    return 1.0 - np.clip(sf, 0.0, 1.0), dens


@cached(maxsize=256)
def mean_life_at(law: Any, age_seconds: float | None = None) -> float:
    """``1 / rate``: the mean up time of a clock of age ``age_seconds``, seconds.

    The rate is the renewal density at that age, the hazard of its residual
    life ``F_s`` at 0 (:func:`residual_life`); at a fresh start with an
    infinite density (Weibull shape below 1), the rate of its first
    ``delta = m / 1000``: ``-log(1 - F_s(delta)) / delta``, ``m`` the law's
    mean.  ``m`` for the exponential law or a
    long-running clock (``None``): the tables that take up times
    exponential (repairs) take them at this mean.  No argument checks.

    Examples
    --------
    >>> from scipy import stats
    >>> law = stats.weibull_min(0.5, scale=1000.0)  # mean 2000 s
    >>> round(mean_life_at(law)), round(mean_life_at(law, 300.0)), round(mean_life_at(law, 3e5))
    (2000, 822, 2000)
    """
    mean = float(law.mean())
    if age_seconds is None or memoryless(law):
        return mean
    delta = 1e-3 * mean
    p, hazard = residual_life(law, np.array([0.0, delta]), age_seconds)
    with np.errstate(divide="ignore"):
        finite = math.isfinite(float(law.pdf(age_seconds)))
    if finite and hazard[0] > 0.0:
        return 1.0 / float(hazard[0])
    return delta / -math.log1p(-float(p[1])) if p[1] > 0.0 else mean


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


class RestartWindows(NamedTuple):
    """One global restart: its mean length, the failures in it, the resume burst.

    Attributes
    ----------
    mean_seconds : float
        ``E[D]``, seconds.
    failures : float
        Expected failures counted in the windows of all ``N`` workers.
    burst : numpy.ndarray
        ``pi_j``: the chance that a worker's clock expires between its
        window's end and the restart's, per equal-probability class of
        ``D`` (``[0]`` for ``"fixed"`` restarts and ``R = 0``).

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> w = restart_windows(paper_scenario(200))
    >>> print(round(w.mean_seconds), round(w.failures, 1), w.burst.size)
    7385 ... 5
    """

    mean_seconds: float
    failures: float
    burst: np.ndarray


def _running_cdf(law: Any, t: np.ndarray, age_seconds: float | None) -> np.ndarray:
    """The residual life's CDF on a long uniform grid ``t``, through 2,000 points."""
    if age_seconds is None or memoryless(law):
        return equilibrium_cdf(law, t)
    top, step = float(t[-1]), float(t[1] - t[0])
    knots = np.unique(
        np.concatenate([np.linspace(0.0, min(800 * step, top), 801), np.geomspace(step, top, 1200)])
    )
    return np.interp(t, knots, residual_life(law, knots, age_seconds)[0])


@cached(maxsize=256)
def _window_moments(law: Any, N: int, R: float, age_seconds: float | None = None) -> RestartWindows:
    """:class:`RestartWindows` of ``"window"`` restarts of ``N`` workers (cached by value).

    The clocks but the failed worker's are of age ``age_seconds`` (``None``:
    long-running, the equilibrium law).
    """
    if R == 0.0:
        return RestartWindows(0.0, 0.0, np.zeros(1))
    h = R / _WINDOW_POINTS
    K = _WINDOW_POINTS
    # Horizon: long enough that G_fresh < 1e-14 / N, in chunks.
    M = 12 * K
    while True:
        t = np.arange(M + 1) * h
        F = np.asarray(law.cdf(t), dtype=float)
        Fe = _running_cdf(law, t, age_seconds)
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
    FR, FeR = float(law.cdf(R)), float(residual_life(law, np.array([R]), age_seconds)[0][0])
    per_fresh = FR / (1 - FR) if FR < 1 else math.inf
    failures = (N - 1) * FeR / (1 - FR) + per_fresh if FR < 1 else math.inf
    return RestartWindows(ED, failures, pis)


def restart_windows(scenario: StepScenario) -> RestartWindows:
    """Mean length, failures and resume burst of one global restart of ``scenario``.

    ``"window"`` restarts as in the module docstring (cached on the failure
    law, ``N`` and ``R``); ``"fixed"`` ones last ``R``, count no failure and
    leave no burst (expired clocks renew silently).

    Parameters
    ----------
    scenario : StepScenario
        ``groups``, ``restart_seconds``, ``restart_semantics``, ``failure_law``.

    Returns
    -------
    RestartWindows

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> restart_windows(replace(paper_scenario(200), restart_semantics="fixed")).mean_seconds
    3600.0
    """
    if scenario.restart_semantics == "fixed":
        return RestartWindows(float(scenario.restart_seconds), 0.0, np.zeros(1))
    return _window_moments(
        scenario.failure_law,
        scenario.groups,
        scenario.restart_seconds,
        scenario.clock_age_seconds,
    )


def expected_restart_seconds(scenario: StepScenario) -> float:
    """Expected length ``E[D]`` of one global restart, seconds.

    ``"fixed"``: ``R``.  ``"window"``: every worker must complete an
    uninterrupted window of ``R``; a worker failing in its window starts it
    again; the restart ends with the slowest worker:
    ``E[D] = int_0^inf [1 - (1 - G_e(t))^(N-1) (1 - G_fresh(t))] dt`` with
    ``G(t) = P(W > t)`` of one worker's completion time ``W``: ``G = 1`` for
    ``t < R`` and ``G(t) = int_0^R dF(x) G_fresh(t - x)`` beyond, where ``F``
    is the law of the worker's first failure in the window (the residual life
    of a running clock at ``clock_age_seconds``, :func:`residual_life`, the
    equilibrium ``F_e(x) = int_0^x sf/m`` of a long-running one; or the
    fresh law for the worker that just failed).  Solved by the trapezoid rule on a grid of
    ``R/400`` s; an exponential tail closes the integral.

    Parameters
    ----------
    scenario : StepScenario
        ``groups``, ``restart_seconds``, ``restart_semantics``, ``failure_law``.

    Returns
    -------
    float
        Seconds.

    Notes
    -----
    Fields with no effect here:

    - ``steps``, ``stack_seconds``, ``allreduce_seconds``, ``stack_jitter_cv``,
      ``checkpoint_seconds``, ``partial_recovery_seconds``,
      ``allreduce_failure_scale``, ``microbatches``: costs of training steps, and
      a restart trains none;
    - ``repair_seconds``, ``repair_law``, ``rejoin_seconds``,
      ``reconfigure_seconds``, ``heal_seconds``, ``gpus_per_group``,
      ``gpus_per_node``, ``spare_nodes``, ``swap_seconds``: a worker failing in
      its window starts its window again at once (the restart replaces it), so
      no repair, rejoin, reconfiguration or spare swap happens within a restart;
    - ``provenance``: where the fields came from, not what they are.

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
    return restart_windows(scenario).mean_seconds
