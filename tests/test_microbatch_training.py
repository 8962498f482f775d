"""SPARe time to train with micro-batch splitting: m = 1 is the published model, bit for bit."""

import pytest

from spare_theory import Scenario, time_to_train
from spare_theory.cycles.spare import Spare, SpareSplit
from spare_theory.hourly.model import evaluate_law
from spare_theory.hourly.process import group_process


def test_m1_is_the_published_spare_model_exactly():
    sc = Scenario.published_600k(4096)
    for r, tau in [(4, 30.0), (8, 60.0)]:
        a = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=tau, microbatches=1)
        b = evaluate_law(group_process(sc), SpareSplit(sc.groups, r, microbatches=1), tau, "spare")
        assert a.hours == b.hours and a.availability == b.availability
    law, split = Spare(200, 4), SpareSplit(200, 4, microbatches=1)
    assert (law.theta_grid == split.theta_grid).all() and (law.log_q == split.log_q).all()


def test_splitting_never_slows_and_refines_monotonically():
    sc = Scenario.published_600k(2048)
    hours = [
        time_to_train(sc, "spare", r=6, checkpoint_interval_minutes=30.0, microbatches=m).hours
        for m in (1, 2, 4, 16)
    ]
    assert hours == sorted(hours, reverse=True) and hours[-1] < hours[0]


def test_bad_input():
    sc = Scenario.published_600k(4096)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=60, microbatches=0)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60, microbatches=4)
