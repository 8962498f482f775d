"""The m = 1 trajectory two ways, in one process: the whole-shard kernel and the piece kernel.

Baseline: ``spare_theory.stacking._trajectory.trajectory_from_arrays``, the
compiled augmenting-path repair for whole shards (``m = 1``).  Candidate: the
micro-batch piece kernel ``_piece_trajectory.load_trajectory_from_arrays``
with one piece per shard, which computes the same ``S*`` (checked on every
order).  Before the two kernels become one, the candidate may be at most
10 % slower at ``m = 1``.

Sizes ``N = 2,000, 20,000, 75,000`` at ``r`` near ``log2 N``.  Each size
times the same random orders both ways, alternating baseline and candidate
over several repeats and keeping each one's best total (the machine is
shared: the best of interleaved repeats is the least disturbed).  The numba
kernels are loaded or compiled by a warm-up call first, not timed.  Prints
seconds per trajectory and the ratio candidate / baseline (<= 1.10 passes).

    python bench/bench_kernels.py [--repeats K]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from spare_theory.placement.placements import cyclic_placement, group_stacks
from spare_theory.stacking._piece_trajectory import COMPILED, load_trajectory_from_arrays
from spare_theory.stacking._trajectory import trajectory_from_arrays

# (N, r, orders): r near log2 N; orders so that each total takes a fraction of a second.
CASES = [(2_000, 11, 40), (20_000, 14, 8), (75_000, 16, 3), (75_000, 17, 3)]
LIMIT = 1.10


def baseline(hosts: np.ndarray, stacks: np.ndarray, order: np.ndarray) -> np.ndarray:
    return trajectory_from_arrays(hosts, stacks, order)


def candidate(hosts: np.ndarray, stacks: np.ndarray, order: np.ndarray) -> np.ndarray:
    return load_trajectory_from_arrays(hosts, stacks, order, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repeats per size")
    args = parser.parse_args()
    small = cyclic_placement(13, 4)
    start = time.perf_counter()
    for run in (baseline, candidate):
        run(small, group_stacks(small), np.arange(13))
    print(
        f"numba compiled={COMPILED}; warm-up (load or compile) {time.perf_counter() - start:.2f} s"
    )
    worst = 0.0
    for N, r, runs in CASES:
        hosts = cyclic_placement(N, r)
        stacks = group_stacks(hosts)
        orders = [np.random.default_rng([N, i]).permutation(N) for i in range(runs)]
        best = {baseline: np.inf, candidate: np.inf}
        results = {}
        for _ in range(args.repeats):
            for run in (baseline, candidate):
                start = time.perf_counter()
                results[run] = [run(hosts, stacks, o) for o in orders]
                best[run] = min(best[run], (time.perf_counter() - start) / runs)
        same = all(np.array_equal(a, b) for a, b in zip(results[baseline], results[candidate]))
        assert same, f"N={N} r={r}: the kernels' trajectories differ"
        ratio = best[candidate] / best[baseline]
        worst = max(worst, ratio)
        mean_T = np.mean([t.size for t in results[baseline]])
        print(
            f"N={N:>6} r={r:>2} (mean T {mean_T:6.0f}): baseline {best[baseline]:8.5f} s, "
            f"candidate {best[candidate]:8.5f} s per trajectory, ratio {ratio:5.3f}"
        )
    print(f"worst ratio {worst:.3f} ({'within' if worst <= LIMIT else 'OVER'} {LIMIT:.2f})")


if __name__ == "__main__":
    main()
