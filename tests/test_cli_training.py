import json

import pytest

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


@pytest.mark.slow
def test_table_training_quick(tmp_path, capsys):
    assert (
        main(["table", "training", "--quick", "--no-progress", "--outdir", str(tmp_path), "--json"])
        == 0
    )
    files = json.loads(capsys.readouterr().out)["files"]
    assert any(f.endswith("headline.png") for f in files)


def _optimize(capsys, *args):
    argv = ["optimize", "--gpus", "4096", "--gpus-per-group", "16", *args]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    return data, capsys.readouterr().out


def test_optimize_prints_the_reductions_it_reports(capsys):
    data, text = _optimize(capsys, "--gpu-mtbf-hours", "5000", "--work-hours", "100")
    hours = {s: p["hours"] for s, p in data["plans"].items()}
    assert all(p["feasible"] and p["reason"] == "" for p in data["plans"].values())
    for key, value in data["reductions"].items():
        a, b = key.split("_vs_")
        assert abs(value - (1 - hours[a] / hours[b])) < 1e-12
        assert f"{value:.3f}" in text
    assert "Reading the columns" in text and "availability =" in text and "restarts =" in text


def test_optimize_says_in_words_that_no_plan_finishes(capsys):
    data, text = _optimize(capsys, "--gpu-mtbf-hours", "1", "--restart-minutes", "60")
    assert not any(p["feasible"] for p in data["plans"].values())
    assert all(p["reason"] for p in data["plans"].values())
    assert all(v is None for v in data["reductions"].values())
    assert "No plan finishes" in text and "restart alone (60 min) outlasts" in text
    assert "inf h" not in text and "restarts inf" not in text


def test_estimate_feasible_matches_its_hours():
    from spare_theory import Scenario, time_to_train

    sc = Scenario(
        gpus=600_000,
        gpus_per_group=2048,
        gpu_mtbf_hours=30.0,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
    )
    bad = time_to_train(sc, "ckpt", checkpoint_interval_minutes=1.0)
    assert not bad.feasible and "infinite" in bad.reason
    ok = time_to_train(
        Scenario(
            gpus=4096,
            gpus_per_group=16,
            gpu_mtbf_hours=5000.0,
            restart_minutes=30,
            checkpoint_minutes=3,
            work_hours=100,
        ),
        "spare",
        r=4,
        checkpoint_interval_minutes=60.0,
    )
    assert ok.feasible == (ok.availability >= 1e-3) and ok.feasible and ok.reason == ""


def test_one_llama3_mtbf_everywhere(capsys):
    from spare_theory import Scenario
    from spare_theory.hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS

    assert LLAMA3_H100_GPU_MTBF_HOURS == 16384 * 54 * 24 / 419
    sc = Scenario(
        gpus=4096, gpus_per_group=16, restart_minutes=30, checkpoint_minutes=3, work_hours=100
    )
    assert sc.gpu_mtbf_hours == LLAMA3_H100_GPU_MTBF_HOURS
    shown = f"{LLAMA3_H100_GPU_MTBF_HOURS:,.0f}"
    assert main(["optimize", "--gpus", "4096", "--gpus-per-group", "16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"]["gpu_mtbf_hours"] == sc.gpu_mtbf_hours
    for command in (["optimize", "--help"], ["headline", "--help"]):
        assert main(command) == 0
        assert shown in capsys.readouterr().out.replace("\n", " ")
    assert shown in str(sc)
