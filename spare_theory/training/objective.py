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

import math
from typing import Any

from scipy.optimize import minimize_scalar

from .._validation import as_choice
from ..hourly.model import evaluate_law, scenario_cycle
from ..hourly.renewal import TrainingEstimate
from ..hourly.scenario import Scenario
from ..planning.bill import CostModel

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
    scenario: Scenario,
    strategy: Any,
    r: int,
    variables: dict[str, Any],
    start: TrainingEstimate,
    cost: CostModel,
) -> TrainingEstimate:
    """The estimate at the checkpoint interval of least energy, at ``r`` and ``variables``.

    Brent's bounded search (``scipy.optimize.minimize_scalar``) over
    ``log tau`` within a factor 30 either side of ``start``'s interval (the
    hours-optimal one); ``start`` is kept unless the search finds less energy.

    Parameters
    ----------
    scenario : Scenario
        The run.
    strategy : Strategy
        The strategy object (looked up).
    r : int
        Redundancy.
    variables : dict
        The strategy's plan variables at ``r`` (the quorum of elastic DP).
    start : TrainingEstimate
        The hours-optimal estimate at ``r``.
    cost : CostModel

    Returns
    -------
    TrainingEstimate

    Examples
    --------
    >>> from spare_theory import Scenario, strategy
    >>> from spare_theory.training.optimize import optimal_interval
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> fast = optimal_interval(sc, "ckpt", None)
    >>> lean = energy_interval(sc, strategy("ckpt"), 1, {}, fast, CostModel())
    >>> lean.bill(CostModel()).energy_mwh <= fast.bill(CostModel()).energy_mwh
    True
    """
    if not math.isfinite(start.hours):
        return start
    law = scenario_cycle(scenario, strategy, r, variables)

    def at(x: float) -> TrainingEstimate:
        return evaluate_law(scenario, law, math.exp(x), strategy.name)

    def energy(x: float) -> float:
        return objective_value(at(x), "energy", cost)

    x0 = math.log(start.checkpoint_interval_minutes)
    found = minimize_scalar(energy, bounds=(x0 - _SPAN, x0 + _SPAN), method="bounded")
    best = at(float(found.x))
    if objective_value(best, "energy", cost) < objective_value(start, "energy", cost):
        return best
    return start
