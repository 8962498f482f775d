"""Rulers and placements: every ruler is checked by recomputing its differences."""

import csv
import itertools
from importlib import resources

import numpy as np
import pytest

from spare_theory import placement as pl

# Optimal lengths as published (OEIS A003022), independent of the ruler table.
PUBLISHED_LENGTHS = [
    0,
    1,
    3,
    6,
    11,
    17,
    25,
    34,
    44,
    55,
    72,
    85,
    106,
    127,
    151,
    177,
    199,
    216,
    246,
    283,
    333,
    356,
    372,
    425,
    480,
    492,
    553,
    585,
]


def _all_differences_distinct(marks):
    diffs = [b - a for a, b in itertools.combinations(sorted(marks), 2)]
    return len(diffs) == len(set(diffs))


@pytest.mark.parametrize("r", range(1, 29))
def test_optimal_rulers_are_golomb_with_published_length(r):
    marks = pl.golomb_ruler(r)
    assert len(marks) == r and marks[0] == 0 and list(marks) == sorted(marks)
    assert _all_differences_distinct(marks)
    assert marks[-1] == PUBLISHED_LENGTHS[r - 1]


def test_ruler_table_is_package_data_of_optimal_rulers():
    """The loaded table: rows r = 1..28, each Golomb with the tabulated length, lengths A003022."""
    text = resources.files("spare_theory.placement").joinpath("data/optimal_golomb_rulers.csv")
    rows = list(csv.DictReader(text.read_text().splitlines()))
    assert [int(row["r"]) for row in rows] == list(range(1, 29))
    assert [int(row["length"]) for row in rows] == PUBLISHED_LENGTHS
    table = pl.OPTIMAL_GOLOMB_RULERS
    assert sorted(table) == list(range(1, 29))
    for row in rows:
        marks = table[int(row["r"])]
        assert marks == tuple(int(m) for m in row["marks"].split())
        assert len(marks) == int(row["r"]) and marks[0] == 0 and list(marks) == sorted(marks)
        assert marks[-1] == int(row["length"])
        assert _all_differences_distinct(marks)
    with pytest.raises(TypeError):
        table[29] = (0,)  # read-only: callers cannot change the rulers under everyone else


@pytest.mark.parametrize("r", [29, 30, 33, 40, 48, 64])
def test_constructed_rulers_are_golomb_and_short(r):
    marks = pl.golomb_ruler(r)
    assert len(marks) == r and marks[0] == 0
    assert _all_differences_distinct(marks)
    # Erdos-Turan's classical bound is ~2 r^2; the affine-optimised Ruzsa set must beat it.
    assert marks[-1] < r * r


@pytest.mark.parametrize(
    "N,r",
    [
        (3, 2),
        (7, 3),
        (13, 4),
        (21, 5),
        (31, 6),
        (64, 4),
        (128, 8),
        (256, 12),
        (512, 16),
        (1024, 20),
        (75000, 17),
    ],
)
def test_modular_ruler_differences_distinct_mod_N(N, r):
    marks = pl.modular_ruler(N, r)
    diffs = [(a - b) % N for a in marks for b in marks if a != b]
    assert len(marks) == r and 0 not in diffs and len(set(diffs)) == len(diffs)


def test_modular_ruler_from_ruzsa_construction_at_its_modulus():
    # N = p(p-1) = 110 with p = 11: the optimal 10-mark ruler (length 55) needs
    # N >= 111, so the 10 elements of Ruzsa's set mod 110 are what works here.
    marks = pl.modular_ruler(110, 10)
    assert max(marks) > 55 and pl.is_modular_ruler(marks, 110)


def test_modular_ruler_too_few_groups_names_the_minimum():
    with pytest.raises(ValueError, match=r"N=20.*r=5.*r\(r-1\)\+1 = 21"):
        pl.modular_ruler(20, 5)


def test_modular_ruler_search_failure_names_known_N():
    # 16 marks mod 256 needs 240 of the 255 non-zero residues: the greedy search gives up.
    with pytest.raises(ValueError, match=r"N=256.*N >= 355"):
        pl.modular_ruler(256, 16)


@pytest.mark.parametrize("bad", [0, -3, 2.5, float("nan"), True, "7"])
def test_modular_ruler_rejects_bad_r(bad):
    with pytest.raises(ValueError, match="r"):
        pl.modular_ruler(100, bad)


def test_cyclic_placement_layout():
    hosts = pl.cyclic_placement(7, 3)
    assert hosts.shape == (7, 3)
    marks = pl.modular_ruler(7, 3)
    for i in range(7):
        assert list(hosts[i]) == [(i + m) % 7 for m in marks]
    pl.validate_hosts(hosts)


@pytest.mark.parametrize("N,r", [(7, 3), (31, 6), (200, 8)])
def test_ruler_placement_types_share_at_most_one_host(N, r):
    hosts = pl.cyclic_placement(N, r)
    sets = [set(row) for row in hosts]
    assert max(len(a & b) for a, b in itertools.combinations(sets, 2)) == 1
    counts = pl.pair_overlap_counts(hosts)
    assert counts[1] == N * r * (r - 1) // 2 and counts[2:].sum() == 0
    assert counts.sum() == N * (N - 1) // 2


def test_contiguous_placement_overlaps_more():
    hosts = pl.contiguous_placement(20, 4)
    counts = pl.pair_overlap_counts(hosts)
    # Type i shares 3, 2, 1 hosts with types i+1, i+2, i+3 (each pair once).
    assert list(counts[1:]) == [20, 20, 20, 0]


def test_random_placement_is_valid_and_seeded():
    a = pl.random_placement(50, 6, seed=3)
    b = pl.random_placement(50, 6, seed=3)
    c = pl.random_placement(50, 6, seed=4)
    pl.validate_hosts(a)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_group_stacks_inverts_hosts():
    hosts = pl.cyclic_placement(13, 4)
    stacks = pl.group_stacks(hosts)
    for g in range(13):
        for k in range(4):
            assert hosts[stacks[g, k], k] == g


@pytest.mark.parametrize(
    "hosts,match",
    [
        (np.zeros((3,), dtype=int), "2-D"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), "integers"),
        (np.array([[0, 3], [1, 0], [2, 1]]), r"\[0, N=3\)"),
        (np.array([[0, 0], [1, 1], [2, 2]]), "distinct"),
        (np.array([[0, 1], [0, 2], [2, 0]]), "permutation"),
        (np.array([[0, 1, 2, 0]]), "r <= N"),
    ],
)
def test_validate_hosts_rejects_malformed(hosts, match):
    with pytest.raises(ValueError, match=match):
        pl.validate_hosts(hosts)


def test_huge_r_fails_fast_without_building_a_ruler():
    # The message must not need the (huge) ruler itself: a bound is quoted instead.
    with pytest.raises(ValueError, match=r"N=100 .*r=1000000000.*known to work"):
        pl.modular_ruler(100, 10**9)
    with pytest.raises(ValueError, match=r"r must be >= 1 and <= 100000"):
        pl.golomb_ruler(10**6)


def test_constructed_ruler_for_large_r_is_golomb():
    marks = pl.golomb_ruler(500)
    assert len(marks) == 500 and _all_differences_distinct(marks) and marks[-1] < 500 * 500
