"""Same seed, same samples (any executor, repeated runs, any memory cap); other seeds differ.

Complements tests/test_executors.py (tables and sweeps on Dask, thread and
process pools), test_wipeout_sim.py (memory caps) and test_training_sim.py
(batching): here every random public function is run in this process, in a
thread pool and in a process pool, and its samples compared bit for bit.
"""

import concurrent.futures as cf
import tracemalloc

import numpy as np
import pytest

from spare_theory.hourly.scenario import Scenario
from spare_theory.placement.placements import cyclic_placement, random_placement
from spare_theory.stacking.overhead import simulate_overhead
from spare_theory.training.simulate import simulate_training
from spare_theory.wipeout.simulation import sampling_plan, simulate_wipeout

SCENARIO = dict(
    gpus=64,
    gpus_per_group=2,
    gpu_mtbf_hours=400.0,
    restart_minutes=30.0,
    checkpoint_minutes=2.0,
    work_hours=20.0,
)


def _samples(name, seed):
    """One random result per public sampler, as a flat float array (module level: picklable)."""
    if name == "random_placement":
        return random_placement(57, 4, seed=seed).ravel().astype(float)
    if name == "simulate_wipeout":
        return simulate_wipeout(cyclic_placement(300, 4), 400, seed=seed).astype(float)
    if name == "simulate_overhead":
        s = simulate_overhead(cyclic_placement(31, 3), 15, seed=seed)
        return np.concatenate([s.T, s.per_failure, s.time_weighted, s.max_stacks]).astype(float)
    return simulate_training(
        Scenario(**SCENARIO), "spare", r=3, checkpoint_interval_minutes=30.0, trials=4, seed=seed
    ).hours


SAMPLERS = ["random_placement", "simulate_wipeout", "simulate_overhead", "simulate_training"]


@pytest.fixture(scope="module")
def pools():
    with cf.ThreadPoolExecutor(2) as threads, cf.ProcessPoolExecutor(2) as processes:
        yield {"threads": threads, "processes": processes}


def test_identical_across_executors_and_runs(pools):
    seeds = [5, np.random.SeedSequence(5), 6]
    serial = {name: [_samples(name, s) for s in seeds] for name in SAMPLERS}
    for name in SAMPLERS:
        same_int, same_sequence, other = serial[name]
        np.testing.assert_array_equal(
            same_int, same_sequence, err_msg=name
        )  # int and SeedSequence agree
        np.testing.assert_array_equal(_samples(name, 5), same_int, err_msg=name)  # repeated run
        assert not np.array_equal(same_int, other), f"{name}: seeds 5 and 6 gave the same samples"
        for pool_name, pool in pools.items():
            futures = [pool.submit(_samples, name, s) for s in seeds]
            for future, expected in zip(futures, serial[name]):
                np.testing.assert_array_equal(
                    future.result(), expected, err_msg=f"{name} on {pool_name}"
                )


def test_overhead_trials_are_a_prefix_whatever_the_count():
    hosts = cyclic_placement(31, 3)
    many, few = simulate_overhead(hosts, 12, seed=9), simulate_overhead(hosts, 5, seed=9)
    for field in ("T", "per_failure", "time_weighted", "max_stacks"):
        np.testing.assert_array_equal(getattr(many, field)[:5], getattr(few, field))


def test_wipeout_sampler_memory_stays_under_a_small_cap():
    # N = 200,000, r = 8 under a 32 MiB cap: the samples equal those under the default cap,
    # and the peak of Python-tracked allocations (numpy included) stays below cap + placement
    # + a 25 % margin for the validated copy and bookkeeping.
    N, r, cap = 200_000, 8, 32 * 2**20
    hosts = cyclic_placement(N, r)
    trials = 10 * sampling_plan(N, r).block_trials  # several chunks under the cap
    reference = simulate_wipeout(hosts, trials, seed=2)
    tracemalloc.start()
    try:
        capped = simulate_wipeout(hosts, trials, seed=2, memory_limit_bytes=cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(capped, reference)
    assert peak <= 1.25 * (cap + hosts.nbytes), peak / 2**20
