"""Exact S*: brute force via Hall's theorem, bounds, literal cases above the bound."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_theory import WipedOut, min_stacks, stacks_lower_bound
from spare_theory.placement.placements import (
    contiguous_placement,
    cyclic_placement,
    random_placement,
)


def hall_brute_force(hosts, failed):
    """S* = max over sets H of surviving hosts of ceil(|X(H)| / |H|), X(H) = types living only on H.

    Hall's theorem for b-matchings, enumerated over all 2^(N-f) host sets: an
    algorithm independent of max-flow.
    """
    N = hosts.shape[0]
    alive = sorted(set(range(N)) - set(failed))
    survivors = [frozenset(h for h in row if h in set(alive)) for row in hosts.tolist()]
    best = 1
    for size in range(1, len(alive) + 1):
        for H in itertools.combinations(alive, size):
            H = frozenset(H)
            inside = sum(1 for s in survivors if s <= H)
            best = max(best, -(-inside // size))
    return best


# Failure sets where S* is above ceil(N/(N-f)), found near wipe-out by search
# (N=16, r=3, marks 0,1,3) and kept as literal cases.
ABOVE_BOUND = [
    ((0, 1, 2, 11, 12, 13), 3),
    ((6, 7, 8, 11, 12, 13), 3),
    ((5, 6, 7, 10, 11, 12), 3),
]


@pytest.mark.parametrize("failed, expected", ABOVE_BOUND)
def test_literal_cases_above_lower_bound(failed, expected):
    hosts = cyclic_placement(16, 3)
    assert stacks_lower_bound(16, len(failed)) == 2
    assert min_stacks(hosts, failed) == expected
    assert hall_brute_force(hosts, failed) == expected


@settings(max_examples=60, deadline=None)
@given(
    N=st.integers(7, 12),
    r=st.integers(2, 4),
    kind=st.sampled_from(["contiguous", "random"]),
    data=st.data(),
)
def test_matches_brute_force_and_bounds(N, r, kind, data):
    hosts = (
        contiguous_placement(N, r) if kind == "contiguous" else random_placement(N, r, seed=N * r)
    )
    failed = data.draw(st.lists(st.integers(0, N - 1), unique=True, max_size=N - 1))
    alive = np.ones(N, dtype=bool)
    alive[failed] = False
    if not alive[hosts].any(axis=1).all():
        with pytest.raises(WipedOut):
            min_stacks(hosts, failed)
        return
    s = min_stacks(hosts, failed)
    assert s == hall_brute_force(hosts, failed)
    assert stacks_lower_bound(N, len(failed)) <= s <= r


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), r=st.integers(3, 6))
def test_monotone_in_failed_set(seed, r):
    N = 48
    hosts = cyclic_placement(N, r)
    order = np.random.default_rng(seed).permutation(N)
    previous = 1
    for f in range(1, N):
        try:
            s = min_stacks(hosts, order[:f])
        except WipedOut:
            break
        assert s >= previous
        previous = s


def test_lower_bound_broadcasts():
    out = stacks_lower_bound([[10], [100]], [0, 5, 9])
    assert out.shape == (2, 3)
    assert out.tolist() == [[1, 2, 10], [1, 2, 2]]
    assert stacks_lower_bound(4096, 2048) == 2 and stacks_lower_bound(4096, 2049) == 3


@pytest.mark.parametrize(
    "failed, match",
    [
        ([16], "failed"),
        ([1, 1], "repeat"),
        ([-1], "failed"),
        ([0.5], "failed"),
        ([[1, 2]], "failed"),
    ],
)
def test_bad_failed_sets(failed, match):
    with pytest.raises(ValueError, match=match):
        min_stacks(cyclic_placement(16, 3), failed)


def test_bad_lower_bound_arguments():
    with pytest.raises(ValueError, match="failures"):
        stacks_lower_bound(10, 10)
    with pytest.raises(ValueError, match="N"):
        stacks_lower_bound(0, 0)


def test_wiped_out_names_types():
    hosts = cyclic_placement(16, 3)
    with pytest.raises(WipedOut) as info:
        min_stacks(hosts, list(hosts[5]))
    assert 5 in info.value.types
    assert isinstance(info.value, ValueError)
