"""Report 'repairs': files, structure, and what the tables must say."""

from __future__ import annotations

import numpy as np
import pytest

from spare_theory.reports import repairs as report
from spare_theory.reports.catalogue import REPORTS, ReportOptions


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("repairs")
    return out, REPORTS["repairs"].run(ReportOptions(out, quick=True, progress=False))


def test_registered():
    assert "repairs" in REPORTS


@pytest.mark.slow
def test_quick_writes_the_files(written):
    _out, paths = written
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "repairs_600k.csv",
            "repairs_600k.md",
            "repairs_wipeout.csv",
            "repairs_wipeout.md",
            "repairs_paper.csv",
            "repairs_paper.md",
            "repairs_600k.png",
            "repairs_paper.png",
        ]
    )
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)


def test_wipeout_table_within_three_se():
    # Statistical tolerance: 3 SE of the simulated mean.
    t = report.wipeout_table(report._QUICK_WIPEOUT, seed=5, progress=False)
    assert np.all(np.abs(t["z"]) <= 3.0)


@pytest.mark.slow
def test_plans_table_winners_and_small_r():
    t = report.plans_table((2048,), (10.0, None), planned=(None,), progress=False)
    for _, group in t.groupby("repair"):
        assert group["winner"].sum() >= 1
    spare = t[t["strategy"] == "spare"].set_index("repair")
    # Fast repairs: a small r is within 1 % (the walk reached it).
    assert spare.loc["10 min", "r_within_1pct"] < spare.loc["10 min", "r"]
    # Planned restarts never make the plan worse.
    assert spare.loc["never", "planned_hours"] <= spare.loc["never", "hours"]


def test_paper_table_rows_and_winner(written):
    out, _paths = written
    import pandas as pd

    t = pd.read_csv(out / "tables" / "repairs_paper.csv")
    assert set(t["strategy"]) == {"ckpt", "rep", "spare"}
    assert (t.groupby(["groups", "repair"])["winner"].sum() == 1).all()
    spare = t[t["strategy"] == "spare"]
    assert (spare["r_within_1pct"] <= spare["r"]).all()
    # Faster repairs never lengthen a strategy's best time (the model is monotone).
    order = {"10 min": 0, "1 h": 1, "never": 2}
    for _, part in t.groupby(["groups", "strategy"]):
        hours = part.assign(o=part["repair"].map(order)).sort_values("o")["hours"].to_numpy()
        assert np.all(np.diff(hours) >= -1e-9 * hours[:-1])
