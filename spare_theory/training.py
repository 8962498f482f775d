"""Expected time to train under CKPT-only, Rep+CKPT and SPARe+CKPT.

A renewal-reward model over restart cycles (derivation and every assumption in
``docs/theory.md`` section 4).  A *cycle* starts when a global restart of cost ``R``
begins with all ``N`` groups healthy; groups then fail independently at rate
``lambda`` (also during the restart, the checkpoints and the computation) and
stay failed until the next restart; the cycle ends at the *wipe-out*, the
failure after which the strategy cannot go on.  After the restart the job
computes in segments of ``tau`` compute time followed by a checkpoint of cost
``delta``; a segment's work is kept only if its checkpoint completes before
the wipe-out.  With ``X`` the cycle length and ``P`` the work kept in a cycle
(hours of failure-free full-cluster training), the expected wall time for
``W`` hours of work is

    hours = W * E[X] / E[P].

In dimensionless time ``u = lambda t`` let ``Q(u) = P(X > u)`` and
``theta(u) = E[throughput | no wipe-out by u]``.  Then, with
``rho = lambda R``, ``kappa = lambda tau``, ``alpha = lambda (tau + delta)``,

    E[X] = int_0^inf Q(u) du,
    E[P] = sum_{j >= 0} kappa Q(rho + (j+1) alpha) theta(rho + j alpha + kappa/2)   (/ lambda),

exact for a constant throughput (CKPT-only, Rep) and a midpoint rule for
SPARe, whose throughput ``1/S*`` changes within a segment.  ``Q`` is

* CKPT-only: ``(1 - p)^N = e^{-N u}`` (any failure is a wipe-out);
* Rep: ``prod_sets (1 - p^{|set|})`` (a wipe-out is a dead replica set);
* SPARe: ``sum_f Binom(f; N, p) P(T > f)``,

with ``p = 1 - e^{-u}`` the probability that a group has failed by ``u``:
failure times are independent of the failure *order*, and the wipe-out count
``T`` depends on the order only.  CKPT-only then reduces exactly to Daly's
higher-order formula ``M e^{R/M} (e^{(tau+delta)/M} - 1) W / tau``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.special import gammaln, lambertw

from ._validation import as_choice, as_count, as_real
from .average_overhead import expected_stacks
from .scenario import Scenario

# The sharp log-survival itself (private): the cycle needs its log, not P(T > f).
from .wipeout import _log_survival_sharp

__all__ = [
    "MAX_SPARE_GROUPS",
    "STRATEGIES",
    "TrainingEstimate",
    "rep_survival_log",
    "rep_throughput",
    "time_to_train",
]

STRATEGIES = ("ckpt", "rep", "spare")

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
# Interval search (steps in log tau): the fine grid covers tau with at most
# _FEW_SEGMENTS segments per cycle; smaller tau by coarse steps; zoom size.
_FEW_SEGMENTS = 50
_FINE_STEP = 0.025
_COARSE_STEP = 0.25
_ZOOM_POINTS = 11
_ZOOM_MINIMA = 3
# Longest interval searched (r > 1), as a share of the time M to Q = 1/e.
_MAX_TAU_SHARE = 0.5
_LAST_STEP = 0.01
# Points of the coarse search for where P(T > f) falls below e^-90; long
# survival tables: exact below _EXACT_F, a spline through _SPLINE_NODES above.
_COARSE_F = 64
_EXACT_F = 1 << 13
_SPLINE_NODES = 1 << 13
# Rows of the SPARe grid summed at once (memory: rows x band width cells).
_BLOCK_ROWS = 32


def _log1mexp(x):
    """``log(1 - e^x)`` for ``x <= 0``, accurate at both ends."""
    x = np.asarray(x, dtype=float)
    near = x > -math.log(2)
    out = np.empty_like(x)
    # Each branch only where it is accurate (and computed only there: hot loop).
    with np.errstate(divide="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        out[~near] = np.log1p(-np.exp(x[~near]))
    return out


def _log_failed(u):
    """``log p`` with ``p = 1 - e^{-u}`` the probability a group has failed by ``u``."""
    with np.errstate(divide="ignore"):
        return _log1mexp(-np.asarray(u, dtype=float))


def rep_throughput(N, r) -> float:
    """Throughput of Rep+CKPT relative to the failure-free run: ``floor(N/r) / N``.

    The ``N`` groups form ``floor(N/r)`` replica sets; each computes one of
    ``floor(N/r)`` shards of the global batch, so a step costs
    ``N / floor(N/r)`` failure-free steps (``r`` when ``r`` divides ``N``).
    The ``N mod r`` left-over groups join as many sets as extra replicas.
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    return (N // r) / N


def rep_survival_log(N, r, u):
    """``log P(no replica set dead at dimensionless time u)`` for Rep with ``r`` replicas.

    With ``s = floor(N/r)`` disjoint sets sharing the ``N`` groups as
    evenly as possible (``N mod s`` of size ``q + 1``, the rest of size
    ``q = floor(N/s)``; ``q = r`` and ``N mod r`` sets of ``r + 1`` unless
    the ``N mod r`` left-over groups outnumber the sets), and each group
    failed by ``u`` with probability ``p = 1 - e^{-u}`` independently:
    ``log Q = (sets_q) log(1 - p^q) + (sets_{q+1}) log(1 - p^{q+1})``.
    ``r = 1`` is CKPT-only: ``-N u``.  Broadcasts over ``u >= 0``.
    """
    N = as_count(N, "N")
    return _rep_logq(N, as_count(r, "r", maximum=N), u)


def _rep_logq(N: int, r: int, u):
    """:func:`rep_survival_log` without argument checks (the optimiser's inner loop)."""
    log_p = _log_failed(u)
    sets = N // r
    size, large = divmod(N, sets)
    out = np.zeros(np.shape(log_p))
    with np.errstate(divide="ignore"):
        # Only sizes that occur: 0 * log(0) would be NaN once p = 1.
        for count, size in ((sets - large, size), (large, size + 1)):
            if count:
                out = out + count * _log1mexp(size * log_p)
    return out


class _Cycle:
    """A dimensionless cycle model: ``logq(u)``, ``theta(u)`` and ``u_at(level)``."""

    @functools.cached_property
    def mean_u(self) -> float:
        """Time at which ``Q`` has fallen to ``1/e``: the scale of Young's interval."""
        return self.u_at(-1.0)


class _RepCycle(_Cycle):
    """Cycle of Rep+CKPT (``r = 1``: CKPT-only): exact survival, constant throughput."""

    def __init__(self, N: int, r: int):
        self.N, self.r = N, r
        self.throughput = rep_throughput(N, r)

    def logq(self, u):
        return _rep_logq(self.N, self.r, u)

    def theta(self, u):
        return np.full(np.shape(u), self.throughput)

    def u_at(self, level: float) -> float:
        """Smallest ``u`` with ``log Q(u) <= level`` (``level < 0``).

        Exact for CKPT-only (``log Q = -N u``); for Rep within about ``1e-4``
        relative (linear interpolation over 1/64 of a doubling), ample for
        its uses (where to stop summing segments, the centre of the interval
        search).
        """
        if self.r == 1:
            return -level / self.N
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


def _log_survival_table(N: int, r: int) -> np.ndarray:
    """``log P(T > f)`` for ``f = 0 .. f_max``, the last ``f`` where it exceeds ``e^-90``.

    The sharp form decreases in ``f``: a coarse grid of ``_COARSE_F`` points
    brackets the crossing, and only ``f`` below the bracket's end are
    evaluated (at most ``N / _COARSE_F`` more than needed).  Long tables
    (beyond ``2 * _EXACT_F`` terms; ``N`` above about ``10^5``) take every
    ``f`` below ``_EXACT_F`` exactly and the rest from a cubic spline through
    ``_SPLINE_NODES`` exact values: the form is smooth on the scale of the
    node spacing (measured error below ``2e-10`` in ``log P`` up to
    ``N = 1.25 10^7``, largest near ``e^-90``).  The spline is checked against exact values between
    nodes and replaced by the exact table if it is off by more than
    ``1e-9`` anywhere there.
    """
    coarse = np.unique(np.linspace(r, N, _COARSE_F).astype(np.int64))
    below = np.flatnonzero(_log_survival_sharp(coarse, N, r) <= _LOG_TINY)
    f_end = int(coarse[below[0]]) if below.size else N
    f = np.arange(f_end + 1)
    if f_end < 2 * _EXACT_F:
        log_s = _log_survival_sharp(f, N, r)
    else:
        nodes = np.unique(np.append(np.linspace(0, f_end, _SPLINE_NODES).astype(np.int64), f_end))
        log_s = CubicSpline(nodes, _log_survival_sharp(nodes, N, r))(f)
        log_s[:_EXACT_F] = _log_survival_sharp(f[:_EXACT_F], N, r)
        between = (nodes[:-1] + nodes[1:])[:: max(nodes.size // 256, 1)] // 2
        if np.max(np.abs(log_s[between] - _log_survival_sharp(between, N, r))) > 1e-9:
            log_s = _log_survival_sharp(f, N, r)
    return log_s[: int(np.flatnonzero(log_s > _LOG_TINY)[-1]) + 1]


class _SpareCycle(_Cycle):
    """Cycle of SPARe+CKPT: ``log Q`` and ``theta`` tabulated on a grid in ``u``.

    ``Q(u) = sum_f Binom(f; N, p) P(T > f)`` and
    ``theta(u) = sum_f Binom(f; N, p) P(T > f) / E[S*_f] / Q(u)``, summed over a
    band from ``12`` standard deviations below the binomial mean to ``8``
    above (``P(T > f)`` only falls with ``f``): terms outside weigh below
    ``e^-32`` relative, and ``Q`` is tabulated only down to about ``e^-72``.
    The grid is uniform in ``p`` (in the mean failure count ``N p``, where
    ``Q`` changes) plus geometric points over the first failures.  ``log Q``
    is interpolated linearly (exact for an exponential tail) and extrapolated
    with its last slope.

    Cost: ``P(T > f)`` is evaluated only up to about the last ``f`` where it
    exceeds ``e^-90``, and the band sums run over blocks of
    ``_BLOCK_ROWS`` rows, each as wide as its widest row needs, so time is
    ``O(f_max + grid * sqrt(N))`` and memory ``O(f_max + sqrt(N))``.
    """

    def __init__(self, N: int, r: int):
        self.N, self.r = N, r
        # Beyond N - ceil(N/r) failures the N types cannot fit in r slots of
        # the survivors: a wipe-out is certain whatever the approximation says.
        log_s = _log_survival_table(N, r)
        f_max = min(log_s.size - 1, N - math.ceil(N / r))
        f = np.arange(f_max + 1)
        log_s = log_s[: f_max + 1]
        inv_stacks = 1.0 / np.asarray(expected_stacks(N, r, f), dtype=float)
        log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)

        p_end = min((f_max + _BAND_SD * math.sqrt(f_max + 1) + 10) / N, 1 - 1e-12)
        # Geometric points over the first failures, where the throughput
        # falls from 1 to 1/2 within u ~ 1/N.
        u_end = -math.log1p(-p_end)
        early = np.geomspace(1e-3 / N, min(30.0 / N, u_end), _GRID_POINTS // 4)
        self.u = np.union1d(-np.log1p(-np.linspace(0.0, p_end, _GRID_POINTS)), early)
        p = -np.expm1(-self.u)
        sd = np.sqrt(N * p * (1 - p))
        # P(T > f) decreases, so above the binomial mean the weights fall at
        # least as fast as the binomial: 8 sd (e^-32) suffice there.
        half = np.ceil(_BAND_SD * sd + 10).astype(int)
        upper = np.ceil(_BAND_SD_ABOVE * sd + 10).astype(int)
        centre = np.round(N * p).astype(int)
        log_p = np.maximum(_log_failed(self.u), -1e300)
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
            log_w = log_binom[band] + f_log_p - (N - band) * self.u[block, None] + log_s[band]
            top = log_w.max(axis=1)
            w = np.exp(log_w - top[:, None])
            total = w.sum(axis=1)
            self.log_q[block] = top + np.log(total)
            self.theta_grid[block] = (w * inv_stacks[band]).sum(axis=1) / total
        self.slope = (self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2])

    def logq(self, u):
        u = np.asarray(u, dtype=float)
        inside = np.interp(u, self.u, self.log_q)
        return np.where(u > self.u[-1], self.log_q[-1] + self.slope * (u - self.u[-1]), inside)

    def theta(self, u):
        return np.interp(u, self.u, self.theta_grid)

    def u_at(self, level: float) -> float:
        below = np.flatnonzero(self.log_q <= level)
        if below.size == 0:
            return float(self.u[-1] + (level - self.log_q[-1]) / self.slope)
        i = max(int(below[0]), 1)
        a, b = self.log_q[i - 1], self.log_q[i]
        return (
            float(self.u[i - 1] + (self.u[i] - self.u[i - 1]) * (a - level) / (a - b))
            if a > b
            else float(self.u[i])
        )


@functools.lru_cache(maxsize=1024)
def _cycle(strategy: str, N: int, r: int):
    """The dimensionless cycle model of ``strategy`` at ``(N, r)`` (cached: it depends on nothing else)."""
    if strategy == "ckpt" or r == 1:
        return _RepCycle(N, 1)
    if strategy == "rep":
        return _RepCycle(N, r)
    return _SpareCycle(N, r)


def _loglinear_integral(log_a, log_b, width):
    """``int_0^width exp(log_a + (log_b - log_a) x / width) dx``.

    The integral of ``Q`` over a piece on which ``log Q`` is taken linear:
    exact for the exponential survival of CKPT-only, second order otherwise.
    """
    d = log_b - log_a
    with np.errstate(invalid="ignore", over="ignore"):
        factor = np.where(np.abs(d) < 1e-8, 1.0 + d / 2, np.expm1(d) / np.where(d == 0, 1.0, d))
        out = width * np.exp(log_a) * factor
    return np.where(np.isneginf(log_a), 0.0, out)


@dataclass(frozen=True)
class TrainingEstimate:
    """Expected outcome of one training run (renewal-reward model).

    Attributes
    ----------
    strategy : str
        ``"ckpt"``, ``"rep"`` or ``"spare"``.
    r : int
        Redundancy (1 for CKPT-only).
    checkpoint_interval_minutes : float
        Compute time ``tau`` between checkpoints, minutes.
    hours : float
        Expected wall-clock hours; ``inf`` when the run (practically) never
        completes.
    availability : float
        ``work_hours / hours``: share of wall time that is useful training
        (comparable with ETTR).
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
    """

    strategy: str
    r: int
    checkpoint_interval_minutes: float
    hours: float
    availability: float
    useful_hours: float
    redundancy_hours: float
    checkpoint_hours: float
    restart_hours: float
    lost_hours: float
    restarts: float
    cycle_hours: float


@functools.lru_cache(maxsize=4096)
def _restart_part(strategy: str, N: int, r: int, rho: float) -> tuple[float, float, float]:
    """``(log Q(rho), int_0^rho Q du / Q(rho), u_stop)`` for a restart of length ``rho``.

    ``u_stop`` is where ``Q`` has fallen to ``e^-30 Q(rho)``; later segments
    are negligible.  Cached: the optimiser varies only ``tau``.
    """
    cycle = _cycle(strategy, N, r)
    log_q0 = float(cycle.logq(rho))
    # Q integrated piecewise on 256 log-linear pieces of [0, rho].
    edges = np.linspace(0.0, rho, 257)
    log_edges = cycle.logq(edges) - log_q0
    with np.errstate(over="ignore"):
        restart = float(np.sum(_loglinear_integral(log_edges[:-1], log_edges[1:], rho / 256)))
    return log_q0, restart, cycle.u_at(log_q0 - _LOG_CUTOFF)


def _cycle_terms(strategy: str, N: int, r: int, rho: float, kappa, d: float) -> dict:
    """Per-cycle expectations, in units of ``1/lambda`` and divided by ``Q(rho)``.

    Vectorised over the compute time per segment ``kappa`` (an array): the
    segments of every ``kappa`` are laid end to end in one flat array and
    summed per ``kappa`` with ``np.add.reduceat``, so a whole grid of
    intervals costs about one evaluation's worth of numpy calls.  Dividing by
    ``Q(rho)`` (the chance the restart completes) keeps every term finite in
    the restart-dominated regime where ``Q(rho)`` underflows.
    """
    cycle = _cycle(strategy, N, r)
    log_q0, restart, u_stop = _restart_part(strategy, N, r, rho)
    kappa = np.asarray(kappa, dtype=float)
    alpha = kappa + d
    segments = np.maximum(np.ceil((u_stop - rho) / alpha).astype(np.int64) + 1, 1)
    # Segment j of one interval ends where segment j+1 starts: lay out the
    # n + 1 bounds of every interval end to end and evaluate each bound once.
    first_bound = np.cumsum(segments + 1) - (segments + 1)
    owner = np.repeat(np.arange(kappa.size), segments + 1)
    j = np.arange(owner.size) - first_bound[owner]
    bounds = rho + alpha[owner] * j
    seg = np.flatnonzero(j < segments[owner])  # the bound each segment starts at
    first = first_bound - np.arange(kappa.size)  # each interval's first segment
    k, start = kappa[owner[seg]], bounds[seg]
    log_bounds = cycle.logq(bounds) - log_q0
    log_start, log_end = log_bounds[seg], log_bounds[seg + 1]
    log_mid = cycle.logq(start + k) - log_q0
    # Q integrated over the compute pieces, then over the checkpoint pieces.
    pieces = _loglinear_integral(
        np.concatenate([log_start, log_mid]),
        np.concatenate([log_mid, log_end]),
        np.concatenate([k, np.full(k.size, d)]),
    )
    kept = np.exp(log_end)
    rows = np.stack([pieces[: k.size], pieces[k.size :], kept, kept * cycle.theta(start + k / 2)])
    compute, checkpoint, kept_sum, useful_sum = np.add.reduceat(rows, first, axis=1)
    kept_compute, useful = kappa * kept_sum, kappa * useful_sum
    return {
        "useful": useful,
        "redundancy": kept_compute - useful,
        "checkpoint": checkpoint,
        "restart": np.full(kappa.size, restart),
        "lost": np.maximum(compute - kept_compute, 0.0),
        "log_q0": log_q0,
    }


_PARTS = ("useful", "redundancy", "checkpoint", "restart", "lost")


def _hours_ratio(terms: dict):
    """``E[X] / E[P]`` (hours per hour of work) from :func:`_cycle_terms`; ``inf`` if no work is kept."""
    total = sum(terms[k] for k in _PARTS)
    useful = terms["useful"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(
            (useful > 0) & np.isfinite(total), total / np.where(useful > 0, useful, 1.0), np.inf
        )


def _validate_plan(scenario, strategy, r):
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STRATEGIES)
    N = scenario.groups
    if strategy == "ckpt":
        if r is not None and as_count(r, "r") != 1:
            raise ValueError(f"r must be 1 (or None) for strategy 'ckpt', got {r}")
        return strategy, 1
    if r is None:
        raise ValueError(f"r is required for strategy {strategy!r} (an integer >= 1)")
    r = as_count(r, "r", maximum=N)
    if strategy == "spare" and r > 1 and N > MAX_SPARE_GROUPS:
        raise ValueError(
            f"gpus // gpus_per_group = {N:,} groups is beyond the SPARe cycle model's supported range "
            f"(N <= {MAX_SPARE_GROUPS:,}: its tables take about 36 bytes per group); "
            f"use a larger gpus_per_group or fewer gpus"
        )
    if strategy == "spare" and r > 1:
        # A modular ruler must exist: raises ValueError naming N and r otherwise.
        from .placement import modular_ruler

        modular_ruler(N, r)
    return strategy, r


def _scaled(scenario: Scenario, tau_minutes) -> tuple[float, object, float]:
    """``(rho, kappa, d)``: restart, interval(s) and checkpoint in units of ``1/lambda``."""
    lam = scenario.group_failure_rate_per_hour
    return (
        lam * scenario.restart_minutes / 60,
        lam * np.asarray(tau_minutes, dtype=float) / 60,
        lam * scenario.checkpoint_minutes / 60,
    )


def _estimate(scenario: Scenario, strategy: str, r: int, tau_minutes: float) -> TrainingEstimate:
    rho, kappa, d = _scaled(scenario, [tau_minutes])
    arrays = _cycle_terms(strategy if r > 1 else "ckpt", scenario.groups, r, rho, kappa, d)
    return _estimate_from(scenario, strategy, r, tau_minutes, arrays, 0)


def _estimate_from(
    scenario: Scenario, strategy: str, r: int, tau_minutes: float, arrays: dict, i: int
) -> TrainingEstimate:
    """The estimate at interval ``tau_minutes``, entry ``i`` of the :func:`_cycle_terms` arrays."""
    lam = scenario.group_failure_rate_per_hour
    terms = {k: float(np.ravel(v)[i if np.ndim(v) else 0]) for k, v in arrays.items()}
    total = sum(terms[k] for k in _PARTS)
    W = scenario.work_hours
    useful = terms["useful"]
    hours = W * float(_hours_ratio(arrays)[i])
    shares = {k: terms[k] / total if math.isfinite(total) and total > 0 else 0.0 for k in terms}
    parts = {
        k: (shares[k] * hours if shares[k] > 0 else 0.0)
        for k in ("redundancy", "checkpoint", "restart", "lost")
    }
    # Cycles per run: W / E[P] with E[P] = useful * Q(rho) / lambda.
    # In logs: Q(rho) underflows in the restart-dominated regime.
    log_restarts = (
        math.log(W * lam / useful) - min(terms["log_q0"], 0.0) if useful > 0 else math.inf
    )
    restarts = math.exp(log_restarts) if log_restarts < 700 else math.inf
    cycle_hours = hours / restarts if math.isfinite(hours) and restarts > 0 else math.inf
    return TrainingEstimate(
        strategy=strategy,
        r=r,
        checkpoint_interval_minutes=float(tau_minutes),
        hours=float(hours),
        availability=float(W / hours) if math.isfinite(hours) else 0.0,
        useful_hours=float(W) if math.isfinite(hours) else math.inf,
        redundancy_hours=parts["redundancy"],
        checkpoint_hours=parts["checkpoint"],
        restart_hours=parts["restart"],
        lost_hours=parts["lost"],
        restarts=float(restarts),
        cycle_hours=float(cycle_hours),
    )


def _terms_grid(
    scenario: Scenario, strategy: str, r: int, log_tau: np.ndarray
) -> tuple[dict, np.ndarray]:
    """:func:`_cycle_terms` and the hours per hour of work at every ``tau = exp(log_tau)`` minutes, vectorised."""
    rho, kappa, d = _scaled(scenario, np.exp(log_tau))
    terms = _cycle_terms(strategy, scenario.groups, r, rho, kappa, d)
    return terms, _hours_ratio(terms)


def _hours_grid(scenario: Scenario, strategy: str, r: int, log_tau: np.ndarray) -> np.ndarray:
    """Hours per hour of work at every ``tau = exp(log_tau)`` minutes (what the search minimises)."""
    return _terms_grid(scenario, strategy, r, log_tau)[1]


def _grid(start: float, stop: float, step: float) -> np.ndarray:
    """Points from ``start`` to ``stop`` (both included) at most ``step`` apart."""
    return np.linspace(start, stop, max(int(math.ceil((stop - start) / step)), 1) + 1)


def _batch_below(x: float, lo: float) -> np.ndarray:
    """Up to 8 coarse steps below ``x``, not below ``lo`` (empty at ``lo``)."""
    return np.unique(np.maximum(x - _COARSE_STEP * np.arange(8, 0, -1), lo))[: 8 if x > lo else 0]


def _best_interval(scenario: Scenario, strategy: str, r: int) -> TrainingEstimate:
    """:func:`_search_interval`, shared by all strategies at ``r = 1`` (CKPT-only: one search per scenario)."""
    est = _search_interval(scenario, strategy if r > 1 else "ckpt", r)
    return est if est.strategy == strategy else dataclasses.replace(est, strategy=strategy)


@functools.lru_cache(maxsize=64)
def _search_interval(scenario: Scenario, strategy: str, r: int) -> TrainingEstimate:
    """Minimise hours over ``tau`` by grids in ``x = log tau``, evaluated vectorised.

    Search range: within a factor 100 of Young's interval ``sqrt(2 delta M)``
    (``M``: time to ``Q = 1/e``), clipped to ``[1 s, 600 W]`` and, for
    ``r > 1``, to ``tau <= M / 2``.  The last bound is a modelling choice:
    when the wipe-out time is sharp (large ``N`` and ``r``) the model also
    has a minimum at ``tau ~ 0.74 M``, one checkpoint per cycle timed just
    before the predicted wipe-out, up to 4 % better at ``r ~ 30-50``; it
    rests entirely on the sharpness of the wipe-out law where it is least
    tested, and it makes hours against ``r`` bimodal.  The main minima sit
    at ``tau <= 0.31 M`` (measured on the 30 reference scenarios).

    Hours against ``tau`` can still have several local minima (a sharp cycle
    holds a whole number ``k`` of segments: minima about ``1/k`` apart in
    ``x``; the midpoint rule for ``theta`` ripples likewise), so no local
    search: with ``S`` the span of the cycle that counts (until ``Q`` falls
    to ``e^-30 Q(rho)``),

    1. every ``tau`` in ``[S / 50, S]`` within the range (at most 50
       segments per cycle, where those minima are, and evaluations cheap) on
       a grid of step ``_FINE_STEP = 0.025``;
    2. smaller ``tau`` (many segments: a smooth curve, ripples below
       ``1e-5``), by batches of 8 steps of ``0.25`` until the best point is
       not the lowest one;
    3. zooms of ``_ZOOM_POINTS`` points, each ``5x`` finer: the first around
       each of the ``_ZOOM_MINIMA = 3`` best local minima of the grid (the
       dips can be narrower than the grid step, so the deepest need not show
       as the lowest point), then around the best point, down to a step of
       at most ``_LAST_STEP = 0.01`` (one zoom after the fine grid, two after
       the coarse one).

    Near a minimum ``hours ~ h0 (1 + c x^2 / 2)`` with ``c < 1`` (about 0.15
    on the published scenarios), so a last step of ``0.01`` costs below
    ``1.25e-5 c`` relative hours.  CKPT-only (``r = 1``) has its optimum in
    closed form.  With no checkpoint cost the best interval is the
    smallest, and 1 second is used.
    """
    delta = scenario.checkpoint_minutes
    lam = scenario.group_failure_rate_per_hour
    if delta == 0:
        return _estimate(scenario, strategy, r, 1 / 60)
    cycle = _cycle(strategy, scenario.groups, r)
    young = math.log(math.sqrt(2 * delta * 60 * cycle.mean_u / lam))
    lo = max(young - math.log(100), math.log(1 / 60))
    hi = max(min(young + math.log(100), math.log(600 * scenario.work_hours)), lo + 1e-6)
    if r == 1:
        # CKPT-only is Daly's model, hours ~ (e^{(tau + delta)/M} - 1) / tau, whose
        # minimum solves e^{(tau + delta)/M} (1 - tau/M) = 1:
        # tau = M (1 + W0(-e^{-1 - delta/M})), M = 1/(N lambda) (in minutes).
        M = 60 / (scenario.groups * lam)
        tau = M * (1 + float(lambertw(-math.exp(-1 - delta / M)).real))
        return _estimate(scenario, strategy, r, min(max(tau, math.exp(lo)), math.exp(hi)))
    # No plan of one checkpoint per cycle timed just before a predicted wipe-out.
    hi = max(min(hi, math.log(_MAX_TAU_SHARE * 60 * cycle.mean_u / lam)), lo + 1e-6)
    rho = lam * scenario.restart_minutes / 60
    span = math.log(
        max(_restart_part(strategy, scenario.groups, r, rho)[2] - rho, 1e-300) * 60 / lam
    )
    top = min(max(span, lo), hi)
    x = _grid(min(max(span - math.log(_FEW_SEGMENTS), lo), top), top, _FINE_STEP)
    # The curve's main (smooth) minimum may lie below, whatever the best point
    # above: one batch below always, more while the lowest point is the best.
    x = np.concatenate([_batch_below(x[0], lo), x])
    hours = _hours_grid(scenario, strategy, r, x)
    while x[0] > lo and np.argmin(hours) == 0:
        below = _batch_below(x[0], lo)
        x, hours = (
            np.concatenate([below, x]),
            np.concatenate([_hours_grid(scenario, strategy, r, below), hours]),
        )
    # Zoom around the _ZOOM_MINIMA best local minima of the grid at once: on a
    # coarse grid the deepest dip need not show as the lowest point.
    padded = np.concatenate([[np.inf], hours, [np.inf]])
    minima = np.flatnonzero((hours <= padded[:-2]) & (hours <= padded[2:]))
    picked = minima[np.argsort(hours[minima])][:_ZOOM_MINIMA]
    # Each zoom spans the grid step around its centre (fine or coarse part).
    gaps = np.diff(x, prepend=x[0], append=x[-1])
    centres, steps = x[picked], np.maximum(gaps[picked], gaps[picked + 1])
    offsets = np.arange(-(_ZOOM_POINTS // 2), _ZOOM_POINTS // 2 + 1)
    while True:
        steps = steps / 5
        zoom = np.clip((centres[:, None] + steps[:, None] * offsets[None, :]).ravel(), lo, hi)
        terms, ratio = _terms_grid(scenario, strategy, r, zoom)
        i = int(np.argmin(ratio))
        centres, steps = zoom[i : i + 1], steps[i // _ZOOM_POINTS : i // _ZOOM_POINTS + 1]
        if steps[0] <= 1.01 * _LAST_STEP:
            return _estimate_from(scenario, strategy, r, math.exp(float(zoom[i])), terms, i)


def time_to_train(scenario, strategy, r=None, checkpoint_interval_minutes=None) -> TrainingEstimate:
    """Expected wall-clock time of a training run and its breakdown.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate, costs and work.
    strategy : {"ckpt", "rep", "spare"}
        CKPT-only (every failure is a global restart), Rep+CKPT (``r``
        replicas of every shard on disjoint groups; a restart when a whole
        replica set is dead) or SPARe+CKPT (stacked placement on a modular
        Golomb ruler; a restart at wipe-out).
    r : int, optional
        Redundancy: required for ``"rep"`` (``1 <= r <= N``) and ``"spare"``
        (a modular ruler with ``r`` marks must exist at ``N``); ``None`` or
        ``1`` for ``"ckpt"``.
    checkpoint_interval_minutes : float, optional
        Compute time ``tau`` between checkpoints, minutes, ``> 0``; ``None``
        uses the interval that minimises the expected hours.

    Returns
    -------
    TrainingEstimate
        ``hours = W E[X] / E[P]`` (see the module docstring), the breakdown
        adding up to ``hours``, ``availability = W / hours`` and the expected
        number of restarts ``W / E[P]``.

    Raises
    ------
    ValueError
        Naming the argument: not a Scenario, unknown strategy, missing or out
        of range ``r``, no modular ruler for ``(N, r)``, ``tau <= 0``; for
        SPARe with ``r > 1``, ``N = gpus // gpus_per_group`` above
        :data:`MAX_SPARE_GROUPS` (``2**25``).
    """
    strategy, r = _validate_plan(scenario, strategy, r)
    if checkpoint_interval_minutes is None:
        return _best_interval(scenario, strategy, r)
    tau = as_real(
        checkpoint_interval_minutes, "checkpoint_interval_minutes", minimum=0.0, strict_minimum=True
    )
    return _estimate(scenario, strategy, r, tau)
