"""Non-exponential failure laws in the hours-based Scenario: model, simulation, checks."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from spare_theory import Scenario, simulate_training, time_to_train
from spare_theory.lifetimes.laws import EquilibriumLifetimes, equilibrium_law, minimum_law

BASE = dict(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5)


def test_weibull_group_law_is_the_minimum_of_gpu_weibulls():
    sc = Scenario(**BASE, gpu_mtbf_hours=300.0, work_hours=10, failure_law="weibull")
    k, M = 0.78, 8
    gpu_scale = 300.0 / math.gamma(1 + 1 / k)
    law = sc.group_lifetime_law
    t = np.array([0.5, 5.0, 50.0])
    assert np.allclose(law.sf(t), stats.weibull_min(k, scale=gpu_scale).sf(t) ** M, rtol=1e-12)
    # The same law given as a frozen distribution (general path, sf^M numerically).
    frozen = Scenario(
        **BASE,
        work_hours=10,
        failure_law=stats.weibull_min(k, scale=gpu_scale),
    )
    assert frozen.group_failure_rate_per_hour == pytest.approx(
        sc.group_failure_rate_per_hour, rel=1e-7
    )


def test_equilibrium_law_tabulated_matches_quadrature():
    law = stats.gamma(0.7, scale=3.0)
    eq = equilibrium_law(law)
    for t in (0.1, 1.0, 5.0):
        exact = integrate.quad(law.sf, 0, t)[0] / law.mean()
        assert float(eq.cdf(t)) == pytest.approx(exact, rel=1e-4)
    m = minimum_law(law, 4)
    assert float(m.ppf(m.cdf(1.3))) == pytest.approx(1.3, rel=1e-9)
    lt = EquilibriumLifetimes(stats.weibull_min(0.78, scale=1.0))
    assert float(lt.cdf(1e-6)) == pytest.approx(1e-6, rel=1e-2)  # Palm-Khintchine: rate 1


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(failure_law="lognormal"), "failure_law"),
        (dict(failure_law=stats.norm(1.0, 1.0)), "failure_law"),
        (dict(failure_law="weibull", weibull_shape=0.0), "weibull_shape"),
        (dict(failure_law="weibull", renewal="nodes"), "renewal"),
    ],
)
def test_bad_failure_laws_name_the_field(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Scenario(**BASE, gpu_mtbf_hours=300.0, work_hours=10, **kwargs)


def test_weibull_rejects_pool_and_prices_microbatches():
    sc = Scenario(**BASE, gpu_mtbf_hours=300.0, work_hours=10, failure_law="weibull")
    with pytest.raises(ValueError, match="pool"):
        simulate_training(
            sc,
            "spare",
            r=4,
            checkpoint_interval_minutes=30.0,
            trials=1,
            seed=0,
            overhead_source="pool",
        )
    # Splitting under stationary Weibull clocks: the load model on the same law.
    split = time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=30.0, microbatches=2).hours
    assert split < time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=30.0).hours


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"weibull_shape": 0.5}, "weibull_shape"),
        ({"repair_law": "fixed"}, "repair_law"),
        ({"lemon_rate_factor": 3.0}, "lemon_rate_factor"),
    ],
)
def test_a_dependent_field_without_the_field_it_needs_is_refused(fields, name):
    # Each was dropped without a word (issue 41): a shape without a Weibull law,
    # a repair law without repairs, a lemon rate without lemons.
    with pytest.raises(ValueError, match=name):
        Scenario(**BASE, gpu_mtbf_hours=300.0, work_hours=20, **fields)


WEIBULL = Scenario(
    **BASE, gpu_mtbf_hours=300.0, work_hours=80, failure_law="weibull"
)  # N = 64, cluster MTBF ~ 17 min, 10-1400 restarts per run


@pytest.mark.parametrize("strategy, r", [("ckpt", None), ("rep", 2), ("rep", 3)])
def test_weibull_model_agrees_with_simulation(strategy, r):
    """Where the stationary-clock model claims it: within 2 % or 3 SE (k = 3)."""
    est = time_to_train(WEIBULL, strategy, r=r)
    sim = simulate_training(
        WEIBULL,
        strategy,
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=30,
        seed=7,
    )
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= max(0.02 * sim.mean_hours, 3 * sim.standard_error_hours)


@pytest.mark.parametrize("r", [4, 6])
def test_weibull_spare_known_bias(r):
    """Known bias (docs/theory.md section 4): the model is high for SPARe under shape 0.78.

    Groups that failed in the last cycle restart with young clocks (elevated
    hazard for shape < 1), so failures repeat on groups already down and
    fewer distinct groups fail than the stationary model assumes: measured
    +3.2 % (r = 4) and +4.1 % (r = 6) against +0.7 % and +1.2 % for the
    exponential law in the same scenario.  The test pins the sign and a
    bound, so a fix (or a regression) shows.
    """
    est = time_to_train(WEIBULL, "spare", r=r)
    sim = simulate_training(
        WEIBULL,
        "spare",
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=30,
        seed=7,
    )
    bias = est.hours / sim.mean_hours - 1
    se = sim.standard_error_hours / sim.mean_hours
    assert bias > 0
    assert bias <= 0.06 + 3 * se
