"""``spare-theory sweep``: the restart time from the command line."""

import json

from spare_theory import Scenario, optimal_plan
from spare_theory.cli import main

_POINT = ["--gpus", "4096", "--gpu-mtbf-hours", "5000", "--gpus-per-group", "16"]


def _sweep(capsys, *args):
    assert main(["sweep", *_POINT, *args, "--no-progress", "--json"]) == 0
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


def test_restart_minutes_must_be_positive(capsys):
    assert main(["sweep", *_POINT, "--restart-minutes", "0"]) == 2
    assert "--restart-minutes" in capsys.readouterr().err
