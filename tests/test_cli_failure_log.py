"""``--failure-log LOG``: the plan commands take their failure fields from a log."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spare_theory import infinitehbd_failure_log
from spare_theory.cli import main

# A small cluster keeps the plans cheap: 8 groups of 2,048 GPUs (256 nodes of 8).
SMALL = ["--gpus", "16384", "--gpus-per-group", "2048", "--strategy", "ckpt", "rep"]


def test_optimize_plans_the_scenario_fitted_to_the_log(capsys):
    assert main(["optimize", "--failure-log", "infinitehbd", *SMALL, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    scenario = record["scenario"]
    log = infinitehbd_failure_log()
    assert scenario["failure_law"] == "weibull"
    # The shape is the censored fit's; the mean repair is the log's own mean outage.
    assert scenario["weibull_shape"] == pytest.approx(log.fit_lifetime().parameters["shape"])
    durations, observed = log.repairs()
    assert scenario["repair_minutes"] == pytest.approx(60 * np.mean(durations), rel=1e-9)
    assert observed.all()
    assert {"failure_law", "repair_minutes"} <= {name for name, _ in scenario["provenance"]}
    assert all(record["plans"][s]["feasible"] for s in ("ckpt", "rep"))


def test_the_text_says_where_each_field_comes_from(capsys):
    assert (
        main(["optimize", "--failure-log", "infinitehbd", *SMALL, "--log-law", "exponential"]) == 0
    )
    text = capsys.readouterr().out
    assert "where the fields come from:" in text
    assert "failure_law=exponential" in text or "failure_law" not in text.split("where")[0]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--weibull-shape", "0.7"], "weibull_shape"),
        (["--paper", "200"], "--paper"),
        (["--steps", "1000"], "--steps"),
    ],
)
def test_a_field_the_log_sets_or_another_level_is_refused(capsys, extra, named):
    assert main(["optimize", "--failure-log", "infinitehbd", *SMALL, *extra]) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1


def test_a_missing_log_is_one_line_and_exit_2(capsys, tmp_path):
    assert main(["optimize", "--failure-log", str(tmp_path / "none.csv"), *SMALL]) == 2
    assert "none.csv" in capsys.readouterr().err
