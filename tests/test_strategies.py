"""Strategies are objects in a registry: a new one is one class, and no other code knows names.

- The registry resolves names and refuses what it cannot resolve.
- A strategy registered here, in the test file (a copy of Rep under another
  name), runs through every front door on both kinds of scenario with no other
  edit, and gives Rep's numbers.
- No module outside ``spare_theory/strategies`` compares a strategy's name
  (checked on the source with :mod:`ast`; the checker is itself checked on a
  planted source).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import spare_theory
from spare_theory import (
    Scenario,
    Strategy,
    optimal_plan,
    paper_scenario,
    register_strategy,
    registered_strategies,
    simulate_training,
    strategy,
    time_to_train,
)
from spare_theory.strategies import registry
from spare_theory.strategies.registry import PUBLISHED_STRATEGIES
from spare_theory.strategies.rep import RepStrategy

PACKAGE = Path(spare_theory.__file__).parent
SC = Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=1000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=12,
)


class RepCopy(RepStrategy):
    """Rep under another name: everything it does comes from its class."""

    name = "rep_copy"
    label = "Rep copy"


@pytest.fixture(scope="module")
def copy() -> Iterator[Strategy]:
    # Unregistered after the module: other tests in the worker list the registered ones.
    yield register_strategy(RepCopy(), replace=True)
    del registry._REGISTRY[RepCopy.name]


def test_registry_resolves_names_and_objects():
    assert registered_strategies()[:3] == PUBLISHED_STRATEGIES
    for name in PUBLISHED_STRATEGIES:
        s = strategy(name)
        assert isinstance(s, Strategy) and s.name == name and strategy(s) is s
    with pytest.raises(ValueError, match="strategy must be one of"):
        strategy("raid")
    with pytest.raises(ValueError, match="strategy must be one of"):
        strategy(3)


def test_registry_refuses_what_is_not_a_strategy(copy):
    with pytest.raises(ValueError, match="Strategy instance"):
        register_strategy("rep")
    with pytest.raises(ValueError, match="registered already"):
        register_strategy(RepCopy())
    assert register_strategy(copy) is copy  # the same object again is fine


def test_registered_copy_runs_through_every_front_door_hour_level(copy):
    rep = time_to_train(SC, "rep", r=2, checkpoint_interval_minutes=60.0)
    est = time_to_train(SC, "rep_copy", r=2, checkpoint_interval_minutes=60.0)
    assert est.strategy == "rep_copy"
    assert est.hours == rep.hours and est.restarts == rep.restarts
    best = time_to_train(SC, copy, r=2)
    assert best.hours == time_to_train(SC, "rep", r=2).hours
    plan, rep_plan = optimal_plan(SC, "rep_copy"), optimal_plan(SC, "rep")
    assert plan.r == rep_plan.r and plan.hours == rep_plan.hours
    np.testing.assert_array_equal(plan.hours_by_r, rep_plan.hours_by_r)
    sim = simulate_training(SC, "rep_copy", r=2, checkpoint_interval_minutes=60.0, trials=6, seed=4)
    ref = simulate_training(SC, "rep", r=2, checkpoint_interval_minutes=60.0, trials=6, seed=4)
    np.testing.assert_array_equal(sim.hours, ref.hours)
    # Repairs and planned restarts take it too.
    repaired = dataclasses.replace(SC, repair_minutes=30.0)
    assert (
        time_to_train(repaired, "rep_copy", r=2, checkpoint_interval_minutes=60.0).hours
        == time_to_train(repaired, "rep", r=2, checkpoint_interval_minutes=60.0).hours
    )
    np.testing.assert_array_equal(
        simulate_training(
            repaired, "rep_copy", r=2, checkpoint_interval_minutes=60.0, trials=4, seed=1
        ).hours,
        simulate_training(
            repaired, "rep", r=2, checkpoint_interval_minutes=60.0, trials=4, seed=1
        ).hours,
    )


def test_registered_copy_runs_through_every_front_door_step_level(copy):
    sc = paper_scenario(50, steps=200)
    est = time_to_train(sc, "rep_copy", r=3, checkpoint_every_steps=5)
    assert est.seconds == time_to_train(sc, "rep", r=3, checkpoint_every_steps=5).seconds
    plan = optimal_plan(sc, "rep_copy")
    assert plan.hours == optimal_plan(sc, "rep").hours
    sim = simulate_training(sc, "rep_copy", r=3, checkpoint_every_steps=5, trials=2, seed=0)
    ref = simulate_training(sc, "rep", r=3, checkpoint_every_steps=5, trials=2, seed=0)
    np.testing.assert_array_equal(sim.total_seconds, ref.total_seconds)


# ---------------------------------------------------------------------------
# No strategy-name comparisons outside the strategy classes.
# ---------------------------------------------------------------------------

NAMES = {"ckpt", "rep", "spare", "elastic", "hot_spares"}


def _is_table_filter(node: ast.Compare) -> bool:
    # frame["strategy"] == "spare": selecting the rows of a results table, not behaviour.
    left = node.left
    return (
        isinstance(left, ast.Subscript)
        and isinstance(left.slice, ast.Constant)
        and left.slice.value == "strategy"
    )


def name_comparisons(source: str) -> list[int]:
    """Lines of ``==``, ``!=``, ``in`` or ``not in`` tests against a strategy-name literal."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare) or _is_table_filter(node):
            continue
        if not all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
            continue
        for side in [node.left, *node.comparators]:
            literals = [side] if isinstance(side, ast.Constant) else []
            if isinstance(side, ast.Tuple | ast.List | ast.Set):
                literals = list(side.elts)
            if any(isinstance(c, ast.Constant) and c.value in NAMES for c in literals):
                lines.append(node.lineno)
                break
    return lines


def test_the_checker_sees_name_comparisons():
    planted = (
        'if strategy == "spare":\n    pass\n'
        'x = "rep" != s\n'
        'y = s in ("ckpt", "rep")\n'
        'z = frame[frame["strategy"] == "spare"]\n'
        'w = layout == "balanced"\n'
    )
    assert name_comparisons(planted) == [1, 3, 4]


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(PACKAGE.rglob("*.py")) if "strategies" not in p.relative_to(PACKAGE).parts],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_strategy_name_comparisons_outside_the_strategy_classes(path):
    assert name_comparisons(path.read_text()) == [], f"{path}: compare strategy objects' behaviour"
