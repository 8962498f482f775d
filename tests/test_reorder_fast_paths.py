"""The fast paths of ``min_stacks`` / ``reorder`` against the scipy constructions they replaced.

Issue 22: ``S*`` is decided by a bipartite matching on a CSR-built slot graph
(``maximum_bipartite_matching``) instead of
``scipy.sparse.csgraph.maximum_flow`` on a COO-built network, and the
matching graph of ``reorder`` is built directly in CSR form instead of
from COO triplets.  The references below are the former code; on random,
contiguous and cyclic placements with random failures and random stack
orders, ``S*`` must agree and the matching graph must be the same arrays,
so ``min_weight_full_bipartite_matching`` returns the same assignment.
The controller's ``pieces`` table, now filled from its piece entries, must
equal the former lookup per (type, host).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow, min_weight_full_bipartite_matching

from spare_theory import (
    ReorderingController,
    contiguous_placement,
    cyclic_placement,
    random_placement,
    reorder,
)
from spare_theory.placement.placements import group_stacks
from spare_theory.stacking.reordering import StackReorderer, _slot_graph
from spare_theory.stacking.stacks import WipedOut, min_stacks, surviving_edges


def _max_flow_stacks(hosts, failed):
    """``S*`` by the former search: a COO-built flow network and scipy's max flow per ``S``."""
    N, r = hosts.shape
    types, groups = surviving_edges(hosts, failed)
    S = -(-N // (N - failed.size))
    while r > S:
        tails = np.concatenate([np.zeros(N, dtype=np.int64), 1 + types, N + 1 + np.arange(N)])
        heads = np.concatenate([1 + np.arange(N), N + 1 + groups, np.full(N, 2 * N + 1)])
        caps = np.concatenate([np.ones(N + types.size, np.int32), np.full(N, S, np.int32)])
        graph = csr_matrix((caps, (tails, heads)), shape=(2 * N + 2, 2 * N + 2))
        if maximum_flow(graph, 0, 2 * N + 1, method="dinic").flow_value == N:
            break
        S += 1
    return S


def _coo_slot_graph(current, alive, S):
    """The former matching graph: COO triplets listed host by host, converted by scipy."""
    N = current.shape[0]
    groups, positions = np.nonzero(current >= 0)
    types = current[groups, positions]
    keep = alive[groups]
    types, groups, positions = types[keep], groups[keep], positions[keep]
    weight = np.where(positions < S, 1.0, 2.0)
    rows = np.repeat(types, S)
    cols = (groups[:, None] * S + np.arange(S)[None, :]).ravel()
    return csr_matrix((np.repeat(weight, S), (rows, cols)), shape=(N, N * S))


def _cases(count, seed):
    """Random placements (three kinds), failure sets that leave every type a host, orders."""
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        N = int(rng.integers(7, 160))
        r = int(rng.integers(2, min(9, N)))
        kind = made % 3
        if kind == 0:
            hosts = random_placement(N, r, seed=int(rng.integers(1 << 30)))
        elif kind == 1:
            hosts = contiguous_placement(N, r)  # tight Hall sets: S* often above the bound
        else:
            try:
                hosts = cyclic_placement(N, r)
            except ValueError:
                continue
        failed = rng.choice(N, int(rng.integers(0, N // 2 + 1)), replace=False)
        if kind == 1:  # every (r-1)-th of a run survives: r - 1 types a host there
            run = (rng.integers(N) + np.arange(int(rng.integers(r, N // 2 + r)))) % N
            failed = np.union1d(failed[: failed.size // 8], run[np.arange(run.size) % (r - 1) > 0])
        failed = np.sort(failed)
        try:
            surviving_edges(hosts, failed)
        except WipedOut:
            continue
        order = rng.permuted(group_stacks(hosts), axis=1)
        made += 1
        yield hosts, failed, order


def test_slot_matching_gives_the_max_flow_stacks():
    above = 0
    for hosts, failed, _ in _cases(300, seed=1):
        S = min_stacks(hosts, failed)
        assert _max_flow_stacks(hosts, failed) == S
        above += -(-hosts.shape[0] // (hosts.shape[0] - failed.size)) < S
    assert above > 30  # many cases need the search past an infeasible bound


def test_direct_slot_graph_is_the_coo_graph_and_gives_the_same_matching():
    for hosts, failed, order in _cases(150, seed=2):
        N = hosts.shape[0]
        alive = np.ones(N, dtype=bool)
        alive[failed] = False
        S = min_stacks(hosts, failed)
        new, old = _slot_graph(order, alive, S), _coo_slot_graph(order, alive, S)
        for name in ("indptr", "indices", "data"):
            a, b = getattr(new, name), getattr(old, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), name
        types, slots = min_weight_full_bipartite_matching(old)
        expected = np.empty(N, dtype=np.int64)
        expected[types] = slots // S
        plan = StackReorderer(hosts)(failed, order)
        np.testing.assert_array_equal(plan.assignment, expected)
        one_shot = reorder(hosts, failed, order)
        np.testing.assert_array_equal(one_shot.order, plan.order)
        assert (one_shot.stacks, one_shot.moves) == (plan.stacks, plan.moves)


@pytest.mark.parametrize(
    ("order", "match"),
    [(np.zeros((7, 2), dtype=np.int64), "shape"), (np.zeros((7, 3), dtype=np.int64), "exactly")],
)
def test_reorderer_checks_its_order(order, match):
    with pytest.raises(ValueError, match=match):
        StackReorderer(cyclic_placement(7, 3))([0], order)


def test_controller_pieces_match_a_lookup_per_type_and_host():
    rng = np.random.default_rng(3)
    hosts = cyclic_placement(200, 12)
    controller = ReorderingController(hosts, microbatches=8)
    for g in rng.permutation(200)[:90].tolist():
        try:
            controller.fail(g)
        except WipedOut:
            break
        expected = np.array(
            [[controller._x[t].get(h, 0) for h in row] for t, row in enumerate(hosts.tolist())]
        )
        np.testing.assert_array_equal(controller.pieces, expected)
