"""The replay world's spare pool against a plain event list that plays every event.

:class:`~spare_theory.hourly.sources.NodeWorld` drops the fills a restart
voids and counts a node back from repair into the pool only when a failure
asks, unless a slot waits for it.  The reference here plays every event
from one heap (slot fills, nodes back, faults, a fill before a node back and
both before a fault at the same instant) and voids the fills of an earlier
cycle by a restart count.  Both read the same fault stream (a second
:class:`~spare_theory.hourly.sources.LogFaults` on the same seed), so the
groups that fail and come back, and when, must agree exactly.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np
import pytest

import spare_theory as st
from spare_theory.hourly.sources import FaultTable, LogFaults, NodeWorld, Replay

NODES, WINDOW_HOURS = 12, 500.0


def _table(seed: int) -> FaultTable:
    """A small log: 12 nodes, outages of 1-80 h, so that the pool often runs dry."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(2, 9, NODES)
    starts = np.concatenate([np.sort(rng.uniform(0, WINDOW_HOURS, c)) for c in counts])
    durations = rng.uniform(1.0, 80.0, starts.size)
    offsets = np.cumsum(counts) - counts
    return FaultTable(starts, durations, offsets, counts, WINDOW_HOURS)


def _scenario(spares: int) -> st.Scenario:
    # 6 groups of 2 nodes: 12 slots, the log's 12 nodes once each.
    return st.Scenario(
        gpus=96,
        gpus_per_group=16,
        gpu_mtbf_hours=1000.0,
        restart_minutes=30,
        checkpoint_minutes=5,
        work_hours=10,
        repair_minutes=600.0,
        spare_nodes=spares,
        swap_minutes=45.0,
    )


def _reference(table, slots, per_group, spares, swap, restarts, until, seed):
    """(time, "fail" or "back", group) of every group event, every event played."""
    faults = LogFaults(table, slots, "identity", np.random.default_rng(seed))
    events: list = []  # (time, kind 0 fill / 1 node back, slot, cycle)
    pool, waiting, cycle = spares, deque(), 0
    down, missing = [False] * slots, [0] * (slots // per_group)
    out, t = [], 0.0
    restarts = list(restarts)
    while t < until:
        fault = faults.next_hours
        nxt = min(fault, events[0][0] if events else math.inf)
        if restarts and restarts[0] <= nxt:
            t = restarts.pop(0)
            pool -= len(waiting)
            waiting.clear()
            down, missing = [False] * slots, [0] * (slots // per_group)
            cycle += 1
            continue
        if events and events[0][0] <= fault:
            t, kind, slot, when = heapq.heappop(events)
            if kind == 1:
                if waiting:
                    heapq.heappush(events, (t + swap, 0, waiting.popleft(), cycle))
                else:
                    pool += 1
            elif when == cycle and down[slot]:
                down[slot] = False
                g = slot // per_group
                missing[g] -= 1
                if missing[g] == 0:
                    out.append((t, "back", g))
            continue
        t = fault
        slot, repair = faults.pop()
        if down[slot]:
            continue
        down[slot] = True
        g = slot // per_group
        missing[g] += 1
        if missing[g] == 1:
            out.append((t, "fail", g))
        heapq.heappush(events, (t + repair, 1, -1, 0))
        if pool > 0:
            pool -= 1
            heapq.heappush(events, (t + swap, 0, slot, cycle))
        else:
            waiting.append(slot)
    return out


def _world(table, sc, restarts, until, seed):
    """The same record from NodeWorld, driven as the simulation drives it."""
    world = NodeWorld(sc, np.random.default_rng(seed), Replay(table, "identity", "log"))
    world.cycle(0.0, returns=True)
    out, t, healthy = [], 0.0, sc.groups
    restarts = list(restarts)
    while t < until:
        nxt = world.next_time(t, healthy)
        due = world.due[0][0] if world.due else math.inf
        if restarts and restarts[0] <= min(nxt, due):
            t = restarts.pop(0)
            world.cycle(t, returns=True)
            healthy = sc.groups
            continue
        if due <= nxt:
            t, g = heapq.heappop(world.due)
            world.restore(g, healthy)
            healthy += 1
            out.append((t, "back", g))
            continue
        t = nxt
        g = world.pick(healthy)
        if g is not None:
            healthy -= 1
            out.append((t, "fail", g))
    return out


@pytest.mark.parametrize(("spares", "seed"), [(1, 1), (1, 2), (2, 3), (4, 4)])
def test_the_pool_plays_as_a_list_of_every_event(spares, seed):
    table, sc = _table(seed), _scenario(spares)
    restarts = (140.0, 333.3, 700.0)  # each voids the fills scheduled before it
    until = 2.5 * WINDOW_HOURS
    expected = _reference(table, 12, 2, spares, 0.75, restarts, until, seed)
    got = _world(table, sc, restarts, until, seed)
    assert len(expected) > 60  # groups failed and came back many times
    assert sum(kind == "back" for _, kind, _ in expected) > 20
    # The two loops stop at different events past ``until``: compare those before it.
    assert [e for e in got if e[0] < until] == [e for e in expected if e[0] < until]
