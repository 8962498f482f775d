"""Micro-batch splitting through the front doors: time_to_train, optimal_plan, simulate_training."""

import dataclasses
import subprocess
import sys

import pytest

from spare_theory import Scenario, optimal_plan, paper_scenario, simulate_training, time_to_train
from spare_theory.cycles.spare import SpareSplit
from spare_theory.hourly.model import evaluate_law
from spare_theory.hourly.process import group_process

BASE = dict(
    gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20, checkpoint_minutes=5
)
K = 3  # tolerance in standard errors of the simulated mean
REL = 0.02  # or 2 %: the load model's small-N bias plus the renewal limit's boundary terms


def _with_cycles(r, m, cycles=30, **over):
    """The scenario whose expected number of restarts (SPARe, r, m) is about ``cycles``."""
    probe = time_to_train(
        Scenario(**{**BASE, **over}, work_hours=1.0), "spare", r=r, microbatches=m
    )
    return Scenario(**{**BASE, **over}, work_hours=cycles / probe.restarts)


@pytest.mark.slow
def test_m1_is_todays_model_exactly():
    for gpus_per_group in (2048, 4096):
        sc = Scenario.published_600k(gpus_per_group)
        for r in (5, 8):
            for tau in (20.0, 60.0, None):
                a = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=tau)
                b = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=tau, microbatches=1)
                assert a == b
        for strategy in ("ckpt", "rep", "spare"):
            a, b = optimal_plan(sc, strategy), optimal_plan(sc, strategy, microbatches=1)
            assert a.estimate == b.estimate and (a.hours_by_r == b.hours_by_r).all()
    sc = Scenario(**BASE, work_hours=20)
    a = simulate_training(sc, "spare", r=5, checkpoint_interval_minutes=60.0, trials=4, seed=3)
    b = simulate_training(
        sc, "spare", r=5, checkpoint_interval_minutes=60.0, trials=4, seed=3, microbatches=1
    )
    assert (a.hours == b.hours).all() and (a.restarts == b.restarts).all()


@pytest.mark.parametrize("m", [2, 4, 16])
def test_front_door_is_the_split_law(m):
    sc = Scenario.published_600k(4096)
    a = time_to_train(sc, "spare", r=8, checkpoint_interval_minutes=45.0, microbatches=m)
    law = SpareSplit(sc.groups, 8, microbatches=m)
    assert a.hours == evaluate_law(group_process(sc), law, 45.0, "spare").hours
    # The best interval is a minimum: no better than 1e-5 a little either side of it.
    best = time_to_train(sc, "spare", r=8, microbatches=m)
    for factor in (0.9, 1.1):
        tau = factor * best.checkpoint_interval_minutes
        assert best.hours <= evaluate_law(group_process(sc), law, tau, "spare").hours * (1 + 1e-5)
    assert best.hours <= a.hours


@pytest.mark.slow
def test_plan_with_splitting_beats_published_spare_at_every_r():
    sc = Scenario.published_600k(2048)
    plain, split = optimal_plan(sc, "spare"), optimal_plan(sc, "spare", microbatches=16)
    assert split.hours < plain.hours
    assert split.hours == split.hours_by_r.min()
    for r, hours in zip(split.r_values, split.hours_by_r, strict=True):
        if r > 1:
            assert hours == time_to_train(sc, "spare", r=int(r), microbatches=16).hours
            assert hours <= time_to_train(sc, "spare", r=int(r)).hours


@pytest.mark.slow
@pytest.mark.parametrize(
    "r, m, over, source",
    [
        (5, 2, {}, "controller"),
        (5, 8, {}, "pool"),
        (8, 4, dict(restart_minutes=60, checkpoint_minutes=2), "pool"),
    ],
)
def test_model_matches_simulation_with_exact_loads(r, m, over, source):
    sc = _with_cycles(r, m, **over)
    est = time_to_train(sc, "spare", r=r, microbatches=m)
    trials = 30 if source == "controller" else 60
    sim = simulate_training(
        sc,
        "spare",
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=trials,
        seed=11,
        microbatches=m,
        overhead_source=source,
        pool_size=512,
    )
    assert abs(est.hours - sim.mean_hours) <= max(
        K * sim.standard_error_hours, REL * sim.mean_hours
    )


@pytest.mark.slow
def test_splitting_speeds_up_the_simulation_too():
    sc = _with_cycles(5, 1)
    tau = 60.0
    plain = simulate_training(
        sc, "spare", r=5, checkpoint_interval_minutes=tau, trials=40, seed=5, overhead_source="pool"
    )
    split = simulate_training(
        sc,
        "spare",
        r=5,
        checkpoint_interval_minutes=tau,
        trials=40,
        seed=5,
        overhead_source="pool",
        microbatches=8,
    )
    se = (plain.standard_error_hours**2 + split.standard_error_hours**2) ** 0.5
    assert split.mean_hours < plain.mean_hours - K * se


@pytest.mark.parametrize("strategy, r", [("ckpt", None), ("rep", 3)])
def test_only_spare_splits(strategy, r):
    sc = Scenario(**BASE, work_hours=5)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=30.0, microbatches=2)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(sc, strategy, r=r, microbatches=4)
    with pytest.raises(ValueError, match="microbatches"):
        optimal_plan(sc, strategy, microbatches=4)
    with pytest.raises(ValueError, match="microbatches"):
        simulate_training(
            sc, strategy, r=r, checkpoint_interval_minutes=30.0, trials=1, seed=0, microbatches=4
        )


def test_bad_microbatches():
    sc = Scenario(**BASE, work_hours=5)
    # Splitting is not modelled under failure domains (without repairs).
    racks = Scenario(**BASE, work_hours=5, domain_size=4, domain_mtbf_hours=5000.0)
    # A StepScenario states its own micro-batches: a differing keyword conflicts.
    step = dataclasses.replace(paper_scenario(50, steps=100), microbatches=4)
    calls = [
        lambda: time_to_train(sc, "spare", r=5, checkpoint_interval_minutes=30.0, microbatches=0),
        lambda: optimal_plan(sc, "spare", microbatches=0),
        lambda: simulate_training(
            sc, "spare", r=5, checkpoint_interval_minutes=30.0, trials=1, seed=0, microbatches=0
        ),
        lambda: time_to_train(
            racks, "spare", r=5, checkpoint_interval_minutes=30.0, microbatches=2
        ),
        lambda: optimal_plan(racks, "spare", microbatches=2, method="model"),
        lambda: time_to_train(step, "spare", r=5, checkpoint_every_steps=5, microbatches=2),
        lambda: optimal_plan(step, "spare", microbatches=2),
        lambda: simulate_training(
            step, "spare", r=5, checkpoint_every_steps=5, trials=1, seed=0, microbatches=2
        ),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="microbatches"):
            call()


@pytest.mark.slow
def test_simulation_does_not_import_the_split_model():
    code = (
        "import sys, spare_theory.hourly.simulation; "
        "print('spare_theory.hourly.split' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
