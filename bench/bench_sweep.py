"""Time a 10 x 10 x 10 sweep (GPUs x MTBF x GPUs per group), optimiser for all three strategies.

Target (issue 5): at most 30 s serial on the 2-core reference machine.  The
script runs, in one process:

1. the whole grid serially with :func:`spare_theory.sweep.sweep`, and its
   ratio to the 30 s budget;
2. where that time goes: for every distinct ``N`` of the grid, the cold cost
   of the first point (the cycle models of ``spare_theory.training`` are built
   and cached per ``(strategy, N, r)``) against the warm cost of the other
   points, split by strategy;
3. the same grid on a two-process pool (cells of equal ``N`` per task), as a
   ratio to the serial run.

Run: ``python bench/bench_sweep.py [--no-pool]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import time
from collections import defaultdict

import numpy as np

from spare_theory import Scenario, optimal_plan
from spare_theory.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from spare_theory.sweep import STRATEGIES, restart_minutes, sweep

GRID = dict(
    gpus=[int(round(g, -3)) for g in np.geomspace(10_000, 1_000_000, 10)],
    gpu_mtbf_hours=list(np.geomspace(0.5, 2.0, 10) * LLAMA3_H100_GPU_MTBF_HOURS),
    gpus_per_group=[8 * 2**k for k in range(10)],  # 8 .. 4096
)
BUDGET_SECONDS = 30.0


def _breakdown():
    """Seconds per strategy, cold (first point of each N) and warm (the rest), after a cache reset."""
    from spare_theory import training

    training._cycle.cache_clear()
    seconds = defaultdict(float)
    seen = set()
    for gpg in GRID["gpus_per_group"]:
        for g in GRID["gpus"]:
            for m in GRID["gpu_mtbf_hours"]:
                sc = Scenario(g, gpg, m, restart_minutes(g, "linear"), 5.0, 720.0)
                phase = "warm" if sc.groups in seen else "cold"
                seen.add(sc.groups)
                for strategy in STRATEGIES:
                    start = time.perf_counter()
                    optimal_plan(sc, strategy)
                    seconds[phase, strategy] += time.perf_counter() - start
    return seconds, len(seen)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-pool", action="store_true", help="skip the process-pool run")
    args = parser.parse_args()
    points = np.prod([len(v) for v in GRID.values()])
    print(f"grid: {points} points, gpus {GRID['gpus'][0]:,}..{GRID['gpus'][-1]:,}, "
          f"MTBF x0.5..x2 of {LLAMA3_H100_GPU_MTBF_HOURS:,.0f} h, {GRID['gpus_per_group']} GPUs per group, "
          "linear restart, all three strategies")

    start = time.perf_counter()
    sweep(**GRID, progress=False)
    serial = time.perf_counter() - start
    print(f"serial sweep: {serial:.1f} s = {serial / BUDGET_SECONDS:.2f} x the {BUDGET_SECONDS:.0f} s budget "
          f"({1000 * serial / points:.1f} ms per point, caches warm from the start of this run only)")

    seconds, distinct = _breakdown()
    total = sum(seconds.values())
    print(f"breakdown over {distinct} distinct N (optimal_plan only, caches reset): {total:.1f} s")
    for phase in ("cold", "warm"):
        n = distinct if phase == "cold" else points - distinct
        for strategy in STRATEGIES:
            s = seconds[phase, strategy]
            print(f"  {phase:4s} {strategy:5s}: {s:6.1f} s ({100 * s / total:4.1f} %), "
                  f"{1000 * s / max(n, 1):7.1f} ms per point over {n} points")

    if not args.no_pool:
        with cf.ProcessPoolExecutor(max_workers=2) as pool:
            start = time.perf_counter()
            sweep(**GRID, executor=pool, progress=False)
            pooled = time.perf_counter() - start
        print(f"2-process pool: {pooled:.1f} s, speed-up {serial / pooled:.2f}x over serial")


if __name__ == "__main__":
    main()
