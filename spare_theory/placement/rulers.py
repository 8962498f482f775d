"""Golomb and modular rulers: the marks that cyclic placements are built on.

A *Golomb ruler* is a set of integer marks ``0 = g_0 < ... < g_{r-1}`` whose
``r(r-1)/2`` pairwise differences are distinct; its length is ``g_{r-1}``.
A *modular ruler* mod ``N`` (a Sidon set mod ``N``) has its ``r(r-1)``
ordered differences distinct and non-zero modulo ``N``: the cyclic placement
on it (:mod:`spare_theory.placement.placements`) lets two types share at most
one host group.

``golomb_ruler(r)`` returns an optimal Golomb ruler for ``r <= 28`` (lengths
0, 1, 3, 6, ..., 585, proved optimal by exhaustive search, OEIS A003022; the
table is package data, ``placement/data/optimal_golomb_rulers.csv``, with its
source in the README beside it).
For ``r > 28`` it returns a ruler built from Ruzsa's modular Sidon set
``{p*i + (p-1)*g**i mod p(p-1) : 1 <= i <= p-1}`` (``p`` the smallest prime
with ``p - 1 >= r``, ``g`` a primitive root mod ``p``), mapped by the affine
map ``x -> a*x mod p(p-1)`` (``gcd(a, p(p-1)) = 1``) and cut to the ``r``
cyclically consecutive elements of least span.  Its length is below
``p(p-1)`` and in practice about ``0.8 r**2`` (see ``docs/theory.md``).

``modular_ruler(N, r)`` needs ``N >= r(r-1) + 1`` (the ``r(r-1)`` non-zero
differences must be distinct residues, :func:`min_groups_for_ruler`).  It
uses, in order: the ruler above when ``N >= 2L + 1`` (an integer ruler of
length ``L`` is modular for every such ``N``); Ruzsa's set itself when
``N = p(p-1)``; a deterministic seeded randomised greedy search.
"""

from __future__ import annotations

import csv
import math
import types
from collections.abc import Mapping
from importlib import resources

import numpy as np
import numpy.typing as npt

from .._caching import cached
from .._validation import as_count

__all__ = [
    "OPTIMAL_GOLOMB_RULERS",
    "golomb_ruler",
    "is_modular_ruler",
    "min_groups_for_ruler",
    "modular_ruler",
]


def _load_optimal_rulers() -> Mapping[int, tuple[int, ...]]:
    """The package table ``data/optimal_golomb_rulers.csv`` as a read-only ``{r: marks}``."""
    table = resources.files("spare_theory.placement").joinpath("data/optimal_golomb_rulers.csv")
    rows = csv.DictReader(table.read_text().splitlines())
    rulers = {int(row["r"]): tuple(int(m) for m in row["marks"].split()) for row in rows}
    return types.MappingProxyType(rulers)


#: Optimal Golomb rulers (marks) for r = 1..28, read-only; lengths are OEIS A003022
#: (source in ``placement/data/README.md``).
OPTIMAL_GOLOMB_RULERS = _load_optimal_rulers()

# Effort of the randomised greedy search for a modular ruler (restarts).  Fixed
# so that the search, and every placement built on it, is reproducible.
_SEARCH_SEED = 20240917
_SEARCH_RESTARTS = 300


def _differences(marks: np.ndarray) -> np.ndarray:
    """All ``r(r-1)`` ordered non-zero differences ``a - b`` (``a != b``)."""
    diff = marks[:, None] - marks[None, :]
    return diff[~np.eye(len(marks), dtype=bool)]


def is_modular_ruler(marks: npt.ArrayLike, N: int) -> bool:
    """True if the ``r(r-1)`` differences of ``marks`` are distinct and non-zero mod ``N``.

    Then two types of the cyclic placement on ``marks`` share at most one host.

    Parameters
    ----------
    marks : array_like of int
        Ruler marks.
    N : int
        Modulus (number of groups), ``N >= 1``.

    Returns
    -------
    bool

    Examples
    --------
    >>> from spare_theory.placement.rulers import is_modular_ruler
    >>> is_modular_ruler([0, 1, 4, 6], 13), is_modular_ruler([0, 1, 4, 6], 12)
    (True, False)
    """
    N = as_count(N, "N")
    marks = np.asarray(marks, dtype=np.int64)
    diffs = _differences(marks) % N
    return (
        len(np.unique(marks % N)) == len(marks)
        and bool(np.all(diffs != 0))
        and len(np.unique(diffs)) == len(diffs)
    )


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))


def _primitive_root(p: int) -> int:
    factors = [q for q in range(2, p) if (p - 1) % q == 0 and _is_prime(q)]
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // q, p) != 1 for q in factors))


def _ruzsa_set(p: int) -> np.ndarray:
    """Ruzsa's Sidon set of ``p - 1`` residues modulo ``p(p-1)`` (``p`` prime)."""
    g = _primitive_root(p)
    i = np.arange(1, p, dtype=np.int64)
    powers = np.array([pow(g, int(k), p) for k in i], dtype=np.int64)
    return np.sort((p * i + (p - 1) * powers) % (p * (p - 1)))


def _shortest_window(residues: np.ndarray, modulus: int, r: int) -> tuple[int, np.ndarray]:
    """The ``r`` cyclically consecutive residues of least span, shifted to start at 0."""
    x = np.sort(residues)
    ext = np.concatenate([x, x + modulus])
    starts = np.arange(len(x))
    spans = ext[starts + r - 1] - ext[starts]
    best = int(np.argmin(spans))
    return int(spans[best]), ext[best : best + r] - ext[best]


# Largest r for which golomb_ruler builds a ruler: r(r-1)+1 <= N groups then
# needs N >= 1e10, beyond any cluster; and it bounds the construction's cost.
MAX_CONSTRUCTED_MARKS = 100_000
# Budget of the affine search: multipliers tried times set size (element ops).
_AFFINE_BUDGET = 20_000_000


def _next_prime_above(r: int) -> int:
    p = r + 1
    while not _is_prime(p):
        p += 1
    return p


@cached(maxsize=None)
def _constructed_ruler(r: int) -> tuple[int, ...]:
    p = _next_prime_above(r)
    modulus = p * (p - 1)
    base = _ruzsa_set(p)
    # Every unit multiplier for small p (r <= 64 tries all of them); beyond, an
    # evenly spread deterministic sample within the budget.  a and -a mirror
    # each other (same span), so only a < modulus/2 is needed.
    candidates = np.arange(1, modulus // 2 + 1)
    tries = max(64, _AFFINE_BUDGET // p)
    if candidates.size > 4 * tries:
        candidates = np.unique(np.linspace(1, modulus // 2, 4 * tries).astype(np.int64))
    units = candidates[np.gcd(candidates, modulus) == 1][:tries]
    best_span, best = modulus, base[:r] - base[0]  # replaced: multiplier 1 is a unit
    for a in units:
        span, window = _shortest_window((int(a) * base) % modulus, modulus, r)
        if span < best_span:
            best_span, best = span, window
    return tuple(int(v) for v in best)


def golomb_ruler(r: int) -> tuple[int, ...]:
    """A Golomb ruler with ``r`` marks, starting at 0.

    Parameters
    ----------
    r : int
        Number of marks, ``r >= 1``.

    Returns
    -------
    tuple of int
        Marks ``0 = g_0 < g_1 < ... < g_{r-1}``; the length is ``g_{r-1}``.
        Optimal for ``r <= 28``; for ``r > 28`` the affine-optimised Ruzsa
        construction described in the module docstring.

    Examples
    --------
    >>> from spare_theory import golomb_ruler
    >>> golomb_ruler(5)
    (0, 1, 4, 9, 11)
    >>> golomb_ruler(30)[-1]  # constructed: length about 0.8 r**2
    737
    """
    r = as_count(r, "r", maximum=MAX_CONSTRUCTED_MARKS)
    if r in OPTIMAL_GOLOMB_RULERS:
        return OPTIMAL_GOLOMB_RULERS[r]
    return _constructed_ruler(r)


def _known_groups(r: int) -> int:
    """An ``N`` known to admit a modular ruler, without building one (``r`` may be huge).

    ``2L + 1`` for an optimal ruler of length ``L``; past the table the
    construction's length is below ``p(p-1)``, so ``2p(p-1) - 1``.
    """
    if r in OPTIMAL_GOLOMB_RULERS:
        return 2 * OPTIMAL_GOLOMB_RULERS[r][-1] + 1
    p = _next_prime_above(r)
    return 2 * p * (p - 1) - 1


def min_groups_for_ruler(r: int) -> int:
    """``r(r-1) + 1``: no modular ruler with ``r`` marks exists for fewer groups.

    The ``r(r-1)`` differences must be distinct non-zero residues mod ``N``.

    Parameters
    ----------
    r : int
        Number of marks, ``r >= 1``.

    Returns
    -------
    int
        Groups.

    Examples
    --------
    >>> from spare_theory import min_groups_for_ruler
    >>> min_groups_for_ruler(4)
    13
    """
    r = as_count(r, "r")
    return r * (r - 1) + 1


def _greedy_search(N: int, r: int) -> tuple[int, ...] | None:
    """Seeded randomised greedy search for a Sidon set of size ``r`` mod ``N``.

    Each restart grows a set ``A`` from ``{0}`` by adding a uniformly random
    feasible residue ``x``: one whose new differences ``±(x - a)`` are unused
    (the set of used differences is symmetric, so one sign suffices) and
    distinct among themselves (``x - a == b - x`` means ``2x == a + b``, with
    ``a == b`` allowed).  Deterministic: the seed and restart budget are fixed.
    """
    rng = np.random.default_rng([_SEARCH_SEED, N, r])
    residues = np.arange(N, dtype=np.int64)
    for _ in range(_SEARCH_RESTARTS):
        marks = np.zeros(1, dtype=np.int64)
        used = np.zeros(N, dtype=bool)
        while len(marks) < r:
            d_plus = (residues[:, None] - marks[None, :]) % N
            pair_sums = ((marks[:, None] + marks[None, :]) % N).ravel()
            feasible = ~(
                used[d_plus].any(axis=1)
                | (d_plus == 0).any(axis=1)
                | np.isin((2 * residues) % N, pair_sums)
            )
            options = np.flatnonzero(feasible)
            if options.size == 0:
                break
            x = int(rng.choice(options))
            used[(x - marks) % N] = True
            used[(marks - x) % N] = True
            marks = np.append(marks, x)
        if len(marks) == r:
            return tuple(int(m) for m in np.sort(marks))
    return None


@cached(maxsize=4096, shared=True)
def _modular_ruler_cached(N: int, r: int) -> tuple[int, ...] | None:
    ruler = golomb_ruler(r)
    if 2 * ruler[-1] + 1 <= N:
        return ruler
    p = math.isqrt(N) + 1
    if p * (p - 1) == N and _is_prime(p) and r <= p - 1:
        return tuple(int(v) for v in _ruzsa_set(p)[:r] - _ruzsa_set(p)[0])
    return _greedy_search(N, r)


def modular_ruler(N: int, r: int) -> tuple[int, ...]:
    """Marks whose ``r(r-1)`` pairwise differences are distinct modulo ``N``.

    Parameters
    ----------
    N : int
        Number of data-parallel groups (the modulus), ``N >= r(r-1) + 1``.
    r : int
        Redundancy: number of marks, ``r >= 1``.

    Returns
    -------
    tuple of int
        Sorted marks in ``[0, N)`` starting at 0.

    Raises
    ------
    ValueError
        If ``N < r(r-1) + 1`` (no such ruler exists), or if the construction
        and the seeded search find none; the message names ``N``, ``r`` and the
        smallest ``N`` known to work.

    Examples
    --------
    >>> from spare_theory import modular_ruler
    >>> modular_ruler(13, 4)  # a perfect difference set: every non-zero residue once
    (0, 1, 4, 6)
    """
    r = as_count(r, "r")
    N = as_count(N, "N")
    if min_groups_for_ruler(r) > N:
        raise ValueError(
            f"N={N} is too small for a modular ruler with r={r} marks: one needs "
            f"N >= r(r-1)+1 = {min_groups_for_ruler(r)}; N >= {_known_groups(r)} is known to work"
        )
    marks = _modular_ruler_cached(N, r)
    if marks is None:
        raise ValueError(
            f"no modular ruler with r={r} marks found for N={N} (construction and "
            f"seeded search failed); N >= {2 * golomb_ruler(r)[-1] + 1} is known to work"
        )
    return marks
