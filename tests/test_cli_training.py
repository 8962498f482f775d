import json
import re

import pytest

from spare_theory import registered_strategies
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
    assert list(data["plans"]) == list(registered_strategies())
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
    assert not any(p.get("feasible") for p in data["plans"].values())
    assert all(p["reason"] for p in data["plans"].values())
    assert all(v is None for v in data["reductions"].values())
    flat = " ".join(text.split())
    assert re.search(r"No plan (the model covers )?finishes", flat)
    assert "restart alone (60 min) outlasts" in flat
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


def test_optimize_prints_the_flat_range_of_r_it_reports(capsys):
    from spare_theory import Scenario, optimal_plan

    data, text = _optimize(capsys, "--gpu-mtbf-hours", "2000", "--work-hours", "100")
    sc = Scenario(
        gpus=4096,
        gpus_per_group=16,
        gpu_mtbf_hours=2000.0,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=100,
    )
    low, high = optimal_plan(sc, "spare").r_within(0.01)
    assert data["plans"]["spare"]["r_within_1pct"] == [low, high] and low < high
    row = next(line for line in text.splitlines() if line.strip().startswith("SPARe+CKPT"))
    assert f" {low}-{high} " in row
    assert max(len(line) for line in text.splitlines()) <= 100


def test_no_search_bound_is_printed_as_advice(capsys):
    """With 1 h repairs SPARe's interval is the search's limit, 600 x the work hours."""
    argv = ["optimize", "--repair-minutes", "60", "--strategy", "spare"]
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plans"]["spare"]
    assert plan["interval_limit"] == "upper" and plan["no_periodic_checkpoint"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.strip().startswith("SPARe+CKPT"))
    assert "none pays" in row and "432" not in row
    assert "no periodic checkpoint pays off" in text


def test_gpus_left_out_of_the_groups_are_a_warning(capsys):
    argv = ["optimize", "--gpus", "100000", "--gpus-per-group", "60000", "--work-hours", "50"]
    assert main([*argv, "--strategy", "ckpt"]) == 0
    captured = capsys.readouterr()
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "40,000 of 100,000 GPUs are in no group" in warning[0]
    assert "40,000 GPUs in no group" in captured.out  # the header says it too
    # The published 600k scenario leaves 0.3 % out: said in the header only.
    assert main(["optimize", "--strategy", "ckpt"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err and "1,984 GPUs in no group" in captured.out


def _documented(caveats):
    """The documented biases: each model plan's audit line is left out (every plan has one)."""
    return [c for c in caveats if not (c.startswith("audit (") or ": audit (" in c)]


def test_documented_biases_are_said_where_they_apply(capsys):
    base = ["--gpu-mtbf-hours", "2000", "--work-hours", "100"]
    model = ["--strategy", "ckpt", "rep", "spare"]  # elastic DP: no closed form under Weibull
    data, text = _optimize(capsys, *base, "--failure-law", "weibull", *model)
    documented = _documented(data["caveats"])
    assert len(documented) == 1 and "docs/theory.md section 4" in documented[0]
    assert "caveat: SPARe+CKPT" in text and "caveat: SPARe+CKPT: audit (" in text
    data, text = _optimize(capsys, *base, "--strategy", "ckpt", "rep", "spare")
    assert _documented(data["caveats"]) == [] and "docs/theory.md" not in text
    assert len(data["caveats"]) == 3  # the audit's line of each plan
    # Elastic DP's fresh-start bias is measured without repairs only (docs/theory.md section 8).
    data, text = _optimize(capsys, *base, "--strategy", "elastic")
    documented = _documented(data["caveats"])
    assert len(documented) == 1 and "docs/theory.md section 8" in documented[0]
    assert _documented(data["plans"]["elastic"]["caveats"]) == [documented[0].split(": ", 1)[1]]
    data, text = _optimize(capsys, *base, "--strategy", "elastic", "--repair-minutes", "60")
    assert _documented(data["caveats"]) == [] and "docs/theory.md" not in text


def test_each_strategy_shows_its_own_plan_variables(capsys):
    """No r where a strategy has none; spare groups and the quorum in their own columns."""
    data, text = _optimize(
        capsys,
        "--gpu-mtbf-hours",
        "2000",
        "--work-hours",
        "100",
        "--strategy",
        "spare",
        "elastic",
        "hot_spares",
    )
    header, spare, elastic, hot = text.splitlines()[3:7]
    assert header.split()[:7] == ["strategy", "r", "spare", "groups", "within", "1", "%"]
    assert "quorum" in header
    elastic_plan, hot_plan = data["plans"]["elastic"], data["plans"]["hot_spares"]
    # Elastic DP: no r, its quorum; hot spares: its r as spare groups, and its quorum.
    assert elastic_plan["variables"] == {"min_groups": elastic_plan["min_groups"]}
    assert hot_plan["variables"] == {
        "spare_groups": hot_plan["r"],
        "min_groups": hot_plan["min_groups"],
    }
    cells = {row.split()[0]: row.split() for row in (spare, elastic, hot)}
    assert cells["SPARe+CKPT"][1:3] == [str(data["plans"]["spare"]["r"]), "-"]
    assert cells["Elastic"][2:4] == ["-", "-"]  # "Elastic DP": r, spare groups
    assert cells["Hot"][2:4] == ["-", str(hot_plan["r"])]
    assert str(elastic_plan["min_groups"]) in cells["Elastic"]


def test_optimize_plans_the_papers_step_level_scenario_snapshot(capsys):
    # r = 9 is the published optimum at N = 200; k is this model's (14 before the run's
    # ends were priced, docs/audit.md mend 7).
    argv = ["optimize", "--paper", "200", "--steps", "2000", "--strategy", "spare", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scenario"]["level"] == "step" and data["scenario"]["steps"] == 2000
    assert (data["plans"]["spare"]["r"], data["plans"]["spare"]["checkpoint_every_steps"]) == (
        9,
        15,
    )


def test_strategies_come_from_the_registry(capsys):
    from spare_theory.strategies import registry
    from spare_theory.strategies.rep import RepStrategy

    class Mirror(RepStrategy):
        name = "mirror"
        label = "Mirror"

    registry.register_strategy(Mirror())
    try:
        data, text = _optimize(capsys, "--gpu-mtbf-hours", "2000", "--work-hours", "100")
        assert list(data["plans"]) == [*registered_strategies()]
        assert list(data["plans"])[-1] == "mirror"
        assert "Mirror" in text and data["reductions"]["mirror_vs_rep"] == 0.0
    finally:
        del registry._REGISTRY["mirror"]


def test_a_strategy_the_model_does_not_cover_is_said_not_fatal(capsys):
    # --method model: the closed forms only (auto would plan Rep by simulation here).
    data, text = _optimize(
        capsys, "--domain-size", "8", "--domain-share", "0.3", "--method", "model"
    )
    assert (
        not data["plans"]["rep"]["modelled"] and "failure domains" in data["plans"]["rep"]["reason"]
    )
    assert data["plans"]["spare"]["modelled"] and data["plans"]["ckpt"]["modelled"]
    assert "Rep+CKPT: no plan on this scenario" in text
    # SPARe's best plan here is r = 1, CKPT-only's exact law: the domain model's bias
    # (measured at r >= 2) is not said; where its plan has redundancy, it is.
    assert data["plans"]["spare"]["r"] == 1 and "docs/theory.md" not in text
    data, text = _optimize(
        capsys,
        "--domain-size",
        "8",
        "--domain-share",
        "0.3",
        "--gpu-mtbf-hours",
        "5000",
        "--work-hours",
        "100",
        "--strategy",
        "spare",
    )
    assert data["plans"]["spare"]["r"] > 1
    assert "caveat: SPARe+CKPT: with failure domains" in text


@pytest.mark.slow
def test_headline_reads_without_placeholders_and_fits_100_columns(capsys):
    """About a minute: the paper's table, its split plans and the 600k table."""
    assert main(["headline"]) == 0
    text = capsys.readouterr().out
    assert "- %" not in text  # no "gain: paper - %" where nothing is known
    assert "microbatches" not in text and "-1.0078" not in text  # no Rep row against itself
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "Published 40-50 % reduction" in text
