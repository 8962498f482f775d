"""Reading failure logs: files to a frame of faults, times to hours, the StepFun event format.

:class:`~spare_theory.traces.failure_log.FailureLog` works on one row per
fault (node, start, end).  This module gets there from what logs look like:

- **files**: CSV (``.csv``, compressed ones too), JSON lines (``.jsonl``,
  ``.ndjson``), a JSON array of rows (``.json``) and Parquet (``.parquet``,
  when pyarrow is installed), by the file's suffix;
- **the StepFun format** (the InfiniteHBD trace), recognised by its
  ``node_id``, ``event_time`` and ``event_type`` fields in any of these
  containers: one event per row, ``fault_start`` or ``fault_end``, paired per
  node in time order (the ``k``-th start of a node with its ``k``-th end; a
  start left without an end is still down when the log ends);
- **times**: numbers in a unit of :data:`TIME_UNITS`, or dates (ISO 8601
  text or datetime columns); :func:`hours_per` is the one conversion table.

Every row that cannot be read is a :class:`ValueError` naming the row
(counted from 0, header excluded) and the column; nothing is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import as_choice

__all__ = [
    "STEPFUN_COLUMNS",
    "TIME_UNITS",
    "hours_per",
    "is_stepfun",
    "read_log_file",
    "show",
    "stepfun_faults",
    "times_in_hours",
]

#: Hours in one unit of each accepted ``time_unit``.
TIME_UNITS = {"seconds": 1 / 3600, "minutes": 1 / 60, "hours": 1.0, "days": 24.0, "weeks": 168.0}

#: The fields that make a table a StepFun event log.
STEPFUN_COLUMNS = ("node_id", "event_time", "event_type")

_HOUR = pd.Timedelta(hours=1)
_EPOCH = pd.Timestamp(0, tz="UTC")


def hours_per(time_unit: str) -> float:
    """Hours in one ``time_unit`` (:data:`TIME_UNITS`).

    Parameters
    ----------
    time_unit : {"seconds", "minutes", "hours", "days", "weeks"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``time_unit``.

    Examples
    --------
    >>> hours_per("days"), hours_per("minutes") * 90
    (24.0, 1.5)
    """
    return TIME_UNITS[as_choice(time_unit, "time_unit", TIME_UNITS)]


def show(value: Any) -> str:
    """A cell for an error message: text quoted, numbers plain.

    Examples
    --------
    >>> show("soon"), show(np.float64(4.0))
    ("'soon'", '4.0')
    """
    return repr(value) if isinstance(value, str) else str(value)


def read_log_file(path: str | Path) -> pd.DataFrame:
    """The rows of a log file as a frame (format from the suffix, module docstring).

    Parameters
    ----------
    path : str or pathlib.Path
        ``.csv`` (``.csv.gz`` ...), ``.jsonl``, ``.ndjson``, ``.json`` or ``.parquet``.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        A missing file, an unknown suffix, unreadable content, Parquet without pyarrow.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "log.csv").write_text("node,start,end\\nn1,1.5,2.0\\n")
    >>> read_log_file(folder / "log.csv").to_dict("records")
    [{'node': 'n1', 'start': 1.5, 'end': 2.0}]
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file")
    suffixes = [s.lower() for s in path.suffixes]
    kind = next(
        (s for s in suffixes if s in (".csv", ".jsonl", ".ndjson", ".json", ".parquet")), ""
    )
    try:
        if kind == ".csv":
            return pd.read_csv(path)
        if kind in (".jsonl", ".ndjson"):
            return pd.read_json(path, lines=True)
        if kind == ".json":
            with path.open() as handle:
                rows = json.load(handle)
            if not isinstance(rows, list):
                raise ValueError("a .json log must be an array of rows (or use .jsonl)")
            return pd.json_normalize(rows, max_level=0) if rows else pd.DataFrame()
        if kind == ".parquet":
            try:
                return pd.read_parquet(path)
            except ImportError as exc:
                raise ValueError("reading Parquet needs pyarrow: pip install pyarrow") from exc
    except (OSError, json.JSONDecodeError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {str(path)!r}: {exc}") from exc
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    raise ValueError(
        f"path {str(path)!r}: unknown format (suffix .csv, .jsonl, .ndjson, .json or .parquet)"
    )


def is_stepfun(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` holds StepFun events (it has :data:`STEPFUN_COLUMNS`).

    Examples
    --------
    >>> is_stepfun(pd.DataFrame(columns=["node_id", "event_time", "event_type"]))
    True
    """
    return all(c in frame.columns for c in STEPFUN_COLUMNS)


def stepfun_faults(events: pd.DataFrame) -> pd.DataFrame:
    """StepFun events paired into faults: columns ``node``, ``start``, ``end``, ``event``
    (and ``level``, ``class``, the start event's ``fault_type`` categories, when it has one).

    The ``k``-th ``fault_start`` of a node (in time order, file order among
    equal times) pairs with its ``k``-th ``fault_end``; ``end`` is NaN for a
    start left without one.  ``event`` is the position of the start event in
    the file, for error messages.

    Parameters
    ----------
    events : pandas.DataFrame
        Columns ``node_id``, ``event_time`` (numbers), ``event_type``.

    Returns
    -------
    pandas.DataFrame
        One row per fault, in the order of the start events.

    Raises
    ------
    ValueError
        Naming the event and column: a missing node or a time that is not a
        finite number, an unknown ``event_type``, an end with no start before
        it, an end before its start.

    Examples
    --------
    >>> events = pd.DataFrame({"node_id": ["a", "a", "b"], "event_time": [1.0, 2.5, 2.0],
    ...                        "event_type": ["fault_start", "fault_end", "fault_start"]})
    >>> stepfun_faults(events).to_dict("list")
    {'node': ['a', 'b'], 'start': [1.0, 2.0], 'end': [2.5, nan], 'event': [0, 2]}
    """
    frame = events.reset_index(drop=True)
    kind = frame["event_type"]
    bad = ~kind.isin(("fault_start", "fault_end"))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"event {i}, column 'event_type': {show(kind.iloc[i])} is neither 'fault_start' "
            "nor 'fault_end'"
        )
    node = frame["node_id"]
    if node.isna().any():
        raise ValueError(f"event {int(np.flatnonzero(node.isna())[0])}, column 'node_id': missing")
    time = pd.to_numeric(frame["event_time"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(time).all():
        i = int(np.flatnonzero(~np.isfinite(time))[0])
        raise ValueError(
            f"event {i}, column 'event_time': {show(frame['event_time'].iloc[i])} is not a finite "
            "number of days"
        )
    table = pd.DataFrame({"node": node, "time": time, "start": kind == "fault_start"})
    table["event"] = np.arange(len(table))
    table = table.sort_values(["node", "time", "event"], kind="stable")
    table["k"] = table.groupby(["node", "start"]).cumcount()
    starts = table[table["start"]]
    ends = table[~table["start"]]
    paired = starts.merge(ends, on=["node", "k"], how="outer", suffixes=("", "_end"))
    orphan = paired["time"].isna()
    if orphan.any():
        row = paired[orphan].sort_values("event_end").iloc[0]
        raise ValueError(
            f"event {int(row['event_end'])}, column 'event_type': fault_end of node "
            f"{row['node']!r} at day {row['time_end']:g} has no fault_start before it"
        )
    early = paired["time_end"] < paired["time"]
    if early.any():
        row = paired[early].sort_values("event_end").iloc[0]
        raise ValueError(
            f"event {int(row['event_end'])}, column 'event_time': fault_end of node "
            f"{row['node']!r} at day {row['time_end']:g} is before its fault_start at day "
            f"{row['time']:g} (event {int(row['event'])})"
        )
    paired = paired.sort_values("event")
    faults = pd.DataFrame(
        {
            "node": paired["node"].to_numpy(),
            "start": paired["time"].to_numpy(),
            "end": paired["time_end"].to_numpy(),
            "event": paired["event"].to_numpy(dtype=np.int64),
        }
    )
    if "fault_type" in frame.columns:
        # StepFun's fault_type of the start event: {"Level": ..., "Class": ..., "Desc": ...}.
        kinds = frame["fault_type"].iloc[faults["event"].to_numpy()]
        for key in ("Level", "Class"):
            faults[key.lower()] = [t.get(key) if isinstance(t, dict) else None for t in kinds]
    return faults


def times_in_hours(
    values: Any, column: str, time_unit: str, *, missing_ok: bool, labels: Any = None
) -> tuple[np.ndarray, bool]:
    """A column of times as float hours (``NaN`` where missing) and whether they were dates.

    Numbers count in ``time_unit``; dates (datetime columns, or text that is
    ISO 8601 throughout) count from 1970-01-01 UTC and ignore ``time_unit``.

    Parameters
    ----------
    values : array_like or pandas.Series
        The column.
    column : str
        Its name, for errors.
    time_unit : str
        Unit of numbers (:data:`TIME_UNITS`).
    missing_ok : bool
        Whether a missing value is allowed (``end``: still down).
    labels : array_like, optional
        Row labels for errors (default positions from 0).

    Returns
    -------
    (numpy.ndarray, bool)

    Raises
    ------
    ValueError
        Naming the row and column: a missing value (unless allowed), text
        that is neither a number nor a date, an infinite number.

    Examples
    --------
    >>> times_in_hours([1.0, None], "end", "days", missing_ok=True)[0].tolist()
    [24.0, nan]
    >>> hours, dates = times_in_hours(["2024-03-30T00:00", "2024-03-30T06:30"], "start",
    ...                               "hours", missing_ok=False)
    >>> (hours - hours[0]).tolist(), dates
    ([0.0, 6.5], True)
    """
    series = pd.Series(values).reset_index(drop=True)
    names = np.arange(len(series)) if labels is None else np.asarray(labels)
    absent = series.isna().to_numpy()
    if absent.any() and not missing_ok:
        raise ValueError(f"row {names[np.flatnonzero(absent)[0]]}, column {column!r}: missing")
    if pd.api.types.is_datetime64_any_dtype(series):
        stamps = pd.to_datetime(series, utc=True)
        return ((stamps - _EPOCH) / _HOUR).to_numpy(dtype=float), True
    if pd.api.types.is_bool_dtype(series):
        raise ValueError(f"column {column!r} must hold times, got booleans")
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    unread = np.isnan(numbers) & ~absent
    if unread.any():
        stamps = pd.to_datetime(series, errors="coerce", utc=True, format="ISO8601")
        dated = ~stamps.isna().to_numpy()
        if (~unread & ~absent).any():  # numbers, and something else
            i = int(np.flatnonzero(unread)[0])
            value = show(series.iloc[i])
            what = "is a date among numbers" if dated[i] else f"cannot be read as {time_unit}"
            raise ValueError(f"row {names[i]}, column {column!r}: {value} {what}")
        if (~dated & ~absent).any():
            i = int(np.flatnonzero(~dated & ~absent)[0])
            raise ValueError(
                f"row {names[i]}, column {column!r}: cannot read {show(series.iloc[i])} as a "
                f"number of {time_unit} or an ISO 8601 date"
            )
        return ((stamps - _EPOCH) / _HOUR).to_numpy(dtype=float), True
    if np.isinf(numbers).any():
        i = int(np.flatnonzero(np.isinf(numbers))[0])
        raise ValueError(f"row {names[i]}, column {column!r}: {show(series.iloc[i])} is infinite")
    return numbers * hours_per(time_unit), False
