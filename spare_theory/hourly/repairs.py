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

Other repair laws (``"fixed"``, a scipy distribution): the stationary down
probability and the rate of ``r`` overlapping outages depend on the mean
alone, the transient from a healthy start does not.  The law enters through
the exact down probability ``p(u)`` of :func:`spare_theory.lifetimes.outages.down_probability`:
the wipe-out hazard of exponential repairs of the same mean is scaled by
``(p / p_e)^{r-1}`` (a wipe-out is the last of ``r`` hosts failing while
``r - 1`` are down), and the throughput and repair rate use ``p``.  Rep's
sets of ``q > r`` groups are scaled with ``r - 1`` too.

**Throughput** given no wipe-out: SPARe ``theta_0(u_0)`` of today's law at
the same ``p(u)`` (the down set as a uniform, not wiped set of the binomial
size), Rep ``floor(N/r)/N``, CKPT-only 1, each times ``1 - N mu p(u) s``
(rejoins at rate ``N mu p(u)``, each stalling the job for ``s = lambda *
rejoin``; capped at 1).

The classes and functions here are used by :mod:`spare_theory.hourly.renewal` and
:mod:`spare_theory.training.optimize` through the :class:`~spare_theory.cycles.laws.CycleLaw`
interface; the independent event simulation is :mod:`spare_theory.hourly.repairs_sim`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import expm
from scipy.special import gammaln, logsumexp

from .._validation import as_count, as_count_array, as_real_array
from ..cycles.laws import CycleLaw, Spare, TabulatedCycle, cycle_law, survival_integral
from ..lifetimes.outages import down_probability
from ..stacking.load import expected_load
from ..wipeout.law import wipeout_law
from .scenario import Scenario, check_plan

__all__ = [
    "PlannedCycle",
    "RepairCycle",
    "attach_repairs",
    "chain_log_survival",
    "cost_trigger_failures",
    "down_count_generator",
    "down_count_mean_passage",
    "expected_repairs",
    "mean_time_to_wipeout",
    "planned_cycle",
    "repair_cycle",
    "repair_rate",
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
    return down_count_mean_passage(k, k, mu)


def down_count_generator(k: int, mu: float) -> np.ndarray:
    """Sub-generator of ``k`` groups' down count ``0..k-1`` (leaving to ``k`` is the loss).

    ``j -> j+1`` at rate ``k - j`` (an up group fails), ``j -> j-1`` at
    ``j mu`` (a repair ends), units ``1/lambda``.

    Parameters
    ----------
    k : int
        Groups in the set, ``>= 1``.
    mu : float
        Repairs per mean group lifetime, ``>= 0``.

    Returns
    -------
    numpy.ndarray
        ``(k, k)`` matrix whose row sums are ``0`` except the last (``-(1 + (k-1) mu)
        + (k-1) mu = -1``: the loss).

    Examples
    --------
    >>> down_count_generator(2, 3.0).tolist()
    [[-2.0, 2.0], [3.0, -4.0]]
    """
    return _down_chain_generator(k, k, mu)


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


def chain_log_survival(
    G: np.ndarray, h: float, steps: int, mean: float, start: np.ndarray | None = None
) -> np.ndarray:
    """``log P(not lost by j h | not lost at 0)``, ``j = 0..steps``, for sub-generator ``G``.

    The chain starts in state 0, or in the law ``start`` over its states
    (normalised here).  The state is renormalised after every step and the logs of the kept mass
    are summed, so the log-survival keeps its accuracy however far the chain
    has been lost.  The matrix exponential resolves a step's loss ``~ h /
    mean`` only to about ``1e-16 ||G|| h`` absolute: when that is more than
    ``1e-6`` of it (``1e-16 ||G|| mean > 1e-6``, very fast repairs) the chain
    has relaxed to its quasi-stationary law within ``1 / ||G|| <<  mean``
    and the survival is ``exp(-u / mean)`` to within ``1 / (||G|| mean) <
    1e-10`` (``mean``: the mean time to loss from the start).

    Examples
    --------
    >>> G = down_count_generator(2, 0.0)  # two groups, no repairs: lost when both fail
    >>> out = chain_log_survival(G, 0.5, 2, 1.5)
    >>> bool(np.allclose(np.exp(out), 1 - (1 - np.exp(-np.array([0, 0.5, 1.0]))) ** 2))
    True
    """
    j = np.arange(steps + 1)
    if np.finfo(float).eps * np.abs(G).sum(axis=1).max() * mean > 1e-6:
        return -j * h / mean
    P = np.maximum(expm(G * h), 0.0)
    if start is None:
        v = np.zeros(G.shape[0])
        v[0] = 1.0
    else:
        v = np.asarray(start, dtype=float) / float(np.sum(start))
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


class RepairCycle(TabulatedCycle):
    """The restart cycle of a strategy when failed groups are repaired and rejoin.

    ``log Q`` and ``theta`` are tabulated on a uniform grid of 2049 points
    in ``u`` up to where ``log Q`` reaches ``-40`` (found in a few passes),
    plus 256 geometric points below its first step (where the throughput
    settles),
    interpolated linearly and extrapolated with the last slope (as
    :class:`~spare_theory.cycles.laws.Spare`).  See the module docstring for
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

    def __init__(
        self,
        strategy: str,
        N: int,
        r: int,
        mu: float,
        stall: float = 0.0,
        repair_law: Any = "exponential",
    ) -> None:
        super().__init__(N, r)
        #: The strategy whose wipe-out rule and throughput the cycle uses.
        self.strategy = "ckpt" if r == 1 else strategy
        self.mu, self.stall = float(mu), float(stall)
        #: Law of the repair time (``Scenario.repair_law``); only its shape matters here.
        self.repair_law = repair_law
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
        if self._exponential:
            self.repairs_rate = N * self.mu * p if r > 1 else np.zeros(u.size)
        else:
            self._carry_repair_law(p)
            # Repairs end at the failure rate less the growth of the down share.
            self.repairs_rate = N * np.maximum(1.0 - p - np.gradient(p, u), 0.0)
        share = np.minimum(self.repairs_rate * self.stall, 1.0)
        if self.strategy == "spare":
            base = self._base.theta(self.lifetimes.ppf(p))
        else:
            base = np.full(u.size, float(self._base.theta(0.0)))
        self.theta_grid = base * (1.0 - share)

    @property
    def _exponential(self) -> bool:
        law = self.repair_law
        return self.r == 1 or self.mu == 0.0 or (isinstance(law, str) and law == "exponential")

    def down_probability(self, u: ArrayLike) -> np.ndarray:
        """``p(u)``: a group down at ``u`` (:func:`~spare_theory.lifetimes.down_probability`).

        ``pi (1 - e^{-(1 + mu) u})``, ``pi = 1/(1 + mu)``, for exponential repairs.
        """
        return down_probability(u, self.mu, "exponential" if self._exponential else self.repair_law)

    def _carry_repair_law(self, p: np.ndarray) -> None:
        """Rescale the exponential-repair wipe-out hazard to the repair law's down share.

        A wipe-out needs the last of ``r`` hosts to fail while the other
        ``r - 1`` are down, so the hazard scales as ``p(u)^{r-1}``; with ``p``
        of the law and ``p_e`` of exponential repairs of the same mean,
        ``-d log Q/du = -d log Q_e/du (p / p_e)^{r-1}``.  Both ``p`` tend to
        ``pi`` (insensitivity), so the law only moves the transient.
        """
        u = self.u
        p_exp = down_probability(u, self.mu)
        ratio = np.ones(u.size)
        ratio[1:] = (p[1:] / p_exp[1:]) ** (self.r - 1)
        hazard = -np.diff(self.log_q) * 0.5 * (ratio[1:] + ratio[:-1])
        self.log_q = -np.concatenate(([0.0], np.cumsum(hazard)))
        self.slope *= ratio[-1]

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
                    out = out + count * chain_log_survival(
                        down_count_generator(size, mu), h, steps, mean
                    )
            return out
        mean = set_mean_absorption(r, mu)
        one = chain_log_survival(down_count_generator(r, mu), h, steps, mean)
        # Two types: lost twice as fast as one when losses are rare (where it matters).
        pair = chain_log_survival(_pair_generator(r, mu), h, steps, mean / 2)
        n1 = N * r * (r - 1) / 2
        p = down_probability(u, mu)
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
def repair_cycle(
    strategy: str, N: int, r: int, mu: float, stall: float = 0.0, repair_law: Any = "exponential"
) -> RepairCycle:
    """The cached :class:`RepairCycle` (``r = 1``: CKPT-only whatever the strategy).

    Examples
    --------
    >>> repair_cycle("spare", 64, 1, 10.0).strategy
    'ckpt'
    """
    if r == 1:
        strategy = "ckpt"
    return RepairCycle(strategy, N, r, mu, stall, repair_law)


def mean_time_to_wipeout(scenario: Scenario, strategy: str, r: int | None) -> float:
    """Expected hours from a healthy start to the first wipe-out.

    Without repairs (``repair_minutes=None``) today's law: CKPT-only
    ``1 / (N lambda)``; SPARe ``sum_f P(T > f) / ((N - f) lambda)`` with the
    sharp wipe-out law :func:`~spare_theory.wipeout.law.wipeout_law` (state
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
        Redundancy (as :func:`spare_theory.hourly.scenario.check_plan`).

    Returns
    -------
    float
        Hours.

    Raises
    ------
    ValueError
        Naming the argument (as :func:`~spare_theory.hourly.scenario.check_plan`).

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
    return (
        repair_cycle(strategy, N, r, repair_rate(scenario), 0.0, scenario.repair_law).mean_time
        / lam
    )


def attach_repairs(scenario: Scenario, law: CycleLaw, estimate: Any) -> Any:
    """``estimate`` with :func:`expected_repairs` filled in (unchanged without repairs).

    Examples
    --------
    >>> from spare_theory.hourly.renewal import evaluate
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30)
    >>> law = repair_cycle("rep", sc.groups, 2, repair_rate(sc))
    >>> round(attach_repairs(sc, law, evaluate(sc, law, 60.0, strategy="rep")).repairs)
    53
    """
    if isinstance(law, PlannedCycle):
        planned = estimate.restarts * law.planned_share if math.isfinite(estimate.restarts) else 0.0
        estimate = dataclasses.replace(estimate, planned_restarts=float(planned))
    if not isinstance(law, RepairCycle | PlannedCycle) or law.mu == 0:
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
    >>> round(expected_repairs(sc, repair_cycle("spare", sc.groups, 4, repair_rate(sc)), 100.0), 1)
    51.1
    """
    if not isinstance(law, RepairCycle | PlannedCycle) or not math.isfinite(hours):
        return 0.0 if math.isfinite(hours) else math.inf
    return hours * scenario.group_failure_rate_per_hour * law.repairs_per_cycle_time()


def _down_chain_generator(n: int, k: int, mu: float) -> np.ndarray:
    """Sub-generator of the down count ``0..k-1`` of ``n`` groups (reaching ``k`` is the loss)."""
    G = np.zeros((k, k))
    for j in range(k):
        if j + 1 < k:
            G[j, j + 1] = n - j
        if j > 0:
            G[j, j - 1] = j * mu
        G[j, j] = -((n - j) + j * mu)
    return G


def down_count_mean_passage(n: int, k: int, mu: float) -> float:
    """Mean time (units ``1/lambda``) until ``k`` of ``n`` groups are down at once, from all up.

    ``t_j = (1 + j mu t_{j-1}) / (n - j)`` summed over ``j < k``
    (:func:`set_mean_absorption` is ``n = k``).

    Examples
    --------
    >>> round(down_count_mean_passage(10, 2, 0.0), 4), round(set_mean_absorption(3, 1.0), 6)
    (0.2111, 3.333333)
    """
    total, step = 0.0, 0.0
    for j in range(k):
        step = (1.0 + j * mu * step) / (n - j)
        total += step
    return total


def _rep_log_survival_by_count(N: int, r: int) -> np.ndarray:
    """``log P(no replica set fully down | f uniformly random groups down)``, ``f = 0..N``.

    The number of ways to pick ``f`` groups with no set complete is the
    coefficient of ``x^f`` in ``prod_sets ((1 + x)^s - x^s)``; divided by
    ``C(N, f)``.  Built in logs, one set at a time.
    """
    sets = N // r
    sizes = np.bincount(np.arange(N) % sets)
    log_ways = np.full(N + 1, -np.inf)
    log_ways[0] = 0.0
    for s in sizes:
        j = np.arange(s)  # a set contributes j < s of its members
        log_c = gammaln(s + 1) - gammaln(j + 1) - gammaln(s - j + 1)
        shifted = np.full((s, N + 1), -np.inf)
        for i in range(s):
            shifted[i, i:] = log_ways[: N + 1 - i] + log_c[i]
        log_ways = logsumexp(shifted, axis=0)
    f = np.arange(N + 1)
    log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)
    return np.minimum(log_ways - log_binom, 0.0)


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

    With ``microbatches = m > 1`` (SPARe, no repairs) the state costs are
    the micro-batch loads ``c_f = ceil(m N/(N-f))/m``
    (:func:`~spare_theory.stacking.overhead.expected_load`), as in
    :class:`~spare_theory.hourly.split.SpareSplit`.

    Parameters
    ----------
    strategy : {"rep", "spare"}
        Strategy (``r >= 2``).
    N, r, k : int
        Groups, redundancy, trigger (``1 <= k <= N``).
    mu, stall : float
        As :class:`RepairCycle` (``mu = 0``: no repairs).
    microbatches : int, default 1
        Pieces per shard ``m`` (SPARe without repairs only).

    Attributes
    ----------
    u, log_q, theta_grid, hazard : numpy.ndarray
        The grid, ``log Q``, the throughput and ``h`` on it.
    planned_share : float
        ``int_0^inf Q h du``: the chance that a cycle ends in a planned restart.

    Examples
    --------
    >>> law = PlannedCycle("spare", 64, 4, k=8)
    >>> round(law.planned_share, 3), round(float(np.exp(law.logq(0.05))), 4)
    (0.993, 0.9874)
    """

    name = "planned"
    planned = True
    max_segments = 4096

    def __init__(
        self,
        strategy: str,
        N: int,
        r: int,
        k: int,
        mu: float = 0.0,
        stall: float = 0.0,
        microbatches: int = 1,
    ) -> None:
        super().__init__(N, r)
        if not 1 <= k <= N or r < 2:
            raise ValueError(f"planned_restart_failures = {k} must be in [1, N = {N}] with r >= 2")
        self.strategy, self.k, self.mu, self.stall = strategy, int(k), float(mu), float(stall)
        self.microbatches = as_count(microbatches, "microbatches", minimum=1)
        if self.microbatches > 1 and (strategy != "spare" or self.mu > 0.0):
            raise ValueError(
                f"microbatches = {self.microbatches} with planned restarts is modelled for "
                "SPARe without repairs only"
            )
        if self.mu == 0.0:
            self._no_repairs()
        else:
            self._with_repairs()
        self.slope = min((self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2]), -1e-300)
        q = np.exp(self.log_q)
        tail = float(q[-1] * self.hazard[-1] / -self.slope)
        self.planned_share = min(float(np.trapezoid(q * self.hazard, self.u)) + tail, 1.0)

    def _count_law(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log s_f, c_f)`` for ``f = 0..N``: per-count survival and step cost (module doc)."""
        N, r = self.N, self.r
        log_s = np.full(N + 1, -np.inf)
        cost = np.ones(N + 1)
        if self.strategy == "spare":
            table = Spare.log_survival_table(N, r)
            f_max = min(table.size - 1, N - math.ceil(N / r))
            log_s[: f_max + 1] = table[: f_max + 1]
            spare = cycle_law("spare", N, r)
            assert isinstance(spare, Spare)
            f = np.arange(f_max + 1)
            cost[: f_max + 1] = np.asarray(
                spare.state_cost(f)
                if self.microbatches == 1
                else expected_load(N, r, f, microbatches=self.microbatches),
                dtype=float,
            )
        else:
            log_s = _rep_log_survival_by_count(N, r)
            cost[:] = N / (N // r)
        return log_s, cost

    def _no_repairs(self) -> None:
        N, k = self.N, self.k
        log_s, cost = self._count_law()
        f = np.arange(k)
        cost = cost[:k]
        # Grid uniform in p up to where k failures are all but certain, plus early points.
        p_end = min((k + 12 * math.sqrt(k) + 20) / N, 1 - 1e-12)
        u_end = -math.log1p(-p_end)
        self.u = np.union1d(
            -np.log1p(-np.linspace(0.0, p_end, _GRID_STEPS + 1)),
            np.geomspace(1e-3 / N, min(30.0 / N, u_end), _EARLY_POINTS),
        )
        u = self.u[:, None]
        log_p = np.log(-np.expm1(-np.maximum(u, 1e-300)))
        log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)
        log_w = log_binom + np.where(f > 0, f * log_p, 0.0) - (N - f) * u + log_s[:k]
        self.log_q = logsumexp(log_w, axis=1)
        top = log_w.max(axis=1, keepdims=True)
        w = np.exp(log_w - top)
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
        base = repair_cycle(self.strategy, N, self.r, mu, self.stall)
        log_s, cost = self._count_law()
        # Where the chain without trigger is cut: beyond, the down count is
        # out of reach (12 sd above its stationary mean) or a wipe-out certain.
        mean_down = N / (1.0 + mu)
        reach = int(mean_down + 12 * math.sqrt(mean_down + 1) + 30)
        alive = int(np.flatnonzero(np.isfinite(log_s))[-1]) + 1
        top_free = max(min(N, reach, alive), k)
        # Grid up to where the triggered cycle is all but over (log Q <= -40).
        span = min(-_LOG_END * down_count_mean_passage(N, k, mu) * 1.2 + 30.0 / N, base.u[-1])
        grid = np.linspace(0.0, span, _GRID_STEPS + 1)
        on_k, hazard, inv_k = self._chain(k, log_s, cost, grid)
        on_free, _, inv_free = self._chain(top_free, log_s, cost, grid)
        self.u = np.union1d(
            np.union1d(grid, base.u[base.u < span]),
            np.geomspace(1e-3 / (N * (1.0 + mu)), grid[1], _EARLY_POINTS),
        )
        # The chains' ratio corrects the repair cycle (docstring).
        with np.errstate(invalid="ignore"):
            log_ratio = np.interp(self.u, grid, np.nan_to_num(on_k - on_free, nan=-np.inf))
        self.log_q = np.minimum.accumulate(np.asarray(base.logq(self.u)) + log_ratio)
        ratio = np.interp(self.u, grid, inv_k / np.maximum(inv_free, 1e-300))
        self.theta_grid = np.minimum(np.asarray(base.theta(self.u)) * ratio, 1.0)
        self.hazard = np.interp(self.u, grid, hazard)
        self.repairs_rate = np.interp(self.u, base.u, base.repairs_rate)

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        """``h(u)``: rate of a planned restart at ``u`` given the cycle is still on."""
        return np.interp(np.asarray(u, dtype=float), self.u, self.hazard)

    def repairs_per_cycle_time(self) -> float:
        """``int Q N mu p du / int Q du`` over the truncated cycle (0 without repairs)."""
        if self.mu == 0.0:
            return 0.0
        q = np.exp(self.log_q)
        weights = np.diff(self.u, prepend=0.0)
        return float(np.sum(q * self.repairs_rate * weights) / np.sum(q * weights))


@functools.lru_cache(maxsize=256)
def planned_cycle(
    strategy: str,
    N: int,
    r: int,
    k: int,
    mu: float = 0.0,
    stall: float = 0.0,
    microbatches: int = 1,
) -> PlannedCycle:
    """The cached :class:`PlannedCycle`.

    Examples
    --------
    >>> planned_cycle("rep", 64, 2, 4).k
    4
    """
    return PlannedCycle(strategy, N, r, k, mu, stall, microbatches)


# Relative slack when comparing a step cost with a threshold: costs are
# multiples of 1/m, and m c in floating point may land just above an integer.
_COST_SLACK = 1e-12


def cost_trigger_failures(
    N: ArrayLike, cost: ArrayLike, *, microbatches: int = 1
) -> int | np.ndarray:
    """The down count ``k(c)`` at which the model's step cost first reaches ``c``.

    The closed-form step cost with ``d`` groups down is
    ``c_d = ceil(m N/(N - d))/m`` (SPARe's ``E[S*_d] = ceil(N/(N-d))`` at
    ``m = 1``; :func:`~spare_theory.stacking.overhead.expected_load`).  With
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
