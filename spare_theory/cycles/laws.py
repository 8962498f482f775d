"""Cycle laws of the fault-tolerance strategies: how long a restart cycle lasts, what it computes.

A *cycle* starts when a global restart begins with all ``N`` groups healthy;
groups then fail independently and stay failed until the next restart; the
cycle ends at the *wipe-out*, the failure after which the strategy cannot go
on.  Time is dimensionless, ``u = lambda t`` (``lambda``: failures of one
group per unit time), and a group has failed by ``u`` with probability
``p(u)`` (``1 - e^{-u}`` for exponential lifetimes).  A strategy is one
:class:`CycleLaw` subclass giving

* ``logq(u) = log Q(u)``, ``Q(u) = P(no wipe-out by u)``, the cycle survival;
* ``theta(u) = E[throughput | no wipe-out by u]``, relative to the
  failure-free run without redundancy.

For the three strategies (derivations in ``docs/theory.md`` section 4):

* :class:`CkptOnly`: ``Q = (1 - p)^N`` (any failure is a wipe-out), ``theta = 1``;
* :class:`Rep`: ``Q = prod_sets (1 - p^{|set|})`` (a wipe-out is a dead
  replica set), ``theta = floor(N/r) / N``;
* :class:`Spare`: ``Q = sum_f Binom(f; N, p) P(T > f)`` with ``T`` the
  wipe-out count of the cyclic modular-ruler placement, and
  ``theta = sum_f Binom(f; N, p) P(T > f) / E[S*_f] / Q``: failure *times*
  are independent of the failure *order*, and ``T`` and ``S*`` depend on the
  order only.

The lifetime law enters only through ``p(u)``: a class with the methods of
:class:`ExponentialLifetimes` (``logcdf``, ``cdf``, ``ppf`` and ``logsf`` in
dimensionless time) passed as ``lifetimes`` gives every strategy under that
law.  What the renewal-reward model does with a cycle law is in
:mod:`spare_theory.hourly.renewal`; the searches are in :mod:`spare_theory.training.optimize`.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.interpolate import CubicSpline
from scipy.special import gammaln

from .._validation import as_choice, as_count
from ..stacking.overhead import expected_stacks
from ..wipeout.law import wipeout_law

__all__ = [
    "CYCLE_LAWS",
    "EXPONENTIAL",
    "MAX_SPARE_GROUPS",
    "CkptOnly",
    "CycleLaw",
    "ExponentialLifetimes",
    "Rep",
    "Spare",
    "TabulatedCycle",
    "cycle_law",
    "log1mexp",
    "rep_survival_log",
    "rep_throughput",
    "survival_integral",
]

#: Largest number of groups ``N`` the SPARe cycle model accepts: its tables
#: take about 36 bytes per group (1.2 GB here) and about 3 s per ``r``.
MAX_SPARE_GROUPS = 2**25

# Segments whose survival probability is below e^-30 relative to the first one
# are dropped: their share of any expectation is below 1e-13.
_LOG_CUTOFF = 30.0
# Grid of the SPARe cycle survival: points in u, and the binomial band kept
# around each point's mean failure count (in standard deviations).
_GRID_POINTS = 512
_BAND_SD = 12.0
_BAND_SD_ABOVE = 8.0
# Survival values below e^-90 are treated as zero when building the grid.
_LOG_TINY = -90.0
# Points of the coarse search for where P(T > f) falls below e^-90; long
# survival tables: exact below _EXACT_F, a spline through _SPLINE_NODES above.
_COARSE_F = 64
_EXACT_F = 1 << 13
_SPLINE_NODES = 1 << 13
# Rows of the SPARe grid summed at once (memory: rows x band width cells).
_BLOCK_ROWS = 32
# Pieces of the restart interval [0, rho] on which Q is integrated.
_RESTART_PIECES = 256


def log1mexp(x: ArrayLike) -> np.ndarray:
    """``log(1 - e^x)`` for ``x <= 0``, accurate at both ends.

    ``log(-expm1(x))`` for ``x > -log 2`` and ``log1p(-exp(x))`` below (each
    where it does not cancel); ``-inf`` at ``x = 0``.

    Examples
    --------
    >>> print(np.round(log1mexp([-1e-10, -1.0, -50.0]), 6))
    [-23.025851  -0.458675  -0.      ]
    """
    x = np.asarray(x, dtype=float)
    near = x > -math.log(2)
    out = np.empty_like(x)
    # Each branch only where it is accurate (and computed only there: hot loop).
    with np.errstate(divide="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        out[~near] = np.log1p(-np.exp(x[~near]))
    return out


@dataclass(frozen=True)
class ExponentialLifetimes:
    """Exponential group lifetimes in dimensionless time ``u = lambda t`` (mean 1).

    ``p(u) = 1 - e^{-u}``: the probability that a group has failed by ``u``.
    Another lifetime law is another class with these four methods (mean
    lifetime 1, so that ``u`` keeps its meaning).

    Examples
    --------
    >>> law = ExponentialLifetimes()
    >>> round(float(law.cdf(1.0)), 6), round(float(law.ppf(law.cdf(0.25))), 12)
    (0.632121, 0.25)
    """

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        """``log p(u)``, ``-inf`` at ``u = 0``."""
        with np.errstate(divide="ignore"):
            return log1mexp(-np.asarray(u, dtype=float))

    def cdf(self, u: ArrayLike) -> np.ndarray:
        """``p(u) = 1 - e^{-u}``."""
        return -np.expm1(-np.asarray(u, dtype=float))

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` at which ``p(u) = p``: ``-log(1 - p)``."""
        return -np.log1p(-np.asarray(p, dtype=float))

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u)) = -u``."""
        return -np.asarray(u, dtype=float)


#: The lifetime law of an hour-level ``Scenario`` with ``failure_law="exponential"``.
EXPONENTIAL = ExponentialLifetimes()


def survival_integral(log_a: ArrayLike, log_b: ArrayLike, width: ArrayLike) -> np.ndarray:
    """``int_0^width exp(log_a + (log_b - log_a) x / width) dx``, elementwise.

    The integral of ``Q`` over a piece on which ``log Q`` is taken linear:
    ``width e^{log_a} (e^d - 1) / d`` with ``d = log_b - log_a``; exact for the
    exponential survival of CKPT-only, second order otherwise.  0 where
    ``log_a = -inf``.

    Examples
    --------
    >>> round(float(survival_integral(0.0, -1.0, 1.0)), 6)  # int_0^1 e^-x dx
    0.632121
    """
    log_a = np.asarray(log_a, dtype=float)
    d = np.asarray(log_b, dtype=float) - log_a
    with np.errstate(invalid="ignore", over="ignore"):
        factor = np.where(np.abs(d) < 1e-8, 1.0 + d / 2, np.expm1(d) / np.where(d == 0, 1.0, d))
        out = width * np.exp(log_a) * factor
    return np.where(np.isneginf(log_a), 0.0, out)


class CycleLaw(ABC):
    """A strategy's restart cycle in dimensionless time: ``logq(u)``, ``theta(u)``.

    Subclasses set :attr:`name` and implement :meth:`logq` and :meth:`theta`;
    :meth:`u_at` (where ``log Q`` crosses a level) has a generic bracketing
    default.  ``N`` groups, redundancy ``r``, group lifetimes ``lifetimes``.

    Examples
    --------
    >>> law = cycle_law("rep", 100, 2)
    >>> isinstance(law, CycleLaw), law.name, law.throughput
    (True, 'rep', 0.5)
    """

    #: The strategy's name in :data:`spare_theory.hourly.scenario.STRATEGIES`.
    name: ClassVar[str]
    #: Largest number of checkpoint segments per cycle the renewal sums take
    #: one by one; beyond, they are summed in blocks by the midpoint rule
    #: (:func:`spare_theory.hourly.renewal.renewal_terms`).  ``None``: always one by one.
    max_segments: ClassVar[int | None] = None
    #: Whether cycles can also end in a planned restart (no rollback), at the
    #: hazard :meth:`planned_hazard` (``spare_theory.hourly.repairs.PlannedCycle``).
    planned: ClassVar[bool] = False

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> None:
        self.N, self.r, self.lifetimes = N, r, lifetimes
        self._restart: dict[float, tuple[float, float, float]] = {}

    @abstractmethod
    def logq(self, u: ArrayLike) -> np.ndarray:
        """``log Q(u)``: log-probability of no wipe-out by ``u``."""

    @abstractmethod
    def theta(self, u: ArrayLike) -> np.ndarray:
        """Expected throughput at ``u`` given no wipe-out yet."""

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        """Rate of a planned restart at ``u`` given the cycle is still on (0: none)."""
        return np.zeros(np.shape(u))

    def u_at(self, level: float) -> float:
        """Smallest ``u`` with ``log Q(u) <= level`` (``level < 0``).

        Within about ``1e-4`` relative (linear interpolation over 1/64 of a
        doubling), ample for its uses (where to stop summing segments, the
        centre of the interval search).
        """
        # log Q decreases: bracket on doublings of 1/N, shrink the bracket
        # 64-fold on a grid, then interpolate linearly (vectorised, in place of
        # a scalar root finder).
        doublings = 2.0 ** np.arange(-1, 64) / self.N
        i = int(np.argmax(self.logq(doublings) <= level))
        u = np.linspace(0.0 if i == 0 else doublings[i - 1], doublings[i], 65)
        i = int(np.argmax(self.logq(u) <= level))
        lo, hi = u[i - 1], u[i]
        a, b = float(self.logq(lo)), float(self.logq(hi))
        return float(lo + (hi - lo) * (a - level) / (a - b)) if a > b else float(hi)

    @functools.cached_property
    def mean_u(self) -> float:
        """Time at which ``Q`` has fallen to ``1/e``: the scale of Young's interval."""
        return self.u_at(-1.0)

    def restart_terms(self, rho: float) -> tuple[float, float, float]:
        """``(log Q(rho), int_0^rho Q du / Q(rho), u_stop)`` for a restart of length ``rho``.

        ``Q`` is integrated on 256 log-linear pieces of ``[0, rho]``;
        ``u_stop`` is where ``Q`` has fallen to ``e^-30 Q(rho)`` (later
        segments weigh below ``1e-13``).  Cached per ``rho``: a search varies
        only the interval.
        """
        if rho not in self._restart:
            log_q0 = float(self.logq(rho))
            edges = np.linspace(0.0, rho, _RESTART_PIECES + 1)
            log_edges = self.logq(edges) - log_q0
            with np.errstate(over="ignore"):
                restart = float(
                    np.sum(survival_integral(log_edges[:-1], log_edges[1:], rho / _RESTART_PIECES))
                )
            self._restart[rho] = (log_q0, restart, self.u_at(log_q0 - _LOG_CUTOFF))
        return self._restart[rho]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(N={self.N}, r={self.r})"


def rep_throughput(N: int, r: int) -> float:
    """Throughput of Rep+CKPT relative to the failure-free run: ``floor(N/r) / N``.

    The ``N`` groups form ``floor(N/r)`` replica sets; each computes one of
    ``floor(N/r)`` shards of the global batch, so a step costs
    ``N / floor(N/r)`` failure-free steps (``r`` when ``r`` divides ``N``).
    The ``N mod r`` left-over groups join as many sets as extra replicas.

    Examples
    --------
    >>> rep_throughput(1000, 3)
    0.333
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    return (N // r) / N


def rep_survival_log(N: int, r: int, u: ArrayLike) -> np.ndarray:
    """``log P(no replica set dead at dimensionless time u)`` for Rep with ``r`` replicas.

    With ``s = floor(N/r)`` disjoint sets sharing the ``N`` groups as
    evenly as possible (``N mod s`` of size ``q + 1``, the rest of size
    ``q = floor(N/s)``; ``q = r`` and ``N mod r`` sets of ``r + 1`` unless
    the ``N mod r`` left-over groups outnumber the sets), and each group
    failed by ``u`` with probability ``p = 1 - e^{-u}`` independently:
    ``log Q = (sets_q) log(1 - p^q) + (sets_{q+1}) log(1 - p^{q+1})``.
    ``r = 1`` is CKPT-only: ``-N u``.  Broadcasts over ``u >= 0``.

    Examples
    --------
    >>> print(np.round(rep_survival_log(7, 2, [0.0, 0.5]), 6))
    [ 0.       -0.399257]
    """
    N = as_count(N, "N")
    return Rep.survival_log(N, as_count(r, "r", maximum=N), u)


class TabulatedCycle(CycleLaw):
    """A cycle law tabulated on a grid: ``log Q`` and ``theta`` at the nodes ``u``.

    Subclasses fill ``u`` (increasing), ``log_q`` and ``theta_grid`` at those
    nodes and ``slope``, the log-survival slope beyond the last node.  ``log Q``
    is interpolated linearly (exact for an exponential tail) and extrapolated
    with ``slope``; :meth:`u_at` inverts the table directly.

    Examples
    --------
    >>> law = cycle_law("spare", 200, 9)
    >>> isinstance(law, TabulatedCycle), round(float(law.logq(law.u_at(-1.0))), 6)
    (True, -1.0)
    """

    u: np.ndarray
    log_q: np.ndarray
    theta_grid: np.ndarray
    slope: float

    def logq(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        inside = np.interp(u, self.u, self.log_q)
        return np.where(u > self.u[-1], self.log_q[-1] + self.slope * (u - self.u[-1]), inside)

    def theta(self, u: ArrayLike) -> np.ndarray:
        return np.interp(np.asarray(u, dtype=float), self.u, self.theta_grid)

    def u_at(self, level: float) -> float:
        below = np.flatnonzero(self.log_q <= level)
        if below.size == 0:
            return float(self.u[-1] + (level - self.log_q[-1]) / self.slope)
        i = max(int(below[0]), 1)
        a, b = self.log_q[i - 1], self.log_q[i]
        step = self.u[i] - self.u[i - 1]
        return float(self.u[i - 1] + step * (a - level) / (a - b)) if a > b else float(self.u[i])


class Rep(CycleLaw):
    """Rep+CKPT: ``r`` replicas of every shard on disjoint groups; exact survival.

    ``Q = prod_sets (1 - p^{|set|})`` (see :func:`rep_survival_log`) and the
    constant throughput ``floor(N/r) / N``.

    Examples
    --------
    >>> law = Rep(1000, 3)
    >>> law.throughput, round(float(law.logq(0.01)), 6)
    (0.333, -0.000327)
    """

    name = "rep"

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> None:
        super().__init__(N, r, lifetimes)
        self.throughput = (N // r) / N

    @staticmethod
    def survival_log(N: int, r: int, u: ArrayLike, lifetimes: Any = EXPONENTIAL) -> np.ndarray:
        """:func:`rep_survival_log` without argument checks (the inner loop)."""
        log_p = lifetimes.logcdf(u)
        sets = N // r
        q, large = divmod(N, sets)
        out = np.zeros(np.shape(log_p))
        with np.errstate(divide="ignore"):
            # Only sizes that occur: 0 * log(0) would be NaN once p = 1.
            for count, size in ((sets - large, q), (large, q + 1)):
                if count:
                    out = out + count * log1mexp(size * log_p)
        return out

    def logq(self, u: ArrayLike) -> np.ndarray:
        return self.survival_log(self.N, self.r, u, self.lifetimes)

    def theta(self, u: ArrayLike) -> np.ndarray:
        return np.full(np.shape(u), self.throughput)


class CkptOnly(Rep):
    """CKPT-only: every failure is a wipe-out; ``Q = (1 - p)^N``, throughput 1.

    Rep with one replica (``r = 1``), with the exact inverse of
    ``log Q = -N u`` for exponential lifetimes.

    Examples
    --------
    >>> law = CkptOnly(100)
    >>> law.throughput, law.u_at(-1.0)
    (1.0, 0.01)
    """

    name = "ckpt"

    def __init__(self, N: int, r: int = 1, lifetimes: Any = EXPONENTIAL) -> None:
        if r != 1:
            raise ValueError(f"r must be 1 for strategy 'ckpt', got {r}")
        super().__init__(N, 1, lifetimes)

    def u_at(self, level: float) -> float:
        if isinstance(self.lifetimes, ExponentialLifetimes):
            return -level / self.N
        return super().u_at(level)


def _log_survival_table(N: int, r: int) -> np.ndarray:
    """``log P(T > f)`` for ``f = 0 .. f_max``, the last ``f`` where it exceeds ``e^-90``.

    The sharp form (:meth:`spare_theory.wipeout.law.WipeoutLaw.logsf`) decreases
    in ``f``: a coarse grid of ``_COARSE_F`` points brackets the crossing,
    and only ``f`` below the bracket's end are evaluated (at most
    ``N / _COARSE_F`` more than needed).  Long tables (beyond
    ``2 * _EXACT_F`` terms; ``N`` above about ``10^5``) take every ``f``
    below ``_EXACT_F`` exactly and the rest from a cubic spline through
    ``_SPLINE_NODES`` exact values: the form is smooth on the scale of the
    node spacing (measured error below ``2e-10`` in ``log P`` up to
    ``N = 1.25 10^7``, largest near ``e^-90``).  The spline is checked
    against exact values between nodes and replaced by the exact table if it
    is off by more than ``1e-9`` anywhere there.
    """
    law = wipeout_law(N, r)

    def logsf(f: np.ndarray) -> np.ndarray:
        # The log of the sharp form: the cycle needs log P(T > f), where P underflows.
        return np.asarray(law.logsf(f), dtype=float)

    coarse = np.unique(np.linspace(r, N, _COARSE_F).astype(np.int64))
    below = np.flatnonzero(logsf(coarse) <= _LOG_TINY)
    f_end = int(coarse[below[0]]) if below.size else N
    f = np.arange(f_end + 1)
    if f_end < 2 * _EXACT_F:
        log_s = logsf(f)
    else:
        nodes = np.unique(np.append(np.linspace(0, f_end, _SPLINE_NODES).astype(np.int64), f_end))
        log_s = CubicSpline(nodes, logsf(nodes))(f)
        log_s[:_EXACT_F] = logsf(f[:_EXACT_F])
        between = (nodes[:-1] + nodes[1:])[:: max(nodes.size // 256, 1)] // 2
        if np.max(np.abs(log_s[between] - logsf(between))) > 1e-9:
            log_s = logsf(f)
    return log_s[: int(np.flatnonzero(log_s > _LOG_TINY)[-1]) + 1]


class Spare(TabulatedCycle):
    """SPARe+CKPT: ``log Q`` and ``theta`` tabulated on a grid in ``u``.

    ``Q(u) = sum_f Binom(f; N, p) P(T > f)`` and
    ``theta(u) = sum_f Binom(f; N, p) P(T > f) / E[S*_f] / Q(u)`` (``P(T > f)``
    from the sharp wipe-out law, ``E[S*_f]`` from
    :func:`~spare_theory.stacking.overhead.expected_stacks`), summed over a
    band from ``12`` standard deviations below the binomial mean to ``8``
    above (``P(T > f)`` only falls with ``f``): terms outside weigh below
    ``e^-32`` relative, and ``Q`` is tabulated only down to about ``e^-72``.
    The grid is uniform in ``p`` (in the mean failure count ``N p``, where
    ``Q`` changes) plus geometric points over the first failures.  ``log Q``
    is interpolated linearly (exact for an exponential tail) and extrapolated
    with its last slope.

    Cost: ``P(T > f)`` is evaluated only up to about the last ``f`` where it
    exceeds ``e^-90``, and the band sums run over blocks of 32 rows, each as
    wide as its widest row needs, so time is ``O(f_max + grid * sqrt(N))``
    and memory ``O(f_max + sqrt(N))``.  ``N`` is limited to
    :data:`MAX_SPARE_GROUPS`.

    Examples
    --------
    >>> law = Spare(200, 4)
    >>> round(float(np.exp(law.logq(0.05))), 4), round(float(law.theta(0.05)), 4)
    (0.9989, 0.5)
    """

    name = "spare"

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> None:
        if N > MAX_SPARE_GROUPS:
            raise ValueError(
                f"gpus // gpus_per_group = {N:,} groups is beyond the SPARe cycle model's "
                f"supported range (N <= {MAX_SPARE_GROUPS:,}: its tables take about 36 bytes "
                f"per group); use a larger gpus_per_group or fewer gpus"
            )
        super().__init__(N, r, lifetimes)
        # Beyond N - ceil(N/r) failures the N types cannot fit in r slots of
        # the survivors: a wipe-out is certain whatever the approximation says.
        log_s = _log_survival_table(N, r)
        f_max = min(log_s.size - 1, N - math.ceil(N / r))
        f = np.arange(f_max + 1)
        log_s = log_s[: f_max + 1]
        inv_stacks = 1.0 / np.asarray(self.state_cost(f), dtype=float)
        log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)

        p_end = min((f_max + _BAND_SD * math.sqrt(f_max + 1) + 10) / N, 1 - 1e-12)
        # Geometric points over the first failures, where the throughput
        # falls from 1 to 1/2 within u ~ 1/N.
        u_end = float(lifetimes.ppf(p_end))
        early = np.geomspace(1e-3 / N, min(30.0 / N, u_end), _GRID_POINTS // 4)
        self.u = np.union1d(lifetimes.ppf(np.linspace(0.0, p_end, _GRID_POINTS)), early)
        p = lifetimes.cdf(self.u)
        sd = np.sqrt(N * p * (1 - p))
        # P(T > f) decreases, so above the binomial mean the weights fall at
        # least as fast as the binomial: 8 sd (e^-32) suffice there.
        half = np.ceil(_BAND_SD * sd + 10).astype(int)
        upper = np.ceil(_BAND_SD_ABOVE * sd + 10).astype(int)
        centre = np.round(N * p).astype(int)
        log_p = np.maximum(lifetimes.logcdf(self.u), -1e300)
        log_healthy = lifetimes.logsf(self.u)
        self.log_q = np.empty(self.u.size)
        self.theta_grid = np.empty(self.u.size)
        # Blocks of _BLOCK_ROWS rows, each with the band width its widest row needs.
        for i in range(0, self.u.size, _BLOCK_ROWS):
            block = slice(i, i + _BLOCK_ROWS)
            width = min(int((half[block] + upper[block]).max()) + 1, f_max + 1)
            lo = np.clip(centre[block] - half[block], 0, f_max + 1 - width)
            band = lo[:, None] + np.arange(width)[None, :]
            # xlogy-style: f log p is 0 for f = 0 even at u = 0 where log p = -inf.
            f_log_p = np.where(band > 0, band * log_p[block, None], 0.0)
            log_w = log_binom[band] + f_log_p + (N - band) * log_healthy[block, None] + log_s[band]
            top = log_w.max(axis=1)
            w = np.exp(log_w - top[:, None])
            total = w.sum(axis=1)
            self.log_q[block] = top + np.log(total)
            self.theta_grid[block] = (w * inv_stacks[band]).sum(axis=1) / total
        self.slope = (self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2])

    def state_cost(self, failures: np.ndarray) -> np.ndarray:
        """Step cost of the state with ``f`` failures: ``E[S*_f]`` (:func:`expected_stacks`).

        The throughput of a state is its inverse; a subclass may price states
        otherwise (micro-batch splitting: the expected load).
        """
        return np.asarray(expected_stacks(self.N, self.r, failures), dtype=float)

    @staticmethod
    def log_survival_table(N: int, r: int) -> np.ndarray:
        """``log P(T > f)`` for ``f = 0, 1, ...`` while above ``e^-90``: what the grid sums.

        From the sharp wipe-out law; long tables (``N`` above about ``10^5``)
        exact for ``f < 8192`` and spline-interpolated beyond, checked to
        ``1e-9`` in ``log P`` (else computed exactly).
        """
        return _log_survival_table(N, r)


#: The cycle law of each strategy, by name (a new strategy is one more entry).
CYCLE_LAWS: dict[str, type[CycleLaw]] = {"ckpt": CkptOnly, "rep": Rep, "spare": Spare}


@functools.lru_cache(maxsize=1024)
def cycle_law(strategy: str, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
    """The cycle law of ``strategy`` with ``N`` groups and redundancy ``r`` (cached).

    ``r = 1`` is CKPT-only whatever the strategy (no redundancy).  Cached per
    argument tuple: the SPARe tables take seconds at ``N ~ 10^5``;
    :func:`spare_theory.training.optimize.clear_caches` empties the cache.

    Parameters
    ----------
    strategy : {"ckpt", "rep", "spare"}
        Strategy name (a key of :data:`CYCLE_LAWS`).
    N : int
        Groups, ``>= 1``.
    r : int
        Redundancy, ``1 <= r <= N`` (no ruler check here: see
        :func:`spare_theory.hourly.scenario.check_plan`).
    lifetimes : ExponentialLifetimes
        Group lifetime law in dimensionless time.

    Returns
    -------
    CycleLaw
        A shared instance: do not modify it.

    Raises
    ------
    ValueError
        Naming the argument: unknown strategy, bad ``N`` or ``r``; for SPARe
        with ``r > 1``, ``N`` above :data:`MAX_SPARE_GROUPS`.

    Examples
    --------
    >>> cycle_law("spare", 100, 1)
    CkptOnly(N=100, r=1)
    >>> round(cycle_law("rep", 100, 2).mean_u, 4)
    0.1517
    """
    strategy = as_choice(strategy, "strategy", tuple(CYCLE_LAWS))
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    if r == 1:
        return CkptOnly(N, 1, lifetimes)
    return CYCLE_LAWS[strategy](N, r, lifetimes)
