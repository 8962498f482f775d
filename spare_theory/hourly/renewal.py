"""The renewal-reward estimate of a training run, for any strategy's cycle law.

Derivation and assumptions in ``docs/theory.md`` section 4.  A cycle starts
when a global restart of cost ``R`` begins with all groups healthy and ends at
the wipe-out (its law: a :class:`~spare_theory.cycles.base.CycleLaw`).  After
the restart the job computes in segments of ``tau`` compute time followed by
a checkpoint of cost ``delta``; a segment's work is kept only if its
checkpoint completes before the wipe-out.  With ``X`` the cycle length and
``P`` the work kept in a cycle (hours of failure-free full-cluster training),
the expected wall time for ``W`` hours of work is

    hours = W * E[X] / E[P].

In dimensionless time ``u = lambda t``, with ``Q(u) = P(X > u)``,
``theta(u) = E[throughput | no wipe-out by u]``, ``rho = lambda R``,
``kappa = lambda tau``, ``alpha = lambda (tau + delta)``,

    E[X] = int_0^inf Q(u) du,
    E[P] = sum_{j >= 0} kappa Q(rho + (j+1) alpha) theta(rho + j alpha + kappa/2)   (/ lambda),

exact for a constant throughput (CKPT-only, Rep) and a midpoint rule for
SPARe, whose throughput ``1/S*`` changes within a segment.  CKPT-only reduces
exactly to Daly's higher-order formula
``M e^{R/M} (e^{(tau+delta)/M} - 1) W / tau``.

:func:`evaluate` is the one entry point: a scenario, a cycle law and an
interval in, a :class:`TrainingEstimate` out.  :func:`renewal_terms` is its
vectorised core, which the interval search
(:func:`spare_theory.hourly.model.best_interval`, by
:func:`~spare_theory.planning.search.minimize_log_interval`) evaluates on
whole grids of intervals.

This module is long (about 780 lines, half of them docstrings and Examples)
because the estimate type and the sums that fill it are one model: every field
of :class:`TrainingEstimate` is defined by a term of :func:`renewal_terms`, and
the estimate explains itself (its summary, its lost time by cause, its bill)
from those fields alone.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._samples import summary_text
from ..cycles.base import CycleLaw, piece_survival
from ..planning.bill import BADPUT_CAUSES, Bill, CostModel, make_bill, split_redundancy
from .process import GroupProcess

__all__ = [
    "RenewalTerms",
    "TrainingEstimate",
    "estimate_from",
    "evaluate",
    "hours_grid",
    "planned_kept",
    "renewal_terms",
    "scaled_times",
]

_PARTS = ("useful", "redundancy", "checkpoint", "restart", "lost")
# Parts that failure classes take from the five (None without them, so the sums are as before):
# the stalls (from redundancy) and restart waits (from restart) until a failure is noticed,
# a straggler's slowed steps (from redundancy), a corruption's rollback (from lost) and the
# stalls inside the segments a wipe-out loses (from lost).
_CLASS_PARTS = ("stall", "waiting", "slowdown", "rollback", "lost_stall")
# Quadrature points per piece for the work kept at planned restarts, and the rule
# on [0, 1] (built once: planned_kept runs at every grid of every trigger searched).
_GAUSS_POINTS = 8
_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(_GAUSS_POINTS)
_GAUSS_X, _GAUSS_W = (_GAUSS_X + 1) / 2, _GAUSS_W / 2


@dataclass(frozen=True)
class TrainingEstimate:
    """Expected outcome of one training run (renewal-reward model).

    Attributes
    ----------
    strategy : str
        The registered strategy's name (``"ckpt"``, ``"rep"``, ``"spare"``,
        ``"elastic"``, ``"hot_spares"``, ...).
    r : int or None
        The strategy's ``r`` (replicas, stack depth, spare groups); ``None``
        for a strategy without one (CKPT-only, elastic DP).
    checkpoint_interval_minutes : float
        Compute time ``tau`` between checkpoints, minutes.
    hours : float
        Expected wall-clock hours; ``inf`` when the run (practically) never
        completes.
    availability : float
        ``work_hours / hours``: share of wall time that is useful training
        (comparable with ETTR, the effective training time ratio).
    uptime : float
        Share of wall time outside global restarts, ``1 - restart_hours /
        hours`` (the SPARe paper's "availability"): *down* is only the time
        from the start of a restart until the job computes again, including
        restarts cut short by a wipe-out and started over; checkpoint
        writing, lost compute and redundant compute count as *up*.
        Computed from the per-cycle expectations, so it is defined (below 1)
        also when ``hours`` is infinite; 0 when not even the restart share
        is finite.
    useful_hours, redundancy_hours, checkpoint_hours, restart_hours, lost_hours : float
        Breakdown of ``hours`` (they add up to it): useful training; extra
        compute of the kept segments due to redundancy (``S* - 1`` or
        ``r - 1`` layers); checkpoint writing (including checkpoints cut by a
        wipe-out); restarts (including restarts cut by a wipe-out); compute
        lost at wipe-outs (work since the last completed checkpoint).
    restarts : float
        Expected number of global restarts (wipe-outs).
    cycle_hours : float
        Mean time from the start of one restart to the next wipe-out.
    repairs : float
        Expected repairs (failed groups rejoining without a global restart)
        over the run; 0 without repairs (``Scenario.repair_minutes=None``).
    planned_restarts : float
        Expected planned restarts (no rollback) among :attr:`restarts`; 0
        without a planned-restart policy.  ``wipeouts`` (property) is
        ``restarts - planned_restarts``.
    interval_limit : {None, "upper", "lower"}
        Where the interval search (``checkpoint_interval_minutes=None``)
        ended: ``None`` at an interior minimum (or for a given interval);
        ``"upper"`` at the top of the range it searched, so the hours still
        fall as the interval grows and the interval is that limit, not
        advice (at ``600 x work_hours`` minutes, longer than any run, no
        periodic checkpoint pays off); ``"lower"`` at the bottom of the range
        (1 s when checkpoints are free: checkpoint as often as possible).
    samples_skipped : float
        Share of the global batch not trained over the work kept: 0 for the
        exact-batch strategies; an elastic job's steps train ``min(A, N - f)``
        of its ``A`` shards with ``f`` groups down (its ``redundancy_hours``
        then hold the compute lost to reconfiguration stalls and to the
        shrunken batch).
    exact_batch : bool
        Whether every step trains the whole global batch (no samples can be
        skipped), so that no table compares unlike things silently.
    caveats : tuple of str
        The documented biases of the model that apply to this plan
        (:meth:`Strategy.caveats <spare_theory.strategies.base.Strategy.caveats>`,
        attached by the front doors); empty when none applies.
    feasible, reason, breakdown_hours : bool, str, dict
        Properties: whether the run finishes in practice (finite ``hours``,
        availability at least 0.001) and, if not, why, in words; ``hours``
        by part (``useful``, ``redundancy``, ``checkpoint``, ``restart``,
        ``lost``; they add up to ``hours``).  :meth:`summary` says it all
        as text.
    reserved_gpus, grouped_gpus : int
        GPUs reserved (the scenario's plus its spare nodes') and GPUs in
        data-parallel groups, for :meth:`bill` (0: unknown, no bill).
    idle_share, redundancy_cause : float, str
        The cycle law's share of groups idle as hot spares and the badput
        cause of the rest of :attr:`redundancy_hours`
        (:func:`~spare_theory.planning.bill.split_redundancy`).
    detection_wait_hours, detection_stall_hours, slowdown_hours, rollback_hours : float
        What failure classes take (0 without them), each inside one of the
        five parts: the waits before restarts until the wiping failure is
        noticed (of :attr:`restart_hours`), the stalls until a failure is
        noticed (of :attr:`redundancy_hours` in the segments kept, of
        :attr:`lost_hours`, ``lost_stall_hours``, in those a wipe-out
        loses) and a straggler's slowed steps (of
        :attr:`redundancy_hours`), the work a corruption sends back beyond
        the last checkpoint (of :attr:`lost_hours`); the bill's causes
        ``detection``, ``slowdown`` and ``rollback``.
    lost_stall_hours : float
        Of ``detection_stall_hours``, the part inside lost segments.
    badput_hours : dict
        Property: the lost time by cause
        (:data:`~spare_theory.planning.bill.BADPUT_CAUSES`).

    Examples
    --------
    >>> from spare_theory import Scenario, time_to_train
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> est = time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60)
    >>> round(est.hours, 2), round(est.availability, 4), round(est.uptime, 4)
    (107.14, 0.448, 0.9888)
    """

    strategy: str
    r: int | None
    checkpoint_interval_minutes: float
    hours: float
    availability: float
    uptime: float
    useful_hours: float
    redundancy_hours: float
    checkpoint_hours: float
    restart_hours: float
    lost_hours: float
    restarts: float
    cycle_hours: float
    repairs: float = 0.0
    planned_restarts: float = 0.0
    interval_limit: str | None = None
    samples_skipped: float = 0.0
    exact_batch: bool = True
    caveats: tuple[str, ...] = ()
    reserved_gpus: int = 0
    grouped_gpus: int = 0
    idle_share: float = 0.0
    redundancy_cause: str = "redundant_compute"
    detection_wait_hours: float = 0.0
    detection_stall_hours: float = 0.0
    lost_stall_hours: float = 0.0
    slowdown_hours: float = 0.0
    rollback_hours: float = 0.0

    @property
    def wipeouts(self) -> float:
        """Expected wipe-outs (restarts that roll back): ``restarts - planned_restarts``."""
        return self.restarts - self.planned_restarts

    #: Smallest availability of a plan said to finish (1 h of work per 1000 h of wall time).
    MIN_FEASIBLE_AVAILABILITY = 1e-3

    @property
    def feasible(self) -> bool:
        """Whether the run finishes in practice: ``hours`` finite and ``availability >= 1e-3``.

        Below that (more than 1000 wall-clock hours per hour of work) the
        failures cut almost every restart or checkpoint interval short; the
        model's ``hours`` are then astronomically large or infinite.

        Examples
        --------
        >>> from spare_theory import Scenario, time_to_train
        >>> sc = Scenario(gpus=600_000, gpus_per_group=2048, gpu_mtbf_hours=30.0,
        ...               restart_minutes=60, checkpoint_minutes=5, work_hours=720)
        >>> est = time_to_train(sc, "ckpt", checkpoint_interval_minutes=1.0)
        >>> est.feasible, est.hours
        (False, inf)
        >>> print(est.reason)
        expected time to train is infinite: restarts, cut short by failures, never end
        """
        return math.isfinite(self.hours) and self.availability >= self.MIN_FEASIBLE_AVAILABILITY

    @property
    def reason(self) -> str:
        """Why the plan does not finish, in words; ``""`` when :attr:`feasible`.

        Examples
        --------
        >>> from spare_theory import Scenario, time_to_train
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60).reason
        ''
        """
        if self.feasible:
            return ""
        if not math.isfinite(self.hours):
            return "expected time to train is infinite: restarts, cut short by failures, never end"
        return (
            f"{self.hours:.3g} h expected, "
            f"{self.restarts:.3g} restarts, availability {self.availability:.2g} "
            f"< {self.MIN_FEASIBLE_AVAILABILITY:g}"
        )

    @property
    def breakdown_hours(self) -> dict[str, float]:
        """``hours`` by part: useful, redundancy, checkpoint, restart, lost (they add up to it)."""
        parts = ("useful", "redundancy", "checkpoint", "restart", "lost")
        return {name: getattr(self, f"{name}_hours") for name in parts}

    def summary_rows(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]:
        """The plan's variables, its figures and notes: the body of :meth:`summary`."""
        limit = {"upper": " (top of the search)", "lower": " (bottom of the search)"}
        where = limit.get(self.interval_limit or "", "")
        plan = [
            ("strategy", self.strategy),
            ("r", self.r),
            (
                "checkpoint every",
                f"{self.checkpoint_interval_minutes:.4g} min{where}",
            ),
            ("restarts", f"{self.restarts:.4g}"),
        ]
        if self.planned_restarts:
            plan.append(("of them planned", f"{self.planned_restarts:.4g}"))
        if self.repairs:
            plan.append(("repairs", f"{self.repairs:.4g}"))
        figures = [
            ("hours", f"{self.hours:,.6g}"),
            ("availability", f"{self.availability:.4f}"),
            ("uptime", f"{self.uptime:.4f}"),
            ("cycle hours", f"{self.cycle_hours:.4g}"),
            (
                "samples skipped",
                "none (exact batch)" if self.exact_batch else f"{self.samples_skipped:.4f}",
            ),
        ]
        notes = [] if self.feasible else [f"does not finish: {self.reason}"]
        return plan, figures, notes

    def summary(self) -> str:
        """The estimate as text: plan, hours, availability, the breakdown, the caveats.

        Like a statsmodels ``results.summary()``: the strategy and its plan
        variables (``-`` for one the strategy does not have), the figures,
        the breakdown of ``hours`` with each part's share, and the
        documented biases of the model that apply to this plan.

        Examples
        --------
        >>> from spare_theory import Scenario, time_to_train
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> print(time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60).summary())
                             Training estimate (hour-level model)
        ==============================================================================
        strategy:                         rep    hours:                        107.143
        r:                                  2    availability:                  0.4480
        checkpoint every:              60 min    uptime:                        0.9888
        restarts:                       3.608    cycle hours:                     29.7
                                                 samples skipped:   none (exact batch)
        ------------------------------------------------------------------------------
        breakdown                        hours    share
          useful                            48    0.448
          redundancy                        48    0.448
          checkpoint                   8.01155    0.075
          restart                      1.20253    0.011
          lost                         1.92857    0.018
        ------------------------------------------------------------------------------
        caveats (model approximations and biases, then the audit's error):
          [1] audit (150 random scenarios, seed 2026; docs/audit.md): 90 % of its 19
              model answers on scenarios with no optional field within 0.7 % of the
              simulation (worst +1.5 %, 0 outside 3 % and 3 SE); it drew 8 to 64
              groups, this scenario has 128
        ==============================================================================
        """
        plan, figures, notes = self.summary_rows()
        return summary_text(
            "Training estimate (hour-level model)",
            plan,
            figures,
            breakdown_hours=self.breakdown_hours,
            notes=notes,
            caveats=self.caveats,
        )

    @property
    def badput_hours(self) -> dict[str, float]:
        """Lost wall time by cause, hours: with :attr:`useful_hours` they add up to :attr:`hours`.

        Checkpoint writes, work lost at rollbacks and restarts are their own
        parts; :attr:`redundancy_hours` is split into skipped samples, idle
        spares and the law's :attr:`redundancy_cause`
        (:func:`~spare_theory.planning.bill.split_redundancy`).

        Examples
        --------
        >>> from spare_theory import Scenario, time_to_train
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> est = time_to_train(sc, "hot_spares", r=8, checkpoint_interval_minutes=60)
        >>> lost = est.badput_hours
        >>> round(lost["idle_spares"], 3), round(lost["redundant_compute"], 3)
        (3.2, 0.0)
        >>> round(est.useful_hours + sum(lost.values()) - est.hours, 9)
        0.0
        """
        out = dict.fromkeys(BADPUT_CAUSES, 0.0)
        kept_stall = self.detection_stall_hours - self.lost_stall_hours
        redundancy = max(self.redundancy_hours - kept_stall - self.slowdown_hours, 0.0)
        skipped, idle, rest = split_redundancy(
            self.useful_hours, redundancy, self.samples_skipped, self.idle_share
        )
        out.update(
            checkpoint_save=self.checkpoint_hours,
            wasted_progress=self.lost_hours - self.rollback_hours - self.lost_stall_hours,
            restart=self.restart_hours - self.detection_wait_hours,
            detection=self.detection_wait_hours + self.detection_stall_hours,
            slowdown=self.slowdown_hours,
            rollback=self.rollback_hours,
            skipped_samples=float(skipped),
            idle_spares=float(idle),
        )
        out[self.redundancy_cause] += float(rest)
        return out

    def bill(self, cost: CostModel) -> Bill:
        """What the run costs under ``cost``: GPU-hours, dollars, energy, carbon, lost time.

        Formulas in :mod:`spare_theory.planning.bill`; the busy GPUs are the
        grouped GPUs while they compute or checkpoint.

        Parameters
        ----------
        cost : CostModel

        Returns
        -------
        Bill

        Raises
        ------
        ValueError
            When ``hours`` is infinite (the run never finishes) or the
            estimate does not know its GPUs.

        Examples
        --------
        >>> from spare_theory import CostModel, Scenario, time_to_train
        >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
        ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
        >>> bill = time_to_train(sc, "ckpt", checkpoint_interval_minutes=30).bill(CostModel())
        >>> round(bill.usd), round(bill.gpu_hours / bill.hours)
        (236999, 1024)
        """
        if not math.isfinite(self.hours):
            raise ValueError(f"hours is {self.hours}: a run that never finishes has no bill")
        return make_bill(
            cost,
            hours=self.hours,
            useful_hours=self.useful_hours,
            badput_hours=self.badput_hours,
            reserved_gpus=self.reserved_gpus,
            grouped_gpus=self.grouped_gpus,
        )


@dataclass(frozen=True)
class RenewalTerms:
    """Per-cycle expectations at each interval of a grid, in units of ``1/lambda`` over ``Q(rho)``.

    Attributes
    ----------
    useful, redundancy, checkpoint, restart, lost : numpy.ndarray
        Expected time per cycle in each part (see :class:`TrainingEstimate`),
        one entry per interval, divided by ``Q(rho)`` (the chance that the
        restart completes) so that every term stays finite in the
        restart-dominated regime where ``Q(rho)`` underflows.
    log_q0 : float
        ``log Q(rho)``.
    batch : numpy.ndarray or None
        For a law whose batch is not exact (an elastic job): the work kept
        had every step trained the whole global batch, same units as
        ``useful``; ``None`` for exact-batch laws.
    idle_share, redundancy_cause : float, str
        The law's (:class:`~spare_theory.cycles.base.CycleLaw`), for the bill.
    stall, waiting, slowdown, rollback, lost_stall : numpy.ndarray or None
        Time taken from the five parts by failure classes, same units: the
        stalls until a failure the job survives is noticed and the slowed
        steps of a straggler (from ``redundancy``), the waits for a wiping
        failure to be noticed (from ``restart``), the work a corruption
        sends back beyond the last checkpoint and the stalls inside the
        segments a wipe-out loses (from ``lost``); ``None``: none.

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> t = renewal_terms(CkptOnly(128), 0.001, [0.001, 0.01], 0.0003)
    >>> print(np.round(t.hours_per_work_hour(), 4))
    [1.6076 2.4307]
    """

    useful: np.ndarray
    redundancy: np.ndarray
    checkpoint: np.ndarray
    restart: np.ndarray
    lost: np.ndarray
    log_q0: float
    batch: np.ndarray | None = None
    idle_share: float = 0.0
    redundancy_cause: str = "redundant_compute"
    stall: np.ndarray | None = None
    waiting: np.ndarray | None = None
    slowdown: np.ndarray | None = None
    rollback: np.ndarray | None = None
    lost_stall: np.ndarray | None = None

    @property
    def exact_batch(self) -> bool:
        """Whether every step trained the whole global batch (no :attr:`batch` sums)."""
        return self.batch is None

    def samples_skipped(self) -> np.ndarray:
        """``1 - useful / batch``: share of the global batch not trained (0 when exact)."""
        if self.batch is None:
            return np.zeros(self.useful.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.batch > 0, 1.0 - self.useful / self.batch, 0.0)

    def total(self) -> np.ndarray:
        """``E[X]``: the sum of the five parts and of those failure classes take from them."""
        total = sum((getattr(self, k) for k in _PARTS), np.zeros(self.useful.shape))
        for k in _CLASS_PARTS:
            part = getattr(self, k)
            if part is not None:
                total = total + part
        return total

    def hours_per_work_hour(self) -> np.ndarray:
        """``E[X] / E[P]`` at each interval; ``inf`` where no work is kept."""
        total = self.total()
        useful = self.useful
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.where(
                (useful > 0) & np.isfinite(total), total / np.where(useful > 0, useful, 1.0), np.inf
            )


def renewal_terms(law: CycleLaw, rho: float, kappa: ArrayLike, d: float) -> RenewalTerms:
    """The per-cycle expectations for restart ``rho``, intervals ``kappa``, checkpoint ``d``.

    All times dimensionless (``u = lambda t``).  Vectorised over ``kappa``:
    the segments of every interval are laid end to end in one flat array and
    summed per interval with ``np.add.reduceat``, so a whole grid of
    intervals costs about one evaluation's worth of numpy calls.  Segments
    after ``Q`` has fallen to ``e^-30 Q(rho)`` are dropped.

    Parameters
    ----------
    law : CycleLaw
        The strategy's cycle.
    rho : float
        Restart, ``lambda R >= 0``.
    kappa : array_like of float
        Compute time per segment, ``lambda tau > 0``.
    d : float
        Checkpoint, ``lambda delta >= 0``.

    Returns
    -------
    RenewalTerms
        One entry per ``kappa``.

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> t = renewal_terms(Rep(128, 2), 0.001, [0.01], 0.0003)
    >>> round(float(t.useful[0] / t.total()[0]), 4)
    0.4607
    """
    log_q0, restart, u_stop = law.restart_terms(rho)
    kappa = np.atleast_1d(np.asarray(kappa, dtype=float))
    alpha = kappa + d
    if law.max_segments is not None:
        count = np.maximum(np.ceil((u_stop - rho) / alpha) + 1, 1.0)  # may pass 2^63
        if count.max() > law.max_segments:
            return _block_terms(law, rho, kappa, d, count, law.max_segments)
    segments = np.maximum(np.ceil((u_stop - rho) / alpha).astype(np.int64) + 1, 1)
    # Segment j of one interval ends where segment j+1 starts: lay out the
    # n + 1 bounds of every interval end to end and evaluate each bound once
    # (per-interval values spread by np.repeat: faster than gathers).
    first_bound = np.cumsum(segments + 1) - (segments + 1)
    j = np.arange(int((segments + 1).sum())) - np.repeat(first_bound, segments + 1)
    bounds = rho + np.repeat(alpha, segments + 1) * j
    seg = np.flatnonzero(j < np.repeat(segments, segments + 1))  # where each segment starts
    first = first_bound - np.arange(kappa.size)  # each interval's first segment
    k, start = np.repeat(kappa, segments), bounds[seg]
    log_bounds = law.logq(bounds)
    log_bounds -= log_q0
    log_start, log_end = log_bounds[seg], log_bounds[seg + 1]
    log_mid = law.logq(start + k)
    log_mid -= log_q0
    follows = (j[seg] > 0).astype(float)  # segments after a checkpoint (not the restart)
    return _collect(
        law, kappa, first, start, k, d, (log_start, log_mid, log_end), follows, restart, log_q0
    )


def _block_terms(
    law: CycleLaw, rho: float, kappa: np.ndarray, d: float, segments: np.ndarray, cap: int
) -> RenewalTerms:
    """:func:`renewal_terms` with the segments summed in blocks (cycles of very many segments).

    Interval ``i`` has ``n_i`` segments; blocks of ``b_i = ceil(n_i / cap)``
    consecutive segments are each counted as ``b_i`` times their middle
    segment (starting at ``rho + alpha (k b_i + (b_i - 1) / 2)``): the
    midpoint rule over segments, accurate to ``O((b_i / n_i)^2)`` relative
    when ``Q`` and ``theta`` change on the scale of the cycle (long cycles
    with repairs: at most ``cap`` blocks per interval).
    """
    log_q0, restart, _ = law.restart_terms(rho)
    alpha = kappa + d
    width = np.maximum(np.ceil(segments / cap), 1.0)
    blocks = np.ceil(segments / width).astype(np.int64)
    first = np.cumsum(blocks) - blocks
    block = np.arange(int(blocks.sum())) - np.repeat(first, blocks)
    w = np.repeat(width, blocks)
    step, k = np.repeat(alpha, blocks), np.repeat(kappa, blocks)
    start = rho + step * (block * w + (w - 1) / 2)
    log_start = law.logq(start)
    log_start -= log_q0
    log_mid = law.logq(start + k)
    log_mid -= log_q0
    log_end = law.logq(start + step)
    log_end -= log_q0
    follows = np.where(block == 0, (w - 1) / w, 1.0)
    return _collect(
        law, kappa, first, start, k, d, (log_start, log_mid, log_end), follows, restart, log_q0, w
    )


def _collect(
    law: CycleLaw,
    kappa: np.ndarray,
    first: np.ndarray,
    start: np.ndarray,
    k: np.ndarray,
    d: float,
    logs: tuple[np.ndarray, np.ndarray, np.ndarray],
    follows: np.ndarray,
    restart: float,
    log_q0: float,
    width: np.ndarray | None = None,
) -> RenewalTerms:
    """Sum the segments' pieces per interval (each weighted by ``width`` segments) into terms.

    ``logs``: ``log Q / Q(rho)`` at each segment's start, end of compute and
    end; ``Q`` is integrated over the compute and the checkpoint piece
    (:func:`~spare_theory.cycles.base.piece_survival`: log-linear, split where
    ``log Q`` bends within a piece).  A
    law whose batch is not exact also sums the kept work at the full batch
    (:meth:`CycleLaw.batch_theta`), for the samples skipped; a law with a
    :meth:`CycleLaw.checkpoint_loss` loses it in the share ``follows`` of
    each segment's work that comes after a checkpoint.
    """
    log_start, log_mid, log_end = logs
    # The rows to sum are written in place (segments can number millions).
    table = np.empty((4 if law.exact_batch else 5, k.size))
    table[0] = piece_survival(law, start, k, log_start, log_mid, log_q0)
    table[1] = piece_survival(law, start + k, d, log_mid, log_end, log_q0)
    kept = np.exp(log_end, out=table[2])
    if law.planned:
        kept += planned_kept(law, start, k, d, log_q0)
    theta = law.segment_theta(start, k, d)
    # Throughput lost by cause, each summed as the work is (kept x loss).
    segment_losses = law.segment_losses(start, k, d)
    losses = [
        (cause, np.add.reduceat(kept * loss * (1.0 if width is None else width), first))
        for cause, loss in segment_losses.items()
    ]
    batch = None if law.exact_batch else law.batch_theta(start + k / 2)
    loss = law.checkpoint_loss(start, d)
    if loss is not None:
        theta = theta - follows * loss[0] / k
        batch = None if batch is None else batch - follows * loss[1] / k
    np.multiply(kept, theta, out=table[3])
    if batch is not None:
        np.multiply(kept, batch, out=table[4])
    if width is not None:
        table *= width
    sums = np.add.reduceat(table, first, axis=1)
    compute, checkpoint, kept_sum, useful_sum = sums[:4]
    kept_compute, useful = kappa * kept_sum, kappa * useful_sum
    taken = {
        {"detection": "stall"}.get(cause, cause): kappa * loss_sum for cause, loss_sum in losses
    }
    lost = np.maximum(compute - kept_compute, 0.0)
    lost_stall = None
    if "stall" in taken:
        # The segments a wipe-out ends stall too until a failure is noticed: the stall over
        # all the compute time (its share at the midpoint) less the kept segments'.
        share_mid = law.theta_losses(start + k / 2)["detection"]
        stalled = table[0] * share_mid - k * table[2] * segment_losses["detection"]
        lost_stall = np.minimum(np.add.reduceat(np.maximum(stalled, 0.0), first), lost)
        lost = lost - lost_stall
    return RenewalTerms(
        useful=useful,
        redundancy=kept_compute - useful - sum(taken.values(), np.zeros(kappa.size)),
        stall=taken.get("stall"),
        slowdown=taken.get("slowdown"),
        lost_stall=lost_stall,
        checkpoint=checkpoint,
        restart=np.full(kappa.size, restart),
        lost=lost,
        log_q0=log_q0,
        batch=None if law.exact_batch else kappa * sums[4],
        idle_share=law.idle_share,
        redundancy_cause=law.redundancy_cause,
    )


def planned_kept(
    law: CycleLaw, start: np.ndarray, k: np.ndarray, d: float, log_q0: float
) -> np.ndarray:
    """Share of each segment's work kept by a planned restart inside it (0 without).

    A planned restart keeps the work of the current segment: with ``f_p =
    Q h`` the density of a planned end (``h``: :meth:`CycleLaw.planned_hazard`)
    and ``w(u)`` the compute done in the segment by ``u``, the share is
    ``int f_p(u) w(u) du / (kappa Q(rho))`` over the segment:
    ``int_0^kappa f_p(s + x) x dx / kappa + int_kappa^{kappa+delta} f_p(s + x) dx``,
    each by 8-point Gauss-Legendre (``f_p`` changes within a segment when
    the trigger is near).

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> planned_kept(Rep(8, 2), np.zeros(1), np.ones(1), 0.1, 0.0).tolist()
    [0.0]
    """
    if not law.planned:
        return np.zeros(start.shape)
    x, w = _GAUSS_X, _GAUSS_W

    def density(u: np.ndarray) -> np.ndarray:
        return np.exp(law.logq(u) - log_q0) * law.planned_hazard(u)

    compute = density(start[:, None] + k[:, None] * x) @ (w * x) * k
    checkpoint = density(start[:, None] + k[:, None] + d * x) @ w * d
    return compute + checkpoint


def scaled_times(process: GroupProcess, tau_minutes: ArrayLike) -> tuple[float, np.ndarray, float]:
    """``(rho, kappa, d)``: restart (from the wiping failure: unnoticed, then restarted),
    interval(s) and checkpoint in units of ``1/lambda``.

    ``lambda`` is the process's priced rate (:attr:`GroupProcess.rate_per_hour
    <spare_theory.hourly.process.GroupProcess.rate_per_hour>`).

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=30, checkpoint_minutes=6, work_hours=48)
    >>> rho, kappa, d = scaled_times(group_process(sc), [60.0])
    >>> round(rho, 6), kappa.tolist(), round(d, 6)
    (0.002, [0.004], 0.0004)
    """
    scenario, lam = process.scenario, process.rate_per_hour
    return (
        lam * process.restart_minutes / 60,  # a wipe-out is noticed, then restarted
        lam * np.asarray(tau_minutes, dtype=float) / 60,
        lam * scenario.checkpoint_minutes / 60,
    )


def estimate_from(
    process: GroupProcess,
    strategy: str,
    r: int,
    tau_minutes: float,
    terms: RenewalTerms,
    i: int = 0,
) -> TrainingEstimate:
    """The estimate at interval ``tau_minutes``, entry ``i`` of ``terms``.

    ``hours = W * E[X] / E[P]``, the breakdown is ``hours`` split in the
    shares of the five parts of ``E[X]``, and the restarts are
    ``W / E[P]`` with ``E[P] = useful * Q(rho) / lambda`` (in logs:
    ``Q(rho)`` underflows in the restart-dominated regime).

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> from spare_theory import Scenario
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> law = Rep(sc.groups, 2)
    >>> process = group_process(sc)
    >>> terms = renewal_terms(law, *scaled_times(process, [30.0, 60.0]))
    >>> round(estimate_from(process, "rep", 2, 60.0, terms, 1).hours, 2)
    107.14
    """
    scenario, lam = process.scenario, process.rate_per_hour
    values = {k: float(getattr(terms, k)[i]) for k in _PARTS}
    taken = {k: float(getattr(terms, k)[i]) for k in _CLASS_PARTS if getattr(terms, k) is not None}
    log_q0 = terms.log_q0
    total = sum(values[k] for k in _PARTS) + sum(taken.values())
    # The five parts keep what the classes take from them (each 0.0 added without classes).
    values["redundancy"] += taken.get("stall", 0.0) + taken.get("slowdown", 0.0)
    values["restart"] += taken.get("waiting", 0.0)
    values["lost"] += taken.get("rollback", 0.0) + taken.get("lost_stall", 0.0)
    W = scenario.work_hours
    useful = values["useful"]
    hours = W * float(terms.hours_per_work_hour()[i])
    shares = {k: values[k] / total if math.isfinite(total) and total > 0 else 0.0 for k in _PARTS}
    parts = {
        k: (shares[k] * hours if shares[k] > 0 else 0.0)
        for k in ("redundancy", "checkpoint", "restart", "lost")
    }
    of = {
        k: (v / total * hours if v > 0 and math.isfinite(total) and math.isfinite(hours) else 0.0)
        for k, v in taken.items()
    }
    log_restarts = math.log(W * lam / useful) - min(log_q0, 0.0) if useful > 0 else math.inf
    restarts = math.exp(log_restarts) if log_restarts < 700 else math.inf
    cycle_hours = hours / restarts if math.isfinite(hours) and restarts > 0 else math.inf
    return TrainingEstimate(
        strategy=strategy,
        r=r,
        checkpoint_interval_minutes=float(tau_minutes),
        hours=float(hours),
        availability=float(W / hours) if math.isfinite(hours) else 0.0,
        uptime=1.0 - shares["restart"] if math.isfinite(total) and total > 0 else 0.0,
        useful_hours=float(W) if math.isfinite(hours) else math.inf,
        redundancy_hours=parts["redundancy"],
        checkpoint_hours=parts["checkpoint"],
        restart_hours=parts["restart"],
        lost_hours=parts["lost"],
        restarts=float(restarts),
        cycle_hours=float(cycle_hours),
        samples_skipped=float(terms.samples_skipped()[i]),
        exact_batch=terms.exact_batch,
        reserved_gpus=scenario.gpus + (scenario.spare_nodes or 0) * scenario.gpus_per_node,
        grouped_gpus=scenario.groups * scenario.gpus_per_group,
        idle_share=terms.idle_share,
        redundancy_cause=terms.redundancy_cause,
        detection_wait_hours=of.get("waiting", 0.0),
        detection_stall_hours=of.get("stall", 0.0) + of.get("lost_stall", 0.0),
        lost_stall_hours=of.get("lost_stall", 0.0),
        slowdown_hours=of.get("slowdown", 0.0),
        rollback_hours=of.get("rollback", 0.0),
    )


def evaluate(
    process: GroupProcess,
    law: CycleLaw,
    tau_minutes: float,
    *,
    strategy: str | None = None,
) -> TrainingEstimate:
    """The renewal-reward estimate of ``process`` under cycle law ``law`` at interval ``tau``.

    No argument checks (see :func:`spare_theory.training.estimate.time_to_train`, the
    checked front door).

    Parameters
    ----------
    process : GroupProcess
        The run as priced: cluster, failure rate, costs and work
        (:func:`~spare_theory.hourly.process.group_process`).
    law : CycleLaw
        The strategy's cycle at ``N = process.groups``
        (:meth:`Strategy.cycle_law <spare_theory.strategies.base.Strategy.cycle_law>`).
    tau_minutes : float
        Compute time between checkpoints, minutes, ``> 0``.
    strategy : str, optional
        Strategy name reported in the estimate (default ``law.name``; SPARe
        and Rep at ``r = 1`` run the CKPT-only law under their own name).

    Returns
    -------
    TrainingEstimate

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> from spare_theory import Scenario
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> round(evaluate(group_process(sc), Rep(sc.groups, 2), 60.0).hours, 2)
    107.14
    """
    terms = priced_terms(process, law, [tau_minutes])
    name = law.name if strategy is None else strategy
    return estimate_from(process, name, law.r, tau_minutes, terms, 0)


def hours_grid(
    process: GroupProcess, law: CycleLaw, log_tau: ArrayLike
) -> tuple[RenewalTerms, np.ndarray]:
    """The terms and hours per hour of work at every ``tau = exp(log_tau)`` minutes.

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> from spare_theory import Scenario
    >>> from spare_theory.cycles.rep import CkptOnly, Rep
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> terms, ratio = hours_grid(group_process(sc), Rep(sc.groups, 2), np.log([30.0, 60.0]))
    >>> print(np.round(48 * ratio, 2))
    [114.4  107.14]
    """
    terms = priced_terms(process, law, np.exp(np.asarray(log_tau, dtype=float)))
    return terms, terms.hours_per_work_hour()


def _rolled_back(terms: RenewalTerms, segments: float, kappa: np.ndarray) -> RenewalTerms:
    """``terms`` with the work of ``segments`` more checkpoints per cycle lost (a corruption
    sends the job back beyond the last one): each kept segment's mean work, ``kappa`` times
    the mean throughput of the compute kept, moved from the useful work to the rollback,
    over ``Q(rho)`` as every term."""
    # Each part of the compute kept gives its share of the segments' (the useful work's moves
    # the hours), but for the stalls: they stay stalls when rolled back.
    pieces = {k: getattr(terms, k) for k in ("useful", "redundancy", "slowdown")}
    pieces = {k: v for k, v in pieces.items() if v is not None}
    kept = sum(pieces.values(), np.zeros(kappa.shape))
    if terms.stall is not None:
        kept = kept + terms.stall
    # Not capped at this part's useful work: the rollback takes work that earlier cycles
    # kept, and a restart class whose cycles rarely compute (a long wait) still rolls back.
    segment = segments * kappa * math.exp(-terms.log_q0)
    with np.errstate(invalid="ignore", divide="ignore"):
        moved = {k: np.where(kept > 0, segment * v / kept, 0.0) for k, v in pieces.items()}
    total = sum(moved.values(), np.zeros(kappa.shape))
    rollback = total if terms.rollback is None else terms.rollback + total
    return dataclasses.replace(
        terms, **{k: pieces[k] - moved[k] for k in pieces}, rollback=rollback
    )


def priced_terms(process: GroupProcess, law: CycleLaw, tau_minutes: ArrayLike) -> RenewalTerms:
    """:func:`renewal_terms` of ``process``, mixed over its restart lengths.

    A cycle's restart waits for the wiping failure's detection, drawn by its
    class (:meth:`GroupProcess.restarts
    <spare_theory.hourly.process.GroupProcess.restarts>`, a straggler's or a corruption's
    by the chance the law gives that it ends the cycle,
    :meth:`CycleLaw.late_endings <spare_theory.cycles.base.CycleLaw.late_endings>`)
    independently of the cycle, so the cycles stay independent and each expectation is the
    mix of the restarts' by share: ``E[X] = sum_c share_c X_c Q(rho_c)``
    (the terms are over ``Q(rho)``, so they mix with weights
    ``share_c Q(rho_c) / Q(rho_0)``, ``rho_0`` the shortest).  One length
    (every class noticed alike): :func:`renewal_terms` itself.  A law whose
    cycle can end further back than the last checkpoint (a corruption's
    rollback, :meth:`CycleLaw.rollback_segments
    <spare_theory.cycles.base.CycleLaw.rollback_segments>`) loses that work too.

    Examples
    --------
    >>> from spare_theory.hourly.process import group_process
    >>> from spare_theory import Scenario
    >>> from spare_theory.cycles.rep import CkptOnly
    >>> from spare_theory.lifetimes.classes import FailureClass
    >>> classes = (FailureClass("crash", 0.5), FailureClass("hang", 0.5, "hang", 60))
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, failure_classes=classes)
    >>> mixed = priced_terms(group_process(sc), CkptOnly(128), [60.0])
    >>> one = (FailureClass("crash", 1.0),)
    >>> mean = dataclasses.replace(sc, restart_minutes=50, failure_classes=one)
    >>> flat = priced_terms(group_process(mean), CkptOnly(128), [60.0])
    >>> bool(mixed.hours_per_work_hour()[0] < flat.hours_per_work_hour()[0])  # convex in rho
    True
    """
    lam = process.rate_per_hour
    kappa = lam * np.asarray(tau_minutes, dtype=float) / 60
    d = lam * process.scenario.checkpoint_minutes / 60
    restarts = sorted(process.restarts(law.late_endings()))
    parts = [renewal_terms(law, lam * minutes / 60, kappa, d) for minutes, _ in restarts]
    back = law.rollback_segments()
    if back > 0.0:
        parts = [_rolled_back(t, back, kappa) for t in parts]
    R = process.scenario.restart_minutes
    parts = [
        t if minutes <= R else _waited(law, t, lam * (minutes - R) / 60)
        for (minutes, _), t in zip(restarts, parts)
    ]
    if len(parts) == 1:
        return parts[0]
    log_q0 = parts[0].log_q0
    weights = [share * math.exp(t.log_q0 - log_q0) for (_, share), t in zip(restarts, parts)]
    mixed = {
        k: sum(w * getattr(t, k) for w, t in zip(weights, parts))
        for k in (*_PARTS, "batch")
        if getattr(parts[0], k) is not None
    }
    for k in _CLASS_PARTS:
        if any(getattr(t, k) is not None for t in parts):
            mixed[k] = sum(
                w * getattr(t, k) for w, t in zip(weights, parts) if getattr(t, k) is not None
            )
    return dataclasses.replace(parts[0], **mixed)


def _waited(law: CycleLaw, terms: RenewalTerms, wait: float) -> RenewalTerms:
    """``terms`` with the restart's wait until the wiping failure is noticed, its first
    ``wait`` (units ``1 / lambda``), moved from the restart: ``int_0^wait Q / Q(rho)`` over
    the attempts (each waits first, and a failure cuts it short)."""
    log_q_wait, per_attempt, _ = law.restart_terms(wait)
    moved = np.full(terms.restart.shape, per_attempt * math.exp(log_q_wait - terms.log_q0))
    return dataclasses.replace(terms, restart=terms.restart - moved, waiting=moved)
