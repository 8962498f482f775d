"""Overhead report: table structure, marked cells, seeding, ablation."""

import numpy as np
import pandas as pd
import pytest

from spare_theory.reports.overhead import (
    ABLATION_COLUMNS,
    COLUMNS,
    overhead_error_table,
    placement_ablation_table,
)


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
