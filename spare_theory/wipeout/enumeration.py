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

__all__ = ["EXACT_MAX_GROUPS", "exact_endurable_failures", "exact_wipeout_survival"]

#: Largest ``N`` that :func:`exact_wipeout_survival` enumerates (``2**N`` sets).
EXACT_MAX_GROUPS = 24

# Subsets are enumerated in blocks of 2**_BLOCK_BITS to bound memory (~100 MB).
_BLOCK_BITS = 20


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
    total = np.array([math.comb(N, f) for f in range(N + 1)], dtype=np.float64)
    return survivors / total


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
