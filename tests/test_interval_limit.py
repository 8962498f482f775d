"""``TrainingEstimate.interval_limit``: the interval search says when its optimum is a limit.

With fast repairs SPARe almost never wipes out, the hours fall as the
checkpoint interval grows, and the search ends at its upper limit
(``600 x work_hours`` minutes): that interval is the limit, not advice.
"""

import dataclasses

import pytest

from spare_theory import Scenario, optimal_plan, time_to_train


def _fast_repairs() -> Scenario:
    return dataclasses.replace(Scenario.published_600k(), repair_minutes=60)


def test_upper_limit_flagged_where_hours_still_fall():
    sc = _fast_repairs()
    plan = optimal_plan(sc, "spare")
    est = plan.estimate
    assert est.interval_limit == "upper"
    assert est.checkpoint_interval_minutes == pytest.approx(600 * sc.work_hours)
    # Longer still is no worse (a shorter one is worse): the minimum is beyond the limit.
    tau = est.checkpoint_interval_minutes
    longer = time_to_train(sc, "spare", r=plan.r, checkpoint_interval_minutes=4 * tau)
    shorter = time_to_train(sc, "spare", r=plan.r, checkpoint_interval_minutes=tau / 4)
    assert longer.hours <= est.hours * (1 + 1e-12) < shorter.hours
    assert longer.interval_limit is None  # a given interval is never flagged


@pytest.mark.parametrize("strategy", ["ckpt", "rep", "spare"])
def test_interior_optimum_not_flagged(strategy):
    sc = Scenario(
        gpus=4096,
        gpus_per_group=16,
        gpu_mtbf_hours=5000.0,
        restart_minutes=30,
        checkpoint_minutes=3,
        work_hours=100,
    )
    plan = optimal_plan(sc, strategy)
    tau = plan.checkpoint_interval_minutes
    assert plan.estimate.interval_limit is None
    for factor in (0.9, 1.1):
        other = time_to_train(sc, strategy, r=plan.r, checkpoint_interval_minutes=factor * tau)
        assert other.hours >= plan.hours


def test_free_checkpoints_sit_at_the_lower_limit():
    sc = dataclasses.replace(Scenario.published_600k(), checkpoint_minutes=0)
    est = optimal_plan(sc, "rep").estimate
    assert est.interval_limit == "lower"
    assert est.checkpoint_interval_minutes == pytest.approx(1 / 60)
