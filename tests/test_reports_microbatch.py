"""The micro-batch report: its table's columns, the control variate, files written."""

import numpy as np
import pytest

from spare_theory.reports.catalogue import REPORTS, ReportOptions
from spare_theory.reports.microbatch import error_table


def test_error_table_columns_and_control_variate():
    t = error_table(((256, 4, 12),), (1, 8), seed=3)
    assert t["microbatches"].tolist() == [1, 8]
    for w in ("failure", "time"):
        # m = 1: the closed form is the counting bound, S* rarely exceeds it (k = 4 SE + 0.5 %).
        row = t.iloc[0]
        assert abs(row[f"sim_cv_{w}"] - row[f"sim_{w}"]) <= 4 * row[f"se_{w}"] + 5e-3
        # The closed form is never below the counting bound's (m = 8 row >= 1).
        assert (t[f"closed_form_{w}"] >= 1).all()
        np.testing.assert_allclose(
            t[f"err_cv_{w}"], t[f"closed_form_{w}"] / t[f"sim_cv_{w}"] - 1, rtol=1e-12
        )
    # Same seed, same numbers.
    assert error_table(((256, 4, 12),), (1, 8), seed=3).equals(t)


@pytest.mark.slow
def test_reproduce_quick_writes_table_and_figure(tmp_path):
    paths = REPORTS["microbatch"].run(ReportOptions(tmp_path, quick=True, progress=False))
    names = [p.name for p in paths]
    assert "microbatch_error.csv" in names and "microbatch_load.png" in names
    assert all(p.is_file() for p in paths)
