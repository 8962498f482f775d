"""The vocabulary every simulation result shares: ``mean``, ``standard_error``, ``to_frame``.

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
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

__all__ = ["HourSamples", "TrialSamples"]


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
