import json

from spare_theory.cli import main


def test_optimize_json(capsys):
    rc = main(
        [
            "optimize",
            "--gpus",
            "4096",
            "--gpus-per-group",
            "16",
            "--gpu-mtbf-hours",
            "5000",
            "--restart-minutes",
            "30",
            "--checkpoint-minutes",
            "3",
            "--work-hours",
            "100",
            "--json",
        ]
    )
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["plans"]) == {"ckpt", "rep", "spare"}
    spare = data["plans"]["spare"]
    assert spare["hours"] == min(spare["curve"]["hours"])
    assert abs(sum(spare["breakdown_hours"].values()) - spare["hours"]) < 1e-6 * spare["hours"]


def test_optimize_text_and_bad_input(capsys):
    assert main(["optimize", "--gpus", "4096", "--gpus-per-group", "16", "--work-hours", "50"]) == 0
    assert "SPARe+CKPT" in capsys.readouterr().out
    assert main(["optimize", "--gpus", "100", "--gpus-per-group", "200"]) == 2
    assert "gpus_per_group" in capsys.readouterr().err


def test_table_training_quick(tmp_path, capsys):
    assert (
        main(["table", "training", "--quick", "--no-progress", "--outdir", str(tmp_path), "--json"])
        == 0
    )
    files = json.loads(capsys.readouterr().out)["files"]
    assert any(f.endswith("headline.png") for f in files)
