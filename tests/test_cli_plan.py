"""``spare-theory plan JOB.toml`` (issue 27): output, --json, --require, --plot, bad files."""

import json
import re
from pathlib import Path

import pytest

from spare_theory.cli import main
from spare_theory.jobs.files import load_job_file
from spare_theory.planning.bill import BADPUT_CAUSES

ROOT = Path(__file__).resolve().parents[1]
# A small job: 512 GPUs in groups of 8, GPU MTBF 200 h (cluster MTBF 23 min), 30 min restarts.
SMALL = """
[job]
parameters = 7e9
gpus = 512
gpus_per_group = 8
gpu_mtbf_hours = 200.0
work_hours = 100

[cost]
gpu_hour_usd = 2.0

[scenario]
restart_minutes = 30
"""


@pytest.fixture
def job_file(tmp_path):
    path = tmp_path / "job.toml"
    path.write_text(SMALL)
    return path


def run(capsys, *argv):
    code = main(["plan", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow  # plans the job (seconds)
def test_prints_each_strategys_plan_and_bill(job_file, capsys):
    code, out, err = run(capsys, job_file, "--strategy", "ckpt", "spare")
    assert code == 0, err
    assert "CKPT-only" in out and "SPARe+CKPT" in out
    assert "lost hours by cause" in out and "restart_minutes: given" not in out
    assert "best plan (hours): SPARe+CKPT" in out


@pytest.mark.slow  # plans the job (seconds)
def test_json_follows_the_documented_schema(job_file, capsys):
    code, out, _ = run(capsys, job_file, "--strategy", "ckpt", "spare", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {
        "objective",
        "scenario",
        "cost",
        "plans",
        "best",
        "requirements",
        "verified",
    }
    assert data["best"] == "spare" and data["objective"] == "hours"
    assert data["cost"]["gpu_hour_usd"] == 2.0
    assert data["scenario"]["restart_minutes"] == 30.0
    plan = data["plans"]["spare"]
    bill = plan["bill"]
    assert set(bill["badput_hours"]) == set(BADPUT_CAUSES)
    assert bill["gpu_hours"] == pytest.approx(512 * plan["hours"], rel=1e-12)
    total = bill["useful_hours"] + sum(bill["badput_hours"].values())
    assert total == pytest.approx(bill["hours"], rel=1e-9)
    assert [row["r"] for row in plan["by_r"]][:1] == [1]
    # The schema in the docs names every key.
    docs = (ROOT / "docs" / "jobs.md").read_text()
    for key in [*data, *plan, *bill, *plan["by_r"][0]]:
        assert f"`{key}`" in docs, key


@pytest.mark.slow  # plans the job (seconds)
def test_requirements_gate_with_exit_code_3(job_file, capsys):
    code, out, _ = run(capsys, job_file, "--strategy", "spare", "--require", "availability>=0.1")
    assert code == 0 and "availability>=0.1" in out and "met" in out
    code, out, _ = run(
        capsys,
        job_file,
        "--strategy",
        "spare",
        "--require",
        "availability>=0.1",
        "--require",
        "usd<=1",
    )
    assert code == 3 and "usd<=1" in out and "MISSED" in out


@pytest.mark.parametrize(
    "expr", ["availability", "usd<=", "bogus>=1", "os.system('x')<1", "usd<=nan"]
)
def test_bad_requirements_are_one_line_and_exit_2(job_file, capsys, expr):
    code, out, err = run(capsys, job_file, "--require", expr)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[job\nparameters = 1", "not valid TOML"),
        (SMALL + "\n[extra]\na = 1\n", "'extra'"),
        (SMALL.replace("gpu_hour_usd", "gpu_hour_eur"), "gpu_hour_eur"),
        (SMALL.replace("work_hours = 100", "work_hours = 100\nsize = 3"), "size"),
        (SMALL.replace("parameters = 7e9", "parameters = -7e9"), "parameters"),
        (SMALL.replace("[scenario]", "[scenario]\nfoo = 1"), "foo"),
        (SMALL + "\n[log]\nnodes = 4\n", "path"),
        (SMALL.replace("gpus = ", "gpu_count = "), "'gpu_count'"),
        (re.sub(r"(?m)^gpus = .*\n", "", SMALL), "needs the key 'gpus'"),
        (re.sub(r"(?m)^work_hours = .*\n", "", SMALL), "needs the key 'work_hours'"),
    ],
)
def test_bad_job_files_are_one_line_and_exit_2(tmp_path, capsys, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err


@pytest.mark.slow  # plans the job (seconds)
def test_plot_writes_a_png(job_file, tmp_path, capsys):
    png = tmp_path / "plan.png"
    code, out, _ = run(capsys, job_file, "--strategy", "ckpt", "spare", "--plot", png)
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in out
    code, _, err = run(capsys, job_file, "--plot", tmp_path / "plan.pdf")
    assert code == 2 and ".png" in err


@pytest.mark.slow  # plans the job (seconds)
def test_the_energy_objective_uses_no_more_energy(job_file, capsys):
    plans = {}
    for objective in ("hours", "energy"):
        code, out, _ = run(
            capsys, job_file, "--strategy", "hot_spares", "--json", "--objective", objective
        )
        assert code == 0
        plans[objective] = json.loads(out)["plans"]["hot_spares"]["bill"]
    assert plans["energy"]["energy_mwh"] <= plans["hours"]["energy_mwh"] * (1 + 1e-12)


def test_the_example_job_file_reads():
    spec = load_job_file(ROOT / "examples" / "job.toml")
    assert (spec.job.gpus, spec.job.gpus_per_group, spec.job.parameters) == (16384, 128, 405e9)
    assert spec.cost.busy_watts_per_gpu == 700.0 and spec.log is None


@pytest.mark.slow
def test_the_example_job_plans(capsys):
    code, out, _ = run(capsys, ROOT / "examples" / "job.toml", "--json")
    assert code == 0
    data = json.loads(out)
    assert all(p["modelled"] and p["feasible"] for p in data["plans"].values())


@pytest.mark.slow  # plans and simulates the job (seconds)
def test_each_best_plan_is_verified_unless_told_not_to(job_file, capsys):
    code, out, _ = run(capsys, job_file, "--strategy", "ckpt", "spare", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["verified"] is True
    for plan in data["plans"].values():
        bill = plan["bill"]
        assert plan["verified_trials"] >= 2 and plan["verified_standard_error"] > 0
        assert bill["verified_hours"] == plan["verified_hours"]
        assert plan["model_error"] == pytest.approx(plan["hours"] / plan["verified_hours"] - 1)
        # Dollars are reserved GPUs x hours x price (512 GPUs at $2): at the simulated hours.
        assert bill["verified_usd"] == pytest.approx(512 * 2.0 * plan["verified_hours"])
        assert plan["caveats"][0].startswith("verified against the event simulation")
    code, out, _ = run(capsys, job_file, "--strategy", "ckpt", "spare", "--json", "--no-verify")
    data = json.loads(out)
    assert data["verified"] is False
    for plan in data["plans"].values():
        assert plan["verified_hours"] is None and "verified_usd" not in plan["bill"]


@pytest.mark.slow  # plans and simulates the job (seconds)
def test_the_verified_table_shows_the_simulated_hours(job_file, capsys):
    code, out, _ = run(capsys, job_file, "--strategy", "spare", "--seed", "3")
    assert code == 0 and "simulated hours" in out and "model error" in out
    code, out, _ = run(capsys, job_file, "--strategy", "spare", "--no-verify")
    assert code == 0 and "simulated hours" not in out


@pytest.mark.slow  # plans and simulates the job (seconds)
def test_an_energy_plan_is_measured_not_moved(job_file, capsys):
    code, out, _ = run(
        capsys, job_file, "--strategy", "hot_spares", "--objective", "energy", "--json"
    )
    plan = json.loads(out)["plans"]["hot_spares"]
    assert code == 0 and plan["verified_hours"] is not None
    assert plan["moved_by_verification"] is False
