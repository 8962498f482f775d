"""SPARe's repair cycle with the surviving-count chain's throughput, against the down share's.

Audit mend 9 (``docs/audit.md``) reads SPARe's throughput under exponential
repairs from the chain a wipe-out ends
(:func:`spare_theory.cycles.chains.surviving_count_throughput`: an eigen
solve of a tridiagonal matrix and one product per grid point) instead of at
the down share (:meth:`Spare.throughput_at_down_share`, one interpolation).
Both sides run in this process: the baseline swaps the method back to the
base class's down-share reading.  Each case builds the whole
:class:`~spare_theory.cycles.repairs.RepairCycle` (its 2,305-point grid, the
survival first), alternating baseline and candidate over several repeats and
keeping each one's best CPU time.  Prints seconds per law and the ratio
candidate / baseline.

    python bench/bench_repair_throughput.py [--repeats K]
"""

from __future__ import annotations

import argparse
import time

from spare_theory.cycles.base import CycleLaw
from spare_theory.cycles.repairs import RepairCycle
from spare_theory.cycles.spare import Spare

# (groups, r, repairs per mean group lifetime): the small cell of the mend, the
# published 600k cluster in groups of 2,048 with 10 min repairs, a large cluster.
CASES = ((12, 2, 7.4), (292, 10, 148.0), (2048, 12, 40.0))


def build(N: int, r: int, mu: float) -> float:
    """CPU seconds to build the repair cycle (a fresh base law each time: nothing cached)."""
    start = time.process_time()
    RepairCycle(Spare(N, r), mu)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    chain, down_share = Spare.repair_throughput, CycleLaw.repair_throughput
    for N, r, mu in CASES:
        build(N, r, mu)  # warm-up: imports, the wipe-out tables' caches
        best = {"baseline": float("inf"), "candidate": float("inf")}
        for _ in range(args.repeats):
            for side in best:
                Spare.repair_throughput = down_share if side == "baseline" else chain
                best[side] = min(best[side], build(N, r, mu))
        Spare.repair_throughput = chain
        print(
            f"N = {N:5d}, r = {r:2d}, mu = {mu:6.1f}: down share {best['baseline']:.4f} s, "
            f"chain {best['candidate']:.4f} s, ratio {best['candidate'] / best['baseline']:.2f}"
        )


if __name__ == "__main__":
    main()
