"""Speed of optimal_plan on the SPARe paper's step-level scenarios against one simulated run.

For both lifetime laws and N = 200, 600, 1000 (``paper_scenario(N)``), times
``optimal_plan(scenario, strategy)`` for Rep and SPARe from cold caches (the
restart law and every cycle table rebuilt), then warm; and one event-simulated
run (``simulate_training``, ``trials=1``) of the optimiser's SPARe plan at N = 200
and N = 1000 (exponential).  Ratios are against that run and against the
authors' C++ simulator (25 s at N = 200 to 2-6 min at N = 1000 per run, as
reported with their public code, tsinghua-fib-lab/AutoSOTA,
ICML-2026/paper-3612-SPARe/best_code).

Run: ``python bench/bench_step_optimize.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import time

from spare_theory import optimal_plan, paper_scenario, simulate_training
from spare_theory._caching import clear_caches

AUTHORS_SECONDS = {200: 25.0, 600: None, 1000: 120.0}  # lower end at N = 1000 (2-6 min)


def clear() -> None:
    """Empty every cache (cold timings: restart law, cycle tables, wipe-out laws, rulers)."""
    clear_caches()


def main() -> None:
    timings = {}
    for law in ("exponential", "weibull"):
        for N in (200, 600, 1000):
            sc = paper_scenario(N, failure_law=law)
            for strategy in ("rep", "spare"):
                clear()
                t = time.perf_counter()
                plan = optimal_plan(sc, strategy)
                cold = time.perf_counter() - t
                t = time.perf_counter()
                optimal_plan(sc, strategy)
                warm = time.perf_counter() - t
                timings[(law, N, strategy)] = (cold, plan)
                print(
                    f"{law:11s} N={N:4d} {strategy:5s}: cold {cold:5.2f} s, warm {warm:5.2f} s "
                    f"-> r={plan.r}, k={plan.checkpoint_every_steps}, "
                    f"total/T0={plan.estimate.total_over_T0:.3f}, r scanned "
                    f"{plan.r_values.tolist()}",
                    flush=True,
                )
    worst = max(cold for cold, _ in timings.values())
    print(f"slowest optimiser (cold): {worst:.2f} s per strategy")
    for N in (200, 1000):
        plan = timings[("exponential", N, "spare")][1]
        t = time.perf_counter()
        simulate_training(
            paper_scenario(N),
            "spare",
            r=plan.r,
            checkpoint_every_steps=plan.checkpoint_every_steps,
            trials=1,
            seed=0,
        )
        run = time.perf_counter() - t
        cold = timings[("exponential", N, "spare")][0]
        authors = AUTHORS_SECONDS[N]
        print(
            f"N={N}: one simulated run {run:.1f} s = {run / cold:.0f}x the cold optimiser "
            f"({cold:.2f} s); the authors' run ({authors:.0f} s{'+' if N == 1000 else ''}) "
            f"= {authors / cold:.0f}x"
        )


if __name__ == "__main__":
    main()
