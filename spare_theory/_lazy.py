"""Lazy package namespaces: a name is imported from its module on first use.

Every package ``__init__`` of spare_theory (the top level and each layer
subpackage) maps its public names to the modules that define them and loads a
module only when one of its names is used, as numpy and scipy do.  So
importing one module of a layer (``spare_theory.hourly.simulation``) loads
that module and what it imports, not every sibling: the event simulations
stay independent of the models they check.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` exporting ``{name: module}``.

    ``module`` is relative to ``package`` (``"law"``, ``"steps.estimate"``).  The
    value is cached in the package's namespace after the first lookup.

    Examples
    --------
    >>> getattr_, dir_, all_ = attach("spare_theory.wipeout", {"wipeout_law": "law"})
    >>> getattr_("wipeout_law").__name__, all_
    ('wipeout_law', ['wipeout_law'])
    """
    names = sorted(exports)

    def __getattr__(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        vars(importlib.import_module(package))[name] = value
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, names
