"""The run's ends in the step-level estimate (spare_theory.steps.run_ends).

The first-passage recursion is checked against a Monte Carlo of the process it
describes (cycles that keep every interval completed before their wipe-out, a
run that ends when the intervals left are kept), on an ageing cycle where
renewal reward is off; tolerances from the Monte Carlo's standard error.
"""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from spare_theory.steps import run_ends
from spare_theory.steps.run_ends import finite_run
from spare_theory.steps.scenario import StepScenario
from spare_theory.training.estimate import time_to_train

K_SE = 4.0


def _cycle(shape, scale, size=4000):
    """``s_j``, ``U_j`` of a wipe-out time ``Weibull(shape, scale)`` in intervals (one per unit)."""
    law = stats.weibull_min(shape, scale=scale)
    j = np.arange(1, size + 1)
    grid = np.linspace(0.0, size, 40 * size + 1)
    U = np.interp(j, grid, np.concatenate([[0.0], np.cumsum(np.diff(grid) * law.sf(grid[1:]))]))
    return law, law.sf(j), U


def _monte_carlo(law, wipe_seconds, J, runs, seed, resume_survival=1.0):
    """Seconds and wipe-outs of runs of ``J`` intervals, cycle by cycle.

    A resumed cycle is wiped out at once with chance ``1 - resume_survival``; the
    first cycle starts fresh.
    """
    rng = np.random.default_rng(seed)
    left = np.full(runs, float(J))
    seconds, wipes = np.zeros(runs), np.zeros(runs)
    active = np.ones(runs, dtype=bool)
    first = True
    while active.any():
        idx = np.flatnonzero(active)
        tau = law.rvs(size=idx.size, random_state=rng)
        if not first:
            tau[rng.random(idx.size) >= resume_survival] = 0.0
        first = False
        done = tau >= left[idx]
        seconds[idx] += np.where(done, left[idx], tau + wipe_seconds)
        wipes[idx] += ~done
        left[idx] -= np.where(done, 0.0, np.floor(tau))
        active[idx[done]] = False
    return seconds, wipes


@pytest.mark.parametrize("shape, J", [(2.0, 12), (2.0, 45), (0.7, 30), (1.0, 25)])
def test_first_passage_matches_monte_carlo(shape, J):
    law, s, U = _cycle(shape, 8.0)
    wipe = 3.0
    cycle = U[-1] + wipe
    seconds, restarts = finite_run(s, U, cycle, wipe, 1.0, J)
    mc, wipes = _monte_carlo(law, wipe, J, 40_000, seed=J)
    se = mc.std(ddof=1) / np.sqrt(mc.size)
    assert abs(seconds - mc.mean()) <= K_SE * se, (seconds, mc.mean(), se)
    assert abs(restarts - wipes.mean()) <= K_SE * wipes.std(ddof=1) / np.sqrt(wipes.size)
    # Renewal reward prices whole cycles: off on an ageing cycle's short run.
    if shape > 1 and J < 20:
        assert abs(J * cycle / s.sum() - mc.mean()) > K_SE * se


@pytest.mark.parametrize("shape, J", [(2.0, 12), (1.0, 25)])
def test_the_first_cycle_starts_without_the_resume_burst(shape, J):
    # A resumed cycle is wiped out at once with chance 0.25: its table is the fresh
    # one times 0.75.  Pricing the first cycle with it too is off (checked below).
    law, s, U = _cycle(shape, 8.0)
    q0, wipe = 0.75, 3.0
    cycle = q0 * U[-1] + wipe
    seconds, restarts = finite_run(q0 * s, q0 * U, cycle, wipe, 1.0, J, resume_survival=q0)
    mc, wipes = _monte_carlo(law, wipe, J, 40_000, seed=J, resume_survival=q0)
    se = mc.std(ddof=1) / np.sqrt(mc.size)
    assert abs(seconds - mc.mean()) <= K_SE * se, (seconds, mc.mean(), se)
    assert abs(restarts - wipes.mean()) <= K_SE * wipes.std(ddof=1) / np.sqrt(wipes.size)
    burst_first = finite_run(q0 * s, q0 * U, cycle, wipe, 1.0, J)
    assert abs(burst_first[1] - wipes.mean()) > K_SE * wipes.std(ddof=1) / np.sqrt(wipes.size)


def test_blocks_agree_with_the_exact_solve(monkeypatch):
    j = np.arange(1, 30_001)
    s = np.exp(-((j / 3000.0) ** 2))
    U = np.cumsum(s)
    for J in (500.0, 5000.0, 60_000.0):
        blocked = finite_run(s, U, U[-1] + 50, 50.0, 1.0, J)
        with monkeypatch.context() as m:
            m.setattr(run_ends, "BLOCK_CYCLE", 10**9)
            exact = finite_run(s, U, U[-1] + 50, 50.0, 1.0, J)
        assert blocked[0] == pytest.approx(exact[0], rel=2.5e-3)
        assert blocked[1] == pytest.approx(exact[1], rel=1e-2, abs=2e-3)  # restarts


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="first checkpoint"):
        finite_run(np.zeros(3), np.ones(3), 1.0, 1.0, 1.0, 5.0)
    with pytest.raises(ValueError, match="resume_survival"):
        finite_run(np.ones(3), np.ones(3), 1.0, 1.0, 1.0, 5.0, resume_survival=0.0)


@pytest.mark.slow
def test_a_short_spare_run_matches_its_simulation():
    # Audit scenario 126: SPARe at r = 3 on 12 groups, about 4 cycles in the run.  Whole
    # cycles priced (renewal reward) ran +7.0 % (z = +11) here, +1.35 % at ten times the steps.
    from spare_theory import simulate_training

    sc = StepScenario(
        groups=12,
        steps=223,
        stack_seconds=54.43,
        allreduce_seconds=0.12,
        checkpoint_seconds=287.6,
        restart_seconds=678.2,
        failure_law=stats.expon(scale=15_072.5),
        gpus_per_group=32,
    )
    est = time_to_train(sc, "spare", r=3, checkpoint_every_steps=19)
    sim = simulate_training(sc, "spare", r=3, checkpoint_every_steps=19, trials=300, seed=5)
    mean, se = sim.mean("total_seconds"), sim.standard_error("total_seconds")
    assert abs(est.seconds / mean - 1) <= 0.03 or abs(est.seconds - mean) <= 3 * se
    longer = dataclasses.replace(sc, steps=2230)
    est = time_to_train(longer, "spare", r=3, checkpoint_every_steps=19)
    sim = simulate_training(longer, "spare", r=3, checkpoint_every_steps=19, trials=60, seed=5)
    mean, se = sim.mean("total_seconds"), sim.standard_error("total_seconds")
    assert abs(est.seconds / mean - 1) <= 0.03 or abs(est.seconds - mean) <= 3 * se
