"""Monte Carlo under domain failures and lemons (spare_theory.stacking.domains_sim)."""

import numpy as np
import pytest

from spare_theory import contiguous_placement, cyclic_placement, simulate_wipeout
from spare_theory.placement.domains import domain_aware_placement
from spare_theory.stacking.domains_sim import (
    cycle_trajectory,
    lemon_rates,
    simulate_domain_overhead,
    simulate_domain_wipeout,
)


def test_without_domain_events_the_count_has_the_law_of_simulate_wipeout():
    # s = 0, no lemons: the failure order is uniformly random, as in simulate_wipeout.
    hosts = cyclic_placement(512, 5)
    a = simulate_domain_wipeout(hosts, 3000, seed=1).failures
    b = simulate_wipeout(hosts, 3000, seed=2)
    se = np.hypot(a.std(ddof=1), b.std(ddof=1)) / np.sqrt(3000)
    assert abs(a.mean() - b.mean()) <= 4 * se  # 4 SE


def test_time_is_exponential_for_one_host():
    # r = 1: the wipe-out is the first failure of any group; with s = 0.5 and
    # domains of 4 the rate is N (1 - s) + D s = 64 * 0.5 + 16 * 0.5 = 40.
    hosts = cyclic_placement(64, 1)
    t = simulate_domain_wipeout(hosts, 4000, seed=3, domains=4, domain_failure_share=0.5).time
    se = t.std(ddof=1) / np.sqrt(t.size)
    assert abs(t.mean() - 1 / 40) <= 4 * se  # 4 SE


def test_domain_events_fail_whole_domains_at_once():
    hosts = domain_aware_placement(64, 4, 8)
    out = simulate_domain_wipeout(hosts, 200, seed=0, domains=8, domain_failure_share=1.0)
    assert np.all(out.failures % 8 == 0)  # only whole domains fail


def test_domain_aware_beats_contiguous_under_domain_failures():
    N, r, m, s = 1024, 10, 64, 0.3
    aware = simulate_domain_wipeout(
        domain_aware_placement(N, r, m), 500, seed=0, domains=m, domain_failure_share=s
    )
    contiguous = simulate_domain_wipeout(
        contiguous_placement(N, r), 500, seed=0, domains=m, domain_failure_share=s
    )
    assert aware.time.mean() > 2 * contiguous.time.mean()


def test_lemons_shorten_the_cycle():
    hosts = cyclic_placement(256, 6)
    rates = lemon_rates(256, 0.1, 20.0, seed=0)
    assert np.count_nonzero(rates == 20.0) == 26
    plain = simulate_domain_wipeout(hosts, 1000, seed=0).time
    lemon = simulate_domain_wipeout(hosts, 1000, seed=0, group_rates=rates).time
    se = np.hypot(plain.std(), lemon.std()) / np.sqrt(1000)
    assert plain.mean() - lemon.mean() > 4 * se


def test_cycle_trajectory_treats_ties_as_one_event():
    hosts = cyclic_placement(7, 3)  # marks 0, 1, 3: type 0 on groups 0, 1, 3
    X = np.array([1.0, 1.0, 5.0, 1.0, 6.0, 7.0, 8.0])
    times, stacks, failures = cycle_trajectory(hosts, X)
    assert times.tolist() == [0.0, 1.0] and stacks.tolist() == [1] and failures == 3


def test_overhead_samples_are_consistent():
    out = simulate_domain_overhead(
        domain_aware_placement(256, 6, 16), 20, seed=0, domains=16, domain_failure_share=0.3
    )
    assert np.all(out.worst >= out.time_weighted) and np.all(out.time_weighted >= 1)
    assert np.allclose(out.inverse_time_weighted <= 1, True)
    again = simulate_domain_overhead(
        domain_aware_placement(256, 6, 16), 20, seed=0, domains=16, domain_failure_share=0.3
    )
    assert np.array_equal(out.time, again.time)


def test_bad_input():
    hosts = cyclic_placement(64, 3)
    with pytest.raises(ValueError, match="domain_failure_share"):
        simulate_domain_wipeout(hosts, 2, seed=0, domain_failure_share=1.5)
    with pytest.raises(ValueError, match="group_rates"):
        simulate_domain_wipeout(hosts, 2, seed=0, group_rates=np.ones(3))
    with pytest.raises(ValueError, match="lemon_rate_factor"):
        lemon_rates(10, 0.1, 0.5, seed=0)
    with pytest.raises(ValueError, match="trials"):
        simulate_domain_overhead(hosts, 0, seed=0)


def test_samples_summaries_are_the_per_trial_arrays():
    """TrialSamples on both result classes: mean, SE and the frame are those of the fields."""
    hosts = domain_aware_placement(64, 4, 8)
    wipeout = simulate_domain_wipeout(hosts, 50, seed=2, domains=8, domain_failure_share=0.3)
    stacks = simulate_domain_overhead(hosts, 6, seed=2, domains=8, domain_failure_share=0.3)
    expected = [
        (wipeout, ("failures", "time")),
        (stacks, ("failures", "time", "time_weighted", "worst", "inverse_time_weighted")),
    ]
    for samples, names in expected:
        assert samples.quantities == names
        n = samples.trials
        for name in names:
            values = np.asarray(getattr(samples, name), dtype=float)
            assert samples.mean(name) == values.mean()
            assert samples.standard_error(name) == values.std(ddof=1) / np.sqrt(n)
        frame = samples.to_frame()
        assert frame.columns.tolist() == ["trial", *names] and len(frame) == n
        np.testing.assert_array_equal(frame["time"], samples.time)
    assert (wipeout.trials, stacks.trials) == (50, 6)
