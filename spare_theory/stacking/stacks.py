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

Micro-batch splitting (beyond the SPARe paper)
----------------------------------------------
A shard is a batch of samples that a step already runs as several
micro-batches.  Cut every shard into ``m`` pieces and let each piece go to any
surviving host holding its type: the step then costs the largest host load
``L / m`` in shard units, ``L`` the most pieces on one host.  For a fixed
integer ``L`` this is a transportation problem, ``source -> type``
(capacity ``m``), ``type -> surviving host`` (capacity ``m``, i.e. unbounded),
``host -> sink`` (capacity ``L``), feasible iff the maximum flow is ``m N``.
By the max-flow min-cut theorem it is feasible iff ``m |X| <= L |H(X)|`` for
every set ``X`` of types, so

    min_load(F, m) = ceil(m rho*(F)) / m,     rho*(F) = max_X |X| / |H(X)|,

the fractional load ``rho*`` rounded up to the grid ``1/m``.  Hence
``min_load(F, 1) = S*(F)``, ``N/(N-|F|) <= rho* <= min_load <= S*``,
``min_load(F, k m) <= min_load(F, m)`` and ``min_load`` is non-decreasing in
``F`` (removing a host only shrinks ``H(X)``).  See :func:`min_load`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import (
    breadth_first_order,
    maximum_bipartite_matching,
    maximum_flow,
)

from .._validation import as_count, as_count_array
from ..placement.placements import validate_hosts

__all__ = [
    "WipedOut",
    "load_lower_bound",
    "min_load",
    "min_stacks",
    "stacks_lower_bound",
    "validate_failed",
]


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
    >>> from spare_theory.stacking.stacks import validate_failed
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
    """Can every type go to a surviving host with at most ``S`` per host?

    The max-flow test of the module docstring as a bipartite matching of the
    types to ``S`` slots per host (``scipy.sparse.csgraph.maximum_bipartite_matching``,
    Hopcroft-Karp): the flow is ``N`` iff every type is matched.  The graph
    is built directly in CSR form (``types`` come sorted from
    :func:`surviving_edges`): its construction from triplets cost more than
    the search at the simulator's sizes.
    """
    index = np.int32 if N * S < 2**31 - 1 else np.int64
    indptr = np.zeros(N + 1, dtype=index)
    np.cumsum(np.bincount(types, minlength=N) * S, out=indptr[1:])
    slots = (groups[:, None] * S + np.arange(S)).ravel().astype(index)
    graph = csr_matrix((np.ones(slots.size), slots, indptr), shape=(N, N * S))
    return bool((maximum_bipartite_matching(graph, perm_type="column") >= 0).all())


def least_stacks(N: int, r: int, types: np.ndarray, groups: np.ndarray, failures: int) -> int:
    """``S*`` from the surviving edges (:func:`surviving_edges`) of ``failures`` failed groups.

    The search of :func:`min_stacks` on inputs already checked: upward from
    ``ceil(N / (N - failures))``, at most ``r``.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.stacking.stacks import least_stacks, surviving_edges
    >>> types, groups = surviving_edges(cyclic_placement(7, 3), np.array([0, 1]))
    >>> least_stacks(7, 3, types, groups, 2)
    2
    """
    S = -(-N // (N - failures))
    while r > S and not _feasible(N, types, groups, S):
        S += 1
    return S


def min_stacks(hosts: npt.ArrayLike, failed: npt.ArrayLike | set[int] | frozenset[int]) -> int:
    """Exact ``S*(F)``: the fewest stack layers that cover every type after failures ``F``.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement (see :mod:`spare_theory.placement.placements`).
    failed : sequence of int
        Distinct failed group ids in ``[0, N)``.

    Returns
    -------
    int
        ``S*``, with ``ceil(N/(N-|F|)) <= S* <= r``.  Found by a linear search
        upward from the lower bound (``S*`` is almost always the bound or one
        above it), each step the max-flow test, answered by a bipartite matching.

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
    return least_stacks(N, r, types, groups, failed_ids.size)


def load_lower_bound(
    N: npt.ArrayLike, failures: npt.ArrayLike, microbatches: npt.ArrayLike = 1
) -> float | npt.NDArray[np.float64]:
    """Lower bound ``ceil(m N / (N - f)) / m`` on the load after ``f`` failures.

    ``m N`` pieces on ``N - f`` surviving groups: the busiest computes at least
    ``ceil(m N / (N - f))`` of them, each ``1/m`` of a shard.  ``m = 1`` is
    :func:`stacks_lower_bound`.

    Parameters
    ----------
    N : int or array_like
        Number of groups (and of shard types), ``N >= 1``.
    failures : int or array_like
        Number of failed groups, ``0 <= f < N``.
    microbatches : int or array_like
        Pieces per shard ``m >= 1``; broadcasts against ``N`` and ``failures``.

    Returns
    -------
    float or numpy.ndarray
        The bound in shard units (a multiple of ``1/m``).

    Examples
    --------
    >>> from spare_theory.stacking.stacks import load_lower_bound
    >>> load_lower_bound(292, [1, 40, 100], 8).tolist()
    [1.125, 1.25, 1.625]
    """
    N_arr, f_arr, m_arr = np.broadcast_arrays(
        as_count_array(N, "N", minimum=1),
        as_count_array(failures, "failures", minimum=0),
        as_count_array(microbatches, "microbatches", minimum=1),
    )
    if np.any(f_arr >= N_arr):
        raise ValueError("failures must be < N (with N failures nothing survives)")
    pieces = -(-(m_arr * N_arr) // (N_arr - f_arr))  # integer ceil
    out = pieces / m_arr
    return float(out) if out.ndim == 0 else out


def _piece_network(
    N: int, types: np.ndarray, groups: np.ndarray, m: int, L: int
) -> tuple[csr_matrix, int, int]:
    """Transportation network of :func:`min_load` at ``L`` pieces per host."""
    # Nodes: 0 source, 1..N types, N+1..2N hosts, 2N+1 sink.
    source, sink = 0, 2 * N + 1
    tails = np.concatenate([np.full(N, source), 1 + types, N + 1 + np.arange(N)])
    heads = np.concatenate([1 + np.arange(N), N + 1 + groups, np.full(N, sink)])
    caps = np.concatenate([np.full(N + types.size, m, dtype=np.int32), np.full(N, L, np.int32)])
    graph = csr_matrix((caps, (tails, heads)), shape=(2 * N + 2, 2 * N + 2))
    return graph, source, sink


def piece_flow(
    N: int, types: np.ndarray, groups: np.ndarray, m: int, L: int
) -> tuple[npt.NDArray[np.int64] | None, int]:
    """One max flow of the :func:`min_load` network at ``L`` pieces per host.

    ``types``, ``groups`` are the surviving edges (:func:`surviving_edges`).
    Returns ``(pieces, L)`` with ``pieces[e]`` the pieces sent along the edge
    ``types[e] -> groups[e]`` when every piece fits, else ``(None, L')`` with
    ``L' > L`` a certified lower bound on the optimum: the types ``X``
    left reachable from the source in the residual graph have all their
    surviving hosts ``H(X)`` reachable too (type-host edges never saturate on
    the cut, see the proof in :func:`min_load`), so ``L* >= ceil(m |X| / |H(X)|)``.
    """
    graph, source, sink = _piece_network(N, types, groups, m, L)
    result = maximum_flow(graph, source, sink, method="dinic")
    flow = result.flow
    if result.flow_value == m * N:
        edges = flow[1 + types, N + 1 + groups]
        return np.asarray(edges).ravel().astype(np.int64), L
    residual = (graph - flow).tocsr()
    residual.data = (residual.data > 0).astype(np.int8)
    residual.eliminate_zeros()
    reached = breadth_first_order(residual, source, directed=True, return_predecessors=False)
    side = np.zeros(2 * N + 2, dtype=bool)
    side[reached] = True
    X = np.flatnonzero(side[1 : N + 1])
    in_X = np.zeros(N, dtype=bool)
    in_X[X] = True
    H = np.unique(groups[in_X[types]])
    bound = -(-(m * X.size) // max(H.size, 1))
    return None, max(L + 1, int(bound))


def min_load(
    hosts: npt.ArrayLike,
    failed: npt.ArrayLike | set[int] | frozenset[int],
    *,
    microbatches: int,
) -> float:
    """Least possible largest host load when each shard is cut into ``microbatches`` pieces.

    Every type's ``m = microbatches`` pieces go to its surviving hosts (any
    split); the step waits for the busiest host, whose load is counted in
    shard units (``L`` pieces = ``L / m`` shards; a failure-free step is 1).

    ``L`` pieces per host is feasible iff the max flow of ``source -> type``
    (capacity ``m``), ``type -> surviving host`` (capacity ``m``, which is
    unbounded for a type with ``m`` pieces), ``host -> sink`` (capacity ``L``)
    is ``m N`` (``scipy.sparse.csgraph.maximum_flow``, integer capacities, so
    the flow is integral).  Equivalently (max-flow min-cut)
    ``L >= m |X| / |H(X)|`` for every set ``X`` of types with surviving hosts
    ``H(X)``, so the answer is ``ceil(m rho*) / m`` with
    ``rho* = max_X |X| / |H(X)|``.

    **Search over L: a certified-cut (Newton / Dinkelbach) search**, not a
    bisection.  It starts at the lower bound ``ceil(m N / (N - f))``; when a
    flow falls short, the types ``X`` still reachable from the source in the
    residual graph violate the cut condition, and since their type-host edges
    are not saturated across the cut (a type with a saturated edge to an
    unreached host sends its whole supply there, so nothing in the residual
    graph could have reached it) all of ``H(X)`` is reached, and
    ``ceil(m |X| / |H(X)|) > L`` is a lower bound on the optimum: the search
    jumps there.  Every step is a lower bound, so the first feasible ``L``
    is optimal.  Why not bisection over ``[ceil(mN/(N-f)), m r]``: the
    optimum is almost always the bound or a few pieces above it, so the
    certified search costs one flow (bound feasible) or two, against the
    ``log2(m r)`` flows (7 at ``m = 8, r = 12``) of a bisection.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement (see :mod:`spare_theory.placement.placements`).
    failed : sequence of int
        Distinct failed group ids in ``[0, N)``.
    microbatches : int
        Pieces per shard, ``m >= 1``.  ``m = 1`` is :func:`min_stacks`.

    Returns
    -------
    float
        The least largest load, a multiple of ``1/m`` in shard units, with
        ``ceil(m N/(N - f))/m <= min_load <= min_stacks``.

    Raises
    ------
    WipedOut
        If some type has no surviving host.
    ValueError
        If ``hosts`` is not a placement, ``failed`` is out of range or
        repeats, or ``microbatches < 1``.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, min_load
    >>> hosts = cyclic_placement(7, 3)
    >>> [min_load(hosts, [0], microbatches=m) for m in (1, 2, 4, 6)]
    [2.0, 1.5, 1.25, 1.1666666666666667]
    >>> min_load(hosts, [0, 1], microbatches=4)  # 7 types on 5 hosts: 28 pieces, 6 on the busiest
    1.5
    """
    placement = validate_hosts(hosts)
    N = placement.shape[0]
    m = as_count(microbatches, "microbatches", minimum=1)
    failed_ids = validate_failed(failed, N)
    types, groups = _surviving_edges(placement, failed_ids)
    L = -(-(m * N) // (N - failed_ids.size))
    while True:
        pieces, bound = piece_flow(N, types, groups, m, L)
        if pieces is not None:
            return L / m
        L = bound


def surviving_edges(
    hosts: np.ndarray, failed: np.ndarray
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Type/host pairs ``(types[e], groups[e])`` on surviving hosts, type by type.

    Raises :class:`WipedOut` if some type has none.  ``hosts`` and ``failed``
    must already be validated (:func:`spare_theory.placement.placements.validate_hosts`,
    :func:`validate_failed`).

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.stacking.stacks import surviving_edges
    >>> types, groups = surviving_edges(cyclic_placement(7, 3), np.array([0]))
    >>> types[:4].tolist(), groups[:4].tolist()
    ([0, 0, 1, 1], [1, 3, 1, 2])
    """
    return _surviving_edges(hosts, failed)
