"""Optional numba compilation of the few hot loops (exact trajectories, wipe-out counts).

``compiled(func)`` is ``numba.njit(cache=True)(func)`` when numba imports, else
``func`` unchanged, so every kernel also runs (slowly, with the same results)
as plain Python.  The kernels use only integer and float arithmetic on
arrays, so compiled and plain runs give identical numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["COMPILED", "compiled"]

try:  # numba is a dependency; the fallback keeps the package importable without it.
    import numba
except ImportError:  # pragma: no cover - exercised only without numba
    numba = None  # type: ignore[assignment]

#: True when :func:`compiled` compiles (numba is installed).
COMPILED = numba is not None

F = TypeVar("F", bound=Callable[..., Any])


def compiled(func: F) -> F:
    """``numba.njit(cache=True)(func)`` when numba is installed, else ``func`` itself.

    Functions not defined in a file (an interpreter or doctest session) are
    compiled without the on-disk cache, which needs a file to sit beside.

    Parameters
    ----------
    func : callable
        A function of arrays and scalars in numba's ``nopython`` subset.

    Returns
    -------
    callable
        The compiled dispatcher (compiled on first call, cached on disk) or ``func``.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory._jit import compiled
    >>> @compiled
    ... def total(x):
    ...     s = 0.0
    ...     for v in x:
    ...         s += v
    ...     return s
    >>> total(np.arange(4.0))
    6.0
    """
    if numba is None:
        return func
    cache = not func.__code__.co_filename.startswith("<")
    return numba.njit(cache=cache)(func)  # type: ignore[return-value]
