"""SPARe time to train with micro-batch splitting: m = 1 is the published model, bit for bit."""

import pytest

from spare_theory import Scenario, optimal_plan, time_to_train
from spare_theory.cycles.spare import Spare, SpareSplit
from spare_theory.training.aliases import split_optimal_plan, split_time_to_train


def test_m1_is_the_published_spare_model_exactly():
    sc = Scenario.published_600k(4096)
    for r, tau in [(4, 30.0), (8, 60.0)]:
        a = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=tau)
        b = split_time_to_train(sc, r, tau, microbatches=1)
        assert a.hours == b.hours and a.availability == b.availability
    law, split = Spare(200, 4), SpareSplit(200, 4, microbatches=1)
    assert (law.theta_grid == split.theta_grid).all() and (law.log_q == split.log_q).all()


def test_splitting_never_slows_and_refines_monotonically():
    sc = Scenario.published_600k(2048)
    hours = [split_time_to_train(sc, 6, 30.0, microbatches=m).hours for m in (1, 2, 4, 16)]
    assert hours == sorted(hours, reverse=True) and hours[-1] < hours[0]
    r, est = split_optimal_plan(sc, microbatches=1, r_max=10)
    plan = optimal_plan(sc, "spare")
    if plan.r <= 10:
        # Two interval searches (Brent here) on a flat minimum: equal to 1e-5, never above.
        assert r == plan.r and est.hours == pytest.approx(plan.hours, rel=1e-5)


def test_bad_input():
    sc = Scenario.published_600k(4096)
    with pytest.raises(ValueError, match="microbatches"):
        split_time_to_train(sc, 8, 60, microbatches=0)
    with pytest.raises(ValueError, match="r"):
        split_time_to_train(sc, 1, 60, microbatches=4)
