"""The committed tables are what the code writes: one report regenerated at its default sizes.

A snapshot test by design: ``tables/`` was written by ``spare-theory reproduce`` (seed 0)
and the report is run again here, on whatever library versions and processor are
installed.  Tables keep 10 significant digits, but some columns are differences of two
nearly equal numbers near 2 (model minus simulation of the stack overhead), whose last
bits (2e-16 absolute) show in those digits and differ between machines.  So the Markdown
tables (rounded for reading) must be byte-identical, and the CSV's numbers equal to
``rtol = 1e-9`` or ``atol = 1e-14`` (a few units in the last place of the operands); any
change in the code's numbers moves them far more.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spare_theory.reports.catalogue import REPORTS, ReportOptions

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_snapshot_overhead_report_rewrites_the_committed_tables(tmp_path):
    written = REPORTS["overhead"].run(ReportOptions(tmp_path, seed=0, progress=False))
    tables = [p for p in written if p.suffix in (".csv", ".md")]
    assert {p.name for p in tables} == {
        "overhead_error.csv",
        "overhead_error.md",
        "placement_ablation.csv",
        "placement_ablation.md",
    }
    for path in tables:
        committed = ROOT / "tables" / path.name
        if path.suffix == ".md":
            assert path.read_bytes() == committed.read_bytes(), f"{path.name} differs from tables/"
            continue
        ours, theirs = pd.read_csv(path), pd.read_csv(committed)
        assert list(ours.columns) == list(theirs.columns), path.name
        numeric = ours.select_dtypes("number").columns
        pd.testing.assert_frame_equal(ours.drop(columns=numeric), theirs.drop(columns=numeric))
        np.testing.assert_allclose(
            ours[numeric].to_numpy(float),
            theirs[numeric].to_numpy(float),
            rtol=1e-9,
            atol=1e-14,
            err_msg=f"{path.name} differs from tables/",
        )
