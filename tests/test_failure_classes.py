"""Failures that go unnoticed (issue 39 item 1, crash and hang): the classes, the model against
the event simulation on scenarios drawn at random, and the refusals.

The simulation plays the semantics directly (``hourly.simulation``: the job makes no
progress until the last failure is noticed; a restart starts once the wiping failure
is); the model prices them in closed form (``cycles.detection``, the restart mixed
over the classes in ``hourly.renewal.priced_terms``).  Tolerance: 3 % or 3 standard
errors of the simulated mean, the package's rule.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scenarios import drawn_class_scenario, model_plans_outside

import spare_theory as st
from spare_theory import FailureClass, NoClosedFormError, Scenario
from spare_theory.cli import main
from spare_theory.lifetimes.classes import CRASH, check_failure_classes, parse_failure_classes

MIX = (FailureClass("crash", 0.8, "crash", 1.0), FailureClass("hang", 0.2, "hang", 30.0))
BASE = Scenario(
    gpus=128,
    gpus_per_group=8,
    gpu_mtbf_hours=100.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=40,
)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"name": "", "share": 1.0}, "name"),
        ({"name": "a", "share": 0.0}, "share"),
        ({"name": "a", "share": 1.5}, "share"),
        ({"name": "a", "share": math.nan}, "share"),
        ({"name": "a", "share": 1.0, "kind": "meteor"}, "kind"),
        ({"name": "a", "share": 1.0, "detect_minutes": -1.0}, "detect_minutes"),
    ],
)
def test_a_bad_class_names_its_field(kwargs, says):
    with pytest.raises(ValueError, match=says):
        FailureClass(**kwargs)


@pytest.mark.parametrize(
    ("classes", "says"),
    [
        ((), "non-empty"),
        (CRASH, "tuple of FailureClass"),
        ((FailureClass("a", 0.5), FailureClass("a", 0.5)), "'a' is given twice"),
        ((FailureClass("a", 0.5), FailureClass("b", 0.4)), "sum to 1"),
        (("crash",), "tuple of FailureClass"),
    ],
)
def test_bad_classes_are_refused_by_the_scenario(classes, says):
    with pytest.raises(ValueError, match=says):
        dataclasses.replace(BASE, failure_classes=classes)
    with pytest.raises(ValueError, match=says):
        check_failure_classes(classes)


def test_the_command_line_form():
    assert parse_failure_classes("crash:0.8:crash:1, hang:0.2:hang:30") == MIX
    with pytest.raises(ValueError, match="NAME:SHARE:KIND:DETECT_MINUTES"):
        parse_failure_classes("crash:1")
    with pytest.raises(ValueError, match=r"'hang:0.2:hung:30'.*kind"):
        parse_failure_classes("crash:0.8:crash:1,hang:0.2:hung:30")


def test_classes_noticed_at_once_change_nothing_and_draw_nothing():
    # Two classes, neither with a detection time: no draw is made, so the seeded runs and the
    # model are the default's exactly.
    both = (FailureClass("crash", 0.5), FailureClass("hang", 0.5, "hang", 0.0))
    sc = dataclasses.replace(BASE, failure_classes=both)
    for name, r in [("ckpt", None), ("spare", 3)]:
        args = dict(r=r, checkpoint_interval_minutes=30.0)
        assert (
            st.time_to_train(sc, name, **args).hours == st.time_to_train(BASE, name, **args).hours
        )
        runs = st.simulate_training(sc, name, trials=20, seed=4, **args)
        plain = st.simulate_training(BASE, name, trials=20, seed=4, **args)
        assert runs.hours.tolist() == plain.hours.tolist()


def test_detection_costs_time_in_both_the_model_and_the_simulation():
    sc = dataclasses.replace(BASE, failure_classes=MIX)
    for name, r in [("ckpt", None), ("rep", 2), ("spare", 3)]:
        args = dict(r=r, checkpoint_interval_minutes=30.0)
        assert st.time_to_train(sc, name, **args).hours > st.time_to_train(BASE, name, **args).hours
        slow = st.simulate_training(sc, name, trials=30, seed=2, **args).mean_hours
        assert slow > st.simulate_training(BASE, name, trials=30, seed=2, **args).mean_hours


def _classes(rng: np.random.Generator) -> tuple[FailureClass, ...]:
    """A crash and a hang class."""
    crash = float(rng.uniform(0.5, 0.95))
    classes = (
        FailureClass("crash", crash, "crash", float(rng.uniform(0.0, 3.0))),
        FailureClass("hang", 1.0 - crash, "hang", float(rng.uniform(5.0, 60.0))),
    )
    return classes


def _drawn(rng: np.random.Generator) -> tuple[Scenario, str]:
    """A scenario with :func:`_classes` and a strategy (``drawn_class_scenario``)."""
    return drawn_class_scenario(rng, _classes)


def test_model_against_simulation_on_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=7, cells=4, trials=200) == []


@pytest.mark.slow  # 30 drawn cells, 400 runs each
def test_model_against_simulation_on_more_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=2039, cells=30, trials=400) == []


@pytest.mark.parametrize(
    ("fields", "strategy", "r", "says"),
    [
        ({}, "elastic", None, "own law"),
        ({}, "hot_spares", 2, "own law"),
        ({"planned_restart_failures": 3}, "spare", 4, "planned_restart_failures"),
        ({"lemon_fraction": 0.25, "lemon_rate_factor": 4.0}, "spare", 3, "failure_classes"),
        (
            {"repair_minutes": 30.0, "repair_law": "fixed"},
            "rep",
            2,
            "exponential repairs",
        ),
    ],
)
def test_what_the_model_does_not_cover_is_refused_by_name(fields, strategy, r, says):
    sc = dataclasses.replace(BASE, failure_classes=MIX, **fields)
    with pytest.raises(NoClosedFormError, match=says):
        st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=30.0)
    runs = st.simulate_training(
        sc, strategy, r=r, checkpoint_interval_minutes=30.0, trials=4, seed=0
    )
    assert np.isfinite(runs.hours).all()  # the simulation plays it
    plan = st.optimal_plan(sc, strategy, r=r, method="auto", max_trials=16)
    assert plan.method == "simulation"  # auto plans it by the simulation


def test_the_domain_simulation_refuses_detection():
    sc = Scenario(
        gpus=256 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=250.0,
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=20,
        domain_size=16,
        domain_mtbf_hours=500.0,
        failure_classes=MIX,
    )
    with pytest.raises(ValueError, match="failure_classes"):
        st.simulate_domain_training(sc, 6, 60.0, 4, seed=0)


def test_the_command_line_takes_classes_and_refuses_a_malformed_one(capsys):
    argv = ["optimize", "--gpus", "128", "--gpus-per-group", "8", "--gpu-mtbf-hours", "100"]
    argv += ["--restart-minutes", "20", "--checkpoint-minutes", "2", "--work-hours", "40"]
    argv += ["--strategy", "ckpt", "--method", "model", "--json"]
    assert main([*argv, "--failure-classes", "crash:0.8:crash:1,hang:0.2:hang:30"]) == 0
    assert main([*argv, "--failure-classes", "crash:0.8:crash"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "NAME:SHARE:KIND:DETECT_MINUTES" in err


def _hour_space_with_classes(late_share: float) -> st.AuditSpace:
    """The audit's hour-level space with failure classes in every scenario (the late ones in
    ``late_share`` of them), without the fields whose base model misses on its own or that
    the late classes are not modelled with (pools, lemons, Weibull clocks, domains)."""
    return st.AuditSpace(
        detection_share=1.0,
        late_share=late_share,
        step_share=0.0,
        pool_share=0.0,
        weibull_share=0.0,
        lemons_share=0.0,
        domains_share=0.0,
    )


@pytest.mark.slow  # 40 scenarios, about 30 s
def test_the_audit_space_extended_with_classes():
    # Every hour-level scenario with a hang class; the fields whose base model misses on
    # their own (pools, lemons, Weibull clocks, domains: docs/audit.md) left out.
    space = _hour_space_with_classes(late_share=0.0)
    result = st.audit(space, scenarios=40, seed=41, trials=40)
    answered = result.model_cells
    assert len(answered) >= 60
    assert (answered["fields"].str.contains("detection")).all()
    assert result.summary_table().set_index("group").loc["all", "outside"] == 0


@pytest.mark.slow  # 40 scenarios, about a minute
def test_the_audit_space_extended_with_late_classes():
    # Every hour-level scenario with a hang, a straggler and a corruption class beside the
    # crashes; the fields the late classes are not modelled with (pools, lemons, Weibull
    # clocks, domains) left out.
    space = _hour_space_with_classes(late_share=1.0)
    result = st.audit(space, scenarios=40, seed=43, trials=40)
    answered = result.model_cells
    assert len(answered) >= 60
    kinds = {c.kind for c in space.draw(43, 0).scenario.failure_classes}
    assert kinds == {"crash", "hang", "straggler", "corruption"}
    assert result.summary_table().set_index("group").loc["all", "outside"] == 0


@pytest.mark.slow  # 30 scenarios, about a minute
def test_the_audit_space_extended_with_misdiagnosis():
    # Every class of every scenario misdiagnosed (0 to 0.5), late classes in half of them:
    # CKPT-only answers (a law that outlives a failure refuses misdiagnosis: simulated).
    space = dataclasses.replace(_hour_space_with_classes(late_share=0.5), misdiagnosis_share=1.0)
    result = st.audit(space, scenarios=30, seed=47, trials=40)
    answered = result.model_cells
    assert len(answered) >= 25 and set(answered["strategy"]) == {"ckpt"}
    assert (answered["fields"].str.contains("misdiagnosis")).all()
    assert result.summary_table().set_index("group").loc["all", "outside"] == 0
