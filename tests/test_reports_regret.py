"""Report 'regret': the toolkit's plans against the best of a grid, on replayed logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spare_theory import Scenario
from spare_theory.cli import main
from spare_theory.reports import regret as report
from spare_theory.reports.catalogue import REPORTS, ReportOptions
from spare_theory.training.resolve import resolve


def test_registered_and_a_cli_table(capsys):
    assert "regret" in REPORTS
    assert main(["table", "regret", "--help"]) == 0
    assert "grid" in capsys.readouterr().out


def test_ratio_standard_error_matches_the_spread_of_its_estimates():
    # Paired samples (x, y) with x about 3 % above y and correlated noise: the delta-method
    # standard error of mean(x) / mean(y) - 1 against the spread over 4,000 repetitions.
    rng = np.random.default_rng(5)
    n, reps = 16, 4000
    common = rng.gamma(20.0, 50.0, size=(reps, n))
    y = common + rng.normal(0.0, 20.0, size=(reps, n))
    x = 1.03 * common + rng.normal(0.0, 20.0, size=(reps, n))
    estimates = np.array([report._ratio(a, b) for a, b in zip(x, y)])
    spread = estimates[:, 0].std(ddof=1)
    # The mean reported SE within 10 % of the spread (its own SE over 4,000 is about 1.1 %,
    # the delta method's small-sample bias at n = 16 a few %).
    assert abs(estimates[:, 1].mean() / spread - 1) < 0.10
    assert abs(estimates[:, 0].mean() - 0.03) < 4 * spread / np.sqrt(reps) + 1e-3


def test_grid_holds_the_plan_its_neighbours_and_their_neighbours():
    sc = Scenario(
        gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5, work_hours=10
    )
    resolved = resolve(sc, "rep", r=3, checkpoint_interval_minutes=100)
    grid = report._grid(resolved, horizon_hours=1e6)
    assert grid[0] == resolved
    plans = {(j.r, round(j.checkpoint_interval_minutes, 6)) for j in grid}
    assert len(plans) == len(grid)  # no plan twice
    # r in 1 .. 5 at 100 min, 3 at 49, 70, 98, 140, 196 min, 2 and 4 at 70 and 140 min.
    expected = (
        {(r, 100.0) for r in (1, 2, 4, 5)}
        | {(3, t) for t in (49.0, 70.0, 98.0, 140.0, 196.0)}
        | {(r, t) for r in (2, 4) for t in (70.0, 140.0)}
    )
    assert plans == {(3, 100.0)} | expected
    # Intervals beyond the horizon (30 min) play alike: one plan per r is left.
    short = report._grid(resolved, horizon_hours=0.5)
    assert sorted(j.r for j in short) == [1, 2, 3, 4, 5] and short[0] == resolved


def test_drawn_logs_are_the_stated_laws():
    exp, lemons = report.regret_log("exponential"), report.regret_log("weibull_lemons")
    for log in (exp, lemons):
        assert log.node_count == 400
        # The nodes' mean rate is the trace's (5,623 h node MTBF), up to Poisson noise.
        assert abs(log.failure_rate * 5623.12 - 1) < 4 / np.sqrt(log.failures)
    # Lemons make the failure counts over-dispersed; memoryless identical nodes do not.
    assert lemons.heterogeneity().dispersion_index > 2 > exp.heterogeneity().dispersion_index
    with pytest.raises(ValueError, match="log"):
        report.regret_log("gamma")


@pytest.mark.slow
def test_quick_report_writes_both_tables(tmp_path):
    paths = REPORTS["regret"].run(ReportOptions(tmp_path, quick=True))
    assert sorted(p.name for p in paths) == [
        "regret.csv",
        "regret.md",
        "regret_pick.csv",
        "regret_pick.md",
    ]
    table = pd.read_csv(tmp_path / "tables" / "regret.csv")
    assert table["strategy"].tolist() == ["ckpt", "rep", "spare"]
    assert (table["best_hours"] <= table["replay_hours"] + 1e-9).all()
    picks = pd.read_csv(tmp_path / "tables" / "regret_pick.csv")
    assert picks["replay_pick"].tolist() == ["spare"]


@pytest.mark.slow
def test_verified_plans_on_the_shipped_trace_at_100k_are_within_one_percent():
    # The target: every strategy's verified plan within 1 % of the best of its
    # grid, or within two standard errors of the paired difference.
    table, picks = report.regret_table((("stepfun", 100_000),), trials=12, seed=0)
    assert len(table) == 5 and table["verified_regret_pct"].notna().all()
    _assert_within_target(table)
    assert len(picks) == 1


def _assert_within_target(table):
    done = table.dropna(subset=["verified_regret_pct"])
    slack = np.maximum(1.0, 2 * done["verified_regret_se_pct"])
    assert (done["verified_regret_pct"] <= slack).all(), done[
        ["log", "gpus", "strategy", "verified_regret_pct", "verified_regret_se_pct"]
    ]


def test_committed_regret_table_meets_the_target_snapshot():
    # A snapshot: the committed table (spare-theory table regret), at 600k GPUs too,
    # where recomputing it takes minutes.
    table = pd.read_csv(Path(__file__).parents[1] / "tables" / "regret.csv")
    shipped = table[table["log"] == "stepfun"]
    assert set(shipped["gpus"]) == {100_000, 600_000}
    assert set(shipped["strategy"]) == set(report.STRATEGIES)
    _assert_within_target(shipped)


@pytest.mark.slow
def test_verified_plan_is_optimal_plans_verify_on_the_log():
    # The report verifies the plan it found (verify_plan) instead of planning it again:
    # the row must say what optimal_plan(verify=log) with the same seed says.
    from spare_theory import optimal_plan
    from spare_theory._validation import as_seed_sequence, child_seed
    from spare_theory.reports.trace import CLUSTER, POOL_SHORTAGE
    from spare_theory.traces.pools import log_spares

    row = report.regret_cell(("exponential", 100_000, "rep", 4, 3))
    log = report.regret_log("exponential", 3)
    spares = log_spares(log, gpus=100_000, probability=POOL_SHORTAGE)
    scenario = log.scenario(gpus=100_000, spare_nodes=spares, **CLUSTER)
    key = (report.LOGS.index("exponential"), 100_000)
    seed = child_seed(as_seed_sequence(3), report._VERIFY_STREAM, *key)
    plan = optimal_plan(scenario, "rep", verify=log, seed=seed)
    assert row["verified_hours"] == plan.verified_hours
    assert row["moved"] == plan.moved_by_verification
    assert row["verified_r"] == plan.r
    assert row["verified_checkpoint_interval_minutes"] == plan.checkpoint_interval_minutes
