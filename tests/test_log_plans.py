"""From a failure log to a scenario (FailureLog.scenario, step_scenario) and spare pools."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import spare_theory as st
from spare_theory.hourly.compose import cluster_node_failure_rate, mean_group_rate
from spare_theory.lifetimes.spares import spares_for_shortage
from spare_theory.steps.pool import priced_step_scenario
from spare_theory.traces.plans import groups_hit
from spare_theory.traces.pools import log_spares, replayed_shortage, replayed_spares

LOG = st.infinitehbd_failure_log()
COSTS = dict(restart_minutes=60, checkpoint_minutes=5, work_hours=720)


def build(**kw):
    return LOG.scenario(gpus=100_000, gpus_per_group=2048, **COSTS, **kw)


def test_every_field_set_from_the_log_says_where_it_came_from():
    sc = build(spare_nodes=400, swap_minutes=30)
    said = dict(sc.provenance)
    for name in (
        "gpu_mtbf_hours",
        "failure_law",
        "weibull_shape",
        "renewal",
        "lemon_fraction",
        "lemon_rate_factor",
        "domain_size",
        "domain_mtbf_hours",
        "repair_minutes",
        "repair_law",
    ):
        assert said.get(name), name
    assert sc.spare_nodes == 400 and sc.gpus_per_node == 8
    # Provenance is not compared: the same fields are the same scenario.
    assert dataclasses.replace(sc, provenance=()) == sc


def test_the_rate_comes_from_the_log_and_only_the_shape_from_the_fit():
    nu, g = LOG.failure_rate, 256
    plain = build(law="exponential", lemons=False, bursts=False)
    assert plain.group_failure_rate_per_hour == pytest.approx(g * nu, rel=1e-12)
    weibull = build(lemons=False, bursts=False)
    assert weibull.weibull_shape == LOG.fit_lifetime("weibull").parameters["shape"]
    # Node clocks: a group fails at g times the node rate, whatever the shape.
    assert weibull.group_failure_rate_per_hour == pytest.approx(g * nu, rel=1e-9)
    # The published convention: the minimum of g node laws, g^(1/k - 1) times as often.
    k = weibull.weibull_shape
    grouped = build(lemons=False, bursts=False, renewal="group")
    assert grouped.group_failure_rate_per_hour / (g * nu) == pytest.approx(
        g ** (1 / k - 1), rel=1e-6
    )


def test_bursts_and_lemons_keep_the_cluster_failure_count():
    full = build()
    b = LOG.bursts(window_minutes=5.0)
    nodes = full.groups * 256
    hit = groups_hit(400, 256, b.mean_burst_size)
    expected = (
        nodes * LOG.failure_rate * (1 - b.share) + nodes * b.bursts / LOG.exposure_hours * hit
    )
    # Up to the whole count of lemons the N groups hold (Scenario.lemon_share, round(phi N)
    # of N: what the simulation plays and the model prices), the log's count is kept.
    c = full.lemon_rate_factor
    rounding = (
        abs(full.lemon_share - full.lemon_fraction) * (c - 1) / (1 + (c - 1) * full.lemon_fraction)
    )
    assert cluster_node_failure_rate(full) == pytest.approx(expected, rel=rounding + 1e-9)
    # One-node groups take the node fit's lemons as they are.
    h = LOG.heterogeneity()
    small = LOG.scenario(gpus=3200, gpus_per_group=8, **COSTS)
    assert small.lemon_fraction == h.lemon_fraction
    assert small.lemon_rate_factor == pytest.approx(h.lemon_rate_factor, rel=1e-12)
    # Large groups hold many lemons each: their rates hardly differ.
    assert 1.0 < full.lemon_rate_factor < 1.2
    assert mean_group_rate(full) > 0


def test_groups_hit_by_a_burst():
    assert groups_hit(400, 1, 1.0) == pytest.approx(1.0)
    assert groups_hit(400, 400, 5.0) == pytest.approx(
        # a copy spans the group boundary at a uniform offset: 1 or 2 groups
        np.mean(
            [
                sum(1 - (1 - c / 400) ** 5 for c in ([400 - o, o] if o else [400]))
                for o in range(400)
            ]
        )
    )
    assert groups_hit(400, 1, 3.0) < 3.0 < groups_hit(400, 1, 3.0) + 0.01


def test_repairs_come_from_the_log():
    sc = build()
    durations, observed = LOG.repairs()
    # The mean outage (zero-length ones count as shorter than the log's 8.64 s step).
    assert sc.repair_minutes == pytest.approx(60 * durations[observed].mean(), rel=1e-6)
    law = sc.repair_law
    assert float(law.mean()) == pytest.approx(sc.repair_minutes, rel=1e-9)
    assert float(law.median()) / 60 == pytest.approx(np.median(durations), rel=0.05)
    assert build(repair_law="exponential").repair_law == "exponential"


def test_bad_requests_name_the_argument():
    with pytest.raises(ValueError, match="gpu_mtbf_hours"):
        build(gpu_mtbf_hours=1000.0)
    with pytest.raises(ValueError, match="gpus_per_node"):
        LOG.scenario(gpus=100_000, gpus_per_group=2048, gpus_per_node=3, **COSTS)
    with pytest.raises(ValueError, match="law"):
        build(law="gamma")
    with pytest.raises(ValueError, match="renewal"):
        build(renewal="cluster")
    empty = st.FailureLog.from_frame(
        pd.DataFrame({"node": [], "start": [], "end": []}),
        nodes=10,
        observed_from=0.0,
        observed_until=100.0,
    )
    with pytest.raises(ValueError, match="no failures"):
        empty.scenario(gpus=80, gpus_per_group=8, **COSTS)


def test_step_scenario_from_the_log():
    sc = LOG.step_scenario(gpus=100_000, gpus_per_group=2048, steps=100, allreduce_seconds=1.0)
    assert sc.groups == 48 and sc.nodes_per_group == 256
    assert sc.group_mean_lifetime_seconds == pytest.approx(3600 / (256 * LOG.failure_rate))
    said = dict(sc.provenance)
    assert "StepScenario has no lemon" in said["lemons"]
    assert sc.repair_seconds == pytest.approx(3600 * LOG.fit_repair("exponential").mean_hours)


def test_pool_fields_are_checked():
    base = dict(gpus=1024, gpus_per_group=64, restart_minutes=1, checkpoint_minutes=1, work_hours=1)
    with pytest.raises(ValueError, match="repair_minutes"):
        st.Scenario(**base, spare_nodes=3, swap_minutes=5)
    with pytest.raises(ValueError, match="swap_minutes"):
        st.Scenario(**base, repair_minutes=60, spare_nodes=3)
    with pytest.raises(ValueError, match="swap_minutes"):
        st.Scenario(**base, swap_minutes=5)
    with pytest.raises(ValueError, match="gpus_per_node"):
        st.Scenario(**base, gpus_per_node=7, repair_minutes=60, spare_nodes=3, swap_minutes=5)
    with pytest.raises(ValueError, match="spare_nodes"):
        st.Scenario(**base, repair_minutes=60, spare_nodes=-1, swap_minutes=5)
    assert not st.Scenario(**base, repair_minutes=60, spare_nodes=0).pool


@pytest.mark.slow
def test_spares_for_the_shipped_trace():
    nodes = 100_000 // 8
    mean = LOG.fit_repair("exponential").mean_hours
    poisson = log_spares(LOG, gpus=100_000, probability=0.01)
    assert poisson == spares_for_shortage(nodes * LOG.failure_rate, mean, 0.01)
    # Replayed, the count in repair is over-dispersed (bursts, long repairs): more
    # failures find the Poisson-sized pool empty than the 1 % target, with 8 trials'
    # standard error.
    share, se, target = replayed_shortage(LOG, gpus=100_000, spare_nodes=poisson, trials=8, seed=0)
    assert target <= 0.01 and share - 3 * se > 0.01
    needed = replayed_spares(LOG, gpus=100_000, probability=0.01, trials=8, seed=0)
    assert needed > poisson
    again, _, _ = replayed_shortage(LOG, gpus=100_000, spare_nodes=needed, trials=8, seed=0)
    fewer, _, _ = replayed_shortage(LOG, gpus=100_000, spare_nodes=needed - 1, trials=8, seed=0)
    assert again <= 0.01 < fewer


@pytest.mark.slow
def test_step_pool_model_against_the_step_simulation():
    base = st.paper_scenario(50, steps=600)
    sc = dataclasses.replace(
        base,
        repair_seconds=7200.0,
        gpus_per_group=32,  # 4 nodes of 8 GPUs
        spare_nodes=40,
        swap_seconds=120.0,
        failure_law=stats.expon(scale=50 * 300.0),
    )
    priced = priced_step_scenario(sc)
    assert priced.spare_nodes is None and priced.repair_seconds < 600
    # SPARe (Rep's step model is itself far off on this heavily failing scenario: 2 SE
    # without a pool, a 24-run SE of 9 %).
    model = st.time_to_train(sc, "spare", r=4, checkpoint_every_steps=10).hours
    sim = st.simulate_training(sc, "spare", r=4, checkpoint_every_steps=10, trials=24, seed=2)
    mean, se = sim.mean("hours"), sim.standard_error("hours")
    assert abs(model - mean) <= max(3 * se, 0.02 * mean), (model, mean, se)
    assert math.isfinite(model)
