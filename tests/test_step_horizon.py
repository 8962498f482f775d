"""Step-level runs take a horizon, as hour-level ones do: a hopeless plan ends in bounded time."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from spare_theory.steps.scenario import StepScenario
from spare_theory.training.resolve import resolve
from spare_theory.training.simulate import simulate_steps_job

# 30 groups failing every 2 h each (cluster MTBF 4 min) over 200 steps of 60 s with no
# checkpoint before the end: CKPT-only restarts long before it finishes a run, every time.
HOPELESS = StepScenario(
    groups=30,
    steps=200,
    stack_seconds=60.0,
    allreduce_seconds=0.3,
    restart_seconds=300.0,
    failure_law=stats.expon(scale=7200.0),
)


def test_a_run_that_never_finishes_stops_at_the_horizon_with_infinite_hours():
    resolved = resolve(HOPELESS, "ckpt", checkpoint_every_steps=200)
    sim = simulate_steps_job(resolved, trials=3, seed=1, max_hours=20.0)
    assert np.isinf(sim.hours).all()
    assert math.isinf(sim.mean("hours"))
    assert (sim.restarts > 0).all()


def test_a_far_horizon_changes_nothing():
    resolved = resolve(HOPELESS, "spare", r=3, checkpoint_every_steps=10)
    free = simulate_steps_job(resolved, trials=3, seed=2)
    far = simulate_steps_job(resolved, trials=3, seed=2, max_hours=10 * float(free.hours.max()))
    np.testing.assert_array_equal(free.hours, far.hours)
    near = simulate_steps_job(resolved, trials=3, seed=2, max_hours=0.5 * float(free.hours.min()))
    assert np.isinf(near.hours).all()
