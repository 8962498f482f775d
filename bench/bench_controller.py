"""Online reordering controller against recomputing S* from scratch after every failure.

1. N = 4,096, r = 12: one whole trajectory to wipe-out, both ways in this
   process (the results must agree); prints the speed ratio (target >= 20x).
2. N = 75,000, r = 17: one whole trajectory with the controller; prints the
   time (target <= 60 s).
3. N = 1,024, r = 10 (the domain report's cluster), 40 cycles under domain
   failures (16 groups a domain, 30 % of the rate from domain events):
   ``stacking.domains_sim.cycle_trajectory`` (the compiled kernel) against
   the controller driven through the same events; the results must agree,
   prints the ratio (measured about 8x).

``stacking.overhead.stacks_trajectory`` no longer uses the controller (it runs
the compiled kernel of ``spare_theory.stacking._trajectory``; see
``bench/bench_trajectory.py``), so the controller is driven directly here.

Run: ``python bench/bench_controller.py``.
"""

from __future__ import annotations

import time

import numpy as np

from spare_theory import ReorderingController, WipedOut, min_stacks
from spare_theory.placement.domains import failure_domains, placement_hosts
from spare_theory.placement.placements import cyclic_placement
from spare_theory.stacking.domains_sim import cycle_trajectory, failure_times


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


def controller_cycle(hosts, X):
    """Baseline of ``cycle_trajectory``: the controller failing the groups event by event."""
    order = np.argsort(X, kind="stable")
    xs = X[order]
    controller = ReorderingController(hosts)
    times, stacks = [0.0], [1]
    k = 0
    while True:
        t = xs[k]
        try:
            while k < xs.size and xs[k] == t:
                controller.fail(int(order[k]))
                k += 1
        except WipedOut:
            times.append(float(t))
            return np.array(times), np.array(stacks), int(np.searchsorted(xs, t, side="right"))
        times.append(float(t))
        stacks.append(controller.stacks)


def cycles(func, hosts, draws):
    return [func(hosts, X) for X in draws]


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

    hosts = placement_hosts("ruler", 1024, 10, 16, seed=0)
    domains = failure_domains(1024, 16)
    draws = [
        failure_times(np.random.default_rng(i), 1, domains, 0.3, np.ones(1024))[0]
        for i in range(40)
    ]
    cycle_trajectory(hosts, draws[0])  # the kernel's first call loads its compiled code
    fast, t_fast = timed(cycles, cycle_trajectory, hosts, draws)
    slow, t_slow = timed(cycles, controller_cycle, hosts, draws)
    for (a, b, c), (x, y, z) in zip(fast, slow):
        assert np.array_equal(a, x) and np.array_equal(b, y) and c == z, "cycles disagree"
    print(
        f"N=1024 r=10, 40 domain cycles: controller {t_slow:.2f} s, "
        f"cycle_trajectory {t_fast:.3f} s, ratio {t_slow / t_fast:.1f}x"
    )


if __name__ == "__main__":
    main()
