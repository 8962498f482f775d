"""Planned restarts: a restart cycle that also ends, without rollback, at a trigger.

A planned restart is a global restart *without rollback* (the work of the
current segment is kept) as soon as ``k`` groups are down at once, before the
step cost has grown too far or a wipe-out rolls the job back
(``Scenario.planned_restart_failures``; a trigger on the step cost itself is
the count trigger :func:`cost_trigger_failures` under the model).
:class:`PlannedCycle` extends any strategy's cycle law through its
:meth:`~spare_theory.cycles.base.CycleLaw.count_law` (per down count: the
chance of no wipe-out and the step cost).  Derivation in ``docs/theory.md``
section 6.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import expm
from scipy.special import gammaln, logsumexp

from .._caching import cached, value_key
from .._validation import as_count, as_count_array, as_real_array
from .base import BLOCK_SEGMENTS, CycleLaw, TabulatedCycle, cycle_time_average
from .chains import down_count_mean_passage
from .repairs import EARLY_POINTS, GRID_STEPS, LOG_END, repair_cycle

__all__ = ["PlannedCycle", "cost_trigger_failures", "planned_cycle"]


class PlannedCycle(TabulatedCycle):
    """A restart cycle that also ends, without rollback, once ``k`` groups are down at once.

    The cycle ends at the first of the wipe-out and the *trigger* (the
    ``k``-th group down; the step cost has then grown to about ``E[S*_k]``).
    A planned end keeps the work of the current segment
    (:func:`spare_theory.hourly.renewal.planned_kept`); ``Q`` here is the chance
    the cycle is still on, ``h`` (:meth:`planned_hazard`) the rate of a
    planned end.  Derivation in ``docs/theory.md`` section 6.

    *Without repairs* (``mu = 0``) the law is today's cycle law truncated at
    ``k``, exact given the per-count survival ``s_f = P(T > f)`` (SPARe: the
    sharp wipe-out law; Rep: no replica set complete among ``f`` random
    groups, counted exactly), with ``B_f(u)`` the binomial law of the
    failure count at ``p = 1 - e^{-u}``:

        Q(u) = sum_{f < k} B_f s_f,   Q h = B_{k-1} (N - k + 1) s_k,
        theta(u) = sum_{f < k} B_f s_f / c_f / Q

    (``c_f = E[S*_f]`` for SPARe; Rep's throughput is constant).  *With
    repairs* the down count of all ``N`` groups is a birth-death chain
    (``j -> j+1`` at ``(N - j) s_{j+1}/s_j``, killed by a wipe-out at
    ``(N - j)(1 - s_{j+1}/s_j)``, ``j -> j-1`` at ``j mu``: the down set
    taken as uniform among the sets not wiped, exact at ``mu = 0``), stopped
    at ``k``.  Its survival ``Q_k`` over that of the same chain without
    trigger ``Q_free`` corrects the :class:`RepairCycle`:
    ``log Q = log Q_rep + log Q_k - log Q_free``; ``h`` is the chain's flux
    into ``k`` over ``Q_k`` and ``theta = theta_rep E_k[1/c_j] /
    E_free[1/c_j]``.

    The per-count survival and costs come from the base law
    (:meth:`~spare_theory.cycles.base.CycleLaw.count_law`), so SPARe with
    micro-batches (:class:`~spare_theory.cycles.spare.SpareSplit`, no repairs)
    prices its states by the micro-batch loads.

    Parameters
    ----------
    base : CycleLaw
        The strategy's cycle law without planned restarts (``r >= 2``).
    k : int
        Trigger, ``1 <= k <= N``.
    mu, stall : float
        As :class:`~spare_theory.cycles.repairs.RepairCycle` (``mu = 0``: no repairs).

    Attributes
    ----------
    u, log_q, theta_grid, hazard : numpy.ndarray
        The grid, ``log Q``, the throughput and ``h`` on it.
    planned_share : float
        ``int_0^inf Q h du``: the chance that a cycle ends in a planned restart.

    Examples
    --------
    >>> from spare_theory.cycles.spare import Spare
    >>> law = PlannedCycle(Spare(64, 4), k=8)
    >>> round(law.planned_share, 3), round(float(np.exp(law.logq(0.05))), 4)
    (0.993, 0.9874)
    """

    name = "planned"
    planned = True
    max_segments = BLOCK_SEGMENTS

    def __init__(self, base: CycleLaw, k: int, mu: float = 0.0, stall: float = 0.0) -> None:
        N, r = base.N, base.r
        super().__init__(N, r)
        if not 1 <= k <= N or r < 2:
            raise ValueError(f"planned_restart_failures = {k} must be in [1, N = {N}] with r >= 2")
        self.base, self.k, self.mu, self.stall = base, int(k), float(mu), float(stall)
        if self.mu == 0.0:
            self._no_repairs()
        else:
            self._with_repairs()
        self.slope = min((self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2]), -1e-300)
        q = np.exp(self.log_q)
        tail = float(q[-1] * self.hazard[-1] / -self.slope)
        self.planned_share = min(float(np.trapezoid(q * self.hazard, self.u)) + tail, 1.0)

    def _no_repairs(self) -> None:
        N, k = self.N, self.k
        log_s, cost = _count_law(self.base)
        f = np.arange(k)
        cost = cost[:k]
        # Grid uniform in p up to where k failures are all but certain, plus early points.
        p_end = min((k + 12 * math.sqrt(k) + 20) / N, 1 - 1e-12)
        u_end = -math.log1p(-p_end)
        self.u = np.union1d(
            -np.log1p(-np.linspace(0.0, p_end, GRID_STEPS + 1)),
            np.geomspace(1e-3 / N, min(30.0 / N, u_end), EARLY_POINTS),
        )
        u = self.u[:, None]
        log_p = np.log(-np.expm1(-np.maximum(u, 1e-300)))
        log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)
        # log_binom + f log p - (N - f) u + log s_f, built in place (a grid x k table);
        # f log p taken as 0 at f = 0, as in the formula.
        log_w = f * log_p
        log_w[:, 0] = 0.0
        log_w += log_binom
        log_w -= (N - f) * u
        log_w += log_s[:k]
        self.log_q = logsumexp(log_w, axis=1)
        w = log_w
        w -= log_w.max(axis=1, keepdims=True)
        np.exp(w, out=w)
        self.theta_grid = (w / cost).sum(axis=1) / w.sum(axis=1)
        j = k - 1
        log_end = (
            gammaln(N + 1)
            - gammaln(j + 1)
            - gammaln(N - j + 1)
            + (j * log_p[:, 0] if j > 0 else 0.0)
            - (N - j) * self.u
            + math.log(N - j)
            + log_s[k]
        )
        with np.errstate(invalid="ignore"):
            self.hazard = np.nan_to_num(np.exp(log_end - self.log_q), nan=0.0, posinf=0.0)

    def _chain(
        self, top: int, log_s: np.ndarray, cost: np.ndarray, grid: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The down-count chain stopped at ``top`` and killed by wipe-outs, on a uniform grid.

        States ``j < top``; ``j -> j+1`` at ``(N - j) s_{j+1} / s_j`` (to
        ``top``: the trigger), a wipe-out at ``(N - j) (1 - s_{j+1} / s_j)``,
        ``j -> j-1`` at ``j mu``.  Returns ``log P(on)``, the trigger's
        hazard and ``E[1/c_j | on]`` at each grid point.
        """
        N, mu = self.N, self.mu
        j = np.arange(top)
        with np.errstate(invalid="ignore"):
            keep = np.nan_to_num(np.exp(log_s[1 : top + 1] - log_s[:top]), nan=0.0)
        G = np.zeros((top, top))
        G[j, j] = -((N - j) + j * mu)
        G[j[:-1], j[:-1] + 1] = (N - j[:-1]) * keep[:-1]
        G[j[1:], j[1:] - 1] = j[1:] * mu
        P = np.maximum(expm(G * (grid[1] - grid[0])), 0.0)
        v = np.zeros(top)
        v[0] = 1.0
        log_on = np.zeros(grid.size)
        hazard = np.zeros(grid.size)
        inv = np.zeros(grid.size)
        up = (N - top + 1) * keep[top - 1]
        total = 0.0
        for i in range(grid.size):
            if i:
                v = v @ P
                mass = float(v.sum())
                if mass <= 0.0:
                    log_on[i:] = -np.inf
                    break
                total += math.log(mass)
                v /= mass
            log_on[i] = total
            hazard[i] = up * v[top - 1]
            inv[i] = float(v @ (1.0 / cost[:top]))
        return log_on, hazard, inv

    def _with_repairs(self) -> None:
        N, k, mu = self.N, self.k, self.mu
        base = repair_cycle(self.base, mu, self.stall)
        log_s, cost = _count_law(self.base)
        # Where the chain without trigger is cut: beyond, the down count is
        # out of reach (12 sd above its stationary mean) or a wipe-out certain.
        mean_down = N / (1.0 + mu)
        reach = int(mean_down + 12 * math.sqrt(mean_down + 1) + 30)
        alive = int(np.flatnonzero(np.isfinite(log_s))[-1]) + 1
        top_free = max(min(N, reach, alive), k)
        # Grid up to where the triggered cycle is all but over (log Q <= -40).
        span = min(-LOG_END * down_count_mean_passage(N, k, mu) * 1.2 + 30.0 / N, base.u[-1])
        grid = np.linspace(0.0, span, GRID_STEPS + 1)
        on_k, hazard, inv_k = self._chain(k, log_s, cost, grid)
        on_free, _, inv_free = self._chain(top_free, log_s, cost, grid)
        self.u = np.union1d(
            np.union1d(grid, base.u[base.u < span]),
            np.geomspace(1e-3 / (N * (1.0 + mu)), grid[1], EARLY_POINTS),
        )
        # The chains' ratio corrects the repair cycle (docstring).
        with np.errstate(invalid="ignore"):
            log_ratio = np.interp(self.u, grid, np.nan_to_num(on_k - on_free, nan=-np.inf))
        self.log_q = np.minimum.accumulate(np.asarray(base.logq(self.u)) + log_ratio)
        ratio = np.interp(self.u, grid, inv_k / np.maximum(inv_free, 1e-300))
        self.theta_grid = np.minimum(np.asarray(base.theta(self.u)) * ratio, 1.0)
        self.hazard = np.interp(self.u, grid, hazard)
        self.repairs_rate = np.interp(self.u, base.u, base.repairs_rate)

    def cache_key(self) -> tuple:
        return (value_key(self.base), self.k, self.mu, self.stall)

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        """``h(u)``: rate of a planned restart at ``u`` given the cycle is still on."""
        return np.interp(np.asarray(u, dtype=float), self.u, self.hazard)

    def repairs_per_cycle_time(self) -> float:
        """``int Q N mu p du / int Q du`` over the truncated cycle (0 without repairs)."""
        if self.mu == 0.0:
            return 0.0
        return cycle_time_average(self.u, self.log_q, self.repairs_rate)


@cached(maxsize=64)
def _count_law(base: CycleLaw) -> tuple[np.ndarray, np.ndarray]:
    """``base.count_law()``, once per law: a search over the trigger ``k`` asks at every ``k``."""
    log_s, cost = base.count_law()
    for table in (log_s, cost):
        table.setflags(write=False)  # shared by every PlannedCycle of the law
    return log_s, cost


@cached(maxsize=256)
def planned_cycle(base: CycleLaw, k: int, mu: float = 0.0, stall: float = 0.0) -> PlannedCycle:
    """The :class:`PlannedCycle` extending ``base``, built once per set of argument values.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> planned_cycle(Rep(64, 2), 4).k
    4
    """
    return PlannedCycle(base, k, mu, stall)


# Relative slack when comparing a step cost with a threshold: costs are
# multiples of 1/m, and m c in floating point may land just above an integer.
_COST_SLACK = 1e-12


def cost_trigger_failures(
    N: ArrayLike, cost: ArrayLike, *, microbatches: int = 1
) -> int | np.ndarray:
    """The down count ``k(c)`` at which the model's step cost first reaches ``c``.

    The closed-form step cost with ``d`` groups down is
    ``c_d = ceil(m N/(N - d))/m`` (SPARe's ``E[S*_d] = ceil(N/(N-d))`` at
    ``m = 1``; :func:`~spare_theory.stacking.load.expected_load`).  With
    ``L = ceil(m c)``, ``c_d >= c`` iff ``m N/(N - d) > L - 1`` iff
    ``d > N (L - 1 - m)/(L - 1)``, so

        k(c) = min {d : c_d >= c} = floor(N (L - 1 - m)/(L - 1)) + 1,

    ``1 <= k(c) <= N`` for every ``c > 1``.  At ``m = 1`` and integer ``c``:
    ``k(2) = 1``, ``k(3) = floor(N/2) + 1``, ``k(c) = floor(N (c-2)/(c-1)) + 1``.
    A cost trigger ``Scenario(planned_restart_cost=c)`` is modelled as the
    count trigger ``k(c)``, which assumes the cost equals its counting bound
    (the exact ``S*`` exceeds it only in rare states, ``docs/theory.md``
    section 3).  ``m c`` within a relative ``1e-12`` of an integer counts as
    that integer.

    Parameters
    ----------
    N : int or array_like of int
        Groups, ``N >= 1``.
    cost : float or array_like
        Threshold ``c > 1`` in shard units (stack layers for ``m = 1``).
    microbatches : int, default 1
        Pieces per shard ``m >= 1``.

    Returns
    -------
    int or numpy.ndarray of int
        ``k(c)``, broadcast over ``N`` and ``cost``.

    Raises
    ------
    ValueError
        Naming ``N``, ``cost`` (not a finite number ``> 1``) or ``microbatches``.

    Examples
    --------
    >>> cost_trigger_failures(292, [2, 2.5, 3, 4])
    array([  1, 147, 147, 195])
    >>> cost_trigger_failures(292, 1.5, microbatches=4)
    59
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    n_arr, c_arr = np.broadcast_arrays(
        as_count_array(N, "N", minimum=1),
        as_real_array(cost, "cost", minimum=1.0, strict_minimum=True),
    )
    level = np.ceil(m * c_arr * (1.0 - _COST_SLACK)).astype(np.int64)
    level = np.maximum(level, m + 1)  # c > 1: the first level above a failure-free step
    k = (n_arr.astype(np.int64) * (level - 1 - m)) // (level - 1) + 1
    return int(k) if k.ndim == 0 else k
