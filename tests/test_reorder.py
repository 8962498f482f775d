"""Reordering: valid plans, minimal moves against brute force, the online controller."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_theory import ReorderingController, WipedOut, min_stacks, reorder
from spare_theory.placement.placements import contiguous_placement, cyclic_placement, group_stacks


def brute_force_moves(hosts, failed, order, S):
    """Fewest moved shards over every assignment and every stack order of each host.

    For a fixed assignment the new stack of host h is searched over all
    permutations of its r shards that put its assigned types in the top S.
    """
    N = hosts.shape[0]
    alive = [h not in set(failed) for h in range(N)]
    choices = [[h for h in row if alive[h]] for row in hosts.tolist()]
    best = None
    for pick in itertools.product(*choices):
        if max(np.bincount(pick, minlength=N)) > S:
            continue
        total = 0
        for h in range(N):
            if not alive[h]:
                continue
            mine = {t for t in range(N) if pick[t] == h}
            total += min(
                sum(a != b for a, b in zip(perm, order[h]))
                for perm in itertools.permutations(order[h])
                if mine <= set(perm[:S])
            )
        best = total if best is None else min(best, total)
    return best


def check_plan(plan, hosts, failed, order):
    N = hosts.shape[0]
    dead = np.zeros(N, dtype=bool)
    dead[list(failed)] = True
    assert np.all(plan.order[dead] == -1)
    for h in np.flatnonzero(~dead):
        assert sorted(plan.order[h]) == sorted(order[h])
    top = {(int(h), int(t)) for h in np.flatnonzero(~dead) for t in plan.order[h, : plan.stacks]}
    assert all((int(plan.assignment[t]), t) in top for t in range(N))
    moved = int((plan.order[~dead] != order[~dead]).sum())
    assert moved == plan.moves


@settings(max_examples=25, deadline=None)
@given(data=st.data(), shuffle=st.booleans())
def test_moves_minimal_against_brute_force(data, shuffle):
    N, r = 7, 3
    hosts = cyclic_placement(N, r)
    failed = data.draw(st.lists(st.integers(0, N - 1), unique=True, max_size=3))
    order = group_stacks(hosts)
    if shuffle:
        rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
        order = np.array([rng.permutation(row) for row in order])
    try:
        plan = reorder(hosts, failed, order)
    except WipedOut:
        return
    assert plan.stacks == min_stacks(hosts, failed)
    check_plan(plan, hosts, failed, order)
    assert plan.moves == brute_force_moves(hosts, failed, order, plan.stacks)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), f=st.integers(0, 40))
def test_every_plan_valid(seed, f):
    hosts = cyclic_placement(64, 5)
    failed = np.random.default_rng(seed).permutation(64)[:f]
    try:
        plan = reorder(hosts, failed)
    except WipedOut:
        return
    check_plan(plan, hosts, failed, group_stacks(hosts))


def test_no_failure_moves_nothing():
    hosts = cyclic_placement(31, 4)
    plan = reorder(hosts, [])
    assert plan.stacks == 1 and plan.moves == 0


@pytest.mark.parametrize("N, r", [(16, 3), (64, 5), (128, 8), (300, 12)])
def test_controller_equals_min_stacks_on_random_sequences(N, r):
    hosts = cyclic_placement(N, r)
    rng = np.random.default_rng(N * 100 + r)
    sequences = 40 if N <= 64 else 6
    for _ in range(sequences):
        controller = ReorderingController(hosts)
        order = rng.permutation(N)
        for f, g in enumerate(order, start=1):
            try:
                s = controller.fail(g)
            except WipedOut:
                with pytest.raises(WipedOut):
                    min_stacks(hosts, order[:f])
                break
            assert s == controller.stacks == min_stacks(hosts, order[:f])
            assigned = controller.assignment
            assert np.all((hosts == assigned[:, None]).any(axis=1))
            assert not set(assigned.tolist()) & controller.failed
            assert np.bincount(assigned, minlength=N).max() <= s


def test_controller_on_contiguous_placement():
    hosts = contiguous_placement(40, 4)
    order = np.random.default_rng(3).permutation(40)
    controller = ReorderingController(hosts)
    for f, g in enumerate(order, start=1):
        try:
            assert controller.fail(g) == min_stacks(hosts, order[:f])
        except WipedOut:
            break


def test_controller_wipeout_leaves_state_unchanged():
    hosts = cyclic_placement(16, 3)
    controller = ReorderingController(hosts)
    for g in hosts[0, :2]:
        controller.fail(g)
    before = (controller.stacks, set(controller.failed), controller.assignment.copy())
    with pytest.raises(WipedOut):
        controller.fail(hosts[0, 2])
    assert (controller.stacks, controller.failed) == before[:2]
    assert np.array_equal(controller.assignment, before[2])


def test_controller_rejects_bad_groups():
    controller = ReorderingController(cyclic_placement(16, 3))
    controller.fail(3)
    with pytest.raises(ValueError, match="already failed"):
        controller.fail(3)
    with pytest.raises(ValueError, match="group"):
        controller.fail(16)


def test_reorder_rejects_bad_order():
    hosts = cyclic_placement(16, 3)
    bad = group_stacks(hosts)
    bad[0, 0] = bad[1, 0]
    with pytest.raises(ValueError, match="order"):
        reorder(hosts, [], bad)
