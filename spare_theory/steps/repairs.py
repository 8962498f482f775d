"""Cycle tables when failed workers are repaired and rejoin (``StepScenario.repair_seconds``).

``docs/step_model.md`` section 11.  A removed worker rejoins after its
repair at the next step boundary.  A worker is out from its failure to its
rejoin; its out time ``m_out`` (half an attempt, SPARe's retry, the repair
past the retry, half a step) sets ``mu = m / m_out`` with up times taken
exponential at the lifetime's mean ``m`` (the group's stationary failure
rate; exact for the exponential law), so a worker is out at ``t`` with
probability ``p(t) = pi + (p_0 - pi) e^{-(1 + mu) t / m}``,
``pi = 1/(1 + mu)``, ``p_0`` the resume burst.  ``Q`` comes from the exact
chains of Rep's consecutive replica sets, or from
:class:`spare_theory.cycles.repairs.RepairCycle` (SPARe: the sharp law
corrected by the per-type and pair chains), started from the burst and
never below the table without repairs (a repair only shrinks the down
set).  The attempt and handling laws per state are those without repairs
at the down share past the retry; rejoins at ``N p(t) / m_out`` each stall
the job ``rejoin_seconds``.  CKPT-only (``r = 1``) is unchanged: every
failure restarts.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate, special

from .._caching import cached
from ..cycles.base import cycle_law_of
from ..cycles.chains import chain_log_survival, down_count_generator, set_mean_absorption
from ..cycles.repairs import repair_cycle
from ..cycles.spare import Spare
from ..placement.replicas import replica_set_sizes
from .cycles import CYCLE_POINTS, StepCycle, cycle_bound_seconds, rep_step_cycle
from .extremes import tabulated_max_normal
from .restarts import mean_life_at, restart_windows
from .scenario import StepScenario
from .spare_cycle import SpareStates, spare_step_cycle

__all__ = ["rep_repair_step_cycle", "spare_repair_step_cycle"]


def _set_log_survival(size: int, mu: float, u: np.ndarray, p0: float = 0.0) -> np.ndarray:
    """``log P(a set of size groups never all down by u)`` on a uniform grid ``u``.

    At ``u = 0`` each member is down with probability ``p0`` (the resume
    burst), independently; ``log P`` at 0 is that of the set not all down.

    The down count is a birth-death chain (``j -> j+1`` at ``size - j``,
    ``j -> j-1`` at ``j mu``, units ``1/lambda``) absorbed at ``size``;
    stepped with the matrix exponential and renormalised at every step.  For
    very fast repairs the step's loss is below the exponential's rounding and
    the chain is quasi-stationary within far less than a step: ``-u / mean``.
    """
    mean = set_mean_absorption(size, mu)
    down = np.arange(size + 1)
    start = special.comb(size, down) * p0**down * (1.0 - p0) ** (size - down)
    log_start = math.log(max(float(start[:size].sum()), 1e-300))
    G = down_count_generator(size, mu)
    return log_start + chain_log_survival(G, float(u[1] - u[0]), u.size - 1, mean, start[:size])


#: Where :func:`_repair_excess` cuts the repair law's tail integral.
_TAIL_QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999)


def _repair_excess(sc: StepScenario, rho: float) -> tuple[float, float]:
    """``(E[(D - rho)^+], P(D > rho))`` for the repair time ``D`` (``scenario.repair_law``).

    ``rho`` is the retry that follows the failure: a repair done by its end
    rejoins at once, a longer one at the next step boundary.
    """
    law, m = sc.repair_law, float(sc.repair_seconds or 0.0)
    if law == "exponential":
        return m * math.exp(-rho / m), math.exp(-rho / m)
    if law == "fixed":
        return max(m - rho, 0.0), float(m > rho)
    # int_rho^inf sf, piecewise between the law's quantiles and, past the last, in log x
    # (sf(e^y) e^y decays at least exponentially): over [rho, inf) at once quad met a
    # lognormal of a few hours against a step-long rho as "probably divergent" and returned
    # -1 s (the audit's scenario 70 of seed 2026: repairs priced as instant).
    quantiles = np.asarray(law.ppf(_TAIL_QUANTILES), dtype=float)
    edges = [rho, *quantiles[quantiles > rho]]
    body = sum(
        integrate.quad(lambda x: float(law.sf(x)), a, b, limit=200)[0]
        for a, b in itertools.pairwise(edges)
    )
    with np.errstate(over="ignore"):  # e^y = inf far out, where logsf = -inf: the term is 0
        far = integrate.quad(
            lambda y: float(np.exp(law.logsf(np.exp(y)) + y)), math.log(edges[-1]), np.inf
        )[0]
    return float(body + far), float(law.sf(rho))


class _Outage:
    """A worker's out time with repairs: the shares and rates every repair table needs.

    ``out_time`` is ``m_out``, the mean time from a worker's failure to its
    rejoin, of which the steps run without it for ``away`` (seconds).
    """

    def __init__(self, sc: StepScenario, out_time: float, away: float) -> None:
        mean_life = mean_life_at(sc.failure_law, sc.clock_age_seconds)
        self.sc, self.out_time = sc, out_time
        self.lam = 1.0 / mean_life
        self.share_out = away / out_time
        self.mu = mean_life / out_time
        self.pi = 1.0 / (1.0 + self.mu)
        self.burst = float(restart_windows(sc).burst.mean())

    def grid(self, r: int, mean_u: float) -> tuple[np.ndarray, np.ndarray]:
        """``(t, u = lambda t)``: the table's grid, to 45 mean absorption times."""
        mu = self.mu
        t_end = min((45.0 * mean_u + 30.0 / (1.0 + mu)) / self.lam, cycle_bound_seconds(self.sc, r))
        t = np.linspace(0.0, t_end, CYCLE_POINTS)
        return t, self.lam * t

    def p_out(self, u: np.ndarray) -> np.ndarray:
        """Chance that a worker is out at ``u`` (from the resume burst to ``pi``)."""
        return self.pi + (self.burst - self.pi) * np.exp(-(1.0 + self.mu) * u)

    def cycle(self, base: StepCycle, t, log_q, p_out, *, tau, phi, partial, noticed, failed, post):
        """The repaired table: ``Q`` never below ``base``'s, rejoin stalls in ``phi``."""
        # Repairs only shrink the down set (a repaired group is down without them
        # too), so a wipe-out with repairs is one without: Q is at least today's.
        log_q = np.maximum(log_q, np.interp(t, base.t, base.log_q, right=-np.inf))
        rejoin = self.sc.groups * p_out / self.out_time * self.sc.rejoin_seconds
        return StepCycle(
            t=t,
            log_q=np.minimum(log_q, 0.0),
            tau=tau,
            phi=np.clip(phi + rejoin, -1.0, 0.95),
            partial=partial,
            noticed=noticed,
            failed=failed,
            post=post,
            tau0=base.tau0,
            ckpt=base.ckpt,
            useful=base.useful,
            burst_handling=base.burst_handling,
            burst_failures=base.burst_failures,
        )


def _part_cost(sc: StepScenario) -> float:
    return sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * sc.allreduce_seconds


@cached(maxsize=256)
def rep_repair_step_cycle(scenario: StepScenario, r: int) -> StepCycle:
    """Rep's cycle table with repairs (module docstring), cached by value.

    ``Q`` from the exact down-count chains of the consecutive replica sets
    (the last one smaller), each started from the resume burst; the
    ``r``-fold attempt at the out share past the step.  ``r = 1``
    (CKPT-only) is the table without repairs.  No argument checks; needs
    ``scenario.repairs``.

    Parameters
    ----------
    scenario : StepScenario
        With ``repair_seconds`` set.
    r : int
        Replicas per set.

    Returns
    -------
    StepCycle

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.cycles import rep_step_cycle
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = replace(paper_scenario(200), repair_seconds=600.0)
    >>> cyc = rep_repair_step_cycle(sc, 3)
    >>> cyc.t.size, rep_repair_step_cycle(sc, 1) is rep_step_cycle(paper_scenario(200), 1)
    (1000, True)
    """
    sc = scenario
    base = rep_step_cycle(sc.without_repairs(), r)
    if r == 1:
        return base
    N = sc.groups
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    tau_bar = float(c * r * (1.0 + v * tabulated_max_normal(N, N)) + a)
    excess, later = _repair_excess(sc, 0.0)  # Rep never retries
    out = _Outage(sc, tau_bar / 2 + excess + later * tau_bar / 2, excess + later * tau_bar / 2)
    sizes: dict[int, int] = {}  # consecutive ids: the last set may be smaller
    for size in replica_set_sizes(N, r, layout="consecutive").tolist():
        sizes[size] = sizes.get(size, 0) + 1
    rate = sum(count / set_mean_absorption(size, out.mu) for size, count in sizes.items())
    t, u = out.grid(r, 1.0 / rate)
    log_q = np.zeros(t.size)
    for size, count in sizes.items():
        if count:
            log_q = log_q + count * _set_log_survival(size, out.mu, u, out.burst)
    p_out = out.p_out(u)
    p = p_out * out.share_out  # out and missed by the steps (past its retry, before its rejoin)
    failed = N * p
    working = np.maximum(N - failed, 1.0)
    e = tabulated_max_normal(N, working)
    tau = c * r * (1.0 + v * e) + a
    flagged = -np.expm1(-working * out.lam * tau)
    return out.cycle(
        base,
        t,
        log_q,
        p_out,
        tau=tau,
        phi=flagged * _part_cost(sc) / tau,
        partial=flagged / tau,
        noticed=working * out.lam,
        failed=failed,
        post=c * r * v * e + a,
    )


@cached(maxsize=256)
def spare_repair_step_cycle(scenario: StepScenario, r: int) -> StepCycle:
    """SPARe's cycle table with repairs (module docstring), cached by value.

    The attempt and the retry at the stationary level come from three
    fixed-point passes from the failure-free state; ``Q`` from
    :func:`spare_theory.cycles.repairs.repair_cycle` shifted to the time its
    down share reaches the burst; per state, the attempt, retry and
    handling laws of :class:`~spare_theory.steps.spare_cycle.SpareStates` at
    the out share past the retry.  ``r = 1`` is the table without repairs.
    No argument checks; needs ``scenario.repairs`` and ``microbatches = 1``.

    Parameters
    ----------
    scenario : StepScenario
        With ``repair_seconds`` set.
    r : int
        Redundancy.

    Returns
    -------
    StepCycle

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> from spare_theory.steps.spare_cycle import spare_step_cycle
    >>> sc = replace(paper_scenario(200), repair_seconds=600.0)
    >>> bool(spare_repair_step_cycle(sc, 9).log_q[-1] >= spare_step_cycle(sc, 9).log_q[-1])
    True
    """
    sc = scenario
    base = spare_step_cycle(sc.without_repairs(), r)
    if r == 1:
        return base
    N, mean_life = sc.groups, mean_life_at(sc.failure_law, sc.clock_age_seconds)
    a = sc.allreduce_seconds
    st = SpareStates(sc, r)
    sf = np.exp(st.log_sf)
    log_binom = st.log_binomial(N)
    f, n, tau_f = st.f, st.workers, st.tau

    def weights(p: float) -> np.ndarray:
        log_w = log_binom + np.where(f > 0, f * math.log(max(p, 1e-300)), 0.0)
        log_w = log_w + (N - f) * math.log1p(-min(p, 1 - 1e-16))
        return np.exp(log_w - log_w.max())

    # The attempt and the retry at the stationary level (fixed-point passes
    # from the failure-free state).
    tau_bar, rho = float(tau_f[0]), float(st.p_retry[0] * st.retry_cost[0])
    for _ in range(3):
        excess, later = _repair_excess(sc, rho)
        out_time = tau_bar / 2 + rho + excess + later * tau_bar / 2
        elevated = (excess + later * tau_bar / 2) / (mean_life + out_time)
        w = weights(elevated) * sf
        tau_bar = float(w.sum() / (w / tau_f).sum())
        rho = float((w * st.p_retry * st.retry_cost).sum() / w.sum())
    # As fitted: the last pass's out time, with the attempt and retry it updated.
    out = _Outage(sc, out_time, excess + later * tau_bar / 2)
    cycle = repair_cycle(cycle_law_of(Spare, N, r), out.mu)
    t, u = out.grid(r, cycle.mean_time)
    # The burst starts the cycle with about N burst workers out: the
    # repair cycle from the time its down share reaches the burst.
    u_b = -math.log1p(-min(out.burst / out.pi, 1.0 - 1e-9)) / (1.0 + out.mu)
    shifted = np.asarray(cycle.logq(u + u_b), dtype=float)
    log_q = shifted - shifted[0] + float(base.log_q[0])
    p_out = out.p_out(u)
    p = p_out * out.share_out  # out and missed by the steps (past its retry, before its rejoin)
    part_cost = _part_cost(sc)
    cols = np.empty((5, t.size))
    for i, p_i in enumerate(p):
        mix = weights(float(p_i))
        w, w_next = mix * sf, mix * np.append(sf[1:], 0.0)
        total = w.sum()
        rate_f = n * out.lam
        mu_f = rate_f * tau_f
        safe = np.maximum(mu_f, 1e-300)
        per_attempt = np.where(mu_f > 1e-12, -np.expm1(-mu_f) / safe, 1.0)
        retries = np.where(mu_f > 1e-12, -np.expm1(-mu_f * st.p_retry) / safe, st.p_retry)
        handling = per_attempt * part_cost + retries * st.retry_cost
        cols[:, i] = (
            (w / tau_f).sum() / total,
            (w_next * rate_f * handling).sum() / total,
            (w_next * rate_f * per_attempt).sum() / total,
            (w * rate_f).sum() / total,
            (w * f).sum() / total,
        )
    inv_tau, phi, partial, noticed, failed = cols
    return out.cycle(
        base,
        t,
        log_q,
        p_out,
        tau=1.0 / inv_tau,
        phi=phi,
        partial=partial,
        noticed=noticed,
        failed=failed,
        post=np.full(t.size, a),
    )
