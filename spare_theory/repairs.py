"""Failed groups that come back: the restart cycle when repairs rejoin a running job.

With ``Scenario.repair_minutes`` set, a failed group is replaced after a
repair time ``D`` (mean ``m``) and rejoins the running job without a global
restart; the job stalls ``rejoin_minutes`` while it loads the model state.
A group then alternates between *up* (``Exp(lambda)``) and *down* (``D``),
independently of the others, until the next global restart makes every
group healthy again.  Derivation in ``docs/theory.md`` section 6.

**Wipe-outs.**  CKPT-only: any failure (repairs change nothing).  Rep: a
replica set with all its members down at once.  SPARe: a shard type with all
``r`` hosts down at once.  In dimensionless time ``u = lambda t`` with
``mu = 1 / (lambda m)`` (repairs per mean group lifetime), for exponential
repairs:

* a set of ``k`` groups is a birth-death chain on its down count
  (``j -> j+1`` at rate ``k - j``, ``j -> j-1`` at ``j mu``) absorbed at
  ``k``; its survival ``S_k(u)`` is the chain's, exact.  Rep's sets are
  disjoint, so ``Q = prod_sets S_{|set|}(u)``, exact;
* SPARe's types overlap: two types of a modular-ruler placement share at
  most one host and ``n1 = N r (r-1) / 2`` pairs share one.  The second
  order cluster expansion
  ``C_mu(u) = N log S_r + n1 (log S_pair - 2 log S_r)``, with ``S_pair``
  the exact survival of two types sharing one host (a chain on the shared
  host and both private down counts), carries the per-type and pair
  dynamics; it is used as a correction to the sharp no-repair law ``Q_0``
  of today's model, evaluated at the same per-group down probability
  ``p(u) = pi (1 - e^{-(1 + mu) u})``, ``pi = 1 / (1 + mu)``:

      log Q(u) = log Q_0(u_0) + C_mu(u) - C_0(u_0),   u_0 = -log(1 - p(u)).

  As repairs get slow (``mu -> 0``) the correction vanishes and ``Q`` is
  today's law; as they get fast ``log Q_0(u_0)`` and ``C_0(u_0)`` agree (both
  ``-N p^r + O(p^{2r-1})``) and ``Q`` is the cluster expansion with repairs,
  whose leading term is the rare-event rate ``N r (1-pi) pi^{r-1}`` of
  ``r`` overlapping outages.

Other repair laws (``"fixed"``, a scipy distribution) enter the model through
their mean only: the stationary down probability and the rate of ``r``
overlapping outages depend on the mean alone; the transient and the
clumping do not (measured in the report's agreement table).

**Throughput** given no wipe-out: SPARe ``theta_0(u_0)`` of today's law at
the same ``p(u)`` (the down set as a uniform, not wiped set of the binomial
size), Rep ``floor(N/r)/N``, CKPT-only 1, each times ``1 - N mu p(u) s``
(rejoins at rate ``N mu p(u)``, each stalling the job for ``s = lambda *
rejoin``; capped at 1).

The classes and functions here are used by :mod:`spare_theory.renewal` and
:mod:`spare_theory.optimize` through the :class:`~spare_theory.strategies.CycleLaw`
interface; the independent event simulation is :mod:`spare_theory.repairs_sim`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import expm

from .scenario import Scenario, check_plan
from .strategies import CycleLaw, cycle_law, survival_integral
from .wipeout import wipeout_law

__all__ = [
    "RepairCycle",
    "attach_repairs",
    "expected_repairs",
    "mean_time_to_wipeout",
    "repair_cycle",
    "repair_rate",
    "scenario_cycle",
    "set_mean_absorption",
]

# Points of the grid in u on which log Q is tabulated, and the level of log Q
# at which the grid ends (later segments weigh below e^-40).
_GRID_STEPS = 2048
_LOG_END = -40.0
_SPAN_PASSES = 8
# Below this log Q the cluster expansions are not trusted (module docstring).
_LOG_TAIL = -25.0
_EARLY_POINTS = 256


def repair_rate(scenario: Scenario) -> float:
    """``mu = 1 / (lambda m)``: repairs per mean group lifetime (0 without repairs).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=60)
    >>> repair_rate(sc)
    250.0
    """
    if scenario.repair_minutes is None:
        return 0.0
    return 60.0 / (scenario.group_failure_rate_per_hour * scenario.repair_minutes)


def set_mean_absorption(k: int, mu: float) -> float:
    """Mean time (units ``1/lambda``) until ``k`` groups are all down at once, from all up.

    The down count is a birth-death chain (``j -> j+1`` at rate ``k - j``,
    ``j -> j-1`` at ``j mu``); the mean passage time from ``j`` to ``j+1``
    is ``t_j = (1 + j mu t_{j-1}) / (k - j)`` (a sum of positive terms,
    stable for any ``mu``), and the answer is ``sum_j t_j``.  ``mu = 0`` is
    the harmonic number ``H_k``.

    Examples
    --------
    >>> round(set_mean_absorption(3, 0.0), 6), round(set_mean_absorption(2, 10.0), 4)
    (1.833333, 6.5)
    """
    total, step = 0.0, 0.0
    for j in range(k):
        step = (1.0 + j * mu * step) / (k - j)
        total += step
    return total


def _set_generator(k: int, mu: float) -> np.ndarray:
    """Sub-generator of ``k`` groups' down count ``0..k-1`` (leaving to ``k`` is the loss)."""
    G = np.zeros((k, k))
    for j in range(k):
        if j + 1 < k:
            G[j, j + 1] = k - j
        if j > 0:
            G[j, j - 1] = j * mu
        G[j, j] = -((k - j) + j * mu)
    return G


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


def _log_survival(G: np.ndarray, h: float, steps: int, mean: float) -> np.ndarray:
    """``log P(not lost by j h)``, ``j = 0..steps``, from state 0 of sub-generator ``G``.

    The state is renormalised after every step and the logs of the kept mass
    are summed, so the log-survival keeps its accuracy however far the chain
    has been lost.  The matrix exponential resolves a step's loss ``~ h /
    mean`` only to about ``1e-16 ||G|| h`` absolute: when that is more than
    ``1e-6`` of it (``1e-16 ||G|| mean > 1e-6``, very fast repairs) the chain
    has relaxed to its quasi-stationary law within ``1 / ||G|| <<  mean``
    and the survival is ``exp(-u / mean)`` to within ``1 / (||G|| mean) <
    1e-10`` (``mean``: the mean time to loss from state 0).
    """
    j = np.arange(steps + 1)
    if np.finfo(float).eps * np.abs(G).sum(axis=1).max() * mean > 1e-6:
        return -j * h / mean
    P = np.maximum(expm(G * h), 0.0)
    v = np.zeros(G.shape[0])
    v[0] = 1.0
    out = np.zeros(steps + 1)
    total = 0.0
    for i in range(steps):
        v = v @ P
        s = float(v.sum())
        if s <= 0.0:
            out[i + 1 :] = -np.inf
            break
        total += math.log(s)
        out[i + 1] = total
        v /= s
    return out


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


class RepairCycle(CycleLaw):
    """The restart cycle of a strategy when failed groups are repaired and rejoin.

    ``log Q`` and ``theta`` are tabulated on a uniform grid of 2049 points
    in ``u`` up to where ``log Q`` reaches ``-40`` (found in a few passes),
    plus 256 geometric points below its first step (where the throughput
    settles),
    interpolated linearly and extrapolated with the last slope (as
    :class:`~spare_theory.strategies.Spare`).  See the module docstring for
    the formulas.

    Parameters
    ----------
    strategy : {"ckpt", "rep", "spare"}
        Strategy (``r = 1`` is CKPT-only whatever the name).
    N, r : int
        Groups and redundancy.
    mu : float
        Repair rate ``1 / (lambda m)``, ``>= 0`` (0: no repairs).
    stall : float
        Rejoin stall ``lambda * rejoin_hours``, ``>= 0``.

    Attributes
    ----------
    u, log_q, theta_grid, repairs_rate : numpy.ndarray
        The grid, ``log Q``, the throughput and the expected repairs per
        unit ``u`` (``N mu p(u)``) on it.

    Examples
    --------
    >>> law = RepairCycle("rep", 64, 2, mu=100.0)
    >>> round(law.mean_time, 1), round(RepairCycle("rep", 64, 2, mu=0.0).mean_time, 4)
    (1.6, 0.1729)
    """

    name = "repair"
    # Fast repairs make cycles of millions of segments: sum them in blocks.
    max_segments = 4096

    def __init__(self, strategy: str, N: int, r: int, mu: float, stall: float = 0.0) -> None:
        super().__init__(N, r)
        #: The strategy whose wipe-out rule and throughput the cycle uses.
        self.strategy = "ckpt" if r == 1 else strategy
        self.mu, self.stall = float(mu), float(stall)
        self._base = cycle_law(self.strategy, N, r)
        if r == 1:
            base_rate = float(N)
        elif self.strategy == "rep":
            base_rate = (N // r) / set_mean_absorption(r, self.mu)
        else:
            base_rate = N / set_mean_absorption(r, self.mu)
        # First guess of where log Q reaches _LOG_END, then passes until it does.
        span = -_LOG_END / base_rate
        for _ in range(_SPAN_PASSES):
            u = np.linspace(0.0, span, _GRID_STEPS + 1)
            log_q = self._log_q_grid(u)
            if log_q[-1] > _LOG_END:
                span *= min(max(1.5 * _LOG_END / min(log_q[-1], -1e-300), 1.5), 1e6)
                continue
            end = int(np.argmax(log_q <= _LOG_END))
            if end >= _GRID_STEPS // 2:
                break
            span = u[end] * 1.05
        self.slope = (log_q[-1] - log_q[-2]) / (u[-1] - u[-2])
        # Geometric points below the first step: the throughput settles within
        # u ~ 1 / (N (1 + mu)) (first failures, then repairs), far below the
        # step when cycles are long; log Q is linear there.
        early = np.geomspace(1e-3 / (N * (1.0 + self.mu)), u[1], _EARLY_POINTS)
        self.u = np.union1d(u, early)
        self.log_q = np.interp(self.u, u, log_q)
        u = self.u
        p = self.down_probability(u)
        self.repairs_rate = N * self.mu * p if r > 1 else np.zeros(u.size)
        share = np.minimum(self.repairs_rate * self.stall, 1.0)
        if self.strategy == "spare":
            base = self._base.theta(self.lifetimes.ppf(p))
        else:
            base = np.full(u.size, float(self._base.theta(0.0)))
        self.theta_grid = base * (1.0 - share)

    def down_probability(self, u: ArrayLike) -> np.ndarray:
        """``p(u) = pi (1 - e^{-(1 + mu) u})``, ``pi = 1/(1 + mu)``: a group down at ``u``."""
        u = np.asarray(u, dtype=float)
        return -np.expm1(-(1.0 + self.mu) * u) / (1.0 + self.mu)

    def _log_q_grid(self, u: np.ndarray) -> np.ndarray:
        N, r, mu = self.N, self.r, self.mu
        h, steps = float(u[1] - u[0]), u.size - 1
        if r == 1:
            return -N * u
        if self.strategy == "rep":
            sets = N // r
            q, large = divmod(N, sets)
            out = np.zeros(u.size)
            for count, size in ((sets - large, q), (large, q + 1)):
                if count:
                    mean = set_mean_absorption(size, mu)
                    out = out + count * _log_survival(_set_generator(size, mu), h, steps, mean)
            return out
        mean = set_mean_absorption(r, mu)
        one = _log_survival(_set_generator(r, mu), h, steps, mean)
        # Two types: lost twice as fast as one when losses are rare (where it matters).
        pair = _log_survival(_pair_generator(r, mu), h, steps, mean / 2)
        n1 = N * r * (r - 1) / 2
        p = self.down_probability(u)
        u0 = self.lifetimes.ppf(p)
        with np.errstate(invalid="ignore"):
            correction = N * one + n1 * (pair - 2 * one) - _cluster_no_repair(N, r, p)
            log_q = np.asarray(self._base.logq(u0), dtype=float) + correction
        # The truncated expansions hold while Q is not tiny; far in the tail
        # (log Q below -25, or where they stop decreasing) both blow up, and
        # log Q goes on with its slope over the last 1/16 of the good part.
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

    @functools.cached_property
    def mean_time(self) -> float:
        """``int_0^inf Q du``: mean time to wipe-out from a healthy start, units ``1/lambda``."""
        pieces = survival_integral(self.log_q[:-1], self.log_q[1:], np.diff(self.u))
        tail = math.exp(self.log_q[-1]) / -self.slope if self.slope < 0 else math.inf
        return float(np.sum(pieces) + tail)

    def repairs_per_cycle_time(self) -> float:
        """``int Q N mu p du / int Q du``: expected repairs per unit ``u`` over a cycle."""
        q = np.exp(self.log_q)
        weights = np.diff(self.u, prepend=0.0)
        return float(np.sum(q * self.repairs_rate * weights) / np.sum(q * weights))


@functools.lru_cache(maxsize=256)
def repair_cycle(strategy: str, N: int, r: int, mu: float, stall: float = 0.0) -> RepairCycle:
    """The cached :class:`RepairCycle` (``r = 1``: CKPT-only whatever the strategy).

    Examples
    --------
    >>> repair_cycle("spare", 64, 1, 10.0).strategy
    'ckpt'
    """
    if r == 1:
        strategy = "ckpt"
    return RepairCycle(strategy, N, r, mu, stall)


def mean_time_to_wipeout(scenario: Scenario, strategy: str, r: int | None) -> float:
    """Expected hours from a healthy start to the first wipe-out.

    Without repairs (``repair_minutes=None``) today's law: CKPT-only
    ``1 / (N lambda)``; SPARe ``sum_f P(T > f) / ((N - f) lambda)`` with the
    sharp wipe-out law :func:`~spare_theory.wipeout.wipeout_law` (state
    ``f`` lasts ``1/((N - f) lambda)`` on average); Rep
    ``int prod_sets (1 - p^{|set|}) du / lambda``.  With repairs
    ``int_0^inf Q(u) du / lambda`` with ``Q`` of :class:`RepairCycle` (the
    module docstring): exact per set for Rep, the sharp law corrected by the
    per-type and pair chains for SPARe.  Fast repairs give about
    ``1 / (lambda N r pi^{r-1})`` (``r`` overlapping outages), slow ones
    today's law.

    Parameters
    ----------
    scenario : Scenario
        Cluster, failure rate and repairs.
    strategy : {"ckpt", "rep", "spare"}
        Strategy.
    r : int or None
        Redundancy (as :func:`spare_theory.scenario.check_plan`).

    Returns
    -------
    float
        Hours.

    Raises
    ------
    ValueError
        Naming the argument (as :func:`~spare_theory.scenario.check_plan`).

    Examples
    --------
    >>> sc = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=100)
    >>> round(mean_time_to_wipeout(sc, "spare", 3), 2)
    6.78
    >>> fast = Scenario(gpus=64 * 2048, gpus_per_group=2048, gpu_mtbf_hours=50_678.0,
    ...                 restart_minutes=60, checkpoint_minutes=5, work_hours=100,
    ...                 repair_minutes=10)
    >>> round(mean_time_to_wipeout(fast, "spare", 3))
    2911
    """
    strategy, r = check_plan(scenario, strategy, r)
    N, lam = scenario.groups, scenario.group_failure_rate_per_hour
    if r == 1:
        return 1.0 / (N * lam)
    if scenario.repair_minutes is None and strategy == "spare":
        law = wipeout_law(N, r)
        f = np.arange(law.tail_end() + 1)
        return float(np.sum(np.asarray(law.sf(f), dtype=float) / (N - f)) / lam)
    return repair_cycle(strategy, N, r, repair_rate(scenario)).mean_time / lam


def scenario_cycle(scenario: Scenario, strategy: str, r: int) -> CycleLaw:
    """The cycle law of a checked plan: today's without repairs, :class:`RepairCycle` with.

    CKPT-only (``r = 1``) is today's law either way: every failure is a
    wipe-out, so nothing is left to repair.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30, rejoin_minutes=1)
    >>> scenario_cycle(sc, "spare", 1), type(scenario_cycle(sc, "rep", 2)).__name__
    (CkptOnly(N=128, r=1), 'RepairCycle')
    """
    if scenario.repair_minutes is None or r == 1:
        return cycle_law(strategy, scenario.groups, r)
    stall = scenario.group_failure_rate_per_hour * scenario.rejoin_minutes / 60.0
    return repair_cycle(strategy, scenario.groups, r, repair_rate(scenario), stall)


def attach_repairs(scenario: Scenario, law: CycleLaw, estimate: Any) -> Any:
    """``estimate`` with :func:`expected_repairs` filled in (unchanged without repairs).

    Examples
    --------
    >>> from spare_theory.renewal import evaluate
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30)
    >>> law = scenario_cycle(sc, "rep", 2)
    >>> round(attach_repairs(sc, law, evaluate(sc, law, 60.0, strategy="rep")).repairs)
    53
    """
    if not isinstance(law, RepairCycle):
        return estimate
    return dataclasses.replace(estimate, repairs=expected_repairs(scenario, law, estimate.hours))


def expected_repairs(scenario: Scenario, law: CycleLaw, hours: float) -> float:
    """Expected repairs over a run of ``hours``: ``hours lambda int Q N mu p du / int Q du``.

    The repair rate averaged over the cycle (restarts included); 0 for a law
    without repairs.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30)
    >>> round(expected_repairs(sc, scenario_cycle(sc, "spare", 4), 100.0), 1)
    51.1
    """
    if not isinstance(law, RepairCycle) or not math.isfinite(hours):
        return 0.0 if math.isfinite(hours) else math.inf
    return hours * scenario.group_failure_rate_per_hour * law.repairs_per_cycle_time()
