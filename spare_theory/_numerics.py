"""Numerical kernels shared by the closed forms (lowest layer: imports nothing from the package).

* :func:`log_falling_ratio`: ``log[(f)_k / (N)_k]``, the probability that ``k``
  given groups are all among ``f`` failed ones, stable for ``N`` up to 1e12.
* :func:`smooth_sum`: ``sum_{x=a}^{b} P(x)`` for a smooth ``P`` by quadrature
  and Euler-Maclaurin end terms, for supports too long to sum term by term.
* :data:`DIRECT_SUM_TERMS`: the support length up to which sums are taken
  term by term.
* :func:`restart_fixed_point`: the mean hours between restarts that a model
  priced at those very restarts gives back (outages and pool waits they end).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import integrate, optimize

__all__ = [
    "DIRECT_SUM_TERMS",
    "log1mexp",
    "log_falling_ratio",
    "restart_fixed_point",
    "smooth_sum",
]

#: Supports up to this many terms are summed term by term; longer ones by
#: :func:`smooth_sum` (quadrature plus Euler-Maclaurin end corrections).
DIRECT_SUM_TERMS = 100_000


def log_falling_ratio(f: npt.ArrayLike, N: int, k: int) -> npt.NDArray[np.float64]:
    """``log p_k(f) = log[(f)_k / (N)_k]``: all of ``k`` given groups are among ``f`` failed.

    ``(f)_k = f (f - 1) ... (f - k + 1)`` is the falling factorial, so
    ``p_k(f) = prod_{j<k} (f - j) / (N - j)``.  Summed as
    ``sum_{j<k} log1p((f - N) / (N - j))`` so that it stays exact for ``f``
    close to ``N`` and for ``N`` up to 1e12; ``-inf`` for ``f <= k - 1``
    (fewer than ``k`` failures).  ``f`` may be real (the smooth continuation).

    Parameters
    ----------
    f : array_like of float
        Failed groups, ``0 <= f <= N``.
    N : int
        Number of groups.
    k : int
        Number of given groups, ``k >= 0``.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of the shape of ``f`` (natural log, ``<= 0``).

    Examples
    --------
    >>> from spare_theory._numerics import log_falling_ratio
    >>> import numpy as np
    >>> print(np.round(np.exp(log_falling_ratio([1, 2, 3], 4, 2)), 4))  # C(f,2)/C(4,2)
    [0.     0.1667 0.5   ]
    """
    f = np.asarray(f, dtype=np.float64)
    out = np.zeros_like(f)
    below = f - N
    # Terms with f <= j are -inf or NaN here; every such f gets -inf below.
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(k):
            out += np.log1p(below / (N - j))
    return np.where(f > k - 1, out, -np.inf) if k else out


def smooth_sum(P: Callable[[float], float], a: int, b: int) -> float:
    """``sum_{x=a}^{b} P(x)`` for a function ``P`` smooth on ``[a, b]`` varying on scales ``>> 1``.

    Euler-Maclaurin: ``int_a^b P + (P(a) + P(b))/2 + (P'(b) - P'(a))/12``,
    the integral by adaptive quadrature (relative tolerance 1e-10, break
    points at the geometric quarters of ``[a + 1, b + 1]``), the
    derivatives by central differences with step ``max(1, 1e-4 (b - a))``
    (the next term, of order ``P'''/720``, is negligible at such scales).

    Parameters
    ----------
    P : callable
        ``P(x) -> float`` for real ``x`` in ``[a - h, b + h]``.
    a, b : int
        First and last term, ``a <= b``.

    Returns
    -------
    float
        The sum (units of ``P``).

    Examples
    --------
    >>> from spare_theory._numerics import smooth_sum
    >>> import math
    >>> exact = sum(math.exp(-x / 1000) for x in range(10, 5001))
    >>> print(round(smooth_sum(lambda x: math.exp(-x / 1000), 10, 5000) / exact, 9))
    1.0
    """
    lo, hi = float(a), float(b)

    def dP(x: float, h: float) -> float:
        return (P(x + h) - P(x - h)) / (2 * h)

    # Break points spaced geometrically: the summands fall like a power of x over
    # many decades (N = 1e12: 1e5 to 2e11), and evenly spaced ones leave the mass
    # near a to one interval, where quad reports roundoff instead of converging.
    points = np.geomspace(lo + 1.0, hi + 1.0, 5)[1:-1] - 1.0
    body, _ = integrate.quad(P, lo, hi, points=points, limit=500, epsabs=0.0, epsrel=1e-10)
    h = max(1.0, 1e-4 * (hi - lo))
    return float(body + 0.5 * (P(lo) + P(hi)) + (dP(hi, h) - dP(lo, h)) / 12.0)


def log1mexp(x: npt.ArrayLike) -> np.ndarray:
    """``log(1 - e^x)`` for ``x <= 0``, accurate at both ends.

    ``log(-expm1(x))`` for ``x > -log 2`` and ``log1p(-exp(x))`` below (each
    where it does not cancel); ``-inf`` at ``x = 0``.

    Examples
    --------
    >>> print(np.round(log1mexp([-1e-10, -1.0, -50.0]), 6))
    [-23.025851  -0.458675  -0.      ]
    """
    x = np.asarray(x, dtype=float)
    near = x > -math.log(2)
    out = np.empty_like(x)
    # Each branch only where it is accurate (and computed only there: hot loop).
    with np.errstate(divide="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        out[~near] = np.log1p(-np.exp(x[~near]))
    return out


def restart_fixed_point(
    priced_at: Callable[[float], tuple[float | None, Any]],
    *,
    rtol: float = 1e-4,
    max_steps: int = 30,
) -> Any:
    """What ``priced_at`` gives at the fixed point ``T = h(T)`` of a non-increasing ``h``.

    ``priced_at(T) -> (h(T), priced)``: a model priced with restarts ``T``
    hours apart (``inf``: none) and the mean hours ``h(T)`` between the
    restarts it finds (``None``: restarts change nothing there, so
    ``priced`` is the answer).  Shorter cycles cut the outages that restarts
    end, and shorter outages lengthen the cycle, so ``h`` does not increase
    and ``T``, ``h(T)`` lie on either side of the fixed point.  Iterated
    from ``inf`` until a step moves less than ``rtol`` of itself; where the
    iterates do not contract (a step more than half the one before), solved
    between an iterate and its image (``scipy.optimize.brentq``).  A cycle
    that never ends (``h = inf``) ends no outage: the answer at ``inf``.

    Examples
    --------
    >>> h = lambda T: 10.0 / (1.0 + 0.5 * min(T, 1e9))  # a cycle falling with T
    >>> T = restart_fixed_point(lambda T: (h(T), T))
    >>> round(T, 3), round(h(T), 3)
    (3.583, 3.583)
    """
    hours, gap = math.inf, math.inf
    for _ in range(max_steps):
        found, priced = priced_at(hours)
        if found is None or abs(found - hours) <= rtol * found:
            return priced
        if not math.isfinite(found):
            return priced if math.isinf(hours) else priced_at(math.inf)[1]
        if abs(found - hours) > gap / 2:
            return _solved_between(priced_at, hours, found, rtol)
        gap, hours = abs(found - hours), found
    return priced


def _solved_between(
    priced_at: Callable[[float], tuple[float | None, Any]], a: float, b: float, rtol: float
) -> Any:
    """:func:`restart_fixed_point` by brentq between ``a`` and ``b``: what it priced at the
    root (brentq returns a point it evaluated, so it is not priced again)."""
    seen: dict[float, Any] = {}

    def gap_at(t: float) -> float:
        seen[t] = priced_at(t)
        return float(seen[t][0] or t) - t

    return seen[optimize.brentq(gap_at, *sorted((a, b)), rtol=rtol)][1]
