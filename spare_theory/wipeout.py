"""Wipe-out and the endurable failure count ``mu(N, r)``.

Failures hit the ``N`` groups in a uniformly random order; ``T`` counts the
failures up to and including the first one after which some shard type has
lost all ``r`` hosts (a *wipe-out*), and ``mu(N, r) = E[T]`` (MODEL.md
section 3).  ``E[T] = sum_{f >= 0} P(T > f)`` where ``P(T > f)`` is the
probability that a uniformly random set of ``f`` failed groups contains no
full row of ``hosts``.

Three answers, from rough to exact:

* :func:`endurable_failures_gamma` -- the published form
  ``Gamma(1 + 1/r) N^(1 - 1/r)``.
* :func:`wipeout_survival` / :func:`endurable_failures` -- the sharp form for
  the cyclic modular-ruler placement: the factorial-cumulant expansion of
  ``log P(T > f)`` to second order with exact hypergeometric moments and the
  pair overlaps the ruler allows (exact for ``r <= 2``).  Derivation in
  ``docs/theory.md`` section 2.
* :func:`exact_wipeout_survival` / :func:`exact_endurable_failures` -- exact
  enumeration of failure sets for any placement with ``N <= 24``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, optimize, special

from ._validation import as_count_array
from .placement import min_groups_for_ruler, validate_hosts

__all__ = [
    "EXACT_MAX_GROUPS",
    "endurable_failures",
    "endurable_failures_gamma",
    "exact_endurable_failures",
    "exact_wipeout_survival",
    "wipeout_survival",
]

#: Largest ``N`` that :func:`exact_wipeout_survival` enumerates (``2**N`` sets).
EXACT_MAX_GROUPS = 24

# Below this log-survival the remaining tail adds less than 1e-20 of mu.
_LOG_TAIL = -60.0
# Supports up to this many terms are summed term by term; longer ones by
# quadrature plus Euler-Maclaurin end corrections.
_DIRECT_TERMS = 100_000
# Above this x, differences of lgamma are taken from Stirling's series (the
# plain difference of ~x log x numbers loses ~x log(x) eps; the series'
# next term, 1/(1260 x^5), is below 1e-13 here).
_STIRLING_FROM = 100.0


def _scalar_or_array(out: np.ndarray):
    return float(out) if out.ndim == 0 else out


def endurable_failures_gamma(N, r):
    """Published closed form ``mu ~ Gamma(1 + 1/r) N^(1 - 1/r)`` (failures).

    Computed in log space, ``exp(gammaln(1 + 1/r) + (1 - 1/r) ln N)``, so it
    stays finite and accurate to ``N = 1e12`` and beyond.

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
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    N, r = np.broadcast_arrays(N, r)
    inv = 1.0 / r
    return _scalar_or_array(np.exp(special.gammaln(1.0 + inv) + (1.0 - inv) * np.log(N)))


# ---------------------------------------------------------------------------
# Sharp form
# ---------------------------------------------------------------------------


def _log_falling_ratio(f: np.ndarray, N: int, k: int) -> np.ndarray:
    """``log p_k(f) = log[(f)_k / (N)_k]``: all of ``k`` given groups are among ``f`` failed.

    Summed as ``log1p((f - N) / (N - j))`` so that it stays exact for
    ``f`` close to ``N`` and for ``N`` up to 1e12; ``-inf`` for ``f < k``.
    """
    f = np.asarray(f, dtype=np.float64)
    out = np.zeros_like(f)
    for j in range(k):
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.log1p((f - N) / (N - j))
        out += np.where(f > j, term, -np.inf)
    return out


def _harmonic(f: np.ndarray, k: int) -> np.ndarray:
    """``d/df log p_k(f) = sum_{j<k} 1 / (f - j)`` for real ``f > k - 1``."""
    j = np.arange(k, dtype=np.float64)
    return (1.0 / (np.asarray(f, dtype=np.float64)[..., None] - j)).sum(axis=-1)


def _cumulant_terms(f: np.ndarray, N: int, r: int):
    """``S1`` and half the second factorial cumulant ``kappa2 / 2`` at ``f`` failures.

    ``S1 = N p_r``; ``kappa2/2 = n1 p_{2r-1} + n0 p_{2r} - S1^2/2`` with
    ``n1 = N r(r-1)/2`` type pairs sharing one host and ``n0 = C(N,2) - n1``
    sharing none.  The ``n0`` part is written as
    ``S1^2/2 * [expm1(l) - e^l (N + 2 n1)/N^2]``, ``l = log p_2r - 2 log p_r``,
    to avoid cancelling two numbers of size ``S1^2/2``.
    """
    lp_r = _log_falling_ratio(f, N, r)
    n1 = N * r * (r - 1) / 2.0
    S1 = np.exp(math.log(N) + lp_r)
    with np.errstate(invalid="ignore"):
        ell = np.where(np.isfinite(lp_r), _log_falling_ratio(f, N, 2 * r) - 2.0 * lp_r, 0.0)
    disjoint = 0.5 * S1**2 * (np.expm1(ell) - np.exp(ell) * (N + 2.0 * n1) / N**2)
    shared = n1 * np.exp(_log_falling_ratio(f, N, 2 * r - 1))
    return S1, shared + disjoint, (lp_r, shared)


def _log_expansion(f, N, r) -> np.ndarray:
    S1, half_k2, _ = _cumulant_terms(f, N, r)
    return -S1 + half_k2


def _log_expansion_slope(f, N, r) -> np.ndarray:
    """``d/df`` of :func:`_log_expansion` (analytic, for locating its turning point)."""
    S1, half_k2, (lp_r, shared) = _cumulant_terms(f, N, r)
    n1 = N * r * (r - 1) / 2.0
    n0_p2r = (N * (N - 1) / 2.0 - n1) * np.exp(_log_falling_ratio(f, N, 2 * r))
    h_r = _harmonic(f, r)
    return -S1 * h_r + shared * _harmonic(f, 2 * r - 1) + n0_p2r * _harmonic(f, 2 * r) - S1**2 * h_r


@functools.lru_cache(maxsize=1024)
def _turning_point(N: int, r: int) -> float:
    """First ``f`` where the truncated expansion stops decreasing (``N`` if never).

    Past it the second-order term (pairs sharing a host, which grows like
    ``S1^2 r^2 / f``) outweighs ``S1`` and the truncated series is no longer a
    survival function; :func:`_log_survival_sharp` continues it there with
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
    return optimize.brentq(
        lambda x: float(_log_expansion_slope(np.array(x), N, r)), grid[i - 1], grid[i]
    )


def _lgamma_second_difference(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``lgamma(x + 2d) - 2 lgamma(x + d) + lgamma(x)`` for ``x >= 1``, ``d >= 0``, to ~1e-13 absolute.

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

    def small(t):
        return 1.0 / (12.0 * t) - 1.0 / (360.0 * t**3)

    stirling = (
        (z - 0.5) * np.log1p(-u * u)
        + 2.0 * d * np.arctanh(u)
        + (small(z + d) - 2 * small(z) + small(xs))
    )
    return np.where(x >= _STIRLING_FROM, stirling, direct)


def _log_survival_cycle(f: np.ndarray, N: int) -> np.ndarray:
    """Exact ``log P(T > f)`` for ``r = 2``: the ruler ``{0, 1}`` makes types the edges of the cycle ``C_N``.

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


def _log_survival_sharp(f, N: int, r: int) -> np.ndarray:
    """``log P(T > f)`` of the sharp form for one ``(N, r)`` (``f`` real, ``0 <= f <= N``)."""
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
        s1_turn = N * math.exp(float(_log_falling_ratio(np.array(turn), N, r)))
        s1 = N * np.exp(_log_falling_ratio(f, N, r))
        out = np.where(beyond, out - (s1 - s1_turn), out)
    return np.minimum(np.where(f >= N, -np.inf, out), 0.0)


def _check_ruler_size(N: np.ndarray, r: np.ndarray) -> None:
    if np.any(r > N):
        raise ValueError(f"r must be <= N, got r={int(r.max())} with N={int(N[r > N].min())}")
    small = (r >= 2) & (r * (r - 1) + 1 > N)
    if np.any(small):
        bad_N, bad_r = int(N[small][0]), int(r[small][0])
        raise ValueError(
            f"N={bad_N} admits no modular ruler with r={bad_r} marks: "
            f"N must be >= r(r-1)+1 = {min_groups_for_ruler(bad_r)}"
        )


def wipeout_survival(N, r, failures):
    """``P(T > f)``: no type is wiped out after ``f`` failures (sharp form).

    For the cyclic placement on a modular Golomb ruler.  With
    ``p_k(f) = (f)_k / (N)_k`` (falling factorials: the probability that
    ``k`` given groups are all among ``f`` failed),

    ``log P(T > f) ~ -S1 + S2 - S1^2 / 2``,
    ``S1 = N p_r(f)``,
    ``S2 = n1 p_{2r-1}(f) + n0 p_{2r}(f)``,

    where ``n1 = N r(r-1)/2`` pairs of types share one host and
    ``n0 = C(N, 2) - n1`` share none: the first two factorial cumulants of the
    number of wiped types.  Past the point where this truncation stops
    decreasing in ``f`` (only in the far tail) it continues as ``exp(-S1)``.
    Exact for ``r = 1`` and ``r = 2`` (independent sets of the cycle ``C_N``).

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= r(r-1) + 1`` (a modular ruler must exist).
    r : int or array_like of int
        Redundancy, ``1 <= r <= N``.
    failures : int or array_like of int
        Failed groups ``f``, ``0 <= f <= N``.  All three broadcast.

    Returns
    -------
    float or numpy.ndarray
        Probability in ``[0, 1]``; ``1`` for ``f < r``, ``0`` for ``f = N``.
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    f = as_count_array(failures, "failures", minimum=0)
    N, r, f = np.broadcast_arrays(N, r, f)
    if np.any(f > N):
        raise ValueError(
            f"failures must be <= N, got failures={int(f[f > N][0])} > N={int(N[f > N][0])}"
        )
    _check_ruler_size(N, r)
    out = np.empty(N.shape, dtype=np.float64)
    pairs = np.stack([N.ravel(), r.ravel()], axis=1)
    flat_out, flat_f = out.reshape(-1), f.ravel()
    for n, k in np.unique(pairs, axis=0):
        sel = (pairs[:, 0] == n) & (pairs[:, 1] == k)
        flat_out[sel] = np.exp(_log_survival_sharp(flat_f[sel], int(n), int(k)))
    return _scalar_or_array(out)


def _tail_end(N: int, r: int) -> int:
    """Smallest ``f`` with ``log P(T > f) < _LOG_TAIL`` (bisection: the form is monotone)."""
    lo, hi = r, N
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(_log_survival_sharp(np.array(mid), N, r)) < _LOG_TAIL:
            hi = mid
        else:
            lo = mid
    return hi


@functools.lru_cache(maxsize=4096)
def _endurable_failures_one(N: int, r: int) -> float:
    if r == 1:
        return 1.0
    end = _tail_end(N, r)
    if end <= _DIRECT_TERMS:
        f = np.arange(end + 1, dtype=np.float64)
        return float(np.exp(_log_survival_sharp(f, N, r)).sum())
    # Long support: sum the first _DIRECT_TERMS terms, then
    # sum_{f=a}^{b} P(f) = int_a^b P + (P(a) + P(b))/2 + (P'(b) - P'(a))/12 + ...
    # with the smooth interpolant of P (its scale is ~mu >> 1, so the next
    # Euler-Maclaurin term is ~P/mu^3 and negligible).
    head = float(
        np.exp(_log_survival_sharp(np.arange(_DIRECT_TERMS, dtype=np.float64), N, r)).sum()
    )

    def P(x):
        return float(np.exp(_log_survival_sharp(np.array(x), N, r)))

    return head + _smooth_sum(P, _DIRECT_TERMS, end)


def _smooth_sum(P, a: int, b: int) -> float:
    """``sum_{x=a}^{b} P(x)`` for a function ``P`` smooth on ``[a, b]`` varying on scales ``>> 1``.

    Euler-Maclaurin: ``int_a^b P + (P(a) + P(b))/2 + (P'(b) - P'(a))/12``,
    the integral by adaptive quadrature, the derivatives by central
    differences (the next term, of order ``P^(3)/720``, is negligible at
    such scales).
    """
    a, b = float(a), float(b)

    def dP(x, h):
        return (P(x + h) - P(x - h)) / (2 * h)

    points = [a + (b - a) * q for q in (0.25, 0.5, 0.75)]
    body, _ = integrate.quad(P, a, b, points=points, limit=500, epsabs=0.0, epsrel=1e-10)
    h = max(1.0, 1e-4 * (b - a))
    return body + 0.5 * (P(a) + P(b)) + (dP(b, h) - dP(a, h)) / 12.0


def endurable_failures(N, r):
    """Sharp endurable failure count ``mu(N, r) = sum_{f=0}^{N} P(T > f)``.

    Sums :func:`wipeout_survival` (cyclic modular-ruler placement) term by
    term when the support is at most 1e5 failures long and otherwise by
    quadrature of its smooth interpolant with Euler-Maclaurin end terms;
    accurate to ``N = 1e12``.  Terms beyond ``log P < -60`` are dropped.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= r(r-1) + 1``.
    r : int or array_like of int
        Redundancy, ``1 <= r <= N``; broadcasts with ``N``.

    Returns
    -------
    float or numpy.ndarray
        Expected failures up to and including the wipe-out.
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    N, r = np.broadcast_arrays(N, r)
    _check_ruler_size(N, r)
    out = np.array([_endurable_failures_one(int(n), int(k)) for n, k in zip(N.ravel(), r.ravel())])
    return _scalar_or_array(out.reshape(N.shape))


# ---------------------------------------------------------------------------
# Exact enumeration
# ---------------------------------------------------------------------------

# Subsets are enumerated in blocks of 2**_BLOCK_BITS to bound memory (~100 MB).
_BLOCK_BITS = 20


def exact_wipeout_survival(hosts) -> np.ndarray:
    """Exact ``P(T > f)`` for ``f = 0..N`` by enumerating all ``2**N`` failure sets.

    A set of failed groups (an ``N``-bit mask ``S``) has wiped a type ``i``
    iff ``S`` contains its host mask ``R_i``; the survivors of size ``f``
    are counted for every ``f`` and divided by ``C(N, f)``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        Any valid placement (see :func:`spare_theory.placement.validate_hosts`)
        with ``N <= 24``.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of length ``N + 1``.
    """
    hosts = validate_hosts(hosts)
    N = hosts.shape[0]
    if N > EXACT_MAX_GROUPS:
        raise ValueError(f"hosts has N={N} groups; exact enumeration needs N <= {EXACT_MAX_GROUPS}")
    rows = np.unique((np.uint64(1) << hosts.astype(np.uint64)).sum(axis=1, dtype=np.uint64))
    rows = rows.astype(np.uint32)
    survivors = np.zeros(N + 1, dtype=np.int64)
    block = 1 << min(N, _BLOCK_BITS)
    for start in range(0, 1 << N, block):
        S = np.arange(start, start + block, dtype=np.uint32)
        wiped = np.zeros(block, dtype=bool)
        for row in rows:
            wiped |= (S & row) == row
        survivors += np.bincount(np.bitwise_count(S[~wiped]), minlength=N + 1)
    total = np.array([math.comb(N, f) for f in range(N + 1)], dtype=np.float64)
    return survivors / total


def exact_endurable_failures(hosts) -> float:
    """Exact ``E[T] = sum_f P(T > f)`` for a placement with ``N <= 24`` (failures).

    See :func:`exact_wipeout_survival`.
    """
    return float(exact_wipeout_survival(hosts).sum())
