"""Planned restarts (no rollback once k groups are down): model, simulation, limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spare_theory import Scenario, time_to_train
from spare_theory import strategy as lookup
from spare_theory.cycles.planned import PlannedCycle, planned_cycle
from spare_theory.hourly.model import priced_law
from spare_theory.hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from spare_theory.training.simulate import simulate_training


def _law(scenario, strategy, r):
    """The plan's cycle law, as the model prices it."""
    return priced_law(scenario, strategy, r)[1]


K_SE = 3.0  # statistical tolerance in standard errors of the simulated mean
REL = 0.02  # or within 2 % (the criterion: 3 SE or 2 %)


def scenario(repair_minutes=None, k=None, N=64, work_hours=400.0) -> Scenario:
    return Scenario(
        gpus=N * 2048,
        gpus_per_group=2048,
        gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=work_hours,
        repair_minutes=repair_minutes,
        planned_restart_failures=k,
    )


@pytest.mark.parametrize("bad", [0, -1, 65, 2.5])
def test_trigger_checked(bad):
    with pytest.raises(ValueError, match="planned_restart_failures"):
        scenario(k=bad)


def test_priced_law_dispatch():
    assert isinstance(_law(scenario(k=5), lookup("spare"), 4), PlannedCycle)
    assert isinstance(_law(scenario(60, k=5), lookup("rep"), 2), PlannedCycle)
    # CKPT-only: every failure is a wipe-out, nothing to plan.
    assert _law(scenario(k=5), lookup("ckpt"), 1) is lookup("ckpt").cycle_law(64, 1)


@pytest.mark.parametrize("strategy, r", [("rep", 2), ("spare", 4)])
def test_unreachable_trigger_is_todays_law(strategy, r):
    # k = N: the N-th failure always comes after a wipe-out.
    today = time_to_train(scenario(), strategy, r=r, checkpoint_interval_minutes=40.0)
    never = time_to_train(scenario(k=64), strategy, r=r, checkpoint_interval_minutes=40.0)
    assert never.hours == pytest.approx(today.hours, rel=1e-3)
    assert never.planned_restarts < 1e-6 * never.restarts


@pytest.mark.parametrize("strategy, r, k", [("rep", 2, 3), ("spare", 4, 6)])
def test_no_repairs_is_the_truncated_law(strategy, r, k):
    # Q(u) = P(fewer than k failures and none of them wiped out): with r = 2 and
    # k = 3 for Rep, survival of 2 failures in distinct sets is (N - 2) / (N - 1).
    base = lookup(strategy).cycle_law(64, r)
    law = planned_cycle(base, k)
    u = np.array([0.005, 0.02, 0.05])
    assert np.all(law.logq(u) <= base.logq(u) + 1e-9)
    if strategy == "rep":
        p = -np.expm1(-u)
        q = (
            (1 - p) ** 64
            + 64 * p * (1 - p) ** 63
            + math.comb(64, 2) * p**2 * (1 - p) ** 62 * (62 / 63)
        )
        np.testing.assert_allclose(np.exp(law.logq(u)), q, rtol=1e-3)
    assert 0 < law.planned_share <= 1


def test_planned_restarts_reported():
    est = time_to_train(scenario(k=8), "spare", r=4, checkpoint_interval_minutes=40.0)
    assert 0 < est.planned_restarts < est.restarts
    assert est.wipeouts == pytest.approx(est.restarts - est.planned_restarts)
    sim = simulate_training(
        scenario(k=8, work_hours=20.0),
        "spare",
        r=4,
        checkpoint_interval_minutes=40.0,
        trials=4,
        seed=0,
    )
    assert sim.planned_restarts is not None
    assert np.all(sim.planned_restarts <= sim.restarts)
    plain = simulate_training(
        scenario(work_hours=20.0), "spare", r=4, checkpoint_interval_minutes=40.0, trials=4, seed=0
    )
    assert plain.planned_restarts is not None and not plain.planned_restarts.any()


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy, r, repair, k, tau, work, trials",
    [
        ("rep", 2, None, 3, 40.0, 400.0, 30),
        ("spare", 4, None, 8, 40.0, 400.0, 30),
        ("rep", 2, 60, 4, 60.0, 400.0, 30),
        ("spare", 3, 60, 3, 60.0, 60.0, 16),
    ],
)
def test_model_against_simulation(strategy, r, repair, k, tau, work, trials):
    sc = scenario(repair, k, work_hours=work)
    est = time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=tau)
    sim = simulate_training(
        sc, strategy, r=r, checkpoint_interval_minutes=tau, trials=trials, seed=11
    )
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= max(K_SE * sim.standard_error_hours, REL * sim.mean_hours)
    planned = np.asarray(sim.planned_restarts, dtype=float)
    se = planned.std(ddof=1) / math.sqrt(trials)
    assert abs(est.planned_restarts - planned.mean()) <= max(K_SE * se, REL * planned.mean())
