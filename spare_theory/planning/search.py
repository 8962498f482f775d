"""The searches of the planning core, written once and used by every front door.

Three searches, none of which knows what it is minimising:

- :func:`minimize_log_interval`: a continuous interval (the checkpoint
  interval ``tau`` of an hour-level plan) in ``x = log tau``, over a
  vectorised objective.  Hours against ``tau`` can have several local minima
  (a sharp cycle holds a whole number of segments), so no local search from
  one start: a fine grid over the part that matters, coarse batches below it,
  zooms around the best local minima, then a bounded Brent polish inside the
  last zoom step.
- :func:`minimize_integer`: an integer (the checkpoint interval ``k`` in steps
  of a step-level plan, a planned-restart trigger, an elastic job's quorum)
  over a geometric grid that brackets the minimum, an integer ternary search
  to narrow a wide bracket, then every integer of the bracket.  Exact when
  the objective is unimodal on the bracket.
- :func:`walk_redundancy`: the walk over ``r``, in legs from a start towards a
  stop, each leg ending after ``patience`` consecutive ``r`` that do not beat
  the best value so far (the curve is unimodal in practice: more redundancy
  first buys longer cycles, then only costs overhead); a leg may instead be a
  :class:`Bracket`, a geometric grid searched by :func:`minimize_integer`,
  for strategies whose best ``r`` can be in the thousands (hot spares).

Ties go to the smaller argument everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy.optimize import minimize_scalar

__all__ = [
    "REFUSED",
    "Bracket",
    "Leg",
    "first_least",
    "minimize_integer",
    "minimize_log_interval",
    "walk_redundancy",
]

T = TypeVar("T")

# Interval search (steps in log tau): the fine grid's step, the coarse
# batches below it, zoom size, how many local minima are zoomed, the last step.
_FINE_STEP = 0.025
_COARSE_STEP = 0.25
_ZOOM_POINTS = 11
_ZOOM_MINIMA = 3
_LAST_STEP = 0.01
# The ripple scan around the best zoomed point: half-width and step in x.
_RIPPLE_HALF_WIDTH = 0.05
_RIPPLE_STEP = 0.0005
# Brent's tolerance in x = log tau inside the last step.
_POLISH_XATOL = 1e-5


def _grid(start: float, stop: float, step: float) -> np.ndarray:
    """Points from ``start`` to ``stop`` (both included) at most ``step`` apart."""
    return np.linspace(start, stop, max(math.ceil((stop - start) / step), 1) + 1)


def _batch_below(x: float, lo: float) -> np.ndarray:
    """Up to 8 coarse steps below ``x``, not below ``lo`` (empty at ``lo``)."""
    return np.unique(np.maximum(x - _COARSE_STEP * np.arange(8, 0, -1), lo))[: 8 if x > lo else 0]


def minimize_log_interval(
    values: Callable[[np.ndarray], tuple[Any, np.ndarray]],
    lo: float,
    hi: float,
    fine_lo: float,
    fine_hi: float,
) -> tuple[float, Any, int]:
    """Minimise a vectorised objective over ``x`` in ``[lo, hi]`` (``x = log tau``).

    1. Every ``x`` in ``[fine_lo, fine_hi]`` (clipped to the range) on a grid
       of step ``0.025``: where several local minima can sit.
    2. Smaller ``x``, by batches of 8 steps of ``0.25``, until the best point
       is not the lowest one (one batch always: the main, smooth minimum may
       lie below).
    3. Zooms of 11 points, each ``5x`` finer: the first around each of the 3
       best local minima of the grid (a dip can be narrower than the grid
       step), then around the best point, down to a step of at most ``0.01``.
    4. A scan of step ``0.0005`` over ``0.05`` either side of the best point
       (the objective can ripple finer than the last zoom); its lowest point
       is kept if it is lower.
    5. Brent's bounded search within one scan step around the best point
       (to ``1e-5`` in ``x``); its point is kept only if it is lower.

    Parameters
    ----------
    values : callable
        ``values(x) -> (data, objective)`` for an array of ``x``: the objective
        is an array of the same length (``inf`` where undefined), ``data``
        anything the caller needs back, indexed like ``x``.
    lo, hi : float
        The range searched, ``lo < hi``.
    fine_lo, fine_hi : float
        Where the fine grid goes (clipped to ``[lo, hi]``).

    Returns
    -------
    tuple of (float, object, int)
        The best ``x``, the ``data`` of the call that evaluated it, and its
        index in that call.

    Examples
    --------
    Two minima, the deeper one narrow:

    >>> def f(x):
    ...     y = 0.05 * (x - 1.0) ** 2 + 0.5 - 0.7 * np.exp(-(((x - 3.0) / 0.05) ** 2))
    ...     return x, y
    >>> x, data, i = minimize_log_interval(f, -5.0, 5.0, 2.0, 4.0)
    >>> round(x, 3), float(data[i]) == x
    (3.0, True)
    """
    top = min(max(fine_hi, lo), hi)
    x = _grid(min(max(fine_lo, lo), top), top, _FINE_STEP)
    x = np.concatenate([_batch_below(float(x[0]), lo), x])
    values_x = values(x)[1]
    while x[0] > lo and np.argmin(values_x) == 0:
        below = _batch_below(float(x[0]), lo)
        x, values_x = np.concatenate([below, x]), np.concatenate([values(below)[1], values_x])
    padded = np.concatenate([[np.inf], values_x, [np.inf]])
    minima = np.flatnonzero((values_x <= padded[:-2]) & (values_x <= padded[2:]))
    picked = minima[np.argsort(values_x[minima])][:_ZOOM_MINIMA]
    # Each zoom spans the grid step around its centre (fine or coarse part).
    gaps = np.diff(x, prepend=x[0], append=x[-1])
    centres, steps = x[picked], np.maximum(gaps[picked], gaps[picked + 1])
    offsets = np.arange(-(_ZOOM_POINTS // 2), _ZOOM_POINTS // 2 + 1)
    while True:
        steps = steps / 5
        zoom = np.clip((centres[:, None] + steps[:, None] * offsets[None, :]).ravel(), lo, hi)
        data, objective = values(zoom)
        i = int(np.argmin(objective))
        centres, steps = zoom[i : i + 1], steps[i // _ZOOM_POINTS : i // _ZOOM_POINTS + 1]
        if steps[0] <= 1.01 * _LAST_STEP:
            break
    best_x, best = float(zoom[i]), float(objective[i])
    if not math.isfinite(best):
        return best_x, data, i
    scan = _grid(
        max(best_x - _RIPPLE_HALF_WIDTH, lo), min(best_x + _RIPPLE_HALF_WIDTH, hi), _RIPPLE_STEP
    )
    scan_data, scan_objective = values(scan)
    j = int(np.argmin(scan_objective))
    if scan_objective[j] < best:
        best_x, best, data, i = float(scan[j]), float(scan_objective[j]), scan_data, j
    a, b = max(best_x - _RIPPLE_STEP, lo), min(best_x + _RIPPLE_STEP, hi)
    if b > a:
        # Brent's answer is a point it evaluated: keep each one's data.
        polished: dict[float, Any] = {}

        def at(y: float) -> float:
            polished[y] = values(np.array([y]))
            return float(polished[y][1][0])

        polish = minimize_scalar(
            at, bounds=(a, b), method="bounded", options={"xatol": _POLISH_XATOL}
        )
        if polish.fun < best:
            return float(polish.x), polished[float(polish.x)][0], 0
    return best_x, data, i


# Values within this share of the least are ties: on a plateau (repairs that make
# wipe-outs negligible, a quorum no run reaches) the hours differ only in their last
# digits, which differ from machine to machine; and a walk's patience is not reset,
# or it would climb r for nothing.
_PLATEAU_REL = 1e-12


def _least(seen: dict[int, float]) -> int:
    """The smallest ``n`` whose value the least value does not beat (:func:`_beats`)."""
    least = min(seen.values())
    return min(n for n, v in seen.items() if not _beats(least, v))


def minimize_integer(
    value: Callable[[int], float],
    grid: Iterable[int],
    *,
    exhaustive: int = 64,
    stop: Callable[[int], bool] | None = None,
) -> tuple[int, dict[int, float]]:
    """The integer minimising ``value``: a grid brackets it, then the bracket is searched.

    1. ``value`` at each point of ``grid`` (ascending), stopping after a point
       where ``stop(point)`` is true (later points cannot matter);
    2. the bracket between the best grid point's neighbours, narrowed by an
       integer ternary search while it is wider than ``exhaustive``;
    3. every integer of the bracket.

    Parameters
    ----------
    value : callable
        ``value(n) -> float`` (``inf`` where undefined); called once per ``n``.
    grid : iterable of int
        Ascending points that bracket the minimum (e.g. geometric).
    exhaustive : int
        Widest bracket searched integer by integer, ``>= 2``.
    stop : callable, optional
        ``stop(n)``: no grid point beyond ``n`` is needed.

    Returns
    -------
    tuple of (int, dict)
        The best ``n`` and every value computed.  Ties go to the smallest
        ``n``; values within ``1e-12`` of the least (relative) are ties, so
        that float rounding on a plateau does not pick the plan.

    Examples
    --------
    >>> best, seen = minimize_integer(lambda n: (n - 37) ** 2, [1, 2, 4, 8, 16, 32, 64, 128])
    >>> best, len(seen) < 128
    (37, True)
    """
    seen: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in seen:
            seen[n] = float(value(n))
        return seen[n]

    points: list[int] = []
    for n in grid:
        points.append(int(n))
        at(int(n))
        if stop is not None and stop(int(n)):
            break
    i = int(np.argmin([seen[n] for n in points]))
    lo, hi = points[max(i - 1, 0)], points[min(i + 1, len(points) - 1)]
    while hi - lo > exhaustive:
        third = (hi - lo) // 3
        a, b = lo + third, hi - third
        if at(a) <= at(b):
            hi = b
        else:
            lo = a
    for n in range(lo, hi + 1):
        at(n)
    return _least(seen), seen


def _beats(current: float, best: float) -> bool:
    """Whether ``current`` is below ``best`` by more than ``_PLATEAU_REL`` of it."""
    if not math.isfinite(best):
        return current < best
    return current < best - _PLATEAU_REL * abs(best)


def first_least(values: Sequence[float]) -> int:
    """Index of the first value within a relative ``1e-12`` of the least (a plateau's first).

    Where a plan's hours are flat in ``r`` they differ only in their last
    digits, which differ from machine to machine (library versions): the
    first of the plateau (the least redundancy) is the one every machine
    picks, as :func:`walk_redundancy`'s patience counts it.

    Examples
    --------
    >>> first_least([3.0, 2.0 + 4e-16, 2.0, 2.5])
    1
    >>> first_least([3.0, 2.0 + 1e-6, 2.0])
    2
    """
    least = min(values)
    return next(i for i, value in enumerate(values) if not _beats(least, value))


#: What ``evaluate`` returns in :func:`walk_redundancy` when the model refuses an ``r``
#: outright (a larger ``r`` is refused too: more hosts than failure domains, say).
REFUSED: Any = type("Refused", (), {"__repr__": lambda self: "REFUSED"})()


@dataclass(frozen=True)
class Leg:
    """One leg of a walk over ``r``: from ``start`` towards ``stop`` (either way).

    ``patience``: consecutive ``r`` without beating the best value (by more
    than a relative ``1e-12``: gains in the last digits on a plateau do not
    count) after which the leg ends (``math.inf``: walk to ``stop``).

    Examples
    --------
    >>> Leg(5, 2, math.inf)
    Leg(start=5, stop=2, patience=inf)
    """

    start: int
    stop: int
    patience: float = 3


@dataclass(frozen=True)
class Bracket:
    """A leg searched rather than walked: an ascending grid of ``r`` that brackets the best.

    :func:`minimize_integer` evaluates the grid, stopping once ``patience``
    consecutive grid points have not beaten the best, then narrows the
    bracket around the best point by an integer ternary search to
    ``exhaustive`` integers and evaluates those: the best ``r`` of a curve
    unimodal on the bracket, in ``O(log r)`` evaluations instead of ``r``.

    Examples
    --------
    >>> Bracket.geometric(1, 1000).grid[:10]
    (1, 2, 3, 4, 5, 7, 10, 14, 19, 27)
    """

    grid: tuple[int, ...]
    patience: float = 3
    exhaustive: int = 8

    @classmethod
    def geometric(
        cls, lo: int, hi: int, ratio: float = 1.4, *, patience: float = 3, exhaustive: int = 8
    ) -> Bracket:
        """The integers of ``[lo, hi]`` nearest a geometric sequence of ``ratio`` (both ends in)."""
        count = max(math.ceil(math.log(max(hi, 1) / max(lo, 1)) / math.log(ratio)), 1) + 1
        grid = np.unique(np.clip(np.round(np.geomspace(max(lo, 1), max(hi, 1), count)), lo, hi))
        return cls(tuple(int(r) for r in grid), patience, exhaustive)


def walk_redundancy(
    evaluate: Callable[[int], T | None],
    value: Callable[[T], float],
    legs: Sequence[Leg | Bracket],
    accepts: Callable[[int], bool],
    curve: dict[int, T] | None = None,
) -> dict[int, T]:
    """Walk ``r`` along ``legs``, adding ``evaluate(r)`` to the curve.

    A leg ends after its ``stop``, at the first ``r`` that ``accepts`` refuses
    (no plan of the strategy there: SPARe without a modular ruler at ``N``),
    or once ``patience`` consecutive ``r`` have not beaten the best value of
    the whole curve so far by more than a relative ``1e-12`` (counted only
    once some value is finite).
    ``evaluate`` may return ``None`` (no plan progresses at that ``r``): it
    counts as not beating the best and is left out of the curve.  It may
    return :data:`REFUSED` (the model refuses that ``r``, and every larger
    one): a leg walking up ends there, a leg walking down skips it.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(r)``: the best plan at ``r`` (or ``None``).
    value : callable
        ``value(plan)``: what is minimised (hours).
    legs : sequence of Leg
        Walked in order, sharing the curve.
    accepts : callable
        ``accepts(r)``: whether ``r`` is a plan of the strategy.
    curve : dict, optional
        Plans already known (updated in place and returned).

    Returns
    -------
    dict
        ``r -> plan``.

    Examples
    --------
    >>> walk_redundancy(lambda r: (r - 4) ** 2, float, [Leg(1, 10)], lambda r: True)
    {1: 9, 2: 4, 3: 1, 4: 0, 5: 1, 6: 4, 7: 9}
    """
    curve = {} if curve is None else curve
    for leg in legs:
        if isinstance(leg, Bracket):
            _search_bracket(evaluate, value, leg, accepts, curve)
            continue
        step = 1 if leg.stop >= leg.start else -1
        best = min((value(p) for p in curve.values()), default=math.inf)
        worse = 0
        for r in range(leg.start, leg.stop + step, step):
            if not accepts(r):
                break
            plan = evaluate(r)
            if plan is REFUSED:
                if step > 0:
                    break
                continue
            if plan is not None:
                curve[r] = plan
            current = math.inf if plan is None else value(plan)
            if _beats(current, best):
                best, worse = current, 0
                continue
            worse += 1
            if worse >= leg.patience and math.isfinite(best):
                break
    return curve


def _search_bracket(
    evaluate: Callable[[int], T | None],
    value: Callable[[T], float],
    leg: Bracket,
    accepts: Callable[[int], bool],
    curve: dict[int, T],
) -> None:
    """Search ``leg`` with :func:`minimize_integer`, adding every plan evaluated to ``curve``."""
    best, worse = min((value(p) for p in curve.values()), default=math.inf), 0

    def score(r: int) -> float:
        # A refused r is no plan here (a search has no direction to end in).
        plan = evaluate(r) if accepts(r) else None
        if plan is None or plan is REFUSED:
            return math.inf
        curve[r] = plan
        return value(plan)

    def stop(r: int) -> bool:
        nonlocal best, worse
        current = value(curve[r]) if r in curve else math.inf
        if _beats(current, best):
            best, worse = current, 0
        else:
            worse += 1
        return worse >= leg.patience and math.isfinite(best)

    minimize_integer(score, leg.grid, exhaustive=leg.exhaustive, stop=stop)
