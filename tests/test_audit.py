"""The random audit: its space, its reproducibility, its summary, its command and its verdict."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from spare_theory.audits import FIELDS, AuditResult, AuditSpace, Choice, Span, audit
from spare_theory.audits import run as audit_run
from spare_theory.hourly.scenario import Scenario
from spare_theory.steps.scenario import StepScenario

# Small, short hour-level runs: the fast tests' audits take seconds.
CHEAP = AuditSpace(
    step_share=0.0,
    groups=Span(8, 16, log=True, integer=True),
    group_mtbf_hours=Span(20.0, 60.0, log=True),
    work_hours=Span(5.0, 10.0),
)


def _draws(space: AuditSpace, n: int, seed: int = 11) -> list:
    return [space.draw(seed, i) for i in range(n)]


def test_a_drawn_scenario_depends_only_on_its_seed_and_index():
    space = AuditSpace()
    first = space.draw(3, 17)
    assert first == space.draw(3, 17)
    assert first.scenario != space.draw(3, 18).scenario
    assert first.scenario != space.draw(4, 17).scenario


def test_the_tags_say_what_each_scenario_carries():
    # Read back from the scenario itself, not from the drawing code's bookkeeping.
    for drawn in _draws(AuditSpace(), 300):
        sc, tags = drawn.scenario, set(drawn.fields)
        assert ("step level" in tags) == isinstance(sc, StepScenario)
        repairs = sc.repair_seconds if isinstance(sc, StepScenario) else sc.repair_minutes
        assert ("repairs" in tags) == (repairs is not None)
        assert ("lognormal repairs" in tags) == (not isinstance(sc.repair_law, str))
        assert ("spare pool" in tags) == bool(sc.spare_nodes)
        if isinstance(sc, Scenario):
            assert ("weibull" in tags) == (sc.failure_law == "weibull")
            assert ("node clocks" in tags) == (sc.renewal == "node")
            assert ("failure domains" in tags) == (sc.domain_size is not None)
            assert ("lemons" in tags) == (sc.lemon_fraction > 0)
        else:
            assert ("weibull" in tags) == (sc.failure_law.dist.name == "weibull_min")


def test_each_optional_field_is_drawn_at_its_declared_share():
    n = 600
    drawn = _draws(AuditSpace(), n, seed=5)
    space = AuditSpace()
    hour = [d for d in drawn if d.level == "hour"]
    repaired = [d for d in drawn if "repairs" in d.fields]
    expected = {
        "step level": (space.step_share, drawn),
        "weibull": (space.weibull_share, drawn),
        "repairs": (space.repairs_share, drawn),
        "lemons": (space.lemons_share, hour),
        "spare pool": (space.pool_share, repaired),
    }
    for name, (share, among) in expected.items():
        seen = np.mean([name in d.fields for d in among])
        se = math.sqrt(share * (1 - share) / len(among))
        assert abs(seen - share) < 4 * se, (name, seen, share)


def test_the_group_mtbf_is_the_group_laws_mean_whatever_the_clocks():
    space = AuditSpace(step_share=0.0, weibull_share=1.0, lemons_share=0.0, domains_share=0.0)
    for drawn in _draws(space, 40):
        sc = drawn.scenario
        # Independent of the scenario's own rate: group and node laws from scipy directly.
        shape, gpu_mean = sc.weibull_shape, sc.gpu_mtbf_hours
        gpu = stats.weibull_min(shape, scale=gpu_mean / math.gamma(1 + 1 / shape))
        if sc.renewal == "node":
            node_mean = float(
                stats.weibull_min(shape, scale=gpu.kwds["scale"] * 8 ** (-1 / shape)).mean()
            )
            group_mtbf = node_mean / (sc.gpus_per_group // 8)
        else:
            group_mtbf = float(
                stats.weibull_min(
                    shape, scale=gpu.kwds["scale"] * sc.gpus_per_group ** (-1 / shape)
                ).mean()
            )
        assert 3.0 * (1 - 1e-9) <= group_mtbf <= 60.0 * (1 + 1e-9)
        assert group_mtbf == pytest.approx(1 / sc.group_failure_rate_per_hour, rel=1e-6)


def test_spans_and_choices_check_what_they_are_given():
    with pytest.raises(ValueError, match="high"):
        Span(5, 2)
    with pytest.raises(ValueError, match="low"):
        Span(0, 2, log=True)
    with pytest.raises(ValueError, match="values"):
        Choice(())
    with pytest.raises(ValueError, match="pool_share"):
        AuditSpace(pool_share=1.5)
    with pytest.raises(ValueError, match="gpus_per_group"):
        AuditSpace(gpus_per_group=Choice((12,)))
    with pytest.raises(ValueError, match="repair_law"):
        AuditSpace(repair_law=Choice(("gamma",)))


def test_a_toml_file_sets_any_field_and_bad_files_name_their_key(tmp_path):
    path = tmp_path / "space.toml"
    path.write_text(
        "[space]\n"
        "groups = {low = 16, high = 32}\n"
        "gpus_per_group = {choice = [16]}\n"
        "lemons_share = 1\n"
        "step_share = 0\n"
    )
    space = AuditSpace.from_toml(path)
    for drawn in _draws(space, 20):
        assert 16 <= drawn.scenario.groups <= 32
        assert drawn.scenario.gpus_per_group == 16
        assert "lemons" in drawn.fields
    cases = {
        "foo = 1\n": "unknown key 'foo'",
        "groups = 'many'\n": "key 'groups'",
        "pool_share = 'half'\n": "key 'pool_share'",
        "repair_law = ['fixed']\n": "key 'repair_law'",
        "groups = [\n": "not a TOML file",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            AuditSpace.from_toml(path)
    with pytest.raises(ValueError, match="cannot read"):
        AuditSpace.from_toml(tmp_path / "missing.toml")


def test_audit_results_do_not_depend_on_how_the_scenarios_are_split():
    names = ["ckpt", "spare", "elastic"]
    whole = audit(CHEAP, scenarios=3, trials=4, seed=9, strategies=names)
    with ThreadPoolExecutor(2) as pool:
        spread = audit(CHEAP, indices=[2, 0, 1], trials=4, seed=9, strategies=names, executor=pool)
    alone = audit(CHEAP, indices=[1], trials=4, seed=9, strategies=names)
    key = ["index", "strategy"]
    # Everything but the wall time of each cell.
    whole, spread, alone = (
        dataclasses.replace(r, cells=r.cells.drop(columns="seconds"))
        for r in (whole, spread, alone)
    )
    pd.testing.assert_frame_equal(
        whole.cells.sort_values(key).reset_index(drop=True),
        spread.cells.sort_values(key).reset_index(drop=True),
    )
    pd.testing.assert_frame_equal(
        whole.cells[whole.cells["index"] == 1].reset_index(drop=True), alone.cells
    )


def test_the_strategies_of_a_scenario_share_their_random_numbers():
    # CKPT-only and Rep at r = 1 are the same plan: on common random numbers their
    # simulated hours agree run for run, so the means are equal, not merely close.
    space = dataclasses.replace(
        CHEAP,
        weibull_share=0.0,
        repairs_share=0.0,
        domains_share=0.0,
        lemons_share=0.0,
        group_mtbf_hours=Span(50, 60),
        restart_minutes=Span(2, 3),
    )
    res = audit(space, scenarios=4, trials=6, seed=2, strategies=["ckpt", "rep"])
    for _, rows in res.cells.groupby("index"):
        ckpt, rep = rows.iloc[0], rows.iloc[1]
        if rep["r"] == 1:
            assert rep["simulated_hours"] == ckpt["simulated_hours"]
            break
    else:
        pytest.fail("no scenario where Rep's best plan is r = 1: widen the space")


def _hand_cells() -> pd.DataFrame:
    rows = []
    # (fields, strategy, status, error, z) with hand-chosen errors:
    for fields, name, status, error, z in [
        ("none", "ckpt", "model", 0.01, 0.5),
        ("none", "spare", "model", 0.05, 2.0),  # 5 % but within 3 SE: within
        ("lemons", "spare", "model", -0.10, -8.0),  # outside both
        ("lemons", "ckpt", "refused", None, None),
        ("lemons, spare pool", "ckpt", "model", 0.04, 4.0),  # outside both
    ]:
        within = status == "model" and (abs(error) <= 0.03 or abs(z) <= 3)
        rows.append(
            {
                "index": len(rows),
                "level": "hour",
                "fields": fields,
                "strategy": name,
                "status": status,
                "error": error,
                "z": z,
                "within": within,
                # As if the shipped rule refused SPARe with lemons.
                "audit_refused": fields == "lemons" and name == "spare",
                "warnings": 1 if name == "spare" else 0,
            }
        )
    return pd.DataFrame(rows)


def test_the_summary_counts_errors_by_field_and_strategy():
    res = AuditResult(cells=_hand_cells(), space=AuditSpace(), seed=0, trials=4)
    table = res.summary_table().set_index(["by", "group"])
    everything = table.loc[("all", "all")]
    assert everything["cells"] == 5 and everything["model"] == 4
    assert everything["refused_share"] == pytest.approx(0.2)
    # |errors| 0.01, 0.04, 0.05, 0.10: median 0.045; the worst keeps its sign.
    assert everything["median_abs_error"] == pytest.approx(0.045)
    assert everything["worst_error"] == pytest.approx(-0.10)
    assert everything["outside"] == 2 and everything["outside_share"] == pytest.approx(0.5)
    # Of the 3 answers the rule keeps, 1 is outside (CKPT-only with lemons and a pool).
    assert everything["audit_refused"] == 1 and everything["kept_outside"] == 1
    assert everything["kept_outside_share"] == pytest.approx(1 / 3)
    assert everything["warnings"] == 2
    lemons = table.loc[("field", "lemons")]
    assert (lemons["cells"], lemons["model"], lemons["outside"]) == (3, 2, 2)
    assert table.loc[("field", "spare pool")]["cells"] == 1
    assert table.loc[("strategy", "spare")]["outside"] == 1
    assert list(res.worst(2)["error"]) == [-0.10, 0.05]


def test_warnings_raised_in_a_cell_are_counted_in_its_row(monkeypatch):
    planner = audit_run.optimal_plan

    def noisy(*args, **kwargs):
        warnings.warn("a numerical warning", RuntimeWarning, stacklevel=1)
        return planner(*args, **kwargs)

    monkeypatch.setattr(audit_run, "optimal_plan", noisy)
    res = audit(CHEAP, scenarios=1, trials=3, strategies=["ckpt"])
    assert res.cells["warnings"].tolist() == [1]
    assert "a numerical warning" in res.cells["message"].iloc[0]


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="trials"):
        audit(scenarios=1, trials=1)
    with pytest.raises(ValueError, match="strategy"):
        audit(scenarios=1, strategies=["nope"])
    with pytest.raises(ValueError, match="indices"):
        audit(indices=[-1])
    with pytest.raises(ValueError, match="space"):
        audit({"groups": 3}, scenarios=1)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spare_theory.cli", "audit", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_command_prints_json_and_writes_the_report_files(tmp_path):
    common = [
        "--trials",
        "3",
        "--strategy",
        "ckpt",
        "spare",
        "--seed",
        "4",
        "--no-progress",
        "--json",
    ]
    out = _cli("--scenarios", "2", *common, "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["seed"] == 4 and len(data["cells"]) == 4
    assert data["summary"][0]["group"] == "all"
    assert {p.name for p in (tmp_path / "tables").iterdir()} == {
        "audit.csv",
        "audit.md",
        "audit_cells.csv",
        "audit_cells.md",
    }
    rerun = json.loads(_cli("--index", "1", *common).stdout)["cells"]
    assert [c["model_hours"] for c in rerun] == [
        c["model_hours"] for c in data["cells"] if c["index"] == 1
    ]


def test_the_command_turns_a_bad_space_file_into_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "space.toml"
    bad.write_text("[space]\nsteps = 'many'\n")
    for args in (["--space", str(bad)], ["--space", str(tmp_path / "none.toml")]):
        out = _cli(*args, "--scenarios", "1")
        assert out.returncode == 2
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@functools.cache
def _big_audit() -> AuditResult:
    # The size: at least 300 model answers (about 3.8 per scenario), on a seed of
    # its own; about 5 min on one core.  Cached: both tests below read one run when
    # they land on the same worker.
    return audit(scenarios=90, trials=40, seed=38)


@pytest.mark.slow
def test_audit_of_300_model_answers_on_its_own_seed():
    res = _big_audit()
    cells = res.cells
    answered = res.model_cells
    assert len(answered) >= 300
    # No cell may fail outright: a refusal is a NoClosedFormError, anything else is a bug.
    assert (cells["status"] != "failed").all(), cells[cells["status"] == "failed"]["message"]
    assert np.isfinite(answered["standard_error_hours"]).all()
    assert set(cells["level"]) == {"hour", "step"}
    # Each field the default space draws is exercised by model answers (failure classes are
    # drawn only with a detection_share, 0 by default: tests/test_failure_classes.py).
    table = res.summary_table().set_index(["by", "group"])
    assert AuditSpace().detection_share == 0
    drawn = [name for name in FIELDS if name not in ("detection", "misdiagnosis")]
    assert len(drawn) == len(FIELDS) - 2
    for name in drawn:
        assert table.loc[("field", name)]["model"] >= 5, name


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="not met yet: the shipped audit (seed 2026, 150 scenarios, docs/audit.md) has 27 "
    "of 563 model answers (4.8 %) outside 3 % and 3 SE and 10 beyond 6 %; the mends of the "
    "audit issue are to make this pass",
)
def test_the_audit_targets_hold_on_its_own_seed():
    answered = _big_audit().model_cells
    assert answered["within"].mean() >= 0.95
    assert (answered["error"].abs() <= 0.06).all()
    assert _big_audit().cells["warnings"].sum() == 0


def test_a_hopeless_model_answer_is_not_simulated_and_is_counted():
    # Scenario 31 of seed 38: CKPT-only on 58 groups with a 3.5 min cluster MTBF and 37 min
    # restarts is priced at millions of hours; simulating that took CI past its limit.
    res = audit(indices=[31], seed=38, strategies=["ckpt"])
    row = res.cells.iloc[0]
    assert row["status"] == "unsimulated" and row["model_hours"] > 20 * 53
    assert math.isnan(row["simulated_hours"])
    table = res.summary_table().set_index(["by", "group"])
    assert table.loc[("all", "all")]["unsimulated"] == 1
    assert table.loc[("all", "all")]["model"] == 0
