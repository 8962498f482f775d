"""Stacked placement of shard types on data-parallel groups.

Vocabulary (``docs/theory.md`` section 1):

* ``N`` data-parallel groups and ``N`` shard types; redundancy ``r``.
* A *placement* is an integer array ``hosts`` of shape ``(N, r)``:
  ``hosts[i, k]`` is the group that holds type ``i`` at stack position ``k``
  (``k = 0`` is the top of the stack).  Every row holds ``r`` distinct groups
  and every column is a permutation of ``range(N)``, so every group holds
  exactly ``r`` types and every stack layer covers every type exactly once.
* The cyclic placement on marks ``g_0 = 0 < ... < g_{r-1}`` is
  ``hosts[i, k] = (i + g_k) mod N``.  When the marks form a modular Golomb
  ruler (a Sidon set mod ``N``: all ``r(r-1)`` differences distinct mod
  ``N``), two types share at most one host group.

Rulers
------
``golomb_ruler(r)`` returns an optimal Golomb ruler for ``r <= 28`` (lengths
0, 1, 3, 6, ..., 585, proved optimal by exhaustive search, OEIS A003022).
For ``r > 28`` it returns a ruler built from Ruzsa's modular Sidon set
``{p*i + (p-1)*g**i mod p(p-1) : 1 <= i <= p-1}`` (``p`` the smallest prime
with ``p - 1 >= r``, ``g`` a primitive root mod ``p``), mapped by the affine
map ``x -> a*x mod p(p-1)`` (``gcd(a, p(p-1)) = 1``) and cut to the ``r``
cyclically consecutive elements of least span.  Its length is below
``p(p-1)`` and in practice about ``0.8 r**2`` (see ``docs/theory.md``).

``modular_ruler(N, r)`` needs ``N >= r(r-1) + 1`` (the ``r(r-1)`` non-zero
differences must be distinct residues).  It uses, in order: the ruler above
when ``N >= 2L + 1`` (an integer ruler of length ``L`` is modular for every
such ``N``); Ruzsa's set itself when ``N = p(p-1)``; a deterministic seeded
randomised greedy search.
"""

from __future__ import annotations

import csv
import functools
import math
import types
from collections.abc import Mapping
from importlib import resources

import numpy as np
import numpy.typing as npt

from .._validation import as_count, as_seed_sequence

__all__ = [
    "MAX_PLACEMENT_BYTES",
    "OPTIMAL_GOLOMB_RULERS",
    "contiguous_placement",
    "cyclic_placement",
    "golomb_ruler",
    "group_stacks",
    "is_golomb_ruler",
    "is_modular_ruler",
    "min_groups_for_ruler",
    "modular_ruler",
    "pair_overlap_counts",
    "random_placement",
    "validate_hosts",
]

#: Largest placement array :func:`cyclic_placement` builds (``8 N r`` bytes; 4 GiB, e.g.
#: N = 33 million groups at r = 16): larger ones are refused before any allocation.
MAX_PLACEMENT_BYTES = 2**32


def _load_optimal_rulers() -> Mapping[int, tuple[int, ...]]:
    """The package table ``data/optimal_golomb_rulers.csv`` as a read-only ``{r: marks}``."""
    text = (
        resources.files("spare_theory.placement")
        .joinpath("data/optimal_golomb_rulers.csv")
        .read_text()
    )
    rulers = {
        int(row["r"]): tuple(int(m) for m in row["marks"].split())
        for row in csv.DictReader(text.splitlines())
    }
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


def is_golomb_ruler(marks: npt.ArrayLike) -> bool:
    """True if all pairwise differences of ``marks`` are distinct integers.

    Parameters
    ----------
    marks : array_like of int
        Ruler marks (distinct integers).

    Returns
    -------
    bool
        ``a - b`` (``a != b`` marks) are pairwise distinct.

    Examples
    --------
    >>> from spare_theory.placement.placements import is_golomb_ruler
    >>> is_golomb_ruler([0, 1, 4, 6]), is_golomb_ruler([0, 1, 2])
    (True, False)
    """
    marks = np.asarray(marks, dtype=np.int64)
    diffs = _differences(marks)
    return len(np.unique(marks)) == len(marks) and len(np.unique(diffs)) == len(diffs)


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
    >>> from spare_theory.placement.placements import is_modular_ruler
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


@functools.cache
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


@functools.lru_cache(maxsize=4096)
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


def _check_marks(N: int, r: int, marks: npt.ArrayLike) -> np.ndarray:
    arr = np.asarray(marks)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or len(arr) != r:
        raise ValueError(f"marks must be {r} integers, got {marks!r}")
    arr = arr.astype(np.int64)
    if len(np.unique(arr % N)) != r:
        raise ValueError(f"marks must be distinct modulo N={N}, got {marks!r}")
    return arr


def cyclic_placement(
    N: int, r: int | None = None, marks: npt.ArrayLike | None = None
) -> npt.NDArray[np.int64]:
    """Cyclic placement ``hosts[i, k] = (i + marks[k]) mod N``.

    Parameters
    ----------
    N : int
        Number of groups (and of shard types).
    r : int, optional
        Redundancy; inferred from ``marks`` when omitted.
    marks : sequence of int, optional
        Ruler marks; defaults to :func:`modular_ruler` ``(N, r)``.  Any marks
        distinct modulo ``N`` give a valid placement; only a modular ruler
        guarantees that two types share at most one host.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(N, r)``.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> cyclic_placement(7, 3).tolist()  # marks (0, 1, 3): types share at most one host
    [[0, 1, 3], [1, 2, 4], [2, 3, 5], [3, 4, 6], [4, 5, 0], [5, 6, 1], [6, 0, 2]]
    """
    N = as_count(N, "N")
    if r is None:
        if marks is None:
            raise ValueError("r must be given when marks is omitted")
        r = len(np.atleast_1d(np.asarray(marks)))
    r = as_count(r, "r", maximum=N)
    if 8 * N * r > MAX_PLACEMENT_BYTES:  # checked before the ruler search and the allocation
        raise ValueError(
            f"N={N} with r={r}: the placement needs {8 * N * r / 2**30:.3g} GiB, more than "
            f"MAX_PLACEMENT_BYTES ({MAX_PLACEMENT_BYTES / 2**30:g} GiB)"
        )
    ruler = _check_marks(N, r, modular_ruler(N, r) if marks is None else marks)
    try:
        return (np.arange(N, dtype=np.int64)[:, None] + ruler[None, :]) % N
    except MemoryError:
        raise ValueError(
            f"N={N} with r={r}: the placement needs {8 * N * r / 2**30:.3g} GiB, "
            "more than can be allocated"
        ) from None


def contiguous_placement(N: int, r: int) -> npt.NDArray[np.int64]:
    """Cyclic placement on marks ``0, 1, ..., r-1`` (neighbours share ``r-1`` hosts).

    ``hosts[i, k] = (i + k) mod N``: the ablation baseline against the ruler.

    Parameters
    ----------
    N : int
        Number of groups.
    r : int
        Redundancy, ``1 <= r <= N``.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(N, r)``.

    Examples
    --------
    >>> from spare_theory import contiguous_placement
    >>> contiguous_placement(5, 2).tolist()
    [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]]
    """
    r = as_count(r, "r")
    return cyclic_placement(N, r, marks=np.arange(r))


def random_placement(
    N: int, r: int, *, seed: int | np.random.SeedSequence
) -> npt.NDArray[np.int64]:
    """A uniformly shuffled valid placement, for ablation against the ruler.

    Column ``k`` is a random permutation, repaired by random swaps until no row
    repeats a group.  Seeded and reproducible.

    Parameters
    ----------
    N : int
        Number of groups.
    r : int
        Redundancy, ``1 <= r <= N``.
    seed : int or numpy.random.SeedSequence
        Seed of the shuffle.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(N, r)`` (a valid placement).

    Examples
    --------
    >>> from spare_theory import random_placement
    >>> random_placement(6, 2, seed=0).tolist()
    [[3, 4], [2, 5], [5, 1], [4, 0], [0, 2], [1, 3]]
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    rng = np.random.default_rng(as_seed_sequence(seed))
    hosts = np.empty((N, r), dtype=np.int64)
    for k in range(r):
        column = rng.permutation(N)
        while True:
            clash = np.flatnonzero((hosts[:, :k] == column[:, None]).any(axis=1))
            if clash.size == 0:
                break
            # Swap each clashing entry with a random row; retry until clean.
            partners = rng.integers(0, N, size=clash.size)
            for i, j in zip(clash, partners):
                column[i], column[j] = column[j], column[i]
        hosts[:, k] = column
    return hosts


def validate_hosts(hosts: npt.ArrayLike, name: str = "hosts") -> npt.NDArray[np.int64]:
    """Check that ``hosts`` is a placement and return it as ``int64``.

    A placement has shape ``(N, r)`` with ``1 <= r <= N``, integer entries in
    ``[0, N)``, ``r`` distinct groups per row, and every column a permutation
    of ``range(N)``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        Candidate placement.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        ``hosts`` as an ``int64`` array.

    Raises
    ------
    ValueError
        Naming ``name`` and the rule broken.

    Examples
    --------
    >>> from spare_theory import validate_hosts
    >>> validate_hosts([[0, 1], [1, 2], [2, 0]]).shape
    (3, 2)
    >>> validate_hosts([[0, 1], [1, 0], [2, 2]])
    Traceback (most recent call last):
        ...
    ValueError: hosts rows must hold r=2 distinct groups
    """
    arr = np.asarray(hosts)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D (N, r) array, got shape {arr.shape}")
    if arr.dtype == bool or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    N, r = arr.shape
    if r > N:
        raise ValueError(f"{name} must have r <= N columns, got shape {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.min() < 0 or arr.max() >= N:
        raise ValueError(f"{name} entries must lie in [0, N={N}), got [{arr.min()}, {arr.max()}]")
    # Row blocks and single columns keep the extra memory O(N), not O(N r).
    for start in range(0, N if r > 1 else 0, 1 << 16):
        if np.any(np.diff(np.sort(arr[start : start + (1 << 16)], axis=1), axis=1) == 0):
            raise ValueError(f"{name} rows must hold r={r} distinct groups")
    if any(np.any(np.bincount(arr[:, k], minlength=N) != 1) for k in range(r)):
        raise ValueError(f"{name} columns must each be a permutation of range(N={N})")
    return arr


def group_stacks(hosts: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Stack of every group: ``stacks[g, k]`` is the type group ``g`` holds at position ``k``.

    The inverse of ``hosts`` column by column (each column is a permutation):
    ``stacks[hosts[i, k], k] = i``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of shape ``(N, r)``, type ids, top of the stack first.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.placements import group_stacks
    >>> group_stacks(cyclic_placement(7, 3))[:3].tolist()
    [[0, 6, 4], [1, 0, 5], [2, 1, 6]]
    """
    hosts = validate_hosts(hosts)
    N, r = hosts.shape
    stacks = np.empty_like(hosts)
    stacks[hosts, np.arange(r)[None, :]] = np.arange(N)[:, None]
    return stacks


def pair_overlap_counts(hosts: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``counts[j]`` = number of unordered type pairs that share exactly ``j`` hosts.

    For a modular Golomb ruler ``counts = [C(N,2) - N*C(r,2), N*C(r,2), 0, ...]``.
    Memory and time ``O(N r^2)``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of length ``r + 1``, summing to ``C(N, 2)``.

    Examples
    --------
    >>> from spare_theory import contiguous_placement, cyclic_placement
    >>> from spare_theory.placement.placements import pair_overlap_counts
    >>> pair_overlap_counts(cyclic_placement(7, 3)).tolist()  # the Fano plane: pairs meet once
    [0, 21, 0, 0]
    >>> pair_overlap_counts(contiguous_placement(7, 3)).tolist()
    [7, 7, 7, 0]
    """
    hosts = validate_hosts(hosts)
    N, r = hosts.shape
    stacks = group_stacks(hosts)
    # Every pair of types on the same group, as one integer key per pair.
    a, b = np.triu_indices(r, 1)
    lo = np.minimum(stacks[:, a], stacks[:, b]).ravel()
    hi = np.maximum(stacks[:, a], stacks[:, b]).ravel()
    _, shared = np.unique(lo * N + hi, return_counts=True)
    counts = np.bincount(shared, minlength=r + 1)
    counts[0] = N * (N - 1) // 2 - counts[1:].sum()
    return counts
