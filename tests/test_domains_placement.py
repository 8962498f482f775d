"""The placement under failure domains: one choice that the model and the simulation follow.

``Scenario.placement`` says where SPARe puts each type's ``r`` hosts
(``"domain_aware"``: ``r`` distinct domains; ``"ruler"``: the cyclic ruler,
whose hosts can share a domain).  Before it existed the model priced the
domain-aware placement while ``simulate_training`` played the ruler: two
different systems (64 groups of 8 GPUs of 1000 h, domains of 8 groups failing
every 10 h, r = 4, 60 min interval, 40 h of work: model 95.5 h, simulation
117.6 +- 2.2 h, -18.8 %, 30 runs).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import spare_theory as st
from spare_theory.placement.domains import max_hosts_per_domain, placement_hosts
from spare_theory.stacking.domains_sim import simulate_domain_wipeout
from spare_theory.wipeout.domains import domain_wipeout_law

K = 3.0  # standard errors
# The cell: 64 groups of 8 GPUs, domains of 8 groups failing every 10 h, r = 4,
# 60 min interval.  160 h of work: about 50 cycles a run at r = 4, where the renewal
# limit of the model holds (at 40 h the model runs +1.6 % high without any domain).
CELL = dict(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=1000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=160,
)


def racks(placement: str, domain_size: int = 8, domain_mtbf_hours: float = 10.0) -> st.Scenario:
    return st.Scenario(
        **CELL,
        domain_size=domain_size,
        domain_mtbf_hours=domain_mtbf_hours,
        placement=placement,
    )


def test_the_simulation_plays_the_placement_of_the_scenario():
    spare = st.strategy("spare")
    for placement, spread in (("domain_aware", 1), ("ruler", 4)):
        rules = spare.failure_rules(
            64, 4, microbatches=1, repairs=False, pool=None, placement=placement, domain_size=8
        )
        assert max_hosts_per_domain(rules.hosts, 8) == spread
        units, _ = spare.wipeout_units(64, 4, placement=placement, domain_size=8)
        # units[g, k]: the type group g holds at stack position k, so hosts[units[g, k], k] = g.
        hosts = np.empty((64, 4), dtype=np.int64)
        hosts[units, np.arange(4)[None, :]] = np.arange(64)[:, None]
        np.testing.assert_array_equal(hosts, rules.hosts)
    # Without domains both names are the ruler.
    plain = spare.failure_rules(
        64, 4, microbatches=1, repairs=False, pool=None, placement="domain_aware", domain_size=None
    )
    np.testing.assert_array_equal(plain.hosts, st.cyclic_placement(64, 4))


def test_placement_is_a_checked_field_and_names_itself():
    assert st.Scenario(**CELL).placement == "domain_aware"
    with pytest.raises(ValueError, match="placement must be one of"):
        st.Scenario(**CELL, placement="contiguous")
    # r = 5 hosts cannot lie in 4 distinct domains: model and simulation both refuse it.
    sc = racks("domain_aware", 16)
    with pytest.raises(ValueError, match="placement='ruler'"):
        st.time_to_train(sc, "spare", r=5, checkpoint_interval_minutes=60.0)
    with pytest.raises(ValueError, match="placement='ruler'"):
        st.simulate_training(sc, "spare", r=5, checkpoint_interval_minutes=60.0, trials=1, seed=0)
    # The ruler with hosts sharing a domain has a closed form up to 16 domains only.
    wide = st.Scenario(**{**CELL, "gpus": 256 * 8}, domain_size=8, domain_mtbf_hours=10.0)
    with pytest.raises(ValueError, match="placement='domain_aware'"):
        st.time_to_train(
            dataclasses.replace(wide, placement="ruler"),
            "spare",
            r=6,
            checkpoint_interval_minutes=60.0,
        )


def test_ruler_law_when_every_failure_is_a_domain_event():
    # With (almost) all of a group's rate from its domain, a type is wiped exactly when
    # its hosts' domains have all failed: Q(u) = sum_E P(E) [no type inside E], E the
    # failed domains (each failed with q = 1 - exp(-s u)), counted here by brute force.
    N, r, m, s = 64, 4, 8, 1 - 1e-9
    hosts = placement_hosts("ruler", N, r, None)
    spans = [frozenset(int(g) // m for g in row) for row in hosts]
    law = domain_wipeout_law(N, r, m, s, "ruler")
    for u in (0.05, 0.2, 0.6):
        q = -np.expm1(-s * u)
        expected = sum(
            q ** len(E) * (1 - q) ** (N // m - len(E))
            for k in range(N // m + 1)
            for E in map(frozenset, itertools.combinations(range(N // m), k))
            if not any(span <= E for span in spans)
        )
        assert float(law.sf(u)) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("share", [0.3, 0.9])
def test_ruler_law_against_monte_carlo(share):
    hosts = placement_hosts("ruler", 64, 4, None)
    law = domain_wipeout_law(64, 4, 8, share, "ruler")
    sim = simulate_domain_wipeout(hosts, 20_000, seed=5, domains=8, domain_failure_share=share)
    se = sim.standard_error("time")
    assert abs(law.mean() - sim.mean("time")) <= K * se, (law.mean(), sim.mean("time"), se)


# Model against the event simulation on a grid of domain sizes, domain rates and r
# (the cell included), each placement played by both: within 3 SE or 3 %
# (the target).  The measured misses are tabled in docs/theory.md section 5.
# (domain_aware, 16, 10 h, r = 4) passes at -2.8 %, inside 3 % by less than one SE and
# only because two errors cancel: with every type on all 4 domains the closed form's
# mean wipe-out time is 9 % short and its throughput 4 % high (20,000 cycles).
TRIALS, SEED = 60, 29
OFF = {
    ("domain_aware", 16, 10.0, 3): (
        "+4.1 % (13.4 SE) with 4 domains of 16 groups taking 93 % of the failures: the "
        "throughput given survival 2.7 % low (a row's failures are not re-weighted by "
        "survival), the mean wipe-out time 0.8 % long (20,000 cycles)"
    )
}
GRID = [
    pytest.param(*cell, marks=pytest.mark.xfail(strict=True, reason=OFF[cell]))
    if cell in OFF
    else cell
    for cell in [
        ("domain_aware", m, mtbf, r)
        for m, mtbf, r in itertools.product((4, 8, 16), (10.0, 80.0), (3, 4))
    ]
    + [("ruler", m, mtbf, 4) for m, mtbf in itertools.product((8, 16), (10.0, 80.0))]
]


def test_the_domain_simulation_plays_the_scenario_placement_by_default():
    short = dict(work_hours=10.0)
    ruler = dataclasses.replace(racks("ruler"), **short)
    aware = dataclasses.replace(racks("domain_aware"), **short)
    runs = st.simulate_domain_training(ruler, 4, 60.0, 3, seed=1)
    same = st.simulate_domain_training(aware, 4, 60.0, 3, seed=1, placement="ruler")
    other = st.simulate_domain_training(aware, 4, 60.0, 3, seed=1)
    np.testing.assert_array_equal(runs.hours, same.hours)
    assert not np.array_equal(runs.hours, other.hours)


@pytest.mark.slow
@pytest.mark.parametrize(("placement", "m", "mtbf", "r"), GRID)
def test_model_and_simulation_price_the_same_placement(placement, m, mtbf, r):
    sc = racks(placement, m, mtbf)
    model = st.time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=60.0).hours
    sim = st.simulate_training(
        sc, "spare", r=r, checkpoint_interval_minutes=60.0, trials=TRIALS, seed=SEED
    )
    gap = model - sim.mean_hours
    assert abs(gap) <= max(K * sim.standard_error_hours, 0.03 * sim.mean_hours), (
        f"model {model:.2f} h, simulation {sim.mean_hours:.2f} +- "
        f"{sim.standard_error_hours:.2f} h ({gap / sim.mean_hours:+.2%})"
    )


def test_with_repairs_a_domain_holding_a_whole_type_is_priced_as_a_wipeout():
    # Counted here from the placement itself: the domains of 8 groups that hold all
    # four hosts of some type; each of their events (every 10 h) restarts the job.
    hosts = placement_hosts("ruler", 64, 4, 8)
    holding = sum(
        any(len(set(row // 8)) == 1 and row[0] // 8 == d for row in hosts) for d in range(8)
    )
    assert holding == 8
    ruler = dataclasses.replace(racks("ruler"), repair_minutes=30.0)
    aware = dataclasses.replace(ruler, placement="domain_aware")
    est = st.time_to_train(ruler, "spare", r=4, checkpoint_interval_minutes=60.0)
    other = st.time_to_train(aware, "spare", r=4, checkpoint_interval_minutes=60.0)
    # Restarts per hour: the holding domains' events, plus the rare independent wipe-outs.
    assert holding / 10.0 <= est.restarts / est.hours <= 1.05 * holding / 10.0
    assert other.restarts / other.hours < 0.05 * holding / 10.0
    (text,) = st.strategy("spare").caveats(ruler, 4)
    assert "holds a whole type" in text
    assert "holds a whole type" not in st.strategy("spare").caveats(racks("ruler"), 4)[0]


# docs/theory.md section 9: 64 groups of 8 GPUs of 300 h, r = 4, 30 min repairs, 60 min
# interval, 80 h of work; domains of 4 failing every 300 h (11 % of the failures) and
# of 8 every 10 h (93 %).  The domain-aware cell at 93 % stays a miss: bursts that do
# not wipe out are priced as independent failures of their groups.
REPAIRED = dict(CELL, gpu_mtbf_hours=300.0, work_hours=80, repair_minutes=30.0)
REPAIRED_MISS = "+13.1 % (40 SE, 60 runs): bursts of 8 groups priced as independent failures"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("placement", "m", "mtbf"),
    [
        ("domain_aware", 4, 300.0),
        ("ruler", 4, 300.0),
        pytest.param(
            "domain_aware", 8, 10.0, marks=pytest.mark.xfail(strict=True, reason=REPAIRED_MISS)
        ),
        ("ruler", 8, 10.0),
    ],
)
def test_with_repairs_the_model_follows_the_placement(placement, m, mtbf):
    sc = st.Scenario(**REPAIRED, domain_size=m, domain_mtbf_hours=mtbf, placement=placement)
    model = st.time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=60.0).hours
    sim = st.simulate_training(
        sc, "spare", r=4, checkpoint_interval_minutes=60.0, trials=60, seed=1
    )
    gap = model - sim.mean_hours
    assert abs(gap) <= max(K * sim.standard_error_hours, 0.03 * sim.mean_hours), (
        f"model {model:.2f} h, simulation {sim.mean_hours:.2f} +- "
        f"{sim.standard_error_hours:.2f} h ({gap / sim.mean_hours:+.2%})"
    )
