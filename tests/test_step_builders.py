"""The strategy-agnostic step-level machinery: cycle builders, the estimate and its
vocabulary (availability, breakdown_hours, feasible, reason), the generic trial loop.

The builders must give exactly what the name-based front doors give (they are
what the front doors call); the vocabulary must follow the hour-level
TrainingEstimate's definitions.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from spare_theory.hourly.renewal import TrainingEstimate
from spare_theory.steps.cycles import rep_step_cycle
from spare_theory.steps.estimate import (
    StepEstimate,
    estimate_steps,
    estimate_with_repairs,
    step_estimate,
)
from spare_theory.steps.rep_run import run_rep
from spare_theory.steps.repairs import rep_repair_step_cycle, spare_repair_step_cycle
from spare_theory.steps.scenario import StepScenario, paper_scenario
from spare_theory.steps.spare_cycle import spare_step_cycle
from spare_theory.steps.spare_run import run_spare
from spare_theory.steps.trials import simulate_step_trials
from spare_theory.training.estimate import time_to_train
from spare_theory.training.simulate import simulate_training

SC = paper_scenario(200, steps=2000)
REPAIRED = dataclasses.replace(SC, repair_seconds=600.0)
BUILDERS = {
    "ckpt": (rep_step_cycle, rep_repair_step_cycle, 1, 3),
    "rep": (rep_step_cycle, rep_repair_step_cycle, 3, 6),
    "spare": (spare_step_cycle, spare_repair_step_cycle, 9, 15),
}


@pytest.mark.parametrize("strategy", sorted(BUILDERS))
@pytest.mark.parametrize("sc", [SC, REPAIRED], ids=["plain", "repairs"])
def test_builders_give_the_front_doors_estimate(strategy, sc):
    cycle, repair_cycle, r, k = BUILDERS[strategy]
    est = step_estimate(sc, cycle, repair_cycle, strategy=strategy, r=r, checkpoint_every_steps=k)
    front = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
    # The front door reports r = None for CKPT-only (no redundancy) and adds the caveats,
    # the same estimate else.
    assert front.r == (None if strategy == "ckpt" else r)
    assert est == dataclasses.replace(front, r=r, caveats=est.caveats)
    if not sc.repairs:
        direct = estimate_steps(sc, cycle(sc, r), strategy=strategy, r=r, checkpoint_every_steps=k)
        assert direct == est


def test_repairs_without_stall_never_lengthen_and_with_stall_take_the_repaired_table():
    plain_cycle = spare_step_cycle(REPAIRED.without_repairs(), 9)
    repaired_cycle = spare_repair_step_cycle(REPAIRED, 9)
    plan = {"strategy": "spare", "r": 9, "checkpoint_every_steps": 15}
    est = estimate_with_repairs(REPAIRED, repaired_cycle, plain_cycle, **plan)
    plain = estimate_steps(REPAIRED.without_repairs(), plain_cycle, **plan)
    repaired = estimate_steps(REPAIRED, repaired_cycle, **plan)
    assert est.seconds == min(plain.seconds, repaired.seconds)
    stalled = dataclasses.replace(REPAIRED, rejoin_seconds=30.0)
    stalled_cycle = spare_repair_step_cycle(stalled, 9)
    assert estimate_with_repairs(stalled, stalled_cycle, plain_cycle, **plan) == estimate_steps(
        stalled, stalled_cycle, **plan
    )


def test_cycle_tables_are_cached_by_value():
    # Equal scenarios built twice (distinct law objects) share one table.
    assert spare_step_cycle(paper_scenario(200), 9) is spare_step_cycle(paper_scenario(200), 9)
    assert rep_step_cycle(paper_scenario(200), 3) is not rep_step_cycle(paper_scenario(201), 3)
    # SPARe at r = 1 is plain checkpointing whose every worker waits for the write (cached
    # too); CKPT-only with repairs is its plain table.
    assert spare_step_cycle(SC, 1) is spare_step_cycle(SC, 1)
    assert spare_step_cycle(SC, 1) is rep_step_cycle(SC, 1, overlapped_write=False)
    assert spare_step_cycle(SC, 1).ckpt == SC.checkpoint_seconds > rep_step_cycle(SC, 1).ckpt
    assert rep_repair_step_cycle(REPAIRED, 1) is rep_step_cycle(SC, 1)


def test_without_repairs():
    stalled = dataclasses.replace(REPAIRED, rejoin_seconds=5.0, repair_law="fixed")
    assert stalled.without_repairs() == SC and not stalled.without_repairs().repairs


# --- the estimate's vocabulary ---------------------------------------------


@pytest.mark.parametrize("strategy", sorted(BUILDERS))
@pytest.mark.parametrize("sc", [SC, REPAIRED], ids=["plain", "repairs"])
def test_availability_and_breakdown(strategy, sc):
    _, _, r, k = BUILDERS[strategy]
    est = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
    assert est.availability == pytest.approx(1.0 / est.total_over_T0, rel=1e-12)
    assert est.availability == est.useful_seconds / est.seconds
    parts = est.breakdown_hours
    assert set(parts) == {"useful", "redundancy", "checkpoint", "restart", "handling", "rework"}
    assert sum(parts.values()) == pytest.approx(est.hours, rel=1e-9)
    assert parts["restart"] == est.restart_seconds / 3600.0


def test_feasible_and_reason_follow_the_hour_level_definitions():
    assert StepEstimate.MIN_FEASIBLE_AVAILABILITY == TrainingEstimate.MIN_FEASIBLE_AVAILABILITY
    good = time_to_train(paper_scenario(200), "spare", r=9, checkpoint_every_steps=15)
    assert good.feasible and good.reason == ""
    # CKPT-only at the paper's N = 200: the restarts (about 2 h each, one per
    # few steps) leave under 0.1 % of the wall time useful.
    bad = time_to_train(paper_scenario(200), "ckpt", r=1, checkpoint_every_steps=3)
    assert bad.availability < 1e-3 and math.isfinite(bad.hours)
    assert not bad.feasible
    assert bad.reason.startswith(f"{bad.hours:.3g} h expected") and "< 0.001" in bad.reason


def test_estimate_bad_input_names_the_argument():
    cycle = rep_step_cycle(SC, 3)
    plan = {"strategy": "rep", "r": 3, "checkpoint_every_steps": 6}
    with pytest.raises(ValueError, match="scenario"):
        estimate_steps("sc", cycle, **plan)
    with pytest.raises(ValueError, match="cycle"):
        estimate_steps(SC, "table", **plan)
    with pytest.raises(ValueError, match="checkpoint_every_steps"):
        estimate_steps(SC, cycle, strategy="rep", r=3, checkpoint_every_steps=0)
    with pytest.raises(ValueError, match="scenario"):
        estimate_with_repairs(SC, cycle, cycle, **plan)


# --- the generic trial loop ------------------------------------------------

FAST = StepScenario(
    groups=13,
    steps=150,
    stack_seconds=1.0,
    allreduce_seconds=0.0,
    checkpoint_seconds=0.1,
    restart_seconds=20.0,
    failure_law=stats.expon(scale=150.0),
)


@pytest.mark.parametrize(
    "strategy, trial, r",
    [("spare", run_spare, 3), ("rep", run_rep, 3)],
)
def test_trial_loop_is_the_front_doors_simulation(strategy, trial, r):
    for sc in (FAST, dataclasses.replace(FAST, repair_seconds=30.0)):
        sim = simulate_step_trials(
            sc, trial, strategy=strategy, r=r, checkpoint_every_steps=5, trials=3, seed=9
        )
        ref = simulate_training(sc, strategy, r=r, checkpoint_every_steps=5, trials=3, seed=9)
        for name in sim.quantities:
            np.testing.assert_array_equal(sim.values(name), ref.values(name))


def test_to_frame_has_a_row_per_trial_and_every_quantity():
    sim = simulate_step_trials(
        FAST, run_spare, strategy="spare", r=3, checkpoint_every_steps=5, trials=4, seed=1
    )
    frame = sim.to_frame()
    assert len(frame) == 4 and list(frame["trial"]) == [0, 1, 2, 3]
    assert set(frame.columns) == {"trial", *sim.quantities}
    assert {"total_seconds", "recomputed_stacks", "uptime", "total_over_T0"} <= set(frame)
    np.testing.assert_array_equal(frame["uptime"], sim.uptime)
    assert frame["failures"].sum() == sim.failures.sum()
    assert sim.mean("hours") == pytest.approx(frame["hours"].mean())


def test_trial_loop_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="scenario"):
        simulate_step_trials(
            "sc", run_rep, strategy="rep", r=3, checkpoint_every_steps=5, trials=1, seed=0
        )
    with pytest.raises(ValueError, match="trial"):
        simulate_step_trials(
            FAST, "rule", strategy="rep", r=3, checkpoint_every_steps=5, trials=1, seed=0
        )
    with pytest.raises(ValueError, match="trials"):
        simulate_step_trials(
            FAST, run_rep, strategy="rep", r=3, checkpoint_every_steps=5, trials=0, seed=0
        )
