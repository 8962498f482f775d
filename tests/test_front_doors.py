"""The four front doors: one keyword set, a Plan in place of a strategy, inputs resolved once."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

import spare_theory as st
from spare_theory import (
    Scenario,
    optimal_plan,
    paper_scenario,
    replay_training,
    simulate_training,
    time_to_train,
)

HOURLY = Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=1000.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=10,
    reconfigure_minutes=1,
)
# The paper's workload on 30 workers, failing 100 times less often (a cluster MTBF of
# 30,000 s against about 4,000 s of work): CKPT-only finishes too.
STEP = paper_scenario(30, steps=60, failure_law=stats.expon(scale=30 * 30_000.0))
# The shared keywords, in the documented order, and their defaults.
SHARED = {
    "r": None,
    "checkpoint_interval_minutes": None,
    "checkpoint_every_steps": None,
    "microbatches": 1,
}
SIMULATED = {"trials": inspect.Parameter.empty, "seed": inspect.Parameter.empty}


@pytest.mark.parametrize("door", [time_to_train, optimal_plan, simulate_training, replay_training])
def test_every_front_door_takes_the_same_keywords(door):
    params = inspect.signature(door).parameters
    names = list(params)
    start = names.index("strategy") + 1
    assert names[start : start + len(SHARED)] == list(SHARED)
    for name, default in SHARED.items():
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].default == default
    # Last, the strategy's own plan variables (min_groups, ...), checked against its declared ones.
    assert names[-1] == "plan" and params["plan"].kind is inspect.Parameter.VAR_KEYWORD
    if door in (simulate_training, replay_training):
        for name, default in SIMULATED.items():
            assert params[name].default is default
        assert params["executor"].default is None and params["progress"].default is False


def _log() -> st.FailureLog:
    import pandas as pd

    # 64 nodes (one per group of 8 GPUs; 30 workers of the step scenario use the first 30),
    # each down for an hour once, at its own time.
    start = np.arange(64) * 5.0 + 1.0
    frame = pd.DataFrame({"node": np.arange(64), "start": start, "end": start + 1.0})
    return st.FailureLog.from_frame(frame, nodes=64, observed_from=0.0, observed_until=400.0)


@pytest.mark.parametrize("kind", ["hourly", "step"])
@pytest.mark.parametrize(
    "strategy, plan",
    [("spare", {"r": 3}), ("elastic", {"min_groups": 20}), ("ckpt", {})],
)
def test_the_same_keywords_work_at_every_door_on_both_kinds(kind, strategy, plan):
    sc = HOURLY if kind == "hourly" else STEP
    interval = (
        {"checkpoint_interval_minutes": 30.0} if kind == "hourly" else {"checkpoint_every_steps": 5}
    )
    keywords = {**plan, **interval, "microbatches": 1}
    est = time_to_train(sc, strategy, **keywords)
    best = optimal_plan(sc, strategy, **keywords)
    runs = simulate_training(sc, strategy, **keywords, trials=2, seed=7)
    replayed = replay_training(_log(), sc, strategy, **keywords, trials=2, seed=7, gpus_per_node=8)
    # optimal_plan with every variable fixed is the estimate at those variables.
    assert best.hours == est.hours and best.r == est.r
    assert runs.hours.shape == replayed.hours.shape == (2,)
    assert est.r == (3 if strategy == "spare" else None)
    if strategy == "elastic":
        assert best.min_groups == 20


def test_the_issue_call_runs():
    # simulate_training(scenario, "elastic", checkpoint_interval_minutes=..., min_groups=...)
    # raised TypeError (r was positional).
    sc = dataclasses.replace(HOURLY, gpus=64 * 8)
    runs = simulate_training(
        sc, "elastic", checkpoint_interval_minutes=30, min_groups=32, trials=3, seed=7
    )
    assert runs.hours.shape == (3,)


@pytest.mark.parametrize(
    "strategy, options",
    [
        ("spare", {}),
        ("spare", {"microbatches": 4}),
        pytest.param("spare", {"planned_restarts": True}, marks=pytest.mark.slow),
        ("elastic", {}),
        ("hot_spares", {}),
        ("ckpt", {}),
        ("rep", {}),
    ],
)
def test_time_to_train_of_a_plan_is_the_plan(strategy, options):
    sc = dataclasses.replace(HOURLY, work_hours=100)
    plan = optimal_plan(sc, strategy, **options)
    again = time_to_train(sc, plan)
    assert again.hours == plan.hours and again.r == plan.r
    # The same estimate; whether the interval sat at an end of the search is the search's.
    assert dataclasses.replace(again, interval_limit=plan.estimate.interval_limit) == plan.estimate


def test_time_to_train_of_a_step_plan_is_the_plan():
    plan = optimal_plan(STEP, "spare")
    assert time_to_train(STEP, plan) == plan.estimate


def test_simulating_a_plan_plays_its_variables():
    sc = dataclasses.replace(HOURLY, work_hours=20)
    plan = optimal_plan(sc, "spare", microbatches=4)
    runs = simulate_training(sc, plan, trials=3, seed=5)
    by_hand = simulate_training(
        sc,
        "spare",
        r=plan.r,
        checkpoint_interval_minutes=plan.checkpoint_interval_minutes,
        microbatches=4,
        trials=3,
        seed=5,
    )
    np.testing.assert_array_equal(runs.hours, by_hand.hours)
    elastic = optimal_plan(sc, "elastic")
    runs = simulate_training(sc, elastic, trials=3, seed=5)
    by_hand = simulate_training(
        sc,
        "elastic",
        checkpoint_interval_minutes=elastic.checkpoint_interval_minutes,
        min_groups=elastic.min_groups,
        trials=3,
        seed=5,
    )
    np.testing.assert_array_equal(runs.hours, by_hand.hours)


@pytest.mark.slow
def test_simulating_a_plan_plays_its_planned_restart_trigger():
    sc = Scenario.published_600k(4096)
    plan = optimal_plan(sc, "spare", planned_restarts=True)
    assert plan.planned_restart_failures is not None
    short = dataclasses.replace(sc, work_hours=5)
    runs = simulate_training(short, plan, trials=1, seed=1)
    with_trigger = dataclasses.replace(
        short, planned_restart_failures=plan.planned_restart_failures
    )
    by_hand = simulate_training(
        with_trigger,
        "spare",
        r=plan.r,
        checkpoint_interval_minutes=plan.checkpoint_interval_minutes,
        trials=1,
        seed=1,
    )
    np.testing.assert_array_equal(runs.hours, by_hand.hours)


def test_a_plan_refuses_other_plan_keywords():
    plan = optimal_plan(HOURLY, "rep")
    with pytest.raises(ValueError, match="Plan"):
        time_to_train(HOURLY, plan, r=2)
    with pytest.raises(ValueError, match="Plan"):
        simulate_training(HOURLY, plan, checkpoint_interval_minutes=10, trials=1, seed=0)


@pytest.mark.parametrize("strategy", ["ckpt", "elastic"])
def test_a_strategy_without_r_reports_none(strategy):
    assert time_to_train(HOURLY, strategy).r is None
    assert optimal_plan(HOURLY, strategy).r is None
    assert time_to_train(STEP, strategy).r is None
    assert optimal_plan(STEP, strategy).r is None


def test_hot_spares_keep_their_spare_groups_as_r():
    assert time_to_train(HOURLY, "hot_spares", r=4, checkpoint_interval_minutes=30).r == 4


@pytest.mark.slow
def test_importing_the_simulations_loads_no_model():
    # The independent checks of the closed forms load none of them: no cycle law, no
    # renewal model, no step cycle table, no search, no estimate.
    model = (
        "spare_theory.training.estimate",
        "spare_theory.training.optimize",
        "spare_theory.hourly.model",
        "spare_theory.hourly.renewal",
        "spare_theory.hourly.compose",
        "spare_theory.hourly.process",
        "spare_theory.cycles.",
        "spare_theory.planning.search",
        "spare_theory.steps.estimate",
        "spare_theory.steps.cycles",
        "spare_theory.steps.spare_cycle",
        "spare_theory.steps.elastic_cycle",
        "spare_theory.steps.repairs",
    )
    code = (
        "import sys, spare_theory.training.simulate; "
        f"print(sorted(m for m in sys.modules if m.startswith({model!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_plan_resolves_its_inputs_once_and_each_r_once():
    import spare_theory.hourly.model as model
    import spare_theory.strategies.base as base
    import spare_theory.training.resolve as resolve

    counts = {"lookup": 0, "priced": 0, "check_plan": 0, "check_r": 0}
    wrapped = {
        (resolve, "lookup"): "lookup",
        (model, "group_process"): "priced",
    }
    saved = {key: getattr(*key) for key in wrapped}

    def counting(name, func):
        def call(*args, **kwargs):
            counts[name] += 1
            return func(*args, **kwargs)

        return call

    def profile(frame, event, arg):
        name = frame.f_code.co_name
        module = frame.f_globals.get("__name__", "")
        if event == "call" and name in counts and module.startswith("spare_theory.strategies"):
            counts[name] += 1

    st.clear_caches()
    try:
        for (module, name), label in wrapped.items():
            setattr(module, name, counting(label, saved[(module, name)]))
        sys.setprofile(profile)
        plan = optimal_plan(Scenario.published_600k(2048), "spare")
    finally:
        sys.setprofile(None)
        for (module, name), func in saved.items():
            setattr(module, name, func)
        st.clear_caches()
    tried = len(plan.r_values)
    assert base is not None and tried >= 5
    # One look-up of the strategy; each r tried: its variables checked once, the scenario
    # priced at most twice (the whole scenario for a strategy's own law, then the law's).
    assert counts["lookup"] == 1 and counts["check_r"] == 0
    assert counts["check_plan"] == tried
    assert counts["priced"] <= 2 * tried
