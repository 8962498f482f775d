"""The simulator report: quick mode runs and writes its files; the paper's table is complete."""

import math

import pandas as pd
import pytest

from spare_theory.cli import main
from spare_theory.reports import simulator
from spare_theory.reports.reproduce import REPORTS


def test_quick_report_writes_tables_and_figure(tmp_path):
    paths = simulator.reproduce(tmp_path, quick=True, progress=False)
    names = sorted(p.name for p in paths)
    assert names == sorted(
        ["simulator.csv", "simulator.md", "paper_table.csv", "paper_table.md", "simulator.png"]
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
    frame = simulator.paper_table(optimise=False)
    assert list(frame["N"]) == [200, 600, 1000]
    for _, row in frame.iterrows():
        ref = simulator.PAPER_TABLE[row["N"]]
        assert row["rep_published"] == ref["rep"] and row["spare_published"] == ref["spare"]
        assert (row["spare_r"], row["spare_k"]) == simulator.PAPER_PLANS[row["N"]]["spare"]
    assert "gain" in simulator.paper_table_text(frame)


def test_bad_size_raises():
    with pytest.raises(ValueError, match="size"):
        simulator.simulator_table(size="huge")


def test_cli_rejects_full_with_quick(tmp_path, capsys):
    code = main(["table", "simulator", "--quick", "--full", "--outdir", str(tmp_path)])
    assert code == 2
    assert "--full" in capsys.readouterr().err


def test_headline_prints_the_paper_table_first(capsys):
    assert main(["headline"]) == 0
    out = capsys.readouterr().out
    assert out.index("The SPARe paper's table") < out.index("| gpus_per_group |")
    for N in simulator.PAPER_TABLE:
        assert f"{N:>5} paper" in out and f"{N:>5} optimiser" in out
