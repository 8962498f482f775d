"""The optimiser with repairs: the walk reaches r = 2; Plan.smallest_r_within."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spare_theory import Scenario
from spare_theory.training.optimize import optimal_plan


@pytest.fixture(scope="module")
def fast_plan():
    sc = dataclasses.replace(Scenario.published_600k(gpus_per_group=4096), repair_minutes=10)
    return optimal_plan(sc, "spare")


def test_walk_reaches_two_with_repairs(fast_plan):
    assert 2 in fast_plan.r_values.tolist()
    # The plan is the first r of the plateau: within a relative 1e-12 of the least hours.
    assert fast_plan.hours == pytest.approx(fast_plan.hours_by_r.min(), rel=1e-12, abs=0)


def test_smallest_r_within_is_the_definition(fast_plan):
    for tol in (0.0, 0.002, 0.01, 0.1):
        r = fast_plan.smallest_r_within(tol)
        hours = dict(zip(fast_plan.r_values.tolist(), fast_plan.hours_by_r))
        assert hours[r] <= (1 + tol) * fast_plan.hours
        assert all(h > (1 + tol) * fast_plan.hours for k, h in hours.items() if k < r)
    assert fast_plan.smallest_r_within(0.0) <= fast_plan.r
    # Fast repairs make the curve flat: a much smaller r is within 1 %.
    assert fast_plan.smallest_r_within(0.01) < fast_plan.r


def test_smallest_r_within_rejects_bad_tolerance(fast_plan):
    with pytest.raises(ValueError, match="tolerance"):
        fast_plan.smallest_r_within(-0.1)
    with pytest.raises(ValueError, match="tolerance"):
        fast_plan.smallest_r_within(float("nan"))


def test_no_repairs_walk_unchanged():
    plan = optimal_plan(Scenario.published_600k(4096), "spare")
    assert plan.r_values.tolist() == [1, 5, 6, 7, 8, 9, 10, 11]
    assert np.isfinite(plan.hours)


def test_best_trigger_is_a_minimum_in_k():
    from spare_theory import time_to_train
    from spare_theory.training.optimize import best_trigger
    from spare_theory.training.resolve import resolve

    sc = Scenario.published_600k(4096)
    k, est = best_trigger(resolve(sc, "spare", r=9))
    assert k is not None and est.planned_restarts > 0
    plain = time_to_train(sc, "spare", r=9)
    assert est.hours < plain.hours
    for other in (k - 2, k - 1, k + 1, k + 2, sc.groups):
        alt = time_to_train(dataclasses.replace(sc, planned_restart_failures=other), "spare", r=9)
        assert est.hours <= alt.hours


def test_plan_reports_the_trigger():
    sc = Scenario.published_600k(4096)
    plain = optimal_plan(sc, "rep")
    planned = optimal_plan(sc, "rep", planned_restarts=True)
    assert plain.planned_restart_failures is None
    assert planned.hours <= plain.hours
    if planned.planned_restart_failures is not None:
        k = planned.planned_restart_failures
        again = optimal_plan(dataclasses.replace(sc, planned_restart_failures=k), "rep")
        assert again.hours_by_r[again.r_values == planned.r][0] == pytest.approx(planned.hours)
