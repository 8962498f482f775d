"""Misdiagnosis (issue 39 item 1): a detection that blames a healthy group evicts it and
leaves the faulty one in place, to be noticed again a detection time later.

The simulation plays the semantics directly (``hourly.simulation``: a geometric number of
wrong calls per failure, each evicting a random healthy group as a failure noticed at once;
a wipe-out's restart waits until the faulty group is found); the model prices them in
closed form where every failure ends the cycle (CKPT-only: the restart's wait mixed over
the number of calls, ``GroupProcess.events``) and refuses the rest by name.  Tolerance: 3 %
or 3 standard errors of the simulated mean, the package's rule.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scenarios import SIXTEEN_GROUPS_WITH_CLASSES, drawn_class_scenario, model_plans_outside

import spare_theory as st
from spare_theory import FailureClass, NoClosedFormError, Scenario
from spare_theory.hourly.simulation import BREAKDOWN
from spare_theory.lifetimes.classes import parse_failure_classes
from spare_theory.reports.changes import WHAT_IF_CHANGES

BASE = Scenario(
    **SIXTEEN_GROUPS_WITH_CLASSES,
    failure_classes=(
        FailureClass("crash", 0.7),
        FailureClass("hang", 0.3, "hang", 30.0, misdiagnosis=0.3),
    ),
)


@pytest.mark.parametrize("value", [1.0, 1.5, -0.1, math.nan])
def test_a_misdiagnosis_outside_0_1_is_refused_by_name(value):
    with pytest.raises(ValueError, match="misdiagnosis"):
        FailureClass("hang", 1.0, "hang", 30.0, misdiagnosis=value)


@pytest.mark.parametrize("m", [0.0, 0.1, 0.5, 0.9])
def test_the_calls_are_geometric(m):
    calls = FailureClass("hang", 1.0, "hang", 30.0, misdiagnosis=m).calls()
    g = np.array([n for n, _ in calls], dtype=float)
    p = np.array([q for _, q in calls])
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert (g * p).sum() == pytest.approx(1.0 / (1.0 - m), rel=1e-9)  # mean of Geometric(1-m)
    # P(G > 1) = m: the first call is wrong with the class's chance.
    assert p[g > 1].sum() == pytest.approx(m, abs=1e-12)


def test_the_command_line_form_takes_a_misdiagnosis():
    classes = parse_failure_classes("crash:0.7:crash:0,hang:0.3:hang:30:misdiagnosis=0.3")
    assert classes == BASE.failure_classes
    slow = parse_failure_classes("slow:1:straggler:60:2:misdiagnosis=0.1")[0]
    assert (slow.slowdown, slow.misdiagnosis) == (2.0, 0.1)
    with pytest.raises(ValueError, match="hang:1:hang:30:misdiagnosis=x"):
        parse_failure_classes("hang:1:hang:30:misdiagnosis=x")


def test_the_better_diagnosis_change_sets_every_misdiagnosis_to_zero():
    better = WHAT_IF_CHANGES["better_diagnosis"].classes(BASE.failure_classes)
    assert [c.misdiagnosis for c in better] == [0.0, 0.0]


def test_the_simulated_wait_grows_as_the_calls():
    # CKPT-only with every failure a hang noticed after 30 min: the restart's wait is
    # R + 30 G minutes, E[G] = 1 / (1 - m) = 2, sd(30 G) = 30 sqrt(m) / (1 - m).  Failures
    # are rare, so that a restart is seldom cut short by the next (a share
    # N x wait / group MTBF of them, each counted as a restart of its own).
    m, one_hour = 0.5, 60.0
    one = (FailureClass("hang", 1.0, "hang", 30.0, misdiagnosis=m),)
    sc = dataclasses.replace(BASE, gpu_mtbf_hours=100_000.0, failure_classes=one)
    runs = st.simulate_training(sc, "ckpt", checkpoint_interval_minutes=60.0, trials=2000, seed=3)
    # The restart waits (hourly.simulation): the detection, then the restart itself.
    restart_hours = runs.breakdown_hours[
        :, [BREAKDOWN.index("restart"), BREAKDOWN.index("detection")]
    ].sum(axis=1)
    n = runs.restarts.sum()
    per_restart = restart_hours.sum() / n * one_hour
    expected = 15.0 + 30.0 / (1.0 - m)
    cut_short = sc.groups * sc.group_failure_rate_per_hour * expected / one_hour
    assert n > 500
    assert abs(per_restart - expected) < 3 * 30.0 * math.sqrt(m) / (1 - m) / math.sqrt(n) + (
        expected * cut_short
    )


def test_a_wrong_call_evicts_a_healthy_group_under_redundancy():
    # SPARe r = 2 without repairs: the evictions are failures of their own, so the job wipes
    # out more often on the same draws of the failures' times.
    right = dataclasses.replace(BASE, failure_classes=(FailureClass("crash", 1.0),))
    wrong = dataclasses.replace(
        BASE, failure_classes=(FailureClass("crash", 1.0, misdiagnosis=0.5),)
    )
    runs = [
        st.simulate_training(sc, "spare", r=2, checkpoint_interval_minutes=60.0, trials=200, seed=4)
        for sc in (right, wrong)
    ]
    gap = runs[1].restarts.mean() - runs[0].restarts.mean()
    spread = np.hypot(*(r.restarts.std() / np.sqrt(r.restarts.size) for r in runs))
    assert gap > 3 * spread


def test_a_law_that_outlives_a_failure_is_refused_and_auto_simulates():
    with pytest.raises(NoClosedFormError, match="misdiagnosis"):
        st.time_to_train(BASE, "spare", r=2, checkpoint_interval_minutes=60.0)
    plan = st.optimal_plan(
        dataclasses.replace(BASE, work_hours=20), "rep", method="auto", seed=1, r=2
    )
    assert plan.method == "simulation"


def _classes(rng: np.random.Generator, most: float = 0.2) -> tuple[FailureClass, ...]:
    """A crash class and one or two of a hang, a straggler and a corruption, each with a
    misdiagnosis of 0 to ``most`` (Minder's 0.1 within 0.2), detection times of 0 to
    120 min."""
    kinds = [k for k in ("hang", "straggler", "corruption") if rng.random() < 0.6] or ["hang"]
    shares = rng.dirichlet(np.ones(len(kinds) + 1)) * 0.9 + 0.1 / (len(kinds) + 1)
    found = [
        FailureClass(
            "crash",
            float(shares[0]),
            detect_minutes=float(rng.uniform(0.0, 10.0)),
            misdiagnosis=float(rng.uniform(0.0, most)),
        )
    ]
    for kind, share in zip(kinds, shares[1:]):
        extra = {
            "straggler": {"slowdown": float(rng.uniform(1.0, 3.0))},
            "corruption": {"rollback_checkpoints": int(rng.integers(1, 4))},
        }.get(kind, {})
        found.append(
            FailureClass(
                kind,
                float(share),
                kind,
                float(rng.uniform(0.0, 120.0)),
                misdiagnosis=float(rng.uniform(0.0, most)),
                **extra,
            )
        )
    # The shares as drawn may miss 1 by a rounding: the last takes the rest.
    last = found[-1]
    rest = 1.0 - math.fsum(c.share for c in found[:-1])
    return (*found[:-1], dataclasses.replace(last, share=rest))


def _drawn(rng: np.random.Generator) -> tuple[Scenario, str]:
    """A scenario with :func:`_classes` (``drawn_class_scenario``), planned CKPT-only."""
    sc, _ = drawn_class_scenario(rng, _classes)
    return sc, "ckpt"


def test_model_against_simulation_on_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=61, cells=4, trials=200) == []


@pytest.mark.slow  # 20 drawn cells, 300 runs each
def test_model_against_simulation_on_more_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=2069, cells=20, trials=300) == []


def _drawn_wide(rng: np.random.Generator) -> tuple[Scenario, str]:
    """:func:`_drawn` with misdiagnoses of 0 to 0.9: restarts that wait hours for the
    faulty group, whose class mix the law's :meth:`late_endings` weighs."""
    sc, _ = drawn_class_scenario(rng, lambda r: _classes(r, most=0.9))
    return sc, "ckpt"


@pytest.mark.slow  # 12 drawn cells, 200 runs each
def test_model_against_simulation_on_drawn_scenarios_with_wrong_calls_up_to_90_percent():
    assert model_plans_outside(_drawn_wide, seed=2089, cells=12, trials=200) == []
