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
from .parts import strategy_problems
from .rep import RepStrategy
from .spare import SpareStrategy

__all__ = [
    "PUBLISHED_STRATEGIES",
    "check_strategy",
    "register_strategy",
    "registered_strategies",
    "strategy",
]

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
    TypeError
        Naming each missing or malformed part (:func:`check_strategy`).

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
    check_strategy(obj, replace=True)
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


def check_strategy(obj: Any, *, replace: bool = False) -> None:
    """Raise ``TypeError`` naming each missing or malformed part of the strategy ``obj``.

    The parts are those of :data:`~spare_theory.strategies.parts.PARTS`
    (one table: the required methods, the optional hooks and the class
    attributes): a missing one, a class attribute of the wrong type, an
    abstract method left unimplemented, a method that fails on a small probe
    scenario (8 groups) or returns an object that does not satisfy its
    protocol (:mod:`spare_theory.strategies.protocols`: the cycle law, the
    failure rule and its factory, the step cycle table, the step trial);
    and a name that a different registered strategy holds.  A part that has
    no model may refuse with ``ValueError`` where the table allows it (a
    strategy without a step-level model).  :func:`register_strategy` calls
    it.

    Parameters
    ----------
    obj : Strategy or type
        A strategy object or its class.
    replace : bool
        Whether ``obj`` is meant to replace a registered strategy of its name
        (then the name is no clash).

    Returns
    -------
    None

    Raises
    ------
    TypeError
        One message listing every problem, one line each.

    Examples
    --------
    >>> check_strategy(strategy("spare"))
    >>> from spare_theory.strategies.base import Strategy
    >>> class Sketch(Strategy):
    ...     name = "spare"
    ...     label = "A sketch"
    >>> check_strategy(Sketch)
    Traceback (most recent call last):
    ...
    TypeError: Sketch is not a complete strategy:
      name: 'spare' is registered already to another strategy (SpareStrategy)
      base_law: not implemented (its bare hour-level cycle law; required)
      step_cycle: not implemented (its step-level cycle table; required)
      failure_rules: not implemented (the factory of its hour-level failure rule; required)
      step_rule: not implemented (its step-level trial; required)
    """
    problems = []
    if not (isinstance(obj, Strategy) or (isinstance(obj, type) and issubclass(obj, Strategy))):
        problems.append(
            f"is a {type(obj).__name__}, not a Strategy (subclass spare_theory.Strategy)"
        )
    name = getattr(obj, "name", None)
    held = _REGISTRY.get(name) if isinstance(name, str) else None
    if held is not None and held is not obj and not replace:
        problems.append(
            f"name: {name!r} is registered already to another strategy ({type(held).__name__})"
        )
    problems += strategy_problems(obj)
    if problems:
        what = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise TypeError(f"{what} is not a complete strategy:\n  " + "\n  ".join(problems))


# The built-ins are checked by tests/test_strategies.py (check_strategy on each), not at
# every import: the probe takes about half a second.
for _builtin in (
    CkptStrategy(),
    RepStrategy(),
    SpareStrategy(),
    ElasticStrategy(),
    HotSparesStrategy(),
):
    _REGISTRY[_builtin.name] = _builtin
