"""Time to train with repairs: today's numbers without them, limits, model against simulation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from spare_theory import Scenario, optimal_plan, time_to_train
from spare_theory import strategy as lookup
from spare_theory.hourly.process import group_process
from spare_theory.hourly.renewal import evaluate
from spare_theory.hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from spare_theory.training.simulate import simulate_training

K_SE = 3.0  # statistical tolerance in standard errors of the simulated mean


def scenario(repair_minutes=None, N=64, work_hours=40.0, **kw) -> Scenario:
    return Scenario(
        gpus=N * 2048,
        gpus_per_group=2048,
        gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=work_hours,
        repair_minutes=repair_minutes,
        **kw,
    )


@pytest.mark.parametrize("strategy, r", [("ckpt", None), ("rep", 3), ("spare", 4)])
def test_no_repairs_is_todays_model(strategy, r):
    sc = scenario()
    est = time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=45.0)
    law = lookup(strategy).cycle_law(sc.groups, r or 1)
    # The front door reports r = None for CKPT-only (no redundancy) and adds the caveats.
    below = evaluate(group_process(sc), law, 45.0, strategy=strategy)
    assert est == dataclasses.replace(below, r=r, caveats=est.caveats)
    assert est.repairs == 0 and est.planned_restarts == 0 and est.wipeouts == est.restarts


@pytest.mark.parametrize("strategy, r", [("rep", 2), ("spare", 3)])
def test_slow_repairs_tend_to_no_repairs(strategy, r):
    today = time_to_train(scenario(), strategy, r=r, checkpoint_interval_minutes=60.0)
    slow = time_to_train(
        scenario(repair_minutes=1e9), strategy, r=r, checkpoint_interval_minutes=60.0
    )
    assert slow.hours == pytest.approx(today.hours, rel=2e-3)
    assert slow.restarts == pytest.approx(today.restarts, rel=2e-3)


def test_ckpt_unchanged_by_repairs():
    a = time_to_train(scenario(), "ckpt")
    b = time_to_train(scenario(repair_minutes=5, rejoin_minutes=1), "ckpt")
    assert (a.hours, a.checkpoint_interval_minutes) == (b.hours, b.checkpoint_interval_minutes)
    assert b.repairs == 0


@pytest.mark.slow
def test_fast_repairs_remove_wipeouts():
    sc = Scenario.published_600k(2048, work_hours=720)
    fast = sc.__class__(**{**sc.__dict__, "repair_minutes": 1.0})
    plan = optimal_plan(fast, "spare")
    assert plan.estimate.restarts < 1e-3  # wipe-outs vanish
    # What is left is the overhead of the groups down at any time: about
    # 1 / E[1/S*] with N pi groups down on average, S* = 2 once one is down.
    N = fast.groups
    down = N * fast.group_failure_rate_per_hour / 60 / (1 + fast.group_failure_rate_per_hour / 60)
    theta = math.exp(-down) + (1 - math.exp(-down)) / 2
    assert plan.hours == pytest.approx(720 / theta, rel=0.02)
    assert plan.estimate.repairs > 0
    # Repairs only help.
    assert plan.hours < optimal_plan(sc, "spare").hours


def test_rejoin_stall_costs_time():
    a = time_to_train(scenario(repair_minutes=30), "rep", r=2, checkpoint_interval_minutes=60.0)
    b = time_to_train(
        scenario(repair_minutes=30, rejoin_minutes=3), "rep", r=2, checkpoint_interval_minutes=60.0
    )
    assert b.hours > a.hours


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy, r, minutes, tau",
    [("rep", 2, 60, 60.0), ("spare", 2, 10, 120.0), ("spare", 3, 360, 60.0)],
)
def test_model_matches_simulation(strategy, r, minutes, tau):
    sc = scenario(repair_minutes=minutes, rejoin_minutes=2)
    sim = simulate_training(sc, strategy, r=r, checkpoint_interval_minutes=tau, trials=30, seed=4)
    est = time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=tau)
    assert abs(est.hours - sim.mean_hours) <= K_SE * sim.standard_error_hours
    assert sim.repairs is not None and sim.repairs.mean() > 0


def test_simulation_with_repairs_is_deterministic():
    sc = scenario(repair_minutes=30, rejoin_minutes=1, work_hours=10)
    a = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60.0, trials=4, seed=9)
    b = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60.0, trials=4, seed=9)
    c = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60.0, trials=2, seed=9)
    assert np.array_equal(a.hours, b.hours) and np.array_equal(a.repairs, b.repairs)
    assert np.array_equal(a.hours[:2], c.hours)


def test_pool_refuses_repairs():
    with pytest.raises(ValueError, match="overhead_source"):
        simulate_training(
            scenario(repair_minutes=30),
            "spare",
            r=3,
            checkpoint_interval_minutes=60.0,
            trials=1,
            seed=0,
            overhead_source="pool",
        )
