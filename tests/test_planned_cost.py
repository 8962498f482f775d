"""Planned restarts triggered by the step cost (``Scenario.planned_restart_cost``)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from spare_theory import Scenario, strategy, time_to_train
from spare_theory.cycles.planned import PlannedCycle, cost_trigger_failures
from spare_theory.hourly.model import planned_trigger, priced_law
from spare_theory.stacking.load import expected_load
from spare_theory.stacking.overhead import expected_stacks
from spare_theory.training.simulate import simulate_training


def _law(scenario, strategy, r):
    """The plan's cycle law, as the model prices it."""
    return priced_law(scenario, strategy, r)[1]


K_SE = 3.0  # statistical tolerance in standard errors of the simulated mean
REL = 0.02  # or within 2 % (the criterion: 3 SE or 2 %)


def scenario(N=64, c=None, repair_minutes=None, work_hours=50.0, gpus_per_group=1024):
    return Scenario(
        gpus=N * gpus_per_group,
        gpus_per_group=gpus_per_group,
        restart_minutes=20,
        checkpoint_minutes=2,
        work_hours=work_hours,
        repair_minutes=repair_minutes,
        planned_restart_cost=c,
    )


@pytest.mark.parametrize("bad", [1, 0.5, -2, math.nan, math.inf, "x"])
def test_cost_checked(bad):
    with pytest.raises(ValueError, match="planned_restart_cost"):
        scenario(c=bad)


def test_triggers_exclusive():
    with pytest.raises(ValueError, match=r"planned_restart_failures.*planned_restart_cost"):
        dataclasses.replace(scenario(c=3.0), planned_restart_failures=4)


@pytest.mark.parametrize("m", [1, 2, 4, 8])
@pytest.mark.parametrize("N", [7, 64, 146, 292])
def test_trigger_is_the_least_count_reaching_the_cost(N, m):
    # k(c) = min{d : expected cost with d groups down >= c}, by direct search
    # over the toolkit's closed form (expected_load; expected_stacks at m = 1).
    d = np.arange(N)
    costs = np.asarray(expected_load(N, N, d, microbatches=m))
    if m == 1:
        np.testing.assert_array_equal(costs, expected_stacks(N, N, d))
    levels = np.unique(costs[costs > 1])
    thresholds = np.concatenate([levels, (levels[:-1] + levels[1:]) / 2, levels[:1] - 0.5 / m])
    for c in thresholds[thresholds > 1]:
        assert cost_trigger_failures(N, c, microbatches=m) == np.flatnonzero(costs >= c)[0]
    # m c just above an integer in floating point counts as that integer.
    fifths = np.asarray(expected_load(N, N, d, microbatches=5))
    assert cost_trigger_failures(N, 2.2, microbatches=5) == np.flatnonzero(fifths >= 11 / 5)[0]


def test_cost_trigger_reuses_the_count_law():
    sc = Scenario.published_600k(2048)
    by_cost = dataclasses.replace(sc, planned_restart_cost=3.0)
    k = cost_trigger_failures(sc.groups, 3.0)
    assert k == sc.groups // 2 + 1
    by_count = dataclasses.replace(sc, planned_restart_failures=k)
    law = _law(by_cost, strategy("spare"), 14)
    assert isinstance(law, PlannedCycle) and law is _law(by_count, strategy("spare"), 14)
    a, b = (
        time_to_train(by_cost, "spare", r=14, checkpoint_interval_minutes=60.0),
        time_to_train(by_count, "spare", r=14, checkpoint_interval_minutes=60.0),
    )
    assert a == b and a.planned_restarts > 0
    # Rep's step does not grow with failures: the cost trigger never fires.
    assert planned_trigger(by_cost, strategy("rep").cycle_law(sc.groups, 3)) is None
    assert _law(by_cost, strategy("rep"), 3) is strategy("rep").cycle_law(sc.groups, 3)


def test_load_trigger_with_microbatches():
    sc = dataclasses.replace(Scenario.published_600k(2048), planned_restart_cost=1.5)
    law = _law(dataclasses.replace(sc, microbatches=4), strategy("spare"), 14)
    assert isinstance(law, PlannedCycle) and law.base.microbatches == 4
    assert law.k == cost_trigger_failures(sc.groups, 1.5, microbatches=4)
    # Priced by the load: faster in every state than the same trigger priced by S*.
    stacks = PlannedCycle(strategy("spare").cycle_law(sc.groups, 14), law.k)
    u = np.array([0.01, 0.1, 0.3])
    assert np.all(law.theta(u) >= stacks.theta(u))
    np.testing.assert_allclose(law.logq(u), stacks.logq(u))
    # With repairs too, micro-batches are priced now (hourly.compose; checked against the
    # simulation in tests/test_fields_compose.py), where this test once expected a refusal.


def test_simulation_triggers_on_the_actual_cost():
    # At r = 4 the exact S* reaches 3 before floor(N/2) + 1 groups are down in
    # crowded states near a wipe-out: the cost trigger fires more often than
    # the count trigger k(3) it is modelled by.
    sc = scenario(64, 3.0)
    count = dataclasses.replace(sc, planned_restart_cost=None, planned_restart_failures=33)
    a = simulate_training(sc, "spare", r=4, checkpoint_interval_minutes=30.0, trials=12, seed=3)
    b = simulate_training(count, "spare", r=4, checkpoint_interval_minutes=30.0, trials=12, seed=3)
    assert a.planned_restarts is not None and b.planned_restarts is not None
    assert a.planned_restarts.sum() > b.planned_restarts.sum()
    rep = simulate_training(sc, "rep", r=2, checkpoint_interval_minutes=30.0, trials=4, seed=3)
    assert rep.planned_restarts is not None and not rep.planned_restarts.any()


# (N, r, c, m, repair minutes): 12 runs of 50 h each, groups of 1024 H100s,
# R = 20 min, delta = 2 min, tau = 30 min, seed 3.
CELLS = [
    (64, 3, 2.0, 1, None),
    (64, 3, 2.0, 1, 60.0),
    (64, 4, 3.0, 1, None),
    (64, 6, 3.0, 1, None),
    (64, 4, 3.0, 1, 60.0),
    (64, 4, 1.5, 4, None),
    (128, 4, 2.0, 1, None),
    (128, 6, 3.0, 1, None),
    (128, 3, 3.0, 1, 60.0),
    (128, 4, 1.5, 4, None),
    (256, 6, 3.0, 1, None),
    (256, 6, 1.5, 4, None),
]


@pytest.mark.slow
@pytest.mark.parametrize("N, r, c, m, repair", CELLS)
def test_model_against_simulation(N, r, c, m, repair):
    sc = scenario(N, c, repair)
    est = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=30.0, microbatches=m)
    sim = simulate_training(
        sc, "spare", r=r, checkpoint_interval_minutes=30.0, trials=12, seed=3, microbatches=m
    )
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= max(K_SE * sim.standard_error_hours, REL * sim.mean_hours)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["spare", "rep"])
def test_plan_reports_the_cost_threshold(strategy):
    from spare_theory.training.optimize import optimal_plan

    sc = Scenario.published_600k(4096)
    plan = optimal_plan(sc, strategy, planned_restarts=True)
    k, c = plan.planned_restart_failures, plan.planned_restart_cost
    assert k is not None
    if strategy == "rep":
        assert c is None
        return
    N = sc.groups
    steps_up = math.ceil(N / (N - k)) > math.ceil(N / (N - k + 1))
    assert (c is not None) == steps_up
    if c is not None:
        # The threshold realises the plan: same trigger, same modelled hours.
        assert cost_trigger_failures(N, c) == k
        by_cost = dataclasses.replace(sc, planned_restart_cost=c)
        est = time_to_train(
            by_cost, "spare", r=plan.r, checkpoint_interval_minutes=plan.checkpoint_interval_minutes
        )
        assert est.hours == pytest.approx(plan.hours, rel=1e-12)


def test_cli_optimize_shows_the_trigger(capsys):
    import json

    from spare_theory.cli import main

    argv = ["optimize", "--gpus-per-group", "4096", "--planned-restarts"]
    assert main([*argv, "--json"]) == 0
    spare = json.loads(capsys.readouterr().out)["plans"]["spare"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    k, c = spare["planned_restart_failures"], spare["planned_restart_cost"]
    assert f"planned restart (no rollback) once {k} groups are down (step cost {c:g})" in text
