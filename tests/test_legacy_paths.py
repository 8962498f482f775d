"""The flat package's module paths still import, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import pytest

from spare_theory._legacy import OLD_MODULES


@pytest.mark.parametrize("old", sorted(OLD_MODULES))
def test_old_module_path_warns_and_resolves_its_names(old):
    sys.modules.pop(f"spare_theory.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"spare_theory.{old} is deprecated"):
        module = importlib.import_module(f"spare_theory.{old}")
    # Every public name of each new home is reachable through the old path.
    for home in OLD_MODULES[old]:
        new = importlib.import_module(f"spare_theory.{home}")
        for name in getattr(new, "__all__", [])[:5]:
            assert getattr(module, name) is getattr(new, name)
    with pytest.raises(AttributeError, match="no attribute"):
        module.no_such_name  # noqa: B018


def test_old_calls_keep_working():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from spare_theory.scenario import Scenario
        from spare_theory.step_sim import simulate_steps
        from spare_theory.training_sim import simulate_training

    import spare_theory

    assert Scenario is spare_theory.Scenario
    assert simulate_training is spare_theory.simulate_training
    assert simulate_steps is spare_theory.simulate_steps
