"""What every restart-cycle law is: the base classes, the lifetime seam, shared integrals.

A *cycle* starts when a global restart begins with all ``N`` groups healthy;
groups then fail (and, with repairs, come back) and the cycle ends at the
*wipe-out*, the failure after which the strategy cannot go on.  Time is
dimensionless, ``u = lambda t`` (``lambda``: failures of one group per unit
time), and a group has failed by ``u`` with probability ``p(u)``
(``1 - e^{-u}`` for exponential lifetimes).  A cycle law gives

* ``logq(u) = log Q(u)``, ``Q(u) = P(no wipe-out by u)``, the cycle survival;
* ``theta(u) = E[throughput | no wipe-out by u]``, relative to the
  failure-free run without redundancy.

The laws of the strategies are in :mod:`~spare_theory.cycles.rep` (CKPT-only
and Rep) and :mod:`~spare_theory.cycles.spare` (SPARe, with micro-batches);
the mechanisms that extend any of them in :mod:`~spare_theory.cycles.repairs`
(failed groups rejoin) and :mod:`~spare_theory.cycles.planned` (restarts
without rollback).  A mechanism asks the law it extends for what it needs
through the hooks of :class:`CycleLaw` (``repair_log_q``,
``throughput_at_down_share``, ``count_law``, ``cost_grows``), so no code
outside a law knows which strategy it is.

The lifetime law enters only through ``p(u)``: a class with the methods of
:class:`~spare_theory.lifetimes.laws.ExponentialLifetimes` (``logcdf``,
``cdf``, ``ppf`` and ``logsf`` in dimensionless time) passed as ``lifetimes``
gives every law under that lifetime law.  What the renewal-reward model does with a cycle law is in
:mod:`spare_theory.hourly.renewal`; the searches are in
:mod:`spare_theory.planning`.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from .._caching import cached, value_key
from .._validation import NoClosedFormError
from ..lifetimes.laws import EXPONENTIAL

__all__ = [
    "BLOCK_SEGMENTS",
    "CycleLaw",
    "TabulatedCycle",
    "WrappedLaw",
    "cycle_law_of",
    "cycle_time_average",
    "piece_survival",
    "survival_integral",
]

# Segments whose survival probability is below e^-30 relative to the first one
# are dropped: their share of any expectation is below 1e-13.
LOG_CUTOFF = 30.0
# Pieces of the restart interval [0, rho] on which Q is integrated.
_RESTART_PIECES = 256
# A piece of a renewal sum is split in two where the halves' log-linear integrals
# differ from the whole's by more than _SPLIT_TRIGGER (relative), and its halves
# while they differ by more than _SPLIT_TOL, at most _SPLIT_DEPTH times.  A tolerance
# of 1e-4 moves the 600k elastic and hot-spares plans by 4e-6 (relative) from 1e-6's
# at a fifth of the time (they sit on the planner's hot path).
_SPLIT_TRIGGER = 1e-3
_SPLIT_TOL = 1e-4
_SPLIT_DEPTH = 16


#: Blocks per cycle of the laws whose cycles can run to millions of segments
#: (repairs, elastic quorums, planned restarts): the midpoint rule's error is
#: ``O(1 / BLOCK_SEGMENTS^2)``; the best hours of the alternatives' scenarios move
#: by at most 1.2e-5 (relative) between 1024 and 4096 blocks, at 0.6x the time.
BLOCK_SEGMENTS = 1024


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
    # In place, the small-d branch only where it applies: the renewal sums' hot loop.
    small = np.abs(d) < 1e-8
    shape = np.broadcast_shapes(np.shape(width), d.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = np.expm1(d, out=np.empty(d.shape))
        factor /= d  # then overwritten where d is small (a masked divide is slower)
        factor[small] = 1.0 + d[small] / 2
        out = np.multiply(width, np.exp(log_a), out=np.empty(shape))
        out *= factor
    out[np.broadcast_to(np.isneginf(log_a), shape)] = 0.0
    return out


def piece_survival(
    law: CycleLaw,
    start: np.ndarray,
    width: ArrayLike,
    log_a: np.ndarray,
    log_b: np.ndarray,
    log_q0: float,
) -> np.ndarray:
    """``int Q du / Q(rho)`` over pieces ``[start, start + width]``, split where ``log Q`` bends.

    :func:`survival_integral` takes ``log Q`` linear across a piece (exact for
    CKPT-only, second order otherwise).  For a law with
    :attr:`CycleLaw.split_pieces`, where a piece's two halves, each
    log-linear through ``law.logq`` at its middle, integrate to more than
    ``1e-3`` (relative) away from the whole, the halves replace it and are
    split in turn while they differ by more than ``1e-4`` (at most 16
    halvings); other pieces keep the one-piece value.  An elastic job with a
    wide quorum margin wipes out within a narrow band of time (its down
    count is nearly deterministic), and a segment of hours straddles that
    band: ``Q`` falls from near 1 to near 0 inside it, where the log-linear
    piece cuts the cycle short (the 600k-GPU elastic plan at quorum 157:
    13.1 h instead of 15.5 h per cycle, the hours 15 % low;
    ``docs/theory.md`` section 8).

    Parameters
    ----------
    law : CycleLaw
        The cycle law (``logq``).
    start, width : numpy.ndarray or float
        The pieces' starts and widths (``u`` units).
    log_a, log_b : numpy.ndarray
        ``log Q - log_q0`` at each piece's ends.
    log_q0 : float
        ``log Q(rho)``, subtracted from every ``logq``.

    Returns
    -------
    numpy.ndarray
        One integral per piece.

    Examples
    --------
    >>> from spare_theory.cycles.elastic import ElasticCycle
    >>> law = ElasticCycle(292, 292, 157)  # Q falls from 0.92 to 0.09 over u = 0.55-0.7
    >>> u, w = np.array([0.0, 0.5]), 0.5
    >>> ends = law.logq(u), law.logq(u + w)
    >>> survival_integral(*ends, w).round(3).tolist()  # the second piece 5x too small
    [0.498, 0.025]
    >>> piece_survival(law, u, w, *ends, 0.0).round(3).tolist()  # scipy's quad: 0.4999, 0.1255
    [0.5, 0.126]
    """
    out = survival_integral(log_a, log_b, width)
    if not law.split_pieces:
        return out
    a = np.broadcast_to(np.asarray(start, dtype=float), out.shape)
    w = np.broadcast_to(np.asarray(width, dtype=float), out.shape)
    la, lb = np.asarray(log_a, dtype=float), np.asarray(log_b, dtype=float)
    pieces = np.arange(out.size), a, w, la, lb
    whole = out.copy()
    for depth in range(_SPLIT_DEPTH):
        index, a, w, la, lb = pieces
        if index.size == 0:
            break
        h = w / 2
        lc = law.logq(a + h) - log_q0
        left, right = survival_integral(la, lc, h), survival_integral(lc, lb, h)
        change = left + right - whole
        tol = _SPLIT_TRIGGER if depth == 0 else _SPLIT_TOL
        with np.errstate(invalid="ignore"):
            split = np.abs(change) > tol * np.abs(left + right)
        # The first level keeps the one-piece value where it is good enough (bit for bit).
        take = split if depth == 0 else slice(None)
        np.add.at(out, index[take], change[take])
        pieces = (
            np.concatenate([index[split], index[split]]),
            np.concatenate([a[split], a[split] + h[split]]),
            np.concatenate([h[split], h[split]]),
            np.concatenate([la[split], lc[split]]),
            np.concatenate([lc[split], lb[split]]),
        )
        whole = np.concatenate([left[split], right[split]])
    return out


class CycleLaw(ABC):
    """A strategy's restart cycle in dimensionless time: ``logq(u)``, ``theta(u)``.

    Subclasses set :attr:`name` and implement :meth:`logq` and :meth:`theta`;
    :meth:`u_at` (where ``log Q`` crosses a level) has a generic bracketing
    default.  ``N`` groups, redundancy ``r``, group lifetimes ``lifetimes``.

    The hooks below the two abstract methods are what the mechanisms that
    extend a law (repairs, planned restarts) ask of it; a law without a model
    for a mechanism refuses it with a ``ValueError``.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> law = cycle_law_of(Rep, 100, 2)
    >>> isinstance(law, CycleLaw), law.name, law.throughput
    (True, 'rep', 0.5)
    """

    #: A short name of the law (``repr`` and error messages).
    name: ClassVar[str]
    #: Largest number of checkpoint segments per cycle the renewal sums take
    #: one by one; beyond, they are summed in blocks by the midpoint rule
    #: (:func:`spare_theory.hourly.renewal.renewal_terms`).  ``None``: always one by one;
    #: laws whose cycles can run to millions of segments use :data:`BLOCK_SEGMENTS`.
    max_segments: ClassVar[int | None] = None
    #: Whether cycles can also end in a planned restart (no rollback), at the
    #: hazard :meth:`planned_hazard` (:class:`~spare_theory.cycles.planned.PlannedCycle`).
    planned: ClassVar[bool] = False
    #: Whether the step cost grows with the failures of a cycle (SPARe's ``S*``):
    #: only then can a planned restart on the step cost fire.
    cost_grows: ClassVar[bool] = False
    #: Whether every step trains the whole global batch (an elastic job's shrinks
    #: with the groups down unless its quorum keeps them all: :meth:`batch_theta`).
    exact_batch: bool = True
    #: Share of the groups held idle as spares while the others compute (hot
    #: spares: ``r / N``); what a bill charges as ``idle_spares``.
    idle_share: float = 0.0
    #: The badput cause of the compute time beyond the work kept once skipped
    #: samples and idle spares are split off
    #: (:func:`~spare_theory.planning.bill.split_redundancy`): redundant stacks or
    #: replicas, computing at full power.
    redundancy_cause: ClassVar[str] = "redundant_compute"
    #: Repairs per mean group lifetime of the groups down while the cycle runs
    #: (0: a failed group stays down until the next global restart).
    mu: float = 0.0
    #: Share of the cycles that end in a planned restart (when :attr:`planned`).
    planned_share: float = 0.0
    #: Whether the renewal sums split a segment's pieces where ``log Q`` bends
    #: within them (:func:`piece_survival`); ``False``: one log-linear piece each
    #: (Rep's and SPARe's hours would move by up to 0.5 % at 600k GPUs with splitting,
    #: not yet checked against their simulation).
    split_pieces: ClassVar[bool] = False
    #: Whether a run's hours take the finite-run term of a fresh start
    #: (:func:`~spare_theory.hourly.fresh_start.finite_run_term`): a throughput that
    #: falls over the cycle makes the first cycle fast; ``False``: the long-run rate.
    finite_run: bool = False

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> None:
        self.N, self.r, self.lifetimes = N, r, lifetimes
        self._restart: dict[float, tuple[float, float, float]] = {}

    @abstractmethod
    def logq(self, u: ArrayLike) -> np.ndarray:
        """``log Q(u)``: log-probability of no wipe-out by ``u``."""

    @abstractmethod
    def theta(self, u: ArrayLike) -> np.ndarray:
        """Expected throughput at ``u`` given no wipe-out yet."""

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        """Throughput at ``u`` if every step trained the whole global batch (``theta`` when exact).

        ``1 - (work kept) / (the same integral of batch_theta)`` is the share
        of the global batch not trained (``TrainingEstimate.samples_skipped``).
        """
        return self.theta(u)

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Work lost after each checkpoint of ``d`` ending at ``start`` beyond ``theta``'s account.

        ``(loss, full-batch loss)`` in units of ``u`` times throughput, per
        segment that follows a checkpoint; ``None`` (the default): none (an
        elastic job's checkpoint defers its events' stall to its end).
        """
        return None

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        """Rate of a planned restart at ``u`` given the cycle is still on (0: none)."""
        return np.zeros(np.shape(u))

    def rollback_segments(self) -> float:
        """Expected checkpoint segments a cycle's end sends the job back beyond the last
        checkpoint (0, the default: a wipe-out loses the work since the last one;
        :class:`~spare_theory.cycles.late.LateFailures`: a corruption's rollback)."""
        return 0.0

    def late_endings(self) -> tuple[float, ...]:
        """The chance that each class reaching its group late (a straggler, a corruption)
        ends the cycle; none by default (:class:`~spare_theory.cycles.late.LateFailures`)."""
        return ()

    def segment_theta(self, start: np.ndarray, k: np.ndarray, d: float) -> np.ndarray:
        """Mean throughput over each segment's compute ``[start, start + k]`` given that the
        cycle outlives its checkpoint, to ``start + k + d``: what the renewal sums keep.

        The default: :meth:`theta` at the compute's midpoint (given survival
        to it), the midpoint rule of :func:`~spare_theory.hourly.renewal.renewal_terms`;
        a law whose throughput depends on what survival beyond ``u`` rules out
        (:class:`~spare_theory.cycles.late.LateFailures`) conditions on the end.
        """
        return self.theta(np.asarray(start) + np.asarray(k) / 2)

    def theta_losses(self, u: ArrayLike) -> dict[str, np.ndarray]:
        """The share of the compute time at ``u`` lost by badput cause: stalled until a
        failure is noticed (``"detection"``,
        :class:`~spare_theory.cycles.detection.DetectionStall`), or spent by a straggler's
        slowed steps beyond their work (``"slowdown"``,
        :class:`~spare_theory.cycles.late.LateFailures`); the rest computes as the law
        without them does (its throughput then ``theta / (1 - sum(losses))``).  None by
        default."""
        return {}

    def segment_losses(self, start: np.ndarray, k: np.ndarray, d: float) -> dict[str, np.ndarray]:
        """:meth:`theta_losses` over each segment's compute, as :meth:`segment_theta` is
        :meth:`theta` (the default: at the compute's midpoint)."""
        return self.theta_losses(np.asarray(start) + np.asarray(k) / 2)

    def cache_key(self) -> tuple:
        """The values that define the law (caches of laws built on it are keyed on them)."""
        return (type(self).__qualname__, self.N, self.r, value_key(self.lifetimes))

    def _refuse(self, mechanism: str) -> NoClosedFormError:
        return NoClosedFormError(f"the {self.name!r} cycle law has no model {mechanism}")

    def repair_wipeout_rate(self, mu: float) -> float:
        """Wipe-outs per unit ``u`` with repairs at rate ``mu`` once the down share settles.

        The scale of a repair cycle (:class:`~spare_theory.cycles.repairs.RepairCycle`
        starts its grid from it).
        """
        raise self._refuse("with repairs")

    def repair_log_q(self, u: np.ndarray, mu: float) -> np.ndarray:
        """``log Q`` on the uniform grid ``u`` when failed groups are repaired at rate ``mu``.

        Exponential repairs (``mu`` repairs per mean group lifetime), from a
        healthy start (:class:`~spare_theory.cycles.repairs.RepairCycle`).
        """
        raise self._refuse("with repairs")

    def throughput_at_down_share(self, p: np.ndarray) -> np.ndarray:
        """Throughput when each group is down with probability ``p``, given no wipe-out.

        The repair cycle's throughput before its rejoin stalls.
        """
        raise self._refuse("with repairs")

    def repair_throughput(self, u: np.ndarray, mu: float, p: np.ndarray) -> np.ndarray:
        """The repair cycle's throughput at ``u`` given no wipe-out by then, with exponential
        repairs (``mu`` per mean lifetime) that leave each group down with chance ``p``
        (on the grid ``u``).  By default :meth:`throughput_at_down_share`."""
        return self.throughput_at_down_share(p)

    def count_law(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log s_f, c_f)`` for ``f = 0..N`` groups down, in uniformly random order.

        ``s_f``: the chance that ``f`` failed groups leave no wipe-out;
        ``c_f``: the step cost of that state (shard units; the throughput is
        ``1 / c_f``).  What planned restarts
        (:class:`~spare_theory.cycles.planned.PlannedCycle`) need.
        """
        raise self._refuse("with planned restarts")

    #: ``k`` when ``log Q(u) = -k u`` exactly (a constant hazard: CKPT-only under
    #: exponential lifetimes, whose best interval is Daly's closed form); else ``None``.
    constant_hazard: float | None = None

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        """Mean time to wipe-out from a healthy start with repairs at ``mu``, units ``1/lambda``.

        ``None`` (the default): no closed form, integrate the repair cycle's
        ``Q`` (:class:`~spare_theory.cycles.repairs.RepairCycle`, ``mu = 0``
        for none).
        """
        return None

    def wipeout_refusal(self, mu: float, repair_law: Any) -> str | None:
        """Why the mean time to wipe-out with repairs has no closed form within 3 % here.

        ``mu`` repairs per mean group lifetime under ``repair_law``
        (``Scenario.repair_law``); ``None`` (the default): the law answers.  A
        region the wipe-out doors' audit measured off (``docs/audit.md``,
        "The wipe-out doors"), which :func:`spare_theory.mean_time_to_wipeout`
        refuses and :func:`spare_theory.simulate_time_to_wipeout` plays.
        """
        return None

    def repairs_per_cycle_time(self) -> float:
        """Expected repairs per unit ``u`` over a cycle (0: a law without repairs)."""
        return 0.0

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
            self._restart[rho] = (log_q0, restart, self.u_at(log_q0 - LOG_CUTOFF))
        return self._restart[rho]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(N={self.N}, r={self.r})"


class TabulatedCycle(CycleLaw):
    """A cycle law tabulated on a grid: ``log Q`` and ``theta`` at the nodes ``u``.

    Subclasses fill ``u`` (increasing), ``log_q`` and ``theta_grid`` at those
    nodes and ``slope``, the log-survival slope beyond the last node.  ``log Q``
    is interpolated linearly (exact for an exponential tail) and extrapolated
    with ``slope``; :meth:`u_at` inverts the table directly.

    Examples
    --------
    >>> from spare_theory.cycles.spare import Spare
    >>> law = cycle_law_of(Spare, 200, 9)
    >>> isinstance(law, TabulatedCycle), round(float(law.logq(law.u_at(-1.0))), 6)
    (True, -1.0)
    """

    u: np.ndarray
    log_q: np.ndarray
    theta_grid: np.ndarray
    slope: float

    def logq(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        out = np.asarray(np.interp(u, self.u, self.log_q))
        beyond = u > self.u[-1]
        if out.ndim == 0:
            return np.where(beyond, self.log_q[-1] + self.slope * (u - self.u[-1]), out)
        out[beyond] = self.log_q[-1] + self.slope * (u[beyond] - self.u[-1])
        return out

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


class WrappedLaw(CycleLaw):
    """A law that changes one part of ``inner`` and keeps the rest.

    It keeps ``inner``'s name, size, lifetimes and the attributes the renewal
    sums and the bill read (:data:`WRAPPED_ATTRIBUTES`), and asks ``inner``
    for its survival, throughput, checkpoint losses, planned hazard and
    repairs; a subclass overrides what it changes
    (:class:`~spare_theory.cycles.bursts.BurstWipeouts`: the survival;
    :class:`~spare_theory.cycles.detection.DetectionStall`: the throughput).

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> law = WrappedLaw(Rep(100, 2))
    >>> law.name, float(law.theta(0.1)) == float(Rep(100, 2).theta(0.1))
    ('rep', True)
    """

    def __init__(self, inner: CycleLaw) -> None:
        super().__init__(inner.N, inner.r, inner.lifetimes)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        for attribute in WRAPPED_ATTRIBUTES:
            setattr(self, attribute, getattr(inner, attribute))

    def logq(self, u: ArrayLike) -> np.ndarray:
        return self.inner.logq(u)

    def theta(self, u: ArrayLike) -> np.ndarray:
        return self.inner.theta(u)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        return self.inner.batch_theta(u)

    def theta_losses(self, u: ArrayLike) -> dict[str, np.ndarray]:
        return self.inner.theta_losses(u)

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        return self.inner.checkpoint_loss(start, d)

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        return self.inner.planned_hazard(u)

    def repairs_per_cycle_time(self) -> float:
        """``inner``'s repair rate over its cycle."""
        return self.inner.repairs_per_cycle_time()


#: What a :class:`WrappedLaw` keeps of the law it wraps.
WRAPPED_ATTRIBUTES = (
    "max_segments",
    "planned",
    "cost_grows",
    "exact_batch",
    "idle_share",
    "redundancy_cause",
    "mu",
    "planned_share",
    "split_pieces",
    "finite_run",
    "constant_hazard",
)


def cycle_time_average(u: np.ndarray, log_q: np.ndarray, rate: np.ndarray) -> float:
    """``int Q rate du / int Q du`` on a tabulated grid: a rate averaged over the cycle.

    Left sums (``rate`` at each node times the step before it), the weights
    of the tabulated laws' expected repairs.

    Examples
    --------
    >>> u = np.linspace(0.0, 1.0, 5)
    >>> cycle_time_average(u, np.zeros(5), np.full(5, 2.0))
    2.0
    """
    q = np.exp(log_q)
    weights = np.diff(u, prepend=0.0)
    return float(np.sum(q * rate * weights) / np.sum(q * weights))


@cached(maxsize=1024, shared=True)
def cycle_law_of(kind: type[CycleLaw], N: int, r: int, *args: Any, **kwargs: Any) -> CycleLaw:
    """The law ``kind(N, r, *args, **kwargs)``, built once per set of argument values.

    SPARe's tables take seconds at ``N ~ 10^5``; every front door asks for the
    same few laws many times while searching.  Shared instances: do not
    modify them.  :func:`spare_theory.clear_caches` empties the cache.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> cycle_law_of(Rep, 100, 2) is cycle_law_of(Rep, 100, 2)
    True
    """
    return kind(N, r, *args, **kwargs)
