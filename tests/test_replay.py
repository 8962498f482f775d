"""replay_training: the event simulations driven by a log's own fault times.

The target of the issue: replaying logs *drawn from a known exponential law*
agrees with ``time_to_train`` on the same scenario within 3 standard errors
or 2 % (whichever is wider), for every strategy, with the log's repairs and
without.  The logs are drawn here, node by node: exponential up times of
mean ``1 / nu``, outages of exponential length.
"""

from __future__ import annotations

import dataclasses
import heapq

import numpy as np
import pandas as pd
import pytest

import spare_theory as st
from spare_theory.hourly.sources import FaultTable, LogFaults
from spare_theory.lifetimes.spares import spares_for_shortage
from spare_theory.traces.pools import fault_table

NODE_MTBF = 500.0  # hours up between a node's failures
WINDOW = 20_000.0  # hours of log
K, SLACK = 3.0, 0.02  # |model - replay| <= max(3 SE, 2 % of the replay)


def drawn_log(nodes: int, mean_outage: float, seed: int) -> st.FailureLog:
    """A log of ``nodes`` nodes failing after Exp(NODE_MTBF) up times, outages Exp(mean_outage)."""
    rng = np.random.default_rng(seed)
    rows = []
    for node in range(nodes):
        t = rng.exponential(NODE_MTBF)
        while t < WINDOW:
            end = t + rng.exponential(mean_outage)
            rows.append((node, t, min(end, WINDOW)))
            t = end + rng.exponential(NODE_MTBF)
    frame = pd.DataFrame(rows, columns=["node", "start", "end"])
    return st.FailureLog.from_frame(frame, nodes=nodes, observed_from=0.0, observed_until=WINDOW)


def scenario(gpus: int, gpus_per_group: int, **fields) -> st.Scenario:
    return st.Scenario(
        gpus=gpus,
        gpus_per_group=gpus_per_group,
        gpu_mtbf_hours=8 * NODE_MTBF,  # 8 GPUs per node
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=60,
        **fields,
    )


def agrees(model: float, runs) -> tuple[bool, str]:
    mean, se = runs.mean_hours, runs.standard_error_hours
    ok = abs(model - mean) <= max(K * se, SLACK * mean)
    return ok, f"model {model:.2f} h, replay {mean:.2f} +- {se:.2f} h"


PLANS = [("ckpt", None, 30.0), ("rep", 2, 60.0), ("spare", 4, 60.0)]


@pytest.fixture(scope="module")
def short_outages():
    return drawn_log(256, 0.05, seed=1)  # 3 min outages: the log's nodes are up 99.99 %


@pytest.fixture(scope="module")
def repaired():
    return drawn_log(256, 2.0, seed=2)


@pytest.mark.slow
@pytest.mark.parametrize(("strategy", "r", "tau"), PLANS)
@pytest.mark.parametrize("mapping", ["identity", "bootstrap", "nodes"])
def test_replay_of_an_exponential_log_matches_the_model(short_outages, strategy, r, tau, mapping):
    # Groups of two nodes, no repairs: a group fails at its first node's fault and
    # stays down until the next restart, as in the model.
    gpus = 256 * 8 if mapping == "identity" else 512 * 8
    sc = scenario(gpus, 16)
    model = st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=tau).hours
    runs = st.replay_training(
        short_outages,
        sc,
        strategy,
        r=r,
        checkpoint_interval_minutes=tau,
        trials=40,
        seed=3,
        mapping=mapping,
        repairs="scenario",
    )
    ok, text = agrees(model, runs)
    assert ok, text


@pytest.mark.slow
@pytest.mark.parametrize(("strategy", "r", "tau"), PLANS[1:])
def test_replay_with_the_logs_repairs_matches_the_model(repaired, strategy, r, tau):
    # One node per group, each back when the log says: exponential repairs of the
    # log's mean outage in the model.
    mean_outage = float(repaired.fit_repair("exponential").mean_hours)
    sc = scenario(256 * 8, 8, repair_minutes=60.0 * mean_outage)
    model = st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=tau).hours
    runs = st.replay_training(
        repaired, sc, strategy, r=r, checkpoint_interval_minutes=tau, trials=40, seed=4
    )
    assert runs.repairs.mean() > 10
    ok, text = agrees(model, runs)
    assert ok, text


@pytest.mark.slow
def test_replay_with_spares_matches_the_model(repaired):
    # Groups of four nodes, a pool for a 1 % shortage, the log's outages as repairs.
    mean_outage = float(repaired.fit_repair("exponential").mean_hours)
    base = scenario(1024 * 8, 32, repair_minutes=60.0 * mean_outage)
    rate = 1024 / NODE_MTBF
    spares = spares_for_shortage(rate, mean_outage, 0.01)
    sc = dataclasses.replace(base, spare_nodes=spares, swap_minutes=10.0)
    model = st.time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60.0).hours
    runs = st.replay_training(
        repaired, sc, "rep", r=2, checkpoint_interval_minutes=60.0, trials=30, seed=5
    )
    ok, text = agrees(model, runs)
    assert ok, text


def test_runs_do_not_depend_on_how_many_are_played(short_outages):
    sc = scenario(512 * 8, 16)
    kw = dict(r=2, checkpoint_interval_minutes=60.0, seed=9)
    four = st.replay_training(short_outages, sc, "rep", trials=4, **kw)
    two = st.replay_training(short_outages, sc, "rep", trials=2, **kw)
    assert np.array_equal(four.hours[:2], two.hours)


def test_faults_wrap_around_the_log_and_copies_are_shifted():
    table = FaultTable(
        np.array([1.0, 5.0]), np.array([0.5, 1.0]), np.array([0, 2]), np.array([2, 0]), 10.0
    )
    faults = LogFaults(table, 4, "bootstrap", np.random.default_rng(0))
    times = []
    for _ in range(8):
        t = faults.next_hours
        slot, duration = faults.pop()
        times.append((round(t, 9), slot, duration))
    # Slots 0 and 2 play node 0 (nodes 1 and 3 never fail): each twice per window.
    assert {slot for _, slot, _ in times} == {0, 2}
    starts = {}
    for slot in (0, 2):
        mine = np.array([t for t, s, _ in times if s == slot])
        # Outages at 1 and 5 of a 10 h window: 4 h and 6 h apart in turn, 10 h a period.
        assert set(np.round(np.diff(mine), 9)) == {4.0, 6.0}
        assert np.allclose(mine[2:] - mine[:-2], 10.0)
        starts[slot] = mine[0] % 10.0
    assert starts[0] != starts[2]  # each copy its own shift


@pytest.mark.parametrize("mapping", ["identity", "bootstrap", "nodes"])
def test_log_faults_stream_pops_as_a_heap_of_the_slots_histories(mapping):
    # Nodes 0 and 1 share outage starts (identity: one shift for all, so slots tie and
    # the slot index decides), node 0 repeats a start, nodes 2 and 3 never fail.
    starts = np.array([0.5, 2.0, 2.0, 7.0, 0.5, 2.0, 3.0])
    table = FaultTable(
        starts, np.arange(1.0, 8.0), np.array([0, 4, 7, 7]), np.array([4, 3, 0, 0]), 10.0
    )
    slots = 4 if mapping == "identity" else 9
    faults = LogFaults(table, slots, mapping, np.random.default_rng(3))
    # The reference: a heap of each slot's next fault keyed (time, slot), a wrap of the
    # history adding the window to the slot's offset.
    node, shift = table.slot_histories(slots, mapping, np.random.default_rng(3), 10.0)
    heap, state = [], {}
    for s in range(slots):
        first, end = table.offsets[node[s]], table.offsets[node[s]] + table.counts[node[s]]
        if first == end:
            continue
        k = first + np.searchsorted(starts[first:end], shift[s])
        base = -shift[s] + (10.0 if k == end else 0.0)
        k = first if k == end else k
        state[s] = [k, base, first, end]
        heap.append((starts[k] + base, s))
    heapq.heapify(heap)
    for _ in range(200):  # several windows of every slot
        t, s = heap[0]
        k, base, first, end = state[s]
        expected = (s, table.durations[k])
        k += 1
        if k == end:
            k, base = first, base + 10.0
        state[s][:2] = k, base
        heapq.heapreplace(heap, (starts[k] + base, s))
        assert faults.next_hours == t and faults.pop() == expected


def test_fault_table_of_the_shipped_trace():
    log = st.infinitehbd_failure_log()
    table = fault_table(log)
    assert table.nodes == 400 and table.outages == log.outage_count
    assert table.counts.sum() == table.outages and int((table.counts == 0).sum()) == 169
    assert np.all(table.durations >= 0) and table.window_hours == log.window_hours


def test_bad_replays_name_the_argument(short_outages):
    sc = scenario(512 * 8, 16)
    kw = dict(r=2, checkpoint_interval_minutes=60.0, trials=1, seed=0)
    with pytest.raises(ValueError, match="mapping"):
        st.replay_training(short_outages, sc, "rep", mapping="copies", **kw)
    with pytest.raises(ValueError, match="repairs"):
        st.replay_training(short_outages, sc, "rep", repairs="never", **kw)
    with pytest.raises(ValueError, match="identity"):
        st.replay_training(short_outages, sc, "rep", mapping="identity", **kw)
    with pytest.raises(ValueError, match="gpus_per_node"):
        st.replay_training(short_outages, sc, "rep", gpus_per_node=3, **kw)
    with pytest.raises(ValueError, match="checkpoint_every_steps"):
        st.replay_training(short_outages, sc, "rep", checkpoint_every_steps=5, **kw)


@pytest.mark.slow
def test_step_level_replay_of_an_exponential_log_matches_the_step_model(short_outages):
    from scipy import stats

    # 64 workers of 4 nodes: a worker's faults are its nodes' (rate 4 / NODE_MTBF).
    mean_s = 3600.0 * NODE_MTBF / 4
    sc = st.StepScenario(
        groups=64,
        steps=3000,
        allreduce_seconds=1.0,
        failure_law=stats.expon(scale=mean_s),
        gpus_per_group=32,  # 4 nodes of 8 GPUs
        restart_seconds=1200.0,
    )
    model = st.time_to_train(sc, "rep", r=2, checkpoint_every_steps=20).hours
    sim = st.replay_training(
        short_outages,
        sc,
        "rep",
        r=2,
        checkpoint_every_steps=20,
        trials=24,
        seed=6,
        repairs="scenario",
    )
    mean, se = sim.mean("hours"), sim.standard_error("hours")
    assert abs(model - mean) <= max(K * se, SLACK * mean), (model, mean, se)
