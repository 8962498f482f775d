"""Elastic DP and hot spares at the step level (issue 21): model against simulation, plans, input.

The model is :func:`spare_theory.steps.elastic_cycle.elastic_step_cycle` with
:func:`spare_theory.steps.estimate.estimate_steps`; the simulation
:func:`spare_theory.steps.elastic_run.run_elastic`.  Each cell compares the
expected time to train (``total_over_T0``) at a pinned checkpoint interval
``k`` (the model's best ``k`` for the plan when the cell was chosen): within
3 standard errors of the simulated mean or 2 % of it (the issue's
tolerance), the samples skipped within 3 SE or 1 point, the uptime within 2
points.  The cells are on the SPARe paper's scenario (``paper_scenario``,
cluster MTBF 300 s, 1 h restart windows, the default 3 min stalls and 1 min
heal), 5,000 steps (half the paper's, to keep the slow tier near a minute), 8
runs each, seed 11; ``docs/theory.md`` (the step-level elastic section) lists
every cell measured.  Measured (model / simulation - 1, z = (model - mean) /
SE): the elastic cells within 1.2 % (|z| <= 2.1); the hot-spares cells without
repairs within 0.7 %; with repairs the model is within 1.7 % but two cells
pass by the 2 % arm only (r = 30, q = 140, 1 h repairs: +1.6 %, z = +3.8;
r = 40, 1 h repairs, N = 600: -1.7 %, z = -2.4 is within 3 SE).  The two
misses below are strict xfails, each for a stated approximation.
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from spare_theory import (
    Scenario,
    optimal_plan,
    paper_scenario,
    simulate_training,
    time_to_train,
)
from spare_theory.planning.search import Leg, walk_redundancy
from spare_theory.steps.elastic_cycle import _binomial_states
from spare_theory.strategies.base import PATIENCE
from spare_theory.training.optimize import best_plan_variable
from spare_theory.training.resolve import resolve

PAPER = paper_scenario(200, steps=5000)
REPAIR_1H = dataclasses.replace(PAPER, repair_seconds=3600.0)
TRIALS, SEED = 8, 11

# (scenario, strategy, r, min_groups, k): the model's best k for each plan.
CELLS = {
    "elastic q=91": (PAPER, "elastic", None, 91, 25),
    "elastic q=40": (PAPER, "elastic", None, 40, 48),
    "elastic q=100, 1 min stalls": (
        dataclasses.replace(PAPER, reconfigure_seconds=60.0),
        "elastic",
        None,
        100,
        26,
    ),
    "elastic q=100, Weibull": (
        paper_scenario(200, steps=5000, failure_law="weibull"),
        "elastic",
        None,
        100,
        27,
    ),
    "elastic q=300, N=600": (paper_scenario(600, steps=5000), "elastic", None, 300, 38),
    "hot spares r=88": (PAPER, "hot_spares", 88, None, 19),
    "hot spares r=60, q=100": (PAPER, "hot_spares", 60, 100, 21),
    "elastic q=1, 1 h repairs": (REPAIR_1H, "elastic", None, 1, 187),
    "elastic q=100, 10 min repairs, no heal": (
        dataclasses.replace(PAPER, repair_seconds=600.0, heal_seconds=0.0),
        "elastic",
        None,
        100,
        1943,
    ),
    "hot spares r=26, 1 h repairs": (REPAIR_1H, "hot_spares", 26, None, 246),
    "hot spares r=30, q=140, 1 h repairs": (REPAIR_1H, "hot_spares", 30, 140, 701),
    "hot spares r=10, 10 min repairs, no heal": (
        dataclasses.replace(PAPER, repair_seconds=600.0, heal_seconds=0.0),
        "hot_spares",
        10,
        None,
        188,
    ),
    # +3.5 % (a strict xfail) until failures in the last state stopped counting as stalls.
    "hot spares r=40, k=9 (short cycles)": (PAPER, "hot_spares", 40, None, 9),
    "hot spares r=40, 1 h repairs, N=600": (
        dataclasses.replace(paper_scenario(600, steps=5000), repair_seconds=3600.0),
        "hot_spares",
        40,
        None,
        810,
    ),
}

# Cells outside the tolerance, each for a stated approximation (docs/theory.md), with the
# miss measured at 5,000 steps, 8 runs, seed 11: (cell, reason).
MISSES = {
    "hot spares r=40, 6 h repairs": (
        (dataclasses.replace(PAPER, repair_seconds=21600.0), "hot_spares", 40, None, 12),
        # The repaired chain's out time is taken exponential at its mean (as the cell
        # below); until failures in the last state stopped counting as voids and stalls
        # (they are the wipe-out) that low bias was offset: -1.05 % then.
        "out time taken exponential at its mean: model -3.0 % (z = -5.3)",
    ),
    "hot spares r=10, 10 min repairs, 1 min heal": (
        (dataclasses.replace(PAPER, repair_seconds=600.0), "hot_spares", 10, None, 125),
        # The out time is taken exponential at its mean; a fixed heal means a group cannot
        # rejoin within a minute of its failure, so its rejoin falls less often into the stall
        # its failure started: the simulation stalls more (+4.8 % from heal 0 to 60 s).
        "out time taken exponential at its mean (a fixed heal rejoins outside its own "
        "stall more often): model -4.1 % (z = -3.2)",
    ),
}


def _compare(cell):
    sc, strategy, r, q, k = cell
    plan = {} if q is None else {"min_groups": q}
    est = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k, **plan)
    sim = simulate_training(
        sc, strategy, r=r, checkpoint_every_steps=k, trials=TRIALS, seed=SEED, **plan
    )
    return est, sim


def _within(model, mean, se, points=None):
    k_se = abs(model - mean) <= 3 * se
    return k_se or (abs(model - mean) <= points if points else abs(model / mean - 1) <= 0.02)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CELLS))
def test_model_against_simulation(name):
    est, sim = _compare(CELLS[name])
    mean, se = sim.mean("total_over_T0"), sim.standard_error("total_over_T0")
    assert _within(est.total_over_T0, mean, se), (est.total_over_T0, mean, se)
    skipped = sim.mean("samples_skipped"), sim.standard_error("samples_skipped")
    assert _within(est.samples_skipped, *skipped, points=0.01), (est.samples_skipped, skipped)
    assert abs(est.uptime - sim.mean("uptime")) <= 0.02, (est.uptime, sim.mean("uptime"))
    assert est.exact_batch == sim.exact_batch


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
        for n, (_, why) in MISSES.items()
    ],
)
def test_known_misses(name):
    est, sim = _compare(MISSES[name][0])
    mean, se = sim.mean("total_over_T0"), sim.standard_error("total_over_T0")
    assert _within(est.total_over_T0, mean, se), (est.total_over_T0, mean, se)


def test_failure_free_run_is_the_batch_share():
    # With no failure the job trains A of N shards per step: N / A times the steps, and
    # a checkpoint every k of them (and after the last); the model prices that run.
    quiet = dataclasses.replace(paper_scenario(50, steps=400), failure_law=stats.expon(scale=1e15))
    est = time_to_train(quiet, "hot_spares", r=10, checkpoint_every_steps=40)
    sim = simulate_training(quiet, "hot_spares", r=10, checkpoint_every_steps=40, trials=2, seed=0)
    steps = math.ceil(400 * 50 / 40)
    writes = math.ceil(steps / 40)
    jitter_free = steps * (quiet.stack_seconds + quiet.allreduce_seconds)
    assert sim.total_seconds[0] > jitter_free + writes * quiet.checkpoint_seconds
    assert est.seconds == pytest.approx(sim.total_seconds.mean(), rel=1e-3)
    assert est.samples_skipped == 0.0 and est.exact_batch and est.restarts < 1e-9
    assert sim.samples_skipped.tolist() == [0.0, 0.0] and sim.exact_batch


def test_results_report_the_batch():
    elastic = time_to_train(PAPER, "elastic", checkpoint_every_steps=25, min_groups=91)
    assert not elastic.exact_batch and 0.3 < elastic.samples_skipped < 0.4
    spares = time_to_train(PAPER, "hot_spares", r=60, checkpoint_every_steps=21, min_groups=100)
    assert not spares.exact_batch and spares.samples_skipped > 0
    exact = time_to_train(PAPER, "hot_spares", r=88, checkpoint_every_steps=19)
    assert exact.exact_batch and exact.samples_skipped == 0.0
    spare = time_to_train(PAPER, "spare", r=9, checkpoint_every_steps=15)
    assert spare.exact_batch and spare.samples_skipped == 0.0


def test_simulation_does_not_depend_on_the_trial_count():
    sc = paper_scenario(40, steps=300)
    three = simulate_training(sc, "elastic", checkpoint_every_steps=10, trials=3, seed=2)
    two = simulate_training(sc, "elastic", checkpoint_every_steps=10, trials=2, seed=2)
    np.testing.assert_array_equal(three.total_seconds[:2], two.total_seconds)
    np.testing.assert_array_equal(three.samples_skipped[:2], two.samples_skipped)
    via = simulate_training(sc, "elastic", r=None, checkpoint_every_steps=10, trials=2, seed=2)
    np.testing.assert_array_equal(via.total_seconds, two.total_seconds)


def test_optimal_plan_chooses_the_quorum_at_the_step_level():
    sc = paper_scenario(200, steps=2000)
    plan = optimal_plan(sc, "elastic")
    assert plan.r is None and plan.min_groups is not None
    for q in (plan.min_groups - 10, plan.min_groups + 10):
        other = time_to_train(sc, "elastic", min_groups=q)
        assert plan.hours <= other.hours
    assert optimal_plan(sc, "hot_spares").min_groups == 200 - optimal_plan(sc, "hot_spares").r


SMALL = Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=128.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=100,
    reconfigure_minutes=1,
)


@pytest.mark.parametrize(
    "scenario",
    [
        SMALL,
        dataclasses.replace(SMALL, repair_minutes=60.0),
        Scenario.published_600k(4096),
        pytest.param(paper_scenario(200, steps=1000), marks=pytest.mark.slow),
    ],
    ids=["64 groups", "64 groups, repairs", "600k, N=146", "paper N=200"],
)
def test_hot_spares_bracket_finds_the_walk_s_plan(scenario):
    # The walk one r at a time from r = 1 (stopping after 3 r without improvement) is
    # the reference where it is affordable; the bracket must find the same r and hours.
    N = scenario.groups

    def estimate(r):
        return best_plan_variable(resolve(scenario, "hot_spares", r=r))[1]

    curve = walk_redundancy(estimate, lambda e: e.hours, [Leg(1, N - 1, PATIENCE)], bool)
    walked = min(curve, key=lambda r: (curve[r].hours, r))
    plan = optimal_plan(scenario, "hot_spares")
    assert plan.r == walked and plan.hours == curve[walked].hours
    assert len(plan.r_values) <= len(curve) + 10


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: time_to_train(PAPER, "elastic", min_groups=201), "min_groups"),
        (lambda: time_to_train(PAPER, "hot_spares", r=10, min_groups=195), "min_groups"),
        (lambda: time_to_train(PAPER, "hot_spares", r=200), "r"),
        (lambda: time_to_train(PAPER, "elastic", r=3), "r"),
        (
            lambda: time_to_train(
                dataclasses.replace(PAPER, microbatches=4), "elastic", checkpoint_every_steps=5
            ),
            "microbatches",
        ),
        (
            lambda: time_to_train(
                dataclasses.replace(PAPER, repair_seconds=60.0, rejoin_seconds=5.0),
                "elastic",
                checkpoint_every_steps=5,
            ),
            "rejoin_seconds",
        ),
        (
            lambda: time_to_train(
                dataclasses.replace(PAPER, repair_seconds=60.0, repair_law="fixed"),
                "hot_spares",
                r=4,
                checkpoint_every_steps=5,
            ),
            "repair_law",
        ),
        (
            lambda: simulate_training(
                dataclasses.replace(PAPER, microbatches=4),
                "elastic",
                checkpoint_every_steps=5,
                trials=1,
                seed=0,
            ),
            "microbatches",
        ),
        (lambda: dataclasses.replace(PAPER, reconfigure_seconds=-1.0), "reconfigure_seconds"),
        (lambda: dataclasses.replace(PAPER, heal_seconds=float("nan")), "heal_seconds"),
        (
            lambda: simulate_training(
                PAPER, "spare", r=9, checkpoint_every_steps=5, trials=1, seed=0, min_groups=3
            ),
            "min_groups",
        ),
    ],
)
def test_bad_input_names_the_field(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("N", "K"),
    [(40, 21), (200, 110), (600, 301), pytest.param(75_000, 37_501, marks=pytest.mark.slow)],
)
def test_binomial_states_match_scipy_s_pmf(N, K):
    # The states' binomial law is built from log-factorials for speed: the same
    # weights and log survival as scipy.stats.binom.pmf on the same bands.
    rng = np.random.default_rng(N)
    t = np.sort(rng.uniform(0.0, 0.6, size=(3, 7)), axis=1)
    p_classes = np.concatenate([t, np.zeros((1, 7)), np.full((1, 7), 1e-9)])
    p_classes[0, -1] = 0.999
    f, weights, log_q = _binomial_states(N, K, p_classes)
    mass = np.mean([stats.binom.pmf(f, N, p[:, None]) for p in p_classes], axis=0)
    q = mass.sum(axis=1)
    np.testing.assert_allclose(weights, mass / q[:, None], rtol=1e-9, atol=1e-300)
    # log Q near 0 (survival near 1) needs an absolute bound: the log-factorials' rounding
    # is 1e-13 at N = 200 and 1e-10 at N = 75,000 (measured).
    np.testing.assert_allclose(log_q, np.log(q), rtol=1e-9, atol=1e-9)
