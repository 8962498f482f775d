"""The compiled wipe-out event loop against the lockstep numpy simulation it replaced.

``_lockstep`` is the former ``repairs_sim._block`` (issue 22): all trials
advance one event at a time as numpy arrays, each reading its own stream
through a 256-uniform buffer.  The compiled loop must give the same hours,
failures and repairs bit for bit, for every repair law, with and without
repairs, and for trials that use many buffers.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from spare_theory._validation import as_seed_sequence, child_seed
from spare_theory.hourly.repairs_sim import repair_hours, simulate_wipeout_times
from spare_theory.hourly.scenario import Scenario
from spare_theory.strategies.registry import strategy


def _lockstep(scenario, units, size, trials, seed):
    rngs = [np.random.default_rng(child_seed(as_seed_sequence(seed), i)) for i in range(trials)]
    buffer = np.array([rng.random(256) for rng in rngs])
    used = np.zeros(trials, dtype=np.int64)

    def take(rows):
        for i in rows[used[rows] >= 256]:
            buffer[i], used[i] = rngs[i].random(256), 0
        out = buffer[rows, used[rows]]
        used[rows] += 1
        return out

    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    due, is_up = np.full((trials, N), np.inf), np.ones((trials, N), dtype=bool)
    down = np.zeros((trials, size.size), dtype=np.int64)
    f, t = np.zeros(trials, dtype=np.int64), np.zeros(trials)
    failures, repairs = np.zeros(trials, dtype=np.int64), np.zeros(trials, dtype=np.int64)
    active = np.arange(trials)
    while active.size:
        with np.errstate(divide="ignore"):
            t_fail = t[active] - np.log1p(-take(active)) / ((N - f[active]) * lam)
        g_rep = np.argmin(due[active], axis=1)
        t_rep = due[active, g_rep]
        fails = t_fail < t_rep
        rows, g = active[~fails], g_rep[~fails]
        t[rows], due[rows, g], is_up[rows, g] = t_rep[~fails], np.inf, True
        f[rows] -= 1
        repairs[rows] += 1
        for k in range(units.shape[1]):
            down[rows, units[g, k]] -= 1
        rows = active[fails]
        t[rows] = t_fail[fails]
        pick = np.floor(take(rows) * (N - f[rows])).astype(np.int64)
        g = np.argmax(np.cumsum(is_up[rows], axis=1) > pick[:, None], axis=1)
        is_up[rows, g] = False
        due[rows, g] = t[rows] + repair_hours(scenario, take(rows))
        f[rows] += 1
        failures[rows] += 1
        wiped = np.zeros(rows.size, dtype=bool)
        for k in range(units.shape[1]):
            down[rows, units[g, k]] += 1
            wiped |= down[rows, units[g, k]] >= size[units[g, k]]
        active = np.setdiff1d(active, rows[wiped], assume_unique=True)
    return t, failures, repairs


def _scenario(N, law, minutes):
    kw = dict(
        gpus=N * 8, gpus_per_group=8, gpu_mtbf_hours=200.0, restart_minutes=10,
        checkpoint_minutes=5, work_hours=100,
    )  # fmt: skip
    if law is None:
        return Scenario(**kw)
    return Scenario(**kw, repair_minutes=minutes, repair_law=law)


@pytest.mark.parametrize(
    ("law", "minutes"),
    [
        ("exponential", 240.0),
        ("fixed", 240.0),
        (stats.lognorm(0.8, scale=240.0 / np.exp(0.32)), 240.0),
        (None, None),
        ("exponential", 90.0),  # long trials: thousands of uniforms, many buffers
    ],
)
@pytest.mark.parametrize(("name", "r", "N"), [("spare", 3, 16), ("rep", 2, 16), ("ckpt", 1, 16)])
def test_compiled_loop_matches_the_lockstep_simulation(law, minutes, name, r, N):
    sc = _scenario(N, law, minutes)
    units, size = strategy(name).wipeout_units(N, r)
    new = simulate_wipeout_times(sc, units, size, 70, seed=3)  # two blocks of trials
    old = _lockstep(sc, units, size, 70, 3)
    for got, want in zip((new.hours, new.failures, new.repairs), old):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    if law == "exponential" and minutes == 90.0 and name == "spare":
        assert (new.failures + new.repairs).max() > 1024  # some trial crossed buffers
