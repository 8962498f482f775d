"""The model on combined scenario fields, against the event simulation that plays them exactly.

A log produces a non-exponential law, lemons, bursts (domains) and repairs
through a pool at once; :mod:`spare_theory.hourly.compose` prices each
combination with one stated approximation.  Every cell below is the model
at the simulation's plan against 120 simulated runs (seed 7); a cell passes
within 3 standard errors.  The cells outside are strict xfails with their
measured miss and its cause (``docs/theory.md`` section 9).  Runs of
CKPT-only are skewed (a few long runs): at 30 runs the standard error is
itself underestimated, and domains with lemons read -4.0 SE on seed 7 where
2,000 runs put the model 0.5 SE off.
"""

from __future__ import annotations

import dataclasses

import pytest
from scenarios import SIXTEEN_GROUPS

import spare_theory as st
from spare_theory.hourly.compose import clustering
from spare_theory.hourly.process import group_process

K = 3.0  # standard errors
TRIALS, SEED = 120, 7
# 64 one-node groups; 16 groups of 8 nodes (the pool and node clocks need nodes).
ONE = dict(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=300.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=80,
)
EIGHT = SIXTEEN_GROUPS
POOL = dict(repair_minutes=600.0, swap_minutes=10.0)  # node repairs of 10 h, 10 min swaps
LEMONS = dict(lemon_fraction=0.1, lemon_rate_factor=5.0)


def miss(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


CELLS = [
    # (id, base, fields, strategy, r)
    ("weibull+repairs-ckpt", ONE, dict(failure_law="weibull", repair_minutes=30.0), "ckpt", None),
    ("weibull+repairs-rep", ONE, dict(failure_law="weibull", repair_minutes=30.0), "rep", 2),
    pytest.param(
        "weibull+repairs-spare",
        ONE,
        dict(failure_law="weibull", repair_minutes=30.0),
        "spare",
        4,
        marks=miss("+0.9 % (3.7 SE): the stationary-clock bias of SPARe under Weibull (section 4)"),
    ),
    ("lemons+repairs-rep", ONE, dict(**LEMONS, repair_minutes=30.0), "rep", 2),
    ("lemons+repairs-spare", ONE, dict(**LEMONS, repair_minutes=30.0), "spare", 4),
    (
        "domains+repairs-ckpt",
        ONE,
        dict(domain_size=4, domain_mtbf_hours=300.0, repair_minutes=30.0),
        "ckpt",
        None,
    ),
    pytest.param(
        "domains+repairs-spare",
        ONE,
        dict(domain_size=4, domain_mtbf_hours=300.0, repair_minutes=30.0),
        "spare",
        4,
        marks=miss("+1.1 % (4.3 SE): the domain law's own bias on the domain-aware placement"),
    ),
    (
        "domains+lemons-ckpt",
        ONE,
        dict(domain_size=4, domain_mtbf_hours=300.0, **LEMONS),
        "ckpt",
        None,
    ),
    pytest.param(
        "domains+lemons-spare",
        ONE,
        dict(domain_size=4, domain_mtbf_hours=300.0, **LEMONS),
        "spare",
        4,
        marks=miss(
            "+2.2 % (8.8 SE), both on the domain-aware placement: the domain law's own "
            "bias (+1.2 %, 8.9 SE at this cell without lemons, 120 runs) and lemons folded "
            "into the rate beside domains (the folded scenario simulates 1.2 % slower)"
        ),
    ),
    ("weibull+lemons-ckpt", ONE, dict(failure_law="weibull", **LEMONS), "ckpt", None),
    pytest.param(
        "weibull+lemons-rep",
        ONE,
        dict(failure_law="weibull", **LEMONS),
        "rep",
        2,
        marks=miss(
            "-1.75 % (5.1 SE; 8.8 SE at 400 runs): young clocks after a wipe-out fail "
            "early (Weibull alone -0.7 %, 5.4 SE at 400 runs), more so on lemons"
        ),
    ),
    ("weibull+lemons-spare", ONE, dict(failure_law="weibull", **LEMONS), "spare", 4),
    ("microbatches+repairs-spare", ONE, dict(microbatches=4, repair_minutes=30.0), "spare", 4),
    ("node clocks-rep", EIGHT, dict(failure_law="weibull", renewal="node"), "rep", 2),
    # +1.7 % (3.9 SE) until SPARe's law took P(T > f) exactly at 16 groups: the sharp form's
    # small-N excess, not the young node clocks once blamed.
    ("node clocks-spare", EIGHT, dict(failure_law="weibull", renewal="node"), "spare", 4),
    ("pool-rep", EIGHT, dict(**POOL, spare_nodes=10), "rep", 2),
    ("pool-spare", EIGHT, dict(**POOL, spare_nodes=10), "spare", 4),
    pytest.param(
        "short pool-spare",
        EIGHT,
        dict(**POOL, spare_nodes=4),
        "spare",
        4,
        marks=miss(
            "+17 % (12 SE) with the pool empty for 60 % of the failures: groups that "
            "wait together overlap their outages, which the independent groups of "
            "the model do not"
        ),
    ),
    (
        "node clocks+pool-spare",
        EIGHT,
        dict(failure_law="weibull", renewal="node", **POOL, spare_nodes=16),
        "spare",
        4,
    ),
    (
        "all at once-rep",
        EIGHT,
        dict(
            failure_law="weibull",
            renewal="node",
            lemon_fraction=0.1,
            lemon_rate_factor=3.0,
            domain_size=2,
            domain_mtbf_hours=400.0,
            **POOL,
            spare_nodes=18,
        ),
        "rep",
        2,
    ),
    (
        "all at once-spare",
        EIGHT,
        dict(
            failure_law="weibull",
            renewal="node",
            lemon_fraction=0.1,
            lemon_rate_factor=3.0,
            domain_size=2,
            domain_mtbf_hours=400.0,
            **POOL,
            spare_nodes=18,
        ),
        "spare",
        4,
    ),
    (
        "all at once-ckpt",
        EIGHT,
        dict(
            failure_law="weibull",
            renewal="node",
            lemon_fraction=0.1,
            lemon_rate_factor=3.0,
            domain_size=2,
            domain_mtbf_hours=400.0,
            **POOL,
            spare_nodes=18,
        ),
        "ckpt",
        None,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "base", "fields", "strategy", "r"), CELLS)
def test_model_within_three_se_of_the_simulation(name, base, fields, strategy, r):
    sc = st.Scenario(**base, **fields)
    model = st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=60.0).hours
    sim = st.simulate_training(
        sc, strategy, r=r, checkpoint_interval_minutes=60.0, trials=TRIALS, seed=SEED
    )
    gap = model - sim.mean_hours
    assert abs(gap) <= K * sim.standard_error_hours, (
        f"{name}: model {model:.2f} h, simulation {sim.mean_hours:.2f} +- "
        f"{sim.standard_error_hours:.2f} h ({gap / sim.mean_hours:+.2%})"
    )


def test_nothing_changes_where_the_old_model_priced_the_scenario():
    plain = st.Scenario(**ONE, repair_minutes=30.0)
    for extra in (dict(), dict(spare_nodes=0), dict(spare_nodes=None)):
        sc = dataclasses.replace(plain, **extra)
        assert group_process(sc).approximations == ()  # nothing to approximate
        assert st.time_to_train(
            sc, "spare", r=4, checkpoint_interval_minutes=60.0
        ) == st.time_to_train(plain, "spare", r=4, checkpoint_interval_minutes=60.0)
    weibull = st.Scenario(**ONE, failure_law="weibull")
    process = group_process(weibull)  # no repairs: its stationary clocks as before
    assert process.clocks and process.approximations == ()
    assert process.rate_per_hour == weibull.group_failure_rate_per_hour


def test_clustering_of_a_renewal_law_and_its_rate():
    # A Weibull 0.78 group clock: a failure brings 1.7 % more within the hour of repair.
    sc = st.Scenario(
        **{**ONE, "gpu_mtbf_hours": 2000.0}, failure_law="weibull", repair_minutes=60.0
    )
    c = clustering(sc, 60.0)
    assert 1.0 < c < 1.05
    assert group_process(sc).rate_per_hour == pytest.approx(
        sc.group_failure_rate_per_hour / c, rel=1e-12
    )
    assert clustering(st.Scenario(**ONE, repair_minutes=60.0), 60.0) == 1.0


def test_what_no_model_covers_names_the_field_and_still_simulates():
    sc = st.Scenario(**ONE, failure_law="weibull", domain_size=4, domain_mtbf_hours=300.0)
    with pytest.raises(ValueError, match="drop domain_size"):
        st.time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=60.0)
    assert (
        st.time_to_train(sc, "ckpt", r=None, checkpoint_interval_minutes=60.0).hours > 0
    )  # every failure ends a cycle
    runs = st.simulate_training(
        sc, "spare", r=4, checkpoint_interval_minutes=60.0, trials=2, seed=0
    )
    assert (runs.hours > ONE["work_hours"]).all()
    with pytest.raises(ValueError, match="planned_restart"):
        st.time_to_train(
            dataclasses.replace(
                sc, domain_size=None, domain_mtbf_hours=None, planned_restart_failures=5
            ),
            "spare",
            r=4,
            checkpoint_interval_minutes=60.0,
        )
