"""Speed of the step-level closed form (spare_theory.steps) against one event-simulated run.

Prints, in one process:

- one estimate: cold (restart law and tables built), a new ``r`` (its cycle
  table), a new ``k`` (tables cached);
- a brute-force optimiser over ``(r, k)`` per strategy at the paper's sizes:
  every ``r`` the authors ran, ``k`` on a geometric grid refined around its
  best point; its time and the best plan;
- the baseline: one event-simulated run of the same SPARe cell
  (:func:`spare_theory.training.simulate.simulate_training`, ``trials=1``), and the ratio.

Run: ``python bench/bench_step_model.py`` (about 20 s on 2 cores).
"""

from __future__ import annotations

import time

import numpy as np

from spare_theory._caching import clear_caches
from spare_theory.steps.scenario import paper_scenario
from spare_theory.training.estimate import time_to_train
from spare_theory.training.simulate import simulate_training

R_RANGE = {"rep": range(2, 13), "spare": range(2, 13)}
K_GRID = np.unique(np.geomspace(1, 256, 14).round().astype(int))


def clear() -> None:
    """Empty every cache (cold timings: restart law, cycle tables, wipe-out laws, rulers)."""
    clear_caches()


def best_plan(sc, strategy: str) -> tuple[float, int, int, int]:
    """Minimise total time over r and k: a geometric k grid, then every k within +-3 of its best."""
    best = (np.inf, 0, 0)
    evaluations = 0
    for r in R_RANGE[strategy]:
        values = {}
        for k in K_GRID:
            values[int(k)] = time_to_train(sc, strategy, r=r, checkpoint_every_steps=int(k)).seconds
            evaluations += 1
        k0 = min(values, key=values.get)
        for k in range(max(1, k0 - 3), k0 + 4):
            if k not in values:
                values[k] = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k).seconds
                evaluations += 1
        k1 = min(values, key=values.get)
        if values[k1] < best[0]:
            best = (values[k1], r, k1)
    return best[0] / sc.failure_free_seconds, best[1], best[2], evaluations


def main() -> None:
    sc = paper_scenario(1000)
    clear()
    t = time.perf_counter()
    time_to_train(sc, "spare", r=9, checkpoint_every_steps=30)
    cold = time.perf_counter() - t
    t = time.perf_counter()
    time_to_train(sc, "spare", r=10, checkpoint_every_steps=30)
    new_r = time.perf_counter() - t
    t = time.perf_counter()
    for k in range(1, 101):
        time_to_train(sc, "spare", r=10, checkpoint_every_steps=k)
    new_k = (time.perf_counter() - t) / 100
    print(
        f"N=1000 spare: cold {cold * 1e3:.0f} ms, new r {new_r * 1e3:.1f} ms, "
        f"new k {new_k * 1e3:.2f} ms"
    )

    for N in (200, 1000):
        sc = paper_scenario(N)
        for strategy in ("rep", "spare"):
            clear()
            t = time.perf_counter()
            ratio, r, k, n_eval = best_plan(sc, strategy)
            elapsed = time.perf_counter() - t
            print(
                f"N={N} {strategy}: optimiser over r in {R_RANGE[strategy].start}.."
                f"{R_RANGE[strategy].stop - 1} and k ({n_eval} estimates, cold) {elapsed:.2f} s"
                f" -> r={r}, k={k}, total/T0={ratio:.3f}"
            )

    sc = paper_scenario(200)
    t = time.perf_counter()
    sim = simulate_training(sc, "spare", r=9, checkpoint_every_steps=15, trials=1, seed=0)
    baseline = time.perf_counter() - t
    t = time.perf_counter()
    est = time_to_train(sc, "spare", r=9, checkpoint_every_steps=15)
    model = time.perf_counter() - t
    print(
        f"N=200 spare r=9 k=15: one simulated run {baseline:.2f} s "
        f"(total/T0 {float(sim.total_over_T0[0]):.3f}), model {model * 1e3:.1f} ms "
        f"(total/T0 {est.total_over_T0:.3f}): {baseline / model:.0f}x faster"
    )


if __name__ == "__main__":
    main()
