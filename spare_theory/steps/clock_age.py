"""A run whose failure clocks age: the estimate mixed over the clocks' age through the run.

Every worker's clock is a renewal process of the failure law, fresh when the
run starts (``StepScenario.clock_age_seconds``: 0, as in the published
simulator) or already running for a while.  For the exponential law its age
changes nothing; for another it does: young Weibull clocks of shape below 1
fail far more often than the long-running average ``1/m`` (each worker
brings ``(CV^2 - 1)/2`` extra failures over a long run; 2 at shape 0.5),
those of shape above 1 less often.  A cycle table built for clocks of age
``a`` (their residual life ``F_a``,
:func:`~spare_theory.steps.restarts.residual_life`) prices the run as if the
clocks stayed at that age; call its estimate ``T(a)``, seconds.  While the
clocks are near age ``a`` the run does the share ``ds / T(a)`` of its work
per second ``ds``, so (quasi-static: the law changes slowly against one
cycle) the run ends at the ``T`` with ``int_0^T ds / T(a_0 + s) = 1``, and
each part of the estimate is ``sum_j c_j X_j`` with ``c_j`` the share of the
work done while the clocks are in age cell ``j`` (``sum c_j = 1``; seconds
add up to ``T``).

Cells: ``[0, e_1]``, geometric ones up to ``e_K = 10 m`` past the start
(the residual life is then the equilibrium law's to a few per mille), and
the equilibrium law beyond; each priced at its middle (geometric but for
the first).  What is dropped: the age of a worker that just failed (fresh
again, its clock younger than the rest: 5 points of the 20 % miss of audit
scenario 9 of seed 2026), and that the cells' cycles start at the cell's
age, not spread over it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..lifetimes.laws import memoryless
from .scenario import StepScenario

__all__ = ["AGE_CELLS", "age_cells", "mix_over_ages"]

#: Geometric age cells between the first edge and ten mean lifetimes (6, 10 and 20 price
#: audit scenarios 9, 136 and 144 of seed 2026 within 0.4 % of each other).
AGE_CELLS = 6
# The first edge, as a share of the mean lifetime.
_FIRST_EDGE = 1e-3
# The last edge, in mean lifetimes: beyond it the clocks are taken at equilibrium.
_LAST_EDGE = 10.0
# Parts of an estimate that are rates or shares, not sums: mixed by their own weights.
_PER_RESTART = ("mean_restart_seconds", "cycle_steps")


def age_cells(mean_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, ages)``: the cells' edges after the start and the age each is priced at.

    Parameters
    ----------
    mean_seconds : float
        Mean lifetime of the failure law, seconds.

    Returns
    -------
    tuple of numpy.ndarray
        ``K + 2`` edges from 0 to ``10 m`` and ``K + 1`` ages (seconds
        since the start, the middle of each cell).

    Examples
    --------
    >>> edges, ages = age_cells(1000.0)
    >>> float(edges[0]), float(edges[-1]), ages.size == edges.size - 1
    (0.0, 10000.0, True)
    """
    inner = np.geomspace(_FIRST_EDGE * mean_seconds, _LAST_EDGE * mean_seconds, AGE_CELLS + 1)
    edges = np.concatenate([[0.0], inner])
    ages = np.concatenate([[0.5 * inner[0]], np.sqrt(inner[:-1] * inner[1:])])
    return edges, ages


def mix_over_ages(scenario: StepScenario, frozen: Callable[[StepScenario], Any]) -> Any:
    """The estimate of ``scenario`` with its clocks ageing through the run (module docstring).

    ``frozen(scenario)`` is the estimate with the clocks held at the
    scenario's ``clock_age_seconds`` (``None``: long-running); it is called
    once per age cell the run reaches, and the result is its estimates mixed
    by the share of the work done in each.  The exponential law, or clocks
    already long-running, need no mixing: ``frozen(scenario)``.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    frozen : callable
        ``StepScenario -> StepEstimate``.

    Returns
    -------
    StepEstimate

    Examples
    --------
    Young clocks of Weibull shape 0.6 fail more often than long-running ones:

    >>> from dataclasses import replace
    >>> from spare_theory.steps.cycles import rep_step_cycle
    >>> from spare_theory.steps.estimate import estimate_steps
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = paper_scenario(50, steps=300, restart_seconds=600.0, failure_law="weibull")
    >>> def frozen(s):
    ...     return estimate_steps(s, rep_step_cycle(s, 1), strategy="ckpt", r=1,
    ...                           checkpoint_every_steps=5)
    >>> aged = mix_over_ages(sc, frozen)
    >>> running = frozen(replace(sc, clock_age_seconds=None))
    >>> bool(aged.hours > running.hours), bool(aged.failures > running.failures)
    (True, True)
    """
    law, start = scenario.failure_law, scenario.clock_age_seconds
    if start is None or memoryless(law):
        return frozen(scenario)
    edges, ages = age_cells(float(law.mean()))
    estimates, shares = [], []
    left = 1.0  # share of the run's work still to do
    for lo, hi, age in zip(edges[:-1], edges[1:], ages, strict=True):
        est = frozen(_aged(scenario, start + float(age)))
        if not np.isfinite(est.seconds):  # no progress at that age: the run never ends
            return est
        share = min((hi - lo) / est.seconds, left)
        estimates.append(est)
        shares.append(share)
        left -= share
        if left <= 0.0:
            break
    if left > 0.0:
        estimates.append(frozen(_aged(scenario, None)))
        shares.append(left)
    return _mixed(estimates, np.array(shares))


def _aged(scenario: StepScenario, age_seconds: float | None) -> StepScenario:
    """``scenario`` with clocks of another age (valid as it is: no field is checked again)."""
    out = copy.copy(scenario)
    object.__setattr__(out, "clock_age_seconds", age_seconds)
    return out


def _mixed(estimates: list[Any], shares: np.ndarray) -> Any:
    """Estimates mixed field by field with weights ``shares`` (sums; ratios recomputed)."""
    first = estimates[0]
    numeric = [
        f.name
        for f in dataclasses.fields(first)
        if isinstance(getattr(first, f.name), float) and f.name not in _PER_RESTART
    ]
    out = {name: float(shares @ [getattr(e, name) for e in estimates]) for name in numeric}
    restarts = shares * np.array([e.restarts for e in estimates])
    for name in _PER_RESTART:
        values = np.array([getattr(e, name) for e in estimates])
        out[name] = float(restarts @ values / restarts.sum()) if restarts.sum() > 0 else values[0]
    out["hours"] = out["seconds"] / 3600.0
    out["uptime"] = 1.0 - out["down_seconds"] / out["seconds"]
    out["idle_share"] = first.idle_share
    return dataclasses.replace(first, **out)
