"""Argument checks shared by every public function.

Every check raises :class:`ValueError` whose message names the argument and the
allowed range, so that a user feeding a scenario from a spreadsheet learns at
once which cell is wrong.  Nothing in the package returns NaN or a silently
wrong number for bad input; these helpers are the single place that enforces
it.  This is the lowest layer: it imports nothing from the package.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Collection
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "NoClosedFormError",
    "as_choice",
    "as_count",
    "as_count_array",
    "as_count_list",
    "as_real",
    "as_real_array",
    "as_seed_sequence",
    "child_seed",
    "merge_microbatches",
]


class NoClosedFormError(ValueError):
    """No closed form covers this scenario or plan, though the event simulation plays it.

    A :class:`ValueError` (every caller that catches those still does);
    :func:`spare_theory.optimal_plan` catches it to plan by the simulation
    search instead.

    Examples
    --------
    >>> issubclass(NoClosedFormError, ValueError)
    True
    """


# Largest count accepted: well inside int64, so sums and products of a few stay exact.
_COUNT_LIMIT = 2**62


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def as_count(value: object, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as a Python ``int`` in ``[minimum, maximum]``.

    Integral floats (``4096.0``, as spreadsheets write them) are accepted;
    booleans, fractions, NaN, infinities and strings are not.

    Parameters
    ----------
    value : object
        The user's value.
    name : str
        Argument name for the error message.
    minimum, maximum : int, optional
        Inclusive bounds (``maximum=None``: none above; always ``<= 2**62``).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Naming ``name`` and the allowed range.

    Examples
    --------
    >>> from spare_theory._validation import as_count
    >>> as_count(4096.0, "gpus")
    4096
    >>> as_count(2.5, "gpus")
    Traceback (most recent call last):
        ...
    ValueError: gpus must be an integer, got 2.5
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be an integer, got {_describe(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    else:
        as_float = float(value)
        if not math.isfinite(as_float) or as_float != math.floor(as_float):
            raise ValueError(f"{name} must be an integer, got {_describe(value)}")
        out = int(as_float)
    if abs(out) > _COUNT_LIMIT:
        # Beyond int64 numpy overflows (OverflowError) or wraps silently.
        raise ValueError(f"{name} must be <= 2**62, got {_describe(value)}")
    if out < minimum or (maximum is not None and out > maximum):
        upper = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be >= {minimum}{upper}, got {out}")
    return out


def as_count_list(values: object, name: str) -> list[int]:
    """Return a scalar or a sequence of counts as a list of Python ``int`` (each ``>= 1``).

    :func:`as_count` on every element of ``numpy.atleast_1d(values)``, for
    the grid arguments of tables (``N=``, ``r=``: one value or several).

    Parameters
    ----------
    values : int or sequence of int
        The user's value(s).
    name : str
        Argument name for the error message.

    Returns
    -------
    list of int

    Raises
    ------
    ValueError
        Naming ``name``, as :func:`as_count` does.

    Examples
    --------
    >>> from spare_theory._validation import as_count_list
    >>> as_count_list(4, "r"), as_count_list((2, 8.0), "r")
    ([4], [2, 8])
    """
    return [as_count(v, name) for v in np.atleast_1d(np.asarray(values, dtype=object))]


def as_count_array(
    value: npt.ArrayLike, name: str, *, minimum: int | None = 1
) -> npt.NDArray[np.int64]:
    """Array version of :func:`as_count` for broadcasting functions.

    Returns an ``int64`` array (0-d for scalars).  Rejects booleans, NaN,
    infinities, fractions, values beyond ``2**62`` in size and values below
    ``minimum`` (``None``: no lower bound).

    Parameters
    ----------
    value : array_like
        The user's value(s).
    name : str
        Argument name for the error message.
    minimum : int or None
        Inclusive lower bound.

    Returns
    -------
    numpy.ndarray
        ``int64``, the shape of ``value``.

    Examples
    --------
    >>> from spare_theory._validation import as_count_array
    >>> as_count_array([1, 2.0], "N").tolist()
    [1, 2]
    >>> as_count_array([3, 0], "N")
    Traceback (most recent call last):
        ...
    ValueError: N must be >= 1, got [3, 0]
    """
    arr = np.asarray(value)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers, got {_describe(value)}")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or np.any(arr != np.floor(arr))):
        raise ValueError(f"{name} must hold finite integers, got {_describe(value)}")
    # uint64 values above 2**63 would wrap to negatives in the int64 cast.
    if np.any(arr > _COUNT_LIMIT) or np.any(arr < -_COUNT_LIMIT):
        raise ValueError(f"{name} must be <= 2**62, got {_describe(value)}")
    arr = arr.astype(np.int64)
    if minimum is not None and arr.size and arr.min() < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {_describe(value)}")
    return arr


def as_real(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` within the given bounds.

    ``strict_minimum=True`` makes the lower bound exclusive (``> minimum``),
    as for an MTBF that must be positive.

    Parameters
    ----------
    value : object
        The user's value.
    name : str
        Argument name for the error message.
    minimum, maximum : float, optional
        Bounds (``None``: unbounded on that side).
    strict_minimum : bool
        Exclusive lower bound.
    allow_inf : bool
        Accept ``inf`` (``nan`` never).

    Returns
    -------
    float

    Examples
    --------
    >>> from spare_theory._validation import as_real
    >>> as_real(1.5, "mtbf_hours", minimum=0.0, strict_minimum=True)
    1.5
    >>> as_real(0, "mtbf_hours", minimum=0.0, strict_minimum=True)
    Traceback (most recent call last):
        ...
    ValueError: mtbf_hours must be > 0.0, got 0.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {_describe(value)}")
    out = float(value)
    if math.isnan(out) or (math.isinf(out) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    _check_bounds(np.asarray(out), name, minimum, maximum, strict_minimum)
    return out


def as_real_array(
    value: npt.ArrayLike,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_minimum: bool = False,
) -> npt.NDArray[np.float64]:
    """Array version of :func:`as_real`: a finite ``float64`` array.

    Parameters
    ----------
    value : array_like
        The user's value(s).
    name : str
        Argument name for the error message.
    minimum, maximum : float, optional
        Bounds (``None``: unbounded on that side).
    strict_minimum : bool
        Exclusive lower bound.

    Returns
    -------
    numpy.ndarray
        ``float64``, the shape of ``value``.

    Examples
    --------
    >>> from spare_theory._validation import as_real_array
    >>> as_real_array([0.5, 1], "q", minimum=0, maximum=1).tolist()
    [0.5, 1.0]
    """
    arr = np.asarray(value)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got {_describe(value)}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {_describe(value)}")
    _check_bounds(arr, name, minimum, maximum, strict_minimum)
    return arr


def _check_bounds(
    arr: np.ndarray,
    name: str,
    minimum: float | None,
    maximum: float | None,
    strict_minimum: bool,
) -> None:
    if minimum is not None:
        bad = arr <= minimum if strict_minimum else arr < minimum
        if np.any(bad):
            op = ">" if strict_minimum else ">="
            raise ValueError(f"{name} must be {op} {minimum}, got {_describe(arr.tolist())}")
    if maximum is not None and np.any(arr > maximum):
        raise ValueError(f"{name} must be <= {maximum}, got {_describe(arr.tolist())}")


def as_seed_sequence(seed: object, name: str = "seed") -> np.random.SeedSequence:
    """Turn a user seed into a :class:`numpy.random.SeedSequence`.

    Accepts a non-negative integer or a ``SeedSequence``; child streams are
    then derived with ``spawn_key`` so that results do not depend on how the
    work is chunked or spread over workers.  ``None`` is refused on purpose:
    every random result in this package is reproducible.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The user's seed.
    name : str
        Argument name for the error message.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> from spare_theory._validation import as_seed_sequence
    >>> as_seed_sequence(7).entropy
    7
    >>> as_seed_sequence(None)
    Traceback (most recent call last):
        ...
    ValueError: seed must be a non-negative integer or numpy.random.SeedSequence, got None
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise ValueError(
            f"{name} must be a non-negative integer or numpy.random.SeedSequence, "
            f"got {_describe(seed)}"
        )
    if int(seed) < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {int(seed)}")
    return np.random.SeedSequence(int(seed))


def child_seed(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child stream of ``seed`` at ``key``, independent of spawn order.

    Equivalent to ``seed.spawn(...)[key]`` but addressable directly, so a block
    of trials or a table cell gets the same stream on any worker.

    Parameters
    ----------
    seed : numpy.random.SeedSequence
        Parent stream.
    *key : int
        Child index (several for nested children).

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory._validation import child_seed
    >>> parent = np.random.SeedSequence(7)
    >>> child_seed(parent, 3).spawn_key == parent.spawn(4)[3].spawn_key
    True
    """
    return np.random.SeedSequence(
        entropy=seed.entropy,
        spawn_key=tuple(seed.spawn_key) + tuple(int(k) for k in key),
        pool_size=seed.pool_size,
    )


def as_choice(value: object, name: str, choices: Collection[str]) -> str:
    """Check that ``value`` is one of ``choices`` (strings).

    Parameters
    ----------
    value : object
        The user's value.
    name : str
        Argument name for the error message.
    choices : collection of str
        Allowed values.

    Returns
    -------
    str
        ``value``.

    Examples
    --------
    >>> from spare_theory._validation import as_choice
    >>> as_choice("time", "weighting", ("failure", "time"))
    'time'
    >>> as_choice("x", "weighting", ("failure", "time"))
    Traceback (most recent call last):
        ...
    ValueError: weighting must be one of ['failure', 'time'], got 'x'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {_describe(value)}")
    return value


def merge_microbatches(scenario: Any, microbatches: Any) -> Any:
    """``scenario`` with a front door's ``microbatches=`` keyword folded into its field.

    Both scenario types (hour-level and step-level) state ``microbatches``
    as a field; the front doors also take ``microbatches=m``.  The keyword is
    used when the scenario's field is 1 (its default); equal values agree; a
    keyword of 1 leaves the scenario as it is.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        A frozen dataclass with a ``microbatches`` field.
    microbatches : int
        The keyword's ``m >= 1``.

    Returns
    -------
    Scenario or StepScenario
        ``scenario`` itself, or a copy with ``microbatches = m``.

    Raises
    ------
    ValueError
        Naming ``microbatches``: not an integer ``>= 1``, or ``m > 1``
        differing from a scenario field that is not 1.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48)
    >>> merge_microbatches(sc, 16).microbatches, merge_microbatches(sc, 1) is sc
    (16, True)
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    if m == 1 or m == scenario.microbatches:
        return scenario
    if scenario.microbatches != 1:
        raise ValueError(
            f"microbatches={m} conflicts with the scenario's microbatches="
            f"{scenario.microbatches} (give one, or equal values)"
        )
    return dataclasses.replace(scenario, microbatches=m)
