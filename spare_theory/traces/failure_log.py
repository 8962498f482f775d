"""A cluster's failure log: outages per node, uptimes and repairs, fitted laws.

:class:`FailureLog` holds one row per fault (which node went down when, and
when it came back) and the window it was observed in, and derives what the
models need in hours: the uptimes and repair times with their censoring,
the fitted lifetime and repair laws
(:func:`~spare_theory.lifetimes.fitting.fit_lifetime_law`), the per-node
counts behind lemons and the bursts behind failure domains
(:mod:`~spare_theory.traces.patterns`), and the failure classes a category
column gives, with their repair laws (:meth:`FailureLog.failure_classes`,
:meth:`FailureLog.repairs_by_class`).  :func:`load_failure_log` reads
files (:mod:`~spare_theory.traces.formats`), and
:func:`infinitehbd_failure_log` the public StepFun trace shipped with the
package (``traces/data/infinitehbd``, Apache-2.0).

Long (about 850 lines) for one class: its semantics are a contract, stated
in full in the docstrings (about half the module).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._caching import cached
from .._validation import as_count, as_real
from ..hourly.scenario import Scenario
from ..lifetimes.classes import FailureClass, check_failure_classes
from ..lifetimes.fitting import LifetimeFit, fit_lifetime_law
from ..steps.scenario import StepScenario
from .formats import hours_per, is_stepfun, read_log_file, show, stepfun_faults, times_in_hours
from .patterns import Bursts, Heterogeneity, count_heterogeneity, failure_bursts
from .plans import log_scenario, log_step_scenario

__all__ = ["FailureLog", "infinitehbd_failure_log", "infinitehbd_trace_path", "load_failure_log"]

#: Nodes observed in the shipped StepFun trace (231 of them fail).
INFINITEHBD_NODES = 400
_INFINITEHBD = "data/infinitehbd/fault_trace.json"


class FailureLog:
    """Faults of a cluster's nodes over an observation window, in hours.

    Build it with :meth:`from_frame` or :func:`load_failure_log`.

    **Semantics** (the contract).  One row per fault: the node, when it went
    down (``start``), when it came back (``end``; missing: still down at the
    end of the log).  ``nodes`` is the number of nodes observed, including
    those that never failed (default: the distinct nodes of the log, with a
    warning that nodes without faults are then missing, which overstates the
    failure rate).  The window runs from ``observed_from`` to
    ``observed_until`` (default: the first and the last time in the log);
    a fault ending after it counts as still down at its end.  A fault
    starting after the window, or starting before it and over by its start,
    is an error; one starting before an explicit ``observed_from`` and still
    going on then is *in progress* at the window's start.  Times are numbers
    in ``time_unit`` or dates; everything derived is in hours from the
    window's start.

    - Per node, faults that overlap or touch (the next start at or before
      the previous end) are one **outage**, from its first start to its last
      end.  An outage holding a fault in progress at the window's start is
      **left-censored** (:attr:`left_censored`): it starts at the window's
      start, and what came before is unknown.
    - **Failures** (:attr:`failures`) are all the other outages: every fault
      at or after the window's start is a failure, the log's first fault
      under the default window included.
    - **Uptimes** run from the window's start or an outage's end to the next
      failure (observed); the last one is censored at the window's end
      (none if the node is down then); a node without faults gives one
      censored uptime of the whole window.  A failure at the window's very
      start ends an uptime of length 0 in the window: it has no uptime to
      fit (its length began before the window).  The exposure is the sum of
      all uptimes, and :attr:`failure_rate` is ``failures / exposure``: the
      exponential fit's rate when no failure sits at the window's start.
    - **Repairs** are the outages' lengths: observed when the node came back
      within the window, else censored at the window's end (none for an
      outage starting at the window's very end); a left-censored outage's
      repair is censored at its length in the window (it began earlier).  A
      zero length (start and end recorded at one time) lasted less than
      :attr:`time_resolution_hours` and is fitted as left-censored there.

    Nothing is dropped: a row that cannot be used is a ``ValueError`` naming
    the row (from 0) and the column.

    Examples
    --------
    >>> frame = pd.DataFrame({"node": ["a", "a", "b"], "start": [10.0, 30.0, 50.0],
    ...                       "end": [12.0, None, 55.0]})
    >>> log = FailureLog.from_frame(frame, nodes=3, observed_from=0.0, observed_until=100.0)
    >>> log.failures, log.exposure_hours, log.failure_rate == 3 / 223.0
    (3, 223.0, True)
    >>> durations, observed = log.uptimes()
    >>> durations.tolist(), observed.tolist()
    ([10.0, 18.0, 50.0, 45.0, 100.0], [True, True, True, False, False])
    >>> log.repairs()[0].tolist(), log.repairs()[1].tolist()
    ([2.0, 70.0, 5.0], [True, False, True])
    """

    def __init__(
        self,
        *,
        labels: np.ndarray,
        node: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        repaired: np.ndarray,
        node_count: int,
        window_hours: float,
        time_unit: str,
        faults: int,
        in_progress: np.ndarray,
        category: np.ndarray | None = None,
    ) -> None:
        # Built by from_frame: outages sorted by (node, start), node codes index labels.
        self._labels, self._node, self._start, self._end = labels, node, start, end
        self._repaired, self._left = repaired, in_progress
        self._node_count, self._window = node_count, window_hours
        self._time_unit, self._faults = time_unit, faults
        self._category = category

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        *,
        node: str = "node",
        start: str = "start",
        end: str = "end",
        nodes: int | None = None,
        observed_from: Any = None,
        observed_until: Any = None,
        time_unit: str = "hours",
        category: str | None = None,
    ) -> FailureLog:
        """The log of a frame with one row per fault (class docstring for the semantics).

        Parameters
        ----------
        frame : pandas.DataFrame
            One row per fault, any order.
        node, start, end : str
            Column names of the node (any labels), the time it went down and
            the time it came back (missing: still down).
        nodes : int, optional
            Nodes observed, ``>=`` the distinct nodes of the log (default
            them, with a warning).
        observed_from, observed_until : float or date, optional
            The window, in ``time_unit`` (or dates if the times are dates);
            default the first and last time of the log.
        time_unit : {"hours", "seconds", "minutes", "days", "weeks"}
            Unit of numeric times.
        category : str, optional
            Column of each fault's category (a root cause, a fault class); an
            outage takes its first fault's (:meth:`category_counts`,
            :meth:`failure_classes`).

        Returns
        -------
        FailureLog

        Raises
        ------
        ValueError
            Naming the row and column or the argument: a missing column, a
            missing node or start, unreadable or infinite times, an end before
            its start, a fault starting after the window or over before it
            starts, an empty window, ``nodes``
            below the distinct nodes, an unknown ``time_unit``, an empty log
            without ``nodes`` and a window.

        Examples
        --------
        >>> frame = pd.DataFrame({"host": [7, 7], "down": [1.0, 2.0], "up": [3.0, 2.5]})
        >>> log = FailureLog.from_frame(frame, node="host", start="down", end="up", nodes=1,
        ...                             observed_from=0, time_unit="days")
        >>> log.outages().to_dict("records")  # the two faults overlap: one outage
        [{'node': 7, 'start_hours': 24.0, 'end_hours': 72.0, 'repaired': True, \
'left_censored': False}]
        """
        unit_hours = hours_per(time_unit)
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
        columns = [("node", node), ("start", start), ("end", end)]
        for name, column in columns + ([("category", category)] if category else []):
            if column not in frame.columns:
                raise ValueError(
                    f"{name}: the log has no column {column!r} (columns: {list(frame.columns)})"
                )
        rows = frame.index.to_numpy()
        labels_in = frame[node]
        if labels_in.isna().any():
            raise ValueError(
                f"row {rows[np.flatnonzero(labels_in.isna())[0]]}, column {node!r}: missing"
            )
        s, s_dates = times_in_hours(frame[start], start, time_unit, missing_ok=False, labels=rows)
        e, e_dates = times_in_hours(frame[end], end, time_unit, missing_ok=True, labels=rows)
        if s_dates != e_dates and not np.isnan(e).all():
            raise ValueError(f"columns {start!r} and {end!r} must both be numbers or both dates")
        dates = s_dates
        early = e < s
        if early.any():
            i = int(np.flatnonzero(early)[0])
            raise ValueError(
                f"row {rows[i]}, column {end!r}: end {show(frame[end].iloc[i])} is before its "
                f"start {show(frame[start].iloc[i])}"
            )
        low = _bound(observed_from, "observed_from", dates, unit_hours)
        high = _bound(observed_until, "observed_until", dates, unit_hours)
        if len(frame) == 0 and (nodes is None or low is None or high is None):
            raise ValueError(
                "the log is empty: give nodes, observed_from and observed_until to say how many "
                "nodes were watched for how long (then nothing failed)"
            )
        low = float(np.min(s)) if low is None else low
        high = float(np.nanmax(np.concatenate([s, e]))) if high is None else high
        if not high > low:
            raise ValueError("the window is empty: observed_until must be after observed_from")
        # A fault before the window counts only while it is still going on at its start.
        outside = (s > high) | ((s < low) & (e <= low))
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise ValueError(
                f"row {rows[i]}, column {start!r}: start {show(frame[start].iloc[i])} is outside "
                "the window [observed_from, observed_until] (a fault before observed_from must "
                "still be going on at it)"
            )
        codes, labels = pd.factorize(labels_in, sort=True)
        distinct = len(labels)
        if nodes is None:
            warnings.warn(
                f"nodes not given: taking the {distinct} nodes of the log as all the nodes "
                "observed; nodes that never failed are then missing (the failure rate is "
                "overstated)",
                UserWarning,
                stacklevel=2,
            )
            count = distinct
        else:
            count = as_count(nodes, "nodes", minimum=max(distinct, 1))
        window = high - low
        s, e = s - low, e - low
        # A fault not over inside the window is still down at its end.
        until = np.where(np.isnan(e) | (e > window), np.inf, e)
        # Sort by node then start: one integer key (node, rank of start); np.lexsort is 6x slower.
        rank = np.empty(s.size, dtype=np.int64)
        rank[np.argsort(s)] = np.arange(s.size)
        order = np.argsort(codes.astype(np.int64) * s.size + rank)
        codes, s, until = codes[order], s[order], until[order]
        if category is not None:
            kinds = frame[category].to_numpy(dtype=object)[order]
            missing = pd.isna(kinds)
            if missing.any():
                raise ValueError(
                    f"row {rows[order][np.flatnonzero(missing)[0]]}, column {category!r}: missing"
                )
        reach = pd.Series(until).groupby(codes).cummax().to_numpy()
        first = np.ones(s.size, dtype=bool)
        first[1:] = (codes[1:] != codes[:-1]) | (s[1:] > reach[:-1])
        heads = np.flatnonzero(first)
        ends = np.maximum.reduceat(until, heads) if heads.size else until[:0]
        return cls(
            labels=np.asarray(labels),
            node=codes[heads],
            start=np.maximum(s[heads], 0.0),
            end=np.minimum(ends, window),
            repaired=np.isfinite(ends),
            node_count=count,
            window_hours=float(window),
            time_unit=time_unit,
            faults=len(frame),
            in_progress=s[heads] < 0,
            category=None if category is None else kinds[heads],
        )

    # -- sizes and rates ------------------------------------------------------

    @property
    def node_count(self) -> int:
        """Nodes observed, those that never failed included."""
        return self._node_count

    @property
    def faults(self) -> int:
        """Rows of the log (faults before merging)."""
        return self._faults

    @property
    def outage_count(self) -> int:
        """Outages after merging the faults of a node that overlap or touch."""
        return int(self._start.size)

    @property
    def failures(self) -> int:
        """Outages that start at or after the window's start (all but the left-censored)."""
        return int((~self._left).sum())

    @property
    def left_censored(self) -> int:
        """Outages already in progress at an explicit ``observed_from`` (not failures)."""
        return int(self._left.sum())

    @property
    def window_hours(self) -> float:
        """Length of the observation window, hours."""
        return self._window

    @property
    def time_unit(self) -> str:
        """Unit of the log's numeric times."""
        return self._time_unit

    @property
    def exposure_hours(self) -> float:
        """Node-hours up in the window (the sum of all uptimes)."""
        return float(self._uptimes()[0].sum())

    @property
    def failure_rate(self) -> float:
        """Failures per node-hour up, ``failures / exposure_hours`` (0 if nothing failed,
        ``inf`` if nodes failed without any time up in the window)."""
        exposure = self.exposure_hours
        return self.failures / exposure if exposure > 0 else float(self.failures and np.inf)

    @property
    def node_mtbf_hours(self) -> float:
        """Mean hours up between a node's failures, ``exposure / failures`` (``inf``: none)."""
        return self.exposure_hours / self.failures if self.failures else float("inf")

    @functools.cached_property
    def time_resolution_hours(self) -> float:
        """The log's time step: the smallest gap between two distinct recorded times, hours."""
        times = np.unique(np.concatenate([self._start, self._end[self._repaired]]))
        gaps = np.diff(times)
        return float(gaps.min()) if gaps.size else self._window

    # -- categories -------------------------------------------------------------

    def category_counts(self) -> pd.Series:
        """Failures by category (the category of each outage's first fault), most first.

        Raises
        ------
        ValueError
            When the log was read without a ``category`` column.

        Examples
        --------
        >>> frame = pd.DataFrame({"node": ["a", "b", "c"], "start": [1.0, 2.0, 3.0],
        ...                       "end": [1.5, 2.5, 3.5], "cause": ["gpu", "nccl", "gpu"]})
        >>> log = FailureLog.from_frame(frame, nodes=3, observed_from=0.0, category="cause")
        >>> log.category_counts().to_dict()
        {'gpu': 2, 'nccl': 1}
        """
        if self._category is None:
            raise ValueError("the log was read without a category column: pass category=")
        counts = pd.Series(self._category[~self._left]).value_counts()
        return counts.rename_axis("category").rename("failures")

    def _mapped_counts(self, mapping: Mapping[Any, str]) -> pd.Series:
        """:meth:`category_counts`, once ``mapping`` is known to send every category to a
        class (a ValueError naming the ones it leaves out)."""
        counts = self.category_counts()
        unmapped = [c for c in counts.index if c not in mapping]
        if unmapped:
            raise ValueError(
                f"mapping: the categories {unmapped} have no class (every failure needs one)"
            )
        return counts

    def failure_classes(
        self, mapping: Mapping[Any, str], classes: Sequence[FailureClass]
    ) -> tuple[FailureClass, ...]:
        """The scenario's failure classes with the log's shares: ``classes`` (their kinds and
        detection times; any share) each given the share of the failures whose category
        ``mapping`` sends to its name.

        Parameters
        ----------
        mapping : dict
            Category -> class name, for every category of the log.
        classes : sequence of FailureClass
            The classes named in ``mapping``; one that no failure maps to is
            left out.

        Raises
        ------
        ValueError
            Naming the categories ``mapping`` leaves out, a class name it uses
            that ``classes`` lacks, or a log without categories.

        Examples
        --------
        >>> frame = pd.DataFrame({"node": ["a", "b", "c", "d"], "start": [1.0, 2.0, 3.0, 4.0],
        ...                       "end": [1.5, 2.5, 3.5, 4.5],
        ...                       "cause": ["gpu", "nccl", "gpu", "sdc"]})
        >>> log = FailureLog.from_frame(frame, nodes=4, observed_from=0.0, category="cause")
        >>> hang = FailureClass("hang", 1.0, "hang", detect_minutes=10)
        >>> found = log.failure_classes({"gpu": "crash", "nccl": "hang", "sdc": "crash"},
        ...                             [FailureClass("crash", 1.0), hang])
        >>> [(c.name, c.share, c.detect_minutes) for c in found]
        [('crash', 0.75, 0.0), ('hang', 0.25, 10.0)]
        """
        counts = self._mapped_counts(mapping)
        named = {c.name: c for c in classes}
        unknown = sorted({name for name in mapping.values() if name not in named})
        if unknown:
            raise ValueError(f"mapping: no class named {unknown[0]!r} among classes")
        by_class = counts.groupby(counts.index.map(mapping)).sum()
        total = int(by_class.sum())
        return check_failure_classes(
            [
                dataclasses.replace(c, share=int(by_class[c.name]) / total)
                for c in classes
                if by_class.get(c.name, 0) > 0
            ]
        )

    # -- durations --------------------------------------------------------------

    def outages(self) -> pd.DataFrame:
        """One row per outage: ``node``, ``start_hours``, ``end_hours``, ``repaired``,
        ``left_censored``.

        Hours from the window's start, sorted by node then start;
        ``end_hours`` is the window's end when ``repaired`` is False, and
        ``start_hours`` 0 when ``left_censored``.
        """
        return pd.DataFrame(
            {
                "node": self._labels[self._node],
                "start_hours": self._start,
                "end_hours": self._end,
                "repaired": self._repaired,
                "left_censored": self._left,
            }
        )

    def failure_times_hours(self) -> np.ndarray:
        """Start of every failure (:attr:`failures`), hours, in time order."""
        return np.sort(self._start[~self._left])

    @functools.cached_property
    def _uptime_table(self) -> tuple[np.ndarray, ...]:
        """``(durations, observed, censor_at, node)``; nodes without faults last."""
        node, start, end, window = self._node, self._start, self._end, self._window
        first = np.ones(node.size, dtype=bool)
        first[1:] = node[1:] != node[:-1]
        previous = np.where(first, 0.0, np.roll(end, 1))
        # No uptime to fit before a left-censored outage or a failure at the window's start.
        seen = ~self._left & (start > previous)
        last = np.ones(node.size, dtype=bool)
        last[:-1] = node[1:] != node[:-1]
        tail = last & self._repaired & (end < window)
        quiet = self._node_count - self._labels.size
        durations = np.concatenate(
            [(start - previous)[seen], window - end[tail], np.full(quiet, window)]
        )
        observed = np.concatenate(
            [np.ones(int(seen.sum()), bool), np.zeros(int(tail.sum()) + quiet, bool)]
        )
        censor_at = np.concatenate(
            [(window - previous)[seen], window - end[tail], np.full(quiet, window)]
        )
        owner = np.concatenate(
            [node[seen], node[tail], np.arange(self._labels.size, self._node_count)]
        )
        return durations, observed, censor_at, owner

    def _uptimes(self) -> tuple[np.ndarray, np.ndarray]:
        durations, observed, _, _ = self._uptime_table
        return durations, observed

    def uptimes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(durations_hours, observed)`` of every uptime (class docstring).

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Hours, and ``False`` where censored at the window's end.
        """
        durations, observed = self._uptimes()
        return durations.copy(), observed.copy()

    def _repair_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep = self._repaired | (self._start < self._window)
        durations = (self._end - self._start)[keep]
        return durations, (self._repaired & ~self._left)[keep], (self._window - self._start)[keep]

    def repairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(durations_hours, observed)`` of every outage (class docstring).

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            Hours, and ``False`` where still down at the window's end.
        """
        durations, observed, _ = self._repair_table()
        return durations, observed

    # -- fits and patterns ---------------------------------------------------

    def fit_lifetime(
        self, law: str = "weibull", *, bootstraps: int = 0, seed: Any = None
    ) -> LifetimeFit:
        """The law of a node's time between failures, fitted to :meth:`uptimes`.

        :func:`~spare_theory.lifetimes.fitting.fit_lifetime_law` with each
        uptime's censoring time (the window's end) for the bootstrap.

        Parameters
        ----------
        law : {"weibull", "exponential", "gamma", "lognormal", "best"}
        bootstraps : int
            Goodness-of-fit bootstrap samples (0: none).
        seed : int or numpy.random.SeedSequence, optional
            Required with bootstraps.

        Returns
        -------
        LifetimeFit
        """
        durations, observed, censor_at, _ = self._uptime_table
        return fit_lifetime_law(
            durations, observed, law=law, censor_at=censor_at, bootstraps=bootstraps, seed=seed
        )

    def fit_repair(
        self,
        law: str = "lognormal",
        *,
        categories: Any = None,
        bootstraps: int = 0,
        seed: Any = None,
    ) -> LifetimeFit:
        """The law of repair times, fitted to :meth:`repairs` (as :meth:`fit_lifetime`).

        Zero lengths are left-censored at :attr:`time_resolution_hours`.
        ``categories`` (one or a list, of a log read with ``category=``)
        fits only the outages whose first fault is of them.

        Raises
        ------
        ValueError
            Naming ``categories`` when the log has no categories or no outage
            of them, or the log when it has no outages at all.
        """
        durations, observed, censor_at = self._repair_table()
        if categories is not None:
            if self._category is None:
                raise ValueError("categories: the log was read without a category column")
            wanted = [categories] if np.ndim(categories) == 0 else list(categories)
            chosen = np.isin(self._repair_categories(), wanted)
            if not chosen.any():
                raise ValueError(f"categories: no outage of {wanted!r} in the log")
            durations, observed, censor_at = durations[chosen], observed[chosen], censor_at[chosen]
        if durations.size == 0:
            raise ValueError("fit_repair: the log has no outages, so no repair times")
        resolution = self.time_resolution_hours if (durations == 0).any() else None
        return fit_lifetime_law(
            durations,
            observed,
            law=law,
            censor_at=censor_at,
            resolution=resolution,
            bootstraps=bootstraps,
            seed=seed,
        )

    def _repair_categories(self) -> np.ndarray:
        """The category of each outage of :meth:`repairs`, in its order."""
        assert self._category is not None
        return self._category[self._repaired | (self._start < self._window)]

    def repairs_by_class(self, mapping: Mapping[Any, str], law: str = "lognormal") -> pd.DataFrame:
        """The repair law of each failure class: :meth:`fit_repair` on the outages whose
        category ``mapping`` sends to it, beside all of them.

        The scenario takes one repair law (:meth:`fit_repair` over every
        outage: the classes' laws mixed in the log's proportions), and the
        simulation draws each failure's repair from it whatever its class;
        this table shows whether the classes repair alike.

        Parameters
        ----------
        mapping : dict
            Category -> class name, for every category of the log
            (:meth:`failure_classes`).
        law : str
            The law fitted to each (:meth:`fit_repair`).

        Returns
        -------
        pandas.DataFrame
            One row per class, then ``"all"``: ``outages``, ``repaired``,
            ``mean_minutes`` (the fitted law's mean; NaN, stated, where none of
            the class's outages ended within the window: the fit's ``note``
            says so) and ``fit`` (the
            :class:`~spare_theory.lifetimes.fitting.LifetimeFit`).

        Raises
        ------
        ValueError
            Naming the categories ``mapping`` leaves out, or a log without
            categories.

        Examples
        --------
        >>> frame = pd.DataFrame({"node": ["a", "b", "c", "d"], "start": [1.0, 2.0, 3.0, 4.0],
        ...                       "end": [1.5, 2.5, 5.0, 4.5],
        ...                       "cause": ["gpu", "nccl", "gpu", "nccl"]})
        >>> log = FailureLog.from_frame(frame, nodes=4, observed_from=0.0, category="cause")
        >>> table = log.repairs_by_class({"gpu": "crash", "nccl": "hang"}, law="exponential")
        >>> table["mean_minutes"].round(1).to_dict()
        {'crash': 75.0, 'hang': 30.0, 'all': 52.5}
        """
        self._mapped_counts(mapping)
        _, observed, _ = self._repair_table()
        owner = pd.Series(self._repair_categories()).map(mapping).to_numpy()
        rows = {}
        for name in (*dict.fromkeys(mapping.values()), "all"):
            mine = np.ones(owner.size, bool) if name == "all" else owner == name
            if not mine.any():
                continue
            cats = None if name == "all" else [c for c, n in mapping.items() if n == name]
            fit = self.fit_repair(law, categories=cats)
            rows[name] = {
                "outages": int(mine.sum()),
                "repaired": int(observed[mine].sum()),
                "mean_minutes": (
                    math.nan if fit.distribution is None else 60.0 * float(fit.distribution.mean())
                ),
                "fit": fit,
            }
        return pd.DataFrame.from_dict(rows, orient="index")

    def node_table(self) -> pd.DataFrame:
        """Per node: ``node`` (missing if it never failed), ``failures``, ``exposure_hours``."""
        durations, _, _, owner = self._uptime_table
        size = self._node_count
        names = np.full(size, None, dtype=object)
        names[: self._labels.size] = self._labels
        return pd.DataFrame(
            {
                "node": names,
                "failures": np.bincount(self._node[~self._left], minlength=size),
                "exposure_hours": np.bincount(owner, weights=durations, minlength=size),
            }
        )

    def heterogeneity(self) -> Heterogeneity:
        """Per-node counts against one rate, and the two-class (lemon) fit.

        :func:`~spare_theory.traces.patterns.count_heterogeneity` of
        :meth:`node_table`.
        """
        table = self.node_table()
        return count_heterogeneity(table["failures"], table["exposure_hours"])

    def bursts(self, window_minutes: float = 5.0) -> Bursts:
        """Failures within ``window_minutes`` of each other, chained into bursts.

        :func:`~spare_theory.traces.patterns.failure_bursts` of
        :meth:`failure_times_hours` over the window.
        """
        return failure_bursts(
            self.failure_times_hours(), window_minutes=window_minutes, span_hours=self._window
        )

    # -- plans -------------------------------------------------------------------

    def scenario(self, **fields: Any) -> Scenario:
        """The hour-level scenario of a cluster whose nodes fail as this log's do.

        :func:`~spare_theory.traces.plans.log_scenario` (keywords ``gpus``,
        ``gpus_per_group``, ``gpus_per_node=8``, ``law="weibull"``,
        ``renewal="node"``, ``lemons``, ``bursts``, ``burst_window_minutes``,
        ``repair_law`` and the other Scenario fields): failure law, lemons,
        domain share and repairs from the log, each with its sentence in
        ``scenario.provenance``.
        """
        return log_scenario(self, **fields)

    def step_scenario(self, **fields: Any) -> StepScenario:
        """The step-level scenario of a cluster whose nodes fail as this log's do.

        :func:`~spare_theory.traces.plans.log_step_scenario`, with ``provenance``.
        """
        return log_step_scenario(self, **fields)

    def summary(self) -> str:
        """Sizes, rates and repairs as text."""
        lines = [
            f"failure log: {self.node_count} nodes over {self.window_hours:.6g} h "
            f"({self.window_hours / 24:.4g} days), {self.faults} faults, "
            f"{self.outage_count} outages after merging, {self.failures} failures"
            + (
                f", {self.left_censored} left-censored (in progress at the window's start: not "
                "failures, their repairs censored)"
                if self.left_censored
                else ""
            ),
            f"  exposure {self.exposure_hours:.6g} node-hours, rate {self.failure_rate:.4g} per "
            f"node-hour, node MTBF {self.node_mtbf_hours:.6g} h",
        ]
        durations, observed = self.repairs()
        if observed.any():
            done = durations[observed]
            lines.append(
                f"  repairs: {observed.sum()} done, {(~observed).sum()} still down; "
                f"median {np.median(done):.4g} h, mean {done.mean():.4g} h, max {done.max():.4g} h"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"FailureLog(nodes={self.node_count}, window_hours={self.window_hours:.6g}, "
            f"faults={self.faults}, failures={self.failures})"
        )


def _bound(value: Any, name: str, dates: bool, unit_hours: float) -> float | None:
    """A window bound in hours (as the log's times: numbers in the unit, or dates)."""
    if value is None:
        return None
    if dates:
        try:
            stamp = pd.Timestamp(value)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{name} must be a date like the log's times, got {value!r}") from exc
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return float((stamp - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(hours=1))
    return as_real(value, name) * unit_hours


def load_failure_log(
    path: str | Path,
    *,
    node: str = "node",
    start: str = "start",
    end: str = "end",
    nodes: int | None = None,
    observed_from: Any = None,
    observed_until: Any = None,
    time_unit: str = "hours",
    category: str | None = None,
) -> FailureLog:
    """Read a failure log file: CSV, JSON lines, JSON, Parquet, or StepFun events.

    The format comes from the suffix (:func:`~spare_theory.traces.formats.read_log_file`);
    a table with StepFun's ``node_id``, ``event_time``, ``event_type`` is
    paired into faults (:func:`~spare_theory.traces.formats.stepfun_faults`)
    and its columns replace ``node``, ``start``, ``end``.  Then
    :meth:`FailureLog.from_frame` with the keywords.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    node, start, end, nodes, observed_from, observed_until, time_unit, category
        As :meth:`FailureLog.from_frame` (StepFun times are days: pass
        ``time_unit="days"``; its categories are the columns ``"level"`` and
        ``"class"``, its ``fault_type``'s ``Level`` and ``Class``).

    Returns
    -------
    FailureLog

    Raises
    ------
    ValueError
        As :meth:`FailureLog.from_frame` and for unreadable files.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "faults.csv"
    >>> _ = path.write_text("node,start,end\\nn1,2.0,3.0\\nn2,5.0,\\n")
    >>> log = load_failure_log(path, nodes=4, observed_from=0.0, observed_until=10.0)
    >>> log.failures, log.exposure_hours
    (2, 34.0)
    """
    frame = read_log_file(path)
    if is_stepfun(frame):
        frame = stepfun_faults(frame).set_index("event")
        node, start, end = "node", "start", "end"
    return FailureLog.from_frame(
        frame,
        node=node,
        start=start,
        end=end,
        nodes=nodes,
        observed_from=observed_from,
        observed_until=observed_until,
        time_unit=time_unit,
        category=category,
    )


@cached(maxsize=1)
def infinitehbd_failure_log() -> FailureLog:
    """The public StepFun trace shipped with the package: 400 GPU servers, 348 days.

    stepfun-ai/InfiniteHBD-Trace (commit 7aacdc8, Apache-2.0), the trace of
    the InfiniteHBD paper (SIGCOMM 2025, arXiv 2502.03885): 584 faults of
    231 of 400 servers of an LLM pre-training cluster from 2024-03-30.  Read
    with ``nodes=400``, times in days from the start of the observation, the
    window from day 0 to the last event (day 348.98), each fault's category its
    ``fault_type``'s ``Class`` (:meth:`FailureLog.category_counts`).

    Returns
    -------
    FailureLog

    Examples
    --------
    >>> log = infinitehbd_failure_log()
    >>> log.node_count, log.faults, log.outage_count, round(log.window_hours / 24, 2)
    (400, 584, 582, 348.98)
    >>> round(log.fit_lifetime("weibull").parameters["shape"], 2)
    0.39
    """
    return load_failure_log(
        infinitehbd_trace_path(),
        nodes=INFINITEHBD_NODES,
        observed_from=0.0,
        time_unit="days",
        category="class",
    )


def infinitehbd_trace_path() -> Path:
    """Where the shipped StepFun ``fault_trace.json`` is (with its LICENSE and README).

    Examples
    --------
    >>> sorted(p.name for p in infinitehbd_trace_path().parent.iterdir() if p.suffix != ".py")
    ['LICENSE', 'README.md', 'fault_statistics.json', 'fault_trace.json']
    """
    return Path(str(importlib.resources.files("spare_theory.traces") / _INFINITEHBD))
