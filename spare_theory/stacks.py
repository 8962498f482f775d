"""Exact minimum number of stack layers ``S*`` after a set of group failures.

With a set ``F`` of failed groups every shard type must be computed by one
surviving host; a host computes the types assigned to it one stack layer
each, and the synchronous step waits for the busiest host.  So

    S*(F) = min { S : there is an assignment type -> surviving host holding it
                      with at most S types per host }.

For a fixed ``S`` this is a bipartite ``b``-matching: a flow network
``source -> type`` (capacity 1), ``type -> host`` (capacity 1, surviving hosts
only), ``host -> sink`` (capacity ``S``) and ``S`` is feasible iff the maximum
flow is ``N``.  Feasibility is monotone in ``S``, and

    ceil(N / (N - |F|)) <= S*(F) <= r

(``N`` types on ``N - |F|`` hosts; every type keeps a surviving host, so
putting every type on any surviving host uses at most the ``r`` slots of that
host).  By Hall's theorem ``S*(F) = max_X ceil(|X| / |H(X)|)`` over sets ``X``
of types, ``H(X)`` their surviving hosts, which is how ``S*`` exceeds the
lower bound: a few hosts that are the only survivors of many types.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from ._validation import as_count_array
from .placement import validate_hosts

__all__ = ["WipedOut", "min_stacks", "stacks_lower_bound", "validate_failed"]


class WipedOut(ValueError):
    """Some shard type has lost all of its ``r`` hosts: a global restart is unavoidable.

    ``types`` holds the ids of the wiped-out types.

    Examples
    --------
    >>> from spare_theory import WipedOut, cyclic_placement, min_stacks
    >>> try:
    ...     min_stacks(cyclic_placement(7, 3), [0, 1, 3])  # the hosts of type 0
    ... except WipedOut as err:
    ...     print(err, err.types)
    types [0] have no surviving host (0,)
    """

    def __init__(self, message: str, types: Iterable[int] = ()) -> None:
        super().__init__(message)
        self.types = tuple(int(t) for t in types)


def validate_failed(
    failed: npt.ArrayLike | set[int] | frozenset[int], N: int, name: str = "failed"
) -> npt.NDArray[np.int64]:
    """``failed`` as a sorted ``int64`` array of distinct group ids in ``[0, N)``.

    Parameters
    ----------
    failed : sequence or set of int
        Failed group ids.
    N : int
        Number of groups.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        Sorted ``int64`` ids.

    Raises
    ------
    ValueError
        Naming ``name`` if an id is out of range, repeated or not an integer.

    Examples
    --------
    >>> from spare_theory.stacks import validate_failed
    >>> validate_failed({3, 1}, 7).tolist()
    [1, 3]
    """
    arr = np.asarray(list(failed) if isinstance(failed, (set, frozenset)) else failed)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of group ids, got shape {arr.shape}")
    arr = as_count_array(arr, name, minimum=0)
    if arr.max() >= N:
        raise ValueError(f"{name} must hold group ids in [0, N={N}), got {int(arr.max())}")
    out = np.unique(arr)
    if out.size != arr.size:
        raise ValueError(f"{name} must not repeat a group id")
    return out


def stacks_lower_bound(N: npt.ArrayLike, failures: npt.ArrayLike) -> int | npt.NDArray[np.int64]:
    """Lower bound ``ceil(N / (N - f))`` on ``S*`` after ``f`` failures.

    ``N`` types must be computed by ``N - f`` surviving groups, so the busiest
    group computes at least ``ceil(N / (N - f))`` of them.

    Parameters
    ----------
    N : int or array_like
        Number of groups (and of shard types), ``N >= 1``.
    failures : int or array_like
        Number of failed groups, ``0 <= f < N``; broadcasts against ``N``.

    Returns
    -------
    int or numpy.ndarray
        The bound (``int64`` array for array input).

    Examples
    --------
    >>> from spare_theory import stacks_lower_bound
    >>> stacks_lower_bound(100, [0, 50, 51]).tolist(), stacks_lower_bound(7, 3)
    ([1, 2, 3], 2)
    """
    N_arr = as_count_array(N, "N", minimum=1)
    f_arr = as_count_array(failures, "failures", minimum=0)
    N_arr, f_arr = np.broadcast_arrays(N_arr, f_arr)
    if np.any(f_arr >= N_arr):
        raise ValueError("failures must be < N (with N failures nothing survives)")
    out = -(-N_arr // (N_arr - f_arr))  # integer ceil
    return int(out) if out.ndim == 0 else out


def _surviving_edges(hosts: np.ndarray, failed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Type/host pairs of surviving hosts; raise :class:`WipedOut` if a type has none."""
    N = hosts.shape[0]
    alive = np.ones(N, dtype=bool)
    alive[failed] = False
    keep = alive[hosts]
    wiped = np.flatnonzero(~keep.any(axis=1))
    if wiped.size:
        raise WipedOut(f"types {wiped[:10].tolist()} have no surviving host", wiped)
    types = np.broadcast_to(np.arange(N)[:, None], hosts.shape)[keep]
    return types, hosts[keep]


def _feasible(N: int, types: np.ndarray, groups: np.ndarray, S: int) -> bool:
    """Max-flow test: can every type go to a surviving host with at most ``S`` per host?"""
    # Nodes: 0 source, 1..N types, N+1..2N hosts, 2N+1 sink.
    source, sink = 0, 2 * N + 1
    tails = np.concatenate([np.full(N, source), 1 + types, N + 1 + np.arange(N)])
    heads = np.concatenate([1 + np.arange(N), N + 1 + groups, np.full(N, sink)])
    caps = np.concatenate([np.ones(N + types.size, dtype=np.int32), np.full(N, S, dtype=np.int32)])
    graph = csr_matrix((caps, (tails, heads)), shape=(2 * N + 2, 2 * N + 2))
    return bool(maximum_flow(graph, source, sink, method="dinic").flow_value == N)


def min_stacks(hosts: npt.ArrayLike, failed: npt.ArrayLike | set[int] | frozenset[int]) -> int:
    """Exact ``S*(F)``: the fewest stack layers that cover every type after failures ``F``.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement (see :mod:`spare_theory.placement`).
    failed : sequence of int
        Distinct failed group ids in ``[0, N)``.

    Returns
    -------
    int
        ``S*``, with ``ceil(N/(N-|F|)) <= S* <= r``.  Found by a linear search
        upward from the lower bound (``S*`` is almost always the bound or one
        above it), each step a ``scipy.sparse.csgraph.maximum_flow`` test.

    Raises
    ------
    WipedOut
        If some type has no surviving host.
    ValueError
        If ``hosts`` is not a placement or ``failed`` is out of range or repeats.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, min_stacks
    >>> hosts = cyclic_placement(7, 3)
    >>> min_stacks(hosts, []), min_stacks(hosts, [0]), min_stacks(hosts, [0, 1])
    (1, 2, 2)
    """
    placement = validate_hosts(hosts)
    N, r = placement.shape
    failed_ids = validate_failed(failed, N)
    types, groups = _surviving_edges(placement, failed_ids)
    S = int(stacks_lower_bound(N, failed_ids.size))
    while r > S and not _feasible(N, types, groups, S):
        S += 1
    return S
