"""Repair laws beyond their mean: the down probability and the time to wipe-out.

The model (``outages.down_probability`` and its use in ``repairs.RepairCycle``)
is checked against independent simulations: an alternating renewal process
drawn here, and the event simulation of ``repairs_sim``.
"""

import numpy as np
import pytest
from scenarios import repair_cycle_mean_hours
from scipy import stats

from spare_theory import Scenario, simulate_time_to_wipeout
from spare_theory.hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from spare_theory.lifetimes.outages import down_probability, repair_shape_sf

K_SE = 3.0


def _simulated_down(u: np.ndarray, mu: float, draw, trials: int, seed: int) -> np.ndarray:
    """Share of ``trials`` alternating up/down paths that are down at each ``u``."""
    rng = np.random.default_rng(seed)
    down = np.zeros(u.size)
    for _ in range(trials):
        t, path_down = 0.0, np.zeros(u.size, dtype=bool)
        while t <= u[-1]:
            t += rng.exponential()
            d = draw(rng) / mu
            path_down |= (u >= t) & (u < t + d)
            t += d
        down += path_down
    return down / trials


@pytest.mark.parametrize(
    "name, law, draw",
    [
        ("fixed", "fixed", lambda rng: 1.0),
        ("gamma", stats.gamma(0.5, scale=2.0), lambda rng: rng.gamma(0.5, 2.0)),
        ("uniform", stats.uniform(0, 2), lambda rng: rng.uniform(0, 2)),
    ],
)
def test_down_probability_matches_an_alternating_renewal_simulation(name, law, draw):
    mu, trials = 2.0, 4000
    u = np.array([0.1, 0.4, 0.6, 1.0, 2.0, 6.0])
    sim = _simulated_down(u, mu, draw, trials, seed=7)
    model = down_probability(u, mu, law)
    se = np.sqrt(np.maximum(sim * (1 - sim), 1e-3) / trials)
    assert np.all(np.abs(model - sim) <= K_SE * se), (name, model, sim)


def test_numerical_path_reproduces_the_exponential_closed_form():
    u = np.linspace(0, 3, 31)
    for mu in (0.3, 4.0, 200.0):
        exact = down_probability(u, mu)
        assert np.allclose(exact, (1 - np.exp(-(1 + mu) * u)) / (1 + mu))
        assert np.abs(down_probability(u, mu, stats.expon()) - exact).max() < 1e-4


def test_stationary_value_is_the_laws_mean_only():
    pi = 1 / (1 + 3.0)
    for law in ("fixed", stats.gamma(0.5), stats.lognorm(1.0)):
        assert down_probability(200.0, 3.0, law) == pytest.approx(pi, rel=1e-9)


def test_fixed_repairs_are_no_repairs_until_the_first_comes_back():
    u = np.linspace(0, 0.49, 20)
    # Up to the O(h^2) error of the linear product integration (h = 1/200 here).
    assert np.allclose(down_probability(u, 2.0, "fixed"), -np.expm1(-u), rtol=0, atol=1e-5)


def test_shape_is_in_units_of_the_mean():
    sf = repair_shape_sf(stats.expon(scale=37.0))
    assert np.allclose(sf(np.array([0.0, 1.0, 2.0])), np.exp(-np.array([0.0, 1.0, 2.0])))
    with pytest.raises(ValueError, match="repair_law"):
        repair_shape_sf("weibull")
    with pytest.raises(ValueError, match="mu"):
        down_probability(1.0, -1.0, "fixed")


def _scenario(minutes: float, law) -> Scenario:
    return Scenario(
        gpus=64 * 2048,
        gpus_per_group=2048,
        gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=100,
        repair_minutes=minutes,
        repair_law=law,
    )


@pytest.mark.parametrize(
    "strategy, r, minutes, law",
    [
        ("spare", 3, 360, "fixed"),
        ("spare", 3, 360, stats.gamma(0.5, scale=720)),
        ("spare", 2, 60, "fixed"),
        ("rep", 3, 1440, "fixed"),
        ("spare", 4, 1440, "fixed"),
    ],
)
def test_time_to_wipeout_follows_the_law_not_only_its_mean(strategy, r, minutes, law):
    sc = _scenario(minutes, law)
    sim = simulate_time_to_wipeout(sc, strategy, r=r, trials=400, seed=12)
    # The repair cycle time_to_train prices: the wipe-out door refuses SPARe with a repair
    # law other than exponential, measured off on the audit's space.
    model = repair_cycle_mean_hours(sc, strategy, r)
    assert abs(model - sim.mean_hours) <= K_SE * sim.standard_error_hours


def test_law_moves_the_slow_repair_answer():
    # Fixed 6 h repairs keep failed groups out for the first 6 h: wipe-outs come sooner
    # than with exponential repairs of the same mean, and the model says so.
    fixed = repair_cycle_mean_hours(_scenario(360, "fixed"), "spare", 3)
    expo = repair_cycle_mean_hours(_scenario(360, "exponential"), "spare", 3)
    assert fixed < 0.9 * expo


@pytest.mark.parametrize(
    "law",
    [
        stats.lognorm(1.2, scale=60.0),
        stats.lognorm(0.5, loc=3.0, scale=40.0),
        stats.gamma(0.5, scale=120.0),
        stats.weibull_min(0.7, scale=50.0),
        stats.pareto(2.5, scale=10.0),
        stats.uniform(0, 120),
        "exponential",
        "fixed",
    ],
    ids=lambda law: law if isinstance(law, str) else f"{law.dist.name}{law.args}{law.kwds}",
)
def test_the_event_loops_repair_sampler_draws_the_laws_quantiles_bit_for_bit(law):
    # The event loops draw repairs one at a time through repair_sampler, which
    # skips scipy's per-call argument checks: the draws must be ppf's own bits.
    from spare_theory.hourly.repairs_sim import repair_hours, repair_sampler

    mean = 60.0 if isinstance(law, str) else float(law.mean())
    sc = Scenario(
        gpus=64, gpus_per_group=8, restart_minutes=1, checkpoint_minutes=1, work_hours=1,
        repair_minutes=mean, repair_law=law,
    )  # fmt: skip
    q = np.random.default_rng(0).random(2000)
    draw = repair_sampler(sc)
    assert [draw(x) for x in [*q, 0.0]] == repair_hours(sc, [*q, 0.0]).tolist()
