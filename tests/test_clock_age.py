"""The clocks' age at the step level: a running clock's residual life, and the run that ages.

The residual life of ``spare_theory.steps.restarts.residual_life`` is checked against clocks
that the simulation's own ``RenewalClocks`` advance to that age (draw by draw, no formula),
with tolerances of 4 binomial standard errors.  The model of a run whose clocks age is checked
against the step-level simulation on Weibull scenarios drawn at random from the audit's space
(``tests/test_audit.py`` holds the audit itself).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

import spare_theory as st
from spare_theory.audits import AuditSpace, audit
from spare_theory.lifetimes.clocks import RenewalClocks
from spare_theory.steps.restarts import mean_life_at, residual_life

LAWS = {
    "weibull 0.5": stats.weibull_min(0.5, scale=1000.0),
    "weibull 1.3": stats.weibull_min(1.3, scale=1000.0),
    "lognormal": stats.lognorm(1.2, scale=800.0),
}
CLOCKS = 200_000


@pytest.mark.parametrize("name", LAWS)
@pytest.mark.parametrize("age", [0.0, 300.0, 3000.0, None])
def test_residual_life_matches_clocks_advanced_to_that_age(name, age):
    law = LAWS[name]
    start = "equilibrium" if age is None else age
    clocks = RenewalClocks(law, CLOCKS, np.random.default_rng(7), start=start)
    x = np.array([10.0, 100.0, 1000.0, 5000.0])
    drawn = (clocks.next[:, None] <= x[None, :]).mean(axis=0)
    cdf, hazard = residual_life(law, x, age)
    se = np.sqrt(np.maximum(cdf * (1 - cdf), 1e-12) / CLOCKS)
    assert np.all(np.abs(cdf - drawn) <= 4 * se + 1e-4), (cdf, drawn, se)
    assert np.all(np.isfinite(hazard)) and np.all(hazard >= 0)


@pytest.mark.parametrize("name", LAWS)
def test_an_old_clock_is_a_long_running_one(name):
    law = LAWS[name]
    x = np.linspace(0.0, 4000.0, 9)
    old, _ = residual_life(law, x, 200.0 * float(law.mean()))
    running, _ = residual_life(law, x, None)
    assert np.max(np.abs(old - running)) < 5e-3
    assert abs(mean_life_at(law, 200.0 * float(law.mean())) / float(law.mean()) - 1) < 0.02


def test_the_exponential_clock_has_no_age():
    law = stats.expon(scale=500.0)
    x = np.array([1.0, 100.0, 2000.0])
    for age in (0.0, 123.0, None):
        cdf, hazard = residual_life(law, x, age)
        assert np.allclose(cdf, -np.expm1(-x / 500.0)) and np.allclose(hazard, 1 / 500.0)
        assert mean_life_at(law, age) == 500.0


def test_the_age_changes_nothing_for_the_exponential_law():
    sc = st.paper_scenario(50, steps=200)
    for age in (None, 5000.0):
        aged = dataclasses.replace(sc, clock_age_seconds=age)
        assert st.time_to_train(aged, "spare", r=3, checkpoint_every_steps=10) == (
            st.time_to_train(sc, "spare", r=3, checkpoint_every_steps=10)
        )


def test_the_parts_of_an_ageing_run_add_up_to_its_hours():
    sc = st.paper_scenario(50, steps=300, restart_seconds=600.0, failure_law="weibull")
    est = st.time_to_train(sc, "rep", r=2, checkpoint_every_steps=10)
    assert sum(est.breakdown_hours.values()) == pytest.approx(est.hours, rel=1e-9)
    assert 0 < est.uptime < 1


def test_clock_age_seconds_is_checked():
    sc = st.paper_scenario(50, steps=300)
    with pytest.raises(ValueError, match="clock_age_seconds"):
        dataclasses.replace(sc, clock_age_seconds=-1.0)
    with pytest.raises(ValueError, match="clock_age_seconds"):
        dataclasses.replace(sc, clock_age_seconds=float("nan"))


@pytest.fixture(scope="module")
def drawn_weibull_steps():
    # Step-level scenarios with Weibull lifetimes drawn at random from the audit's space on a
    # seed of their own (the shipped audit's misses were these: 15 of 55 answers within before
    # the clocks aged).  Each CKPT-only and SPARe model plan simulated at that plan, 40 runs.
    space = dataclasses.replace(AuditSpace(), step_share=1.0, weibull_share=1.0)
    res = audit(space, scenarios=6, trials=40, seed=2027, strategies=["ckpt", "spare"])
    return res.model_cells


@pytest.mark.slow
def test_drawn_weibull_step_scenarios_hold_against_the_simulation(drawn_weibull_steps):
    cells = drawn_weibull_steps
    assert len(cells) >= 8
    outside = cells[~cells["within"]]
    assert len(outside) <= 0.1 * len(cells), outside[["index", "strategy", "error", "z"]]


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="drawn scenario 2 (24-min restarts) is -6.5 to -7.2 % (2 SE) and scenario 3 (17-min "
    "restarts, the cluster's mean time between failures) SPARe +8.1 % (7 SE), docs/audit.md mend 6",
)
def test_no_drawn_weibull_step_answer_is_beyond_6_percent(drawn_weibull_steps):
    cells = drawn_weibull_steps
    assert cells["error"].abs().max() <= 0.06, cells[["index", "strategy", "error", "z"]]
