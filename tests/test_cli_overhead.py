"""CLI: spare-theory overhead and spare-theory table overhead."""

import json

from spare_theory.cli import main


def test_overhead_json(capsys):
    assert (
        main(["overhead", "--N", "128", "--r", "4", "--trials", "40", "--seed", "3", "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["trials"] == 40 and 1 < data["closed_form_failure"] <= data["closed_form_time"] < 4
    # The CLI reports what the library computes: simulation within 4 of its own SEs.
    for weighting in ("failure", "time"):
        gap = abs(data[f"mc_mean_{weighting}"] - data[f"closed_form_{weighting}"])
        assert gap < 4 * data[f"mc_se_{weighting}"] + 1e-3
    assert data["max_S_star"] <= 4 and data["mc_mean_T"] > 4


def test_overhead_text_without_simulation(capsys):
    assert main(["overhead", "--N", "128", "--r", "4", "--trials", "0"]) == 0
    out = capsys.readouterr().out
    assert "closed form" in out and "simulation" not in out


def test_overhead_bad_arguments_exit_2(capsys):
    assert main(["overhead", "--N", "10", "--r", "12"]) == 2
    assert "N" in capsys.readouterr().err
    assert main(["overhead", "--N", "128", "--r", "4", "--trials", "-1"]) == 2


def test_table_overhead_quick(tmp_path, capsys):
    assert (
        main(["table", "overhead", "--quick", "--outdir", str(tmp_path), "--no-progress", "--json"])
        == 0
    )
    files = json.loads(capsys.readouterr().out)["files"]
    assert any(f.endswith("overhead_error.csv") for f in files)
    assert (tmp_path / "figures" / "placement_ablation.png").exists()
