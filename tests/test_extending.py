"""Extending: a strategy written from scratch runs everywhere; check_strategy names what is wrong.

- ``examples/standby.py`` is the example of ``docs/architecture.md`` ("Add a
  strategy"; the docs show the file verbatim, checked here): a
  :class:`~spare_theory.Strategy` subclass that subclasses no built-in
  strategy, registered by importing it.  It runs through ``time_to_train``,
  ``optimal_plan``, ``simulate_training``, ``replay_training`` and
  ``spare-theory optimize --strategy standby`` with no other edit; the step level and repairs, which
  it does not model, are refused with a reason.
- Its model is checked against its event simulation (4 SE or 1 %, the
  tolerance of ``tests/test_training_sim.py``: the renewal-reward limit's
  boundary terms at about 30 cycles), at ``r = 1`` against CKPT-only's
  closed form, and its plan against a scan of every ``r``.
- :func:`spare_theory.check_strategy` accepts the built-ins and the example,
  and names each missing or malformed part of broken variants in one
  ``TypeError``; :func:`spare_theory.register_strategy` refuses them.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from spare_theory import (
    Scenario,
    Strategy,
    check_strategy,
    infinitehbd_failure_log,
    optimal_plan,
    paper_scenario,
    register_strategy,
    registered_strategies,
    replay_training,
    simulate_training,
    strategy,
    time_to_train,
)
from spare_theory.cli import main
from spare_theory.strategies import registry
from spare_theory.strategies.ckpt import CkptStrategy
from spare_theory.strategies.elastic import ElasticStrategy
from spare_theory.strategies.rep import RepStrategy
from spare_theory.strategies.spare import SpareStrategy

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "standby.py"
K = 4  # tolerance in standard errors of the simulated mean (as tests/test_training_sim.py)
SC = Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=1000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=12,
)


def _example() -> ModuleType:
    if "standby" not in sys.modules:
        spec = importlib.util.spec_from_file_location("standby", EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["standby"] = module  # its rule factories pickle by module name
        spec.loader.exec_module(module)
    return sys.modules["standby"]


@pytest.fixture
def standby() -> Any:
    """The example, registered for the test and removed after it (the CLI lists every one)."""
    module = _example()
    register_strategy(module.STANDBY, replace=True)
    yield module
    registry._REGISTRY.pop("standby", None)


def test_the_docs_show_the_example_verbatim():
    docs = (ROOT / "docs" / "architecture.md").read_text()
    found = re.search(r"<!-- examples/standby\.py -->\n```python\n(.*?)^```", docs, re.S | re.M)
    assert found, "docs/architecture.md lost the example block after <!-- examples/standby.py -->"
    assert found.group(1) == EXAMPLE.read_text()


def test_the_example_is_written_from_scratch(standby):
    cls = standby.StandbyStrategy
    assert issubclass(cls, Strategy)
    builtins = (CkptStrategy, RepStrategy, SpareStrategy, ElasticStrategy)
    assert not any(issubclass(cls, b) for b in builtins)
    assert "standby" in registered_strategies() and strategy("standby") is standby.STANDBY


@pytest.mark.parametrize("name", ["ckpt", "rep", "spare", "elastic", "hot_spares"])
def test_check_strategy_accepts_the_builtins(name):
    assert check_strategy(strategy(name)) is None
    assert check_strategy(type(strategy(name)), replace=True) is None


def test_check_strategy_accepts_the_example(standby):
    assert check_strategy(standby.STANDBY) is None


def test_at_r_1_it_is_ckpt_only(standby):
    """One group down is a restart: ``Q(u) = e^{-N u}``, CKPT-only's law, so the same hours."""
    law = standby.STANDBY.cycle_law(64, 1)
    u = np.array([0.0, 0.01, 0.5])
    np.testing.assert_allclose(law.logq(u), -64 * u, atol=1e-12)
    ours, ckpt = (
        time_to_train(SC, "standby", r=1, checkpoint_interval_minutes=60.0),
        time_to_train(SC, "ckpt", r=None, checkpoint_interval_minutes=60.0),
    )
    assert ours.hours == pytest.approx(ckpt.hours, rel=1e-9)


@pytest.mark.parametrize("r", [2, 4])
def test_model_matches_its_simulation(standby, r):
    # About 30 restarts per run, so that the boundary terms stay near 1 %.
    probe = time_to_train(dataclasses.replace(SC, work_hours=1.0), "standby", r=r)
    sc = dataclasses.replace(SC, work_hours=30 / probe.restarts)
    est = time_to_train(sc, "standby", r=r)
    sim = simulate_training(
        sc,
        "standby",
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=60,
        seed=7,
    )
    assert abs(est.hours - sim.mean_hours) <= max(K * sim.standard_error_hours, 0.01 * est.hours)
    se_restarts = sim.restarts.std(ddof=1) / np.sqrt(sim.trials)
    assert abs(est.restarts - sim.restarts.mean()) <= max(K * se_restarts, 0.05 * est.restarts)


def test_a_failure_log_replays_it(standby):
    """The fourth front door: at r = 1 every logged failure is a restart, as CKPT-only's."""
    log = infinitehbd_failure_log()
    sc = Scenario(
        gpus=400 * 8, gpus_per_group=64, restart_minutes=20, checkpoint_minutes=5, work_hours=100
    )
    args = dict(checkpoint_interval_minutes=120, trials=3, seed=0)
    ours = replay_training(log, sc, "standby", r=1, **args)
    np.testing.assert_array_equal(ours.hours, replay_training(log, sc, "ckpt", **args).hours)
    # Two standbys ride out what CKPT-only restarts for.
    assert np.all(replay_training(log, sc, "standby", r=3, **args).hours < ours.hours)


def test_optimal_plan_is_the_best_of_every_r(standby):
    plan = optimal_plan(SC, "standby")
    scan = {r: time_to_train(SC, "standby", r=r).hours for r in range(1, 13)}
    best = min(scan, key=scan.get)
    assert (plan.r, plan.hours) == (best, pytest.approx(scan[best], rel=1e-9))
    # A third-party strategy: no documented bias, and no audited answer like it.
    assert len(plan.caveats) == 1 and "no model answer of this strategy" in plan.caveats[0]
    assert "Best plan" in plan.summary() and "audit (" in plan.summary()


def test_what_it_does_not_model_is_refused_with_a_reason(standby):
    step = paper_scenario(50, steps=200)
    refusal = "has no step-level model"
    with pytest.raises(ValueError, match=refusal):
        time_to_train(step, "standby", r=2, checkpoint_every_steps=5)
    with pytest.raises(ValueError, match=refusal):
        time_to_train(step, "standby", r=2)
    with pytest.raises(ValueError, match=refusal):
        optimal_plan(step, "standby")
    with pytest.raises(ValueError, match=refusal):
        simulate_training(step, "standby", r=2, checkpoint_every_steps=5, trials=2, seed=0)
    repaired = dataclasses.replace(SC, repair_minutes=30.0)
    with pytest.raises(ValueError, match="'standby' cycle law has no model with repairs"):
        time_to_train(repaired, "standby", r=2, checkpoint_interval_minutes=60.0)


@pytest.mark.slow
def test_the_cli_plans_it(standby, capsys):
    argv = ["optimize", "--strategy", "standby", "rep", "--gpus", "512", "--gpus-per-group", "8"]
    argv += ["--gpu-mtbf-hours", "1000", "--restart-minutes", "20", "--checkpoint-minutes", "5"]
    argv += ["--work-hours", "12"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["plans"]["standby"]
    plan = optimal_plan(SC, "standby")
    assert (data["r"], data["hours"]) == (plan.r, pytest.approx(plan.hours, rel=1e-12))
    assert main(argv) == 0
    assert "Standby groups" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# check_strategy names each missing or malformed part.
# ---------------------------------------------------------------------------


def _problems(obj: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(TypeError) as caught:
        check_strategy(obj, **kwargs)
    return [line.strip() for line in str(caught.value).splitlines()[1:]]


def test_check_strategy_names_each_abstract_part():
    class Sketch(Strategy):
        name = "sketch"
        label = "Sketch"

    parts = [line.split(":")[0].strip() for line in _problems(Sketch)]
    assert parts == ["base_law", "step_cycle", "failure_rules", "step_rule"]


def test_check_strategy_names_every_malformed_part_at_once(standby):
    class Broken(standby.StandbyStrategy):
        name = "broken"
        label = 3
        exact_batch = "yes"

        def base_law(self, N: int, r: int, lifetimes: Any = None) -> Any:
            return 0.5

        def failure_rules(self, N: int, r: int, **kwargs: Any) -> Any:
            return lambda rng: None

    problems = _problems(Broken())
    assert [p.split(":")[0].strip() for p in problems] == ["label", "exact_batch"]
    Broken.label, Broken.exact_batch = "Broken", True  # then the methods are probed
    problems = _problems(Broken())
    # cycle_law and split_law's default build on base_law: all three are said.
    parts = [p.split(":")[0] for p in problems]
    assert parts == ["cycle_law", "base_law", "split_law", "failure_rules"]
    assert "not a HourlyCycleLaw (missing" in problems[0] and "logq" in problems[0]
    assert "does not pickle" in problems[3]


def test_check_strategy_probes_what_a_law_returns(standby):
    class Rising(standby.StandbyCycle):
        def logq(self, u: Any) -> np.ndarray:
            return np.asarray(u, dtype=float)  # a survival that grows

    class Odd(standby.StandbyStrategy):
        name = "odd"

        def base_law(self, N: int, r: int, lifetimes: Any = None) -> Any:
            return Rising(N, r)

        def step_rule(self, scenario: Any, r: int, **kwargs: Any) -> Any:
            raise RuntimeError("boom")

    problems = _problems(Odd())
    parts = [p.split(":")[0] for p in problems]
    assert parts == ["cycle_law", "base_law", "split_law", "step_rule"]
    assert problems[0].startswith("cycle_law: returned a law whose logq is not 0 at u = 0")
    assert problems[3] == "step_rule: raised RuntimeError: boom"


def test_check_strategy_names_a_clash_and_what_is_no_strategy(standby):
    class Impostor(standby.StandbyStrategy):
        name = "rep"

    assert _problems(Impostor()) == [
        "name: 'rep' is registered already to another strategy (RepStrategy)"
    ]
    assert check_strategy(Impostor(), replace=True) is None
    problems = _problems(object())
    assert problems[0] == "is a object, not a Strategy (subclass spare_theory.Strategy)"
    assert any(p.startswith("base_law: missing") for p in problems)


def test_register_strategy_refuses_a_malformed_strategy(standby):
    class Broken(standby.StandbyStrategy):
        name = "broken_register"

        def base_law(self, N: int, r: int, lifetimes: Any = None) -> Any:
            return None

    before = registered_strategies()
    with pytest.raises(TypeError, match="base_law: returned a NoneType"):
        register_strategy(Broken())
    assert registered_strategies() == before
