"""Adaptive reordering: which shard each surviving group computes, and how few move.

Offline, :func:`reorder` returns the new stack of every surviving group with
the fewest shards changing stack position.  Online,
:class:`ReorderingController` takes failures one at a time and repairs its
assignment type -> host with augmenting paths, so that its ``S*`` is exact
(equal to :func:`spare_theory.stacks.min_stacks`) at a small fraction of the
cost of solving from scratch.

Minimal moves
-------------
Give every type a surviving host that holds it, at most ``S = S*(F)`` types per
host.  On host ``h`` with assigned set ``A_h`` the new stack must put ``A_h``
in its top ``S`` positions.  A type of ``A_h`` already in the top ``S`` stays;
each of the ``m_h`` types of ``A_h`` below position ``S`` enters the top, and
as many shards leave it (the stack stays full), so at least ``2 m_h`` shards
move, and ``m_h`` swaps achieve it.  Hence the fewest moves are
``2 * min sum_h m_h``, a minimum-cost assignment of types to host slots with
cost 0 (type already in the top ``S`` of that host) or 1 (not), solved with
``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` on hosts
replicated ``S`` times.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from ._validation import as_count
from .placement import group_stacks, validate_hosts
from .stacks import WipedOut, min_stacks, validate_failed

__all__ = ["ReorderPlan", "ReorderingController", "reorder"]


@dataclass(frozen=True)
class ReorderPlan:
    """A stack order that covers every type in the top ``stacks`` layers.

    Attributes
    ----------
    stacks : int
        ``S*`` used: every type sits in the top ``stacks`` positions of some
        surviving group.
    order : numpy.ndarray, shape (N, r)
        New stack of every group, type ids top first.  Rows of failed groups
        are ``-1`` (their shards are masked until the next restart).
    assignment : numpy.ndarray, shape (N,)
        ``assignment[t]`` = the surviving group that computes type ``t``.
    moves : int
        Number of shards (on surviving groups) whose stack position differs
        from the input ``order``; minimal over all valid plans.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, reorder
    >>> plan = reorder(cyclic_placement(7, 3), [0])
    >>> plan.stacks, plan.moves, plan.order[0].tolist()  # group 0's row is masked
    (2, 0, [-1, -1, -1])
    """

    stacks: int
    order: np.ndarray
    assignment: np.ndarray
    moves: int


def _validate_order(order: npt.ArrayLike | None, hosts: np.ndarray) -> np.ndarray:
    """``order`` must give every group a permutation of the types it holds."""
    stacks = group_stacks(hosts)
    if order is None:
        return stacks
    arr = np.asarray(order)
    if arr.shape != stacks.shape or arr.dtype.kind not in "iu":
        raise ValueError(f"order must be an integer array of shape {stacks.shape}")
    arr = arr.astype(np.int64)
    if not np.array_equal(np.sort(arr, axis=1), np.sort(stacks, axis=1)):
        raise ValueError("order must list, for every group, exactly the types it holds")
    return arr


def reorder(
    hosts: npt.ArrayLike,
    failed: npt.ArrayLike | set[int] | frozenset[int],
    order: npt.ArrayLike | None = None,
) -> ReorderPlan:
    """Minimal-move reordering of the stacks after failures ``failed``.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement.
    failed : sequence of int
        Distinct failed group ids in ``[0, N)``.
    order : array_like, shape (N, r), optional
        Current stack of every group (type ids, top first); defaults to the
        placement's own order (``placement.group_stacks(hosts)``).

    Returns
    -------
    ReorderPlan
        With ``stacks = S*(F)`` and the fewest moved shards, ``2 * m`` where
        ``m`` is the least number of types computed by a host that holds them
        below position ``S*`` (see the module docstring).

    Raises
    ------
    WipedOut
        If some type has no surviving host.

    Examples
    --------
    >>> from spare_theory import cyclic_placement, reorder
    >>> plan = reorder(cyclic_placement(13, 4), [0, 1, 2])
    >>> plan.stacks, plan.moves  # two types are left below position 2: 2 swaps
    (2, 4)
    """
    placement = validate_hosts(hosts)
    N, r = placement.shape
    failed_ids = validate_failed(failed, N)
    current = _validate_order(order, placement)
    S = min_stacks(placement, failed_ids)
    alive = np.ones(N, dtype=bool)
    alive[failed_ids] = False
    # Edges type t -> slot (host h, copy c); weight 1 if t is already in the
    # top S of h, else 2 (weights must be non-zero to be stored edges).
    groups, positions = np.nonzero(current >= 0)
    types = current[groups, positions]
    keep = alive[groups]
    types, groups, positions = types[keep], groups[keep], positions[keep]
    weight = np.where(positions < S, 1.0, 2.0)
    copies = np.arange(S)
    rows = np.repeat(types, S)
    cols = (groups[:, None] * S + copies[None, :]).ravel()
    graph = csr_matrix((np.repeat(weight, S), (rows, cols)), shape=(N, N * S))
    matched_types, slots = min_weight_full_bipartite_matching(graph)
    assignment = np.empty(N, dtype=np.int64)
    assignment[matched_types] = slots // S
    in_top = current[assignment, :S] == np.arange(N)[:, None]
    moved_in = np.zeros(N, dtype=np.int64)
    np.add.at(moved_in, assignment, ~in_top.any(axis=1))
    new = current.copy()
    new[~alive] = -1
    chosen = np.zeros((N, r), dtype=bool)
    chosen[assignment, np.argmax(current[assignment] == np.arange(N)[:, None], axis=1)] = True
    for h in np.flatnonzero(moved_in):
        # Swap each assigned type below S with an unassigned type in the top S.
        low = np.flatnonzero(chosen[h, S:]) + S
        free = np.flatnonzero(~chosen[h, :S])[: low.size]
        new[h, free], new[h, low] = current[h, low], current[h, free]
    return ReorderPlan(stacks=S, order=new, assignment=assignment, moves=int(2 * moved_in.sum()))


class ReorderingController:
    """Online ``S*`` controller: repairs its assignment after each failure.

    It keeps an assignment type -> surviving host with at most ``stacks``
    types per host.  When group ``g`` fails only the types assigned to ``g``
    move: each looks for an augmenting path (breadth-first over hosts in the
    residual graph, host capacity ``stacks``) ending at a host with a free
    slot.  If a type has no augmenting path, no assignment with ``stacks``
    layers exists (a vertex with no augmenting path never gains one as others
    are matched, so the maximum flow is below ``N``): ``stacks`` grows by one,
    giving every host a free slot.  ``S*`` never decreases as groups fail, so
    the controller's ``stacks`` equals ``min_stacks(hosts, failed)`` after
    every failure.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement; initially every type is computed by its top-of-stack host
        ``hosts[t, 0]`` and ``stacks = 1``.

    Attributes
    ----------
    stacks : int
        Current ``S*``.
    failed : set of int
        Failed groups so far.

    Examples
    --------
    >>> from spare_theory import ReorderingController, cyclic_placement
    >>> controller = ReorderingController(cyclic_placement(7, 3))
    >>> controller.fail(0), controller.fail(2), sorted(controller.failed)
    (2, 2, [0, 2])
    >>> controller.assignment.tolist()  # the surviving group computing each type
    [1, 1, 3, 3, 4, 5, 6]
    """

    def __init__(self, hosts: npt.ArrayLike) -> None:
        placement = validate_hosts(hosts)
        self.N, self.r = placement.shape
        self._hosts: list[list[int]] = placement.tolist()
        self._on_group: list[list[int]] = group_stacks(placement).tolist()
        self._assigned: list[int] = placement[:, 0].tolist()
        self._members = [{stack[0]} for stack in self._on_group]
        self._load = [1] * self.N
        self._alive_hosts = [self.r] * self.N
        self._dead = [False] * self.N
        self.stacks = 1
        self.failed: set[int] = set()

    @property
    def assignment(self) -> npt.NDArray[np.int64]:
        """``assignment[t]``: the surviving group computing type ``t`` (``int64`` array)."""
        return np.array(self._assigned, dtype=np.int64)

    def fail(self, group: int) -> int:
        """Fail ``group``; return the new ``S*``.

        Raises
        ------
        WipedOut
            If a type held by ``group`` has no other surviving host; the
            controller is then left unchanged.
        ValueError
            If ``group`` is out of range or already failed.

        Examples
        --------
        >>> from spare_theory import ReorderingController, WipedOut, cyclic_placement
        >>> controller = ReorderingController(cyclic_placement(7, 3))  # type 0 on 0, 1, 3
        >>> controller.fail(0), controller.fail(1)
        (2, 2)
        >>> try:
        ...     controller.fail(3)
        ... except WipedOut as err:
        ...     print(err.types, controller.stacks, sorted(controller.failed))
        (0,) 2 [0, 1]
        """
        g = as_count(group, "group", minimum=0, maximum=self.N - 1)
        if self._dead[g]:
            raise ValueError(f"group {g} has already failed")
        wiped = [t for t in self._on_group[g] if self._alive_hosts[t] == 1]
        if wiped:
            raise WipedOut(f"failing group {g} wipes out types {wiped}", wiped)
        self._dead[g] = True
        self.failed.add(g)
        for t in self._on_group[g]:
            self._alive_hosts[t] -= 1
        orphans = self._members[g]
        self._members[g] = set()
        self._load[g] = 0
        for t in orphans:
            while not self._augment(t):
                self.stacks += 1
        return self.stacks

    def _augment(self, t: int) -> bool:
        """Place orphan ``t`` by a shortest augmenting path; False if none exists."""
        hosts, load, dead, S = self._hosts, self._load, self._dead, self.stacks
        best = None
        for h in hosts[t]:
            if not dead[h] and load[h] < S and (best is None or load[h] < load[best]):
                best = h
        if best is not None:
            self._place(t, best)
            return True
        # parent[h] = (type that would move onto h, host it leaves or None).
        parent: dict[int, tuple[int, int | None]] = {h: (t, None) for h in hosts[t] if not dead[h]}
        queue = deque(parent)
        members = self._members
        while queue:
            h = queue.popleft()
            for u in members[h]:
                for h2 in hosts[u]:
                    if dead[h2] or h2 in parent:
                        continue
                    parent[h2] = (u, h)
                    if load[h2] < S:
                        self._shift(h2, parent)
                        return True
                    queue.append(h2)
        return False

    def _place(self, t: int, h: int) -> None:
        self._assigned[t] = h
        self._members[h].add(t)
        self._load[h] += 1

    def _shift(self, end: int, parent: dict[int, tuple[int, int | None]]) -> None:
        """Apply the augmenting path ending at ``end`` (which gains one type)."""
        self._load[end] += 1
        h = end
        while True:
            u, prev = parent[h]
            self._members[h].add(u)
            self._assigned[u] = h
            if prev is None:
                return
            self._members[prev].discard(u)
            h = prev
