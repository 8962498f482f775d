"""``spare-theory fit LOG``: the fits, AIC table, heterogeneity, bursts and the survival plot."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from spare_theory.cli import main
from spare_theory.traces.failure_log import infinitehbd_failure_log


def _run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.slow
def test_fit_of_the_shipped_trace(tmp_path, capsys):
    plot = tmp_path / "km.png"
    code, out, _ = _run(["fit", "infinitehbd", "--bootstraps", "0", "--plot", str(plot)], capsys)
    assert code == 0
    for text in (
        "400 nodes",
        "582 failures",
        "weibull fit",
        "lognormal fit",
        "gamma fit",
        "exponential fit",
        "95 % CI",
        "log-likelihood",
        "AIC:",
        "sup |KM - fit|",
        "lemon_fraction",
        "bursts within 5 min",
        f"wrote {plot}",
    ):
        assert text in out, text
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_json_matches_the_library(tmp_path, capsys):
    code, out, _ = _run(
        [
            "fit",
            "infinitehbd",
            "--law",
            "weibull",
            "--bootstraps",
            "9",
            "--seed",
            "3",
            "--plot",
            "none",
            "--json",
            "--burst-minutes",
            "0",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    log = infinitehbd_failure_log()
    fit = log.fit_lifetime("weibull", bootstraps=9, seed=3)
    assert data["uptimes"]["weibull"]["parameters"] == fit.parameters
    assert data["uptimes"]["weibull"]["gof_p_value"] == fit.gof_p_value
    assert list(data["uptimes"]) == ["weibull"] and list(data["repairs"]) == ["weibull"]
    assert data["log"]["failures"] == 582 and data["bursts"]["largest"] == 8
    assert data["heterogeneity"]["never_failed"] == 169
    assert "plot" not in data


@pytest.mark.slow
def test_a_csv_log_with_every_load_option(tmp_path, capsys, monkeypatch):
    frame = pd.DataFrame(
        {
            "host": ["a", "a", "b", "c", "a", "b"],
            "down": [1.0, 30.0, 12.0, 50.0, 70.0, 80.0],
            "up": [2.0, 31.5, 20.0, None, 71.0, 80.5],
        }
    )
    frame.to_csv(tmp_path / "faults.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(
        [
            "fit",
            "faults.csv",
            "--node",
            "host",
            "--start",
            "down",
            "--end",
            "up",
            "--nodes",
            "6",
            "--observed-from",
            "0",
            "--observed-until",
            "96",
            "--time-unit",
            "hours",
            "--law",
            "best",
            "--bootstraps",
            "0",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert data["log"]["nodes"] == 6 and data["log"]["window_hours"] == 96.0
    assert data["plot"].endswith("faults_survival.png")
    assert (tmp_path / "faults_survival.png").is_file()
    (fit,) = data["uptimes"].values()  # --law best: the one law of smallest AIC
    assert fit["events"] == 6 and "by AIC" in fit["note"]


def test_an_empty_log_says_nothing_failed(tmp_path, capsys):
    (tmp_path / "none.csv").write_text("node,start,end\n")
    code, out, _ = _run(
        [
            "fit",
            str(tmp_path / "none.csv"),
            "--nodes",
            "8",
            "--observed-from",
            "0",
            "--observed-until",
            "100",
            "--plot",
            "none",
        ],
        capsys,
    )
    assert code == 0
    assert "nothing failed in 800 hours" in out and "no outages" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "missing.csv"], "is not a file"),
        (["fit", "infinitehbd", "--nodes", "10"], "nodes must be >= 231"),
        (["fit", "infinitehbd", "--time-unit", "fortnights"], "invalid choice"),
        (["fit", "infinitehbd", "--bootstraps", "-1"], "--bootstraps must be >= 0"),
        (["fit", "infinitehbd", "--seed", "-2"], "--seed must be a non-negative integer"),
        (["fit", "bad.csv"], "row 0, column 'end': end 1.0 is before its start 2.0"),
        (["fit"], "LOG"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.csv").write_text("node,start,end\na,2.0,1.0\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = _run([*argv, "--plot", "none"] if len(argv) > 1 else argv, capsys)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spare-theory: error:") and message in err


def test_help_names_the_outputs(capsys):
    assert main(["fit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for word in (
        "Kaplan-Meier",
        "infinitehbd",
        "lemon_fraction",
        "gof_p_value",
        "--plot",
        "_survival.png",
        "--observed-from",
        "--time-unit",
    ):
        assert word in text, word
