"""The finite-run term of the renewal estimate: a run from a fresh start to ``W`` of work.

The renewal-reward estimate ``W E[X] / E[P]`` (:mod:`spare_theory.hourly.renewal`)
is the long-run rate.  A run of ``W`` hours of work that starts computing on
all groups with no restart, and ends when the checkpoint that saves the
last of ``W`` completes, takes ``W E[X] / E[P] + C`` in expectation, up to
terms that vanish as ``W`` grows; derivation in ``docs/theory.md`` section 8.
With cycles ``i`` of length ``X_i``, work kept ``P_i`` and work lost at the
wipe-out ``L_i``, and ``M`` the cycle in which the run's work reaches ``W``
(at ``t_M`` into it), Wald's identity on ``X`` and on ``P`` gives

    E[T] = W E[X] / E[P] + E[S_M - W] E[X] / E[P] - E[X_M - t_M] - E[R'] + delta,

with ``E[R']`` the restart time before a cycle computes (``R`` and the
restarts a wipe-out cuts short), which the fresh start skips, and the last
checkpoint ``delta``.  For large ``W`` the level ``W`` falls uniformly in the new work
of a cycle drawn in proportion to it (new work: from the previous cycle's
loss ``L'`` up to ``P + L``), so

    E[S_M - W] = E[int_{L'}^{P+L} (P - y) dy] / E[P],
    E[X_M - t_M] = E[int_{L'}^{P+L} (X - t(y)) dy] / E[P],

``t(y)`` the time at which the cycle's work reaches ``y``.  Both are taken
on the renewal sums' own path (work ``kappa theta`` per segment at the
throughput ``theta`` of its middle, linear within its compute piece, kept
when its checkpoint ends before the wipe-out; ``X`` from ``Q``), and
``int_0^{W(X)} (X - t(y)) dy = int_0^X W(u) du``.  ``C`` tends to 0 for a
constant hazard and throughput as the segments shorten (CKPT-only: the
restart in the first term cancels the skipped one); it is what an elastic job's falling
throughput leaves: fast early cycle time that a fresh start gets and the
long-run rate averages away.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..cycles.base import CycleLaw
from .process import GroupProcess
from .renewal import TrainingEstimate, scaled_times

__all__ = ["finite_run_term", "with_finite_run"]

# Uniform nodes added to the segment boundaries on which the cycle's path is integrated.
_NODES = 4096
# Cycles of more segments than this get no finite-run term (their runs are many cycles).
_MAX_SEGMENTS = 200_000


def finite_run_term(law: CycleLaw, rho: float, kappa: float, d: float) -> float:
    """``C`` of the module docstring in units of ``1/lambda`` (0 beyond 200,000 segments).

    Parameters
    ----------
    law : CycleLaw
        The cycle law.
    rho, kappa, d : float
        Restart, compute per segment and checkpoint, ``lambda`` times their hours.

    Returns
    -------
    float

    Examples
    --------
    >>> from spare_theory.cycles.elastic import ElasticCycle
    >>> from spare_theory.cycles.rep import CkptOnly
    >>> c = finite_run_term(CkptOnly(64), 0.02, 0.0005, 0.0)  # constant hazard, short segments
    >>> abs(c) < 1e-3
    True
    >>> round(finite_run_term(ElasticCycle(64, 64, 16), 0.02, 0.06, 0.002), 4)
    -0.1775
    """
    alpha = kappa + d
    log_q0 = float(law.logq(rho))
    end = law.u_at(log_q0 - 30.0)
    count = (end - rho) / alpha + 1
    if not count <= _MAX_SEGMENTS:  # also an endless cycle
        return 0.0
    n = max(math.ceil(count), 1)
    start = rho + alpha * np.arange(n)
    theta = law.theta(start + kappa / 2)
    loss = law.checkpoint_loss(start, d)
    if loss is not None:
        theta = theta - (np.arange(n) > 0) * loss[0] / kappa
    work = kappa * theta
    done = np.concatenate(([0.0], np.cumsum(work)))
    u = np.union1d(
        np.linspace(0.0, start[-1] + alpha, _NODES + 1),
        np.concatenate(([rho], start + kappa, start + alpha)),
    )
    q = np.exp(law.logq(u) - log_q0)
    # W(u): the work done by u; P(u): the work of the segments checkpointed by u.
    j = np.clip(np.searchsorted(start, u, side="right") - 1, 0, n - 1)
    path = np.where(u < rho, 0.0, done[j] + work[j] * np.clip((u - start[j]) / kappa, 0.0, 1.0))
    kept = done[np.searchsorted(start + alpha, u, side="right")]
    step = np.diff(u)
    ends = np.maximum(q[:-1] - q[1:], 0.0)  # P(X in each piece)
    w_mid, p_left = (path[:-1] + path[1:]) / 2, kept[:-1]
    lost = w_mid - p_left
    integral = np.concatenate(([0.0], np.cumsum(w_mid * step)))
    mean_x = float(np.sum((q[:-1] + q[1:]) / 2 * step))
    mean_p = float(np.sum(work * np.exp(law.logq(start + alpha) - log_q0)))
    if not mean_p > 0:
        return 0.0
    mean_l, mean_l2 = float(ends @ lost), float(ends @ lost**2)
    over = (float(ends @ (p_left * w_mid - w_mid**2 / 2)) - mean_p * mean_l + mean_l2 / 2) / mean_p
    rest = (float(ends @ ((integral[:-1] + integral[1:]) / 2)) - mean_l * mean_x) / mean_p
    restart = law.restart_terms(rho)[1]  # the restarts before a cycle computes
    return over * mean_x / mean_p - rest - restart + d


def with_finite_run(
    estimate: TrainingEstimate, law: CycleLaw, process: GroupProcess
) -> TrainingEstimate:
    """``estimate`` with ``C`` (:func:`finite_run_term`) added to its hours, for a law that asks.

    Laws with :attr:`~spare_theory.cycles.base.CycleLaw.finite_run` (the
    elastic law without repairs) get the term; the others' estimates are
    returned as they are.  The term is an expansion in many cycles: a run
    expected to see at most one wipe-out keeps its long-run hours (a quorum
    of 1 among 75,000 groups would otherwise price a 720 h run at 720 h, its
    cycle outliving the run), two or more get the whole term, and the weight
    is linear between.  The parts of ``hours`` beyond the useful ones are
    scaled to add up to the new hours (``hours`` stays at least ``W``);
    restarts and the cycle are the long-run ones.

    Examples
    --------
    >>> from spare_theory import Scenario, strategy, time_to_train
    >>> sc = Scenario(gpus=512, gpus_per_group=8, gpu_mtbf_hours=128.0, restart_minutes=20,
    ...               checkpoint_minutes=2, work_hours=40, reconfigure_minutes=1)
    >>> est = time_to_train(sc, "elastic", min_groups=16, checkpoint_interval_minutes=60)
    >>> round(est.hours, 2), round(sum(est.breakdown_hours.values()), 2)
    (80.62, 80.62)
    """
    if not (law.finite_run and math.isfinite(estimate.hours)):
        return estimate
    lam = process.rate_per_hour
    rho, kappa, d = scaled_times(process, estimate.checkpoint_interval_minutes)
    W = process.scenario.work_hours
    # The expansion needs a run of several cycles: off below one expected wipe-out,
    # whole from two on, linear between (no jump in hours for the planner's search).
    weight = min(max(estimate.wipeouts - 1.0, 0.0), 1.0)
    if weight == 0.0:
        return estimate
    term = weight * finite_run_term(law, rho, float(kappa), d) / lam
    hours = max(estimate.hours + term, W)
    f = (hours - W) / (estimate.hours - W) if estimate.hours > W else 0.0
    parts = {
        name: getattr(estimate, name) * f
        for name in ("redundancy_hours", "checkpoint_hours", "restart_hours", "lost_hours")
    }
    return dataclasses.replace(
        estimate,
        hours=hours,
        availability=W / hours,
        uptime=1.0 - parts["restart_hours"] / hours,
        **parts,
    )
