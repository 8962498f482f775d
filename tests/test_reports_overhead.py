"""Overhead report: table structure, marked cells, seeding, ablation."""

import numpy as np
import pandas as pd
import pytest

from spare_theory import cyclic_placement, simulate_overhead
from spare_theory.reports.overhead import COLUMNS, overhead_error_table
from spare_theory.reports.placement_ablation import ABLATION_COLUMNS, placement_ablation_table


def test_error_table_marks_cells_and_is_seeded():
    table = overhead_error_table(N=(128, 300), r=(3, 12), trials=8, max_sim_N=200, progress=False)
    assert len(table) == 4  # no cell dropped
    status = dict(zip(zip(table["N"], table["r"]), table["status"]))
    assert status[(128, 3)] == "ok"
    assert status[(128, 12)] == "no modular ruler"
    assert status[(300, 3)].startswith("closed form only")
    again = overhead_error_table(N=(128, 300), r=(3, 12), trials=8, max_sim_N=200, progress=False)
    pd.testing.assert_frame_equal(table, again)
    ok = table[table["status"] == "ok"]
    assert np.all(ok["mc_se_failure"] > 0)
    assert np.all(ok["closed_form_time"] >= ok["closed_form_failure"])
    np.testing.assert_allclose(
        ok["rel_error_time"], ok["closed_form_time"] / ok["mc_mean_time"] - 1
    )
    assert list(table.columns) == list(COLUMNS)


def test_tables_take_keyword_arguments_only():
    with pytest.raises(TypeError):
        overhead_error_table((128,), (3,), trials=4, progress=False)
    with pytest.raises(TypeError):
        placement_ablation_table(128, (3,), trials=4, progress=False)


def test_ablation_shows_contiguous_stacks_worse():
    ab = placement_ablation_table(N=128, r=(6,), trials=8, progress=False)
    assert list(ab["placement"]) == ["golomb", "contiguous", "random"]
    assert list(ab.columns) == list(ABLATION_COLUMNS)
    by = ab.set_index("placement")
    # Neighbouring types share r-1 hosts on the contiguous placement, so S* piles up.
    assert by.loc["contiguous", "max_S_star"] > by.loc["golomb", "max_S_star"]


def test_every_cell_with_a_ruler_is_simulated_to_the_target_se():
    table = overhead_error_table(
        N=(128, 2048), r=(2, 8, 12), trials=4, rel_se_target=0.005, progress=False
    )
    ok = table[table["status"] != "no modular ruler"]
    assert set(ok["status"]) == {"ok"}  # no closed-form-only cell by default
    assert len(ok) == 5  # (128, 12) has no ruler
    for weighting in ("failure", "time"):
        np.testing.assert_allclose(
            ok[f"mc_rel_se_{weighting}"], ok[f"mc_se_{weighting}"] / ok[f"mc_mean_{weighting}"]
        )
        assert np.all(ok[f"mc_rel_se_{weighting}"] <= 0.005)
        assert np.all(ok[f"excess_{weighting}"] > -1e-12)  # S* never below the bound
    assert np.all(ok["trials"] >= 4) and np.all(ok["wipeout_samples"] >= 256)


@pytest.mark.parametrize(("N", "r"), [(256, 6), (512, 12)])
def test_split_estimator_agrees_with_the_plain_trajectory_mean(N, r):
    """mean h(T') + mean excess against the plain mean of independent exact trajectories.

    Two independent unbiased estimators: their difference must be within
    4 combined standard errors.
    """
    row = overhead_error_table(N=[N], r=[r], trials=8, seed=3, progress=False).iloc[0]
    plain = simulate_overhead(cyclic_placement(N, r), 400, seed=99)
    for weighting, attr in (("failure", "per_failure"), ("time", "time_weighted")):
        samples = getattr(plain, attr)
        se = np.hypot(samples.std(ddof=1) / np.sqrt(samples.size), row[f"mc_se_{weighting}"])
        assert abs(samples.mean() - row[f"mc_mean_{weighting}"]) <= 4 * se


def test_bad_target():
    with pytest.raises(ValueError, match="rel_se_target"):
        overhead_error_table(N=[128], r=[3], rel_se_target=0, progress=False)
    with pytest.raises(ValueError, match="max_trials"):
        overhead_error_table(N=[128], r=[3], trials=8, max_trials=4, progress=False)
