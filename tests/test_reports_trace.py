"""Report 'trace': the shipped failure log, models against its replay; the spares table."""

from __future__ import annotations

import numpy as np
import pytest

from spare_theory.cli import main
from spare_theory.reports import trace as report
from spare_theory.reports._io import CSV_ROUNDING
from spare_theory.reports.catalogue import REPORTS, ReportOptions


def test_registered():
    assert "trace" in REPORTS


@pytest.mark.slow
def test_quick_writes_the_tables_and_a_verdict(tmp_path, capsys):
    paths = REPORTS["trace"].run(ReportOptions(tmp_path, quick=True, progress=True))
    assert sorted(p.name for p in paths) == [
        "trace.csv",
        "trace.md",
        "trace_spares.csv",
        "trace_spares.md",
    ]
    assert "verdict:" in capsys.readouterr().err
    import pandas as pd

    table = pd.read_csv(tmp_path / "tables" / "trace.csv")
    assert table["strategy"].tolist() == ["ckpt", "rep", "spare"]
    done = table.dropna(subset=["replay_bootstrap_hours"])
    assert (done["replay_bootstrap_hours"] > 720).all()
    # Every model's error is against the same replay.
    for model in report.MODELS:
        ratio = done[f"{model}_hours"] / done["replay_bootstrap_hours"]
        # Both hours are written to 6 significant digits, the error to 1e-4 points.
        written = 100 * 2 * CSV_ROUNDING * ratio + 5e-5
        gap = np.abs(100 * (ratio - 1) - done[f"{model}_error_pct"])
        np.testing.assert_array_less(gap, written)
    spares = pd.read_csv(tmp_path / "tables" / "trace_spares.csv")
    assert (spares["replay_spares"] >= spares["poisson_spares"]).all()


def test_table_trace_is_a_cli_table(capsys):
    assert main(["table", "trace", "--help"]) == 0
    assert "replayed log" in capsys.readouterr().out
