"""The cycle law of SPARe+CKPT: the wipe-out law mixed over the failure count.

Failure *times* are independent of the failure *order*, and the wipe-out
count ``T`` and ``S*`` depend on the order only, so with ``f`` groups failed
by ``u`` (binomial at ``p(u)``):

    Q(u) = sum_f Binom(f; N, p) P(T > f),
    theta(u) = sum_f Binom(f; N, p) P(T > f) / E[S*_f] / Q(u),

``P(T > f)`` exact where cheap (:func:`log_survival_table`), else from the
sharp wipe-out law (:func:`spare_theory.wipeout_law`), and ``E[S*_f]`` from
:func:`~spare_theory.stacking.overhead.expected_stacks` (``docs/theory.md``
section 4).  :class:`SpareSplit` prices the states by the
micro-batch load instead.  With repairs, the no-repair hazard along the path
corrected by the cluster expansion over types and pairs of types sharing a
host (:meth:`Spare.repair_log_q`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.special import gammaln

from .._caching import cached
from .._validation import as_count
from ..lifetimes.laws import EXPONENTIAL
from ..lifetimes.outages import down_probability
from ..placement.placements import cyclic_placement
from ..stacking.load import expected_load
from ..stacking.overhead import expected_stacks
from ..wipeout.enumeration import (
    EXACT_MAX_GROUPS,
    RULER_MAX_GROUPS,
    exact_ruler_survival,
    exact_wipeout_survival,
)
from ..wipeout.law import wipeout_law
from .base import TabulatedCycle
from .chains import (
    chain_log_survival,
    down_count_generator,
    set_mean_absorption,
    surviving_count_throughput,
)

__all__ = [
    "MAX_SPARE_GROUPS",
    "WIPEOUT_MAX_REPAIR_SHARE",
    "Spare",
    "SpareSplit",
    "log_survival_table",
]

#: Slowest exponential repairs, as mean repair over mean group lifetime (``1 / mu``), for
#: which SPARe's mean time to wipe-out answers at ``r >= 3``: beyond it 5 of 18 audited
#: answers (seeds 5 and 7) were outside 3 % and 3 SE, up to +6.2 %, at 9 to 57 groups (a
#: bound at 16 groups failed on seed 11: +3.9 % and +5.2 % at 20 and 18 groups).
WIPEOUT_MAX_REPAIR_SHARE = 0.2

#: Largest number of groups ``N`` the SPARe cycle model accepts: its tables
#: take about 36 bytes per group (1.2 GB here) and about 3 s per ``r``.
MAX_SPARE_GROUPS = 2**25

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
# Below this log Q the cluster expansions with repairs are not trusted.
_LOG_TAIL = -25.0


@cached(maxsize=256)
def log_survival_table(N: int, r: int) -> np.ndarray:
    """``log P(T > f)`` for ``f = 0 .. f_max``, the last ``f`` where it exceeds ``e^-90``.

    Built once per ``(N, r)`` (each SPARe law and repair cycle reads it) and
    returned read-only.

    Exact where that is cheap (:func:`_exact_survival`: ``r = 3`` to
    ``N = 1,000``, ``r = 4`` to ``N = 139``, any ``r`` to ``N = 24``), where
    the sharp form runs up to 6 % high in the mean at small ``N``.  Elsewhere:
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
    table = _log_survival(N, r)
    table.setflags(write=False)
    return table


def _log_survival(N: int, r: int) -> np.ndarray:
    """:func:`log_survival_table`, computed."""
    exact = _exact_survival(N, r)
    if exact is not None:
        with np.errstate(divide="ignore"):
            log_exact = np.log(exact)
        return log_exact[: int(np.flatnonzero(log_exact > _LOG_TINY)[-1]) + 1]
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
    of :func:`log_survival_table`, ``E[S*_f]`` from
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
    cost_grows = True

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
        log_s = log_survival_table(N, r)
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

    def repair_wipeout_rate(self, mu: float) -> float:
        """``N / E[time to a type's r hosts all down]`` (:func:`set_mean_absorption`)."""
        return self.N / set_mean_absorption(self.r, mu)

    def repair_log_q(self, u: np.ndarray, mu: float) -> np.ndarray:
        """The no-repair law's hazard along the path, corrected by the type and pair chains.

        Groups are independent and up times exponential, so at a down share
        ``p`` a wiped state is entered from an unwiped one at the rate
        ``-(1 - p) d log P_ok / dp`` (``P_ok(p)``: no type down among groups
        each down with probability ``p``, :meth:`_log_ok_slope`), an
        identity of Bernoulli(``p``) sets; without repairs it is the law's
        own hazard.  Integrated along ``p(s) = pi (1 - e^{-(1 + mu) s})`` it
        counts re-entries after a type came back as new wipe-outs; the
        second-order cluster expansion corrects that: two types of a
        modular-ruler placement share at most one host and
        ``n1 = N r (r-1) / 2`` pairs share one, ``C_mu(u) = N log S_r +
        n1 (log S_pair - 2 log S_r)`` (first passages of one type's down count
        and of two types sharing one host), less the same expansion of the
        path integral, ``C_0``:
        ``log Q(u) = int_0^u (1 - p) d(log P_ok - C_0)/dp ds + C_mu(u)``
        (``docs/theory.md`` section 6).  Without repairs this is the law
        itself.  Far in the tail (``log Q`` below ``-25``, or where the
        truncated expansions stop decreasing) ``log Q`` goes on with its
        slope over the last 1/16 of the good part.
        """
        N, r = self.N, self.r
        h, steps = float(u[1] - u[0]), u.size - 1
        mean = set_mean_absorption(r, mu)
        one = chain_log_survival(down_count_generator(r, mu), h, steps, mean)
        # Two types: lost twice as fast as one when losses are rare (where it matters).
        pair = chain_log_survival(_pair_generator(r, mu), h, steps, mean / 2)
        n1 = N * r * (r - 1) / 2
        p = down_probability(u, mu)
        with np.errstate(invalid="ignore", divide="ignore"):
            # Each law along the path: its hazard at the down share p(s), integrated in s.
            hazard = -(1.0 - p) * (self._log_ok_slope(p) - _cluster_no_repair_slope(N, r, p))
            log_q = N * one + n1 * (pair - 2 * one)
            log_q[1:] -= np.cumsum(0.5 * (hazard[1:] + hazard[:-1]) * h)
        good = np.isfinite(log_q) & (log_q > _LOG_TAIL)
        good[1:] &= np.diff(log_q) < 1e-9  # rounding noise where Q is near 1
        end = int(np.argmin(good[1:])) + 1 if not good[1:].all() else u.size
        if end < u.size:
            back = max(end // 16, 1)
            slope = -N / mean
            if end > back:
                rise = log_q[end - 1] - log_q[end - 1 - back]
                slope = min(rise / (u[end - 1] - u[end - 1 - back]), slope)
            log_q[end:] = log_q[end - 1] + slope * (u[end:] - u[end - 1])
        return np.minimum.accumulate(log_q)

    def wipeout_refusal(self, mu: float, repair_law: Any) -> str | None:
        """Where the repair cycle's mean time to wipe-out was measured off on the audit's space.

        On a repairs-only draw of the audit's space (seeds 5 and 7, 290
        answers, ``docs/audit.md``, "The wipe-out doors"): a ``repair_law``
        other than exponential (the repair cycle rescales the exponential
        chains by the down share, :class:`~spare_theory.cycles.repairs.RepairCycle`),
        44 of 199 outside 3 % and 3 SE (worst +12.8 %); exponential repairs
        slower than :data:`WIPEOUT_MAX_REPAIR_SHARE` of a group's mean
        lifetime at ``r >= 3``, 5 of 18 (up to +6.2 %, model high); the rest
        0 of 73.  Their causes are not found.
        """
        if mu == 0.0:
            return None
        if not (isinstance(repair_law, str) and repair_law == "exponential"):
            return (
                "repair_law: SPARe's mean time to wipe-out with a repair law other than "
                "exponential was measured outside 3 % and 3 SE in 44 of 199 audited cells "
                "(worst +12.8 %, docs/audit.md); simulate_time_to_wipeout plays it"
            )
        if self.r >= 3 and 1.0 / mu > WIPEOUT_MAX_REPAIR_SHARE:
            return (
                f"repair_minutes: SPARe's mean time to wipe-out at r = {self.r} with repairs "
                f"{1.0 / mu:.3g} of a group's mean lifetime (above {WIPEOUT_MAX_REPAIR_SHARE}) "
                "was measured outside 3 % and 3 SE in 5 of 18 audited cells (up to +6.2 %, "
                "docs/audit.md); simulate_time_to_wipeout plays it"
            )
        return None

    def _log_ok_slope(self, p: np.ndarray) -> np.ndarray:
        """``d log P_ok / dp``: no type down among groups each down with probability ``p``.

        ``P_ok(p) = sum_f w_f``, ``w_f = C(N, f) p^f (1 - p)^(N - f) P(T > f)``
        with ``P(T > f)`` of :func:`log_survival_table` (exact where cheap), so
        ``d log P_ok / dp = E_w[f / p - (N - f) / (1 - p)]``; summed, as
        :class:`Spare` sums ``Q``, over a band of the binomial around ``N p``
        (``2 r + 8`` terms wider above) in blocks of rows.
        """
        N = self.N
        table = log_survival_table(N, self.r)
        slope = np.zeros(p.size)
        for start in range(0, p.size, _BLOCK_ROWS):
            q = p[start : start + _BLOCK_ROWS]
            sd = np.sqrt(N * q * (1.0 - q))
            low = int(max(np.floor(np.min(N * q - _BAND_SD * sd)), 0))
            # Wider above than Q's band: the slope divides the terms by p, and at small
            # N p the few failures past the band still weigh (they carry the wipe-outs).
            top = np.ceil(np.max(N * q + _BAND_SD_ABOVE * sd)) + 2 * self.r + 8
            high = int(min(top, table.size - 1))
            # Past the table (P(T > f) below e^-90) log Q is far below the tail's cut.
            f = np.arange(min(low, high), high + 1)
            with np.errstate(divide="ignore", invalid="ignore"):
                log_w = (table[f] - gammaln(f + 1) - gammaln(N - f + 1))[None, :] + (
                    f * np.log(q[:, None]) + (N - f) * np.log1p(-q[:, None])
                )
                log_w = np.where(np.isnan(log_w), -np.inf, log_w)
                w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
                mean_f = (w * f).sum(axis=1) / w.sum(axis=1)
                slope[start : start + _BLOCK_ROWS] = mean_f / q - (N - mean_f) / (1.0 - q)
        # At p = 0 only f = 0 weighs and P(T > 1) = 1: the slope is 0 (r >= 2).
        return np.where((p > 0) & np.isfinite(slope), slope, 0.0)

    def throughput_at_down_share(self, p: np.ndarray) -> np.ndarray:
        """``theta`` where the down share is ``p``: the down set as a uniform, not wiped set."""
        return np.asarray(self.theta(self.lifetimes.ppf(p)), dtype=float)

    def repair_throughput(self, u: np.ndarray, mu: float, p: np.ndarray) -> np.ndarray:
        """``E[1 / c_F | no wipe-out by u]`` with the down count ``F`` the chain a wipe-out
        ends (:func:`~spare_theory.cycles.chains.surviving_count_throughput`), from ``F = 0``
        at a restart: the cycle has outlived every set before ``u``, not only the present
        one (:meth:`throughput_at_down_share`, kept where the chain's solve is
        ill-conditioned and without repairs, where it is exact).

        Examples
        --------
        >>> law, u = Spare(12, 2), np.array([0.0, 5.0])
        >>> p = (1 - np.exp(-(1 + 7.4) * u)) / (1 + 7.4)
        >>> law.repair_throughput(u, 7.4, p).round(3).tolist()  # 0.628 at the down share
        [1.0, 0.654]
        """
        found = None
        if mu > 0.0:
            log_s, cost = self.count_law()
            found = surviving_count_throughput(log_s, cost, mu, np.asarray(u, dtype=float))
        return self.throughput_at_down_share(p) if found is None else found

    def count_law(self) -> tuple[np.ndarray, np.ndarray]:
        """``s_f = P(T > f)`` of :func:`log_survival_table` and ``c_f`` = :meth:`state_cost`.

        ``s_f = 0`` beyond ``N - ceil(N/r)`` failures (the types no longer fit
        in ``r`` slots of the survivors) or where ``P(T > f)`` falls below
        ``e^-90``.
        """
        N, r = self.N, self.r
        log_s = np.full(N + 1, -np.inf)
        cost = np.ones(N + 1)
        table = log_survival_table(N, r)
        f_max = min(table.size - 1, N - math.ceil(N / r))
        log_s[: f_max + 1] = table[: f_max + 1]
        cost[: f_max + 1] = self.state_cost(np.arange(f_max + 1))
        return log_s, cost

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        """Without repairs ``sum_f P(T > f) / (N - f)``, units ``1/lambda`` (``None`` with repairs).

        State ``f`` lasts ``1 / (N - f)`` on average (exponential lifetimes),
        so the sum is exact given ``P(T > f)``, which is taken exactly where
        that is cheap (:func:`_exact_survival`): the sharp law's mean runs
        2 to 6 % high at ``N <= 24`` and 2.5 % at ``N = 27`` for ``r = 3``,
        outside 3 SE of the simulation on the audit's space (``docs/audit.md``,
        "The wipe-out doors").
        """
        if mu != 0.0:
            return None
        N = self.N
        survival = _exact_survival(N, self.r)
        if survival is None:
            law = wipeout_law(N, self.r)
            # No state has all N groups down and unwiped (P(T > N) = 0): the sum stops at N - 1.
            f = np.arange(min(law.tail_end(), N - 1) + 1)
            survival = np.asarray(law.sf(f), dtype=float)
        f = np.arange(survival.size)
        return float(np.sum(survival / (N - f)))


#: Largest ``4^L N^2`` (``L``: the ruler's length) for which :func:`_exact_survival` walks
#: the transfer matrix: under 0.5 s here (``r = 4`` to ``N = 139``, ``r = 3`` to ``N = 1,000``).
_TRANSFER_WORK = 8e7


def _exact_survival(N: int, r: int) -> np.ndarray | None:
    """Exact ``P(T > f)``, ``f < N``, on the ruler, or ``None`` where it is too dear.

    ``r <= 2``: the sharp law is exact already.  Otherwise the transfer matrix
    over the ruler's windows (:func:`~spare_theory.wipeout.enumeration.exact_ruler_survival`)
    while ``4^L N^2 <= _TRANSFER_WORK`` and ``N <=`` its bound, else enumeration up to
    :data:`~spare_theory.wipeout.enumeration.EXACT_MAX_GROUPS` groups.
    """
    if r <= 2:
        return None
    hosts = cyclic_placement(N, r)
    length = int(hosts[0].max())
    if length <= 8 and N <= RULER_MAX_GROUPS and 4.0**length * N * N <= _TRANSFER_WORK:
        return exact_ruler_survival(N, hosts[0])[:N]
    if N <= EXACT_MAX_GROUPS:
        return exact_wipeout_survival(hosts)[:N]
    return None


class SpareSplit(Spare):
    """SPARe's cycle law with states priced by the expected micro-batch load ``E[load_f]``.

    Every shard is cut into ``m`` pieces that any surviving host of its type
    may compute (:func:`spare_theory.stacking.min_load`), so state ``f`` costs
    :func:`~spare_theory.stacking.load.expected_load` instead of
    ``E[S*_f]``; everything else is :class:`Spare`'s, and ``m = 1`` is
    exactly :class:`Spare` (``docs/theory.md`` section 7).  With repairs
    (:class:`~spare_theory.cycles.repairs.RepairCycle` over it) a state with
    a down share ``p`` costs the expected load of a uniform down set of that
    size, as without repairs: a rejoin's pieces are taken to be
    redistributed at once, as the simulation does (``docs/theory.md``
    section 9).

    Parameters
    ----------
    N : int
        Groups.
    r : int
        Redundancy (marks of the ruler).
    lifetimes : ExponentialLifetimes
        Group lifetime law in dimensionless time.
    microbatches : int
        Pieces per shard ``m >= 1``.

    Examples
    --------
    >>> law = SpareSplit(200, 4, microbatches=8)
    >>> round(float(law.theta(0.05)), 4) > round(float(Spare(200, 4).theta(0.05)), 4)
    True
    """

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL, *, microbatches: int) -> None:
        self.microbatches = as_count(microbatches, "microbatches", minimum=1)
        super().__init__(N, r, lifetimes)

    def state_cost(self, failures: np.ndarray) -> np.ndarray:
        """``E[load_f]`` of :func:`~spare_theory.stacking.load.expected_load`."""
        return np.asarray(
            expected_load(self.N, self.r, failures, microbatches=self.microbatches), dtype=float
        )

    def cache_key(self) -> tuple:
        return (*super().cache_key(), self.microbatches)


def _pair_generator(r: int, mu: float) -> np.ndarray:
    """Sub-generator of two types sharing one host: (shared down, private down 1, 2).

    A type is wiped when the shared host and its ``r - 1`` private hosts are
    all down; those states are the loss.
    """
    index: dict[tuple[int, int, int], int] = {}
    for s in (0, 1):
        for a in range(r):
            for b in range(r):
                if not (s == 1 and (a == r - 1 or b == r - 1)):
                    index[s, a, b] = len(index)
    G = np.zeros((len(index), len(index)))
    for (s, a, b), i in index.items():
        moves = [
            ((1 - s, a, b), 1.0 if s == 0 else mu),
            ((s, a + 1, b), r - 1 - a),
            ((s, a - 1, b), a * mu),
            ((s, a, b + 1), r - 1 - b),
            ((s, a, b - 1), b * mu),
        ]
        for target, rate in moves:
            if rate > 0:
                G[i, i] -= rate
                if target in index:
                    G[i, index[target]] += rate
    return G


def _cluster_no_repair_slope(N: int, r: int, p: np.ndarray) -> np.ndarray:
    """``d C_0 / dp`` of :func:`_cluster_no_repair`, in closed form."""
    n1 = N * r * (r - 1) / 2
    pr, pr1 = p**r, p ** (r - 1)
    one = -r * pr1 / (1.0 - pr)
    pair = (-2 * r * pr1 + (2 * r - 1) * p ** (2 * r - 2)) / (1.0 - 2 * pr + p ** (2 * r - 1))
    return N * one + n1 * (pair - 2 * one)


def _cluster_no_repair(N: int, r: int, p: np.ndarray) -> np.ndarray:
    """``C_0``: the cluster expansion without repairs at down probability ``p``.

    ``N log(1 - p^r) + n1 [log(1 - 2 p^r + p^{2r-1}) - 2 log(1 - p^r)]``.
    """
    n1 = N * r * (r - 1) / 2
    with np.errstate(divide="ignore"):
        pr = p**r
        one = np.log1p(-pr)
        pair = np.log1p(-2 * pr + p ** (2 * r - 1))
    return N * one + n1 * (pair - 2 * one)
