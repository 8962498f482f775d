"""No front door silently ignores a scenario field: it models it or refuses it."""

from __future__ import annotations

import pytest

import spare_theory as st
from spare_theory.cycles.domains import DomainSpare
from spare_theory.hourly.model import evaluate_law
from spare_theory.hourly.process import group_process

BASE = dict(
    gpus=256 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=48,
)


@pytest.mark.slow
def test_time_to_train_models_failure_domains() -> None:
    racks = st.Scenario(**BASE, domain_size=16, domain_mtbf_hours=5000.0)
    plain = st.Scenario(**BASE)
    with_domains = st.time_to_train(racks, "spare", r=6, checkpoint_interval_minutes=60.0)
    # The domain-aware law itself (delta = rate of a domain / rate of a group), and slower
    # than without racks.
    delta = round(1.0 / (5000.0 * racks.group_failure_rate_per_hour), 12)
    law = DomainSpare(racks.groups, 6, 16, delta)
    assert with_domains.hours == evaluate_law(group_process(racks), law, 60.0, "spare").hours
    assert (
        with_domains.hours
        > st.time_to_train(plain, "spare", r=6, checkpoint_interval_minutes=60.0).hours
    )
    plan = st.optimal_plan(racks, "spare")
    assert plan.hours <= with_domains.hours


def test_lemons_change_the_estimate() -> None:
    lemons = st.Scenario(**BASE, lemon_fraction=0.1, lemon_rate_factor=10.0)
    plain = st.Scenario(**BASE)
    a = st.time_to_train(lemons, "spare", r=6, checkpoint_interval_minutes=60.0).hours
    b = st.time_to_train(plain, "spare", r=6, checkpoint_interval_minutes=60.0).hours
    assert a != b


@pytest.mark.parametrize(
    ("fields", "strategy", "match"),
    [
        (dict(domain_size=16, domain_mtbf_hours=5000.0), "rep", "strategy 'rep'"),
        (
            dict(domain_size=16, domain_mtbf_hours=5000.0, failure_law="weibull"),
            "spare",
            "drop domain_size",
        ),
    ],
)
def test_uncovered_combinations_are_refused(fields: dict, strategy: str, match: str) -> None:
    sc = st.Scenario(**BASE, **fields)
    r = 2 if strategy == "rep" else 6
    with pytest.raises(ValueError, match=match):
        st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=60.0)


def test_simulation_plays_what_no_model_covers() -> None:
    # Weibull lifetimes with racks: time_to_train refuses (above), the simulation runs.
    racks = st.Scenario(**BASE, domain_size=16, domain_mtbf_hours=5000.0, failure_law="weibull")
    runs = st.simulate_training(
        racks, "rep", r=2, checkpoint_interval_minutes=60.0, trials=2, seed=0
    )
    assert runs.hours.shape == (2,) and (runs.hours > BASE["work_hours"]).all()


@pytest.mark.parametrize(
    "fields",
    [
        # Splitting is modelled under any law, lemons and repairs (the load model);
        # under failure domains without repairs it is not.
        dict(domain_size=16, domain_mtbf_hours=5000.0),
    ],
)
def test_microbatches_refuse_the_fields_they_do_not_model(fields: dict) -> None:
    sc = st.Scenario(**BASE, **fields)
    name = next(iter(fields))
    with pytest.raises(ValueError, match=f"microbatches.*{name}"):
        st.time_to_train(sc, "spare", r=6, checkpoint_interval_minutes=60.0, microbatches=4)
    # The model-only search refuses it; method="auto" searches it by simulation.
    with pytest.raises(st.NoClosedFormError, match=f"microbatches.*{name}"):
        st.optimal_plan(sc, "spare", microbatches=4, method="model")
