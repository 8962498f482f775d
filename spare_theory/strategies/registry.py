"""The strategy registry: names to :class:`~spare_theory.strategies.base.Strategy` objects.

CKPT-only (``"ckpt"``), Rep+CKPT (``"rep"``) and SPARe+CKPT (``"spare"``) are
registered when the registry is first used, then elastic DP (``"elastic"``)
and hot spares (``"hot_spares"``, :mod:`spare_theory.strategies.elastic`);
:func:`register_strategy` adds more.  Every front door resolves its
``strategy`` argument here, so a name or a registered object is accepted
wherever a strategy is.
"""

from __future__ import annotations

from typing import Any

from .base import Strategy
from .ckpt import CkptStrategy
from .elastic import ElasticStrategy, HotSparesStrategy
from .rep import RepStrategy
from .spare import SpareStrategy

__all__ = ["PUBLISHED_STRATEGIES", "register_strategy", "registered_strategies", "strategy"]

#: The strategies the SPARe paper compares, in its order.
PUBLISHED_STRATEGIES = ("ckpt", "rep", "spare")

_REGISTRY: dict[str, Strategy] = {}


def register_strategy(obj: Strategy, *, replace: bool = False) -> Strategy:
    """Add a strategy to the registry under ``obj.name``; return it.

    Parameters
    ----------
    obj : Strategy
        An instance of a :class:`~spare_theory.strategies.base.Strategy`
        subclass with a ``name``.
    replace : bool
        Replace a strategy already registered under that name (default:
        refuse).

    Returns
    -------
    Strategy
        ``obj``.

    Raises
    ------
    ValueError
        Naming ``obj`` when it is not a Strategy, has no name, or its name is
        taken (and ``replace`` is false).

    Examples
    --------
    >>> from spare_theory.strategies.rep import RepStrategy
    >>> class Mirror(RepStrategy):
    ...     name = "mirror"
    ...     label = "Mirror"
    >>> register_strategy(Mirror()).name, strategy("mirror").label
    ('mirror', 'Mirror')
    >>> _ = _REGISTRY.pop("mirror")  # keep the registry as it was
    """
    if not isinstance(obj, Strategy):
        raise ValueError(f"obj must be a Strategy instance, got {type(obj).__name__}")
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"obj must have a non-empty str name, got {name!r}")
    if name in _REGISTRY and not replace and _REGISTRY[name] is not obj:
        raise ValueError(f"a strategy named {name!r} is registered already (replace=True)")
    _REGISTRY[name] = obj
    return obj


def strategy(name: Any) -> Strategy:
    """The registered strategy called ``name`` (a registered Strategy object is returned as is).

    Parameters
    ----------
    name : str or Strategy
        A registered name (``"ckpt"``, ``"rep"``, ``"spare"``, ...) or a
        :class:`~spare_theory.strategies.base.Strategy`.

    Returns
    -------
    Strategy

    Raises
    ------
    ValueError
        Naming ``strategy`` and listing the registered names.

    Examples
    --------
    >>> strategy("spare").label, strategy(strategy("rep")).name
    ('SPARe+CKPT', 'rep')
    """
    if isinstance(name, Strategy):
        return name
    found = _REGISTRY.get(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError(f"strategy must be one of {sorted(_REGISTRY)}, got {name!r}")
    return found


def registered_strategies() -> tuple[str, ...]:
    """Names of the registered strategies, in registration order.

    Examples
    --------
    >>> registered_strategies()[:5]
    ('ckpt', 'rep', 'spare', 'elastic', 'hot_spares')
    """
    return tuple(_REGISTRY)


for _builtin in (
    CkptStrategy(),
    RepStrategy(),
    SpareStrategy(),
    ElasticStrategy(),
    HotSparesStrategy(),
):
    register_strategy(_builtin)
