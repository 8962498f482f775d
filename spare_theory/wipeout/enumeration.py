"""Exact wipe-out law of any small placement by enumerating its failure sets.

``P(T > f)`` is the share of the ``C(N, f)`` sets of ``f`` failed groups that
contain no full row of ``hosts`` (no type lost all its hosts).  All ``2**N``
sets are enumerated as bit masks, so ``N <= 24``: the exact reference that
the sharp form (:mod:`spare_theory.wipeout.law`) and the Monte Carlo
(:mod:`spare_theory.wipeout.simulation`) are checked against on small
placements, ruler or not.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..placement.placements import validate_hosts

__all__ = [
    "EXACT_MAX_GROUPS",
    "RULER_MAX_GROUPS",
    "exact_endurable_failures",
    "exact_ruler_survival",
    "exact_wipeout_survival",
]

#: Largest ``N`` that :func:`exact_wipeout_survival` enumerates (``2**N`` sets).
EXACT_MAX_GROUPS = 24

#: Largest ``N`` that :func:`exact_ruler_survival` counts (up to ``2^N`` sets, in ``float64``).
RULER_MAX_GROUPS = 1000

# Subsets are enumerated in blocks of 2**_BLOCK_BITS to bound memory (~100 MB).
_BLOCK_BITS = 20


def _subsets(N: int) -> npt.NDArray[np.float64]:
    """``C(N, f)`` for ``f = 0..N``: the down sets of each size, all equally likely."""
    return np.array([math.comb(N, f) for f in range(N + 1)], dtype=np.float64)


def exact_wipeout_survival(hosts: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Exact ``P(T > f)`` for ``f = 0..N`` by enumerating all ``2**N`` failure sets.

    A set of failed groups (an ``N``-bit mask ``S``) has wiped a type ``i``
    iff ``S`` contains its host mask ``R_i``; the survivors of size ``f``
    are counted for every ``f`` and divided by ``C(N, f)``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        Any valid placement (see :func:`spare_theory.placement.placements.validate_hosts`)
        with ``N <= 24``.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of length ``N + 1``.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, exact_wipeout_survival
    >>> exact_wipeout_survival(cyclic_placement(7, 3, marks=(0, 1, 3))).round(4).tolist()
    [1.0, 1.0, 1.0, 0.8, 0.2, 0.0, 0.0, 0.0]
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
    return survivors / _subsets(N)


def exact_endurable_failures(hosts: npt.ArrayLike) -> float:
    """Exact ``E[T] = sum_f P(T > f)`` for a placement with ``N <= 24`` (failures).

    See :func:`exact_wipeout_survival`.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        Any valid placement with ``N <= 24``.

    Returns
    -------
    float
        Expected failures up to and including the wipe-out.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, exact_endurable_failures
    >>> print(round(exact_endurable_failures(cyclic_placement(7, 3, marks=(0, 1, 3))), 12))
    4.0
    """
    return float(exact_wipeout_survival(hosts).sum())


def exact_ruler_survival(N: int, marks: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Exact ``P(T > f)``, ``f = 0..N``, of the cyclic placement with ``marks`` (any ``N``).

    Type ``j`` is hosted on groups ``j + m mod N`` for ``m`` in ``marks``, so a
    failure set, read as bits ``b_0 .. b_{N-1}`` round the cycle, has wiped
    type ``j`` iff the window ``b_j .. b_{j+L}`` (``L = max(marks)``) has ones
    at every mark.  A transfer matrix walks the cycle carrying the last
    ``L`` bits and the count of ones, from each of the ``2^L`` possible
    first windows (which close the cycle at its end), and counts the sets of
    each size that wipe no type: ``O(4^L N^2)`` work and ``4^L (N + 1)``
    numbers of memory, against :func:`exact_wipeout_survival`'s ``2^N`` sets.

    Parameters
    ----------
    N : int
        Groups, ``max(marks) < N <= 1000`` (the counts, up to ``2^N``, are
        ``float64``).
    marks : array_like of int
        Distinct marks, ``0`` first; ``max(marks) <= 8`` (the rulers of
        ``r <= 4``; memory grows as ``4^max(marks)``).

    Returns
    -------
    numpy.ndarray
        ``float64`` array of length ``N + 1``.

    Examples
    --------
    >>> exact_ruler_survival(7, (0, 1, 3)).round(4).tolist()
    [1.0, 1.0, 1.0, 0.8, 0.2, 0.0, 0.0, 0.0]
    """
    marks = np.unique(np.asarray(marks, dtype=np.int64))
    L = int(marks[-1])
    if marks[0] != 0 or not 1 <= L <= 8 or N <= L:
        raise ValueError(f"marks must start at 0 and end between 1 and min(8, N - 1), got {marks}")
    if N > RULER_MAX_GROUPS:
        raise ValueError(f"N={N} is beyond {RULER_MAX_GROUPS}: the counts would overflow float64")
    W = 1 << L
    mask = int(sum(1 << (L - int(m)) for m in marks))  # bit L - m of a window is b_{j+m}
    lo = np.arange(W // 2)
    # ways[s, state, k]: first window s, last L bits state, k ones so far.
    ways = np.zeros((W, W, N + 1))
    first = np.arange(W)
    ways[first, first, np.bitwise_count(first)] = 1.0
    for p in range(L, N + L):
        forced = (first >> (L - 1 - (p - N))) & 1 if p >= N else None
        split = ways.reshape(W, 2, W // 2, N + 1)
        new = np.zeros_like(ways)
        for b in (0, 1):
            windows = (np.arange(2)[:, None] << L) | (lo[None, :] << 1) | b
            open_ = ((windows & mask) != mask)[None, :, :, None]
            kept = (split * open_).sum(axis=1)
            if forced is not None:
                # Closing the cycle: the bit is the first window's, already counted.
                new[:, (lo << 1) | b, :] += kept * (forced == b)[:, None, None]
            elif b:
                new[:, (lo << 1) | b, 1:] += kept[:, :, :-1]
            else:
                new[:, (lo << 1) | b, :] += kept
        ways = new
    survivors = ways.sum(axis=(0, 1))
    return survivors / _subsets(N)
