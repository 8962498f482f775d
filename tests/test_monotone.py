"""Monotonicity the theory guarantees: mu grows with N; S* never falls as groups fail.

``mu(N, r)``: more groups at the same redundancy take more failures to wipe a
type out (both closed forms, from the smallest N a ruler allows to 1e12).
``S*(F)``: removing hosts only removes assignments, so ``S*`` is monotone in
the failed set; checked for the online controller along random failure
sequences and for ``min_stacks`` on nested sets, on random (not only
ruler) placements.  tests/test_stacks.py covers nested prefixes on the
cyclic placement; this adds arbitrary placements and the controller.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_theory.placement.placements import cyclic_placement, random_placement
from spare_theory.stacking.reordering import ReorderingController
from spare_theory.stacking.stacks import WipedOut, min_stacks, stacks_lower_bound
from spare_theory.wipeout.expansion import endurable_failures_gamma
from spare_theory.wipeout.law import endurable_failures


def _N_grid(r, large):
    low = r * (r - 1) + 1
    return np.concatenate(
        [
            np.arange(low, low + 20),
            np.unique(np.geomspace(low + 20, 10**12, large).astype(np.int64)),
        ]
    )


@pytest.mark.slow
def test_mu_increasing_in_N_for_both_forms():
    for r in (1, 2, 3, 4, 8, 20, 64):
        N = _N_grid(r, 4 if r == 64 else 15)  # r = 64 costs ~0.6 s per large N
        gamma_form = endurable_failures_gamma(N, r)
        assert np.all(np.diff(gamma_form) > 0) or r == 1, r
        sharp = endurable_failures(N, r)
        assert np.all(np.isfinite(sharp)), r
        # r = 1: every first failure wipes a type, mu = 1 for every N.
        assert np.all(np.diff(sharp) > 0) if r > 1 else np.all(sharp == 1.0), r


placements = st.tuples(
    st.sampled_from([(13, 3), (21, 4), (31, 3), (40, 5)]), st.integers(0, 10**6), st.booleans()
)


def _hosts(spec):
    (N, r), seed, cyclic = spec
    return cyclic_placement(N, r) if cyclic else random_placement(N, r, seed=seed)


@settings(max_examples=40, deadline=None)
@given(spec=placements, order_seed=st.integers(0, 10**6))
def test_controller_stacks_never_decrease(spec, order_seed):
    hosts = _hosts(spec)
    N, r = hosts.shape
    controller = ReorderingController(hosts)
    previous = controller.stacks
    assert previous == 1
    for f, g in enumerate(np.random.default_rng(order_seed).permutation(N), start=1):
        try:
            s = controller.fail(int(g))
        except WipedOut:
            assert controller.stacks == previous and len(controller.failed) == f - 1
            break
        assert previous <= s == controller.stacks
        assert stacks_lower_bound(N, f) <= s <= r
        previous = s


@settings(max_examples=40, deadline=None)
@given(spec=placements, data=st.data())
def test_min_stacks_monotone_on_nested_sets(spec, data):
    hosts = _hosts(spec)
    N = hosts.shape[0]
    larger = data.draw(st.lists(st.integers(0, N - 1), unique=True, max_size=N - 1))
    smaller = data.draw(st.lists(st.sampled_from(larger), unique=True)) if larger else []
    try:
        big = min_stacks(hosts, larger)
    except WipedOut:
        return  # a wiped larger set says nothing about the smaller one
    assert min_stacks(hosts, smaller) <= big
