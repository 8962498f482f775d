"""One cache mechanism for the whole package: memoisation keyed on values.

:func:`cached` replaces ``functools.lru_cache`` everywhere in spare_theory
(``tests/test_caching.py`` checks that no other memoisation is used).  Two
things differ:

- **Keys are values.**  Arguments are reduced by :func:`value_key` before
  hashing: a frozen ``scipy.stats`` distribution hashes by identity, so two
  equal laws (``stats.expon(scale=60.0)`` built twice, or a scenario rebuilt
  by ``dataclasses.replace``) would miss every time; here they are keyed on
  their family, arguments and keywords.  Dataclasses are keyed field by field,
  arrays by their bytes.
- **One registry.**  Every cache is registered when its function is defined,
  so :func:`clear_caches` empties all of them.

Shared between processes
------------------------
A function decorated with ``cached(shared=True)`` (the planner's searches,
the load scans) also keeps its results in the folder :func:`shared_cache`
names, for as long as that context is open, one pickle per call: a process
that misses its own cache takes the result another process of the run has
computed, or computes it under a file lock (``fcntl.flock``) that makes any
other process asking for the same call wait and read it.  So within a
``spare-theory reproduce`` run a plan one report computes is not computed
again by another report's process or cell.  Only keys made of plain values
(numbers, strings, bytes, tuples, classes) are shared, keyed by the SHA-256
of their ``repr``; anything else is computed in-process as before.  The
folder is removed when the context closes, so no result outlives the code
that made it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import math
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "SHARED_CACHE_ENV",
    "cached",
    "clear_caches",
    "registered_caches",
    "shared_cache",
    "value_key",
]

#: Environment variable naming the folder of the shared cache (set by :func:`shared_cache`).
SHARED_CACHE_ENV = "SPARE_THEORY_SHARED_CACHE"

F = TypeVar("F", bound=Callable[..., Any])

# Every cache made by `cached`, in definition order.
_REGISTRY: list[Any] = []
_PLAIN = (int, float, str, bool, bytes, type(None))


def value_key(value: Any) -> Any:
    """A hashable key that is equal for equal values.

    Plain scalars stand for themselves (NaN as a tag, since ``nan != nan``);
    an object with a ``cache_key()`` method is keyed by it; a frozen
    ``scipy.stats`` distribution by its family and parameters; a dataclass
    instance by its type and fields; tuples, lists and dicts element by
    element; numpy arrays by dtype, shape and bytes; anything else must be
    hashable and is keyed as itself.

    Examples
    --------
    >>> from scipy import stats
    >>> value_key(stats.expon(scale=60.0)) == value_key(stats.expon(scale=60.0))
    True
    >>> value_key((1, 2.0, "a")) == value_key((1, 2.0, "a"))
    True
    """
    kind = type(value)
    if kind in _PLAIN:
        return ("nan",) if kind is float and math.isnan(value) else value
    if isinstance(value, type):
        return value  # a class stands for itself (hashed by identity, stable)
    if hasattr(value, "cache_key"):
        return (kind.__qualname__, value.cache_key())
    dist = getattr(value, "dist", None)
    if dist is not None and hasattr(value, "args") and hasattr(value, "kwds"):
        family = dist.cache_key() if hasattr(dist, "cache_key") else (type(dist).__qualname__,)
        return (
            "law",
            family,
            tuple(value_key(a) for a in value.args),
            tuple(sorted((str(k), value_key(v)) for k, v in value.kwds.items())),
        )
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            kind.__qualname__,
            tuple(value_key(getattr(value, f.name)) for f in dataclasses.fields(value)),
        )
    if isinstance(value, (tuple, list)):
        return (kind.__name__, tuple(value_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((value_key(k), value_key(v)) for k, v in value.items())))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return value_key(value.item())
    hash(value)  # raises TypeError for an unhashable argument, as lru_cache would
    return value


class _Call:
    """The arguments of one call, hashed and compared through :func:`value_key`."""

    __slots__ = ("args", "hash", "key", "kwargs")

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.args, self.kwargs = args, kwargs
        self.key = (value_key(args), value_key(kwargs) if kwargs else ())
        self.hash = hash(self.key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Call) and self.key == other.key


def cached(maxsize: int | None = 128, *, shared: bool = False) -> Callable[[F], F]:
    """Memoise a function on the values of its arguments (a registered ``lru_cache``).

    Parameters
    ----------
    maxsize : int or None
        Entries kept (least recently used dropped first); ``None``: unbounded.
    shared : bool
        Also share results between processes while a :func:`shared_cache`
        is open (module docstring); for deterministic computations of
        seconds whose results pickle.

    Returns
    -------
    callable
        A decorator.  The decorated function has ``cache_clear()`` and
        ``cache_info()`` as with ``functools.lru_cache``.

    Examples
    --------
    >>> @cached(maxsize=8)
    ... def square(x):
    ...     return x * x
    >>> square(3), square(3.0), square.cache_info().hits
    (9, 9, 1)
    """

    def decorate(func: F) -> F:
        name = f"{func.__module__}.{func.__qualname__}"

        @functools.lru_cache(maxsize=maxsize)
        def call(arguments: _Call) -> Any:
            folder = os.environ.get(SHARED_CACHE_ENV) if shared else None
            if folder:
                return _shared_call(Path(folder), name, func, arguments)
            return func(*arguments.args, **arguments.kwargs)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return call(_Call(args, kwargs))

        wrapper.cache_clear = call.cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = call.cache_info  # type: ignore[attr-defined]
        _REGISTRY.append(call)
        return wrapper  # type: ignore[return-value]

    return decorate


def registered_caches() -> list[Any]:
    """Every cache made by :func:`cached` so far (for tests and diagnostics).

    Examples
    --------
    >>> all(hasattr(c, "cache_clear") for c in registered_caches())
    True
    """
    return list(_REGISTRY)


def clear_caches() -> None:
    """Empty every cache of the package (cycle laws, searches, rulers, tables...).

    For cold-start measurements and to free memory (a SPARe cycle table takes
    about 36 bytes per group).  Results do not change.

    Examples
    --------
    >>> clear_caches()
    >>> sum(c.cache_info().currsize for c in registered_caches())
    0
    """
    for cache in _REGISTRY:
        cache.cache_clear()


@contextlib.contextmanager
def shared_cache(parent: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """Share ``cached(shared=True)`` results between this process and its children.

    Creates a temporary folder (under ``parent``, default the system's
    temporary folder), names it in :data:`SHARED_CACHE_ENV` (child processes
    inherit it) and removes both on exit.

    Examples
    --------
    >>> with shared_cache() as folder:
    ...     os.environ[SHARED_CACHE_ENV] == str(folder)
    True
    >>> SHARED_CACHE_ENV in os.environ
    False
    """
    before = os.environ.get(SHARED_CACHE_ENV)
    with tempfile.TemporaryDirectory(prefix="spare-theory-cache-", dir=parent) as folder:
        os.environ[SHARED_CACHE_ENV] = folder
        try:
            yield Path(folder)
        finally:
            if before is None:
                os.environ.pop(SHARED_CACHE_ENV, None)
            else:
                os.environ[SHARED_CACHE_ENV] = before


_SHAREABLE = (int, float, str, bool, bytes, type(None), type)


def _plain_text(key: Any) -> str | None:
    """``repr(key)`` if the key holds only plain values (the same in every process)."""
    stack = [key]
    while stack:
        value = stack.pop()
        if isinstance(value, tuple):
            stack.extend(value)
        elif not isinstance(value, _SHAREABLE):
            return None
    return repr(key)


def _shared_call(folder: Path, name: str, func: Callable[..., Any], arguments: _Call) -> Any:
    """The call's result from ``folder``, or computed under its lock and stored there."""
    text = _plain_text(arguments.key)
    try:
        import fcntl
    except ImportError:  # no file locks (Windows): compute in-process
        text = None
    if text is None or not folder.is_dir():
        return func(*arguments.args, **arguments.kwargs)
    digest = hashlib.sha256(f"{name}\n{text}".encode()).hexdigest()
    result = folder / f"{digest}.pickle"
    with open(folder / f"{digest}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a process computing this call holds it
        if result.exists():
            with open(result, "rb") as stored:
                return pickle.load(stored)
        value = func(*arguments.args, **arguments.kwargs)
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return value  # not storable: the others compute it too, as without sharing
        partial = folder / f".{digest}.{os.getpid()}"
        partial.write_bytes(data)
        partial.replace(result)  # whole or absent, for a reader without the lock
        return value
