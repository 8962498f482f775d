"""Adaptive reordering: which shard each surviving group computes, and how few move.

Offline, :func:`reorder` returns the new stack of every surviving group with
the fewest shards changing stack position.  Online,
:class:`ReorderingController` takes failures one at a time and repairs its
assignment type -> host with augmenting paths, so that its ``S*`` is exact
(equal to :func:`spare_theory.stacking.stacks.min_stacks`) at a small fraction of the
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

Micro-batch splitting
---------------------
With ``microbatches = m > 1`` every shard is cut into ``m`` pieces that may
go to any of its surviving hosts (:func:`spare_theory.stacking.stacks.min_load`).
:func:`reorder` then returns a :class:`MicrobatchPlan`: how many pieces of
each type each surviving group computes.  Every group already holds the data
of the ``r`` shards it stacks, so a piece needs no sample transfer, only a new
sampler index; the stack order matters only for whole shards, and no
minimal-move order is computed for ``m > 1``.  The controller takes ``m`` too
and repairs a piece flow instead of a matching (see
:class:`ReorderingController`).

This module is long (about 700 lines, 40 % docstrings and Examples) because it
holds one idea, the minimal-move reordering, in its three typed forms (the
``reorder`` overloads), its per-placement form for the simulator's hot loop
(:class:`StackReorderer`) and the online controller that applies it failure
by failure; they share the flow network and its validation.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import chain
from typing import Literal, overload

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from .._validation import as_count
from ..placement.placements import group_stacks, validate_hosts
from .stacks import WipedOut, least_stacks, piece_flow, surviving_edges, validate_failed

# Distance label of a host that cannot reach spare capacity; relabels before a global one.
_INF = 1 << 40
_RELABEL_BUDGET = 512

__all__ = ["MicrobatchPlan", "ReorderPlan", "ReorderingController", "StackReorderer", "reorder"]


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


@dataclass(frozen=True)
class MicrobatchPlan:
    """Which pieces of which shard each surviving group computes (``m`` pieces a shard).

    Attributes
    ----------
    load : float
        Largest host load in shard units, ``max_h host_pieces[h] / m``:
        the exact optimum :func:`spare_theory.stacking.stacks.min_load`.
    microbatches : int
        Pieces per shard ``m``.
    pieces : numpy.ndarray, shape (N, r)
        ``pieces[t, k]`` = pieces of type ``t`` computed by group
        ``hosts[t, k]`` (0 on failed groups); every row sums to ``m``.
    host_pieces : numpy.ndarray, shape (N,)
        Pieces computed by each group (0 for failed groups).

    Examples
    --------
    >>> from spare_theory import cyclic_placement, reorder
    >>> plan = reorder(cyclic_placement(7, 3), [0], microbatches=4)
    >>> plan.load, plan.pieces.sum(axis=1).tolist(), plan.host_pieces.tolist()
    (1.25, [4, 4, 4, 4, 4, 4, 4], [0, 5, 5, 5, 5, 4, 4])
    """

    load: float
    microbatches: int
    pieces: np.ndarray
    host_pieces: np.ndarray


def _microbatch_plan(placement: np.ndarray, failed_ids: np.ndarray, m: int) -> MicrobatchPlan:
    """Optimal piece plan: the certified-cut search of ``min_load``, then its flow."""
    N, r = placement.shape
    types, groups = surviving_edges(placement, failed_ids)
    L = -(-(m * N) // (N - failed_ids.size))
    while True:
        edge_pieces, bound = piece_flow(N, types, groups, m, L)
        if edge_pieces is not None:
            break
        L = bound
    pieces = np.zeros((N, r), dtype=np.int64)
    alive = np.ones(N, dtype=bool)
    alive[failed_ids] = False
    rows, cols = np.nonzero(alive[placement])  # same order as surviving_edges
    pieces[rows, cols] = edge_pieces
    host_pieces = np.bincount(groups, weights=edge_pieces, minlength=N).astype(np.int64)
    return MicrobatchPlan(load=L / m, microbatches=m, pieces=pieces, host_pieces=host_pieces)


@overload
def reorder(
    hosts: npt.ArrayLike,
    failed: npt.ArrayLike | set[int] | frozenset[int],
    order: npt.ArrayLike | None = None,
    *,
    microbatches: Literal[1] = 1,
) -> ReorderPlan: ...


@overload
def reorder(
    hosts: npt.ArrayLike,
    failed: npt.ArrayLike | set[int] | frozenset[int],
    order: npt.ArrayLike | None = None,
    *,
    microbatches: int,
) -> ReorderPlan | MicrobatchPlan: ...


def reorder(
    hosts: npt.ArrayLike,
    failed: npt.ArrayLike | set[int] | frozenset[int],
    order: npt.ArrayLike | None = None,
    *,
    microbatches: int = 1,
) -> ReorderPlan | MicrobatchPlan:
    """Minimal-move reordering of the stacks after failures ``failed``.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement.
    failed : sequence of int
        Distinct failed group ids in ``[0, N)``.
    order : array_like, shape (N, r), optional
        Current stack of every group (type ids, top first); defaults to the
        placement's own order (``placement.group_stacks(hosts)``).  Only for
        ``microbatches = 1``.
    microbatches : int, default 1
        Pieces per shard ``m``.  ``1``: whole shards, the published scheme.

    Returns
    -------
    ReorderPlan or MicrobatchPlan
        ``m = 1``: a :class:`ReorderPlan` with ``stacks = S*(F)`` and the
        fewest moved shards, ``2 * n`` where ``n`` is the least number of
        types computed by a host that holds them below position ``S*`` (see
        the module docstring).  ``m > 1``: a :class:`MicrobatchPlan` of
        least largest load :func:`spare_theory.stacking.stacks.min_load`.

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
    >>> reorder(cyclic_placement(13, 4), [0, 1, 2], microbatches=8).load  # 104 pieces, 10 hosts
    1.375
    """
    placement = validate_hosts(hosts)
    failed_ids = validate_failed(failed, placement.shape[0])
    m = as_count(microbatches, "microbatches", minimum=1)
    if m > 1:
        if order is not None:
            raise ValueError("order applies to microbatches=1 only (whole-shard stacks)")
        return _microbatch_plan(placement, failed_ids, m)
    return StackReorderer(placement)(failed_ids, order)


class StackReorderer:
    """:func:`reorder` (whole shards) for one placement, checked once.

    The step-level simulator reorders the same placement after every
    failure; this keeps the checked placement and its stacks, so a call
    costs the matching alone.  ``StackReorderer(hosts)(failed, order)`` is
    ``reorder(hosts, failed, order)``.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.stacking.reordering import StackReorderer
    >>> reorderer = StackReorderer(cyclic_placement(13, 4))
    >>> plan = reorderer([0, 1, 2])
    >>> plan.stacks, plan.moves, reorderer([0, 1, 2, 5]).stacks
    (2, 4, 2)
    """

    def __init__(self, hosts: npt.ArrayLike) -> None:
        self.hosts = validate_hosts(hosts)
        self.stacks = group_stacks(self.hosts)
        self._held = np.sort(self.stacks, axis=1)  # the types of each group, sorted

    def _order(self, order: npt.ArrayLike | None) -> np.ndarray:
        """``order`` must give every group a permutation of the types it holds."""
        if order is None:
            return self.stacks
        arr = np.asarray(order)
        if arr.shape != self.stacks.shape or arr.dtype.kind not in "iu":
            raise ValueError(f"order must be an integer array of shape {self.stacks.shape}")
        arr = arr.astype(np.int64)
        if not np.array_equal(np.sort(arr, axis=1), self._held):
            raise ValueError("order must list, for every group, exactly the types it holds")
        return arr

    def __call__(
        self,
        failed: npt.ArrayLike | set[int] | frozenset[int],
        order: npt.ArrayLike | None = None,
    ) -> ReorderPlan:
        """The minimal-move :class:`ReorderPlan` after failures ``failed`` (see :func:`reorder`).

        Raises
        ------
        WipedOut
            If some type has no surviving host.
        ValueError
            If ``failed`` or ``order`` is not valid for the placement.
        """
        placement = self.hosts
        N, r = placement.shape
        failed_ids = validate_failed(failed, N)
        current = self._order(order)
        types, groups = surviving_edges(placement, failed_ids)
        S = least_stacks(N, r, types, groups, failed_ids.size)
        alive = np.ones(N, dtype=bool)
        alive[failed_ids] = False
        matched_types, slots = min_weight_full_bipartite_matching(_slot_graph(current, alive, S))
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
        return ReorderPlan(
            stacks=S, order=new, assignment=assignment, moves=int(2 * moved_in.sum())
        )


def _slot_graph(current: np.ndarray, alive: np.ndarray, S: int) -> csr_matrix:
    """Edges type ``t`` -> slot (host ``h``, copy ``c``) = column ``h S + c``, as a CSR matrix.

    Weight 1 if ``t`` is already in the top ``S`` of ``h``, else 2 (weights
    must be non-zero to be stored edges).  Built directly in canonical form
    (each row's columns increasing: its hosts in increasing id, then the
    copies), the arrays that ``csr_matrix((data, (rows, cols)))`` gives for
    these edges listed host by host, without its conversion and sort.
    """
    N, r = current.shape
    index = np.int32 if N * S < 2**31 - 1 else np.int64  # scipy's own choice
    cells = np.flatnonzero(np.repeat(alive, r))  # (group, position) cells of survivors
    types = current.ravel()[cells]
    # A stable sort (unique result) groups the edges by type, hosts still increasing;
    # 16-bit keys sort by radix.
    by_type = np.argsort(types.astype(np.uint16) if N <= 1 << 16 else types, kind="stable")
    cells = cells[by_type]
    weight = np.where(cells % r < S, 1.0, 2.0)
    indptr = np.zeros(N + 1, dtype=index)
    np.cumsum(np.bincount(types, minlength=N) * S, out=indptr[1:])
    indices = ((cells // r).astype(index)[:, None] * S + np.arange(S, dtype=index)).ravel()
    return csr_matrix((np.repeat(weight, S), indices, indptr), shape=(N, N * S))


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

    **Micro-batches** (``microbatches = m > 1``): the same repair on the piece
    flow of :func:`spare_theory.stacking.stacks.min_load`.  It keeps ``x[t][h]``
    pieces of type ``t`` on host ``h``, at most ``L`` pieces a host.  When
    ``g`` fails only ``g``'s pieces are re-routed: for each orphaned type a
    breadth-first search over hosts in the residual graph (a host may pass
    any type it computes to another surviving host of that type) ends at a
    host with spare capacity, and the path carries as many pieces as its
    bottleneck allows.  If an orphan has no augmenting path, the set ``R`` it
    reaches is closed (all its hosts full) and stays closed while other
    paths are augmented (such paths never touch ``R``), so the max flow at
    ``L`` is below ``m N``: ``L`` grows by one piece.  ``min_load`` never
    decreases as groups fail, so ``load = L / m`` equals
    ``min_load(hosts, failed, microbatches=m)`` after every failure.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement; initially every type is computed by its top-of-stack host
        ``hosts[t, 0]`` and ``stacks = 1``.
    microbatches : int, default 1
        Pieces per shard ``m``; ``1`` is the published whole-shard scheme.

    Attributes
    ----------
    stacks : int
        Current ``S*`` (``m = 1``); for ``m > 1`` the load rounded up,
        ``ceil(load)``.
    load : float
        Current least largest load in shard units (``S*`` for ``m = 1``).
    microbatches : int
        ``m``.
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
    >>> split = ReorderingController(cyclic_placement(7, 3), microbatches=4)
    >>> split.fail(0), split.fail(2), split.load
    (1.25, 1.5, 1.5)
    >>> split.pieces.sum(axis=1).tolist()  # every type's 4 pieces are computed
    [4, 4, 4, 4, 4, 4, 4]
    """

    def __init__(self, hosts: npt.ArrayLike, *, microbatches: int = 1) -> None:
        placement = validate_hosts(hosts)
        self.N, self.r = placement.shape
        self.microbatches = as_count(microbatches, "microbatches", minimum=1)
        self._placement = placement
        m = self.microbatches
        self._assigned: list[int] = placement[:, 0].tolist()
        # Piece state (m > 1 only: whole shards never read it): x[t] = {host: pieces},
        # on[h] = {type: pieces}.
        self._x: list[dict[int, int]] = [{h: m} for h in self._assigned] if m > 1 else []
        self._on: list[dict[int, int]] = [{} for _ in range(self.N)] if m > 1 else []
        for t, h in enumerate(self._assigned if m > 1 else ()):
            self._on[h][t] = m
        self._pieces_cap = m
        self._hosts: list[list[int]] = placement.tolist()
        self._on_group: list[list[int]] = group_stacks(placement).tolist()
        self._members = [{stack[0]} for stack in self._on_group]
        self._load = [1 if m == 1 else m] * self.N  # whole shards, or pieces
        self._alive_hosts = [self.r] * self.N
        self._dead = [False] * self.N
        self.stacks = 1
        self.failed: set[int] = set()

    @property
    def load(self) -> float:
        """Current least largest host load in shard units (``S*`` when ``m = 1``)."""
        if self.microbatches == 1:
            return float(self.stacks)
        return self._pieces_cap / self.microbatches

    @property
    def pieces(self) -> npt.NDArray[np.int64]:
        """``pieces[t, k]``: pieces of type ``t`` on group ``hosts[t, k]`` (shape ``(N, r)``)."""
        out = np.zeros((self.N, self.r), dtype=np.int64)
        if self.microbatches == 1:
            out[self._placement == self.assignment[:, None]] = 1
            return out
        # One entry per (type, host) holding pieces (about N), not a lookup per (t, k).
        x = self._x
        types = np.repeat(np.arange(self.N), [len(x_t) for x_t in x])
        hosts = np.fromiter(chain.from_iterable(x), dtype=np.int64, count=types.size)
        counts = chain.from_iterable(x_t.values() for x_t in x)
        out[types, np.argmax(self._placement[types] == hosts[:, None], axis=1)] = np.fromiter(
            counts, dtype=np.int64, count=types.size
        )
        return out

    @property
    def assignment(self) -> npt.NDArray[np.int64]:
        """``assignment[t]``: the surviving group computing type ``t`` (``int64`` array)."""
        return np.array(self._assigned, dtype=np.int64)

    def fail(self, group: int) -> float:
        """Fail ``group``; return the new ``S*`` (``int``; the load, a ``float``, if ``m > 1``).

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
        # A plain int in range skips the validator (a trajectory calls this per failure).
        g = (
            group
            if type(group) is int and 0 <= group < self.N
            else as_count(group, "group", minimum=0, maximum=self.N - 1)
        )
        if self._dead[g]:
            raise ValueError(f"group {g} has already failed")
        stack, alive = self._on_group[g], self._alive_hosts
        if 1 in map(alive.__getitem__, stack):
            wiped = [t for t in stack if alive[t] == 1]
            raise WipedOut(f"failing group {g} wipes out types {wiped}", wiped)
        self._dead[g] = True
        self.failed.add(g)
        for t in stack:
            alive[t] -= 1
        if self.microbatches > 1:
            return self._fail_pieces(g)
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

    # --- micro-batch pieces (m > 1) ---------------------------------------------

    def _set_cap(self, cap: int) -> None:
        """Set ``L``; every host below it is spare, and all labels restart at 0."""
        self._pieces_cap = cap
        load, dead = self._load, self._dead
        self._spare = {h for h in range(self.N) if not dead[h] and load[h] < cap}
        self._label = [0] * self.N

    def _add_load(self, h: int, amount: int) -> None:
        self._load[h] += amount
        if self._load[h] >= self._pieces_cap:
            self._spare.discard(h)

    def _fail_pieces(self, g: int) -> float:
        """Re-route the pieces of failed ``g``; raise ``L`` only when no path exists."""
        orphans = self._on[g]
        self._on[g] = {}
        self._load[g] = 0
        m = self.microbatches
        if not hasattr(self, "_spare"):
            self._set_cap(self._pieces_cap)
        self._spare.discard(g)
        alive = self.N - len(self.failed)
        if self._pieces_cap * alive < m * self.N:
            # Counting bound: m N pieces need ceil(m N / alive) a host; no search
            # can prove less, so raise at once (a failed search costs a sweep).
            self._set_cap(-(-(m * self.N) // alive))
        for t in orphans:
            del self._x[t][g]
        for t, count in orphans.items():
            while count:
                moved = self._augment_pieces(t, count)
                if moved:
                    count -= moved
                else:
                    self._set_cap(self._pieces_cap + 1)
        self.stacks = -(-self._pieces_cap // m)
        return self._pieces_cap / m

    def _move(self, u: int, src: int | None, dst: int, amount: int) -> None:
        x_u, on_dst = self._x[u], self._on[dst]
        x_u[dst] = x_u.get(dst, 0) + amount
        on_dst[u] = on_dst.get(u, 0) + amount
        if src is not None:
            left = x_u[src] - amount
            if left:
                x_u[src] = left
                self._on[src][u] = left
            else:
                del x_u[src]
                del self._on[src][u]

    def _augment_pieces(self, t: int, count: int) -> int:
        """Route up to ``count`` orphan pieces of ``t``; return how many (0: no path exists).

        First the orphan's own hosts with spare capacity.  Otherwise one
        shortest augmenting path guided by distance labels, as in the
        shortest-augmenting-path max-flow algorithm (Ahuja and Orlin):
        ``d[h]`` is a lower bound on the residual distance from host ``h`` to
        a host with spare capacity (residual edge ``h -> h2``: ``h`` computes
        a piece of a type that ``h2`` holds).  The walk follows admissible
        edges (``d[h2] = d[h] - 1``), relabels a dead end to one more than
        its least neighbour, and after ``_RELABEL_BUDGET`` relabels recomputes
        every label exactly by one backward breadth-first search from the
        spare hosts (unreachable hosts get ``_INF``).  Labels stay valid lower
        bounds as groups fail (edges only disappear), along augmenting paths
        (new reverse edges point down the labels) and as spare hosts fill up;
        raising ``L`` makes every host spare, so they restart at 0.  An
        ``_INF`` label is exact (no event ever connects such a host to spare
        capacity again before ``L`` grows), so an orphan whose hosts are all
        ``_INF`` has no augmenting path.

        When spare capacity is scarce (just before the counting bound rises)
        the few spare hosts lie far from the orphan and a blind search sweeps
        most hosts for every piece; the labels make each piece's path cost
        its length times the degree.
        """
        hosts, load, dead, cap = self._hosts, self._load, self._dead, self._pieces_cap
        placed = 0
        for h in hosts[t]:
            if not dead[h] and load[h] < cap:
                amount = min(count - placed, cap - load[h])
                self._move(t, None, h, amount)
                self._add_load(h, amount)
                placed += amount
                if placed == count:
                    return placed
        if placed or not self._spare:
            return placed
        d, on = self._label, self._on
        relabels = 0
        exact = False
        while True:
            entries = [h for h in hosts[t] if not dead[h]]
            start = min(entries, key=d.__getitem__)
            if d[start] >= _INF:
                if exact:
                    return 0
                self._global_relabel()
                exact, relabels = True, 0
                continue
            path = [start]
            via: list[int] = [t]  # via[i]: type moving onto path[i]
            while path:
                h = path[-1]
                if load[h] < cap:
                    return self._push_path(path, via, count)
                target = d[h] - 1
                step = None
                for u in on[h]:
                    for h2 in hosts[u]:
                        if d[h2] == target and not dead[h2]:
                            step = (u, h2)
                            break
                    if step is not None:
                        break
                if step is not None:
                    via.append(step[0])
                    path.append(step[1])
                    continue
                # Dead end: relabel h and retreat.
                low = _INF - 1
                for u in on[h]:
                    for h2 in hosts[u]:
                        if h2 != h and not dead[h2] and d[h2] < low:
                            low = d[h2]
                d[h] = low + 1
                relabels += 1
                exact = False
                path.pop()
                via.pop()
                if relabels > _RELABEL_BUDGET:
                    break
            if relabels > _RELABEL_BUDGET:
                self._global_relabel()
                exact, relabels = True, 0

    def _global_relabel(self) -> None:
        """Exact residual distances to spare hosts by a backward breadth-first search."""
        d = [_INF] * self.N
        x, on_group = self._x, self._on_group
        front = list(self._spare)
        for h in front:
            d[h] = 0
        level = 0
        while front:
            level += 1
            nxt = []
            for h2 in front:
                for u in on_group[h2]:
                    for h in x[u]:
                        if d[h] == _INF:
                            d[h] = level
                            nxt.append(h)
            front = nxt
        self._label[:] = d  # in place: callers hold the list

    def _push_path(self, path: list[int], via: list[int], count: int) -> int:
        """Push the bottleneck amount: orphan ``via[0]`` onto ``path[0]``, then down the path."""
        end = path[-1]
        amount = min(count, self._pieces_cap - self._load[end])
        for i in range(1, len(path)):
            amount = min(amount, self._x[via[i]][path[i - 1]])
        self._move(via[0], None, path[0], amount)
        for i in range(1, len(path)):
            self._move(via[i], path[i - 1], path[i], amount)
        self._add_load(end, amount)
        return amount
