"""Cost of one step-level trial (10,000 steps) at the paper's sizes.

Baseline, in the same process: drawing the stack jitter alone for the same
number of steps (``N x S`` normals per step with ``S`` the trial's mean
stacks per step, here 1 for Rep's single compute), which any step-level
simulation has to do.  Prints seconds per trial, the ratio to the baseline,
and the share of the SPARe trial spent in the reordering
(:class:`spare_theory.stacking.reordering.StackReorderer`, one call per
failure whose survivors' top ``S`` stacks no longer cover every type).

Run: ``python bench/bench_step_sim.py`` (about a minute of CPU).
"""

import cProfile
import pstats
import time

import numpy as np

from spare_theory.steps.scenario import paper_scenario
from spare_theory.training.simulate import simulate_training

CELLS = [  # (N, strategy, r, k): the published intervals
    (200, "rep", 3, 6),
    (200, "spare", 9, 15),
    (1000, "rep", 5, 9),
    (1000, "spare", 9, 30),
]


def baseline(N: int, steps: int, stacks: int) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        np.maximum(0.1, 1.0 + 0.05 * rng.standard_normal((N, stacks))).sum(axis=1).max()
    return time.perf_counter() - start


def main() -> None:
    for N, strategy, r, k in CELLS:
        sc = paper_scenario(N)
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        sim = simulate_training(sc, strategy, r=r, checkpoint_every_steps=k, trials=1, seed=1)
        profile.disable()
        seconds = time.perf_counter() - start
        stats = pstats.Stats(profile)
        reorder = sum(
            v[3]
            for key, v in stats.stats.items()
            # The simulator calls a StackReorderer (reorder's per-placement form).
            if key[0].endswith("reordering.py") and key[2] == "__call__"  # type: ignore[attr-defined]
        )
        base = baseline(N, 10_000, 2 if strategy == "spare" else 1)
        print(
            f"N={N:5d} {strategy:5s} r={r:2d} k={k:2d}: {seconds:6.2f} s/trial "
            f"({seconds / base:5.1f}x the jitter draws alone; "
            f"reorder {100 * reorder / seconds:4.1f}%); "
            f"total/T0 {sim.total_over_T0[0]:.3f}, {int(sim.failures[0])} failures, "
            f"{int(sim.global_restarts[0])} restarts"
        )


if __name__ == "__main__":
    main()
