"""Cycle laws under correlated failures: failure domains and lemon groups.

In units ``u = lambda t`` of the independent group failure rate ``lambda``
(``docs/theory.md`` section 5):

* **Domain failures**: every domain of ``domain_size`` groups fails as a
  whole at rate ``lambda_D`` beside the independent failures, so a group
  fails at ``lambda (1 + delta)``, ``delta = lambda_D / lambda``.
  :class:`DomainSpare` is SPARe on the domain-aware placement (or the
  ruler, whose hosts may share a domain):
  ``Q(u) = Q_dom((1 + delta) u)`` from
  :func:`~spare_theory.wipeout.domains.domain_wipeout_law` and

      theta(u) = sum_rows P(row, no wipe-out) E[1 / ceil(N / (N - F))] / Q(u),

  ``F = fixed + Binom(pool, q_I)`` in each row of
  :meth:`~spare_theory.wipeout.domains.DomainWipeoutLaw.joint_logsf` (the
  failures are not re-weighted by survival within a row, a small bias
  measured against the simulation).  CKPT-only under domain events is
  :class:`~spare_theory.cycles.rep.CkptOnly` with :class:`ScaledExponential`
  lifetimes.
* **Lemon groups** (a share ``phi`` failing ``L`` times as often, ``L`` the
  scenario's ``lemon_rate_factor``, placed
  uniformly at random): a group has failed by ``u`` with probability
  ``p(u) = phi (1 - e^{-L u}) + (1 - phi)(1 - e^{-u})`` and, averaged over
  the placement of the lemons, groups are independent; any law depends on
  the lifetimes only through ``p(u)``, so a law with :class:`LemonLifetimes`
  is exact on that average.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom

from ..lifetimes.laws import LogsfLaw
from ..wipeout.domains import domain_wipeout_law
from .base import TabulatedCycle

__all__ = ["DomainSpare", "FromFailure", "LemonLifetimes", "PooledLemons", "ScaledExponential"]

_GRID_POINTS = 400


@dataclass(frozen=True)
class LemonLifetimes(LogsfLaw):
    """Group lifetimes with a share ``phi`` of lemons failing ``L`` times as often.

    ``p(u) = phi (1 - e^{-L u}) + (1 - phi)(1 - e^{-u})`` in units of the
    ordinary group's rate; the methods of
    :class:`~spare_theory.lifetimes.laws.ExponentialLifetimes`.  With another
    ``base`` law in dimensionless time (stationary renewal clocks,
    :class:`~spare_theory.lifetimes.laws.EquilibriumLifetimes`), a lemon's
    clock runs ``L`` times as fast:
    ``p(u) = phi p_b(L u) + (1 - phi) p_b(u)``.

    Examples
    --------
    >>> law = LemonLifetimes(0.1, 10.0)
    >>> round(float(law.cdf(0.1)), 6), round(float(law.ppf(law.cdf(0.1))), 9)
    (0.148858, 0.1)
    """

    lemon_fraction: float
    lemon_rate_factor: float
    base: Any = None

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u))``."""
        u = np.asarray(u, dtype=float)
        phi, k = self.lemon_fraction, self.lemon_rate_factor
        if self.base is None:
            lemon, plain = -k * u, -u
        else:
            lemon, plain = self.base.logsf(k * u), self.base.logsf(u)
        with np.errstate(divide="ignore"):
            return np.minimum(np.logaddexp(np.log(phi) + lemon, np.log1p(-phi) + plain), 0.0)

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` with ``p(u) = p`` (bisection between the two exponential bounds)."""
        p = np.asarray(p, dtype=float)
        target = self.log_complement(p)
        hi = -target if self.base is None else np.asarray(self.base.ppf(p), dtype=float)
        lo = hi / self.lemon_rate_factor
        return self._bisect(target, lo, np.where(np.isfinite(hi), hi, 745.0))


@dataclass(frozen=True)
class PooledLemons(LogsfLaw):
    """The lifetimes a CKPT-only cycle sees with a fixed share ``phi`` of lemon groups.

    Every failure ends a CKPT-only cycle, so its survival is the product over
    the groups, ``Q = prod_g (1 - p_g(u))``; with ``phi N`` lemons (clocks
    ``L`` times as fast) that is ``exp(N log(1 - p(u)))`` with the
    geometric mixture ``log(1 - p(u)) = (1 - phi) log S_b(u) + phi log S_b(L u)``,
    exact for any placement of the lemons, where :class:`LemonLifetimes`'
    arithmetic mixture (one group's marginal law) overstates ``Q``.  The
    methods of :class:`~spare_theory.lifetimes.laws.ExponentialLifetimes`;
    ``base=None`` is the exponential law.

    Examples
    --------
    >>> law = PooledLemons(0.1, 10.0)
    >>> round(float(law.logsf(1.0)), 6), round(float(law.ppf(law.cdf(0.3))), 9)
    (-1.9, 0.3)
    """

    lemon_fraction: float
    lemon_rate_factor: float
    base: Any = None

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``(1 - phi) log S_b(u) + phi log S_b(L u)``."""
        u = np.asarray(u, dtype=float)
        phi, k = self.lemon_fraction, self.lemon_rate_factor
        if self.base is None:
            return -(1.0 + (k - 1.0) * phi) * u
        return (1 - phi) * np.asarray(self.base.logsf(u)) + phi * np.asarray(self.base.logsf(k * u))


@dataclass(frozen=True)
class FromFailure(LogsfLaw):
    """Stationary renewal clocks seen from a failure: the cycle of a law that ends at each one.

    A CKPT-only cycle starts at a failure (its restart begins there), not at
    a random instant, so its survival is the Palm law of the ``N`` clocks'
    superposed failures, ``Q_0(u) = -Q'(u) / (-Q'(0)) = Q(u) h(u) / h(0)``,
    with ``Q = exp(N log S_b(u))`` the stationary survival of ``base`` and
    ``h = -d log S_b / du`` its hazard: the clock that fired is at age 0 and
    the others are stationary (Palm-Khintchine).  For a clock law of
    decreasing hazard (Weibull ``k < 1``) the clock that fired fails again
    soon, which ``Q`` alone misses.  As a per-group law:
    ``log S(u) = log S_b(u) + (log h(u) - log h(0)) / N``.  The work kept in
    a CKPT-only cycle is a function of its length alone, so the
    renewal-reward hours over these (dependent) gaps are exact.

    ``base``: :class:`~spare_theory.lifetimes.laws.EquilibriumLifetimes`, or
    :class:`PooledLemons` over it (a lemon's clock ``L`` times as fast:
    ``h = (1 - phi) h_e(u) + phi L h_e(L u)``); ``h_e(u)`` is
    ``S(m u) / S_e(u)`` for a clock law of mean ``m``.

    Examples
    --------
    >>> from scipy import stats
    >>> from spare_theory.lifetimes.laws import EquilibriumLifetimes
    >>> eq = EquilibriumLifetimes(stats.weibull_min(0.78, scale=3.0))
    >>> law = FromFailure(eq, 16)
    >>> float(law.logsf(0.0)), bool(law.logsf(0.05) < eq.logsf(0.05))
    (0.0, True)
    >>> round(float(law.ppf(law.cdf(0.3))), 9)
    0.3
    """

    base: Any
    N: int

    def _log_hazard(self, u: np.ndarray) -> np.ndarray:
        """``log(h(u) / h(0))`` (module docstring of the class)."""
        eq, phi, k = self.base, 0.0, 1.0
        if isinstance(eq, PooledLemons):
            eq, phi, k = eq.base, eq.lemon_fraction, eq.lemon_rate_factor
        law = eq.law
        mean = float(law.mean())

        def clock(v: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore"):
                out = np.asarray(law.logsf(v * mean), dtype=float) - np.asarray(eq.logsf(v))
            return np.where(np.isfinite(out), out, -np.inf)

        if phi == 0.0:
            return clock(u)
        with np.errstate(divide="ignore"):
            mixed = np.logaddexp(np.log1p(-phi) + clock(u), math.log(phi * k) + clock(k * u))
        return mixed - math.log1p((k - 1.0) * phi)

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log S_b(u) + (log h(u) - log h(0)) / N``."""
        u = np.asarray(u, dtype=float)
        return np.minimum(np.asarray(self.base.logsf(u)) + self._log_hazard(u) / self.N, 0.0)


def _inverse_stacks(
    N: int, r: int, fixed: np.ndarray, pool: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """``E[1 / ceil(N / (N - F))]``, ``F = fixed + Binom(pool, x)``, per row.

    ``1/c = sum_{k >= c} (1/k - 1/(k+1))``, so ``E[1/c] = sum_k (1/k - 1/(k+1)) P(c <= k)``
    with ``c <= k`` iff ``F <= N - N/k``; states with ``c > r`` cannot survive and
    count ``1/(r+1)``.
    """
    out = np.full(np.broadcast_shapes(fixed.shape, pool.shape, x.shape), 1.0 / (r + 1))
    for k in range(1, r + 1):
        limit = math.floor(N - N / k + 1e-9) - fixed
        out += (1.0 / k - 1.0 / (k + 1)) * binom.cdf(limit, pool, x)
    return out


class DomainSpare(TabulatedCycle):
    """SPARe on the domain-aware placement under domain failures: ``Q`` and ``theta``.

    Tabulated on 400 points uniform in ``1 - Q`` plus geometric points over
    the first failures; ``log Q`` interpolated linearly and extrapolated with
    its last slope (module docstring for the formulas).

    Parameters
    ----------
    N, r : int
        Groups and redundancy.
    domain_size : int
        Groups per domain (divides ``N``).
    domain_rate_ratio : float
        ``delta = lambda_D / lambda``: a domain's failure rate over a group's
        independent failure rate, ``>= 0``.
    placement : {"domain_aware", "ruler"}
        Where the hosts sit (:func:`~spare_theory.wipeout.domains.domain_wipeout_law`).

    Examples
    --------
    >>> law = DomainSpare(256, 6, 16, 0.25)
    >>> round(float(np.exp(law.logq(0.3))), 4), round(float(law.theta(0.3)), 4)
    (0.8113, 0.4999)
    """

    name = "domain_spare"
    cost_grows = True

    def __init__(
        self,
        N: int,
        r: int,
        domain_size: int,
        domain_rate_ratio: float,
        placement: str = "domain_aware",
    ) -> None:
        super().__init__(N, r)
        self.delta = domain_rate_ratio
        share = domain_rate_ratio / (1 + domain_rate_ratio)
        self.wipeout = domain_wipeout_law(N, r, domain_size, share, placement)
        scale = 1 + domain_rate_ratio
        # Locate the body of Q on a coarse grid in u (independent-rate units).
        hi = 1.0 / N
        while float(self.wipeout.logsf(scale * hi)) > -40:
            hi *= 2
        coarse = np.linspace(0.0, hi, 257)
        log_q = np.asarray(self.wipeout.logsf(scale * coarse))
        levels = np.linspace(0.0, 1.0 - math.exp(-40), _GRID_POINTS)
        body = np.interp(levels, 1.0 - np.exp(log_q), coarse)
        early = np.geomspace(1e-3 / N, 30.0 / N, _GRID_POINTS // 4)
        self.u = np.union1d(np.union1d(body, early[early < hi]), coarse)
        fixed, _, terms = self.wipeout.joint_logsf(scale * self.u)
        # theta depends on a row only through its fixed failures: merge rows first.
        order = np.argsort(fixed, kind="stable")
        merged, starts = np.unique(fixed[order], return_index=True)
        top = terms.max(axis=0)
        safe = np.where(np.isfinite(top), top, 0.0)
        w = np.add.reduceat(np.exp(terms[order] - safe[None, :]), starts, axis=0)
        total = w.sum(axis=0)
        with np.errstate(divide="ignore"):
            self.log_q = safe + np.log(total)
        x = -np.expm1(-scale * (1 - share) * self.u)
        inv = _inverse_stacks(N, r, merged[:, None], N - merged[:, None], x[None, :])
        if self.wipeout.route == "independent":
            inv = _inverse_stacks(N, r, merged[:, None], 0 * merged[:, None], x[None, :])
        self.theta_grid = (w * inv).sum(axis=0) / np.where(total > 0, total, 1.0)
        self.log_q = np.minimum.accumulate(np.minimum(self.log_q, 0.0))
        self.slope = (self.log_q[-1] - self.log_q[-2]) / (self.u[-1] - self.u[-2])

    def cache_key(self) -> tuple:
        return (
            type(self).__qualname__,
            self.N,
            self.r,
            self.wipeout.domain_size,
            self.delta,
            self.wipeout.placement,
        )

    def __repr__(self) -> str:
        ruler = ", placement='ruler'" if self.wipeout.placement == "ruler" else ""
        return (
            f"DomainSpare(N={self.N}, r={self.r}, domain_size={self.wipeout.domain_size}, "
            f"delta={self.delta:g}{ruler})"
        )


@dataclass(frozen=True)
class ScaledExponential(LogsfLaw):
    """Exponential lifetimes at rate ``1 + extra`` in units of the group rate.

    CKPT-only under domain events: any failure ends the cycle, at rate
    ``N lambda + D lambda_D = N lambda (1 + extra)``.  With another ``base``
    law in dimensionless time (stationary clocks, lemons), the domain events
    come on top of it: ``log(1 - p(u)) = log(1 - p_b(u)) - extra u``, exact
    for CKPT-only (the events are independent of the groups' clocks).

    Examples
    --------
    >>> law = ScaledExponential(0.5)
    >>> round(float(law.cdf(1.0)), 6), round(float(law.ppf(law.cdf(0.2))), 12)
    (0.77687, 0.2)
    >>> mixed = ScaledExponential(0.5, LemonLifetimes(0.1, 4.0))
    >>> round(float(mixed.ppf(mixed.cdf(0.2))), 9)
    0.2
    """

    extra: float
    base: Any = None

    def logsf(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        if self.base is None:
            return -(1 + self.extra) * u
        return np.asarray(self.base.logsf(u), dtype=float) - self.extra * u

    def ppf(self, p: ArrayLike) -> np.ndarray:
        p = np.asarray(p, dtype=float)
        target = self.log_complement(p)
        if self.base is None:
            return -target / (1 + self.extra)
        # Bisection below the base law's u (the events only bring failures earlier).
        lo = np.zeros(p.shape)
        with np.errstate(divide="ignore"):
            hi = np.minimum(np.asarray(self.base.ppf(p), dtype=float), -target / self.extra)
        return self._bisect(target, lo, np.where(np.isfinite(hi), hi, 745.0))
