"""Hypothesis properties of placements: rows distinct, columns permutations, ruler overlaps <= 1."""

import itertools

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spare_theory import placement as pl


def _check_is_placement(hosts, N, r):
    assert hosts.shape == (N, r)
    assert all(len(set(row)) == r for row in hosts.tolist())  # r distinct groups per type
    for k in range(r):
        assert sorted(hosts[:, k].tolist()) == list(
            range(N)
        )  # each stack layer covers every group once


def _max_shared_hosts(hosts):
    sets = [set(row) for row in hosts.tolist()]
    return max(len(a & b) for a, b in itertools.combinations(sets, 2))


@settings(max_examples=30, deadline=None)
@given(r=st.integers(2, 7), extra=st.integers(0, 60))
def test_modular_ruler_placement_shares_at_most_one_host(r, extra):
    N = pl.min_groups_for_ruler(r) + extra
    try:
        marks = pl.modular_ruler(N, r)
    except ValueError:
        assume(False)  # no ruler found for this N: nothing to check
    hosts = pl.cyclic_placement(N, r, marks=marks)
    _check_is_placement(hosts, N, r)
    assert _max_shared_hosts(hosts) == 1
    counts = pl.pair_overlap_counts(hosts)
    assert counts[1] == N * r * (r - 1) // 2 and counts[2:].sum() == 0


@settings(max_examples=30, deadline=None)
@given(N=st.integers(2, 60), r=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_random_and_contiguous_placements_are_placements(N, r, seed):
    assume(r <= N)
    _check_is_placement(pl.random_placement(N, r, seed=seed), N, r)
    _check_is_placement(pl.contiguous_placement(N, r), N, r)
    np.testing.assert_array_equal(
        pl.random_placement(N, r, seed=seed), pl.random_placement(N, r, seed=seed)
    )
