import numpy as np
import pytest

from spare_theory.optimize import optimal_plan, r_star_rule
from spare_theory.placement import min_groups_for_ruler
from spare_theory.scenario import Scenario
from spare_theory.training import time_to_train

SC = Scenario(gpus=4096, gpus_per_group=16, gpu_mtbf_hours=5000.0, restart_minutes=30, checkpoint_minutes=3, work_hours=200)


@pytest.mark.parametrize("strategy", ["ckpt", "rep", "spare"])
def test_plan_is_the_minimum_of_its_curve(strategy):
    plan = optimal_plan(SC, strategy)
    assert plan.hours == pytest.approx(plan.hours_by_r.min())
    assert plan.r == plan.r_values[np.argmin(plan.hours_by_r)]
    again = time_to_train(SC, strategy, r=plan.r, checkpoint_interval_minutes=plan.checkpoint_interval_minutes)
    assert again.hours == pytest.approx(plan.hours, rel=1e-12)
    # No neighbouring r and no other interval does better.
    for r in (plan.r - 1, plan.r + 1):
        if strategy != "ckpt" and 1 <= r <= SC.groups and r in plan.r_values:
            assert time_to_train(SC, strategy, r=r).hours >= plan.hours
    for factor in (0.7, 1.4):
        other = time_to_train(SC, strategy, r=plan.r, checkpoint_interval_minutes=plan.checkpoint_interval_minutes * factor)
        assert other.hours >= plan.hours


def test_spare_only_uses_rulers_that_exist():
    sc = Scenario(gpus=160, gpus_per_group=8, gpu_mtbf_hours=300.0, restart_minutes=60, checkpoint_minutes=1, work_hours=50)
    plan = optimal_plan(sc, "spare")
    assert all(min_groups_for_ruler(r) <= sc.groups for r in plan.r_values)


def test_ckpt_plan_has_r_one():
    plan = optimal_plan(SC, "ckpt")
    assert plan.r == 1 and list(plan.r_values) == [1]


def test_r_star_rule():
    # floor(log2 N + 0.833) by hand: log2 64 = 6; log2 1e6 = 19.93.
    assert r_star_rule(64) == 6
    assert r_star_rule(1_000_000) == 20
    assert r_star_rule(146) == 8  # log2 146 = 7.19
    np.testing.assert_array_equal(r_star_rule([64, 1_000_000]), [6, 20])
    assert r_star_rule(1) == 1


@pytest.mark.parametrize("bad, name", [(0, "N"), (2.5, "N"), (True, "N"), (np.nan, "N")])
def test_r_star_rule_bad(bad, name):
    with pytest.raises(ValueError, match=name):
        r_star_rule(bad)


def test_optimal_plan_bad():
    with pytest.raises(ValueError, match="strategy"):
        optimal_plan(SC, "raid")
    with pytest.raises(ValueError, match="scenario"):
        optimal_plan("600k", "rep")
