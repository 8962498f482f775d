"""Verification of a plan: simulate it and its neighbours, and move when a neighbour is better.

``optimal_plan(..., verify=True)`` (or ``verify=log``, a
:class:`~spare_theory.traces.failure_log.FailureLog`) hands its plan to
:func:`verify_plan`, which plays the plan and its neighbours on common
random numbers (the same trials for every candidate), each to the relative
standard error ``rel_se`` (:class:`~spare_theory.training.simsearch.Sampler`):

- ``r - 1`` and ``r + 1`` (where the strategy has an ``r`` and takes them);
- the checkpoint interval ``x 0.7`` and ``x 1.4`` (steps rounded, at least 1);
- the strategy's own plan variable one step either way (elastic DP's quorum:
  ``max(1, round(N / 32))`` groups; :data:`QUORUM_STEP_SHARE`).

A neighbour's runs stop at :data:`NEIGHBOUR_HORIZON` times the plan's
simulated mean; one that does not finish there is not a better plan.
A neighbour whose hours are lower by more than two standard errors of the
paired per-trial difference becomes the plan (the best such one), and
``Plan.moved_by_verification`` is true.  The plan then carries
``verified_hours`` and ``verified_standard_error`` (the simulated mean of the
plan returned and its standard error) and, for a model plan,
``model_error = hours / verified_hours - 1``; its caveats are that measured
error in place of the fixed list of documented biases.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..hourly.scenario import Scenario
from ..planning.plan import Plan
from ..planning.resolved import Resolved
from .estimate import estimate_job
from .resolve import reported_r, resolve
from .simsearch import HORIZON_BEST, HORIZON_WORK, Player, Sampler

__all__ = [
    "INTERVAL_FACTORS",
    "LOG_SOURCE",
    "NEIGHBOUR_HORIZON",
    "QUORUM_STEP_SHARE",
    "neighbours",
    "played_key",
    "verify_plan",
]

#: The checkpoint intervals tried beside the plan's, as factors of it.
INTERVAL_FACTORS = (0.7, 1.4)
#: One step of a strategy's own plan variable (a quorum), as a share of the groups.
QUORUM_STEP_SHARE = 1 / 32
#: Neighbours' runs stop unfinished at this many times the plan's simulated mean hours.
NEIGHBOUR_HORIZON = 3.0
# A neighbour replaces the plan when better by more than this many paired standard errors.
_MOVE_STANDARD_ERRORS = 2.0
#: What a plan verified on a failure log says it was verified against.
LOG_SOURCE = "the replay of the failure log"


def played_key(resolved: Resolved, horizon_hours: float) -> tuple:
    """What a plan's runs depend on up to ``horizon_hours``: two plans with one key play alike.

    A checkpoint interval (compute minutes) longer than the horizon (wall
    minutes) is never reached, so every such interval plays as "no
    checkpoint": the ``x 0.7`` and ``x 1.4`` neighbours of a plan that never
    checkpoints (SPARe or elastic DP over a whole run) are that plan again.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10)
    >>> a, b = (resolve(sc, "rep", r=2, checkpoint_interval_minutes=m) for m in (9e3, 6e3))
    >>> played_key(a, 50.0) == played_key(b, 50.0), played_key(a, 200.0) == played_key(b, 200.0)
    (True, False)
    """
    interval = resolved.checkpoint_interval_minutes
    if interval is not None:
        interval = min(round(interval, 6), 60.0 * horizon_hours)
    return (resolved.r, resolved.plan, interval, resolved.checkpoint_every_steps)


def neighbours(resolved: Resolved, fixed: frozenset[str] = frozenset()) -> Iterator[Resolved]:
    """The plans beside ``resolved``: ``r +- 1``, interval ``x 0.7, x 1.4``, variable +- a step.

    Parameters
    ----------
    resolved : Resolved
        A resolved plan with its interval.
    fixed : frozenset of str
        What the caller fixed, which no neighbour changes: ``"r"``,
        ``"interval"``, or a plan variable's name.

    Yields
    ------
    Resolved
        Each neighbour the strategy accepts.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10)
    >>> resolved = resolve(sc, "rep", r=2, checkpoint_interval_minutes=60)
    >>> [(n.r, n.checkpoint_interval_minutes) for n in neighbours(resolved)]
    [(1, 60.0), (3, 60.0), (2, 42.0), (2, 84.0)]
    >>> el = resolve(sc, "elastic", min_groups=32, checkpoint_interval_minutes=60)
    >>> [n.variables["min_groups"] for n in neighbours(el) if n.checkpoint_interval_minutes == 60]
    [30, 34]
    """
    chosen, N, r = resolved.strategy, resolved.scenario.groups, resolved.chosen_r
    searched = chosen.plan_search(N, r)
    if chosen.r_variable is not None and "r" not in fixed:
        for other in (r - 1, r + 1):
            if other >= 1 and chosen.accepts(N, other):
                kept = resolved.variables if searched is not None else {}
                try:
                    yield resolved.with_plan(r=other, **chosen.check_plan(N, other, kept))
                except ValueError:  # the plan's variables do not fit that r
                    continue
    for factor in () if "interval" in fixed else INTERVAL_FACTORS:
        if resolved.checkpoint_interval_minutes is not None:
            yield dataclasses.replace(
                resolved, checkpoint_interval_minutes=factor * resolved.checkpoint_interval_minutes
            )
        elif resolved.checkpoint_every_steps is not None:
            k = max(1, round(factor * resolved.checkpoint_every_steps))
            if k != resolved.checkpoint_every_steps:
                yield dataclasses.replace(resolved, checkpoint_every_steps=k)
    if searched is not None and searched[0] not in fixed:
        name = searched[0]
        step = max(1, round(N * QUORUM_STEP_SHARE))
        for value in (resolved.variables[name] - step, resolved.variables[name] + step):
            try:
                yield resolved.with_plan(r=r, **chosen.check_plan(N, r, {name: value}))
            except ValueError:  # outside the variable's range
                continue


def verify_plan(
    plan: Plan,
    scenario: Any,
    *,
    play: Player,
    rel_se: float,
    max_trials: int,
    source: str,
    fixed: frozenset[str] = frozenset(),
) -> Plan:
    """Simulate ``plan`` and its :func:`neighbours`; the better neighbour, if any, becomes the plan.

    Parameters
    ----------
    plan : Plan
        A plan of :func:`spare_theory.optimal_plan`.
    scenario : Scenario or StepScenario
        The scenario it was planned for (micro-batches folded in).
    play : callable
        The simulation (:func:`~spare_theory.training.simsearch.simulation_player`)
        or a log's replay.
    rel_se : float
        Relative standard error the plan's mean hours are played to (and a
        neighbour's that becomes the plan); a neighbour is played until the
        standard error of its paired difference from the plan is below
        ``rel_se`` times the plan's mean
        (:meth:`~spare_theory.training.simsearch.Sampler.measure_paired`).
    max_trials : int
        Most trials per candidate.
    source : str
        What was simulated, in words (said in the plan's caveat).
    fixed : frozenset of str
        What the caller fixed (:func:`neighbours`).

    Returns
    -------
    Plan
        With ``verified_hours``, ``verified_standard_error`` and
        ``moved_by_verification``; its caveats the measured error.

    Examples
    --------
    >>> from spare_theory import Scenario, optimal_plan
    >>> from spare_theory.training.simsearch import simulation_player
    >>> sc = Scenario(gpus=512, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=10)
    >>> plan = verify_plan(optimal_plan(sc, "rep"), sc, play=simulation_player(seed=0),
    ...                    rel_se=0.01, max_trials=256, source="the scenario's law")
    >>> plan.verified_hours is not None, abs(plan.model_error) < 0.05
    (True, True)
    """
    center = resolve(scenario, plan)
    hourly = isinstance(center.scenario, Scenario)
    work = center.scenario.work_hours if hourly else center.scenario.failure_free_hours
    if plan.hours > HORIZON_WORK * work:
        # A plan that takes this long is no plan, and its runs are the most expensive.
        line = (
            f"not verified: the plan's {plan.hours:,.5g} h are over {HORIZON_WORK:g} x the work "
            f"({HORIZON_WORK * work:,.5g} h): it does not finish in any useful time"
        )
        unverified = dataclasses.replace(plan.estimate, caveats=(line,))
        return dataclasses.replace(plan, estimate=unverified)
    # Runs stop at 10 x the plan's hours (its mean is then measured, not cut by the
    # horizon a search starts from), or 20 x the work if later.
    horizon = max(HORIZON_WORK * work, HORIZON_BEST * plan.hours)
    sampler = Sampler(
        play, rel_se=rel_se, max_trials=max_trials, work_hours=work, horizon_hours=horizon
    )
    first = sampler.measure(center)
    finished = bool(np.isfinite(np.asarray(first.hours, dtype=np.float64)).all())
    if finished:
        # A neighbour with a run this long is not the better plan (it is skipped, its
        # runs unfinished), and its long runs were most of the time verification took.
        sampler.horizon_hours = NEIGHBOUR_HORIZON * float(np.mean(first.hours))
    # A plan whose own runs do not finish has no mean to compare neighbours with.
    candidates = [center]
    if finished:  # the neighbours that play otherwise than the plan (and one another)
        seen = {played_key(center, sampler.horizon_hours)}
        for near in neighbours(center, fixed):
            key = played_key(near, sampler.horizon_hours)
            if key not in seen:
                seen.add(key)
                candidates.append(near)
    # A neighbour is played until its difference from the plan is known, not its own
    # mean: on common random numbers that takes a fraction of the trials.
    runs = [first, *(sampler.measure_paired(candidate, first) for candidate in candidates[1:])]
    best, best_gain = 0, 0.0
    base = np.asarray(first.hours, dtype=np.float64)
    for i, other in enumerate(runs[1:], start=1):
        n = min(base.size, other.trials)
        hours = np.asarray(other.hours[:n], dtype=np.float64)
        if not np.isfinite(hours).all() or n < 2:
            continue
        gap = base[:n] - hours
        mean, se = float(gap.mean()), float(gap.std(ddof=1) / math.sqrt(n))
        if mean > _MOVE_STANDARD_ERRORS * se and mean > best_gain:
            best, best_gain = i, mean
    resolved = candidates[best]
    samples = sampler.measure(resolved)  # a neighbour taken: its own mean to rel_se
    hours = np.asarray(samples.hours, dtype=np.float64)
    finite = bool(np.isfinite(hours).all())
    verified = float(hours.mean()) if finite else math.inf
    verified_se = float(hours.std(ddof=1) / math.sqrt(hours.size)) if finite else math.inf
    estimate: Any = plan.estimate
    if best != 0:
        estimate = (
            estimate_job(resolved)
            if plan.method == "model"
            else dataclasses.replace(
                plan.estimate,
                r=reported_r(resolved),
                samples=samples,
                checkpoint_interval_minutes=resolved.checkpoint_interval_minutes,
                checkpoint_every_steps=resolved.checkpoint_every_steps,
                interval_limit=None,
            )
        )
    line = _measured(estimate, plan.method, verified, verified_se, samples.trials, source)
    if best != 0:
        line += f"; moved from the searched plan ({_variables_text(center)}), which simulated "
        line += f"{best_gain:.3g} h worse"
    return dataclasses.replace(
        plan,
        estimate=dataclasses.replace(estimate, caveats=(line,)),
        verified_hours=verified,
        verified_standard_error=verified_se,
        verified_trials=int(samples.trials),
        moved_by_verification=best != 0,
        variables=resolved.variables,
    )


def _measured(
    estimate: Any, method: str, verified: float, se: float, trials: int, source: str
) -> str:
    """The caveat of a verified plan: its measured error (or its simulated precision)."""
    if not math.isfinite(verified):
        return (
            f"verified against {source}: of {trials} runs some did not finish within the "
            "simulation's horizon (10 x the plan's hours, or 20 x the work if longer)"
        )
    if method != "model":
        return (
            f"verified against {source}: {verified:,.5g} +- {se:.3g} h over {trials} runs "
            "(the plan's own figures are simulated)"
        )
    error = estimate.hours / verified - 1.0
    return (
        f"verified against {source}: the model's {estimate.hours:,.5g} h are "
        f"{100 * error:+.2f} % +- {100 * se * estimate.hours / verified**2:.2f} % of the simulated "
        f"{verified:,.5g} +- {se:.3g} h over {trials} runs"
    )


def _variables_text(resolved: Resolved) -> str:
    parts = [] if reported_r(resolved) is None else [f"r = {resolved.r}"]
    parts += [f"{name} = {value}" for name, value in resolved.plan]
    if resolved.checkpoint_interval_minutes is not None:
        parts.append(f"{resolved.checkpoint_interval_minutes:.4g} min")
    else:
        parts.append(f"every {resolved.checkpoint_every_steps} steps")
    return ", ".join(parts)
