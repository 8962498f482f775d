"""The restart cycle of an elastic data-parallel job (elastic DP, hot spares).

``N`` groups, at most ``A`` of them computing (``A = N``: plain elastic DP;
``A = N - r``: ``r`` hot spares), a quorum ``q``: the job goes on while at
least ``q`` groups are up and trains ``min(A, N - f)`` shards per step with
``f`` groups down, so work accrues at ``min(A, N - f) / N`` of the
failure-free run on all ``N`` groups.  Fewer than ``q`` up is a wipe-out
(``f >= K = N - q + 1``).  Each membership change (a failure that leaves at
least ``q`` up, a rejoin) stalls the job for ``s``; an event during a stall
starts it over, so the job computes at ``u`` iff no stall-starting event
happened in ``(u - s, u]``.  Events during the restart ``[0, rho]`` start no
stall; the failures of one burst (a failure domain) are one event, so an up
group starts stalls at ``1 - epsilon`` of its rate (``merged``).
Dimensionless time ``u = lambda t``; ``mu = 1 / (lambda m)`` with ``m`` the
mean time a failed group is out (repair plus heal).  Derivation in
``docs/theory.md`` section 8.

Groups are independent two-state chains until the wipe-out, so the down
count of the *free* process (wipe-outs ignored) at ``u`` is
``Binom(N, p(u))``, ``p(u) = pi (1 - e^{-(1 + mu) u})``, ``pi = 1/(1 + mu)``
(``1 - e^{-u}`` without repairs), and a group is in its state of ``u``
without a transition since ``u - s'`` (``s' = min(s, u - rho)``) with
probability ``p(u - s') e^{-mu s'}`` (down) or ``(1 - p(u - s')) e^{-s'}``
(up).  Hence, with ``g_f = min(A, N - f) / N`` and ``w_f = C(N, f) a^f b^{N-f}``,
``a = p(u - s') e^{-mu s'}``, ``b = (1 - p(u - s')) e^{-s'}``:

    theta(u) = sum_{f < K} g_f w_f / P(Binom(N, p(u)) < K)

(a closed form in binomial distribution functions).  The survival:

- without repairs the down count only grows: ``Q(u) = P(Binom(N, p(u)) < K)``,
  and ``theta`` above, are exact;
- with repairs and ``K <= 512`` (:data:`EXACT_CHAIN_MAX`): ``Q`` is the exact
  birth-death chain of the down count absorbed at ``K``
  (:func:`~spare_theory.cycles.chains.chain_log_survival`), and ``theta`` is
  corrected by the chain's states given survival
  (:meth:`ElasticCycle._condition_on_survival`; the formula above conditions
  on ``f(u) < K``, which counts paths that reached ``K`` and came back),
  except where the chain mixes so fast that wipe-outs are rare on its
  relaxation time (:func:`~spare_theory.cycles.chains.fast_mixing`): the
  two conditionings then agree;
- with repairs and ``K > 512``: ``theta`` as above (given ``f(u) < K``), and
  the hazard of the binomial marginal,
  ``(N - K + 1) P(X = K - 1) / P(X < K)``, ``X ~ Binom(N, p(u))`` (exact
  without repairs; with repairs it counts every up-crossing of ``K``,
  re-crossings included), times the constant ``c`` that makes the mean time
  to wipe-out ``int Q du`` equal its exact value (the ``O(K)`` recursion
  :func:`~spare_theory.cycles.chains.down_count_mean_passage`).

The repair time enters through its mean only (the chain takes it
exponential); measured against the event simulation in ``docs/theory.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.optimize import brentq
from scipy.special import bdtr, bdtrc

from .._caching import cached
from .base import BLOCK_SEGMENTS, TabulatedCycle, cycle_time_average
from .chains import (
    chain_log_survival,
    chain_states,
    down_count_generator,
    down_count_mean_passage,
    fast_mixing,
)
from .repairs import EARLY_POINTS, GRID_STEPS, LOG_END

__all__ = ["EXACT_CHAIN_MAX", "ElasticCycle", "elastic_cycle"]

#: Largest wipe-out level ``K = N - q + 1`` whose repair chain is solved exactly
#: (a ``K x K`` matrix exponential and 2,048 products: about 0.3 s at 512).
EXACT_CHAIN_MAX = 512
# Grid points across the first stall after the restart (theta changes there), and
# Gauss-Legendre points of the stall after a checkpoint.
_STALL_POINTS = 33
_LOSS_POINTS = 4
# Mean times to wipe-out (units 1/lambda) beyond which the cycle is taken as this long:
# the survival is then 1 to within 1e-150 over any run (and the grid stays finite).
_NEVER = 1e150
_SPAN_PASSES = 8


class _Binomial:
    """Bands ``P(lo <= X <= hi)`` of ``X ~ Binom(n, t)`` over one array ``t``, each element once.

    A band is taken from the tail the mass is not in (no cancellation): the
    distribution function ``P(X <= k)`` (``bdtr``) where ``n t`` is below the
    band's middle, ``P(X > k)`` (``bdtrc``) above.  Each ``(k, n)`` keeps the
    values of each tail already computed, so bands that share a bound (hot
    spares' throughput asks for ``k = r - 1`` and ``r`` twice each) compute
    an element's tail once.
    """

    def __init__(self, t: np.ndarray) -> None:
        self.t = t
        self._tails: dict[tuple[int, int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self._bands: dict[tuple[int, int, int], np.ndarray] = {}

    def _tail(self, k: int, n: int, upper: bool, where: np.ndarray) -> np.ndarray:
        """``P(X > k)`` if ``upper`` else ``P(X <= k)``, valid at least ``where``."""
        if (k, n, upper) not in self._tails:
            self._tails[k, n, upper] = np.empty(self.t.shape), np.zeros(self.t.shape, dtype=bool)
        values, done = self._tails[k, n, upper]
        todo = where & ~done
        if todo.any():
            values[todo] = (bdtrc if upper else bdtr)(k, n, self.t[todo])
            done |= todo
        return values

    def _cdf(self, k: int, n: int, upper: np.ndarray) -> np.ndarray:
        """``P(X <= k)``, or ``P(X > k)`` where ``upper``."""
        if k < 0 or k >= n:
            return np.where(upper, float(k < 0), float(k >= 0))
        out = np.empty(self.t.shape)
        out[~upper] = self._tail(k, n, False, ~upper)[~upper]
        out[upper] = self._tail(k, n, True, upper)[upper]
        return out

    def between(self, lo: int, hi: int, n: int) -> np.ndarray:
        """``P(lo <= X <= hi)`` (each band computed once)."""
        if (lo, hi, n) not in self._bands:
            upper = n * self.t > 0.5 * (lo + hi)
            if hi < lo:
                self._bands[lo, hi, n] = np.zeros(self.t.shape)
            else:
                a, b = self._cdf(hi, n, upper), self._cdf(lo - 1, n, upper)
                self._bands[lo, hi, n] = np.where(upper, b - a, a - b)
        return self._bands[lo, hi, n]


class ElasticCycle(TabulatedCycle):
    """Elastic DP's restart cycle: quorum ``q``, ``A`` computing groups, stalls, repairs.

    See the module docstring for the law.  ``r = N - A`` is the number of hot
    spares (0: plain elastic DP).

    Parameters
    ----------
    N : int
        Groups, ``>= 1``.
    active : int
        Groups that compute at most, ``A``, ``q <= A <= N``.
    quorum : int
        Fewest groups up for the job to go on, ``1 <= q <= A``.
    rho : float
        Restart ``lambda R >= 0`` (no stall follows events during it).
    stall : float
        Reconfiguration stall ``s = lambda * reconfigure``, ``>= 0``.
    mu : float
        Repairs per mean group lifetime, ``>= 0`` (0: no repairs).
    merged : float
        Share ``epsilon`` of a group's failures that come with another
        failure of the same burst, ``0 <= epsilon < 1`` (default 0): a burst
        over ``m`` groups is one membership change, not ``m``, so an up
        group starts a stall at rate ``1 - epsilon`` (failure domains folded
        into the rate, ``spare_theory.hourly.compose``, step 2).
    exact_up_to : int
        Largest ``K`` solved by the exact chain with repairs (default
        :data:`EXACT_CHAIN_MAX`); above, the scaled binomial hazard.

    Raises
    ------
    ValueError
        For ``quorum``, ``active`` and ``N`` out of order, or ``merged``
        outside ``[0, 1)``.

    Attributes
    ----------
    u, log_q, theta_grid, batch_grid, repairs_rate : numpy.ndarray
        The grid, ``log Q``, the throughput, the throughput with every step
        at the full batch of ``A`` shards (same stalls) and the expected
        rejoins per unit ``u`` on it.
    exact_batch : bool
        ``q >= A``: the job never computes on fewer than ``A`` groups.

    Examples
    --------
    >>> law = ElasticCycle(64, 64, 32)
    >>> u = law.u_at(-1.0)  # where Q = 1/e: about half the groups have failed
    >>> round(u, 4), round(float(law.theta(u)), 4), law.exact_batch
    (0.7524, 0.5355, False)
    >>> spares = ElasticCycle(64, 60, 60, stall=0.001, mu=20.0)
    >>> spares.exact_batch, round(float(spares.theta(1.0) / spares.batch_theta(1.0)), 6)
    (True, 1.0)
    """

    name = "elastic"
    max_segments = BLOCK_SEGMENTS
    #: With a wide quorum margin ``Q`` falls from near 1 to near 0 within one segment.
    split_pieces = True
    #: Beyond the shrunken batch and the idle spares, the time lost is the stalls.
    redundancy_cause = "reconfiguration"

    def __init__(
        self,
        N: int,
        active: int,
        quorum: int,
        *,
        rho: float = 0.0,
        stall: float = 0.0,
        mu: float = 0.0,
        merged: float = 0.0,
        exact_up_to: int = EXACT_CHAIN_MAX,
    ) -> None:
        if not 1 <= quorum <= active <= N:
            raise ValueError(
                f"need 1 <= quorum <= active <= N, got quorum={quorum}, active={active}, N={N}"
            )
        if not 0.0 <= merged < 1.0:
            raise ValueError(f"merged must be in [0, 1), got {merged!r}")
        super().__init__(N, N - active)
        self.active, self.quorum = int(active), int(quorum)
        self.rho, self.stall, self.mu = float(rho), float(stall), float(mu)
        self.merged = float(merged)
        self.exact_up_to = int(exact_up_to)
        #: Without repairs the throughput falls over the whole cycle (no steady state).
        self.finite_run = self.mu == 0.0
        #: Wipe-out level: ``K`` groups down leave fewer than ``q`` up.
        self.K = N - self.quorum + 1
        self.exact_batch = self.quorum >= self.active
        self.idle_share = (N - self.active) / N
        self._chain: tuple[np.ndarray, np.ndarray] | None = None
        self._loss: dict[float, tuple[np.ndarray, ...]] = {}
        if self.mu == 0.0:
            self._no_repairs()
        elif exact_up_to >= self.K:
            self._exact_chain()
        else:
            self._binomial_hazard()
        self.slope = min((self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2]), -1e-300)
        self.theta_grid, self.batch_grid, self.repairs_rate = self._throughputs(self.u)
        free = self.theta_grid, self.batch_grid
        if self._chain is not None:
            self._condition_on_survival(*self._chain)
        # The chain's correction of each binomial throughput, for checkpoint_loss.
        with np.errstate(divide="ignore", invalid="ignore"):
            self._scales = tuple(
                np.where(b > 0, a / b, 1.0)
                for a, b in zip((self.theta_grid, self.batch_grid), free)
            )

    def cache_key(self) -> tuple:
        return (
            type(self).__qualname__,
            self.N,
            self.active,
            self.quorum,
            self.rho,
            self.stall,
            self.mu,
            self.merged,
            self.exact_up_to,
        )

    def __repr__(self) -> str:
        return f"ElasticCycle(N={self.N}, active={self.active}, quorum={self.quorum})"

    # -- the down probability and the grid --------------------------------------

    def down_probability(self, u: ArrayLike) -> np.ndarray:
        """``p(u) = pi (1 - e^{-(1 + mu) u})``: a group down at ``u`` (wipe-outs ignored)."""
        u = np.asarray(u, dtype=float)
        return -np.expm1(-(1.0 + self.mu) * u) / (1.0 + self.mu)

    def _log_q_free(self, u: np.ndarray) -> np.ndarray:
        """``log P(Binom(N, p(u)) < K)``."""
        return np.asarray(stats.binom.logcdf(self.K - 1, self.N, self.down_probability(u)))

    def _extra_points(self, top: float) -> np.ndarray:
        """Early geometric points and points across the first stall after the restart."""
        early = np.geomspace(1e-3 / (self.N * (1.0 + self.mu)), top, EARLY_POINTS)
        stall = self.rho + self.stall * np.linspace(0.0, 1.0, _STALL_POINTS)
        return np.union1d(early, stall[stall > 0])

    def _no_repairs(self) -> None:
        # Uniform in p up to where K failures are all but certain (PlannedCycle's grid).
        N, K = self.N, self.K
        p_end = min((K + 12 * math.sqrt(K) + 20) / N, 1 - 1e-12)
        u = -np.log1p(-np.linspace(0.0, p_end, GRID_STEPS + 1))
        u = np.union1d(u, self._extra_points(min(30.0 / N, float(u[-1]))))
        log_q = self._log_q_free(u)
        # End at the first node below LOG_END (log Q may underflow to -inf beyond).
        below = np.flatnonzero(log_q <= LOG_END)
        end = int(below[0]) + 1 if below.size else u.size
        self.u, self.log_q = u[:end], log_q[:end]

    def _exact_chain(self) -> None:
        G = down_count_generator(self.K, self.mu, groups=self.N)
        mean = min(down_count_mean_passage(self.N, self.K, self.mu), _NEVER)
        span = -LOG_END * mean * 1.2 + 30.0 / self.N
        for _ in range(_SPAN_PASSES):  # until log Q reaches LOG_END well inside the grid
            u = np.linspace(0.0, span, GRID_STEPS + 1)
            log_q = chain_log_survival(G, float(u[1]), GRID_STEPS, mean)
            if log_q[-1] > LOG_END:
                span *= 2.0
                continue
            end = int(np.argmax(log_q <= LOG_END))
            if end >= GRID_STEPS // 2:
                break
            span = float(u[end]) * 1.05
        self.u = np.union1d(u, self._extra_points(float(u[1])))
        self.log_q = np.interp(self.u, u, log_q)
        # Fast mixing: wipe-outs are rare on the chain's relaxation time, and the
        # binomial law given f < K is its quasi-stationary law to that rarity.
        if not fast_mixing(G, mean):
            self._chain = (u, G)

    def _condition_on_survival(self, grid: np.ndarray, G: np.ndarray) -> None:
        """Correct the binomial throughputs by the exact chain's states given survival.

        On the chain's uniform ``grid`` (``u >= rho + s``, where the stall
        window is a whole ``s``): ``theta = sum_f L_f e^{-nu_f s} g_f`` with
        ``L`` the mass not lost at ``u - s`` in each state over ``S(u)``
        (:func:`~spare_theory.cycles.chains.chain_states`) and ``nu_f =
        (N - f) + f mu`` the rate of leaving ``f``; the ratio to the binomial
        value multiplies it on every node (interpolated; clamped below
        ``rho + s``).
        """
        N, A, mu = self.N, self.active, self.mu
        f = np.arange(self.K)
        _, V, L = chain_states(G, float(grid[1]), grid.size - 1, lag=self.stall)
        stay = L * np.exp(-((N - f) * (1.0 - self.merged) + f * mu) * self.stall)
        exact = (
            stay @ (np.minimum(A, N - f) / N),
            stay.sum(axis=1) * (A / N),
            V @ (mu * f),
        )
        binomial = self._throughputs(grid)
        keep = grid >= self.rho + self.stall
        out = []
        for value, chain, free in zip(
            (self.theta_grid, self.batch_grid, self.repairs_rate), exact, binomial
        ):
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(free > 0, chain / free, 1.0)
            ok = keep & np.isfinite(ratio)
            out.append(value * np.interp(self.u, grid[ok], ratio[ok]) if ok.any() else value)
        self.theta_grid, self.batch_grid, self.repairs_rate = out

    def _binomial_hazard(self) -> None:
        N, K = self.N, self.K
        pi = 1.0 / (1.0 + self.mu)
        # Uniform in p up to the stationary share (dense where the down count moves),
        # then the stationary hazard: log Q continues with the last slope.
        p = np.linspace(0.0, pi * (1.0 - 1e-9), GRID_STEPS + 1)
        u = -np.log1p(-p / pi) / (1.0 + self.mu)
        self.u = np.union1d(u, self._extra_points(float(u[1])))
        p = self.down_probability(self.u)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_h = (
                math.log(N - K + 1)
                + stats.binom.logpmf(K - 1, N, p)
                - stats.binom.logcdf(K - 1, N, p)
            )
        h = np.nan_to_num(np.exp(log_h), nan=0.0)
        H = np.concatenate(([0.0], np.cumsum(0.5 * (h[1:] + h[:-1]) * np.diff(self.u))))
        target = min(down_count_mean_passage(N, K, self.mu), _NEVER)
        tail_rate = max(float(h[-1]), 1e-300)

        def log_mean(c: float) -> float:
            body = np.sum(np.exp(-c * H[:-1]) * np.diff(self.u))  # left sums: H is increasing
            return math.log(body + math.exp(-c * H[-1]) / (c * tail_rate)) - math.log(target)

        c = brentq(log_mean, 1e-9, 1e9, xtol=1e-12) if log_mean(1e-9) > 0 > log_mean(1e9) else 1.0
        #: The factor on the binomial hazard that makes the mean time to wipe-out exact.
        self.hazard_scale = float(c)
        self.log_q = -c * H

    # -- throughput -------------------------------------------------------------

    def _throughputs(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``theta``, the full-batch throughput and the rejoin rate at ``u`` (module docstring)."""
        N, K, mu = self.N, self.K, self.mu
        window = np.clip(u - self.rho, 0.0, self.stall)
        theta, batch = self._shares(u, window, self._log_q_free(u))
        p = self.down_probability(u)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            binomial = _Binomial(p)
            rejoins = (
                mu * N * p * binomial.between(0, K - 2, N - 1) / binomial.between(0, K - 1, N)
                if mu > 0
                else np.zeros(u.shape)
            )
        rejoins = np.clip(np.nan_to_num(rejoins, nan=0.0, posinf=0.0), 0.0, mu * N)
        return theta, batch, rejoins

    def _shares(
        self, u: np.ndarray, window: np.ndarray, log_free: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``theta`` and the full-batch throughput at ``u`` with stall exposure ``window``.

        ``log_free``: :meth:`_log_q_free` at ``u`` (shared by callers that vary
        only the window).
        """
        N, A, K, mu = self.N, self.active, self.K, self.mu
        spares = N - A
        before = self.down_probability(u - window)
        a = before * np.exp(-mu * window)
        b = (1.0 - before) * np.exp(-(1.0 - self.merged) * window)
        t = a / (a + b)
        between = _Binomial(t).between
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # sum_{f <= k} w_f = (a + b)^N P(X <= k) and
            # sum_{f <= k} f w_f = N t (a + b)^N P(Y <= k - 1), X ~ Binom(N, t),
            # Y ~ Binom(N - 1, t); all over P(Binom(N, p) < K).
            scale = np.exp(N * np.log(a + b) - log_free)
            full = between(0, min(K, spares) - 1, N)
            shrunk = between(spares, K - 1, N) - t * between(spares - 1, K - 2, N - 1)
            theta = scale * ((A / N) * full + shrunk)
            batch = scale * (A / N) * between(0, K - 1, N)
        # Deep in the tail (log Q far below LOG_END) the ratios lose their digits:
        # keep them within their bounds, 0 <= theta <= batch <= A / N.
        batch = np.clip(np.nan_to_num(batch, nan=0.0, posinf=0.0), 0.0, A / N)
        theta = np.clip(np.nan_to_num(theta, nan=0.0, posinf=0.0), 0.0, batch)
        return theta, batch

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Work lost to the stall that follows a checkpoint of ``d`` ending at ``start``.

        Events during a checkpoint start one stall at its end, so at
        ``start + v``, ``v < s``, the job is stalled if any event happened in
        ``[start - d, start + v]``, an exposure ``max(s, d + v)`` instead of
        ``theta``'s ``s``.  The loss is ``int_a^s (theta_s - theta_{d+v})(start
        + v) dv``, ``a = max(0, s - d)``, with ``theta_e`` the throughput at
        exposure ``e`` (the binomial formula times the chain's correction),
        by 4-point Gauss-Legendre; the same for the full-batch throughput.
        Tabulated on the law's grid once per ``d`` and interpolated.
        ``None`` without stalls or checkpoint time.
        """
        s = self.stall
        if s == 0.0 or d == 0.0:
            return None
        if d not in self._loss:  # tabulated once per checkpoint cost, on the law's grid
            a = max(0.0, s - d)
            x, w = np.polynomial.legendre.leggauss(_LOSS_POINTS)
            v = a + (s - a) * (x + 1) / 2
            u = (self.u[:, None] + v[None, :]).ravel()
            e = np.broadcast_to(d + v[None, :], (self.u.size, v.size)).ravel()
            elapsed, log_free = np.maximum(u - self.rho, 0.0), self._log_q_free(u)
            base = self._shares(u, np.minimum(s, elapsed), log_free)
            longer = self._shares(u, np.minimum(e, elapsed), log_free)
            self._loss[d] = tuple(
                ((base[i] - longer[i]) * np.interp(u, self.u, scale)).reshape(self.u.size, v.size)
                @ w
                * (s - a)
                / 2
                for i, scale in enumerate(self._scales)
            )
        theta, batch = self._loss[d]
        return np.interp(start, self.u, theta), np.interp(start, self.u, batch)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        """Throughput at ``u`` had every step the full batch of ``A`` shards (same stalls)."""
        return np.interp(np.asarray(u, dtype=float), self.u, self.batch_grid)

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        """Exact: the mean passage time of the down count to ``K`` (``mu``: repairs)."""
        return down_count_mean_passage(self.N, self.K, mu)

    def repairs_per_cycle_time(self) -> float:
        """Expected rejoins per unit ``u`` over a cycle (0 without repairs)."""
        return cycle_time_average(self.u, self.log_q, self.repairs_rate)


@cached(maxsize=256, shared=True)
def elastic_cycle(
    N: int,
    active: int,
    quorum: int,
    *,
    rho: float = 0.0,
    stall: float = 0.0,
    mu: float = 0.0,
    merged: float = 0.0,
) -> ElasticCycle:
    """The :class:`ElasticCycle`, built once per set of argument values.

    Examples
    --------
    >>> elastic_cycle(64, 64, 32) is elastic_cycle(64, 64, 32)
    True
    """
    return ElasticCycle(N, active, quorum, rho=rho, stall=stall, mu=mu, merged=merged)
