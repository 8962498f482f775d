"""A strategy's own plan variable plugs in: ``examples/rebalance.py`` and its ``max_down``.

The example declares ``plan_variables = ("max_down",)`` and nothing in the
package names it: the variable is a keyword of every front door, the
planner searches it (:meth:`Strategy.plan_search`), :attr:`Plan.variables`
keeps it, a plan replays it, and ``spare-theory --import FILE optimize``
plans it.  A name the strategy does not declare is refused by name.  The
model is checked against the event simulation (4 SE or 1 %, as
``tests/test_extending.py``), at ``max_down = 1`` against CKPT-only, and the
plan against a scan of ``max_down``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from spare_theory import (
    Scenario,
    check_strategy,
    infinitehbd_failure_log,
    mean_time_to_wipeout,
    optimal_plan,
    register_strategy,
    replay_training,
    simulate_training,
    time_to_train,
)
from spare_theory.cli import main
from spare_theory.strategies import registry

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rebalance.py"
K = 4  # standard errors of the simulated mean (tests/test_extending.py)
SC = Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=1000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=12,
)


def _example() -> ModuleType:
    if "rebalance" not in sys.modules:
        spec = importlib.util.spec_from_file_location("rebalance", EXAMPLE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["rebalance"] = module  # its rule factories pickle by module name
        spec.loader.exec_module(module)
    return sys.modules["rebalance"]


@pytest.fixture
def rebalance() -> Any:
    """The example, registered for the test and removed after it (the CLI lists every one)."""
    module = _example()
    register_strategy(module.REBALANCE, replace=True)
    yield module
    registry._REGISTRY.pop("rebalance", None)


def test_check_strategy_accepts_it(rebalance):
    assert check_strategy(rebalance.REBALANCE) is None
    assert rebalance.REBALANCE.plan_variables == ("max_down",)


def test_every_front_door_takes_the_variable(rebalance):
    est = time_to_train(SC, "rebalance", max_down=4, checkpoint_interval_minutes=60.0)
    default = time_to_train(SC, "rebalance", checkpoint_interval_minutes=60.0)
    assert est.r is None and est.hours == default.hours  # ceil(64 / 16) = 4, the default
    assert time_to_train(SC, "rebalance", max_down=8).hours != est.hours
    # max_down = 1: the first failure restarts, CKPT-only's law.
    one = time_to_train(SC, "rebalance", max_down=1, checkpoint_interval_minutes=60.0)
    ckpt = time_to_train(SC, "ckpt", checkpoint_interval_minutes=60.0)
    assert one.hours == pytest.approx(ckpt.hours, rel=1e-9)
    # The k-th of N exponential lifetimes: sum_{i<k} 1 / (N - i) lifetimes.
    lam = SC.group_failure_rate_per_hour
    expected = sum(1.0 / (64 - i) for i in range(4)) / lam
    assert mean_time_to_wipeout(SC, "rebalance", max_down=4) == pytest.approx(expected)
    log = infinitehbd_failure_log()
    big = Scenario(
        gpus=400 * 8, gpus_per_group=64, restart_minutes=20, checkpoint_minutes=5, work_hours=100
    )
    args = dict(checkpoint_interval_minutes=120, trials=2, seed=0, mapping="identity")
    once = replay_training(log, big, "rebalance", max_down=1, **args)
    np.testing.assert_array_equal(once.hours, replay_training(log, big, "ckpt", **args).hours)
    assert np.all(replay_training(log, big, "rebalance", max_down=3, **args).hours < once.hours)


def test_a_variable_it_does_not_declare_is_refused_by_name(rebalance):
    with pytest.raises(ValueError, match="min_groups is not a plan variable of strategy "):
        time_to_train(SC, "rebalance", min_groups=3)
    with pytest.raises(ValueError, match=r"max_down is not a plan variable .* \(it takes none\)"):
        optimal_plan(SC, "rep", max_down=3)
    with pytest.raises(ValueError, match="max_down is not a plan variable"):
        simulate_training(
            SC, "spare", r=2, max_down=3, checkpoint_interval_minutes=60, trials=1, seed=0
        )
    with pytest.raises(ValueError, match="max_down must be an integer in"):
        time_to_train(SC, "rebalance", max_down=65)


def test_optimal_plan_searches_it_and_the_plan_keeps_it(rebalance):
    plan = optimal_plan(SC, "rebalance")
    scan = {k: time_to_train(SC, "rebalance", max_down=k).hours for k in range(1, 25)}
    best = min(scan, key=scan.get)
    assert plan.variables == {"max_down": best} and plan.r is None and plan.min_groups is None
    assert plan.hours == pytest.approx(scan[best], rel=1e-9)
    assert "max_down" in plan.summary()
    # The plan stands for its variables at every door.
    assert time_to_train(SC, plan).hours == plan.hours
    runs = simulate_training(SC, plan, trials=3, seed=5)
    by_hand = simulate_training(
        SC,
        "rebalance",
        max_down=best,
        checkpoint_interval_minutes=plan.checkpoint_interval_minutes,
        trials=3,
        seed=5,
    )
    np.testing.assert_array_equal(runs.hours, by_hand.hours)
    with pytest.raises(ValueError, match="which fixes r, the interval, the plan variables"):
        time_to_train(SC, plan, max_down=2)


@pytest.mark.parametrize("k", [2, 9])
def test_model_matches_its_simulation(rebalance, k):
    # About 30 restarts per run, so that the boundary terms stay near 1 %.
    probe = time_to_train(dataclasses.replace(SC, work_hours=1.0), "rebalance", max_down=k)
    sc = dataclasses.replace(SC, work_hours=30 / probe.restarts)
    est = time_to_train(sc, "rebalance", max_down=k)
    tau = est.checkpoint_interval_minutes
    sim = simulate_training(
        sc, "rebalance", max_down=k, checkpoint_interval_minutes=tau, trials=60, seed=7
    )
    assert abs(est.hours - sim.mean_hours) <= max(K * sim.standard_error_hours, 0.01 * est.hours)


def test_the_cli_imports_and_plans_it(rebalance, capsys):
    argv = ["--import", str(EXAMPLE), "optimize", "--strategy", "rebalance", "ckpt"]
    argv += ["--gpus", "512", "--gpus-per-group", "8", "--gpu-mtbf-hours", "1000"]
    argv += ["--restart-minutes", "20", "--checkpoint-minutes", "5", "--work-hours", "12"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["plans"]["rebalance"]
    plan = optimal_plan(SC, "rebalance")
    assert data["plan_variables"] == {"max_down": plan.variables["max_down"]}
    assert data["hours"] == pytest.approx(plan.hours, rel=1e-12) and data["r"] is None
    assert main(argv) == 0
    assert "max down" in capsys.readouterr().out
    assert main(["--import", "no_such_file.py", "optimize"]) == 2
    assert "--import no_such_file.py: [Errno 2] No such file" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# check_strategy runs a plan on its probe: a variable that does not plug in is named.
# ---------------------------------------------------------------------------


def _problems(obj: Any) -> list[str]:
    with pytest.raises(TypeError) as caught:
        check_strategy(obj, replace=True)
    return [line.strip() for line in str(caught.value).splitlines()[1:]]


def test_the_checker_names_a_variable_that_does_not_plug_in(rebalance):
    base = rebalance.RebalanceStrategy

    class NoDefault(base):
        def check_plan(self, N: int, r: int, plan: Any) -> dict[str, Any]:
            return {}  # the declared max_down is never filled in

    class Elsewhere(base):
        def plan_search(self, N: int, r: int) -> Any:
            return "min_down", np.arange(1, 4)

    class Deaf(base):
        def failure_rules(self, N: int, r: int, **kwargs: Any) -> Any:
            return rebalance.RebalanceRules(N, kwargs["max_downs"])  # a typo

    class Keyless(rebalance.RebalanceCycle):
        def cache_key(self) -> tuple:
            return (type(self).__qualname__, self.N)  # without the plan variable

    class Forgetful(base):
        def own_law(self, scenario: Any, r: int, *, merged: float = 0.0, **plan: Any) -> Any:
            return Keyless(scenario.groups, self.check_plan(scenario.groups, r, plan)["max_down"])

    assert _problems(NoDefault()) == [
        "check_plan: returned the variables [] for the declared ['max_down'] (a value for each, "
        "defaults filled in)"
    ]
    assert _problems(Elsewhere()) == [
        "plan_search: searches 'min_down', not one of plan_variables ('max_down',)"
    ]
    assert _problems(Deaf()) == ["failure_rules: raised KeyError: 'max_downs'"]
    (problem,) = _problems(Forgetful())
    assert problem.startswith("own_law: its laws at {'max_down': 1} and {'max_down': 8} differ")
