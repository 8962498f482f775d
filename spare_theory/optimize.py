"""The joint ``(r, checkpoint interval)`` optimiser and the published ``r*`` rule.

For each strategy the redundancy ``r`` is scanned upwards (CKPT-only has
``r = 1``; Rep any ``1 <= r <= N``; SPARe every ``r`` for which a modular
Golomb ruler exists at ``N``), the interval is optimised for each ``r`` by a
bounded Brent search in ``log tau`` (:func:`spare_theory.training.time_to_train`
with no interval), and the scan stops once ``hours`` has risen above the best
value for ``_PATIENCE`` consecutive ``r`` (the curve is unimodal in practice:
more redundancy first buys longer cycles, then only costs overhead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import as_choice, as_count_array
from .placement import modular_ruler
from .scenario import Scenario
from .training import STRATEGIES, TrainingEstimate, time_to_train

__all__ = ["R_STAR_CONSTANT", "Plan", "optimal_plan", "r_star_rule"]

# Published constant of the rule r* = floor(log2 N + 0.833); its derivation
# (close to Euler's gamma / ln 2 = 0.8327) is symbolic.derive_r_star_constant.
R_STAR_CONSTANT = 0.833
_PATIENCE = 3


@dataclass(frozen=True)
class Plan:
    """The best plan of one strategy for one scenario.

    Attributes
    ----------
    strategy : str
        ``"ckpt"``, ``"rep"`` or ``"spare"``.
    r : int
        Best redundancy (1 for CKPT-only).
    checkpoint_interval_minutes : float
        Best compute time between checkpoints at that ``r``, minutes.
    hours : float
        Expected wall-clock hours of the plan.
    estimate : TrainingEstimate
        The full estimate (breakdown, availability, restarts) of the plan.
    r_values : numpy.ndarray
        The ``r`` scanned, ascending.
    hours_by_r : numpy.ndarray
        Best hours (interval optimised) at each scanned ``r``: how flat the
        optimum is.
    """

    strategy: str
    r: int
    checkpoint_interval_minutes: float
    hours: float
    estimate: TrainingEstimate
    r_values: np.ndarray
    hours_by_r: np.ndarray


def _ruler_exists(N: int, r: int) -> bool:
    try:
        modular_ruler(N, r)
    except ValueError:
        return False
    return True


def optimal_plan(scenario, strategy) -> Plan:
    """Minimise the expected time to train over ``r`` (integer) and the interval (continuous).

    Parameters
    ----------
    scenario : Scenario
        The run to plan.
    strategy : {"ckpt", "rep", "spare"}
        Strategy; SPARe only uses ``r`` for which ``placement.modular_ruler``
        finds a ruler at ``N = scenario.groups``.

    Returns
    -------
    Plan
        Best ``r``, interval and hours, the estimate, and ``hours`` against
        every scanned ``r``.  Ties go to the smaller ``r``.

    Raises
    ------
    ValueError
        If ``scenario`` is not a Scenario or ``strategy`` is unknown.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STRATEGIES)
    N = scenario.groups
    if strategy == "ckpt":
        curve = {1: time_to_train(scenario, strategy, r=1)}
    elif strategy == "rep":
        curve = _walk(scenario, strategy, 1, N, {})
    else:
        # r = 1 (no redundancy: CKPT-only) is always a candidate: from r = 2 on,
        # S* >= 2 after the first failure, so the curve jumps there.  For r >= 2
        # start at the published rule (the largest r <= r* with a ruler) and
        # walk both ways: the r far below the optimum are never evaluated.
        curve = {1: time_to_train(scenario, strategy, r=1)}
        start = max(r for r in range(1, r_star_rule(N) + 1) if r == 1 or _ruler_exists(N, r))
        if start > 1:
            curve = _walk(scenario, strategy, start, N, curve)
            curve = _walk(scenario, strategy, start - 1, 2, curve)
    r_values = np.array(sorted(curve), dtype=np.int64)
    hours = np.array([curve[r].hours for r in r_values])
    best = curve[int(r_values[np.argmin(hours)])]  # the first minimum: ties go to the smaller r
    return Plan(
        strategy=strategy,
        r=best.r,
        checkpoint_interval_minutes=best.checkpoint_interval_minutes,
        hours=best.hours,
        estimate=best,
        r_values=r_values,
        hours_by_r=hours,
    )


def _walk(scenario: Scenario, strategy: str, start: int, stop: int, curve: dict) -> dict:
    """Add to ``curve`` the estimates from ``r = start`` towards ``stop`` (either way).

    The walk ends after ``stop``, at the first ``r`` without a modular ruler
    (SPARe), or once ``_PATIENCE`` consecutive ``r`` have not beaten the best
    hours of the whole ``curve`` so far.
    """
    step = 1 if stop >= start else -1
    best = min((e.hours for e in curve.values()), default=math.inf)
    worse = 0
    for r in range(start, stop + step, step):
        if strategy == "spare" and r > 1 and not _ruler_exists(scenario.groups, r):
            break
        est = curve[r] = time_to_train(scenario, strategy, r=r)
        if est.hours < best:
            best, worse = est.hours, 0
        elif math.isfinite(best):
            worse += 1
            if worse >= _PATIENCE:
                break
    return curve


def r_star_rule(N):
    """The published rule ``r* = floor(log2 N + 0.833)``.

    The constant is about ``gamma / ln 2 = 0.8327`` (Euler's gamma): the
    ``r`` at which the expected wipe-out comes when about half of the groups
    have failed, the point where two stack layers stop being enough; see
    :func:`spare_theory.symbolic.derive_r_star_constant` for the sympy
    derivation.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= 1``.

    Returns
    -------
    int or numpy.ndarray of int
        ``floor(log2 N + 0.833)``, at least 1.
    """
    N = as_count_array(N, "N", minimum=1)
    out = np.maximum(np.floor(np.log2(N) + R_STAR_CONSTANT), 1).astype(np.int64)
    return int(out) if out.ndim == 0 else out
