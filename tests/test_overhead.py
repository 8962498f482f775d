"""Average overhead: simulation (reproducible, chunk-invariant) against the closed forms."""

import numpy as np
import pytest

from spare_theory import (
    OverheadSamples,
    expected_stacks,
    overhead,
    simulate_overhead,
    stacks_lower_bound,
)
from spare_theory._validation import as_seed_sequence, child_seed
from spare_theory.placement.placements import cyclic_placement
from spare_theory.stacking.overhead import overhead_from_survival, stacks_trajectory

K = 3.0  # tolerance: K standard errors of the simulated mean, plus the stated model slack


def test_samples_reproducible_and_chunk_invariant():
    hosts = cyclic_placement(64, 5)
    whole = simulate_overhead(hosts, 12, seed=7)
    assert isinstance(whole, OverheadSamples)
    again = simulate_overhead(hosts, 12, seed=7)
    assert np.array_equal(whole.per_failure, again.per_failure)
    # Trial i uses child_seed(seed, i): the first 5 trials of 12 are the 5-trial run.
    part = simulate_overhead(hosts, 5, seed=np.random.SeedSequence(7))
    assert np.array_equal(part.T, whole.T[:5])
    order = np.random.default_rng(child_seed(as_seed_sequence(7), 3)).permutation(64)
    assert stacks_trajectory(hosts, order).size == whole.T[3]


def test_sample_definitions():
    N = 64
    hosts = cyclic_placement(N, 5)
    s = simulate_overhead(hosts, 20, seed=1)
    order = np.random.default_rng(child_seed(as_seed_sequence(1), 0)).permutation(N)
    traj = stacks_trajectory(hosts, order)
    f = np.arange(traj.size)
    assert s.per_failure[0] == pytest.approx(traj.mean())
    assert s.time_weighted[0] == pytest.approx(np.sum(traj / (N - f)) / np.sum(1 / (N - f)))
    assert s.max_stacks[0] == traj.max()
    assert np.all(
        s.time_weighted >= s.per_failure - 1e-12
    )  # S* grows with f and so does the weight
    assert np.all((s.T >= 5) & (s.T <= N))


@pytest.mark.parametrize("N, r", [(128, 8), (512, 12), (1024, 16)])
@pytest.mark.parametrize("weighting", ["failure", "time"])
def test_closed_form_matches_simulation(N, r, weighting):
    s = simulate_overhead(cyclic_placement(N, r), 150, seed=N + r)
    samples = s.per_failure if weighting == "failure" else s.time_weighted
    se = samples.std(ddof=1) / np.sqrt(samples.size)
    # The acceptance rule: within 3 SE + 0.1 %.
    assert abs(overhead(N, r, weighting) - samples.mean()) <= K * se + 0.001 * samples.mean()


@pytest.mark.parametrize("N, r", [(256, 6), (512, 16)])
def test_sum_over_t_with_independent_wipeout_law(N, r):
    """The T-sum machinery with T's law from one simulation, averages from another."""
    hosts = cyclic_placement(N, r)
    law = simulate_overhead(hosts, 300, seed=11)
    survival = (law.T[None, :] > np.arange(N + 1)[:, None]).mean(axis=1)
    s = simulate_overhead(hosts, 300, seed=12)
    for weighting, samples in [("failure", s.per_failure), ("time", s.time_weighted)]:
        se_sim = samples.std(ddof=1) / np.sqrt(samples.size)
        # Both sides are 300-trial estimates: combine their (comparable) SEs.
        assert (
            abs(overhead_from_survival(N, r, survival, weighting) - samples.mean())
            <= K * np.sqrt(2) * se_sim + 0.001 * samples.mean()
        )


def test_expected_stacks_is_the_bound_and_broadcasts():
    f = np.arange(0, 700, 50)
    assert np.array_equal(expected_stacks(1024, 8, f), stacks_lower_bound(1024, f))
    assert expected_stacks([[1024], [4096]], 8, [0, 1]).shape == (2, 2)
    assert isinstance(expected_stacks(1024, 8, 3), float)


def test_overhead_broadcasts_and_orders():
    out = overhead([1024, 4096], [[8], [12]], "time")
    assert out.shape == (2, 2)
    assert np.all(out >= overhead([1024, 4096], [[8], [12]], "failure"))
    assert np.all((out > 1) & (out < 3))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: overhead(1024, 8, "wall"), "weighting"),
        (lambda: overhead(10, 8), "N"),
        (lambda: expected_stacks(100, 4, 90), "failures"),
        (lambda: expected_stacks(100, 4, -1), "failures"),
        (lambda: simulate_overhead(cyclic_placement(16, 3), 0, seed=1), "trials"),
        (lambda: simulate_overhead(cyclic_placement(16, 3), 2, seed=-1), "seed"),
        (lambda: stacks_trajectory(cyclic_placement(16, 3), [0]), "order"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_samples_summaries_are_the_per_trial_arrays():
    """TrialSamples on OverheadSamples: mean, SE and the frame are those of the field arrays."""
    s = simulate_overhead(cyclic_placement(100, 3), 30, seed=4)
    assert s.trials == 30
    assert s.quantities == ("T", "per_failure", "time_weighted", "max_stacks")
    for name in s.quantities:
        values = np.asarray(getattr(s, name), dtype=float)
        assert s.mean(name) == values.mean()
        assert s.standard_error(name) == values.std(ddof=1) / np.sqrt(30)
    frame = s.to_frame()
    assert frame.columns.tolist() == ["trial", *s.quantities]
    assert frame["trial"].tolist() == list(range(30))
    np.testing.assert_array_equal(frame["per_failure"], s.per_failure)
    assert frame["T"].dtype == np.int64
    with pytest.raises(ValueError, match="name"):
        s.mean("stacks")
