"""The module paths of the flat package (before the layer subpackages), as deprecated aliases.

``import spare_theory.optimize`` and ``from spare_theory.step_sim import
simulate_steps`` keep working: importing an old module path warns
(``DeprecationWarning``) and gives a module whose names are looked up in the
modules that hold them now (their public names), then in the top-level API.
Old modules that were split resolve each name in the first of their new homes
that has it.  Two old
names are packages now and are not aliased: ``strategies`` (the old cycle laws
are in :mod:`spare_theory.cycles`) and ``cycles`` (the old cycle choice is
:func:`spare_theory.hourly.model.scenario_cycle`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any

__all__ = ["OLD_MODULES", "install"]

#: Old module (``spare_theory.<name>``) -> the modules that hold its names now.
OLD_MODULES: dict[str, tuple[str, ...]] = {
    "wipeout_sim": ("wipeout.simulation",),
    "symbolic": ("wipeout.symbolic",),
    "domains": ("wipeout.domains", "placement.domains"),
    "failure_laws": ("lifetimes.laws",),
    "outages": ("lifetimes.outages",),
    "stacks": ("stacking.stacks",),
    "reordering": ("stacking.reordering",),
    "average_overhead": ("stacking.overhead", "stacking.load"),
    "domains_sim": ("stacking.domains_sim",),
    "scenario": ("hourly.scenario",),
    "renewal": ("hourly.renewal",),
    "repairs": ("cycles.repairs", "cycles.planned", "cycles.chains", "hourly.model"),
    "microbatch_training": ("training.aliases", "cycles.spare"),
    "domains_training": ("training.aliases", "cycles.domains", "hourly.domains"),
    "training_sim": ("training.simulate", "hourly.simulation"),
    "repairs_sim": ("training.simulate", "hourly.repairs_sim"),
    "domains_training_sim": ("hourly.domains_sim",),
    "step_scenario": ("steps.scenario",),
    "step_model": ("training.estimate", "steps.estimate", "steps.restarts", "steps.extremes"),
    "step_sim": ("training.simulate", "steps.trials", "steps.rep_run"),
    "optimize": ("training.optimize", "planning.plan", "planning.redundancy", "_caching"),
    "step_optimize": ("training.optimize",),
}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``spare_theory.<old>`` and builds its alias module."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        package, _, name = fullname.rpartition(".")
        if package == "spare_theory" and name in OLD_MODULES:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        old = module.__name__.rpartition(".")[2]
        homes = OLD_MODULES[old]
        warnings.warn(
            f"spare_theory.{old} is deprecated: its names are in "
            + ", ".join(f"spare_theory.{home}" for home in homes),
            DeprecationWarning,
            stacklevel=3,
        )

        def __getattr__(name: str) -> Any:
            for home in homes:
                found = importlib.import_module(f"spare_theory.{home}")
                if name in getattr(found, "__all__", ()):
                    return getattr(found, name)
            top = sys.modules["spare_theory"]
            if name in getattr(top, "__all__", ()):
                return getattr(top, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` (once; the package ``__init__`` calls it).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     from spare_theory.optimize import optimal_plan, r_star_rule
    >>> optimal_plan.__module__, r_star_rule.__module__
    ('spare_theory.training.optimize', 'spare_theory.planning.redundancy')
    """
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
