"""The vocabulary results share: ``mean``, ``standard_error``, ``to_frame``; ``summary()`` text.

A simulation result is a frozen dataclass holding one array entry per trial
for each measured quantity; :class:`TrialSamples` gives it the same three
methods whatever it measures:

- ``mean(name)``: the mean over trials of a per-trial quantity;
- ``standard_error(name)``: ``sd / sqrt(trials)`` with the sample sd;
- ``to_frame()``: a tidy ``pandas.DataFrame``, one row per trial and one
  column per quantity (plus ``trial``).

The per-trial quantities are the dataclass fields holding 1-d arrays of one
entry per trial, and the properties named in the class attribute
``derived``.  :class:`HourSamples` adds ``mean_hours`` and
``standard_error_hours`` to results whose runs last ``hours``.

Estimates and plans explain themselves as text in one layout
(:func:`summary_text`, like a statsmodels results summary): their variables
and figures in two columns, the breakdown of the hours, then the caveats.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

__all__ = ["SUMMARY_WIDTH", "HourSamples", "TrialSamples", "summary_text"]


class TrialSamples:
    """Mixin for per-trial simulation results (see the module docstring).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Runs(TrialSamples):
    ...     hours: np.ndarray
    >>> runs = Runs(np.array([1.0, 2.0, 3.0]))
    >>> runs.trials, runs.mean("hours"), round(runs.standard_error("hours"), 4)
    (3, 2.0, 0.5774)
    >>> runs.to_frame().columns.tolist()
    ['trial', 'hours']
    """

    #: Properties that are per-trial quantities too (beside the array fields).
    derived: ClassVar[tuple[str, ...]] = ()

    def _arrays(self) -> list[str]:
        names = []
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray) and value.ndim == 1:
                names.append(field.name)
        return names

    @property
    def trials(self) -> int:
        """Number of trials (entries of each per-trial quantity)."""
        return int(getattr(self, self._arrays()[0]).size)

    @property
    def quantities(self) -> tuple[str, ...]:
        """Names accepted by :meth:`mean`, :meth:`standard_error` and the frame's columns."""
        return (*self._arrays(), *self.derived)

    def values(self, name: str) -> np.ndarray:
        """The per-trial values of quantity ``name`` as floats.

        Raises
        ------
        ValueError
            Naming ``name`` when it is not one of :attr:`quantities`.
        """
        if name not in self.quantities:
            raise ValueError(f"name must be one of {list(self.quantities)}, got {name!r}")
        return np.asarray(getattr(self, name), dtype=np.float64)

    def mean(self, name: str) -> float:
        """Mean over trials of quantity ``name``."""
        return float(self.values(name).mean())

    def standard_error(self, name: str) -> float:
        """``sd / sqrt(trials)`` (sample sd) of quantity ``name``.

        Raises
        ------
        ValueError
            With fewer than two trials (no spread to estimate), or for an
            unknown ``name``.
        """
        values = self.values(name)
        if values.size < 2:
            raise ValueError(f"standard_error needs trials >= 2, got trials={values.size}")
        return float(values.std(ddof=1) / math.sqrt(values.size))

    def joined(self, other: Any) -> Any:
        """These trials followed by ``other``'s: every per-trial array concatenated.

        ``other`` holds later trials of the same plan (the simulations'
        ``first_trial``), so a sample grows without replaying its first runs.

        Examples
        --------
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Runs(TrialSamples):
        ...     hours: np.ndarray
        >>> Runs(np.array([1.0])).joined(Runs(np.array([2.0, 3.0]))).hours.tolist()
        [1.0, 2.0, 3.0]
        """
        n = self.trials
        grown = {
            field.name: np.concatenate([getattr(self, field.name), getattr(other, field.name)])
            for field in dataclasses.fields(self)  # type: ignore[arg-type]
            if isinstance(getattr(self, field.name), np.ndarray)
            and getattr(self, field.name).shape[:1] == (n,)
        }
        return dataclasses.replace(self, **grown)  # type: ignore[type-var]

    def to_frame(self) -> Any:
        """One row per trial: ``trial`` and every quantity, a ``pandas.DataFrame``."""
        import pandas as pd  # only when asked: pandas is slow to import

        columns: dict[str, Any] = {"trial": np.arange(self.trials)}
        for name in self.quantities:
            columns[name] = np.asarray(getattr(self, name))
        return pd.DataFrame(columns)


class HourSamples(TrialSamples):
    """:class:`TrialSamples` of runs that last ``hours``: their mean and its standard error.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Runs(HourSamples):
    ...     hours: np.ndarray
    >>> runs = Runs(np.array([10.0, 12.0]))
    >>> runs.mean_hours, round(runs.standard_error_hours, 3)
    (11.0, 1.0)
    >>> Runs(np.array([10.0])).standard_error_hours
    Traceback (most recent call last):
    ...
    ValueError: standard_error needs trials >= 2, got trials=1
    """

    @property
    def mean_hours(self) -> float:
        """Mean of ``hours`` over the trials."""
        return self.mean("hours")

    @property
    def standard_error_hours(self) -> float:
        """Standard error of :attr:`mean_hours`; raises with fewer than two trials."""
        return self.standard_error("hours")


#: Characters per line of :func:`summary_text`.
SUMMARY_WIDTH = 78


def _cell(item: tuple[str, Any] | None, width: int) -> str:
    """``name:`` and its value right-aligned in ``width`` characters (``-`` for ``None``)."""
    if item is None:
        return ""
    name, value = item
    text = "-" if value is None else str(value)
    return f"{name}:{' ' * max(width - len(name) - 1 - len(text), 1)}{text}"


def summary_text(
    title: str,
    left: Sequence[tuple[str, Any]],
    right: Sequence[tuple[str, Any]],
    *,
    breakdown_hours: Mapping[str, float] | None = None,
    notes: Sequence[str] = (),
    caveats: Sequence[str] = (),
) -> str:
    """A result as text: a title, two columns of ``(name, value)``, the breakdown, notes, caveats.

    ``None`` values print as ``-`` (a variable the plan does not have); the
    breakdown gives each part's hours and its share of their sum; caveats
    are numbered, and said to be none when there are none.

    Examples
    --------
    >>> print(summary_text("Result", [("r", 2), ("quorum", None)], [("hours", "10.0")],
    ...                    breakdown_hours={"useful": 8.0, "restart": 2.0}))
                                        Result
    ==============================================================================
    r:                                  2    hours:                           10.0
    quorum:                             -
    ------------------------------------------------------------------------------
    breakdown                        hours    share
      useful                             8    0.800
      restart                            2    0.200
    ------------------------------------------------------------------------------
    caveats: none measured for this plan
    ==============================================================================
    """
    width, half = SUMMARY_WIDTH, (SUMMARY_WIDTH - 4) // 2
    lines = [title.center(width).rstrip(), "=" * width]
    for i in range(max(len(left), len(right))):
        a = _cell(left[i] if i < len(left) else None, half)
        b = _cell(right[i] if i < len(right) else None, half)
        lines.append(f"{a:<{half}}    {b}".rstrip())
    if breakdown_hours:
        total = sum(breakdown_hours.values())
        lines += ["-" * width, f"{'breakdown':<24}{'hours':>14}{'share':>9}"]
        for name, hours in breakdown_hours.items():
            share = f"{hours / total:.3f}" if math.isfinite(total) and total > 0 else "-"
            lines.append(f"  {name:<22}{hours:>14,.6g}{share:>9}")
    lines.append("-" * width)
    for note in notes:
        lines += textwrap.wrap(note, width, subsequent_indent="  ")
    if not caveats:
        lines.append("caveats: none measured for this plan")
    else:
        lines.append("caveats (model approximations and biases, then the audit's error):")
        for k, caveat in enumerate(caveats, 1):
            lines += textwrap.wrap(
                caveat, width, initial_indent=f"  [{k}] ", subsequent_indent="      "
            )
    lines.append("=" * width)
    return "\n".join(lines)
