"""The spare-node pool: closed forms (Palm, PASTA, Little) against an independent event simulation.

Every comparison allows k = 3 standard errors of the simulated mean (over
independent trials).  The simulation's failure rate drops slightly while
slots wait for a node (the closed forms hold it constant); the parameters
keep the waiting slots under 1 % of the nodes, so that bias stays well under
one standard error.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from spare_theory.lifetimes.spares import (
    group_down_hours,
    group_whole_probability,
    nodes_in_repair_law,
    shortage_probability,
    spare_wait_hours,
    spares_for_shortage,
)
from spare_theory.lifetimes.spares_sim import simulate_spare_pool
from spare_theory.traces.failure_log import infinitehbd_failure_log

K = 3.0
SWAP_MINUTES = 30.0


def _fitted_repair_law():
    """The Weibull law fitted to the shipped trace's repair times (best by AIC), hours."""
    return infinitehbd_failure_log().fit_repair("weibull").distribution


# (groups, group nodes, cluster failure rate /h, repair law, its mean or None, spares,
#  window hours, trials, warm-up hours)
CASES = {
    "exponential": (100, 10, 0.8, "exponential", 10.0, 8, 3000.0, 12, None),
    "fixed": (100, 10, 0.8, "fixed", 10.0, 8, 3000.0, 12, None),
    "lognormal": (
        100,
        10,
        0.8,
        stats.lognorm(1.5, scale=10.0 / np.exp(1.5**2 / 2)),
        None,
        8,
        3000.0,
        12,
        None,
    ),
    # Heavy tail (shape 0.42, mean 131 h, mean residual ~ 600 h): longer windows and warm-up.
    "fitted": (200, 5, 10 / 130.7, "trace", None, 12, 60_000.0, 16, 10_000.0),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    groups, size, rate, law, mean, spares, hours, trials, warmup = CASES[request.param]
    if law == "trace":
        law = _fitted_repair_law()
    samples = simulate_spare_pool(
        groups=groups,
        group_nodes=size,
        failure_rate_per_hour=rate,
        repair_law=law,
        mean_repair_hours=mean,
        spare_nodes=spares,
        swap_minutes=SWAP_MINUTES,
        hours=hours,
        trials=trials,
        seed=2024,
        warmup_hours=warmup,
    )
    repair = mean if mean is not None else float(law.mean())
    return samples, groups * size, size, rate, repair, spares


def _close(samples, name, expected):
    mean, se = samples.mean(name), samples.standard_error(name)
    assert abs(mean - expected) <= K * se, (name, mean, se, expected)


def test_nodes_in_repair_is_poisson_whatever_the_repair_law(case):
    samples, _, _, rate, repair, _ = case
    _close(samples, "mean_in_repair", float(nodes_in_repair_law(rate, repair).mean()))


def test_a_failure_finds_the_pool_empty_as_often_as_time_does(case):
    samples, _, _, rate, repair, spares = case
    expected = shortage_probability(rate, repair, spares)
    _close(samples, "shortage_share", expected)  # what failures see (PASTA)
    _close(samples, "time_short_share", expected)  # the share of time


def test_slot_fill_time_is_swap_plus_littles_wait(case):
    samples, _, _, rate, repair, spares = case
    _close(samples, "fill_hours", SWAP_MINUTES / 60 + spare_wait_hours(rate, repair, spares))


def test_group_down_time_and_whole_share(case):
    samples, nodes, size, rate, repair, spares = case
    kw = dict(swap_minutes=SWAP_MINUTES, group_nodes=size, nodes=nodes)
    _close(samples, "down_hours", group_down_hours(rate, repair, spares, **kw))
    _close(samples, "whole_share", group_whole_probability(rate, repair, spares, **kw))


def test_mean_waiting_slots_is_the_poisson_sum():
    # E[(N - S)^+] by direct summation of the Poisson law, against the closed form.
    rate, repair = 0.37, 41.0
    m = rate * repair
    k = np.arange(0, 400)
    for spares in (0, 3, 15, 30):
        direct = float((np.maximum(k - spares, 0) * stats.poisson.pmf(k, m)).sum())
        assert spare_wait_hours(rate, repair, spares) == pytest.approx(direct / rate, rel=1e-12)
    assert spare_wait_hours(rate, repair, 0) == pytest.approx(repair, rel=1e-14)


@pytest.mark.parametrize("mean", [0.05, 3.0, 250.0, 1774.0])
@pytest.mark.parametrize("probability", [0.5, 0.01, 0.001, 1e-9])
def test_spares_for_shortage_is_the_least_count(mean, probability):
    spares = spares_for_shortage(mean, 1.0, probability)
    assert shortage_probability(mean, 1.0, spares) <= probability
    if spares:
        assert shortage_probability(mean, 1.0, spares - 1) > probability
    # Brute force over every count.
    counts = np.arange(0, spares + 50)
    first = int(np.argmax(stats.poisson.sf(counts - 1, mean) <= probability))
    assert spares == first


def test_shortage_probability_broadcasts():
    out = shortage_probability([0.1, 0.2], 50.0, [[5], [10]])
    assert out.shape == (2, 2)
    assert out[1, 0] == pytest.approx(stats.poisson.sf(9, 5.0))


def test_one_node_groups_are_down_for_one_fill():
    assert group_down_hours(
        0.5, 20.0, 3, swap_minutes=12.0, group_nodes=1, nodes=100
    ) == pytest.approx(0.2 + spare_wait_hours(0.5, 20.0, 3))


def test_a_hopeless_pool_is_never_whole_and_never_nan():
    kw = dict(swap_minutes=30.0, group_nodes=4096, nodes=75_000)
    assert group_down_hours(100.0, 5000.0, 0, **kw) == np.inf
    assert group_whole_probability(100.0, 5000.0, 0, **kw) == 0.0


POOL = dict(
    groups=2,
    group_nodes=2,
    failure_rate_per_hour=1.0,
    repair_law="exponential",
    mean_repair_hours=None,
    spare_nodes=1,
    swap_minutes=1.0,
    hours=10.0,
    trials=2,
    seed=0,
)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: nodes_in_repair_law(-1.0, 5.0), "failure_rate_per_hour"),
        (lambda: shortage_probability(1.0, float("nan"), 3), "mean_repair_hours"),
        (lambda: shortage_probability(1.0, 5.0, 2.5), "spare_nodes"),
        (lambda: spares_for_shortage(1.0, 5.0, 1.0), "probability"),
        (lambda: spares_for_shortage(1.0, 5.0, 0.0), "probability"),
        (lambda: spare_wait_hours(0.0, 5.0, 3), "failure_rate_per_hour"),
        (
            lambda: group_down_hours(1.0, 5.0, 3, swap_minutes=1, group_nodes=9, nodes=8),
            "group_nodes",
        ),
        (
            lambda: group_down_hours(1.0, 5.0, 3, swap_minutes=-1, group_nodes=2, nodes=8),
            "swap_minutes",
        ),
        (lambda: simulate_spare_pool(**{**POOL, "repair_law": "fixed"}), "mean_repair_hours"),
        (lambda: simulate_spare_pool(**{**POOL, "repair_law": "weibull"}), "repair_law"),
        (lambda: simulate_spare_pool(**{**POOL, "hours": 0.0}), "hours"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_simulation_is_seeded_per_trial():
    kw = dict(
        groups=10,
        group_nodes=3,
        failure_rate_per_hour=0.5,
        repair_law="exponential",
        mean_repair_hours=5.0,
        spare_nodes=2,
        swap_minutes=6.0,
        hours=300.0,
        seed=9,
    )
    few, many = simulate_spare_pool(trials=2, **kw), simulate_spare_pool(trials=4, **kw)
    np.testing.assert_array_equal(few.fill_hours, many.fill_hours[:2])
    assert not np.array_equal(many.fill_hours[:2], many.fill_hours[2:])


def _waiting_with_restarts(rate, repair, spares, restart, hours, seed):
    """Time-average slots waiting, by the training simulation's pool rule, and its SE.

    Nodes in repair: births ``rate``, deaths ``n / repair`` (exponential repairs).  A
    failure takes a spare while the pool count is positive, else waits; a node back
    serves a waiting slot first, else adds to the count; a restart (rate ``1/restart``)
    fills every waiting slot and takes as many from the count (``hourly.sources``).
    """
    rng = np.random.default_rng(seed)
    n = int(rng.poisson(rate * repair))
    pool, waiting, t, area = spares - n, max(n - spares, 0), 0.0, []
    pool = max(pool, 0)  # a stationary start without restarts: (n - S)^+ wait
    batch, acc = hours / 40, 0.0
    edge = batch
    while t < hours:
        total = rate + n / repair + 1.0 / restart
        step = rng.exponential(1.0 / total)
        while t + step >= edge and edge <= hours:  # batch means for the SE
            acc += waiting * (edge - t)
            step -= edge - t
            t = edge
            area.append(acc / batch)
            acc, edge = 0.0, edge + batch
        acc += waiting * step
        t += step
        u = rng.random() * total
        if u < rate:
            n += 1
            if pool > 0:
                pool -= 1
            else:
                waiting += 1
        elif u < rate + n / repair:
            n -= 1
            if waiting:
                waiting -= 1
            else:
                pool += 1
        else:
            pool -= waiting
            waiting = 0
    means = np.asarray(area[:40])
    return means.mean(), means.std(ddof=1) / np.sqrt(means.size)


@pytest.mark.parametrize(
    "rate, repair, spares, restart",
    [(3.2, 1.3, 2, 1.0), (3.2, 1.3, 2, 0.3), (0.5, 20.0, 8, 5.0), (2.0, 4.0, 12, 2.0)],
)
def test_restarts_that_fill_waiting_slots_shorten_the_wait(rate, repair, spares, restart):
    mean, se = _waiting_with_restarts(rate, repair, spares, restart, 40_000.0, seed=spares)
    model = spare_wait_hours(rate, repair, spares, restart_every_hours=restart) * rate
    assert abs(model - mean) <= 4 * se, (model, mean, se)
    # The pool without restarts waits longer, beyond the simulation's error.
    assert spare_wait_hours(rate, repair, spares) * rate - mean > 4 * se
