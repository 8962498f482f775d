"""Time a 10 x 10 x 10 sweep (GPUs x MTBF x GPUs per group), optimiser for all three strategies.

Target (issue 5): at most 30 s serial on the 2-core reference machine.  The
script runs, in one process:

1. the whole grid serially with :func:`spare_theory.sweeps.sweep`, and its
   ratio to the 30 s budget;
2. where that time goes: the same sweep from cold caches under cProfile,
   with the cumulative time of the ruler search, the cycle laws of
   ``spare_theory.cycles.laws`` (cached per ``(strategy, N, r)``), the interval
   search of ``spare_theory.training.optimize`` and the optimiser as a whole;
3. the same grid on a two-process pool (cells of equal ``N`` per task), as a
   ratio to the serial run.

Run: ``python bench/bench_sweep.py [--no-pool]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import time

import numpy as np

from spare_theory._caching import clear_caches
from spare_theory.hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from spare_theory.sweeps import sweep

GRID = dict(
    gpus=[int(round(g, -3)) for g in np.geomspace(10_000, 1_000_000, 10)],
    gpu_mtbf_hours=list(np.geomspace(0.5, 2.0, 10) * LLAMA3_H100_GPU_MTBF_HOURS),
    gpus_per_group=[8 * 2**k for k in range(10)],  # 8 .. 4096
)
BUDGET_SECONDS = 30.0


def _reset_caches():
    """Empty every cache in the package, so each measurement starts cold.

    The time-to-train layer's by its public :func:`~spare_theory._caching.clear_caches`;
    the lower layers' (rulers) by clearing every functools cache found in a module.
    """
    clear_caches()
    import importlib
    import pkgutil

    import spare_theory

    for info in pkgutil.walk_packages(spare_theory.__path__, "spare_theory."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


# Where a cold sweep spends its time: cumulative seconds of these functions.
_HOTSPOTS = {
    "placement.py:modular_ruler (ruler search)": ("placement.py", "modular_ruler"),
    "strategies.py:cycle_law (cycle laws, built once per (strategy, N, r))": (
        "strategies.py",
        "cycle_law",
    ),
    "estimate.py:estimate_job (interval search per r)": ("estimate.py", "estimate_job"),
    "optimize.py:optimal_plan (all of the optimiser)": ("optimize.py", "optimal_plan"),
}


def _profile():
    """Cumulative seconds of the hotspots in one cold serial sweep, and its total."""
    import cProfile
    import pstats

    _reset_caches()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(sweep, **GRID, progress=False)
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler).stats
    seconds = {}
    for label, (filename, function) in _HOTSPOTS.items():
        seconds[label] = sum(
            cum
            for (path, _, name), (_, _, _, cum, _) in stats.items()
            if path.endswith(filename) and name == function
        )
    return seconds, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-pool", action="store_true", help="skip the process-pool run")
    args = parser.parse_args()
    points = np.prod([len(v) for v in GRID.values()])
    print(
        f"grid: {points} points, gpus {GRID['gpus'][0]:,}..{GRID['gpus'][-1]:,}, "
        f"MTBF x0.5..x2 of {LLAMA3_H100_GPU_MTBF_HOURS:,.0f} h, "
        f"{GRID['gpus_per_group']} GPUs per group, "
        "linear restart, all three strategies"
    )

    start = time.perf_counter()
    _reset_caches()
    sweep(**GRID, progress=False)
    serial = time.perf_counter() - start
    print(
        f"serial sweep: {serial:.1f} s = {serial / BUDGET_SECONDS:.2f} x the "
        f"{BUDGET_SECONDS:.0f} s budget "
        f"({1000 * serial / points:.1f} ms per point, from cold caches)"
    )

    seconds, total = _profile()
    print(
        f"cold serial sweep under cProfile: {total:.1f} s; "
        "cumulative time (nested, so shares overlap):"
    )
    for label, value in seconds.items():
        print(f"  {value:6.1f} s ({100 * value / total:4.1f} %)  {label}")

    if not args.no_pool:
        with cf.ProcessPoolExecutor(max_workers=2) as pool:
            start = time.perf_counter()
            sweep(**GRID, executor=pool, progress=False)
            pooled = time.perf_counter() - start
        print(f"2-process pool: {pooled:.1f} s, speed-up {serial / pooled:.2f}x over serial")


if __name__ == "__main__":
    main()
