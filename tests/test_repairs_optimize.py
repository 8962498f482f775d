"""The optimiser with repairs: the walk reaches r = 2; Plan.smallest_r_within."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spare_theory import Scenario
from spare_theory.optimize import optimal_plan


@pytest.fixture(scope="module")
def fast_plan():
    sc = dataclasses.replace(Scenario.published_600k(gpus_per_group=4096), repair_minutes=10)
    return optimal_plan(sc, "spare")


def test_walk_reaches_two_with_repairs(fast_plan):
    assert 2 in fast_plan.r_values.tolist()
    assert fast_plan.hours == fast_plan.hours_by_r.min()


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
