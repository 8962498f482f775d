"""The public front doors (time_to_train, simulate_training, optimal_plan) on a StepScenario."""

import math

import numpy as np
import pytest

from spare_theory import (
    Scenario,
    optimal_plan,
    paper_scenario,
    simulate_training,
    time_to_train,
)
from spare_theory.planning.redundancy import ruler_exists
from spare_theory.training.estimate import optimal_checkpoint_steps

SMALL = paper_scenario(200, steps=2000)
HOURLY = Scenario(
    gpus=1024,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=48,
)


def test_time_to_train_dispatches_to_the_step_model():
    est = time_to_train(SMALL, "spare", r=9, checkpoint_every_steps=15)
    ref = time_to_train(SMALL, "spare", r=9, checkpoint_every_steps=15)
    assert est == ref
    assert est.hours > 0 and 0 < est.uptime < 1 and est.restarts > 0


def test_time_to_train_without_k_is_the_best_k():
    est = time_to_train(SMALL, "rep", r=3)
    for k in range(1, 40):
        other = time_to_train(SMALL, "rep", r=3, checkpoint_every_steps=k)
        assert est.seconds <= other.seconds
    assert time_to_train(SMALL, "ckpt").r is None  # CKPT-only has no r


def test_simulate_training_dispatches_to_simulate_steps():
    sc = paper_scenario(30, steps=60)
    a = simulate_training(sc, "spare", r=3, checkpoint_every_steps=5, trials=3, seed=4)
    b = simulate_training(sc, "spare", r=3, checkpoint_every_steps=5, trials=3, seed=4)
    np.testing.assert_array_equal(a.total_seconds, b.total_seconds)
    np.testing.assert_array_equal(a.restarts, b.global_restarts)
    assert a.hours.shape == a.uptime.shape == (3,)


def test_optimal_plan_on_a_step_scenario():
    plan = optimal_plan(SMALL, "spare")
    assert plan.checkpoint_every_steps == plan.estimate.checkpoint_every_steps
    assert plan.checkpoint_interval_minutes is None
    assert plan.hours == plan.estimate.hours == min(plan.hours_by_r)
    hour_plan = optimal_plan(HOURLY, "ckpt")
    assert hour_plan.checkpoint_every_steps is None


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["rep", "spare"])
def test_optimiser_agrees_with_brute_force(strategy):
    # Every (r, k) on a small grid: r over all allowed values up to 12, k in 1..60.
    sc = paper_scenario(200, failure_law="weibull", steps=1000)
    plan = optimal_plan(sc, strategy)
    best = math.inf
    for r in range(1, 13):
        if strategy == "spare" and r > 1 and not ruler_exists(200, r):
            continue
        for k in range(1, 61):
            try:
                est = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
            except ValueError:
                continue
            best = min(best, est.seconds)
    assert plan.estimate.seconds <= best * (1 + 1e-12)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: time_to_train(SMALL, "spare", r=9, checkpoint_interval_minutes=30), "minutes"),
        (lambda: time_to_train(SMALL, "spare", checkpoint_every_steps=5), "r"),
        (lambda: time_to_train(SMALL, "spare", r=9, checkpoint_every_steps=0), "every_steps"),
        (lambda: time_to_train("cluster", "spare", r=9), "scenario"),
        (
            lambda: time_to_train(HOURLY, "spare", r=4, checkpoint_every_steps=3),
            "checkpoint_every_steps",
        ),
        (
            lambda: simulate_training(
                SMALL, "rep", r=3, checkpoint_interval_minutes=5.0, trials=2, seed=0
            ),
            "checkpoint_interval_minutes",
        ),
        (lambda: simulate_training(SMALL, "rep", r=3, trials=2, seed=0), "checkpoint_every_steps"),
        (
            lambda: simulate_training(
                HOURLY,
                "rep",
                r=2,
                checkpoint_interval_minutes=30.0,
                trials=2,
                seed=0,
                checkpoint_every_steps=4,
            ),
            "checkpoint_every_steps",
        ),
        (lambda: optimal_plan(SMALL, "dpr"), "strategy"),
        (lambda: optimal_plan(object(), "rep"), "scenario"),
        (lambda: optimal_checkpoint_steps(SMALL, "spare", r=None), "r"),
    ],
)
def test_bad_combinations_raise_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_trials_is_required():
    with pytest.raises(TypeError, match="trials"):
        simulate_training(SMALL, "rep", r=3, checkpoint_every_steps=5, seed=0)
