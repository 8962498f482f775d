"""Fast exact ``S*`` and micro-batch load trajectories: one compiled repair on flat arrays.

The same algorithm as :class:`spare_theory.stacking.reordering.ReorderingController`
(whole shards and ``microbatches = m`` pieces per shard; ``m = 1`` is one
piece per shard, so ``S*`` is the load), restated on ``int64`` arrays so that
it compiles with numba (``nopython`` mode, cached on disk):

* each type ``t`` keeps its pieces as a short list of holders:
  ``held_count[i, t]`` pieces on host ``held_host[i, t]``, up to the first
  ``held_host`` of -1; a host computes at most ``L`` pieces (``load[h]``).  A type has
  at most ``min(m, r)`` holders, so at ``m = 1`` the list is one row, the
  host computing the type; the type at stack position ``j`` of host ``h``
  is ``stacks[h, j]``, so the pieces a host computes are found from its
  stack without per-host sets, and a search over the hosts computing a type
  costs what they are, not ``r``;
* when group ``g`` fails, first the wipe-out test (a type of ``g`` whose only
  surviving host is ``g``), ``O(r)`` with a count of surviving hosts per type;
* ``L`` rises at once to the counting bound ``ceil(m N / (N - f))``
  (:func:`spare_theory.stacking.stacks.load_lower_bound`,
  :func:`~spare_theory.stacking.stacks.stacks_lower_bound` at ``m = 1``; the
  load can never be below it, and the raise gives hosts spare room, so the
  searches that follow are short);
* each orphaned type first fills its own surviving hosts with spare room,
  least loaded first, then routes its remaining pieces along shortest
  augmenting paths guided by distance labels (see :func:`_augment`), each
  path carrying its bottleneck: where spare room is scarce -- the last few
  hundred failures before the load rises, when a plain breadth-first search
  from every orphan sweeps most hosts -- the labels make each path cost about
  its length;
* an orphan with no path proves that the max flow at ``L`` falls short (see
  the controller), so ``L`` grows by one piece.

The load is unique, so the trajectory equals the controller's exactly (the
piece plans may differ).  Measured at ``N = 75,000``, ``r = 17``: 25x the
controller (``bench/bench_trajectory.py``; the breadth-first search alone
gave 9x); one kernel for every ``m`` costs at most a few per cent at
``m = 1`` against the former whole-shard copy (``bench/bench_kernels.py``).
Without numba the same code runs as plain Python (slow, but the same
numbers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._jit import COMPILED, compiled
from .._validation import as_count, as_count_array

__all__ = ["COMPILED", "trajectory_from_arrays"]

# Label of a host with no residual path to spare room.
_INF = 1 << 40

# Return codes of the kernel below 0: the order is bad at position f, code
# -2 f - 1 (group out of range) or -2 f - 2 (group repeated).


@compiled
def _entry(held_host: np.ndarray, t: int, h: int) -> int:  # pragma: no cover - compiled
    """Index ``i`` with ``held_host[i, t] == h``, or -1 if ``h`` computes no piece of ``t``."""
    if held_host[0, t] == h:  # the only entry at m = 1
        return 0
    for i in range(1, held_host.shape[0]):
        x = held_host[i, t]
        if x == h:
            return i
        if x < 0:
            break
    return -1


@compiled
def _pieces_on(
    held_host: np.ndarray, held_count: np.ndarray, t: int, h: int
) -> int:  # pragma: no cover - compiled
    """Pieces of type ``t`` that host ``h`` computes (0 if none)."""
    i = _entry(held_host, t, h)
    return 0 if i < 0 else held_count[i, t]


@compiled
def _drop(
    held_host: np.ndarray, held_count: np.ndarray, t: int, i: int
) -> None:  # pragma: no cover - compiled
    """Remove entry ``i`` of type ``t``: the last entry takes its place."""
    last = i
    while last + 1 < held_host.shape[0] and held_host[last + 1, t] >= 0:
        last += 1
    held_host[i, t] = held_host[last, t]
    held_count[i, t] = held_count[last, t]
    held_host[last, t] = -1


@compiled
def _shift(
    held_host: np.ndarray, held_count: np.ndarray, t: int, h: int, amount: int
) -> None:  # pragma: no cover - compiled
    """Give host ``h`` ``amount`` more pieces of type ``t`` (negative: fewer; at 0 dropped)."""
    width = held_host.shape[0]
    for i in range(width):
        x = held_host[i, t]
        if x < 0:  # not a holder yet: the first free entry
            held_host[i, t] = h
            held_count[i, t] = amount
            return
        if x == h:
            left = held_count[i, t] + amount
            if left > 0:
                held_count[i, t] = left
                return
            _drop(held_host, held_count, t, i)
            return


@compiled
def _global_relabel(
    stacks: np.ndarray,
    held_host: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    cap: int,
    label: np.ndarray,
    queue: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Exact residual distance of every host to a host with spare room (backward BFS).

    Residual edge ``h -> h2``: ``h`` computes a piece of a type that ``h2``
    holds.  Unreachable hosts get ``_INF``.  Dead hosts compute nothing, so
    they are never reached.
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
    head = 0
    while head < tail:
        h2 = queue[head]
        head += 1
        for j in range(r):
            u = stacks[h2, j]
            for i in range(held_host.shape[0]):
                h = held_host[i, u]
                if h < 0:
                    break
                if label[h] == _INF:
                    label[h] = label[h2] + 1
                    queue[tail] = h
                    tail += 1


@compiled
def _augment(
    t: int,
    count: int,
    cap: int,
    hosts: np.ndarray,
    stacks: np.ndarray,
    held_host: np.ndarray,
    held_count: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    label: np.ndarray,
    path: np.ndarray,
    via: np.ndarray,
    queue: np.ndarray,
    budget: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Route up to ``count`` orphan pieces of ``t``; return how many (0: no path exists).

    First the orphan's own surviving hosts with spare room, least loaded
    first.  Otherwise one shortest augmenting path guided by distance labels
    (Ahuja and Orlin's shortest augmenting path): ``label[h]`` is a lower
    bound on the residual distance from ``h`` to a host with spare room.  The
    walk follows admissible edges (``label[h2] = label[h] - 1``), relabels a
    dead end to one more than its least neighbour and retreats; the path then
    carries its bottleneck (the orphan's count, the end's spare room, the
    pieces moved at each hop: type ``via[i]`` from ``path[i - 1]`` to
    ``path[i]``).  Labels stay lower bounds as hosts fail (edges only
    disappear), along augmenting paths (new edges point at most one label
    down) and as spare hosts fill; raising ``L`` restarts them at 0 (the
    caller).  After ``budget[0]`` relabels, or when every entry looks
    unreachable, all labels are recomputed exactly by
    :func:`_global_relabel`; an orphan whose hosts are all unreachable then
    has no augmenting path.
    """
    N, r = hosts.shape
    width = held_host.shape[0]
    placed = 0
    while placed < count:
        best = -1
        for k in range(r):
            h = hosts[t, k]
            if not dead[h] and load[h] < cap and (best < 0 or load[h] < load[best]):
                best = h
        if best < 0:
            break
        amount = min(count - placed, cap - load[best])
        _shift(held_host, held_count, t, best, amount)
        load[best] += amount
        placed += amount
    if placed:
        return placed
    exact = False
    while True:
        start = -1
        for k in range(r):
            h = hosts[t, k]
            if not dead[h] and (start < 0 or label[h] < label[start]):
                start = h
        if label[start] >= N:  # no path can be that long: unreachable
            if exact:
                return 0
            _global_relabel(stacks, held_host, load, dead, cap, label, queue)
            budget[1] = 0
            exact = True
            continue
        exact = False
        depth = 0
        path[0] = start
        while depth >= 0:
            h = path[depth]
            if load[h] < cap:
                amount = min(count, cap - load[h])
                for i in range(1, depth + 1):
                    amount = min(amount, _pieces_on(held_host, held_count, via[i], path[i - 1]))
                _shift(held_host, held_count, t, path[0], amount)
                for i in range(1, depth + 1):
                    _shift(held_host, held_count, via[i], path[i - 1], -amount)
                    _shift(held_host, held_count, via[i], path[i], amount)
                load[h] += amount
                return amount
            target = label[h] - 1
            nxt = -1
            low = _INF - 1
            for j in range(r):
                u = stacks[h, j]
                # Does h compute u?  Entry 0 first, inline: the only one at m = 1, where
                # the call per stack slot cost about 5 % (bench/bench_kernels.py).
                if held_host[0, u] != h and (width == 1 or _entry(held_host, u, h) < 0):
                    continue
                for k in range(r):
                    h2 = hosts[u, k]
                    if h2 == h or dead[h2]:
                        continue
                    if label[h2] == target:
                        nxt = h2
                        via[depth + 1] = u
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
            _global_relabel(stacks, held_host, load, dead, cap, label, queue)
            budget[1] = 0
            exact = True


@compiled
def _kernel(
    hosts: np.ndarray, stacks: np.ndarray, m: int, order: np.ndarray, out: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Fill ``out[f] = L_f`` (pieces on the busiest host) and return ``T`` (or a negative code)."""
    N, r = hosts.shape
    # Type t's pieces: held_count[i, t] on host held_host[i, t], up to the first
    # held_host of -1.  A type has at most min(m, r) holders: one row at m = 1.
    width = min(m, r)
    held_host = np.full((width, N), -1, dtype=np.int64)
    held_host[0] = hosts[:, 0]
    held_count = np.zeros((width, N), dtype=np.int64)
    held_count[0] = m
    load = np.full(N, m, dtype=np.int64)
    survivors = np.full(N, r, dtype=np.int64)
    dead = np.zeros(N, dtype=np.bool_)
    label = np.zeros(N, dtype=np.int64)
    path = np.zeros(N + 1, dtype=np.int64)
    via = np.zeros(N + 1, dtype=np.int64)
    queue = np.zeros(N, dtype=np.int64)
    orphans = np.zeros(r, dtype=np.int64)
    counts = np.zeros(r, dtype=np.int64)
    # budget[0]: relabels allowed between global relabels (O(N r) each at
    # m = 1, so amortised over about N relabels); budget[1]: relabels since the last.
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
            # Entry 0 inline, as in _augment.
            i = 0 if held_host[0, u] == g else (-1 if width == 1 else _entry(held_host, u, g))
            if i >= 0:
                orphans[n_orphans] = u
                counts[n_orphans] = held_count[i, u]
                n_orphans += 1
                _drop(held_host, held_count, u, i)
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
                    held_host,
                    held_count,
                    load,
                    dead,
                    label,
                    path,
                    via,
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


def trajectory_from_arrays(
    hosts: npt.NDArray[np.int64],
    stacks: npt.NDArray[np.int64],
    order: Iterable[int] | npt.NDArray[np.integer[Any]],
    microbatches: int = 1,
) -> npt.NDArray[np.int64] | npt.NDArray[np.float64]:
    """``S*_f`` (or the load with ``m`` pieces) after ``f = 0, ..., T-1`` failures of ``order``.

    ``S*_f`` is the least number of stack layers after the first ``f``
    failures (exact, :func:`spare_theory.stacking.stacks.min_stacks`); with
    ``m > 1`` pieces per shard, the load ``L_f / m``, ``L_f`` the least
    largest number of pieces on a host (:func:`spare_theory.stacking.stacks.min_load`).
    ``T`` is the index of the wiping failure plus one.  No checks on
    ``hosts``: for callers that run many orders on one placement and
    validate it once.

    Parameters
    ----------
    hosts : numpy.ndarray of int64, shape (N, r)
        A placement already checked by :func:`spare_theory.placement.placements.validate_hosts`.
    stacks : numpy.ndarray of int64, shape (N, r)
        ``spare_theory.placement.placements.group_stacks(hosts)``.
    order : array_like of int
        Failure order: a permutation of ``range(N)``, or a prefix of one
        that reaches the wipe-out.
    microbatches : int, default 1
        Pieces per shard ``m >= 1``.

    Returns
    -------
    numpy.ndarray
        Array of length ``T``: ``int64`` stack layers for ``m = 1``,
        ``float64`` loads in shard units (multiples of ``1/m``) otherwise.

    Raises
    ------
    ValueError
        Naming ``order``: a group out of range or repeated before the
        wipe-out, or an order that ends before it; naming ``microbatches``.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.placements import group_stacks
    >>> from spare_theory.stacking._trajectory import trajectory_from_arrays
    >>> hosts = cyclic_placement(7, 3)
    >>> trajectory_from_arrays(hosts, group_stacks(hosts), range(7)).tolist()
    [1, 2, 2, 2]
    >>> trajectory_from_arrays(hosts, group_stacks(hosts), range(7), 4).tolist()
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
    out = np.empty(arr.size + 1, dtype=np.int64)
    T = _kernel(
        np.ascontiguousarray(hosts, dtype=np.int64),
        np.ascontiguousarray(stacks, dtype=np.int64),
        m,
        arr,
        out,
    )
    if T > 0:
        return out[:T].copy() if m == 1 else out[:T] / m
    if T == 0:
        raise ValueError("order must reach the wipe-out (pass a whole permutation of the groups)")
    position, repeated = divmod(-T - 1, 2)
    if not repeated:
        raise ValueError(f"order must hold group ids in [0, {N}), got {arr[position]}")
    raise ValueError(f"order must not repeat a group: group {arr[position]} has already failed")
