"""Cost of the optimiser, as the sweep uses it.

Baseline: every optimal_plan with the per-(N, r) cycle caches cleared (cold).
Fast: the same plans with the caches warm (the sweep's case when N repeats
across MTBF / restart values).  Prints ms per plan and the ratio.
"""

import itertools
import time

from spare_theory import training
from spare_theory.optimize import optimal_plan
from spare_theory.scenario import Scenario

GRID = [
    Scenario(gpus=g, gpus_per_group=m, gpu_mtbf_hours=mtbf, restart_minutes=rst, checkpoint_minutes=5, work_hours=720)
    for g, m, mtbf, rst in itertools.product((100_000, 600_000), (256, 2048), (20_000, 50_000), (15, 60))
]


def run(cold: bool) -> dict:
    out = {s: 0.0 for s in ("ckpt", "rep", "spare")}
    for sc in GRID:
        for s in out:
            if cold:
                training._cycle.cache_clear()
                training._restart_part.cache_clear()
            t = time.perf_counter()
            optimal_plan(sc, s)
            out[s] += time.perf_counter() - t
    return {s: 1e3 * v / len(GRID) for s, v in out.items()}


if __name__ == "__main__":
    run(False)  # rulers and imports
    cold, warm = run(True), run(False)
    for s in cold:
        print(f"{s:6s} cold {cold[s]:8.1f} ms/plan  warm {warm[s]:8.1f} ms/plan  ratio {cold[s] / warm[s]:6.1f}x")
    total = sum(warm.values())
    print(f"warm, all three strategies: {total:.1f} ms per scenario -> {total:.0f} s for a 10x10x10 grid")
