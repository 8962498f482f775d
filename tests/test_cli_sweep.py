"""``spare-theory sweep``: the restart time from the command line."""

import json

from spare_theory import Scenario, optimal_plan
from spare_theory.cli import main

_POINT = ["--gpus", "4096", "--gpu-mtbf-hours", "5000", "--gpus-per-group", "16"]


def _sweep(capsys, *args):
    point = [] if "--paper" in args else _POINT
    assert main(["sweep", *point, *args, "--no-progress", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_restart_minutes_sets_a_constant_restart_cost(capsys):
    rows = _sweep(capsys, "--restart-minutes", "20", "--work-hours", "100")
    assert {row["restart_model"] for row in rows} == {"constant"}
    assert {row["restart_minutes"] for row in rows} == {20.0}
    # The same plans as the optimiser on the scenario with that restart time.
    sc = Scenario(
        gpus=4096,
        gpus_per_group=16,
        gpu_mtbf_hours=5000.0,
        restart_minutes=20.0,
        checkpoint_minutes=5.0,
        work_hours=100.0,
    )
    for row in rows:
        plan = optimal_plan(sc, row["strategy"])
        assert (row["r"], row["hours"]) == (plan.r, plan.hours)


def test_restart_minutes_anchors_the_linear_model_at_600k_gpus(capsys):
    rows = _sweep(capsys, "--restart-minutes", "30", "--restart-model", "linear")
    assert {row["restart_minutes"] for row in rows} == {30.0 * 4096 / 600_000}


def test_restart_minutes_must_be_positive_to_anchor_the_linear_model(capsys):
    assert main(["sweep", *_POINT, "--restart-minutes", "0", "--restart-model", "linear"]) == 2
    assert "--restart-minutes" in capsys.readouterr().err
    assert main(["sweep", *_POINT, "--restart-minutes", "-1"]) == 2
    assert "restart_minutes" in capsys.readouterr().err


def test_every_field_is_an_axis_and_omitted_ones_take_optimizes_defaults(capsys):
    rows = _sweep(capsys, "--repair-minutes", "10", "60", "--strategy", "spare")
    assert [(row["repair_minutes"], row["strategy"]) for row in rows] == [
        (10.0, "spare"),
        (60.0, "spare"),
    ]
    # No hidden grid: the work and restart cost are optimize's defaults.
    assert {(row["work_hours"], row["restart_minutes"]) for row in rows} == {(720.0, 60.0)}


def test_sweep_of_the_papers_scenarios(capsys):
    rows = _sweep(capsys, "--paper", "200", "600", "--steps", "1000", "--strategy", "rep")
    assert [row["groups"] for row in rows] == [200, 600]
    assert all(row["checkpoint_every_steps"] >= 1 for row in rows)


def test_sweep_text_is_a_block_per_point_within_100_columns(capsys, tmp_path):
    argv = ["sweep", *_POINT, "--work-hours", "50", "100", "--no-progress"]
    assert main([*argv, "--outdir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "work_hours=50:" in text and "work_hours=100:" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    assert (tmp_path / "sweep.csv").exists() and (tmp_path / "sweep_by_point.csv").exists()
