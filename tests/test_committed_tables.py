"""The committed tables are what the code writes: one report regenerated at its default sizes.

A snapshot test by design: ``tables/`` was written by ``spare-theory reproduce`` (seed 0)
and the report is run again here, on whatever library versions and processor are
installed.  Tables keep 6 significant digits and their relative errors 6 decimals
(``reports._io.written_frame``), where the last bits that differ between machines do not
reach, so both files must be byte-identical; any change in the code's numbers shows.
"""

from __future__ import annotations

from pathlib import Path

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
        assert path.read_bytes() == committed.read_bytes(), f"{path.name} differs from tables/"
