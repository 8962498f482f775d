"""Elastic DP's and hot spares' cycle table in the published simulator's step world.

The semantics are those of :mod:`spare_theory.steps.elastic_run`: ``N``
workers, at most ``A`` compute (``A = N - r``), quorum ``q``, a wipe-out at
``K = N - q + 1`` down; a failure seen at an attempt's all-reduce voids it,
then a stall of ``s`` (``reconfigure_seconds``) that any event starts over;
rejoins stall at the next attempt start; checkpoints written by any live
group.  ``docs/theory.md`` section 8 (the step level) has the derivation.

**States.**  ``t`` counts from the resume; at ``t = 0`` each worker is down
with the resume burst ``pi`` (:mod:`spare_theory.steps.restarts`, five
classes of the restart length).  Without repairs a failed worker stays down,
so the down count is ``Binom(N, p(t))``, ``p = pi + (1 - pi) F_e(t)``
(equilibrium clocks, as :mod:`spare_theory.steps.cycles`), and given no
wipe-out by ``t`` it is that law restricted to ``f < K``: exact for the
exponential law.  With repairs a worker is out for ``m_out`` (its repair,
``heal_seconds``, and the wait to be seen and to rejoin), lifetimes are
taken exponential at the law's mean ``m`` (as the published repairs model)
and the down count is the birth-death chain of
:func:`~spare_theory.cycles.chains.down_count_generator` (up ``N - f`` at
``1/m``, down ``f`` at ``1/m_out``) absorbed at ``K``, started from the
burst: its survival and its states given survival
(:func:`~spare_theory.cycles.chains.chain_states`) for ``K <= 512``, the
binomial marginal and :class:`~spare_theory.cycles.elastic.ElasticCycle`'s
survival above.

**Steps in a state** (taken constant while the job is in it).  ``n = N - f``
up, ``m = min(A, n)`` compute: an attempt's compute lasts ``tau_c = c (1 + v
e_m)`` (``e_m`` the mean maximum of ``m`` normals), the attempt ``tau = tau_c
+ a``.  Failures arrive at ``nu_F = n h(t)``, rejoins at ``nu_R = f /
m_out``, ``nu = nu_F + nu_R``.  From an attempt start, the attempt commits
with probability ``x = e^{-nu_F tau_c}``; otherwise it is void after ``tau_c
+ s_a a`` and a stall follows; a committed attempt is followed by a stall if
a failure fell in its all-reduce or a rejoin in it (``1 - e^{-nu_F a - nu_R
tau}``).  A stall lasts until ``s`` passes without an event,
``L = (e^{nu s} - 1) / nu`` on average.  So per attempt start

    E[T] = x tau + (1 - x)(tau_c + s_a a) + [(1 - x) + x (1 - e^{-nu_F a - nu_R tau})] L,

and the state trains ``R_f = x / E[T]`` steps per second (in the last state, ``f = K -
1``, a failure is the wipe-out that ends the cycle: given the cycle alive there
``nu_F`` counts no failure), each of ``m / N``
of the batch, stalled ``sigma_f`` of the time (the bracket times ``L`` over
``E[T]``).  The table mixes the states given no wipe-out: the step rate
``sum w_f R_f``, the batch share per step, the attempt and the stalled
share.  The repaired out time ``m_out = m_R + heal + (1 - sigma)(tau + s_a
a)`` (seen at the all-reduce, rejoining at the next attempt start; at once
while stalled) is solved by three fixed-point passes at the stationary
state.

Approximations (measured in ``tests/test_elastic_steps.py``): the state is
constant over an attempt and a stall (its event rate changes by one event's
worth, ``1/(N - f)``); events during a checkpoint cost the handling share of
the compute around it (the estimate's ``(1 - phi)`` on the checkpoint), not
one stall; each segment's throughput is taken given the cycle alive at its
time, not given it survives to the checkpoint (the hour-level law's
approximation); the repair time enters through its mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special, stats

from .._caching import cached
from ..cycles.chains import (
    chain_log_survival,
    chain_states,
    down_count_generator,
    down_count_mean_passage,
    fast_mixing,
)
from ..cycles.elastic import EXACT_CHAIN_MAX, elastic_cycle
from ..lifetimes.laws import memoryless
from .cycles import (
    CYCLE_POINTS,
    MembershipTerms,
    StepCycle,
    cycle_bound_seconds,
    first_failure_grid,
    time_to_failure_share,
)
from .extremes import tabulated_max_normal
from .restarts import mean_life_at, residual_life, restart_windows
from .scenario import StepScenario

__all__ = ["elastic_step_cycle"]

# Binomial band of the down count kept at each time (standard deviations, plus states).
_BAND_SD, _BAND_PAD = 12.0, 20
# Fixed-point passes of the repaired out time.
_OUT_PASSES = 3
# Ages at which the groups that failed in the last cycle are taken (besides the last one).
_YOUNG_AGES = 3


class _States:
    """Per-state attempt laws of the elastic job (module docstring): ``f = 0..K-1``."""

    def __init__(self, sc: StepScenario, active: int, quorum: int) -> None:
        N = sc.groups
        self.sc, self.N, self.A, self.K = sc, N, active, N - quorum + 1
        self.f = np.arange(self.K)
        m = np.minimum(active, N - self.f)
        self.share = m / N
        self.tau_c = sc.stack_seconds * (1.0 + sc.stack_jitter_cv * tabulated_max_normal(N, m))
        self.tau = self.tau_c + sc.allreduce_seconds

    def rates(
        self, f: np.ndarray, fail: np.ndarray, rejoin: np.ndarray, t: np.ndarray | float = np.inf
    ) -> tuple[np.ndarray, ...]:
        """``(R, sigma, C, C_s)`` in states ``f`` at those rates, ``t`` seconds after the resume.

        Steps per second, the stalled share, a checkpoint's wall time and the
        stall after it (module docstring); the dead share ramps up from the
        resume (which starts productive) as ``1 - e^{-t/theta}``.
        """
        sc = self.sc
        a, s, d = sc.allreduce_seconds, sc.reconfigure_seconds, sc.checkpoint_seconds
        tau_c, tau = self.tau_c[f], self.tau[f]
        void = tau_c + sc.allreduce_failure_scale * a
        nu = fail + rejoin
        commit = np.exp(-fail * tau_c)
        stalls = (1.0 - commit) - commit * np.expm1(-fail * a - rejoin * tau)
        mean_s, square_s = _stall_moments(nu, s)
        stalled = stalls * mean_s
        time = commit * tau + (1.0 - commit) * void + stalled
        dead = 1.0 - commit * tau / time
        # The dead period D (a void attempt, then the stall) and its mean residual
        # E[D^2] / 2 E[D]; from a productive start the excess dead time counted by
        # the stationary share is (1 - dead) dead (E[R_D] - tau / 2).
        voids = np.where(stalls > 0, (1.0 - commit) / np.maximum(stalls, 1e-300), 0.0)
        mean_d = voids * void + mean_s
        square_d = voids * (void**2 + 2.0 * void * mean_s) + square_s
        theta = (1.0 - dead) * np.maximum(square_d / (2.0 * mean_d) - tau / 2.0, 0.0)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            ramp = np.where(theta > 0, -np.expm1(-np.asarray(t) / theta), 1.0)
        after = -np.expm1(-nu * d) * mean_s  # the stall after a checkpoint
        return (
            (1.0 - dead * ramp) / tau,
            stalled / time * ramp,
            d + after,
            after,
        )


def _stall_moments(nu: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
    """``(E[S], E[S^2])``: a stall that ends once ``s`` passes without an event (rate ``nu``).

    ``S = s + X_1 + ... + X_M``: ``M`` events cut it short (geometric, each
    with ``1 - e^{-nu s}``), each after ``X ~ Exp(nu)`` given ``X < s``.
    """
    x = nu * s
    tiny = x < 1e-8
    nu = np.where(tiny, 1.0, nu)
    stay = np.exp(-np.where(tiny, 0.0, x))
    cut = -np.expm1(-np.where(tiny, 1.0, x))
    events = cut / stay
    mean_x = 1.0 / nu - s * stay / cut
    square_x = (2.0 / nu**2 - stay * (s**2 + 2.0 * s / nu + 2.0 / nu**2)) / cut
    mean = s + events * mean_x
    var = events * (square_x - mean_x**2) + cut / stay**2 * mean_x**2
    return np.where(tiny, s, mean), np.where(tiny, s * s, var + mean**2)


def _with_young_groups(
    law: Any,
    t: np.ndarray,
    age: float | None,
    N: int,
    K: int,
    windows: Any,
    log_q: np.ndarray,
    down: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(F, h)``: the groups' mean residual-life CDF and the hazard of those still up.

    ``N - K`` groups at the run's clock age ``age``; the ``K`` a wipe-out took
    down failed through the last cycle, of mean length ``C = int Q dt`` (the
    table at the run's age: ``log_q`` and the mean down count ``down`` given
    the cycle alive, on ``t``): the one that ended it a restart ago
    (``E[D]``), the others at the times ``t_j`` the mean down count passes
    even shares of its value at ``C`` (:data:`_YOUNG_AGES` of them), so
    ``E[D] + C - t_j`` ago.  ``h = sum_g (1 - F_g) h_g / sum_g (1 - F_g)``.
    """
    restart = float(windows.mean_seconds)
    cycle = float(np.trapezoid(np.exp(log_q), t))
    inside = t <= cycle
    path = np.maximum.accumulate(down[inside])
    spread = min(K - 1, _YOUNG_AGES)
    shares = (np.arange(spread) + 0.5) / max(spread, 1) * path[-1]
    when = np.interp(shares, path, t[inside]) if path[-1] > 0 else np.zeros(spread)
    ages = [restart] + [restart + cycle - float(w) for w in when]
    counts = [1.0] + [(K - 1) / max(spread, 1)] * spread
    F_run, h_run = residual_life(law, t, age)
    mass, up, flow = (N - K) * F_run, (N - K) * (1.0 - F_run), (N - K) * (1.0 - F_run) * h_run
    for a, n in zip(ages, counts):
        F_a, h_a = residual_life(law, t, a)
        mass, up, flow = mass + n * F_a, up + n * (1.0 - F_a), flow + n * (1.0 - F_a) * h_a
    return mass / N, flow / np.maximum(up, 1e-300)


def _band(N: int, K: int, p: np.ndarray) -> np.ndarray:
    """States ``f`` (rows: times) covering ``Binom(N, p)`` below ``K``, a fixed width."""
    sd = np.sqrt(N * p * (1.0 - p))
    lo = np.clip(np.floor(N * p - _BAND_SD * sd) - _BAND_PAD, 0, K - 1).astype(np.int64)
    hi = np.clip(np.ceil(N * p + _BAND_SD * sd) + _BAND_PAD, 0, K - 1).astype(np.int64)
    width = int((hi - lo).max()) + 1
    lo = np.minimum(lo, K - width)
    return lo[:, None] + np.arange(width)[None, :]


def _binomial_states(N: int, K: int, p_classes: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(f, weights, log Q)``: a mixture of ``Binom(N, p)`` over classes, given ``f < K``.

    ``p_classes`` has one row per equal-probability class and one column per time.
    """
    bands = [_band(N, K, p) for p in p_classes]
    lo = np.minimum.reduce([band[:, 0] for band in bands])
    width = int((np.maximum.reduce([band[:, -1] for band in bands]) - lo).max()) + 1
    f = np.minimum(lo, K - width)[:, None] + np.arange(width)[None, :]
    # Binomial pmf from log-factorials: 2.5 times faster than scipy.stats.binom.pmf on the
    # bands at N = 200, the same values to 1e-13 (1e-10 in log Q at N = 75,000; tested).
    log_fact = special.gammaln(np.arange(N + 1) + 1.0)
    log_comb = log_fact[N] - log_fact[f] - log_fact[N - f]
    mass = np.mean(
        [
            np.exp(log_comb + special.xlogy(f, p[:, None]) + special.xlog1py(N - f, -p[:, None]))
            for p in p_classes
        ],
        axis=0,
    )
    q = mass.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(q[:, None] > 0, mass / q[:, None], 0.0)
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
    return f, weights, log_q


def _table(
    st: _States,
    t: np.ndarray,
    f: np.ndarray,
    weights: np.ndarray,
    log_q: np.ndarray,
    fail_rate: Callable[[np.ndarray], np.ndarray],
    rejoin_rate: float,
    burst: float,
) -> StepCycle:
    """The StepCycle from the states' weights given survival (module docstring)."""
    sc = st.sc
    fail = fail_rate(f)
    # A failure in the last state (K - 1 down) is the wipe-out that ends the cycle, not a
    # void attempt and a stall within it: given the cycle alive, that state's attempts commit.
    voiding = np.where(f + 1 < st.K, fail, 0.0)
    R, sigma, C, C_s = st.rates(f, voiding, f * rejoin_rate, t[:, None])
    steps = (weights * R).sum(axis=1)
    safe = np.where(steps > 0, steps, 1.0)
    tau = np.where(steps > 0, (weights * R * st.tau[f]).sum(axis=1) / safe, st.tau[0])
    membership = MembershipTerms(
        batch=np.where(steps > 0, (weights * R * st.share[f]).sum(axis=1) / safe, st.share[0]),
        full_batch=st.A / st.N,
        exact_batch=st.K <= st.N - st.A + 1,
        stalled=(weights * sigma).sum(axis=1),
        # Checkpoints every k steps: 1 / rate = sum w / R to first order in 1 / k.
        ckpt_wall=np.where(steps > 0, (weights * R**2 * C).sum(axis=1) / safe**2, C[:, 0]),
        ckpt_stall=(weights * C_s).sum(axis=1),
    )
    return StepCycle(
        t=t,
        log_q=log_q,
        tau=tau,
        phi=1.0 - tau * steps,
        partial=np.zeros(t.size),
        noticed=(weights * fail).sum(axis=1),
        failed=(weights * f).sum(axis=1),
        post=np.full(t.size, sc.allreduce_seconds),
        tau0=float(np.interp(st.N * burst, st.f, st.tau)),
        ckpt=sc.checkpoint_seconds,
        useful=sc.stack_seconds + sc.allreduce_seconds,
        burst_handling=0.0,  # the first quorum forms without the burst's failures: no stall
        burst_failures=st.N * burst,
        membership=membership,
    )


@cached(maxsize=256)
def elastic_step_cycle(scenario: StepScenario, active: int, quorum: int) -> StepCycle:
    """The elastic job's cycle table (module docstring), cached by value.

    With or without repairs (``scenario.repair_seconds``); the estimate is
    :func:`~spare_theory.steps.estimate.estimate_steps` of this table (a
    table whose rejoins stall: repairs may lengthen the run).  No argument
    checks: ``1 <= quorum <= active <= N``.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs, lifetime law, ``reconfigure_seconds``,
        ``heal_seconds``, repairs.
    active : int
        ``A``: workers that compute at most (``N - r``).
    quorum : int
        ``q``: fewest workers up for the job to go on.

    Returns
    -------
    StepCycle

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> cyc = elastic_step_cycle(paper_scenario(200), 200, 100)
    >>> cyc.t.size, cyc.membership.exact_batch, round(float(cyc.membership.batch[0]), 3)
    (1000, False, 0.94)
    >>> elastic_step_cycle(paper_scenario(200), 190, 190).membership.exact_batch
    True
    """
    sc = scenario
    N, law = sc.groups, sc.failure_law
    st = _States(sc, active, quorum)
    K = st.K
    windows = restart_windows(sc)
    pis = windows.burst
    burst = float(pis.mean())
    if not sc.repairs:
        p_end = min((K + 12.0 * math.sqrt(K) + 20.0) / N, 1.0 - 1e-9)
        age = sc.clock_age_seconds
        t_hi = min(time_to_failure_share(law, p_end, 0.0, age), cycle_bound_seconds(sc, 1))
        t = np.linspace(0.0, t_hi, CYCLE_POINTS)
        p, hazard = first_failure_grid(law, t, pis, age)
        f, weights, log_q = _binomial_states(N, K, p)
        if not memoryless(law):
            # The K groups a wipe-out took down come back with clocks renewed when they
            # failed: young, and for a shape below 1 quick to fail again.
            down = (weights * f).sum(axis=1)  # mean down count given the cycle alive
            share, hazard = _with_young_groups(law, t, age, N, K, windows, log_q, down)
            p = pis[:, None] + (1.0 - pis[:, None]) * share[None, :]
            f, weights, log_q = _binomial_states(N, K, p)
        return _table(st, t, f, weights, log_q, lambda f: (N - f) * hazard[:, None], 0.0, burst)
    mean_life = mean_life_at(law, sc.clock_age_seconds)
    lam = 1.0 / mean_life
    base = float(sc.repair_seconds or 0.0) + sc.heal_seconds
    out = base + st.tau[0] + sc.allreduce_failure_scale * sc.allreduce_seconds
    for _ in range(_OUT_PASSES):  # the out time at the stationary state
        f, weights, _ = _binomial_states(N, K, np.array([[out / (mean_life + out)]]))
        R, sigma, _, _ = st.rates(f, (N - f) * lam, f / out)
        w = weights * R
        tau = float((w * st.tau[f]).sum() / w.sum())
        stalled = float((weights * sigma).sum())
        out = base + (1.0 - stalled) * (tau + sc.allreduce_failure_scale * sc.allreduce_seconds)
    mu = mean_life / out
    pi = 1.0 / (1.0 + mu)
    states = np.arange(K)
    start = np.mean([stats.binom.pmf(states, N, b) for b in pis], axis=0)
    log_start = math.log(max(float(start.sum()), 1e-300))
    mean_u = min(down_count_mean_passage(N, K, mu), 1e150)
    t_end = min((45.0 * mean_u + 30.0 / (1.0 + mu)) / lam, cycle_bound_seconds(sc, 1))
    t = np.linspace(0.0, t_end, CYCLE_POINTS)
    u = lam * t
    rejoin = 1.0 / out
    G = down_count_generator(K, mu, groups=N) if K <= EXACT_CHAIN_MAX else None
    if G is not None and not fast_mixing(G, mean_u):
        log_s, V, _ = chain_states(G, float(u[1]), t.size - 1, start=start)
        f = np.broadcast_to(states, V.shape)
        return _table(st, t, f, V, log_start + log_s, lambda f: (N - f) * lam, rejoin, burst)
    # The down share relaxes from the burst to pi; the states near their binomial law.
    p = (pi + (burst - pi) * np.exp(-(1.0 + mu) * u))[None, :]
    f, weights, _ = _binomial_states(N, K, p)
    if G is not None:  # fast mixing: quasi-stationary, exp(-u / mean)
        log_q = chain_log_survival(G, float(u[1]), t.size - 1, mean_u, start)
    else:  # K > 512: the hour-level law's survival, from when its down share is the burst
        law_u = elastic_cycle(N, active, quorum, mu=mu)
        u_b = -math.log1p(-min(burst / pi, 1.0 - 1e-9)) / (1.0 + mu)
        shifted = np.asarray(law_u.logq(u + u_b), dtype=float)
        log_q = shifted - shifted[0]
    return _table(st, t, f, weights, log_start + log_q, lambda f: (N - f) * lam, rejoin, burst)
