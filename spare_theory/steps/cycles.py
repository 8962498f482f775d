"""Restart cycles of the published simulator as tables on a time grid; Rep and CKPT-only.

A cycle is a restart plus the computation until the wipe-out is detected
(``docs/step_model.md``).  ``t`` counts time from the resume; each worker's
first failure has law ``p(t) = F_e(t)`` (equilibrium clocks; exact for the
exponential law, an approximation for Weibull), independently, shifted by
the resume burst: given the restart length ``D`` each worker has failed at
``t = 0`` with ``pi(D)`` (:mod:`spare_theory.steps.restarts`), so
``p(t) = pi + (1 - pi) F_e(t)``, and every table is a mixture over the
equal-probability classes of ``D``.  Failures arrive at ``(N - f) h(t)``
(``h`` the hazard of ``F_e``); an attempt of length ``tau`` sees
``mu = (N - f) h tau`` of them, Poisson, and per noticed failure
``(1 - e^{-mu})/mu`` attempts carry a failure, each costing
``pr - (1 - s_a) a`` (partial recovery ``pr``, all-reduce ``a`` shortened
by the factor ``s_a``).

A :class:`StepCycle` holds a strategy's expectations on that grid; the
estimate (:mod:`spare_theory.steps.estimate`) needs nothing else.  This
module builds the Rep table (CKPT-only is Rep with ``r = 1``); SPARe's is
:mod:`spare_theory.steps.spare_cycle`.

Rep: consecutive replica sets ``id // r`` (the last one smaller),
``Q(t) = prod_sets (1 - p^{|set|})``, except that the published controller
removes only the lowest flagged id per step: the flagged rest compute
nothing, count as survivors and wait.  Fluid model: the removed count
``Rm`` grows by one per step while ``Rm < F = N p``, removal goes lowest id
first, and a set starting at id ``s`` is seen wiped out once its last
member is removed, after the ``p s`` failed workers below it and all of its
own: from ``Rm >= p s + |set|`` (ramped over the last removal; every set
once ``Rm = F``).  The grid ends where ``log Q`` falls below -40 (found in
passes), so that its points resolve a cycle far shorter than the time for
most workers to fail.  CKPT-only (sets of one) sees a wipe-out at its first
removal whenever any worker has failed: ``log Q = min(Rm, 1) N log(1 - p)``
until ``Rm = F``.  Rep never retries (a failure leaves the
step done).  Only the leader writes a checkpoint while the others start the
next step, so a checkpoint costs ``E[max(delta + C_L, M_{n-1})] - E[M_n]``
(``C`` a worker's compute, ``M`` maxima), by quadrature.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, special

from .._caching import cached
from ..lifetimes.laws import memoryless
from ..placement.replicas import replica_set_sizes
from .extremes import expected_max_shifted, tabulated_max_normal
from .restarts import equilibrium_cdf, residual_life, restart_windows
from .scenario import StepScenario

__all__ = [
    "CYCLE_POINTS",
    "MembershipTerms",
    "StepCycle",
    "cycle_bound_seconds",
    "first_failure_grid",
    "rep_step_cycle",
    "time_to_failure_share",
]

#: Time points of every cycle table.
CYCLE_POINTS = 1000
# Rep's grid ends where log Q falls below _LOG_END (later cycles weigh below e^-40),
# found in at most _GRID_PASSES passes.
_LOG_END = -40.0
_GRID_PASSES = 4


@dataclass(frozen=True, eq=False)
class MembershipTerms:
    """What an elastic job (elastic DP, hot spares) adds to its cycle table, on the same grid.

    Such a job trains a shrinking batch, stalls at every membership change
    (a rejoin too, so repairs can lengthen a run even without
    ``rejoin_seconds``), and any live group writes its checkpoints: one is
    kept iff it completes before the wipe-out, and no leader's check loses
    it (:func:`~spare_theory.steps.estimate.estimate_steps`, item 5).

    Attributes
    ----------
    batch : numpy.ndarray
        Share of the global batch (``N`` shards) a step trains, given no
        wipe-out (``min(A, n) / N`` with ``n`` up).
    full_batch : float
        The share a step of the plan's whole batch trains (``A / N``).
    exact_batch : bool
        Whether every step trains the plan's whole batch (no sample skipped).
    stalled : numpy.ndarray
        Share of the compute phase's time stalled, given no wipe-out (down time).
    ckpt_wall : numpy.ndarray
        Wall time of one checkpoint with the stall that follows it, seconds.
    ckpt_stall : numpy.ndarray
        That stall alone, seconds.
    """

    batch: np.ndarray
    full_batch: float
    exact_batch: bool
    stalled: np.ndarray
    ckpt_wall: np.ndarray
    ckpt_stall: np.ndarray


@dataclass(frozen=True, eq=False)
class StepCycle:
    """A strategy's restart cycle: its expectations on a time grid, seconds since the resume.

    Attributes
    ----------
    t : numpy.ndarray
        The grid, seconds since the resume (increasing, from 0).
    log_q : numpy.ndarray
        ``log Q(t)``: log of the chance of no wipe-out by ``t``.
    tau : numpy.ndarray
        Harmonic-mean attempt given no wipe-out, seconds.
    phi : numpy.ndarray
        Share of time in failure handling (retries and partial recoveries,
        less the shortened all-reduces, plus rejoin stalls).
    partial : numpy.ndarray
        Attempts with a noticed (non-wiping) failure, per second.
    noticed : numpy.ndarray
        Failures noticed, per second.
    failed : numpy.ndarray
        Expected failed workers.
    post : numpy.ndarray
        ``b``: the tail of an attempt whose failures are noticed only in the
        next one, seconds.
    tau0 : float
        The first attempt after a resume, seconds.
    ckpt : float
        Cost of one checkpoint, seconds.
    useful : float
        The failure-free step ``c + a``, seconds.
    burst_handling : float
        Expected handling of the failures noticed at the resume, seconds
        per cycle (unconditional).
    burst_failures : float
        Their expected number.
    membership : MembershipTerms or None
        What a job whose membership changes (elastic DP, hot spares) adds;
        ``None`` (the published strategies): none.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> cyc = rep_step_cycle(paper_scenario(200), 3)
    >>> cyc.t.size, float(cyc.t[0]), round(cyc.useful, 1)
    (1000, 0.0, 66.0)
    """

    t: np.ndarray
    log_q: np.ndarray
    tau: np.ndarray
    phi: np.ndarray
    partial: np.ndarray
    noticed: np.ndarray
    failed: np.ndarray
    post: np.ndarray
    tau0: float
    ckpt: float
    useful: float
    burst_handling: float
    burst_failures: float
    membership: MembershipTerms | None = None

    @functools.cached_property
    def _integrals(self) -> dict[str | None, np.ndarray]:
        return {}

    def q_integral(self, weight: str | None = None) -> np.ndarray:
        """``int_0^t Q(s) w(s) ds`` at every grid point (cumulative trapezoid), computed once.

        ``w`` is the field ``weight`` of the cycle (``"phi"``, ``"partial"``,
        ``"noticed"``, ``"failed"``) or of its membership terms
        (``"stalled"``); ``None``: 1.  The estimate needs these at every
        checkpoint interval it tries, and they do not depend on it.

        Examples
        --------
        >>> from spare_theory.steps.scenario import paper_scenario
        >>> cyc = rep_step_cycle(paper_scenario(200), 3)
        >>> bool(cyc.q_integral()[-1] <= cyc.t[-1]), cyc.q_integral() is cyc.q_integral()
        (True, True)
        """
        if weight not in self._integrals:
            y = np.exp(self.log_q)
            if weight is not None:
                y = y * getattr(self.membership if weight == "stalled" else self, weight)
            self._integrals[weight] = integrate.cumulative_trapezoid(y, self.t, initial=0.0)
        return self._integrals[weight]


def first_failure_grid(
    law: Any, t: np.ndarray, burst: Any, age_seconds: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(p, h)``: a worker's first-failure CDF in the cycle per burst class, and the hazard.

    ``p(t) = pi + (1 - pi) F_s(t)``: failed at the resume with probability
    ``pi`` (its clock expired while it waited for the slowest restart
    window), else at the residual life ``F_s`` of a clock of age
    ``age_seconds`` (:func:`~spare_theory.steps.restarts.residual_life`;
    ``None``: the equilibrium law); ``h`` is the hazard of ``F_s`` (per
    second).  No argument checks.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, seconds.
    t : numpy.ndarray
        Time grid, seconds.
    burst : array_like
        ``pi`` per burst class.
    age_seconds : float or None
        The clocks' age at the resume, seconds (``None``: long-running).

    Returns
    -------
    tuple of numpy.ndarray
        ``p`` (one row per class) and ``h``.

    Examples
    --------
    >>> from scipy import stats
    >>> p, h = first_failure_grid(stats.expon(scale=10.0), np.array([0.0, 10.0]), [0.5])
    >>> np.round(p, 4).tolist(), h.tolist()
    ([[0.5, 0.8161]], [0.1, 0.1])
    """
    p_s, hazard = residual_life(law, t, age_seconds)
    pi = np.asarray(burst, dtype=float)[:, None]
    return pi + (1.0 - pi) * p_s[None, :], hazard


def time_to_failure_share(
    law: Any, p_end: float, burst: float = 0.0, age_seconds: float | None = None
) -> float:
    """Smallest ``t`` with ``burst + (1 - burst) F_e(t) >= p_end``, seconds.

    By doubling from the mean lifetime (up to ``1e6`` means), then the first
    of 4097 grid points.  With clocks of age ``age_seconds`` (not ``None``)
    the later of that ``t`` and the one of the fresh law: a bound on the
    residual life's, which mixes residuals of every age up to theirs.  No
    argument checks.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, seconds.
    p_end : float
        Target share of failed workers, in ``(burst, 1)``.
    burst : float
        Share failed at the resume.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> from scipy import stats
    >>> print(round(time_to_failure_share(stats.expon(scale=1.0), 0.5), 2))
    0.69
    """
    mean = float(law.mean())
    p_end = (p_end - burst) / (1.0 - burst)
    hi = mean
    while float(equilibrium_cdf(law, np.array([hi]))[0]) < p_end and hi < 1e6 * mean:
        hi *= 2.0
    grid = np.linspace(0.0, hi, 4097)
    cdf = equilibrium_cdf(law, grid)
    t_end = float(grid[min(int(np.searchsorted(cdf, p_end)), grid.size - 1)])
    if age_seconds is None:
        return t_end
    return max(t_end, float(law.ppf(p_end)))


def cycle_bound_seconds(scenario: StepScenario, r: int) -> float:
    """Seconds beyond which a cycle need not be followed: five runs at the slowest step.

    ``5 n (c r (1 + 10 v) + a + delta)``.  A cycle longer than the run ends
    with the run; the estimate's horizon is four runs' worth of steps,
    always inside this bound.

    Parameters
    ----------
    scenario : StepScenario
        The workload.
    r : int
        Redundancy (stacks a worker may compute in a step).

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> print(round(cycle_bound_seconds(paper_scenario(200, steps=10), 1)))
    7840
    """
    sc = scenario
    step = sc.stack_seconds * r * (1.0 + 10.0 * sc.stack_jitter_cv) + sc.allreduce_seconds
    return 5.0 * sc.steps * (step + sc.checkpoint_seconds)


@cached(maxsize=256)
def rep_step_cycle(scenario: StepScenario, r: int, *, overlapped_write: bool = True) -> StepCycle:
    """Rep's cycle table at redundancy ``r`` (CKPT-only: ``r = 1``), cached by value.

    Consecutive replica sets, the published controller's one removal per
    step, ``r``-fold compute with one jitter draw
    (``tau = c r (1 + v e_n) + a`` on the ``n`` working workers), the
    leader's overlapped checkpoint (module docstring; ``overlapped_write=False``:
    every worker waits for the write, as in SPARe's rules at ``r = 1``).  No
    argument checks; ``1 <= r <= N``.  Repairs are ignored
    (:func:`spare_theory.steps.repairs.rep_repair_step_cycle`).

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    r : int
        Replicas per set.

    Returns
    -------
    StepCycle

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> cyc = rep_step_cycle(paper_scenario(200), 3)
    >>> print(round(cyc.tau0, 1), round(cyc.ckpt, 1))  # the checkpoint overlaps the next step
    220.4 32.4
    """
    sc = scenario
    N, law = sc.groups, sc.failure_law
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    sizes = replica_set_sizes(N, r, layout="consecutive").astype(float)
    starts = np.arange(sizes.size) * r
    # Time grid up to where even the removal-limited cycle is surely over.
    windows = restart_windows(sc)
    pis = windows.burst
    burst = float(pis.mean())
    age = sc.clock_age_seconds
    t_hi = min(
        time_to_failure_share(law, 1.0 - 1e-6, float(pis.max()), age), cycle_bound_seconds(sc, r)
    )
    # CKPT-only's wipe-out is one worker's failure: at the resume that worker's clock is
    # as young as the restart D (renewed when it failed); the others' are the run's and
    # have survived the restart, so their residual counts from its start, past D.
    young = r == 1 and not memoryless(law)
    restart = windows.mean_seconds
    for _ in range(_GRID_PASSES):
        t = np.linspace(0.0, t_hi, CYCLE_POINTS)
        if young:
            p_from_start, hz = first_failure_grid(law, t + restart, np.zeros(1), age)
            p_restart = float(
                first_failure_grid(law, np.array([restart]), np.zeros(1), age)[0][0, 0]
            )
            p_others = (p_from_start[0] - p_restart) / (1.0 - p_restart)
            p_nodes = pis[:, None] + (1.0 - pis[:, None]) * p_others[None, :]
            p_young: Any = first_failure_grid(law, t, pis, restart)[0]
        else:
            p_nodes, hz = first_failure_grid(law, t, pis, age)
            p_young = [None] * pis.size
        parts = [
            _rep_node(sc, r, t, p, hz, sizes, starts, p_trigger)
            for p, p_trigger in zip(p_nodes, p_young, strict=True)
        ]
        log_qs = np.array([part[0] for part in parts])
        log_q = special.logsumexp(log_qs, axis=0) - math.log(pis.size)
        # With replicas the cycle ends long before most workers have failed: end the
        # grid where Q is negligible, so that its points resolve the cycle.
        ended = np.flatnonzero(log_q <= _LOG_END)
        if ended.size == 0 or t[ended[0]] > 0.5 * t_hi:
            break
        t_hi = float(t[ended[0]])
    share = np.exp(log_qs - log_q[None, :]) / pis.size  # class weights given survival
    tau, phi, partial, noticed, failed, post = (
        (share * np.array([part[i] for part in parts])).sum(axis=0) for i in range(1, 7)
    )
    # Checkpoint: the leader writes while the others compute the next step.
    sd = c * r * v
    if sd > 0 and overlapped_write:
        shifted = float(
            expected_max_shifted(np.array([max(N - 1, 0)]), sc.checkpoint_seconds / sd)[0]
        )
        ckpt = sd * (shifted - float(tabulated_max_normal(N, N)))
    else:
        ckpt = sc.checkpoint_seconds
    tau0 = float(c * r * (1.0 + v * tabulated_max_normal(N, N)) + a)
    return StepCycle(
        t=t,
        log_q=log_q,
        tau=tau,
        phi=phi,
        partial=partial,
        noticed=noticed,
        failed=failed,
        post=post,
        tau0=tau0,
        ckpt=max(ckpt, 0.0),
        useful=c + a,
        burst_handling=0.0,  # the flagged burst is in the queue model's flagged attempts
        burst_failures=N * burst,
    )


def _rep_node(sc: StepScenario, r: int, t, p, hz, sizes, starts, p_trigger=None) -> tuple:
    """Rep's cycle quantities for one burst class.

    ``p_trigger``: CKPT-only's first-failure CDF of the worker whose failure
    ended the last cycle (``None``: the same as the others').  Returns
    ``(log Q, tau, phi, partial, noticed, failed, post)`` on ``t``.
    """
    N = sc.groups
    c, v, a = sc.stack_seconds, sc.stack_jitter_cv, sc.allreduce_seconds
    failed = N * p
    working = np.maximum(N - failed, 1.0)
    sd = c * r * v
    e = tabulated_max_normal(N, working)
    tau = c * r * (1.0 + v * e) + a
    # Removal: one flagged worker (the lowest id) per step, never more than
    # have failed: removed_i = min(F_i, removed_{i-1} + dt/tau), removed_0 = 0,
    # solved as removed_i = D_i + min(0, min_{1<=j<=i} (F_j - D_j)), D = int dt/tau.
    D = integrate.cumulative_trapezoid(1.0 / tau, t, initial=0.0)
    slack = np.minimum.accumulate(np.concatenate([[0.0], (failed - D)[1:]]))
    removed = np.minimum(D + slack, failed)
    removed[0] = 0.0
    caught = removed >= failed - 1e-9  # the queue is empty: every failed worker removed
    if r == 1:
        # Sets of one worker: the first removal takes the lowest failed worker, a
        # wipe-out whenever any has failed, which sets taken one by one miss (they
        # give about e^-Rm, not (1 - p)^N, as if the removal could miss).
        seen = np.where(caught, 1.0, np.minimum(removed, 1.0))
        log_q = seen * N * np.log1p(-np.minimum(p, 1.0 - 1e-16))
        if p_trigger is not None:
            log_q = seen * (
                (N - 1) * np.log1p(-np.minimum(p, 1.0 - 1e-16))
                + np.log1p(-np.minimum(p_trigger, 1.0 - 1e-16))
            )
    else:
        # A set is seen wiped out once its last member is removed: after the failed
        # workers below it (p per id) and all of its own members (it is wiped out).
        eligible = np.clip(
            removed[:, None] - p[:, None] * starts[None, :] - sizes[None, :] + 1.0, 0.0, 1.0
        )
        eligible[caught] = 1.0
        log_p = np.log(np.maximum(p, 1e-300))
        with np.errstate(divide="ignore"):
            log_alive = np.log(-np.expm1(sizes[None, :] * log_p[:, None]))
        log_q = (eligible * log_alive).sum(axis=1)
    mu = working * hz * tau
    queue = np.maximum(failed - removed, 0.0)
    flagged = -np.expm1(-(mu + queue))  # attempts with a flag
    cost = sc.partial_recovery_seconds - (1 - sc.allreduce_failure_scale) * a
    return (
        log_q,
        tau,
        np.clip(flagged * cost / tau, -1.0, 0.95),
        flagged / tau,
        working * hz,
        failed,
        sd * e + a,
    )
