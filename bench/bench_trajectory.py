"""Compiled exact S* trajectory against the reordering controller, in one process.

Baseline: :class:`spare_theory.ReorderingController` failing groups one by one
(the routine behind ``stacking.overhead.stacks_trajectory`` before issue 15).
New: ``spare_theory.stacking._trajectory.trajectory_from_arrays`` (numba), which
``stacks_trajectory`` and ``simulate_overhead`` now use.  Both run on the
same placements and orders; trajectories must be identical.  Prints seconds
per trajectory (best of the orders' totals over repeats) and the ratio
(target >= 4x at N = 75,000, r = 17).  The first call loads or compiles the
numba kernel; it is timed separately and not in the ratio.

    python bench/bench_trajectory.py
"""

from __future__ import annotations

import time

import numpy as np

from spare_theory import ReorderingController, WipedOut
from spare_theory.placement.placements import cyclic_placement, group_stacks
from spare_theory.stacking._trajectory import COMPILED, trajectory_from_arrays

CASES = [(75_000, 17, 4), (75_000, 2, 3), (8192, 20, 3), (4096, 12, 5)]


def controller_trajectory(hosts: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Baseline: the online controller, one ``fail`` per failure until the wipe-out."""
    controller = ReorderingController(hosts)
    out = [1]
    for g in order:
        try:
            out.append(controller.fail(int(g)))
        except WipedOut:
            break
    return np.array(out, dtype=np.int64)


def main() -> None:
    hosts = cyclic_placement(13, 4)
    start = time.perf_counter()
    trajectory_from_arrays(hosts, group_stacks(hosts), np.arange(13))
    first = time.perf_counter() - start
    print(f"numba compiled={COMPILED}; first call (load or compile) {first:.2f} s")
    for N, r, runs in CASES:
        hosts = cyclic_placement(N, r)
        stacks = group_stacks(hosts)
        orders = [np.random.default_rng(i).permutation(N) for i in range(runs)]
        start = time.perf_counter()
        base = [controller_trajectory(hosts, o) for o in orders]
        t_base = (time.perf_counter() - start) / runs
        t_new = np.inf
        for _ in range(3):
            start = time.perf_counter()
            new = [trajectory_from_arrays(hosts, stacks, o) for o in orders]
            t_new = min(t_new, (time.perf_counter() - start) / runs)
        assert all(np.array_equal(a, b) for a, b in zip(base, new)), "trajectories differ"
        mean_T = np.mean([b.size for b in base])
        print(
            f"N={N:>6} r={r:>2} (mean T {mean_T:7.0f}): controller {t_base:7.3f} s, "
            f"compiled {t_new:7.4f} s per trajectory, ratio {t_base / t_new:5.1f}x"
            + ("  (target >= 4x)" if (N, r) == (75_000, 17) else "")
        )


if __name__ == "__main__":
    main()
