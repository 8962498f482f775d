"""Fast exact ``S*`` trajectories: compiled augmenting-path repair on flat arrays.

The same algorithm as :class:`spare_theory.stacking.reordering.ReorderingController`
(whole shards, ``m = 1``), restated on ``int64`` arrays so that it compiles
with numba (``nopython`` mode, cached on disk):

* an assignment ``assigned[t]`` type -> surviving host, at most ``S`` types a
  host (``load[h]``); the types a host computes are the ``u`` among its
  stack ``stacks[h]`` with ``assigned[u] == h`` (no per-host sets);
* when group ``g`` fails, first the wipe-out test (a type of ``g`` whose only
  surviving host is ``g``), ``O(r)`` with a count of surviving hosts per type;
* then ``S`` rises at once to the counting bound ``ceil(N / (N - f))``
  (:func:`spare_theory.stacking.stacks.stacks_lower_bound`; ``S*`` can never be
  below it, and a raise gives every host spare room, so the searches that
  follow are short);
* each orphan of ``g`` looks for a host of its own with a free slot, else a
  shortest augmenting path guided by distance labels (see :func:`_augment`):
  where free slots are scarce -- the last few hundred failures before ``S*``
  rises, when a plain breadth-first search from every orphan sweeps most
  hosts -- the labels make each path cost about its length;
* an orphan with no path proves that no assignment with ``S`` layers exists
  (see the controller), so ``S`` grows by one.

``S*`` is unique, so the trajectory equals the controller's exactly (the
assignments may differ).  Measured at ``N = 75,000``, ``r = 17``: 25x the
controller (``bench/bench_trajectory.py``; the breadth-first search alone
gave 9x).  Without numba the same code runs as plain Python (slow, but the
same numbers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._jit import COMPILED, compiled
from .._validation import as_count_array

__all__ = ["COMPILED", "trajectory_from_arrays"]

# Label of a host with no residual path to a free slot.
_INF = 1 << 40

# Return codes of the kernel below 0: the order is bad at position f, code
# -2 f - 1 (group out of range) or -2 f - 2 (group repeated).


@compiled
def _global_relabel(
    stacks: np.ndarray,
    assigned: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    S: int,
    label: np.ndarray,
    queue: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Exact residual distance of every host to a host with a free slot (backward BFS).

    Residual edge ``h -> h2``: ``h`` computes a type that ``h2`` holds.
    Unreachable hosts get ``_INF``.
    """
    N, r = stacks.shape
    tail = 0
    for h in range(N):
        if not dead[h] and load[h] < S:
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
            h = assigned[stacks[h2, j]]
            if h != h2 and not dead[h] and label[h] == _INF:
                label[h] = label[h2] + 1
                queue[tail] = h
                tail += 1


@compiled
def _augment(
    t: int,
    S: int,
    hosts: np.ndarray,
    stacks: np.ndarray,
    assigned: np.ndarray,
    load: np.ndarray,
    dead: np.ndarray,
    label: np.ndarray,
    path: np.ndarray,
    via: np.ndarray,
    queue: np.ndarray,
    budget: np.ndarray,
) -> bool:  # pragma: no cover - compiled
    """Place orphan ``t`` with at most ``S`` types a host; False if no augmenting path.

    A host of its own with a free slot if any; else one shortest augmenting
    path guided by distance labels (Ahuja and Orlin's shortest augmenting
    path): ``label[h]`` is a lower bound on the residual distance from ``h``
    to a host with a free slot.  The walk follows admissible edges
    (``label[h2] = label[h] - 1``), relabels a dead end to one more than its
    least neighbour and retreats.  Labels stay lower bounds as hosts fail
    (edges only disappear), along augmenting paths (the new reverse edges
    point up the labels) and as free slots fill; no host gains a free slot
    unless ``S`` rises, and then every label restarts at 0 (the caller).
    After ``budget[0]`` relabels, or when every entry looks unreachable, all
    labels are recomputed exactly by :func:`_global_relabel`; an orphan whose
    hosts are all unreachable then has no augmenting path.
    """
    N, r = hosts.shape
    best = -1
    for k in range(r):
        h = hosts[t, k]
        if not dead[h] and load[h] < S and (best < 0 or load[h] < load[best]):
            best = h
    if best >= 0:
        assigned[t] = best
        load[best] += 1
        return True
    exact = False
    while True:
        start = -1
        for k in range(r):
            h = hosts[t, k]
            if not dead[h] and (start < 0 or label[h] < label[start]):
                start = h
        if label[start] >= N:  # no path can be that long: unreachable
            if exact:
                return False
            _global_relabel(stacks, assigned, load, dead, S, label, queue)
            budget[1] = 0
            exact = True
            continue
        exact = False
        depth = 0
        path[0] = start
        via[0] = t
        while depth >= 0:
            h = path[depth]
            if load[h] < S:
                load[h] += 1
                for i in range(depth + 1):
                    assigned[via[i]] = path[i]
                return True
            target = label[h] - 1
            nxt = -1
            low = _INF - 1
            for j in range(r):
                u = stacks[h, j]
                if assigned[u] != h:
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
            _global_relabel(stacks, assigned, load, dead, S, label, queue)
            budget[1] = 0
            exact = True


@compiled
def _kernel(
    hosts: np.ndarray, stacks: np.ndarray, order: np.ndarray, out: np.ndarray
) -> int:  # pragma: no cover - compiled
    """Fill ``out[f] = S*_f`` and return ``T`` (or a negative code for a bad order)."""
    N, r = hosts.shape
    assigned = hosts[:, 0].copy()
    load = np.ones(N, dtype=np.int64)
    survivors = np.full(N, r, dtype=np.int64)
    dead = np.zeros(N, dtype=np.bool_)
    label = np.zeros(N, dtype=np.int64)
    path = np.zeros(N + 1, dtype=np.int64)
    via = np.zeros(N + 1, dtype=np.int64)
    queue = np.zeros(N, dtype=np.int64)
    orphans = np.zeros(r, dtype=np.int64)
    # budget[0]: relabels allowed between global relabels (O(N r) each, so
    # amortised over about N relabels); budget[1]: relabels since the last.
    budget = np.array([max(64, N // 8), 0], dtype=np.int64)
    S = 1
    out[0] = 1
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
            if assigned[u] == g:
                orphans[n_orphans] = u
                n_orphans += 1
        load[g] = 0
        alive = N - f - 1
        bound = (N + alive - 1) // alive
        if bound > S:
            S = bound
            label[:] = 0
        for i in range(n_orphans):
            while not _augment(
                orphans[i], S, hosts, stacks, assigned, load, dead, label, path, via, queue, budget
            ):
                S += 1
                label[:] = 0
        out[f + 1] = S
    return 0


def trajectory_from_arrays(
    hosts: npt.NDArray[np.int64],
    stacks: npt.NDArray[np.int64],
    order: Iterable[int] | npt.NDArray[np.integer[Any]],
) -> npt.NDArray[np.int64]:
    """``S*_f`` for ``f = 0, ..., T-1`` on a validated placement (no checks on ``hosts``).

    ``S*_f`` is the least number of stack layers after the first ``f``
    failures of ``order`` (exact, :func:`spare_theory.stacking.stacks.min_stacks`),
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

    Returns
    -------
    numpy.ndarray
        ``int64`` array of length ``T`` (stack layers).

    Raises
    ------
    ValueError
        Naming ``order``: a group out of range or repeated before the
        wipe-out, or an order that ends before it.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.placement.placements import group_stacks
    >>> from spare_theory.stacking._trajectory import trajectory_from_arrays
    >>> hosts = cyclic_placement(7, 3)
    >>> trajectory_from_arrays(hosts, group_stacks(hosts), range(7)).tolist()
    [1, 2, 2, 2]
    """
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
        arr,
        out,
    )
    if T > 0:
        return out[:T].copy()
    if T == 0:
        raise ValueError("order must reach the wipe-out (pass a whole permutation of the groups)")
    position, repeated = divmod(-T - 1, 2)
    if not repeated:
        raise ValueError(f"order must hold group ids in [0, {N}), got {arr[position]}")
    raise ValueError(f"order must not repeat a group: group {arr[position]} has already failed")
