"""Expected time to train under CKPT-only, Rep+CKPT and SPARe+CKPT.

A renewal-reward model over restart cycles (derivation and every assumption in
``docs/training.md``).  A *cycle* starts when a global restart of cost ``R``
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

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln, logsumexp

from ._validation import as_choice, as_count, as_real
from .overhead import expected_stacks
from .scenario import Scenario
# The sharp log-survival itself (private): the cycle needs its log, not P(T > f).
from .wipeout import _log_survival_sharp

__all__ = ["STRATEGIES", "TrainingEstimate", "time_to_train", "rep_throughput", "rep_survival_log"]

STRATEGIES = ("ckpt", "rep", "spare")

# Segments whose survival probability is below e^-45 relative to the first one
# are dropped: their share of any expectation is below 1e-19.
_LOG_CUTOFF = 45.0
# Grid of the SPARe cycle survival: points in u, and the binomial band kept
# around each point's mean failure count (in standard deviations).
_GRID_POINTS = 512
_BAND_SD = 12.0
# Survival values below e^-90 are treated as zero when building the grid.
_LOG_TINY = -90.0
# Cells (rows x band width) summed at once when building the grid: bounds memory.
_BLOCK_CELLS = 1 << 20


def _log1mexp(x):
    """``log(1 - e^x)`` for ``x <= 0``, accurate at both ends."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


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

    With ``floor(N/r)`` disjoint sets, ``N mod r`` of them of size ``r + 1``
    and the rest of size ``r``, and each group failed by ``u`` with
    probability ``p = 1 - e^{-u}`` independently:
    ``log Q = (sets_r) log(1 - p^r) + (sets_{r+1}) log(1 - p^{r+1})``.
    ``r = 1`` is CKPT-only: ``-N u``.  Broadcasts over ``u >= 0``.
    """
    N = as_count(N, "N")
    return _rep_logq(N, as_count(r, "r", maximum=N), u)


def _rep_logq(N: int, r: int, u):
    """:func:`rep_survival_log` without argument checks (the optimiser's inner loop)."""
    log_p = _log_failed(u)
    sets = N // r
    large = N - r * sets
    with np.errstate(divide="ignore"):
        return (sets - large) * _log1mexp(r * log_p) + large * _log1mexp((r + 1) * log_p)


class _RepCycle:
    """Cycle of Rep+CKPT (``r = 1``: CKPT-only): exact survival, constant throughput."""

    def __init__(self, N: int, r: int):
        self.N, self.r = N, r
        self.throughput = rep_throughput(N, r)

    def logq(self, u):
        return _rep_logq(self.N, self.r, u)

    def theta(self, u):
        return np.full(np.shape(u), self.throughput)

    def u_at(self, level: float) -> float:
        """Smallest ``u`` with ``log Q(u) <= level`` (``level < 0``)."""
        hi = 1.0 / self.N
        while self.logq(hi) > level:
            hi *= 2.0
        return brentq(lambda u: float(self.logq(u)) - level, 0.0, hi, xtol=1e-14, rtol=1e-12)


def _survival_end(N: int, r: int) -> int:
    """Last ``f`` with ``log P(T > f) > _LOG_TINY`` (bisection: the sharp form decreases in ``f``)."""
    lo, hi = r - 1, N  # P(T > r - 1) = 1 and P(T > N) = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(_log_survival_sharp(np.array(mid), N, r)) > _LOG_TINY:
            lo = mid
        else:
            hi = mid
    return lo


class _SpareCycle:
    """Cycle of SPARe+CKPT: ``log Q`` and ``theta`` tabulated on a grid in ``u``.

    ``Q(u) = sum_f Binom(f; N, p) P(T > f)`` and
    ``theta(u) = sum_f Binom(f; N, p) P(T > f) / E[S*_f] / Q(u)``, summed over a
    band of ``12`` standard deviations around the binomial mean: terms outside
    weigh below ``e^-72`` and ``Q`` is tabulated only down to about that.
    The grid is uniform in ``p`` (in the mean failure count ``N p``, where
    ``Q`` changes) plus geometric points over the first failures.  ``log Q``
    is interpolated linearly (exact for an exponential tail) and extrapolated
    with its last slope.

    Cost: ``P(T > f)`` is evaluated only up to the last ``f`` where it exceeds
    ``e^-90`` (found by bisection), and the band sums run over blocks of rows
    of at most ``_BLOCK_CELLS`` cells, so time is ``O(f_max + grid * sqrt(N))``
    and memory ``O(f_max)``.
    """

    def __init__(self, N: int, r: int):
        self.N, self.r = N, r
        # Beyond N - ceil(N/r) failures the N types cannot fit in r slots of
        # the survivors: a wipe-out is certain whatever the approximation says.
        f_max = min(_survival_end(N, r), N - math.ceil(N / r))
        f = np.arange(f_max + 1)
        log_s = _log_survival_sharp(f, N, r)
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
        half = np.ceil(_BAND_SD * sd + 10).astype(int)
        width = min(2 * int(half.max()) + 1, f_max + 1)
        lo = np.clip(np.round(N * p).astype(int) - half, 0, f_max + 1 - width)
        log_p = np.maximum(_log_failed(self.u), -1e300)
        self.log_q = np.empty(self.u.size)
        self.theta_grid = np.empty(self.u.size)
        rows = max(_BLOCK_CELLS // width, 1)
        for i in range(0, self.u.size, rows):
            block = slice(i, i + rows)
            band = lo[block, None] + np.arange(width)[None, :]
            # xlogy-style: f log p is 0 for f = 0 even at u = 0 where log p = -inf.
            f_log_p = np.where(band > 0, band * log_p[block, None], 0.0)
            log_w = log_binom[band] + f_log_p - (N - band) * self.u[block, None] + log_s[band]
            self.log_q[block] = logsumexp(log_w, axis=1)
            weights = np.exp(log_w - self.log_q[block, None])
            self.theta_grid[block] = np.sum(weights * inv_stacks[band], axis=1)
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
        return float(self.u[i - 1] + (self.u[i] - self.u[i - 1]) * (a - level) / (a - b)) if a > b else float(self.u[i])


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

    ``u_stop`` is where ``Q`` has fallen to ``e^-45 Q(rho)``; later segments
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


def _cycle_terms(strategy: str, N: int, r: int, rho: float, kappa: float, d: float) -> dict:
    """Per-cycle expectations, in units of ``1/lambda`` and divided by ``Q(rho)``.

    Dividing by ``Q(rho)`` (the chance the restart completes) keeps every term
    finite in the restart-dominated regime where ``Q(rho)`` underflows.
    """
    cycle = _cycle(strategy, N, r)
    log_q0, restart, u_stop = _restart_part(strategy, N, r, rho)
    alpha = kappa + d
    segments = max(int(math.ceil((u_stop - rho) / alpha)) + 1, 1)
    # Segment j ends where segment j+1 starts: one evaluation serves both.
    bounds = rho + alpha * np.arange(segments + 1)
    log_bounds = cycle.logq(bounds) - log_q0
    start, log_start, log_end = bounds[:-1], log_bounds[:-1], log_bounds[1:]
    log_mid = cycle.logq(start + kappa) - log_q0
    compute = float(np.sum(_loglinear_integral(log_start, log_mid, kappa)))
    checkpoint = float(np.sum(_loglinear_integral(log_mid, log_end, d))) if d > 0 else 0.0
    kept = np.exp(log_end)
    kept_compute = kappa * float(np.sum(kept))
    useful = kappa * float(np.sum(kept * cycle.theta(start + kappa / 2)))
    return {
        "useful": useful,
        "redundancy": kept_compute - useful,
        "checkpoint": checkpoint,
        "restart": restart,
        "lost": max(compute - kept_compute, 0.0),
        "log_q0": log_q0,
    }


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
    if strategy == "spare" and r > 1:
        # A modular ruler must exist: raises ValueError naming N and r otherwise.
        from .placement import modular_ruler

        modular_ruler(N, r)
    return strategy, r


def _estimate(scenario: Scenario, strategy: str, r: int, tau_minutes: float) -> TrainingEstimate:
    lam = scenario.group_failure_rate_per_hour
    terms = _cycle_terms(
        strategy if r > 1 else "ckpt", scenario.groups, r,
        lam * scenario.restart_minutes / 60, lam * tau_minutes / 60, lam * scenario.checkpoint_minutes / 60,
    )
    total = sum(terms[k] for k in ("useful", "redundancy", "checkpoint", "restart", "lost"))
    W = scenario.work_hours
    useful = terms["useful"]
    hours = W * total / useful if useful > 0 and math.isfinite(total) else math.inf
    shares = {k: terms[k] / total if math.isfinite(total) and total > 0 else 0.0 for k in terms}
    parts = {k: (shares[k] * hours if shares[k] > 0 else 0.0) for k in ("redundancy", "checkpoint", "restart", "lost")}
    # Cycles per run: W / E[P] with E[P] = useful * Q(rho) / lambda.
    # In logs: Q(rho) underflows in the restart-dominated regime.
    log_restarts = math.log(W * lam / useful) - min(terms["log_q0"], 0.0) if useful > 0 else math.inf
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


def _best_interval(scenario: Scenario, strategy: str, r: int) -> TrainingEstimate:
    """Minimise hours over ``tau`` (bounded Brent in ``log tau``).

    The bracket spans a factor 100 either side of Young's interval
    ``sqrt(2 delta M)`` with ``M`` the mean time to wipe-out (clipped to
    ``[1 s, 10 W]``); with no checkpoint cost the best interval is the
    smallest, and 1 second is used.
    """
    delta = scenario.checkpoint_minutes
    lam = scenario.group_failure_rate_per_hour
    if delta == 0:
        return _estimate(scenario, strategy, r, 1 / 60)
    cycle = _cycle(strategy, scenario.groups, r)
    mean_u = cycle.u_at(-1.0)  # time at which survival has dropped to 1/e
    young = math.sqrt(2 * delta * 60 * mean_u / lam)
    lo = math.log(max(young / 100, 1 / 60))
    hi = math.log(min(max(young * 100, 2 / 60), 600 * scenario.work_hours))
    res = minimize_scalar(
        lambda x: _estimate(scenario, strategy, r, math.exp(x)).hours,
        bounds=(lo, max(hi, lo + 1e-6)),
        method="bounded",
        options={"xatol": 1e-3},
    )
    return _estimate(scenario, strategy, r, math.exp(res.x))


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
        of range ``r``, no modular ruler for ``(N, r)``, ``tau <= 0``.
    """
    strategy, r = _validate_plan(scenario, strategy, r)
    if checkpoint_interval_minutes is None:
        return _best_interval(scenario, strategy, r)
    tau = as_real(checkpoint_interval_minutes, "checkpoint_interval_minutes", minimum=0.0, strict_minimum=True)
    return _estimate(scenario, strategy, r, tau)
