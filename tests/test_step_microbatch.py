"""Micro-batch splitting in the step-level scenario (StepScenario.microbatches)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from spare_theory import (
    ReorderingController,
    cyclic_placement,
    optimal_plan,
    paper_scenario,
    simulate_training,
    time_to_train,
)
from spare_theory._validation import merge_microbatches
from spare_theory.steps.scenario import StepScenario


def split(sc: StepScenario, m: int) -> StepScenario:
    return dataclasses.replace(sc, microbatches=m)


@pytest.mark.slow
def test_m1_is_the_published_scheme() -> None:
    """m = 1 (explicit or through the front doors) gives the very same numbers."""
    sc = paper_scenario(50, steps=300)
    one = split(sc, 1)
    assert one == sc and one.microbatches == 1
    for strategy, r in (("spare", 5), ("rep", 3)):
        a = time_to_train(sc, strategy, r=r, checkpoint_every_steps=6)
        b = time_to_train(one, strategy, r=r, checkpoint_every_steps=6)
        assert a == b
        c = time_to_train(sc, strategy, r=r, checkpoint_every_steps=6, microbatches=1)
        assert a == c
        x = simulate_training(sc, strategy, r=r, checkpoint_every_steps=6, trials=2, seed=4)
        y = simulate_training(
            one, strategy, r=r, checkpoint_every_steps=6, trials=2, seed=4, microbatches=1
        )
        np.testing.assert_array_equal(x.total_seconds, y.total_seconds)
        np.testing.assert_array_equal(x.failures, y.failures)


def test_rep_and_ckpt_ignore_microbatches() -> None:
    from scipy import stats

    # Groups live 10x longer than in the paper: CKPT-only then progresses.
    sc = paper_scenario(50, steps=300, failure_law=stats.expon(scale=150_000.0))
    for strategy, r in (("rep", 3), ("ckpt", 1)):
        a = time_to_train(sc, strategy, r=r, checkpoint_every_steps=6)
        b = time_to_train(split(sc, 8), strategy, r=r, checkpoint_every_steps=6)
        # The same numbers; the caveat differs (the audit drew no micro-batches).
        assert dataclasses.replace(a, caveats=()) == dataclasses.replace(b, caveats=())
        x = simulate_training(sc, strategy, r=r, checkpoint_every_steps=6, trials=2, seed=4)
        y = simulate_training(
            split(sc, 8), strategy, r=r, checkpoint_every_steps=6, trials=2, seed=4
        )
        np.testing.assert_array_equal(x.total_seconds, y.total_seconds)


def test_failure_free_run_matches_the_jitter_law() -> None:
    """Without failures every m has load 1: the work-additive jitter keeps the step law.

    Each step lasts ``c + a`` plus ``c v`` times the maximum of ``N`` standard
    normals; 400 steps, so the mean over steps has SE ``c v sd(max) / 20``.
    """
    from scipy import stats

    sc = StepScenario(
        groups=40, steps=400, allreduce_seconds=1.0, failure_law=stats.expon(scale=1e15)
    )
    rng = np.random.default_rng(0)
    maxima = rng.standard_normal((20000, 40)).max(axis=1)
    e, sd = float(maxima.mean()), float(maxima.std())
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    ckpt = sc.checkpoint_seconds * math.ceil(sc.steps / 50)
    for m in (1, 16):
        sim = simulate_training(
            split(sc, m), "spare", r=3, checkpoint_every_steps=50, trials=1, seed=2
        )
        per_step = (float(sim.total_seconds[0]) - ckpt) / sc.steps
        se = c * v * sd / math.sqrt(sc.steps)
        assert abs(per_step - (c * (1 + v * e) + a)) < 4 * se, (m, per_step)


def test_load_never_exceeds_whole_stacks() -> None:
    """Along one failure order the controller's load at m pieces is <= S* (refinement)."""
    hosts = cyclic_placement(57, 8)
    order = np.random.default_rng(3).permutation(57)
    whole = ReorderingController(hosts)
    pieces = {m: ReorderingController(hosts, microbatches=m) for m in (2, 4, 16)}
    for g in order[:25].tolist():
        try:
            S = whole.fail(g)
        except Exception:
            break
        for m, ctl in pieces.items():
            load = ctl.fail(g)
            assert load <= S, (m, g)
            assert load >= 1.0 and load * m == int(load * m)


@pytest.mark.slow
def test_split_is_faster_on_average() -> None:
    """Model and simulation both find m = 16 faster than whole shards (means, not seeds)."""
    sc = paper_scenario(200, steps=2000)
    e1 = time_to_train(sc, "spare", r=9, checkpoint_every_steps=15)
    e16 = time_to_train(split(sc, 16), "spare", r=9, checkpoint_every_steps=15)
    assert e16.total_over_T0 < e1.total_over_T0
    s1 = simulate_training(sc, "spare", r=9, checkpoint_every_steps=15, trials=3, seed=8)
    s16 = simulate_training(
        split(sc, 16), "spare", r=9, checkpoint_every_steps=15, trials=3, seed=8
    )
    diff = s1.mean("total_over_T0") - s16.mean("total_over_T0")
    se = math.hypot(s1.standard_error("total_over_T0"), s16.standard_error("total_over_T0"))
    assert diff > 3 * se


# Held-out cells: (law, m, r, k).  Model vs simulation within 3 combined SE or 2 %.
CELLS = [
    ("exponential", 4, 9, 15),
    ("exponential", 16, 5, 12),
    # +2.0 % (4.3 SE, a strict xfail) until the run's ends were priced (docs/audit.md mend 7).
    ("weibull", 16, 9, 15),
]


@pytest.mark.slow
@pytest.mark.parametrize("law, m, r, k", CELLS)
def test_model_against_simulation(law: str, m: int, r: int, k: int) -> None:
    sc = split(paper_scenario(200, failure_law=law, steps=5000), m)
    est = time_to_train(sc, "spare", r=r, checkpoint_every_steps=k)
    sim = simulate_training(sc, "spare", r=r, checkpoint_every_steps=k, trials=4, seed=21)
    mean, se = sim.mean("total_over_T0"), sim.standard_error("total_over_T0")
    gap = est.total_over_T0 - mean
    assert abs(gap) <= 3 * se or abs(gap) <= 0.02 * mean, (est.total_over_T0, mean, se)
    assert abs(est.uptime - sim.mean("uptime")) < 0.02


def test_front_doors_take_the_keyword() -> None:
    sc = paper_scenario(50, steps=300)
    a = time_to_train(sc, "spare", r=5, checkpoint_every_steps=6, microbatches=8)
    b = time_to_train(split(sc, 8), "spare", r=5, checkpoint_every_steps=6)
    assert a == b
    assert time_to_train(split(sc, 8), "spare", r=5, checkpoint_every_steps=6, microbatches=8) == b
    plan = optimal_plan(paper_scenario(50, steps=300), "spare", microbatches=8)
    assert plan.estimate == optimal_plan(split(sc, 8), "spare").estimate
    x = simulate_training(
        sc, "spare", r=5, checkpoint_every_steps=6, trials=1, seed=1, microbatches=8
    )
    y = simulate_training(split(sc, 8), "spare", r=5, checkpoint_every_steps=6, trials=1, seed=1)
    np.testing.assert_array_equal(x.total_seconds, y.total_seconds)
    assert x.scenario.microbatches == 8


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "4", float("nan")])
def test_bad_microbatches(value: object) -> None:
    with pytest.raises(ValueError, match="microbatches"):
        split(paper_scenario(50), value)  # type: ignore[arg-type]


def test_conflicts_and_unsupported_combinations() -> None:
    sc = split(paper_scenario(50, steps=100), 4)
    with pytest.raises(ValueError, match="microbatches"):
        merge_microbatches(sc, 8)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(sc, "spare", r=5, checkpoint_every_steps=5, microbatches=8)
    with pytest.raises(ValueError, match="microbatches"):
        merge_microbatches(sc, 0)
    repairs = dataclasses.replace(sc, repair_seconds=600.0)
    with pytest.raises(ValueError, match="microbatches"):
        time_to_train(repairs, "spare", r=5, checkpoint_every_steps=5)
    with pytest.raises(ValueError, match="microbatches"):
        simulate_training(repairs, "spare", r=5, checkpoint_every_steps=5, trials=1, seed=0)


@pytest.mark.slow
def test_small_r_coarse_split_runs_high() -> None:
    """Pinned known bias: at r = 5, m = 4 the model is high (docs/step_model.md section 10).

    The base model's small-``r`` restart excess (about 7 % too many restarts
    here; published SPARe at ``r = 4`` is +3.1 %) is not removed by splitting:
    model above the simulation, by less than 5 %.
    """
    sc = split(paper_scenario(200, failure_law="weibull", steps=5000), 4)
    est = time_to_train(sc, "spare", r=5, checkpoint_every_steps=12)
    sim = simulate_training(sc, "spare", r=5, checkpoint_every_steps=12, trials=4, seed=21)
    mean = sim.mean("total_over_T0")
    assert mean < est.total_over_T0 < 1.05 * mean
