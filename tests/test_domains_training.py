"""Time to train under domain failures and lemons: model, simulation, scenario fields."""

import dataclasses

import numpy as np
import pytest

from spare_theory import Scenario, optimal_plan, strategy, time_to_train
from spare_theory.cycles.domains import LemonLifetimes
from spare_theory.hourly.domains import scenario_with_domain_share
from spare_theory.hourly.domains_sim import simulate_domain_training
from spare_theory.hourly.model import evaluate_law, priced_law
from spare_theory.hourly.process import group_process


def _law(scenario, strategy, r):
    """The plan's cycle law, as the model prices it."""
    return priced_law(scenario, strategy, r)[1]


# About 17 cycles per run: the renewal limit holds to a few 0.1 %.
BASE = Scenario(
    gpus=256 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=250.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=100,
)


def test_scenario_domain_fields_default_to_todays_model():
    assert BASE.domain_size is None and BASE.domain_mtbf_hours is None
    assert BASE.lemon_fraction == 0.0 and BASE.lemon_rate_factor == 1.0
    # No domains, no lemons: exactly the plain SPARe law.
    plain = time_to_train(BASE, "spare", r=6, checkpoint_interval_minutes=30.0)
    law = strategy("spare").cycle_law(BASE.groups, 6)
    assert _law(BASE, strategy("spare"), 6) is law
    assert plain.hours == evaluate_law(group_process(BASE), law, 30.0, "spare").hours
    # s = 0 gives back the scenario without domains.
    assert scenario_with_domain_share(BASE, 16, 0.0) == BASE


@pytest.mark.parametrize(
    "fields, name",
    [
        ({"domain_size": 4}, "domain_size and domain_mtbf_hours"),
        ({"domain_mtbf_hours": 10.0}, "domain_size and domain_mtbf_hours"),
        ({"domain_size": 0, "domain_mtbf_hours": 10.0}, "domain_size"),
        ({"domain_size": 4, "domain_mtbf_hours": 0.0}, "domain_mtbf_hours"),
        ({"lemon_fraction": 1.5}, "lemon_fraction"),
        ({"lemon_rate_factor": 0.5}, "lemon_rate_factor"),
    ],
)
def test_scenario_domain_fields_bad_input(fields, name):
    with pytest.raises(ValueError, match=name):
        Scenario(
            gpus=2048,
            gpus_per_group=8,
            restart_minutes=20,
            checkpoint_minutes=5,
            work_hours=10,
            **fields,
        )


def test_lemon_lifetimes_invert():
    law = LemonLifetimes(0.1, 20.0)
    u = np.array([0.0, 1e-4, 0.05, 0.5, 3.0])
    assert np.allclose(law.ppf(law.cdf(u)), u, atol=1e-12)
    # The mixture: a tenth of the groups at 20x the rate.
    assert np.allclose(law.cdf(u), 0.1 * -np.expm1(-20 * u) + 0.9 * -np.expm1(-u))


def test_model_folds_lemons_into_the_rate_beside_domains():
    sc = Scenario(
        gpus=2048,
        gpus_per_group=8,
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=10,
        domain_size=16,
        domain_mtbf_hours=1000.0,
        lemon_fraction=0.1,
        lemon_rate_factor=5.0,
    )
    # Domains and lemons together: the lemons' mean factor on the groups' own rate
    # (hourly.compose, step 3), the domain law kept.
    law = _law(sc, strategy("spare"), 6)
    folded = dataclasses.replace(
        sc, gpu_mtbf_hours=sc.gpu_mtbf_hours / 1.4, lemon_fraction=0.0, lemon_rate_factor=1.0
    )
    assert type(law).__name__ == "DomainSpare"
    assert law.cache_key() == _law(folded, strategy("spare"), 6).cache_key()


# Model against the event simulation.  The model takes S* = ceil(N/(N-f)) and,
# under domains, does not re-weight the failures of a row by survival
# (module docstring): a bias measured at 0.2-0.5 % of the hours.  Tolerance:
# 4 SE + 0.6 %.
@pytest.mark.slow
@pytest.mark.parametrize("m, s", [(16, 0.3), (4, 0.5)])
def test_domain_model_matches_simulation(m, s):
    sc = scenario_with_domain_share(BASE, m, s)
    model = time_to_train(sc, "spare", r=6, checkpoint_interval_minutes=30.0).hours
    sim = simulate_domain_training(sc, 6, 30.0, 40, seed=m)
    assert abs(model - sim.mean_hours) <= 4 * sim.standard_error_hours + 0.006 * model


@pytest.mark.slow
def test_lemon_model_matches_simulation():
    sc = Scenario(
        gpus=256 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=250.0,
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=100,
        lemon_fraction=0.1,
        lemon_rate_factor=10.0,
    )
    model = time_to_train(sc, "spare", r=6, checkpoint_interval_minutes=30.0).hours
    sim = simulate_domain_training(sc, 6, 30.0, 40, seed=3)
    assert abs(model - sim.mean_hours) <= 4 * sim.standard_error_hours + 0.006 * model
    assert (
        model > time_to_train(BASE, "spare", r=6, checkpoint_interval_minutes=30.0).hours
    )  # lemons cost time


@pytest.mark.slow
def test_excluding_failing_groups_removes_lemons():
    sc = Scenario(
        gpus=256 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=250.0,
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=100,
        lemon_fraction=0.2,
        lemon_rate_factor=20.0,
    )
    keep = simulate_domain_training(sc, 6, 30.0, 30, seed=4)
    drop = simulate_domain_training(sc, 6, 30.0, 30, seed=4, exclude_after=3)
    assert drop.exclusions.min() > 0 and keep.exclusions.max() == 0
    se = np.hypot(keep.standard_error_hours, drop.standard_error_hours)
    assert keep.mean_hours - drop.mean_hours > 3 * se  # 3 SE


@pytest.mark.slow
def test_domain_plan_picks_the_smallest_hours():
    sc = scenario_with_domain_share(BASE, 16, 0.3)
    plan = optimal_plan(sc, "spare", r_values=[5, 6, 8])
    assert plan.r_values.tolist() == [5, 6, 8]
    by_r = [time_to_train(sc, "spare", r=r).hours for r in (5, 6, 8)]
    assert plan.hours_by_r.tolist() == by_r and plan.hours == min(by_r)


def test_simulation_pool_and_bad_input():
    sc = scenario_with_domain_share(BASE, 16, 0.3)
    a = simulate_domain_training(sc, 6, 30.0, 3, seed=0, pool_size=8)
    b = simulate_domain_training(sc, 6, 30.0, 3, seed=0, pool_size=8)
    assert np.array_equal(a.hours, b.hours)
    lemon = Scenario(
        gpus=2048,
        gpus_per_group=8,
        restart_minutes=20,
        checkpoint_minutes=5,
        work_hours=10,
        lemon_fraction=0.1,
        lemon_rate_factor=2.0,
    )
    with pytest.raises(ValueError, match="pool_size"):
        simulate_domain_training(lemon, 6, 30.0, 1, seed=0, pool_size=4)
    with pytest.raises(ValueError, match="placement"):
        simulate_domain_training(sc, 6, 30.0, 1, seed=0, placement="diagonal")
    with pytest.raises(ValueError, match="exclude_after"):
        simulate_domain_training(sc, 6, 30.0, 1, seed=0, exclude_after=0)
