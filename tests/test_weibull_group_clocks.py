"""Weibull group clocks (``renewal="group"``) seen from a failure, through a pool, and refused.

- CKPT-only's cycle starts at a failure: its survival is the Palm law of the
  superposed clocks (:class:`~spare_theory.cycles.domains.FromFailure`), whose
  mean is the mean gap between failures, ``1 / (N (1 + (L - 1) phi))``
  lifetimes, whatever the law (Palm-Khintchine): checked by quadrature.
- The pool's down time under group clocks
  (:func:`~spare_theory.hourly.compose.pool_down_minutes`) against a direct
  event simulation of the pool alone (seeded; tolerance from its standard
  error by batch means).
- A step cost that grows with the groups down has no closed form on such
  clocks with repairs or split into micro-batches, and no strategy that
  waits for failed groups has one through a pool: ``model_refusal`` says
  so, and only there.
"""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from scenarios import SIXTEEN_GROUPS
from scipy import integrate, stats

import spare_theory as st
from spare_theory.cycles.domains import FromFailure, PooledLemons
from spare_theory.hourly.compose import pool_down_minutes
from spare_theory.lifetimes.laws import EquilibriumLifetimes, equilibrium_law

POOL = dict(
    **SIXTEEN_GROUPS,
    failure_law="weibull",
    repair_minutes=600.0,
    swap_minutes=10.0,
    spare_nodes=10,
)


@pytest.mark.parametrize(("shape", "phi", "L"), [(0.78, 0.0, 1.0), (0.5, 0.125, 5.0)])
def test_the_cycle_from_a_failure_lasts_the_mean_gap_between_failures(shape, phi, L):
    N = 16
    eq = EquilibriumLifetimes(stats.weibull_min(shape, scale=2.0))
    base = eq if phi == 0.0 else PooledLemons(phi, L, eq)
    law = FromFailure(base, N)
    mean = integrate.quad(lambda u: float(np.exp(N * law.logsf(u))), 0.0, np.inf, limit=400)[0]
    assert mean == pytest.approx(1.0 / (N * (1.0 + (L - 1.0) * phi)), rel=1e-4)
    # The stationary survival (the law before this fix) lasts longer: the inspection paradox.
    stationary = integrate.quad(lambda u: float(np.exp(N * base.logsf(u))), 0.0, np.inf)[0]
    assert stationary > 1.02 * mean


def _pool_down_hours_simulated(sc: st.Scenario, hours: float, seed: int) -> np.ndarray:
    """Mean outage of each of 10 batches of ``hours / 10`` (group clocks, the pool, no restart)."""
    law = sc.group_lifetime_law
    N, spares = sc.groups, int(sc.spare_nodes)
    repair, swap = sc.repair_minutes / 60.0, sc.swap_minutes / 60.0
    rng = np.random.default_rng(seed)
    events = [(float(t), 0, g) for g, t in enumerate(equilibrium_law(law).rvs(N, random_state=rng))]
    heapq.heapify(events)
    down, since = [False] * N, [0.0] * N
    pool, waiting = spares, []
    batches = [[0.0, 0] for _ in range(10)]
    t = 0.0
    while t < hours:
        t, kind, g = heapq.heappop(events)
        if kind == 0:  # the group's clock fires (silently while the group is down)
            heapq.heappush(events, (t + float(law.rvs(random_state=rng)), 0, g))
            if down[g]:
                continue
            down[g], since[g] = True, t
            heapq.heappush(events, (t + rng.exponential(repair), 1, -1))
            if pool > 0:
                pool -= 1
                heapq.heappush(events, (t + swap, 2, g))
            else:
                waiting.append(g)
        elif kind == 1:  # a node back from repair
            if waiting:
                heapq.heappush(events, (t + swap, 2, waiting.pop(0)))
            else:
                pool += 1
        else:  # the slot filled
            down[g] = False
            batch = batches[min(int(10 * t / hours), 9)]
            batch[0] += t - since[g]
            batch[1] += 1
    return np.array([total / count for total, count in batches])


@pytest.mark.slow
def test_the_pools_down_time_under_group_clocks_matches_a_simulation_of_the_pool():
    sc = st.Scenario(**POOL)
    batches = _pool_down_hours_simulated(sc, 40_000.0, seed=3)
    mean, se = batches.mean(), batches.std(ddof=1) / np.sqrt(batches.size)
    model = pool_down_minutes(sc) / 60.0
    assert abs(model - mean) <= max(3 * se, 0.03 * mean), (model, mean, se)


def test_group_clocks_send_a_growing_step_cost_and_a_pool_to_the_simulation():
    pooled = st.Scenario(**POOL)
    reason = st.strategy("spare").model_refusal(pooled)
    assert reason is not None and "renewal='group'" in reason and "repairs" in reason
    for name in ("rep", "elastic", "hot_spares"):  # a constant step cost, through the pool
        pool_reason = st.strategy(name).model_refusal(pooled)
        assert pool_reason is not None and "spare pool" in pool_reason
    assert st.strategy("ckpt").model_refusal(pooled) is None  # every failure a wipe-out
    unpooled = {k: v for k, v in POOL.items() if k not in ("swap_minutes", "spare_nodes")}
    unpooled.pop("repair_minutes")
    split = st.Scenario(**unpooled, microbatches=4)
    assert "micro-batches" in st.strategy("spare").model_refusal(split)
    assert st.strategy("rep").model_refusal(split) is None  # no split load
    assert st.strategy("spare").model_refusal(st.Scenario(**unpooled)) is None  # not split
    repaired = {k: v for k, v in POOL.items() if k not in ("swap_minutes", "spare_nodes")}
    assert st.strategy("rep").model_refusal(st.Scenario(**repaired)) is None  # no pool
    node = st.Scenario(**{**POOL, "renewal": "node", "gpus_per_node": 8})
    assert st.strategy("spare").model_refusal(node) is None
    no_repairs = {k: v for k, v in POOL.items() if k not in ("repair_minutes", "swap_minutes")}
    no_repairs.pop("spare_nodes")
    assert st.strategy("spare").model_refusal(st.Scenario(**no_repairs)) is None
    exponential = st.Scenario(**{**POOL, "failure_law": "exponential"})
    assert st.strategy("spare").model_refusal(exponential) is None
