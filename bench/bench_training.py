"""Cost of the optimiser: the previous search strategy against the current one, in one process.

Baseline (the optimiser before the speed-up, rewritten on the public API):
``r`` scanned upwards from 1 with the patience rule, and for each ``r`` a
bounded Brent search (``xatol = 1e-3``) in ``log tau`` over a factor 100
either side of Young's interval, one scalar ``time_to_train`` per point.
Fast: :func:`spare_theory.training.optimize.optimal_plan` (SPARe's scan starts at the
``r*`` rule and walks both ways; vectorised grids over ``tau``; CKPT-only in
closed form).  Both run on the same model and cycle tables, so the ratio is
the search alone; "cold" empties the layer's caches
(:func:`spare_theory._caching.clear_caches`) before every plan (the
tables are then built by whichever runs), "warm" reuses them.

Prints ms per plan for each strategy, the ratio, and how much lower (or
higher) the fast plan's hours are (the baseline's local search can stop in a
worse local minimum of hours against ``tau``).

Run: ``python bench/bench_training.py``.
"""

import itertools
import math
import time

import numpy as np
from scipy.optimize import minimize_scalar

from spare_theory._caching import clear_caches
from spare_theory.hourly.scenario import Scenario
from spare_theory.planning.redundancy import ruler_exists
from spare_theory.strategies.registry import strategy as registered_strategy
from spare_theory.training.estimate import time_to_train
from spare_theory.training.optimize import optimal_plan

GRID = [
    Scenario(
        gpus=g,
        gpus_per_group=m,
        gpu_mtbf_hours=mtbf,
        restart_minutes=rst,
        checkpoint_minutes=5,
        work_hours=720,
    )
    for g, m, mtbf, rst in itertools.product(
        (100_000, 600_000), (256, 2048), (20_000, 50_000), (15, 60)
    )
]
STRATEGIES = ("ckpt", "rep", "spare")


def _baseline_interval(sc, strategy, r):
    """Bounded Brent in log tau within a factor 100 of Young's interval (and <= M/2 for r > 1)."""
    lam = sc.group_failure_rate_per_hour
    M = 60 * registered_strategy(strategy).cycle_law(sc.groups, r).mean_u / lam
    young = math.sqrt(2 * sc.checkpoint_minutes * M)
    lo = math.log(max(young / 100, 1 / 60))
    hi = math.log(min(young * 100, 600 * sc.work_hours, M / 2 if r > 1 else math.inf))
    res = minimize_scalar(
        lambda x: time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=math.exp(x)).hours,
        bounds=(lo, max(hi, lo + 1e-6)),
        method="bounded",
        options={"xatol": 1e-3},
    )
    return time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=math.exp(res.x)).hours


def _baseline_plan(sc, strategy):
    """Upward scan over r with patience 3; the best hours."""
    best, worse = math.inf, 0
    for r in range(1, (1 if strategy == "ckpt" else sc.groups) + 1):
        if strategy == "spare" and r > 1 and not ruler_exists(sc.groups, r):
            break
        hours = _baseline_interval(sc, strategy, r)
        if hours < best:
            best, worse = hours, 0
        else:
            worse += 1
            if worse >= 3:
                break
    return best


def run(plan, cold: bool) -> tuple[dict, dict]:
    seconds = dict.fromkeys(STRATEGIES, 0.0)
    hours = {s: [] for s in STRATEGIES}
    for sc in GRID:
        for s in STRATEGIES:
            if cold:
                clear_caches()
            t = time.perf_counter()
            hours[s].append(plan(sc, s))
            seconds[s] += time.perf_counter() - t
    return {s: 1e3 * v / len(GRID) for s, v in seconds.items()}, {
        s: np.array(v) for s, v in hours.items()
    }


def main():
    run(lambda sc, s: optimal_plan(sc, s).hours, cold=False)  # rulers and imports
    for cold in (True, False):
        base, base_hours = run(_baseline_plan, cold)
        fast, fast_hours = run(lambda sc, s: optimal_plan(sc, s).hours, cold)
        label = "cold" if cold else "warm"
        for s in STRATEGIES:
            gain = (fast_hours[s] - base_hours[s]) / base_hours[s]
            print(
                f"{label} {s:6s} baseline {base[s]:8.1f} ms/plan  fast {fast[s]:7.1f} ms/plan  "
                f"speed-up {base[s] / fast[s]:5.1f}x  hours fast vs baseline: "
                f"min {gain.min():+.1e}, max {gain.max():+.1e}"
            )
        total_base, total_fast = sum(base.values()), sum(fast.values())
        print(
            f"{label} all three strategies: baseline {total_base:.1f} ms, "
            f"fast {total_fast:.1f} ms per scenario "
            f"({total_base / total_fast:.1f}x)"
        )


if __name__ == "__main__":
    main()
