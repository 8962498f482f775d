"""StepScenario and paper_scenario: fields, derived times, validation."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from spare_theory.steps.scenario import StepScenario, paper_scenario

LAW = stats.expon(scale=1000.0)


def test_defaults_are_the_published_workload():
    sc = StepScenario(groups=10, steps=5, allreduce_seconds=0.1, failure_law=LAW)
    assert sc.stack_seconds == 64.0
    assert sc.stack_jitter_cv == 0.05
    assert sc.checkpoint_seconds == 58.8
    assert sc.restart_seconds == 3600.0
    assert sc.restart_semantics == "window"
    assert sc.partial_recovery_seconds == 0.1
    assert sc.allreduce_failure_scale == 0.5


def test_derived_times():
    sc = StepScenario(groups=4, steps=7, stack_seconds=3.0, allreduce_seconds=0.5, failure_law=LAW)
    assert sc.failure_free_seconds == 7 * 3.5
    assert sc.failure_free_hours == pytest.approx(7 * 3.5 / 3600)
    assert sc.group_mean_lifetime_seconds == pytest.approx(1000.0)
    assert sc.cluster_mtbf_seconds == pytest.approx(250.0)


@pytest.mark.parametrize("N", [200, 600, 1000])
@pytest.mark.parametrize("law", ["exponential", "weibull"])
def test_paper_scenario(N, law):
    sc = paper_scenario(N, failure_law=law)
    assert sc.groups == N and sc.steps == 10_000
    assert sc.allreduce_seconds == pytest.approx(N / 100)
    assert sc.cluster_mtbf_seconds == pytest.approx(300.0)
    assert sc.failure_free_seconds == pytest.approx(10_000 * (64 + N / 100))
    if law == "weibull":
        assert sc.failure_law.args == (0.78,)


def test_paper_scenario_overrides_and_pass_through():
    law = stats.gamma(2.0, scale=10.0)
    sc = paper_scenario(20, failure_law=law, restart_seconds=60.0, allreduce_seconds=0.0, steps=3)
    assert sc.failure_law is law
    assert (sc.restart_seconds, sc.allreduce_seconds, sc.steps) == (60.0, 0.0, 3)


def test_equal_scenarios_compare_and_hash_equal():
    a, b = paper_scenario(200, failure_law="weibull"), paper_scenario(200, failure_law="weibull")
    assert a == b and hash(a) == hash(b)
    assert a != paper_scenario(200)
    assert len({a, b}) == 1


def test_frozen():
    sc = paper_scenario(10)
    with pytest.raises(AttributeError):
        sc.groups = 3  # type: ignore[misc]


BASE = dict(groups=5, steps=10, allreduce_seconds=1.0, failure_law=LAW)


@pytest.mark.parametrize(
    "field,value",
    [
        ("groups", 0),
        ("groups", 2.5),
        ("groups", True),
        ("steps", 0),
        ("stack_seconds", 0.0),
        ("stack_seconds", math.inf),
        ("allreduce_seconds", -1.0),
        ("allreduce_seconds", math.nan),
        ("stack_jitter_cv", -0.1),
        ("checkpoint_seconds", -1.0),
        ("restart_seconds", -1.0),
        ("restart_semantics", "instant"),
        ("failure_law", "exponential"),
        ("failure_law", stats.norm(1.0, 1.0)),
        ("partial_recovery_seconds", -0.1),
        ("allreduce_failure_scale", -0.5),
    ],
)
def test_bad_field_names_itself(field, value):
    with pytest.raises(ValueError, match=field):
        StepScenario(**{**BASE, field: value})


def test_paper_scenario_bad_input():
    with pytest.raises(ValueError, match="N"):
        paper_scenario(0)
    with pytest.raises(ValueError, match="law"):
        paper_scenario(10, failure_law="gamma")
    with pytest.raises(ValueError, match="restart_seconds"):
        paper_scenario(10, restart_seconds=-1.0)
