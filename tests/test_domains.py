"""Failure domains: the mapping, the domain-aware placement and the closed form."""

import itertools

import numpy as np
import pytest

from spare_theory import contiguous_placement, cyclic_placement, validate_hosts
from spare_theory.placement.domains import (
    domain_aware_placement,
    domain_pair_counts,
    failure_domains,
    max_hosts_per_domain,
)
from spare_theory.placement.placements import pair_overlap_counts
from spare_theory.stacking.domains_sim import simulate_domain_wipeout
from spare_theory.wipeout.domains import domain_wipeout_law


def test_failure_domains_blocks_and_labels():
    assert failure_domains(7, 3).tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert failure_domains(3, [5, -1, 5]).tolist() == [1, 0, 1]
    for bad in (0, 8, [1, 2], [0.5, 1, 2], True):
        with pytest.raises(ValueError, match="domains"):
            failure_domains(7, bad)


@pytest.mark.parametrize(
    "N, r, m",
    [
        (64, 4, 8),
        (100, 4, 7),
        (256, 6, 16),
        (1024, 10, 64),
        (1024, 16, 64),
        (1024, 12, 4),
        (600, 5, 60),
        (133, 3, 19),
    ],
)
def test_domain_aware_placement_has_one_host_per_domain(N, r, m):
    hosts = validate_hosts(domain_aware_placement(N, r, m))
    dom = failure_domains(N, m)
    # Brute force: every row's domains are distinct.
    assert all(len(set(dom[row].tolist())) == r for row in hosts)
    assert max_hosts_per_domain(hosts, m) == 1
    # Still a ruler placement: two types share at most one host, N C(r, 2) pairs share one.
    counts = pair_overlap_counts(hosts)
    assert counts[2:].sum() == 0 and counts[1] == N * r * (r - 1) // 2


def test_the_plain_ruler_and_contiguous_placements_break_the_property():
    assert max_hosts_per_domain(cyclic_placement(1024, 10), 64) > 1
    assert max_hosts_per_domain(contiguous_placement(1024, 10), 64) == 10


def test_domain_aware_placement_refuses_more_hosts_than_domains():
    with pytest.raises(ValueError, match=r"r=5 .* only ceil\(N/domain_size\) = 4 domains"):
        domain_aware_placement(64, 5, 16)
    with pytest.raises(ValueError, match="domain_size"):
        domain_aware_placement(64, 4, 0)


def test_domain_pair_counts_against_brute_force():
    N, r, m = 48, 3, 4
    hosts = domain_aware_placement(N, r, m)
    dom = failure_domains(N, m)
    expected = np.zeros((r + 1, r + 1), dtype=np.int64)
    for i, j in itertools.combinations(range(N), 2):
        c = len(set(dom[hosts[i]].tolist()) & set(dom[hosts[j]].tolist()))
        h = len(set(hosts[i].tolist()) & set(hosts[j].tolist()))
        expected[c, h] += 1
    assert np.array_equal(domain_pair_counts(hosts, m), expected)
    with pytest.raises(ValueError, match="hosts"):
        domain_pair_counts(contiguous_placement(N, r), m)


def test_closed_form_without_domain_events_is_the_independent_law():
    # s = 0 and m = 1 both reduce to independent failures: same survival.
    a = domain_wipeout_law(256, 6, 16, 0.0)
    b = domain_wipeout_law(256, 6, 1, 0.4)
    u = np.linspace(0.1, 1.0, 7)
    assert np.allclose(a.sf(u), b.sf(u), rtol=1e-12)
    assert a.route == b.route == "independent"


# Each route of the closed form (independent, enumerated domain sets, count of
# failed domains) against the simulation.  Tolerance: the mean absolute
# error of 1 % over the cells, and every cell within 4 SE + 1 %.
CELLS = [
    (256, 6, 1, 0.3),
    (256, 6, 4, 0.5),
    (256, 6, 16, 0.3),
    (1024, 10, 16, 0.5),
    (1024, 10, 64, 0.3),
    (1024, 10, 4, 0.1),
]


@pytest.mark.slow
def test_closed_form_mean_wipeout_time_matches_simulation():
    errors = []
    for k, (N, r, m, s) in enumerate(CELLS):
        law = domain_wipeout_law(N, r, m, s)
        sim = simulate_domain_wipeout(
            domain_aware_placement(N, r, m), 3000, seed=k, domains=m, domain_failure_share=s
        )
        mean, se = sim.time.mean(), sim.time.std(ddof=1) / np.sqrt(sim.time.size)
        err = law.mean() - mean
        assert abs(err) <= 4 * se + 0.01 * mean, (N, r, m, s, law.mean(), mean, se)
        errors.append(abs(err) / mean)
    assert np.mean(errors) <= 0.01


def test_closed_form_bad_input():
    with pytest.raises(ValueError, match="domain_size"):
        domain_wipeout_law(100, 4, 7, 0.1)
    with pytest.raises(ValueError, match="domain_failure_share"):
        domain_wipeout_law(64, 4, 8, 1.0)
    with pytest.raises(ValueError, match="domain_failure_share"):
        domain_wipeout_law(64, 4, 8, -0.1)
    with pytest.raises(ValueError, match="u"):
        domain_wipeout_law(64, 4, 8, 0.1).sf(-1.0)
