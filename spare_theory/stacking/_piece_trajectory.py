"""Fast exact micro-batch load trajectories: compiled piece-flow repair on flat arrays.

The same algorithm as the ``microbatches = m > 1`` branch of
:class:`spare_theory.stacking.reordering.ReorderingController`, restated on ``int64``
arrays so that it compiles with numba (as :mod:`spare_theory.stacking._trajectory`
does for whole shards, ``m = 1``):

* ``pieces[t, k]``: pieces of type ``t`` on its host ``hosts[t, k]``, at
  most ``L`` pieces a host (``load[h]``); ``slot[h, j]`` is the index ``k``
  with ``hosts[stacks[h, j], k] == h``, so the pieces a host computes are
  read from its stack without per-host dictionaries;
* when group ``g`` fails, first the wipe-out test (a type of ``g`` whose only
  surviving host is ``g``), ``O(r)`` with a count of surviving hosts per type;
* ``L`` rises at once to the counting bound ``ceil(m N / (N - f))``
  (:func:`spare_theory.stacking.stacks.load_lower_bound`; the load can never be below
  it, and the raise gives hosts spare room);
* each orphaned type first fills its own surviving hosts with spare room,
  then routes its remaining pieces along shortest augmenting paths guided by
  distance labels (residual edge ``h -> h2``: ``h`` computes a piece of a
  type that ``h2`` holds), each path carrying its bottleneck; an orphan with
  no path proves that the max flow at ``L`` falls short (see the
  controller), so ``L`` grows by one piece.

The load ``min_load`` is unique, so the trajectory equals the controller's
exactly (the piece plans may differ).  Measured on ``N = 4096``, ``r = 12``,
``m = 8``: ``bench/bench_microbatch.py``.  Without numba the same code runs as
plain Python (slow, but the same numbers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._jit import COMPILED, compiled
from .._validation import as_count, as_count_array

__all__ = ["COMPILED", "host_slots", "load_trajectory_from_arrays"]

# Label of a host with no residual path to spare capacity.
_INF = 1 << 40

# Return codes of the kernel below 0: the order is bad at position f, code
# -2 f - 1 (group out of range) or -2 f - 2 (group repeated).


def host_slots(hosts: np.ndarray, stacks: np.ndarray) -> npt.NDArray[np.int64]:
    """``slot[h, j]``: the column ``k`` with ``hosts[stacks[h, j], k] == h`` (shape ``(N, r)``).

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.placements import group_stacks
    >>> from spare_theory.stacking._piece_trajectory import host_slots
    >>> hosts = cyclic_placement(7, 3)
    >>> stacks = group_stacks(hosts)
    >>> slot = host_slots(hosts, stacks)
    >>> bool((hosts[stacks, slot] == np.arange(7)[:, None]).all())
    True
    """
    N, r = hosts.shape
    slot = np.empty((N, r), dtype=np.int64)
    me = np.arange(N)[:, None]
    for j in range(r):  # one (N, r) gather per stack position, not an (N, r, r) one
        slot[:, j] = np.argmax(hosts[stacks[:, j]] == me, axis=1)
    return slot


@compiled
def _global_relabel(
    hosts: np.ndarray,
    stacks: np.ndarray,
    pieces: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    cap: int,
    label: np.ndarray,
    queue: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Exact residual distance of every host to a host with spare room (backward BFS).

    Residual edge ``h -> h2``: ``h`` computes a piece of a type that ``h2``
    holds.  Unreachable hosts get ``_INF``.  Returns the number of spare hosts.
    """
    N, r = stacks.shape
    tail = 0
    for h in range(N):
        if not dead[h] and load[h] < cap:
            label[h] = 0
            queue[tail] = h
            tail += 1
        else:
            label[h] = _INF
    spare = tail
    head = 0
    while head < tail:
        h2 = queue[head]
        head += 1
        for j in range(r):
            u = stacks[h2, j]
            for k in range(r):
                if pieces[u, k] == 0:
                    continue
                h = hosts[u, k]
                if label[h] == _INF:
                    label[h] = label[h2] + 1
                    queue[tail] = h
                    tail += 1
    return spare


@compiled
def _augment(
    t: int,
    count: int,
    cap: int,
    hosts: np.ndarray,
    stacks: np.ndarray,
    slot: np.ndarray,
    pieces: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    label: np.ndarray,
    path: np.ndarray,
    via: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    queue: np.ndarray,
    budget: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Route up to ``count`` orphan pieces of ``t``; return how many (0: no path exists).

    First the orphan's own surviving hosts with spare room.  Otherwise one
    shortest augmenting path guided by distance labels (Ahuja and Orlin):
    ``label[h]`` is a lower bound on the residual distance from ``h`` to a
    host with spare room.  The walk follows admissible edges
    (``label[h2] = label[h] - 1``), relabels a dead end to one more than its
    least neighbour and retreats; the path then carries its bottleneck
    (the orphan's count, the end's spare room, the pieces moved at each hop).
    Labels stay lower bounds as hosts fail (edges only disappear), along
    augmenting paths (new edges point at most one label down) and as spare
    hosts fill; raising ``L`` restarts them at 0 (the caller).  After
    ``budget[0]`` relabels, or when every entry looks unreachable, all labels
    are recomputed exactly by :func:`_global_relabel`; an orphan whose hosts
    are all unreachable then has no augmenting path.
    """
    N, r = hosts.shape
    placed = 0
    for k in range(r):
        h = hosts[t, k]
        if not dead[h] and load[h] < cap:
            amount = min(count - placed, cap - load[h])
            pieces[t, k] += amount
            load[h] += amount
            placed += amount
            if placed == count:
                return placed
    if placed:
        return placed
    exact = False
    while True:
        start = -1
        start_k = -1
        for k in range(r):
            h = hosts[t, k]
            if not dead[h] and (start < 0 or label[h] < label[start]):
                start = h
                start_k = k
        if label[start] >= N:  # no path can be that long: unreachable
            if exact:
                return 0
            _global_relabel(hosts, stacks, pieces, load, dead, cap, label, queue)
            budget[1] = 0
            exact = True
            continue
        exact = False
        depth = 0
        path[0] = start
        via[0] = t
        dst[0] = start_k
        while depth >= 0:
            h = path[depth]
            if load[h] < cap:
                amount = min(count, cap - load[h])
                for i in range(1, depth + 1):
                    amount = min(amount, pieces[via[i], src[i]])
                pieces[t, dst[0]] += amount
                for i in range(1, depth + 1):
                    pieces[via[i], src[i]] -= amount
                    pieces[via[i], dst[i]] += amount
                load[h] += amount
                return amount
            target = label[h] - 1
            nxt = -1
            low = _INF - 1
            for j in range(r):
                u = stacks[h, j]
                ks = slot[h, j]
                if pieces[u, ks] == 0:
                    continue
                for k in range(r):
                    h2 = hosts[u, k]
                    if h2 == h or dead[h2]:
                        continue
                    if label[h2] == target:
                        nxt = h2
                        via[depth + 1] = u
                        src[depth + 1] = ks
                        dst[depth + 1] = k
                        break
                    if label[h2] < low:
                        low = label[h2]
                if nxt >= 0:
                    break
            if nxt >= 0:
                depth += 1
                path[depth] = nxt
                continue
            label[h] = low + 1
            budget[1] += 1
            depth -= 1
        if budget[1] > budget[0]:
            _global_relabel(hosts, stacks, pieces, load, dead, cap, label, queue)
            budget[1] = 0
            exact = True


@compiled
def _kernel(
    hosts: np.ndarray,
    stacks: np.ndarray,
    slot: np.ndarray,
    m: int,
    order: np.ndarray,
    out: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Fill ``out[f] = L_f`` (pieces on the busiest host) and return ``T`` (or a negative code)."""
    N, r = hosts.shape
    pieces = np.zeros((N, r), dtype=np.int64)
    pieces[:, 0] = m
    load = np.full(N, m, dtype=np.int64)
    survivors = np.full(N, r, dtype=np.int64)
    dead = np.zeros(N, dtype=np.bool_)
    label = np.zeros(N, dtype=np.int64)
    path = np.zeros(N + 1, dtype=np.int64)
    via = np.zeros(N + 1, dtype=np.int64)
    src = np.zeros(N + 1, dtype=np.int64)
    dst = np.zeros(N + 1, dtype=np.int64)
    queue = np.zeros(N, dtype=np.int64)
    orphans = np.zeros(r, dtype=np.int64)
    counts = np.zeros(r, dtype=np.int64)
    # budget[0]: relabels allowed between global relabels (O(N r^2) each);
    # budget[1]: relabels since the last.
    budget = np.array([max(64, N // 8), 0], dtype=np.int64)
    cap = m
    out[0] = m
    for f in range(order.size):
        g = order[f]
        if g < 0 or g >= N:
            return -2 * f - 1
        if dead[g]:
            return -2 * f - 2
        for j in range(r):
            if survivors[stacks[g, j]] == 1:
                return f + 1
        dead[g] = True
        n_orphans = 0
        for j in range(r):
            u = stacks[g, j]
            survivors[u] -= 1
            k = slot[g, j]
            if pieces[u, k] > 0:
                orphans[n_orphans] = u
                counts[n_orphans] = pieces[u, k]
                n_orphans += 1
                pieces[u, k] = 0
        load[g] = 0
        alive = N - f - 1
        bound = (m * N + alive - 1) // alive
        if bound > cap:
            cap = bound
            label[:] = 0
        for i in range(n_orphans):
            count = counts[i]
            while count > 0:
                moved = _augment(
                    orphans[i],
                    count,
                    cap,
                    hosts,
                    stacks,
                    slot,
                    pieces,
                    load,
                    dead,
                    label,
                    path,
                    via,
                    src,
                    dst,
                    queue,
                    budget,
                )
                if moved:
                    count -= moved
                else:
                    cap += 1
                    label[:] = 0
        out[f + 1] = cap
    return 0


def load_trajectory_from_arrays(
    hosts: npt.NDArray[np.int64],
    stacks: npt.NDArray[np.int64],
    order: Iterable[int] | npt.NDArray[np.integer[Any]],
    microbatches: int,
    slot: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.float64]:
    """Exact loads ``min_load`` after ``f = 0, ..., T-1`` failures (validated placement).

    ``L_f / m`` with ``L_f`` the least largest number of pieces on a host after
    the first ``f`` failures of ``order`` (:func:`spare_theory.stacking.stacks.min_load`),
    and ``T`` the index of the wiping failure plus one; for callers that run
    many orders on one placement and validate it once.

    Parameters
    ----------
    hosts : numpy.ndarray of int64, shape (N, r)
        A placement already checked by :func:`spare_theory.placement.placements.validate_hosts`.
    stacks : numpy.ndarray of int64, shape (N, r)
        ``spare_theory.placement.placements.group_stacks(hosts)``.
    order : array_like of int
        Failure order: a permutation of ``range(N)``, or a prefix of one
        that reaches the wipe-out.
    microbatches : int
        Pieces per shard ``m >= 1`` (``m = 1`` gives ``S*`` as floats).
    slot : numpy.ndarray of int64, shape (N, r), optional
        :func:`host_slots` of the placement (computed when omitted).

    Returns
    -------
    numpy.ndarray
        ``float64`` array of length ``T`` (shard units, multiples of ``1/m``).

    Raises
    ------
    ValueError
        Naming ``order``: a group out of range or repeated before the
        wipe-out, or an order that ends before it; naming ``microbatches``.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.placements import group_stacks
    >>> from spare_theory.stacking._piece_trajectory import load_trajectory_from_arrays
    >>> hosts = cyclic_placement(7, 3)
    >>> load_trajectory_from_arrays(hosts, group_stacks(hosts), range(7), 4).tolist()
    [1.0, 1.25, 1.5, 1.75]
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    N = hosts.shape[0]
    if isinstance(order, np.ndarray) and order.dtype == np.int64:
        arr = np.ascontiguousarray(order)
    else:
        arr = as_count_array(
            order if isinstance(order, np.ndarray) else list(order), "order", minimum=None
        )
    if arr.ndim != 1:
        raise ValueError(f"order must be a 1-D sequence of group ids, got shape {arr.shape}")
    hosts64 = np.ascontiguousarray(hosts, dtype=np.int64)
    stacks64 = np.ascontiguousarray(stacks, dtype=np.int64)
    if slot is None:
        slot = host_slots(hosts64, stacks64)
    out = np.empty(arr.size + 1, dtype=np.int64)
    T = _kernel(hosts64, stacks64, np.ascontiguousarray(slot, dtype=np.int64), m, arr, out)
    if T > 0:
        return out[:T] / m
    if T == 0:
        raise ValueError("order must reach the wipe-out (pass a whole permutation of the groups)")
    position, repeated = divmod(-T - 1, 2)
    if not repeated:
        raise ValueError(f"order must hold group ids in [0, {N}), got {arr[position]}")
    raise ValueError(f"order must not repeat a group: group {arr[position]} has already failed")
