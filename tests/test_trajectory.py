"""The compiled S* trajectory equals the reordering controller's, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from spare_theory import ReorderingController, WipedOut, min_stacks
from spare_theory.placement.placements import (
    contiguous_placement,
    cyclic_placement,
    group_stacks,
    random_placement,
)
from spare_theory.stacking._trajectory import trajectory_from_arrays
from spare_theory.stacking.overhead import stacks_trajectory
from spare_theory.stacking.stacks import stacks_lower_bound


def controller_trajectory(hosts: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The reference: ReorderingController.fail along the order until the wipe-out."""
    controller = ReorderingController(hosts)
    out = [1]
    for g in order:
        try:
            out.append(controller.fail(int(g)))
        except WipedOut:
            break
    return np.array(out, dtype=np.int64)


def _placement(kind: str, N: int, r: int, seed: int) -> np.ndarray:
    if kind == "cyclic":
        return cyclic_placement(N, r)
    if kind == "contiguous":
        return contiguous_placement(N, r)
    return random_placement(N, r, seed=seed)


CASES = [
    (kind, N, r)
    for kind in ("cyclic", "contiguous", "random")
    for N, r in ((13, 3), (31, 5), (64, 4), (200, 8), (500, 12), (1000, 3))
    if not (kind == "cyclic" and r * (r - 1) + 1 > N)
]


@pytest.mark.parametrize(("kind", "N", "r"), CASES)
def test_equals_controller_on_random_orders(kind: str, N: int, r: int) -> None:
    rng = np.random.default_rng([N, r, len(kind)])
    hosts = _placement(kind, N, r, seed=N * r)
    stacks = group_stacks(hosts)
    above = 0
    for _ in range(25):
        order = rng.permutation(N)
        expected = controller_trajectory(hosts, order)
        got = trajectory_from_arrays(hosts, stacks, order)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(stacks_trajectory(hosts, order), expected)
        above += int(np.sum(got > stacks_lower_bound(N, np.arange(got.size))))
    if kind == "contiguous" and r >= 4:
        # The crowded placement must exercise the path where S* exceeds the counting bound.
        assert above > 0


def test_equals_min_stacks_from_scratch() -> None:
    """Independent of the controller: every prefix against the max-flow min_stacks."""
    for seed in range(6):
        hosts = random_placement(60, 5, seed=seed)
        order = np.random.default_rng(seed).permutation(60)
        got = trajectory_from_arrays(hosts, group_stacks(hosts), order)
        expected = [min_stacks(hosts, order[:f]) for f in range(got.size)]
        np.testing.assert_array_equal(got, expected)
        with pytest.raises(WipedOut):
            min_stacks(hosts, order[: got.size])


def test_large_cyclic_matches_controller() -> None:
    hosts = cyclic_placement(4096, 12)
    order = np.random.default_rng(5).permutation(4096)
    np.testing.assert_array_equal(
        trajectory_from_arrays(hosts, group_stacks(hosts), order),
        controller_trajectory(hosts, order),
    )


@pytest.mark.parametrize(
    ("order", "match"),
    [
        ([0], "reach the wipe-out"),
        ([0, 16], r"\[0, 16\)"),
        ([0, -1], r"\[0, 16\)"),
        ([2, 2], "repeat"),
        ([0.5], "order"),
        ([[0, 1]], "order"),
    ],
)
def test_bad_order(order: list, match: str) -> None:
    hosts = cyclic_placement(16, 3)
    with pytest.raises(ValueError, match=match):
        trajectory_from_arrays(hosts, group_stacks(hosts), order)
    with pytest.raises(ValueError, match=match):
        stacks_trajectory(hosts, order)


def test_accepts_ranges_lists_and_integral_floats() -> None:
    hosts = cyclic_placement(31, 4)
    stacks = group_stacks(hosts)
    order = np.random.default_rng(1).permutation(31)
    expected = controller_trajectory(hosts, order)
    for form in (order.tolist(), order.astype(np.int32), order.astype(float), iter(order.tolist())):
        np.testing.assert_array_equal(trajectory_from_arrays(hosts, stacks, form), expected)
