"""Online micro-batch load against solving ``min_load`` from scratch after every failure.

N = 4,096, r = 12, m = 8: one whole failure trajectory to wipe-out with the
compiled piece-flow repair (``spare_theory.stacking._trajectory``, what
``stacks_trajectory`` and ``simulate_overhead`` use; the numba kernel is
loaded or compiled by a warm-up call on a small placement, not timed), with
the Python ``ReorderingController(hosts, microbatches=8)`` (same algorithm,
reference), and ``min_load`` from scratch on every ``STRIDE``-th state of the
same trajectory (a whole trajectory from scratch takes minutes); all in this
process.  The loads must agree on every state computed two or three ways.
Prints the mean time per state each way and the ratios (target >= 20x for the
compiled online load).

Run: ``python bench/bench_microbatch.py [--stride K]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from spare_theory import ReorderingController, WipedOut, min_load
from spare_theory.placement.placements import cyclic_placement, group_stacks
from spare_theory.stacking._trajectory import COMPILED, trajectory_from_arrays

N, R, M = 4096, 12, 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=40, help="from scratch every K-th state")
    args = parser.parse_args()
    hosts = cyclic_placement(N, R)
    order = np.random.default_rng(0).permutation(N)

    controller = ReorderingController(hosts, microbatches=M)
    loads = [controller.load]
    start = time.perf_counter()
    for g in order:
        try:
            loads.append(controller.fail(int(g)))
        except WipedOut:
            break
    t_online = time.perf_counter() - start
    T = len(loads)  # states f = 0..T-1; the T-th failure wipes out

    small = cyclic_placement(57, 8)
    trajectory_from_arrays(small, group_stacks(small), range(57), M)  # warm-up (jit)
    stacks = group_stacks(hosts)
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        compiled_loads = trajectory_from_arrays(hosts, stacks, order, M)
        best = min(best, time.perf_counter() - start)
    assert np.array_equal(compiled_loads, np.array(loads)), "compiled != controller"

    states = list(range(args.stride, T, args.stride))
    start = time.perf_counter()
    scratch = [min_load(hosts, order[:f], microbatches=M) for f in states]
    t_scratch = time.perf_counter() - start
    for f, value in zip(states, scratch):
        assert loads[f] == value, f"controller {loads[f]} != min_load {value} at f={f}"
    above = sum(value > np.ceil(M * N / (N - f)) / M for f, value in zip(states, scratch))

    per_online = t_online / (T - 1)
    per_compiled = best / (T - 1)
    per_scratch = t_scratch / len(states)
    print(
        f"N={N} r={R} m={M}: T={T} failures, final load {loads[-1]:.3f} (N/(N-f) at T-1: "
        f"{N / (N - T + 1):.3f}); {above} of {len(states)} checked states above the bound"
    )
    print(
        f"  from scratch {1e3 * per_scratch:.2f} ms/state ({len(states)} states), "
        f"Python controller {1e3 * per_online:.3f} ms/failure, compiled "
        f"{1e3 * per_compiled:.3f} ms/failure (best of 3; numba: {COMPILED}; {T - 1} failures)"
    )
    print(
        f"  ratio compiled {per_scratch / per_compiled:.0f}x (target >= 20x); "
        f"Python controller {per_scratch / per_online:.0f}x"
    )


if __name__ == "__main__":
    main()
