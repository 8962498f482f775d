"""Time to train under domain failures and lemon groups: the renewal-reward model.

The renewal-reward estimate of :mod:`spare_theory.hourly.renewal` needs a cycle law:
the survival ``Q(u)`` of a restart cycle and the throughput ``theta(u)`` given
survival, in units ``u = lambda t`` of the independent group failure rate
``lambda = gpus_per_group / gpu_mtbf_hours`` (``docs/theory.md`` section 5).

* **Domain failures** (``Scenario.domain_size``, ``domain_mtbf_hours``): every
  domain fails as a whole at rate ``lambda_D = 1 / domain_mtbf_hours`` beside
  the independent failures, so a group fails at ``lambda (1 + delta)``,
  ``delta = lambda_D / lambda``, a share ``s = delta / (1 + delta)`` of it
  from its domain.  :class:`DomainSpare` is SPARe on the domain-aware
  placement: ``Q(u) = Q_dom((1 + delta) u)`` from
  :func:`~spare_theory.wipeout.domains.domain_wipeout_law` and

      theta(u) = sum_rows P(row, no wipe-out) E[1 / ceil(N / (N - F))] / Q(u),

  ``F = fixed + Binom(pool, q_I)`` in each row of
  :meth:`~spare_theory.wipeout.domains.DomainWipeoutLaw.joint_logsf` (``S*`` taken as
  ``ceil(N / (N - f))`` as in the independent model; the failures are not
  re-weighted by survival within a row, a small bias measured against the
  simulation).  The model covers the domain-aware placement only (the closed
  form); other placements are simulated
  (:mod:`spare_theory.hourly.domains_sim`).
* **Lemon groups** (``lemon_fraction`` ``phi``, ``lemon_rate_factor``
  ``kappa``): with lemons placed uniformly at random, a group has failed by
  ``u`` with probability ``p(u) = phi (1 - e^{-kappa u}) + (1 - phi)(1 - e^{-u})``
  and, averaged over the placement of the lemons, groups are independent;
  ``Q`` and ``theta`` depend on the lifetimes only through ``p(u)``, so the
  SPARe cycle law with :class:`LemonLifetimes` is exact on that average.  A
  run keeps one lemon placement; for ``N`` in the hundreds and more the
  wipe-out of ``N`` types self-averages (checked against the simulation).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom

from .._validation import as_count, as_real
from ..cycles.laws import CycleLaw, Spare, TabulatedCycle, cycle_law
from ..wipeout.domains import domain_wipeout_law
from .renewal import TrainingEstimate, evaluate, hours_grid
from .scenario import Scenario, check_checkpoint_interval, check_plan

__all__ = [
    "DomainPlan",
    "DomainSpare",
    "LemonLifetimes",
    "domain_cycle_law",
    "domain_optimal_plan",
    "domain_time_to_train",
    "scenario_with_domain_share",
]

_GRID_POINTS = 400


@dataclass(frozen=True)
class LemonLifetimes:
    """Group lifetimes with a share ``phi`` of lemons failing ``kappa`` times as often.

    ``p(u) = phi (1 - e^{-kappa u}) + (1 - phi)(1 - e^{-u})`` in units of the
    ordinary group's rate; the methods of
    :class:`~spare_theory.cycles.laws.ExponentialLifetimes`.

    Examples
    --------
    >>> law = LemonLifetimes(0.1, 10.0)
    >>> round(float(law.cdf(0.1)), 6), round(float(law.ppf(law.cdf(0.1))), 9)
    (0.148858, 0.1)
    """

    lemon_fraction: float
    lemon_rate_factor: float

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u))``."""
        u = np.asarray(u, dtype=float)
        phi, k = self.lemon_fraction, self.lemon_rate_factor
        with np.errstate(divide="ignore"):
            return np.minimum(np.logaddexp(np.log(phi) - k * u, np.log1p(-phi) - u), 0.0)

    def cdf(self, u: ArrayLike) -> np.ndarray:
        """``p(u)``."""
        return -np.expm1(self.logsf(u))

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        """``log p(u)``, ``-inf`` at ``u = 0``."""
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(u))

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` with ``p(u) = p`` (bisection between the two exponential bounds)."""
        p = np.asarray(p, dtype=float)
        with np.errstate(divide="ignore"):
            hi = -np.log1p(-p)
        lo = hi / self.lemon_rate_factor
        hi = np.where(np.isfinite(hi), hi, 745.0)
        for _ in range(80):
            mid = (lo + hi) / 2
            below = self.cdf(mid) < p
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return (lo + hi) / 2


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

    Examples
    --------
    >>> law = DomainSpare(256, 6, 16, 0.25)
    >>> round(float(np.exp(law.logq(0.3))), 4), round(float(law.theta(0.3)), 4)
    (0.8113, 0.4999)
    """

    name = "spare"

    def __init__(self, N: int, r: int, domain_size: int, domain_rate_ratio: float) -> None:
        super().__init__(N, r)
        self.delta = domain_rate_ratio
        share = domain_rate_ratio / (1 + domain_rate_ratio)
        self.wipeout = domain_wipeout_law(N, r, domain_size, share)
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

    def __repr__(self) -> str:
        return (
            f"DomainSpare(N={self.N}, r={self.r}, domain_size={self.wipeout.domain_size}, "
            f"delta={self.delta:g})"
        )


@functools.lru_cache(maxsize=256)
def _domain_spare(N: int, r: int, m: int, delta: float) -> DomainSpare:
    return DomainSpare(N, r, m, delta)


def domain_cycle_law(scenario: Scenario, r: int) -> CycleLaw:
    """The SPARe cycle law of a scenario with domain failures or lemons (cached).

    Domain failures: :class:`DomainSpare` (domain-aware placement).  Lemons:
    :class:`~spare_theory.cycles.laws.Spare` with :class:`LemonLifetimes`.
    Neither: today's :func:`~spare_theory.cycles.laws.cycle_law`.  ``r = 1``
    is CKPT-only with every failure counted (domain events included).

    Parameters
    ----------
    scenario : Scenario
        With ``domain_size`` and ``domain_mtbf_hours`` set, or lemons, or
        neither (not both: the model covers one at a time).
    r : int
        Redundancy (a modular ruler must exist at ``N``).

    Returns
    -------
    CycleLaw

    Raises
    ------
    ValueError
        Naming the fields: domains and lemons together, a ``domain_size``
        that does not divide ``N`` or leaves fewer than ``r`` domains.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, domain_size=16,
    ...               domain_mtbf_hours=20000.0)
    >>> domain_cycle_law(sc, 6)
    DomainSpare(N=256, r=6, domain_size=16, delta=0.316731)
    """
    _, r = check_plan(scenario, "spare", r)
    N = scenario.groups
    lemons = scenario.lemon_fraction > 0 and scenario.lemon_rate_factor > 1
    if scenario.domain_size is not None and scenario.domain_mtbf_hours is not None:
        if lemons:
            raise ValueError(
                "the model takes domain failures or lemons (lemon_fraction), not both; "
                "simulate the combination with simulate_domain_training"
            )
        delta = 1.0 / (scenario.domain_mtbf_hours * scenario.group_failure_rate_per_hour)
        if r == 1:
            # Any failure ends the cycle: rate N lambda + D lambda_D = N lambda (1 + delta D / N).
            D = -(-N // scenario.domain_size)
            return cycle_law("ckpt", N, 1, _Scaled(delta * D / N))
        return _domain_spare(N, r, scenario.domain_size, round(delta, 12))
    if lemons:
        lifetimes = LemonLifetimes(scenario.lemon_fraction, scenario.lemon_rate_factor)
        return Spare(N, r, lifetimes) if r > 1 else cycle_law("ckpt", N, 1, lifetimes)
    return cycle_law("spare", N, r)


@dataclass(frozen=True)
class _Scaled:
    """Exponential lifetimes at rate ``1 + extra`` (CKPT-only with domain events)."""

    extra: float

    def logsf(self, u: ArrayLike) -> np.ndarray:
        return -(1 + self.extra) * np.asarray(u, dtype=float)

    def cdf(self, u: ArrayLike) -> np.ndarray:
        return -np.expm1(self.logsf(u))

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(u))

    def ppf(self, p: ArrayLike) -> np.ndarray:
        return -np.log1p(-np.asarray(p, dtype=float)) / (1 + self.extra)


def _best_interval(scenario: Scenario, law: CycleLaw) -> float:
    """The checkpoint interval (minutes) minimising the hours: log grid, then two zooms."""
    lam = scenario.group_failure_rate_per_hour
    scale_minutes = 60 * law.mean_u / lam
    young = math.sqrt(2 * max(scenario.checkpoint_minutes, 1 / 60) * scale_minutes)
    log_tau = np.linspace(math.log(young / 100), math.log(max(scale_minutes / 2, young)), 160)
    for step in (0.05, 0.005):
        _, ratio = hours_grid(scenario, law, log_tau)
        best = float(log_tau[int(np.argmin(ratio))])
        log_tau = np.asarray(best + step * np.arange(-10, 11), dtype=np.float64)
    _, ratio = hours_grid(scenario, law, log_tau)
    return float(math.exp(log_tau[int(np.argmin(ratio))]))


def domain_time_to_train(
    scenario: Scenario, r: int, checkpoint_interval_minutes: float | None = None
) -> TrainingEstimate:
    """Expected time to train with SPARe under domain failures or lemons (renewal model).

    ``hours = W E[X] / E[P]`` (:mod:`spare_theory.hourly.renewal`) with the cycle law
    of :func:`domain_cycle_law`; domain failures on the domain-aware placement.

    Parameters
    ----------
    scenario : Scenario
        The run, with its domain or lemon fields.
    r : int
        Redundancy.
    checkpoint_interval_minutes : float, optional
        Compute minutes between checkpoints; ``None``: the best (log grid and
        two zooms, to a log step of 0.005).

    Returns
    -------
    TrainingEstimate

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               domain_size=16, domain_mtbf_hours=5000.0)
    >>> round(domain_time_to_train(sc, 6, 60.0).hours, 1)
    104.5
    """
    law = domain_cycle_law(scenario, r)
    tau = (
        _best_interval(scenario, law)
        if checkpoint_interval_minutes is None
        else check_checkpoint_interval(checkpoint_interval_minutes)
    )
    return evaluate(scenario, law, tau, strategy="spare")


@dataclass(frozen=True)
class DomainPlan:
    """Best SPARe plan under domain failures or lemons (:func:`domain_optimal_plan`).

    Attributes
    ----------
    estimate : TrainingEstimate
        At the best ``r`` and interval.
    r_values : tuple of int
        Redundancies evaluated.
    hours_by_r : tuple of float
        Best hours at each of them.

    Examples
    --------
    >>> from spare_theory.hourly.renewal import TrainingEstimate
    >>> DomainPlan.__dataclass_fields__.keys()
    dict_keys(['estimate', 'r_values', 'hours_by_r'])
    """

    estimate: TrainingEstimate
    r_values: tuple[int, ...]
    hours_by_r: tuple[float, ...]

    @property
    def r(self) -> int:
        """The best redundancy."""
        return self.estimate.r


def domain_optimal_plan(scenario: Scenario, r_values: ArrayLike) -> DomainPlan:
    """The best ``r`` among ``r_values`` (each at its best interval) under domains or lemons.

    Parameters
    ----------
    scenario : Scenario
        The run, with its domain or lemon fields.
    r_values : array_like of int
        Redundancies to try (each needs a modular ruler at ``N`` and, with
        domains, at most ``N / domain_size`` domains); ties go to the smaller.

    Returns
    -------
    DomainPlan

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               lemon_fraction=0.05, lemon_rate_factor=10.0)
    >>> plan = domain_optimal_plan(sc, [4, 6, 8])
    >>> plan.r, [round(h, 1) for h in plan.hours_by_r]
    (6, [101.6, 100.1, 101.1])
    """
    values = tuple(sorted({as_count(r, "r_values") for r in np.atleast_1d(r_values).tolist()}))
    estimates = [domain_time_to_train(scenario, r) for r in values]
    hours = tuple(e.hours for e in estimates)
    return DomainPlan(estimates[int(np.argmin(hours))], values, hours)


def scenario_with_domain_share(
    scenario: Scenario, domain_size: int, domain_failure_share: float
) -> Scenario:
    """The scenario with a share ``s`` of every group's failure rate moved to its domain.

    The total failure rate of a group stays ``lambda = M / gpu_mtbf_hours``:
    the independent part becomes ``(1 - s) lambda`` (``gpu_mtbf_hours``
    divided by ``1 - s``) and every domain fails at ``s lambda``.  ``s = 0``
    returns the scenario without domains.

    Parameters
    ----------
    scenario : Scenario
        Base run (no domains yet).
    domain_size : int
        Groups per domain.
    domain_failure_share : float
        ``0 <= s < 1``.

    Returns
    -------
    Scenario

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=2048, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> d = scenario_with_domain_share(sc, 16, 0.25)
    >>> d.gpu_mtbf_hours, d.domain_mtbf_hours
    (2666.6666666666665, 1000.0)
    """
    s = as_real(domain_failure_share, "domain_failure_share", minimum=0.0, maximum=1.0)
    if s >= 1:
        raise ValueError(f"domain_failure_share must be < 1, got {s}")
    fields = {
        name: getattr(scenario, name)
        for name in scenario.__dataclass_fields__
        if name not in ("gpu_mtbf_hours", "domain_size", "domain_mtbf_hours")
    }
    if s == 0:
        return Scenario(gpu_mtbf_hours=scenario.gpu_mtbf_hours, **fields)
    lam = scenario.group_failure_rate_per_hour
    return Scenario(
        gpu_mtbf_hours=scenario.gpu_mtbf_hours / (1 - s),
        domain_size=domain_size,
        domain_mtbf_hours=1.0 / (s * lam),
        **fields,
    )
