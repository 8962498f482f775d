"""The simulator report: quick mode runs and writes its files; the paper's table is complete."""

import math

import numpy as np
import pandas as pd
import pytest

from spare_theory.cli import main
from spare_theory.reports import paper, simulator
from spare_theory.reports.catalogue import REPORTS, ReportOptions


@pytest.mark.slow
def test_quick_report_writes_tables_and_figure(tmp_path):
    paths = REPORTS["simulator"].run(ReportOptions(tmp_path, quick=True, progress=False))
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "simulator.csv",
            "simulator.md",
            "paper_table.csv",
            "paper_table.md",
            "paper_microbatch.csv",
            "paper_microbatch.md",
            "simulator.png",
        ]
    )
    table = pd.read_csv(tmp_path / "tables" / "simulator.csv")
    published = simulator.published_cells()
    assert len(table) == len(published)
    assert table["model_total_over_T0"].notna().all()
    assert table["sim_total_over_T0"].notna().sum() >= 1
    md = (tmp_path / "tables" / "simulator.md").read_text()
    # The pass criterion sits above the table, not below it.
    assert md.index("Criteria.") < md.index("| strategy |")
    assert "simulator" in REPORTS


@pytest.mark.slow
def test_table_errors_are_computed_from_the_columns():
    table = simulator.simulator_table(size="quick")
    row = table[table["sim_total_over_T0"].notna()].iloc[0]
    rel = row["sim_total_over_T0"] / row["published_total_over_T0"] - 1
    assert row["sim_rel_error"] == pytest.approx(rel)
    z = (row["sim_total_over_T0"] - row["published_total_over_T0"]) / math.hypot(
        row["sim_total_over_T0_se"], row["published_se"]
    )
    assert row["sim_z"] == pytest.approx(z)
    assert row["sim_pass"] == (abs(rel) <= 0.03 or abs(z) <= 3)


def test_paper_table_has_every_published_cell():
    frame = paper.paper_table(optimise=False)
    assert list(frame["N"]) == [200, 600, 1000]
    for _, row in frame.iterrows():
        ref = paper.PAPER_TABLE[row["N"]]
        assert row["rep_published"] == ref["rep"] and row["spare_published"] == ref["spare"]
        assert (row["spare_r"], row["spare_k"]) == paper.PAPER_PLANS[row["N"]]["spare"]
    assert "gain" in paper.paper_table_text(frame)


def test_bad_size_raises():
    with pytest.raises(ValueError, match="size"):
        simulator.simulator_table(size="huge")


def test_cli_rejects_full_with_quick(tmp_path, capsys):
    code = main(["table", "simulator", "--quick", "--full", "--outdir", str(tmp_path)])
    assert code == 2
    assert "--full" in capsys.readouterr().err


@pytest.mark.slow
def test_headline_prints_the_paper_table_first(capsys):
    assert main(["headline"]) == 0
    out = capsys.readouterr().out
    assert out.index("The SPARe paper's table") < out.index("600,000 GPUs (")
    for N in paper.PAPER_TABLE:
        assert f"{N:>5} paper" in out and f"{N:>5} optimiser" in out
    assert out.index("micro-batch splitting") < out.index("600,000 GPUs (")
    assert "spare m=16" in out and "m=16" in out.split("600,000 GPUs (")[1]


@pytest.mark.slow
def test_split_plans_on_the_paper_scenario_are_ordered_and_checked():
    # A load with m pieces never exceeds S* (min_load <= min_stacks) and m = 4 -> 16 refines
    # it, so the best plans must be ordered; the simulated split plan agrees with its model.
    t = paper.paper_split_table(N=[200], simulate=[(200, 16)], trials=2)
    total = dict(zip(t["plan"], t["total_over_T0"]))
    assert total["spare m=16"] <= total["spare m=4"] < total["spare"] < total["rep"]
    np.testing.assert_allclose(t["reduction_vs_spare"], 1 - t["total_over_T0"] / total["spare"])
    row = t[t["plan"] == "spare m=16"].iloc[0]
    assert abs(row["total_over_T0"] - row["sim_total_over_T0"]) <= max(
        3 * row["sim_se"], 0.02 * row["sim_total_over_T0"]
    )
    assert t["sim_total_over_T0"].notna().sum() == 1
    with pytest.raises(ValueError, match="microbatches"):
        paper.paper_split_table(N=[200], microbatches=[1])
