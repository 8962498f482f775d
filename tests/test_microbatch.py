"""Micro-batch splitting: exact min_load against an ILP, bounds, refinement, the controller."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, milp

from spare_theory import (
    MicrobatchPlan,
    ReorderingController,
    WipedOut,
    min_load,
    min_stacks,
    reorder,
)
from spare_theory.placement.placements import (
    contiguous_placement,
    cyclic_placement,
    random_placement,
)
from spare_theory.stacking.stacks import load_lower_bound


def ilp_min_load(hosts, failed, m):
    """Least largest load by an integer program (HiGHS via scipy.optimize.milp): no flows.

    Variables: pieces x[t, k] >= 0 of type t on hosts[t, k] (0 on failed hosts) and
    the load L; minimise L subject to sum_k x[t, k] = m and, per host, sum x <= L.
    """
    N, r = hosts.shape
    dead = set(failed)
    n = N * r
    c = np.zeros(n + 1)
    c[-1] = 1.0
    rows, lo, hi = [], [], []
    for t in range(N):
        row = np.zeros(n + 1)
        row[t * r : (t + 1) * r] = 1
        rows.append(row)
        lo.append(m)
        hi.append(m)
    for h in range(N):
        row = np.zeros(n + 1)
        row[(hosts == h).ravel().nonzero()[0]] = 1
        row[-1] = -1
        rows.append(row)
        lo.append(-np.inf)
        hi.append(0)
    upper = np.array([0 if h in dead else m for h in hosts.ravel()] + [m * r], dtype=float)
    res = milp(
        c,
        constraints=LinearConstraint(np.array(rows), lo, hi),
        integrality=np.ones(n + 1),
        bounds=Bounds(np.zeros(n + 1), upper),
    )
    assert res.success
    return round(res.x[-1]) / m


def hall_density(hosts, failed):
    """rho* = max over host sets H of |X(H)| / |H| (types living only on H), by enumeration."""
    N = hosts.shape[0]
    alive = sorted(set(range(N)) - set(failed))
    survivors = [frozenset(h for h in row if h in set(alive)) for row in hosts.tolist()]
    best = Fraction(0)
    for size in range(1, len(alive) + 1):
        for H in itertools.combinations(alive, size):
            H = frozenset(H)
            best = max(best, Fraction(sum(1 for s in survivors if s <= H), size))
    return best


PLACEMENTS = [cyclic_placement(7, 3), cyclic_placement(13, 4), contiguous_placement(9, 3)]


@pytest.mark.parametrize("hosts", PLACEMENTS, ids=["fano", "13x4", "contig9x3"])
@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_min_load_equals_ilp(hosts, m):
    """Every failure set of size 1..3 that leaves no type wiped, against the integer program."""
    N = hosts.shape[0]
    rng = np.random.default_rng(m)
    sets = [tuple(rng.choice(N, size=f, replace=False)) for f in (1, 2, 3) for _ in range(4)]
    checked = 0
    for failed in sets:
        try:
            value = min_load(hosts, failed, microbatches=m)
        except WipedOut:
            continue
        assert value == ilp_min_load(hosts, failed, m), failed
        checked += 1
    assert checked >= 4


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from([1, 2, 3, 5, 8]))
def test_min_load_is_hall_density_rounded_up(seed, f, m):
    """min_load = ceil(m rho*) / m with rho* the Hall density (random placement, N = 10)."""
    hosts = random_placement(10, 3, seed=seed)
    failed = np.random.default_rng(seed).choice(10, size=f, replace=False)
    try:
        value = min_load(hosts, failed, microbatches=m)
    except WipedOut:
        return
    rho = hall_density(hosts, failed.tolist())
    assert round(value * m) == -(-rho.numerator * m // rho.denominator)
    assert value == round(value * m) / m


@pytest.mark.parametrize("N, r", [(57, 8), (100, 3), (292, 8)])
def test_bounds_refinement_and_monotone(N, r):
    hosts = cyclic_placement(N, r)
    order = np.random.default_rng(N).permutation(N)
    previous = dict.fromkeys((1, 2, 4, 8), 0.0)
    for f in range(1, N, max(1, N // 25)):
        try:
            loads = {m: min_load(hosts, order[:f], microbatches=m) for m in (1, 2, 4, 8)}
        except WipedOut:
            break
        assert loads[1] == min_stacks(hosts, order[:f])
        for m, value in loads.items():
            assert value >= load_lower_bound(N, f, m)
            assert (value * m) == int(value * m)
            assert value >= previous[m]  # monotone along the failure sequence
            previous[m] = value
        assert loads[2] <= loads[1] and loads[4] <= loads[2] and loads[8] <= loads[4]


def test_issue_numbers_on_the_ruler():
    """N = 292, r = 8, one order: m = 8 and 64 after 1, 40, 100 failures are the bound here."""
    hosts = cyclic_placement(292, 8)
    order = np.random.default_rng(0).permutation(292)
    for f in (1, 40, 100):
        for m in (8, 64):
            assert min_load(hosts, order[:f], microbatches=m) >= load_lower_bound(292, f, m)
        assert min_load(hosts, order[:f], microbatches=1) == 2


def test_wipeout_and_bad_input():
    hosts = cyclic_placement(7, 3)
    with pytest.raises(WipedOut):
        min_load(hosts, [0, 1, 3], microbatches=4)
    with pytest.raises(ValueError, match="microbatches"):
        min_load(hosts, [0], microbatches=0)
    with pytest.raises(ValueError, match="order"):
        reorder(hosts, [0], np.zeros((7, 3), dtype=int), microbatches=2)
    with pytest.raises(ValueError, match="microbatches"):
        ReorderingController(hosts, microbatches=-1)


@pytest.mark.parametrize("m", [2, 3, 8])
def test_reorder_plan_is_valid_and_optimal(m):
    hosts = cyclic_placement(31, 6)
    failed = np.random.default_rng(m).choice(31, size=12, replace=False)
    plan = reorder(hosts, failed, microbatches=m)
    assert isinstance(plan, MicrobatchPlan)
    assert plan.load == min_load(hosts, failed, microbatches=m)
    assert (plan.pieces.sum(axis=1) == m).all() and (plan.pieces >= 0).all()
    assert plan.pieces[np.isin(hosts, failed)].sum() == 0
    per_host = np.bincount(hosts.ravel(), weights=plan.pieces.ravel(), minlength=31)
    assert np.array_equal(per_host, plan.host_pieces)
    assert plan.host_pieces.max() == round(plan.load * m)


def test_reorder_m1_is_todays_plan():
    hosts = cyclic_placement(13, 4)
    a, b = reorder(hosts, [0, 1, 2]), reorder(hosts, [0, 1, 2], microbatches=1)
    assert type(a) is type(b) and a.stacks == b.stacks and a.moves == b.moves
    assert np.array_equal(a.order, b.order) and np.array_equal(a.assignment, b.assignment)


@pytest.mark.parametrize(
    "N, r, m", [(13, 4, 3), (31, 6, 4), (57, 8, 8), (100, 3, 5), (171, 12, 2), (200, 4, 16)]
)
def test_controller_equals_from_scratch(N, r, m):
    hosts = cyclic_placement(N, r)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(N)
        controller = ReorderingController(hosts, microbatches=m)
        for f, g in enumerate(order, start=1):
            try:
                value = controller.fail(int(g))
            except WipedOut:
                with pytest.raises(WipedOut):
                    min_load(hosts, order[:f], microbatches=m)
                break
            assert value == controller.load == min_load(hosts, order[:f], microbatches=m)
            pieces = controller.pieces
            assert (pieces.sum(axis=1) == m).all()
            per_host = np.bincount(hosts.ravel(), weights=pieces.ravel(), minlength=N)
            assert per_host.max() <= value * m and per_host[order[:f]].sum() == 0


def test_controller_m1_unchanged():
    hosts = cyclic_placement(57, 8)
    order = np.random.default_rng(1).permutation(57)
    a, b = ReorderingController(hosts), ReorderingController(hosts, microbatches=1)
    for g in order[:30]:
        assert a.fail(int(g)) == b.fail(int(g)) == b.load
    assert np.array_equal(a.assignment, b.assignment)


def test_expected_load_m1_is_expected_stacks_and_bound():
    from spare_theory import expected_load, expected_stacks

    f = np.arange(0, 600)
    assert np.array_equal(expected_load(1000, 3, f), expected_stacks(1000, 3, f))
    for m in (2, 8, 64):
        # m > 1: the window-scan model, never below the counting bound nor above r.
        load = expected_load(1000, 3, f, microbatches=m)
        assert (load >= load_lower_bound(1000, f, m)).all() and (load <= 3).all()
        assert load[0] == 1.0


@pytest.mark.slow
def test_overhead_default_unchanged():
    from spare_theory import overhead

    for N, r in [(1000, 3), (4096, 12), (10**6, 20)]:
        for w in ("failure", "time"):
            assert overhead(N, r, w) == overhead(N, r, w, microbatches=1)


@pytest.mark.parametrize("N, r, m", [(512, 6, 4), (1024, 8, 2)])
def test_overhead_with_microbatches_against_simulation(N, r, m):
    """Closed form within 3 SE + 0.1 % of the exact-load simulation (40 trajectories)."""
    from spare_theory import overhead, simulate_overhead

    s = simulate_overhead(cyclic_placement(N, r), 40, seed=7, microbatches=m)
    for w, arr in (("failure", s.per_failure), ("time", s.time_weighted)):
        se = arr.std(ddof=1) / np.sqrt(arr.size)
        assert abs(overhead(N, r, w, microbatches=m) - arr.mean()) <= 3 * se + 1e-3 * arr.mean()


def _controller_loads(hosts, order, m):
    controller = ReorderingController(hosts, microbatches=m)
    loads = [controller.load]
    for g in order:
        try:
            loads.append(controller.fail(int(g)))
        except WipedOut:
            return np.array(loads)
    raise AssertionError("no wipe-out")


@pytest.mark.parametrize("kind", ["cyclic", "contiguous", "random"])
def test_compiled_trajectory_equals_controller(kind):
    """The compiled piece repair gives the controller's loads on 12 random orders a placement."""
    from spare_theory.placement.placements import group_stacks
    from spare_theory.stacking._trajectory import trajectory_from_arrays

    rng = np.random.default_rng(["cyclic", "contiguous", "random"].index(kind))
    for trial in range(12):
        r = int(rng.integers(2, 7))
        N = int(rng.integers(r * (r - 1) + 1, 160))
        m = int(rng.choice([1, 2, 3, 4, 8, 16]))
        if kind == "cyclic":
            hosts = cyclic_placement(N, r)
        elif kind == "contiguous":
            hosts = contiguous_placement(N, r)
        else:
            hosts = random_placement(N, r, seed=trial)
        order = rng.permutation(N)
        expected = _controller_loads(hosts, order, m)
        got = trajectory_from_arrays(hosts, group_stacks(hosts), order, m)
        assert np.array_equal(got, expected), (N, r, m, trial)


def test_compiled_trajectory_bad_order_and_stacks_trajectory():
    from spare_theory.stacking.overhead import stacks_trajectory

    hosts = cyclic_placement(13, 4)
    with pytest.raises(ValueError, match="order"):
        stacks_trajectory(hosts, [0, 0, 1], microbatches=4)
    with pytest.raises(ValueError, match="order"):
        stacks_trajectory(hosts, [0, 99], microbatches=4)
    with pytest.raises(ValueError, match="order"):
        stacks_trajectory(hosts, [0], microbatches=4)
    order = np.random.default_rng(3).permutation(13)
    np.testing.assert_array_equal(
        stacks_trajectory(hosts, order, microbatches=4), _controller_loads(hosts, order, 4)
    )
