"""Searches of the step-level model: the best checkpoint interval ``k`` and the best ``r``.

The step-level closed form (:func:`spare_theory.steps.model.step_time_to_train`)
prices one plan ``(strategy, r, k)`` of a
:class:`~spare_theory.steps.scenario.StepScenario`; this module minimises its
expected wall time.  :func:`spare_theory.time_to_train` (``k`` omitted) and
:func:`spare_theory.optimal_plan` hand step-level scenarios here.

**Over k** (:func:`optimal_checkpoint_steps`): expected time against ``k``
falls while checkpoints are too frequent and rises once too much work is
lost per restart; on the paper's scenarios it is unimodal.  A geometric grid
(ratio 1.5, ``k = 1`` to ``steps``) brackets the minimum; every integer
between the best grid point's neighbours is then evaluated, so the answer is
exact whenever the curve is unimodal on that bracket.  A ``k`` beyond the
model's horizon (no checkpoint survives a cycle) counts as infinitely slow.

**Over r** (:func:`optimal_step_plan`): as :func:`spare_theory.optimal_plan`
does for hour-level scenarios.  CKPT-only has ``r = 1``; Rep walks up from
``r = 1``; SPARe evaluates ``r = 1`` (plain checkpointing) and walks both ways
from the published rule ``r* = floor(log2 N + 0.833)`` over the ``r`` with a
modular Golomb ruler at ``N``.  A walk stops once ``_PATIENCE = 3``
consecutive ``r`` have not beaten the best time.  A new ``r`` costs one cycle
table (tens of milliseconds at ``N = 1000``), a new ``k`` well under a
millisecond.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_choice, as_count
from ..steps.estimate import StepEstimate
from ..steps.model import STEP_MODEL_STRATEGIES, step_time_to_train
from ..steps.scenario import StepScenario
from .optimize import Plan, r_star_rule, ruler_exists

__all__ = ["optimal_checkpoint_steps", "optimal_step_plan"]

_PATIENCE = 3
# Ratio of the geometric grid of k that brackets the minimum.
_K_RATIO = 1.5
# Widest bracket of k evaluated at every integer.
_EXHAUSTIVE = 64


def _estimate(sc: StepScenario, strategy: str, r: int, k: int) -> StepEstimate | None:
    """The estimate at ``k``, or ``None`` where the model finds no progress (beyond its horizon)."""
    try:
        return step_time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
    except ValueError:
        return None


def _seconds(est: StepEstimate | None) -> float:
    return math.inf if est is None or not math.isfinite(est.seconds) else est.seconds


def optimal_checkpoint_steps(scenario: StepScenario, strategy: str, r: int | None) -> StepEstimate:
    """The step-level estimate at the checkpoint interval ``k`` that minimises the expected time.

    Minimises ``step_time_to_train(scenario, strategy, r=r, checkpoint_every_steps=k).seconds``
    over integers ``1 <= k <= steps``: a geometric grid ``k ~ 1.5^j`` brackets
    the minimum, then every integer between the best grid point's neighbours
    is evaluated (a bracket wider than 64 is first narrowed by an integer
    ternary search; exact when the time is unimodal in ``k`` on that bracket).
    Ties go to the smaller ``k``.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : {"ckpt", "rep", "spare"}
        As in :func:`spare_theory.steps.model.step_time_to_train`.
    r : int or None
        Redundancy; ``None`` or 1 for ``"ckpt"``; required otherwise.

    Returns
    -------
    StepEstimate
        The estimate at the best ``k`` (``checkpoint_every_steps``).

    Raises
    ------
    ValueError
        Naming the argument (not a StepScenario, unknown strategy, ``r``
        missing or out of range), or when no ``k`` lets the run progress.

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> est = optimal_checkpoint_steps(paper_scenario(200), "rep", 3)
    >>> est.checkpoint_every_steps, round(est.total_over_T0, 2)
    (4, 6.05)
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_MODEL_STRATEGIES)
    if r is None:
        if strategy != "ckpt":
            raise ValueError(f"r is required for strategy {strategy!r}")
        r = 1
    r = as_count(r, "r", maximum=scenario.groups)
    # Validates (scenario, strategy, r) and raises ValueError naming the argument.
    first = step_time_to_train(scenario, strategy, r=r, checkpoint_every_steps=1)
    steps = scenario.steps
    n_grid = math.ceil(math.log(steps) / math.log(_K_RATIO)) + 1 if steps > 1 else 1
    grid = np.unique(np.clip(np.round(_K_RATIO ** np.arange(n_grid)), 1, steps).astype(int))
    found: dict[int, StepEstimate | None] = {1: first}
    for k in grid.tolist():
        if k not in found:
            found[k] = _estimate(scenario, strategy, r, k)
    ks = sorted(found)
    values = [_seconds(found[k]) for k in ks]
    i = int(np.argmin(values))
    lo, hi = ks[max(i - 1, 0)], ks[min(i + 1, len(ks) - 1)]
    # A wide bracket (rare restarts, e.g. with fast repairs: k in the
    # thousands) is narrowed by an integer ternary search first.
    while hi - lo > _EXHAUSTIVE:
        third = (hi - lo) // 3
        m1, m2 = lo + third, hi - third
        for m in (m1, m2):
            if m not in found:
                found[m] = _estimate(scenario, strategy, r, m)
        if _seconds(found[m1]) <= _seconds(found[m2]):
            hi = m2
        else:
            lo = m1
    for k in range(lo, hi + 1):
        if k not in found:
            found[k] = _estimate(scenario, strategy, r, k)
    best = min(sorted(found), key=lambda k: _seconds(found[k]))
    est = found[best]
    if est is None or not math.isfinite(est.seconds):
        raise ValueError(
            f"no checkpoint interval lets strategy {strategy!r} at r={r} progress on this scenario"
        )
    return est


def _candidates_ok(sc: StepScenario, strategy: str, r: int) -> bool:
    """Whether ``r`` is a plan of ``strategy`` at ``N`` (SPARe: a modular ruler exists)."""
    if r > sc.groups:
        return False
    return strategy != "spare" or r == 1 or ruler_exists(sc.groups, r)


def _walk(
    sc: StepScenario, strategy: str, start: int, stop: int, curve: dict[int, StepEstimate]
) -> None:
    """Add to ``curve`` the best-``k`` estimates from ``r = start`` towards ``stop``."""
    step = 1 if stop >= start else -1
    best = min((e.seconds for e in curve.values()), default=math.inf)
    worse = 0
    for r in range(start, stop + step, step):
        if not _candidates_ok(sc, strategy, r):
            if strategy == "spare" and r > 1:
                break
            continue
        try:
            est = optimal_checkpoint_steps(sc, strategy, r)
        except ValueError:
            worse += 1  # no k progresses at this r
        else:
            curve[r] = est
            if est.seconds < best:
                best, worse = est.seconds, 0
                continue
            worse += 1
        if worse >= _PATIENCE and math.isfinite(best):
            break


def optimal_step_plan(scenario: StepScenario, strategy: str) -> Plan:
    """Minimise the step-level model's expected time over ``r`` and ``k`` (both integers).

    The search of :func:`spare_theory.optimal_plan` for a
    :class:`~spare_theory.steps.scenario.StepScenario`: ``k`` by
    :func:`optimal_checkpoint_steps` at each ``r``; ``r`` by walks that stop
    after ``3`` consecutive ``r`` without improvement (module docstring).

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : {"ckpt", "rep", "spare"}
        Strategy; SPARe uses the ``r`` with a modular Golomb ruler at
        ``N = scenario.groups``.

    Returns
    -------
    Plan
        ``estimate`` (a :class:`~spare_theory.steps.estimate.StepEstimate`), ``r``,
        ``checkpoint_every_steps``, ``hours``, and the best hours at every
        scanned ``r`` (``r_values``, ``hours_by_r``).  Ties go to the smaller ``r``.

    Raises
    ------
    ValueError
        Naming the argument, or when no plan progresses.

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> plan = optimal_step_plan(paper_scenario(200, steps=2000), "spare")
    >>> plan.r, plan.checkpoint_every_steps, round(plan.estimate.total_over_T0, 2)
    (9, 14, 3.06)
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_MODEL_STRATEGIES)
    N = scenario.groups
    curve: dict[int, StepEstimate] = {}
    if strategy == "ckpt":
        curve[1] = optimal_checkpoint_steps(scenario, strategy, 1)
    elif strategy == "rep":
        _walk(scenario, strategy, 1, N, curve)
    else:
        _walk(scenario, strategy, 1, 1, curve)
        start = max(
            r for r in range(1, int(r_star_rule(N)) + 1) if _candidates_ok(scenario, strategy, r)
        )
        if start > 1:
            _walk(scenario, strategy, start, N, curve)
            _walk(scenario, strategy, start - 1, 2, curve)
    if not curve:
        raise ValueError(f"no plan of strategy {strategy!r} progresses on this scenario")
    r_values = np.array(sorted(curve), dtype=np.int64)
    hours = np.array([curve[int(r)].hours for r in r_values])
    best = curve[int(r_values[int(np.argmin(hours))])]
    return Plan(estimate=best, r_values=r_values, hours_by_r=hours)
