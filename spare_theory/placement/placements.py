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
  ``N``, :mod:`spare_theory.placement.rulers`), two types share at most one
  host group.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._validation import as_count, as_seed_sequence
from .rulers import modular_ruler

__all__ = [
    "MAX_PLACEMENT_BYTES",
    "contiguous_placement",
    "cyclic_placement",
    "group_stacks",
    "pair_overlap_counts",
    "random_placement",
    "validate_hosts",
]

#: Largest placement array :func:`cyclic_placement` builds (``8 N r`` bytes; 4 GiB, e.g.
#: N = 33 million groups at r = 16): larger ones are refused before any allocation.
MAX_PLACEMENT_BYTES = 2**32


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
