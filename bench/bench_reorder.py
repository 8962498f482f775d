"""Cost of one minimal-move reordering, against the scipy calls it cannot avoid or replaced.

The step-level simulator reorders after every failure that leaves a type
uncovered (tens of thousands of calls a report).  Two ratios, both in this
process on the same placements, failure sets and stack orders:

* ``StackReorderer(hosts)(failed, order)`` against the floor: the
  ``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` call on its
  graph, which any exact minimal-move plan has to solve (issue 22 asks the
  rest, the checks, ``S*`` and the graph, to cost less than the matching).
* the ``S*`` search (a bipartite matching per ``S``, :func:`least_stacks` on the
  surviving edges) against one ``maximum_flow`` on the COO-built flow
  network at ``S*``, the former cost of each step of that search.

Run: ``python bench/bench_reorder.py`` (about 20 s).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow, min_weight_full_bipartite_matching

from spare_theory import cyclic_placement
from spare_theory.placement.placements import group_stacks
from spare_theory.stacking.reordering import StackReorderer, _slot_graph
from spare_theory.stacking.stacks import least_stacks, surviving_edges

CASES = [(200, 9, 20), (1000, 9, 60)]  # (N, r, failed groups)
CALLS = 100


def _cases(N: int, r: int, f: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random failure sets, the placement's own stack order (as after a restart)."""
    rng = np.random.default_rng(0)
    stacks = group_stacks(cyclic_placement(N, r))
    return [(np.sort(rng.choice(N, f, replace=False)), stacks) for _ in range(CALLS)]


def _max_flow(hosts: np.ndarray, failed: np.ndarray, S: int) -> object:
    """The former test of one ``S``: the flow network from COO triplets, scipy's max flow."""
    N = hosts.shape[0]
    types, groups = surviving_edges(hosts, failed)
    tails = np.concatenate([np.zeros(N, dtype=np.int64), 1 + types, N + 1 + np.arange(N)])
    heads = np.concatenate([1 + np.arange(N), N + 1 + groups, np.full(N, 2 * N + 1)])
    caps = np.concatenate([np.ones(N + types.size, np.int32), np.full(N, S, np.int32)])
    graph = csr_matrix((caps, (tails, heads)), shape=(2 * N + 2, 2 * N + 2))
    return maximum_flow(graph, 0, 2 * N + 1, method="dinic")


def _seconds(run, cases) -> float:
    """Least mean seconds a call over 5 passes (the machine is shared)."""
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        for case in cases:
            run(*case)
        best = min(best, (time.perf_counter() - start) / len(cases))
    return best


def main() -> None:
    for N, r, f in CASES:
        hosts = cyclic_placement(N, r)
        reorderer = StackReorderer(hosts)
        cases = _cases(N, r, f)
        plans = [reorderer(failed, order) for failed, order in cases]  # compiles first
        alive = [np.isin(np.arange(N), failed, invert=True) for failed, _ in cases]
        graphs = [
            (_slot_graph(order, a, p.stacks),) for (_, order), p, a in zip(cases, plans, alive)
        ]
        edges = [(N, r, *surviving_edges(hosts, failed), failed.size) for failed, _ in cases]
        flows = [(hosts, failed, p.stacks) for (failed, _), p in zip(cases, plans)]
        call = _seconds(reorderer, cases)
        matching = _seconds(min_weight_full_bipartite_matching, graphs)
        search = _seconds(least_stacks, edges)
        flow = _seconds(_max_flow, flows)
        print(
            f"N={N:5d} r={r:2d} |F|={f:3d}: reorder {1e3 * call:6.2f} ms "
            f"= {call / matching:4.2f}x its matching ({1e3 * matching:5.2f} ms); "
            f"S* search {1e6 * search:5.0f} us = 1/{flow / search:4.1f} of one COO-built "
            f"max flow ({1e6 * flow:5.0f} us)"
        )


if __name__ == "__main__":
    main()
