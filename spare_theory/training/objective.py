"""What a plan minimises: wall hours, dollars or energy (``optimal_plan(objective=...)``).

- ``"hours"``: the expected wall time (the default).
- ``"usd"``: ``usd = G_r x hours x gpu_hour_usd`` with ``G_r`` the reserved
  GPUs, the scenario's GPUs plus its spare nodes' GPUs: fixed by the
  scenario, the same for every ``r``, interval and strategy (hot spares'
  spare groups are among the scenario's GPUs).  Dollars are proportional to
  hours, so the plan that minimises one minimises the other, and the search
  is the hours search.
- ``"energy"``: ``pue (G_r hours W_idle + busy_gpu_hours (W_busy - W_idle)) /
  1e6`` (:mod:`spare_theory.planning.bill`) weighs the idle time (restarts,
  stalls, idle spares) below the busy time (checkpoints, lost and redundant
  compute), so its best interval and ``r`` need not be those of the hours:
  at each ``r`` the interval is searched again for the least energy
  (:func:`energy_interval`), from the hours-optimal one, and the walk over
  ``r`` minimises energy.  A strategy's other plan variables (an elastic
  quorum) stay those of the hours search at that ``r``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from scipy.optimize import minimize_scalar

from .._validation import as_choice
from ..hourly.model import estimate_plan
from ..hourly.renewal import TrainingEstimate
from ..planning.bill import CostModel
from ..planning.resolved import Resolved

__all__ = ["OBJECTIVES", "check_objective", "energy_interval", "objective_value"]

#: What ``optimal_plan`` can minimise.
OBJECTIVES = ("hours", "usd", "energy")
# The energy-optimal interval is searched within this factor of the hours-optimal one.
_SPAN = math.log(30.0)


def check_objective(objective: Any, cost: Any) -> tuple[str, CostModel]:
    """``(objective, cost)`` checked; ``cost`` defaults to ``CostModel()``.

    Examples
    --------
    >>> check_objective("energy", None)[1].busy_watts_per_gpu
    700.0
    """
    objective = as_choice(objective, "objective", OBJECTIVES)
    if cost is None:
        cost = CostModel()
    if not isinstance(cost, CostModel):
        raise ValueError(f"cost must be a CostModel, got {type(cost).__name__}")
    return objective, cost


def objective_value(estimate: Any, objective: str, cost: CostModel) -> float:
    """The value of ``objective`` at ``estimate`` (``inf`` for a run that never finishes).

    Examples
    --------
    >>> from spare_theory import Scenario, time_to_train
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> est = time_to_train(sc, "ckpt", checkpoint_interval_minutes=30)
    >>> objective_value(est, "usd", CostModel(gpu_hour_usd=1.0)) == 1024 * est.hours
    True
    """
    if not math.isfinite(estimate.hours):
        return math.inf
    bill = estimate.bill(cost)
    return float({"hours": bill.hours, "usd": bill.usd, "energy": bill.energy_mwh}[objective])


def energy_interval(
    resolved: Resolved, start: TrainingEstimate, cost: CostModel
) -> TrainingEstimate:
    """The estimate at the checkpoint interval of least energy, at the plan's ``r`` and variables.

    Brent's bounded search (``scipy.optimize.minimize_scalar``) over
    ``log tau`` within a factor 30 either side of ``start``'s interval (the
    hours-optimal one); ``start`` is kept unless the search finds less energy.

    Parameters
    ----------
    resolved : Resolved
        The resolved plan (:func:`spare_theory.training.resolve.resolve`) at
        its ``r`` and plan variables (the quorum of elastic DP).
    start : TrainingEstimate
        The hours-optimal estimate of ``resolved``.
    cost : CostModel

    Returns
    -------
    TrainingEstimate

    Examples
    --------
    >>> from spare_theory import Scenario, time_to_train
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> fast = time_to_train(sc, "ckpt")
    >>> lean = energy_interval(resolve(sc, "ckpt"), fast, CostModel())
    >>> lean.bill(CostModel()).energy_mwh <= fast.bill(CostModel()).energy_mwh
    True
    """
    if not math.isfinite(start.hours):
        return start

    def at(x: float) -> TrainingEstimate:
        return estimate_plan(dataclasses.replace(resolved, checkpoint_interval_minutes=math.exp(x)))

    def energy(x: float) -> float:
        return objective_value(at(x), "energy", cost)

    x0 = math.log(start.checkpoint_interval_minutes)
    found = minimize_scalar(energy, bounds=(x0 - _SPAN, x0 + _SPAN), method="bounded")
    best = at(float(found.x))
    if objective_value(best, "energy", cost) < objective_value(start, "energy", cost):
        return best
    return start
