"""Online reordering controller against recomputing S* from scratch after every failure.

1. N = 4,096, r = 12: one whole trajectory to wipe-out, both ways in this
   process (the results must agree); prints the speed ratio (target >= 20x).
2. N = 75,000, r = 17: one whole trajectory with the controller; prints the
   time (target <= 60 s).

``stacking.overhead.stacks_trajectory`` no longer uses the controller (it runs
the compiled kernel of ``spare_theory.stacking._trajectory``; see
``bench/bench_trajectory.py``), so the controller is driven directly here.

Run: ``python bench/bench_controller.py``.
"""

from __future__ import annotations

import time

import numpy as np

from spare_theory import ReorderingController, WipedOut, min_stacks
from spare_theory.placement.placements import cyclic_placement


def stacks_trajectory(hosts, order) -> np.ndarray:
    """The controller's ``S*`` after every failure until the wipe-out."""
    controller = ReorderingController(hosts)
    out = [1]
    for g in order:
        try:
            out.append(controller.fail(int(g)))
        except WipedOut:
            break
    return np.array(out)


def from_scratch(hosts, order) -> np.ndarray:
    """Baseline: exact ``min_stacks`` of every prefix of the failure order."""
    out = [1]
    for f in range(1, len(order) + 1):
        try:
            out.append(min_stacks(hosts, order[:f]))
        except WipedOut:
            return np.array(out)
    return np.array(out)


def timed(func, *args):
    start = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - start


def main() -> None:
    hosts = cyclic_placement(4096, 12)
    order = np.random.default_rng(0).permutation(4096)
    online, t_online = timed(stacks_trajectory, hosts, order)
    baseline, t_base = timed(from_scratch, hosts, order)
    assert np.array_equal(online, baseline), "controller disagrees with min_stacks"
    print(f"N=4096 r=12: T={online.size} failures, max S*={online.max()}")
    print(
        f"  from scratch {t_base:.2f} s, controller {t_online:.3f} s, "
        f"ratio {t_base / t_online:.0f}x (target >= 20x)"
    )

    hosts = cyclic_placement(75_000, 17)
    order = np.random.default_rng(0).permutation(75_000)
    traj, t_big = timed(stacks_trajectory, hosts, order)
    print(
        f"N=75000 r=17: T={traj.size} failures, max S*={traj.max()}, {t_big:.1f} s (target <= 60 s)"
    )


if __name__ == "__main__":
    main()
