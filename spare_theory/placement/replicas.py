"""Replica sets: which groups hold copies of the same shard under Rep.

Rep with redundancy ``r`` cuts the ``N`` groups into disjoint replica sets;
every group of a set computes the same shard, and the job survives while each
set keeps a member.  Two layouts are in use, and this is the one place that
defines them:

- ``"balanced"`` (the hour-level model and simulation): ``s = floor(N/r)``
  sets, group ``g`` in set ``g mod s``; the ``N mod r`` left-over groups join
  as many sets as extra replicas, so every shard has at least ``r`` replicas
  and the throughput is ``s / N``.
- ``"consecutive"`` (the published step-level simulator, reproduced by
  :mod:`spare_theory.steps`): ``ceil(N/r)`` sets of consecutive ids,
  group ``g`` in set ``g // r``; when ``r`` does not divide ``N`` the last set
  is smaller, a layout the published binary uses.

Both coincide when ``r`` divides ``N``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._validation import as_choice, as_count

__all__ = ["REPLICA_LAYOUTS", "replica_set_sizes", "replica_sets"]

#: Layouts accepted by :func:`replica_sets`.
REPLICA_LAYOUTS = ("balanced", "consecutive")


def replica_sets(N: int, r: int, *, layout: str = "balanced") -> npt.NDArray[np.int64]:
    """The replica set of each of ``N`` groups under Rep with ``r`` replicas.

    Parameters
    ----------
    N : int
        Groups, ``>= 1``.
    r : int
        Replicas per shard, ``1 <= r <= N``.
    layout : {"balanced", "consecutive"}
        ``"balanced"``: set ``g mod floor(N/r)``; ``"consecutive"``: set
        ``g // r`` (module docstring).

    Returns
    -------
    numpy.ndarray of int64
        ``sets[g]``, the set index of group ``g``, shape ``(N,)``.

    Raises
    ------
    ValueError
        Naming ``N``, ``r`` or ``layout``.

    Examples
    --------
    >>> replica_sets(7, 3).tolist(), replica_sets(7, 3, layout="consecutive").tolist()
    ([0, 1, 0, 1, 0, 1, 0], [0, 0, 0, 1, 1, 1, 2])
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    layout = as_choice(layout, "layout", REPLICA_LAYOUTS)
    groups = np.arange(N, dtype=np.int64)
    return groups % (N // r) if layout == "balanced" else groups // r


def replica_set_sizes(N: int, r: int, *, layout: str = "balanced") -> npt.NDArray[np.int64]:
    """Groups in each replica set: ``bincount(replica_sets(N, r, layout=layout))``.

    Examples
    --------
    >>> replica_set_sizes(7, 3).tolist(), replica_set_sizes(7, 3, layout="consecutive").tolist()
    ([4, 3], [3, 3, 1])
    """
    return np.bincount(replica_sets(N, r, layout=layout))
