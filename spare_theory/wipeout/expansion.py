"""The factorial-cumulant expansion of ``log P(T > f)`` and the sums over it.

The wipe-out count ``T`` on the cyclic modular-ruler placement
(:mod:`spare_theory.wipeout.law`, ``docs/theory.md`` section 2) has, with
``p_k(f) = (f)_k / (N)_k`` and ``S1 = N p_r(f)`` the expected number of
wiped types after ``f`` failures,

* to first order ``log P(T > f) ~ -S1 ~ -N (f/N)^r`` (a Weibull law), whose
  mean is the published form :func:`endurable_failures_gamma`,
  ``Gamma(1 + 1/r) N^(1 - 1/r)``;
* to second order (the *sharp form*) ``-S1 + S2 - S1^2 / 2`` with the pair
  term ``S2`` of the ruler's overlaps, continued as ``exp(-S1)`` past the
  point where the truncation stops decreasing; exact for ``r <= 2``
  (:func:`log_survival`).

The kernels here are what :class:`~spare_theory.wipeout.law.WipeoutLaw` is
built on: :func:`log_survival` (vectorised over ``f``), :func:`tail_end`
(where its sums stop) and :func:`survival_sum` (``E[T]`` and ``E[T^2]``,
cached per ``(N, r)``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from .._caching import cached
from .._numerics import DIRECT_SUM_TERMS, log_falling_ratio, smooth_sum
from .._validation import as_count_array
from ..placement.rulers import min_groups_for_ruler

__all__ = ["endurable_failures_gamma"]

#: Natural log of the negligible survival: the tail beyond adds less than 1e-20 of mu.
LOG_TAIL = -60.0
# Supports up to this many terms are summed term by term; longer ones by
# quadrature plus Euler-Maclaurin end corrections (a module attribute so that
# tests can lower it and compare both paths).
_DIRECT_TERMS = DIRECT_SUM_TERMS
# Above this x, differences of lgamma are taken from Stirling's series (the
# plain difference of ~x log x numbers loses ~x log(x) eps; the series'
# next term, 1/(1260 x^5), is below 1e-13 here).
_STIRLING_FROM = 100.0


def endurable_failures_gamma(N: npt.ArrayLike, r: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
    """Published closed form ``mu ~ Gamma(1 + 1/r) N^(1 - 1/r)`` (failures).

    The mean of the first-order law ``P(T > f) ~ exp(-N (f/N)^r)``
    (``sum_f`` replaced by an integral; :mod:`spare_theory.wipeout.symbolic`).
    Computed in log space, ``exp(gammaln(1 + 1/r) + (1 - 1/r) ln N)``, so it
    stays finite and accurate to ``N = 1e12`` and beyond.  It needs no
    modular ruler, so any ``1 <= r`` is accepted.

    Parameters
    ----------
    N : int or array_like of int
        Number of data-parallel groups, ``N >= 1``.
    r : int or array_like of int
        Redundancy, ``r >= 1``.  Broadcasts with ``N``.

    Returns
    -------
    float or numpy.ndarray
        Expected number of failures up to and including the wipe-out.

    Examples
    --------
    >>> from spare_theory import endurable_failures_gamma
    >>> print(round(endurable_failures_gamma(1000, 3), 3))  # Gamma(4/3) * 1000**(2/3)
    89.298
    >>> endurable_failures_gamma(4096, [1, 2, 8]).round(2).tolist()
    [1.0, 56.72, 1363.79]
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    N, r = np.broadcast_arrays(N, r)
    inv = 1.0 / r
    out = np.exp(special.gammaln(1.0 + inv) + (1.0 - inv) * np.log(N))
    return float(out) if out.ndim == 0 else out


def _harmonic(f: np.ndarray, k: int) -> np.ndarray:
    """``d/df log p_k(f) = sum_{j<k} 1 / (f - j)`` for real ``f > k - 1``."""
    j = np.arange(k, dtype=np.float64)
    return (1.0 / (np.asarray(f, dtype=np.float64)[..., None] - j)).sum(axis=-1)


def _cumulant_terms(
    f: np.ndarray, N: int, r: int
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``S1`` and half the second factorial cumulant ``kappa2 / 2`` at ``f`` failures.

    ``S1 = N p_r``; ``kappa2/2 = n1 p_{2r-1} + n0 p_{2r} - S1^2/2`` with
    ``n1 = N r(r-1)/2`` type pairs sharing one host and ``n0 = C(N,2) - n1``
    sharing none.  The ``n0`` part is written as
    ``S1^2/2 * [expm1(l) - e^l (N + 2 n1)/N^2]``, ``l = log p_2r - 2 log p_r``,
    to avoid cancelling two numbers of size ``S1^2/2``.
    """
    lp_r = log_falling_ratio(f, N, r)
    n1 = N * r * (r - 1) / 2.0
    S1 = np.exp(math.log(N) + lp_r)
    with np.errstate(invalid="ignore"):
        ell = np.where(np.isfinite(lp_r), log_falling_ratio(f, N, 2 * r) - 2.0 * lp_r, 0.0)
    disjoint = 0.5 * S1**2 * (np.expm1(ell) - np.exp(ell) * (N + 2.0 * n1) / N**2)
    shared = n1 * np.exp(log_falling_ratio(f, N, 2 * r - 1))
    return S1, shared + disjoint, (lp_r, shared)


def _log_expansion(f: np.ndarray, N: int, r: int) -> np.ndarray:
    S1, half_k2, _ = _cumulant_terms(f, N, r)
    return -S1 + half_k2


def _log_expansion_slope(f: np.ndarray, N: int, r: int) -> np.ndarray:
    """``d/df`` of :func:`_log_expansion` (analytic, for locating its turning point)."""
    S1, _, (_, shared) = _cumulant_terms(f, N, r)
    n1 = N * r * (r - 1) / 2.0
    n0_p2r = (N * (N - 1) / 2.0 - n1) * np.exp(log_falling_ratio(f, N, 2 * r))
    h_r = _harmonic(f, r)
    return -S1 * h_r + shared * _harmonic(f, 2 * r - 1) + n0_p2r * _harmonic(f, 2 * r) - S1**2 * h_r


@cached(maxsize=1024)
def _turning_point(N: int, r: int) -> float:
    """First ``f`` where the truncated expansion stops decreasing (``N`` if never).

    Past it the second-order term (pairs sharing a host, which grows like
    ``S1^2 r^2 / f``) outweighs ``S1`` and the truncated series is no longer a
    survival function; :func:`log_survival` continues it there with
    the first-order decay.
    """
    grid = np.unique(np.concatenate([np.geomspace(r, N, 600), np.linspace(r, N, 600)]))
    grid = grid[grid > 2 * r]
    slope = _log_expansion_slope(grid, N, r)
    rising = np.flatnonzero(slope >= 0)
    if rising.size == 0:
        return float(N)
    i = int(rising[0])
    if i == 0:
        return float(grid[0])
    return float(
        optimize.brentq(
            lambda x: float(_log_expansion_slope(np.array(x), N, r)), grid[i - 1], grid[i]
        )
    )


def _lgamma_second_difference(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``lgamma(x + 2d) - 2 lgamma(x + d) + lgamma(x)``, ``x >= 1``, ``d >= 0``, to ~1e-13 absolute.

    The three terms are ``~x log x`` each (``~3e7`` at ``x = 1e12``) while the
    result is ``~d^2/x``, so differencing them (even term by term in
    Stirling's series) loses ``~x log x * eps``.  Around the centre
    ``z = x + d`` with ``u = d/z``, the second difference of Stirling's
    ``(z - 1/2) ln z - z`` is exactly
    ``(z - 1/2) log1p(-u^2) + 2 d atanh(u)``, free of cancellation; the
    ``1/(12 z) - 1/(360 z^3)`` terms are small and differenced directly.
    """
    x = np.asarray(x, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    direct = special.gammaln(x + 2 * d) - 2 * special.gammaln(x + d) + special.gammaln(x)
    xs = np.maximum(x, _STIRLING_FROM)
    z = xs + d
    u = d / z

    def small(t: np.ndarray) -> np.ndarray:
        return 1.0 / (12.0 * t) - 1.0 / (360.0 * t**3)

    stirling = (
        (z - 0.5) * np.log1p(-u * u)
        + 2.0 * d * np.arctanh(u)
        + (small(z + d) - 2 * small(z) + small(xs))
    )
    return np.where(x >= _STIRLING_FROM, stirling, direct)


def _log_survival_cycle(f: np.ndarray, N: int) -> np.ndarray:
    """Exact ``log P(T > f)`` for ``r = 2``: types are the edges of the cycle ``C_N``.

    The ruler ``{0, 1}`` puts type ``i`` on groups ``i`` and ``i + 1``.

    ``f`` failed groups wipe nothing iff they form an independent set of
    ``C_N``; there are ``N/(N-f) C(N-f, f)`` of them (``0 <= f < N``), so
    ``P = N/(N-f) * (N-f)!^2 / (N! (N-2f)!)``.
    """
    f = np.asarray(f, dtype=np.float64)
    ok = 2 * f <= N
    g = np.where(ok, f, 0.0)
    # log N - log(N-f) - [lgamma(N+1) - 2 lgamma(N-f+1) + lgamma(N-2f+1)]
    out = math.log(N) - np.log(N - g) - _lgamma_second_difference(N - 2.0 * g + 1.0, g)
    # One failure never wipes a type with two hosts; clip rounding above 1.
    return np.where(ok & (f < N), np.where(f < 2, 0.0, np.minimum(out, 0.0)), -np.inf)


def log_survival(f: npt.ArrayLike, N: int, r: int) -> np.ndarray:
    """``log P(T > f)`` of the sharp form for one ``(N, r)`` (``f`` real, ``0 <= f <= N``).

    ``-S1 + S2 - S1^2 / 2`` up to the turning point, then ``exp(-S1)``'s
    decay; exact for ``r = 1`` and ``r = 2`` (module docstring).  No argument
    checks: :class:`~spare_theory.wipeout.law.WipeoutLaw` validates.

    Examples
    --------
    >>> from spare_theory.wipeout.expansion import log_survival
    >>> log_survival([1, 2, 3, 4], 7, 2).round(4).tolist()  # log of 1, 2/3, 1/5, 0
    [0.0, -0.4055, -1.6094, -inf]
    """
    f = np.asarray(f, dtype=np.float64)
    if r == 1:
        return np.where(f < 1, 0.0, -np.inf)
    if r == 2:
        return _log_survival_cycle(f, N)
    turn = _turning_point(N, r)
    inside = np.minimum(f, turn)
    out = _log_expansion(inside, N, r)
    beyond = f > turn
    if np.any(beyond):
        # First-order continuation: keep decaying as exp(-S1) does.
        s1_turn = N * math.exp(float(log_falling_ratio(np.array(turn), N, r)))
        s1 = N * np.exp(log_falling_ratio(f, N, r))
        out = np.where(beyond, out - (s1 - s1_turn), out)
    return np.minimum(np.where(f >= N, -np.inf, out), 0.0)


def check_ruler_size(N: np.ndarray, r: np.ndarray) -> None:
    """Raise ``ValueError`` naming ``N`` or ``r`` unless ``r <= N`` and a modular ruler exists.

    A ruler with ``r >= 2`` marks needs ``N >= r(r-1) + 1`` groups.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory.wipeout.expansion import check_ruler_size
    >>> check_ruler_size(np.array([13]), np.array([4]))
    >>> check_ruler_size(np.array([12]), np.array([4]))
    Traceback (most recent call last):
        ...
    ValueError: N=12 admits no modular ruler with r=4 marks: N must be >= r(r-1)+1 = 13
    """
    if np.any(r > N):
        raise ValueError(f"r must be <= N, got r={int(r.max())} with N={int(N[r > N].min())}")
    small = (r >= 2) & (r * (r - 1) + 1 > N)
    if np.any(small):
        bad_N, bad_r = int(N[small][0]), int(r[small][0])
        raise ValueError(
            f"N={bad_N} admits no modular ruler with r={bad_r} marks: "
            f"N must be >= r(r-1)+1 = {min_groups_for_ruler(bad_r)}"
        )


def tail_end(N: int, r: int, level: float) -> int:
    """Smallest ``f`` with ``log P(T > f) < level`` (bisection: the form is monotone).

    Examples
    --------
    >>> from spare_theory.wipeout.expansion import LOG_TAIL, tail_end
    >>> tail_end(1000, 3, LOG_TAIL), tail_end(1000, 3, -5.0)
    (374, 170)
    """
    if float(log_survival(np.array(r), N, r)) < level:
        return r  # P(T > r - 1) = 1, so r is the answer (r = 1, or N = 3 with r = 2)
    lo, hi = r, N
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(log_survival(np.array(mid), N, r)) < level:
            hi = mid
        else:
            lo = mid
    return hi


@cached(maxsize=4096)
def survival_sum(N: int, r: int, order: int) -> float:
    """``sum_{f >= 0} w(f) P(T > f)``: ``w = 1`` (order 1: ``E[T]``) or ``2f + 1`` (``E[T^2]``).

    Terms with ``log P(T > f) < -60`` are dropped.  Supports of at most
    ``_DIRECT_TERMS`` terms are summed term by term; longer ones sum the
    first ``_DIRECT_TERMS`` terms, then
    ``sum_{f=a}^{b} w P = int_a^b w P + (w P(a) + w P(b))/2 + ((w P)'(b) - (w P)'(a))/12``
    with the smooth interpolant of ``P`` (its scale is ``~mu >> 1``, so the
    next Euler-Maclaurin term is ``~P/mu^3`` and negligible).  Cached per
    ``(N, r, order)``.

    Examples
    --------
    >>> from spare_theory.wipeout.expansion import survival_sum
    >>> round(survival_sum(7, 2, 1), 4), round(survival_sum(7, 2, 2), 4)  # E[T], E[T^2]
    (2.8667, 8.7333)
    """
    if r == 1:
        return 1.0  # T = 1: the first failure wipes its type

    def terms(f: np.ndarray) -> np.ndarray:
        p = np.exp(log_survival(f, N, r))
        return p if order == 1 else (2.0 * f + 1.0) * p

    end = tail_end(N, r, LOG_TAIL)
    if end <= _DIRECT_TERMS:
        return float(terms(np.arange(end + 1, dtype=np.float64)).sum())
    head = float(terms(np.arange(_DIRECT_TERMS, dtype=np.float64)).sum())
    return head + smooth_sum(lambda x: float(terms(np.array(x))), _DIRECT_TERMS, end)
