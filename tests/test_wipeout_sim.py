"""Monte Carlo of the wipe-out count against exact enumeration (spare_theory.wipeout.simulation)."""

import math

import numpy as np
import pytest

from spare_theory.placement import placements as pl
from spare_theory.wipeout.enumeration import exact_wipeout_survival
from spare_theory.wipeout.law import wipeout_survival
from spare_theory.wipeout.simulation import sampling_plan, simulate_wipeout

SMALL_DESIGNS = {
    "fano": pl.cyclic_placement(7, 3, marks=(0, 1, 3)),
    "ruler-16-3": pl.cyclic_placement(16, 3),
    "contiguous-16-4": pl.contiguous_placement(16, 4),
    "random-14-3": pl.random_placement(14, 3, seed=1),
    "ruler-21-5": pl.cyclic_placement(21, 5),
}


def _dkw_epsilon(n, alpha=1e-6):
    """Dvoretzky-Kiefer-Wolfowitz: sup |F_n - F| <= eps with probability >= 1 - alpha."""
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def _check_distribution(T, survival, k=4):
    """Mean within k SE of the exact mean, and the whole survival curve within DKW bounds."""
    n = T.size
    exact_mean = survival.sum()
    assert abs(T.mean() - exact_mean) <= k * T.std(ddof=1) / math.sqrt(n)
    empirical = (T[None, :] > np.arange(len(survival))[:, None]).mean(axis=1)
    assert np.max(np.abs(empirical - survival)) <= _dkw_epsilon(n)


@pytest.mark.parametrize("name", SMALL_DESIGNS)
def test_dense_sampler_matches_exact_enumeration(name):
    hosts = SMALL_DESIGNS[name]
    assert sampling_plan(*hosts.shape).method == "dense"
    T = simulate_wipeout(hosts, 40_000, seed=5)
    _check_distribution(T, exact_wipeout_survival(hosts))


def test_sparse_sampler_matches_exact_cycle_law_including_continuation():
    # r = 2 survival is exact (independent sets of the cycle), so it checks the
    # sparse sampler over the whole range, also past its prefix.
    N, trials = 8192, 20_000
    plan = sampling_plan(N, 2)
    assert plan.method == "sparse"
    T = simulate_wipeout(pl.cyclic_placement(N, 2), trials, seed=9)
    assert np.any(plan.prefix_failures < T)  # ~20 expected: the continuation ran
    f = np.arange(int(T.max()) + 2)
    _check_distribution(T, wipeout_survival(N, 2, f))


@pytest.mark.slow
def test_sparse_sampler_on_non_cyclic_placement():
    # Random placement: no closed form, so compare with the dense sampler's
    # draw of the same placement through the baseline formula (ranks of a
    # permutation): two-sample z-test with k = 4.
    N = 8192
    hosts = pl.random_placement(N, 2, seed=3)
    T = simulate_wipeout(hosts, 8_000, seed=1)
    rng = np.random.default_rng(2)
    ranks = np.stack([rng.permutation(N) for _ in range(1500)])
    B = ranks[:, hosts].max(axis=2).min(axis=1) + 1
    z = (T.mean() - B.mean()) / math.sqrt(T.var() / T.size + B.var() / B.size)
    assert abs(z) <= 4


@pytest.mark.parametrize("N, r", [(8192, 2), (300, 4)])
def test_same_samples_whatever_the_memory_cap(N, r):
    hosts = pl.cyclic_placement(N, r)
    plan = sampling_plan(N, r)
    trials = 5 * plan.block_trials + 3
    default = simulate_wipeout(hosts, trials, seed=42)
    one_block = simulate_wipeout(hosts, trials, seed=42, memory_limit_bytes=plan.block_bytes)
    two_blocks = simulate_wipeout(
        hosts, trials, seed=42, memory_limit_bytes=2 * plan.block_bytes + 1
    )
    np.testing.assert_array_equal(default, one_block)
    np.testing.assert_array_equal(default, two_blocks)
    # A prefix of the trials is the same as asking for fewer trials.
    np.testing.assert_array_equal(
        simulate_wipeout(hosts, plan.block_trials + 1, seed=42), default[: plan.block_trials + 1]
    )


def test_seed_forms_and_range():
    hosts = pl.cyclic_placement(31, 3)
    a = simulate_wipeout(hosts, 500, seed=3)
    b = simulate_wipeout(hosts, 500, seed=np.random.SeedSequence(3))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.min() >= 3 and a.max() <= 31
    assert not np.array_equal(a, simulate_wipeout(hosts, 500, seed=4))
    assert np.all(simulate_wipeout(pl.cyclic_placement(9, 1), 4, seed=0) == 1)


def test_memory_cap_too_small_is_refused():
    with pytest.raises(ValueError, match="memory_limit_bytes"):
        simulate_wipeout(pl.cyclic_placement(64, 3), 10, seed=0, memory_limit_bytes=1000)


@pytest.mark.slow
def test_largest_published_scale_fits_default_cap():
    plan = sampling_plan(1_000_000, 20)
    assert plan.block_bytes <= 2**30
    T = simulate_wipeout(pl.cyclic_placement(1_000_000, 20), 2, seed=0)
    assert T.shape == (2,) and np.all((T >= 20) & (T <= 1_000_000))
