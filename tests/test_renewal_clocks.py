"""RenewalClocks: the one renewal-clock class of both event simulations.

Each mode is checked against a direct computation from an identically seeded
generator: the step simulator's (fresh clocks from the batch stream, batches
of 4096, lifetimes floored at 1e-9 s, drawn when a request does not fit, the
rest of the batch kept in front) and the hour simulation's (clocks in
equilibrium, batches of 1024, the earliest healthy expiry found through a
heap of ``(expiry, group)``, down groups renewed silently).  Exact equality:
the stream consumed must be the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import spare_theory as st
from spare_theory.lifetimes.clocks import RenewalClocks
from spare_theory.lifetimes.laws import equilibrium_law

WEIBULL = stats.weibull_min(0.78, scale=40.0)


def test_fresh_clocks_take_the_batch_stream_in_order():
    rng, ref = np.random.default_rng(3), np.random.default_rng(3)
    clocks = RenewalClocks(WEIBULL, 5, rng, batch=8, floor=1e-9)
    first = np.maximum(WEIBULL.rvs(size=8, random_state=ref), 1e-9)
    np.testing.assert_array_equal(clocks.next, first[:5])
    clocks.renew(2, 10.0)
    assert clocks.next[2] == 10.0 + first[5]
    # Another consumer of the same generator before the next batch is drawn:
    # the batch comes after it, when a request no longer fits.
    assert rng.standard_normal() == ref.standard_normal()
    idx, at = np.array([0, 1, 3]), np.array([1.0, 2.0, 3.0])
    clocks.renew(idx, at)
    second = np.maximum(WEIBULL.rvs(size=8, random_state=ref), 1e-9)
    np.testing.assert_array_equal(clocks.next[idx], at + np.array([first[6], first[7], second[0]]))
    assert clocks.draw(1)[0] == second[1]


def test_a_request_larger_than_the_batch_draws_it_whole():
    rng, ref = np.random.default_rng(4), np.random.default_rng(4)
    clocks = RenewalClocks(WEIBULL, 12, rng, batch=8)
    np.testing.assert_array_equal(clocks.next, WEIBULL.rvs(size=12, random_state=ref))
    np.testing.assert_array_equal(clocks.draw(3), WEIBULL.rvs(size=8, random_state=ref)[:3])


def test_floor_applies_to_every_lifetime():
    tiny = stats.expon(scale=1e-9)
    rng, ref = np.random.default_rng(5), np.random.default_rng(5)
    clocks = RenewalClocks(tiny, 50, rng, batch=64, floor=1e-9)
    draws = tiny.rvs(size=64, random_state=ref)
    assert (draws < 1e-9).any()
    np.testing.assert_array_equal(clocks.next, np.maximum(draws[:50], 1e-9))


@pytest.mark.parametrize("law", [WEIBULL, stats.gamma(0.5, scale=3.0), stats.expon(scale=2.0)])
def test_equilibrium_clocks_and_the_heap(law):
    N, batch = 6, 16
    rng, ref = np.random.default_rng(7), np.random.default_rng(7)
    clocks = RenewalClocks(law, N, rng, batch=batch, start="equilibrium")
    expiry = np.asarray(equilibrium_law(law).rvs(size=N, random_state=ref), dtype=float)
    np.testing.assert_array_equal(clocks.next, expiry)
    lives = np.concatenate([law.rvs(size=batch, random_state=ref) for _ in range(40)])
    used = 0
    down = np.array([False, True, False, False, True, False])
    for step in range(150):
        if step == 75:
            down[1] = False  # a repaired group is healthy again
        t, g = clocks.next_healthy(down)
        # Direct: renew the earliest clock while its group is down, in (expiry, group) order.
        while True:
            earliest = min(range(N), key=lambda h: (expiry[h], h))
            if not down[earliest]:
                break
            expiry[earliest] += lives[used]
            used += 1
        assert (t, g) == (expiry[earliest], earliest)
        assert clocks.fire() == earliest
        expiry[earliest] += lives[used]
        used += 1
    assert used > 2 * batch  # several batches were drawn
    np.testing.assert_array_equal(clocks.next, expiry)


def test_renew_after_the_heap_rebuilds_it():
    clocks = RenewalClocks(WEIBULL, 4, np.random.default_rng(8), batch=32)
    clocks.fire()
    clocks.renew(np.arange(4), np.zeros(4))  # every clock restarted at 0
    t, g = clocks.next_healthy(np.zeros(4, dtype=bool))
    assert (t, g) == (float(clocks.next.min()), int(np.argmin(clocks.next)))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"groups": 0}, "groups"),
        ({"batch": 0}, "batch"),
        ({"floor": -1.0}, "floor"),
        ({"start": "warm"}, "start"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, name):
    args = {"groups": 3, **kwargs}
    groups = args.pop("groups")
    with pytest.raises(ValueError, match=name):
        RenewalClocks(WEIBULL, groups, np.random.default_rng(0), **args)


@pytest.mark.slow
def test_renewal_clocks_lose_no_failure_at_a_wipe_out():
    # CKPT-only with free restarts and checkpoints: every failure is a restart and wall time
    # runs on, so restarts over hours is the cluster's failure rate N lambda (16 groups of
    # 8 GPUs at 128 h each: 1 an hour), whatever path the clocks take.  Given the hours the
    # count is Poisson, so the tolerance is 4 of its standard deviations.  The clocks used to
    # renew the just-failed group's clock unfired at a wipe-out: 1 failure in 16 lost, 8 SD.
    sc = st.Scenario(
        gpus=16 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=128.0,
        restart_minutes=0,
        checkpoint_minutes=0,
        work_hours=100,
        failure_law=stats.weibull_min(1.0, scale=128.0),
    )
    runs = st.simulate_training(sc, "ckpt", checkpoint_interval_minutes=30.0, trials=40, seed=3)
    failures, hours = runs.restarts.sum(), runs.hours.sum()
    rate = 16 * 8 / 128.0
    assert abs(failures - rate * hours) <= 4 * np.sqrt(rate * hours)
