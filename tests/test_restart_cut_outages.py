"""Outages end at the next global restart: the clustering of renewal clocks under repairs.

``compose.clustering``'s ``c = 1 + M(D) - D / m`` absorbs the failures a
young clock brings within an outage.  Without a spare pool an outage ends at
its repair or at the next global restart, whichever comes first, so ``D`` is
the mean of the shorter (``compose.outage_hours``), and the time to the
restart is the plan's own cycle, a fixed point of ``model.priced_law``.  At
100k GPUs on the StepFun log's law (Weibull node clocks, lemons, bursts,
lognormal repairs of mean 133 h) Rep's cycles last hours, not the 133 h
of a repair: priced with the whole repair the model ran 6 % short of the
event simulation.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from scipy import integrate, stats

import spare_theory as st
from spare_theory import Scenario, strategy
from spare_theory.hourly import compose, model
from spare_theory.hourly import process as process_module
from spare_theory.traces.plans import log_scenario

REPAIRS = Scenario(
    gpus=1024,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=48,
    repair_minutes=90.0,
)
PUBLISHED = Scenario.published_600k()


def fitted(**fields) -> Scenario:
    costs = dict(
        restart_minutes=PUBLISHED.restart_minutes,
        checkpoint_minutes=PUBLISHED.checkpoint_minutes,
        work_hours=PUBLISHED.work_hours,
    )
    return log_scenario(
        st.infinitehbd_failure_log(), gpus=100_352, gpus_per_group=2048, **costs, **fields
    )


@pytest.mark.parametrize("restart_hours", [0.2, 1.5, 40.0])
@pytest.mark.parametrize(
    "law", ["exponential", "fixed", stats.lognorm(1.5, scale=90.0 / math.exp(1.5**2 / 2))]
)
def test_the_outage_is_the_shorter_of_the_repair_and_the_time_to_the_restart(law, restart_hours):
    sc = dataclasses.replace(REPAIRS, repair_law=law)
    if law == "exponential":
        survival = lambda t: math.exp(-t / 90.0)  # noqa: E731
    elif law == "fixed":
        survival = lambda t: float(t < 90.0)  # noqa: E731
    else:
        survival = law.sf
    minutes = 60.0 * restart_hours

    # E[min(X, E)] = int_0^inf P(X > t) P(E > t) dt, integrated here directly.
    def integrand(t):
        return survival(t) * math.exp(-t / minutes)

    expected = sum(
        integrate.quad(integrand, a, b, limit=200)[0] for a, b in [(0, 90), (90, math.inf)]
    )
    # 128 Gauss-Legendre nodes over the quantiles: about 1e-5 where the tail outlasts T.
    repair = (sc.repair_minutes, sc.repair_law)
    assert compose.outage_hours(*repair, restart_hours) == pytest.approx(expected / 60.0, rel=1e-4)
    assert compose.outage_hours(*repair) == pytest.approx(1.5)


def test_the_restart_hours_are_the_priced_cycle_itself():
    # The fixed point: the cycle law priced with outages cut at restarts T apart
    # has a mean time to wipe-out of T less the restart.
    sc = fitted()
    process, law = model.priced_law(sc, strategy("rep"), 2)
    restart_hours = model._cycle_mean_hours(process, law) + sc.restart_minutes / 60.0
    again = process_module.group_process(sc, restart_hours=restart_hours)
    assert again.rate_per_hour == pytest.approx(process.rate_per_hour, rel=1e-4)
    assert "restart-cut outages" in process.approximations
    # Cycles of hours against repairs of 133 h: the outages are cut by far.
    assert restart_hours < 0.2 * sc.repair_minutes / 60.0
    repair = (sc.repair_minutes, sc.repair_law)
    assert compose.clustering(sc, *repair, restart_hours) < compose.clustering(sc, *repair)


def test_a_pool_ends_its_wait_at_restarts_and_exponential_clocks_are_priced_as_before():
    pooled = fitted(spare_nodes=400, swap_minutes=30)
    process, law = model.priced_law(pooled, strategy("rep"), 2)
    # A restart fills the waiting slots (the pool's wait), not the clustering's outage.
    assert "restart-filled pool" in process.approximations
    assert "restart-cut outages" not in process.approximations
    restart_hours = model._cycle_mean_hours(process, law) + pooled.restart_minutes / 60.0
    down = compose.pool_down_minutes(pooled, restart_hours)
    assert process.repair_minutes == pytest.approx(down, rel=1e-3)
    assert down <= compose.pool_down_minutes(pooled)
    plain = dataclasses.replace(REPAIRS, repair_minutes=600.0)
    process = model.priced_law(plain, strategy("spare"), 3)[0]
    assert process.approximations == ()
    assert process.rate_per_hour == plain.group_failure_rate_per_hour


def test_the_cut_outages_price_the_fitted_log_without_a_pool(monkeypatch):
    sc = fitted()
    plan = dict(r=2, checkpoint_interval_minutes=60.0)
    sim = st.simulate_training(sc, "rep", trials=24, seed=3, **plan)
    tolerance = 3.0 * sim.standard_error_hours
    cut = st.time_to_train(sc, "rep", **plan).hours
    assert abs(cut - sim.mean_hours) <= tolerance, (cut, sim.mean_hours, tolerance)
    # One step of the fixed point is the whole repair as the outage (the pricing
    # before): far out.
    monkeypatch.setattr(model, "_OUTAGE_STEPS", 1)
    st.clear_caches()
    uncut = st.time_to_train(sc, "rep", **plan).hours
    st.clear_caches()
    assert sim.mean_hours - uncut > 3.0 * tolerance, (uncut, sim.mean_hours)
