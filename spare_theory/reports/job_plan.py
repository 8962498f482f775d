"""A job's plans and their bills: every strategy's best plan, as records and as one figure.

:func:`plan_job` plans a :class:`~spare_theory.jobs.job.Job` with every
registered strategy (or those given) under an objective (hours, dollars or
energy) and prices each plan with a
:class:`~spare_theory.planning.bill.CostModel`; :func:`job_figure` draws the
lost time by cause (one stacked bar per strategy) and the dollars and MWh
against ``r``.  What ``spare-theory plan JOB.toml`` prints and plots, and what
``notebooks/10_plan_a_job.ipynb`` shows; the records' schema is in
``docs/jobs.md``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from ..jobs.job import Job
from ..planning.bill import BADPUT_CAUSES, CostModel
from ..strategies.registry import registered_strategies, strategy
from ..training.objective import check_objective
from ..training.optimize import optimal_plan
from ..training.simsearch import DEFAULT_MAX_TRIALS, DEFAULT_REL_SE

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["CAUSE_LABELS", "best_strategy", "job_figure", "plan_job", "plan_scenario"]

#: Short names of the badput causes, for tables and legends.
CAUSE_LABELS = {
    "checkpoint_save": "checkpoint save",
    "wasted_progress": "wasted progress",
    "restart": "restart",
    "redundant_compute": "redundant compute",
    "reconfiguration": "reconfiguration",
    "skipped_samples": "skipped samples",
    "idle_spares": "idle spares",
}
_OBJECTIVE_KEY = {"hours": "hours", "usd": "usd", "energy": "energy_mwh"}


def _plan_record(
    scenario: Any,
    name: str,
    objective: str,
    cost: CostModel,
    verify: dict[str, Any] | None,
    curves: bool = True,
) -> dict[str, Any]:
    """One strategy's best plan, its bill and its bills by ``r`` (if ``curves``), JSON-able."""
    chosen = strategy(name)
    record: dict[str, Any] = {"strategy": chosen.name, "label": chosen.label}
    checks = {} if verify is None else {"verify": True, **verify}
    try:
        plan = optimal_plan(scenario, chosen, objective=objective, cost=cost, **checks)
    except ValueError as exc:
        return record | {"modelled": False, "reason": str(exc)}
    est = plan.estimate
    record |= {
        "modelled": True,
        "r": plan.r,
        "checkpoint_interval_minutes": est.checkpoint_interval_minutes,
        "interval_limit": est.interval_limit,
        "plan_variables": dict(plan.variables),
        "hours": est.hours,
        "availability": est.availability,
        "uptime": est.uptime,
        "restarts": est.restarts,
        "samples_skipped": est.samples_skipped,
        "feasible": est.feasible,
        "reason": est.reason,
        "method": plan.method,
        "caveats": list(plan.caveats),
        "verified_hours": plan.verified_hours,
        "verified_standard_error": plan.verified_standard_error,
        "verified_trials": plan.verified_trials,
        "model_error": plan.model_error,
        "moved_by_verification": plan.moved_by_verification,
    }
    if not math.isfinite(est.hours):
        return record | {"bill": None, "by_r": []}
    by_r = []
    # Each r at its hours-optimal interval (cached from the plan's own walk); a strategy
    # without an r of its own (CKPT-only, elastic DP) has no curve.
    for r in plan.r_values.tolist() if plan.r is not None and curves else []:
        at = optimal_plan(scenario, chosen, r=r).estimate
        if math.isfinite(at.hours):
            bill = at.bill(cost)
            by_r.append(
                {"r": r, "hours": bill.hours, "usd": bill.usd, "energy_mwh": bill.energy_mwh}
            )
    bill = est.bill(cost).to_dict()
    verified = plan.verified_hours
    if verified is not None and math.isfinite(verified):
        # Dollars are G_r x hours x price: the simulated hours price exactly.  The energy's
        # busy and idle split is the model's breakdown, which the simulation does not give.
        bill |= {
            "verified_hours": verified,
            "verified_standard_error": plan.verified_standard_error,
            "verified_usd": bill["usd"] * verified / bill["hours"],
        }
    return record | {"bill": bill, "by_r": by_r}


def best_strategy(plans: dict[str, dict[str, Any]], objective: str) -> str | None:
    """The strategy whose feasible plan has the least ``objective`` (``None``: no plan finishes).

    A verified plan is ranked by its simulated hours or dollars
    (``verified_hours``, ``verified_usd`` of its bill), the others and the
    energy by the plan's own figures.

    Examples
    --------
    >>> plans = {"a": {"modelled": True, "feasible": True, "bill": {"usd": 2.0}},
    ...          "b": {"modelled": True, "feasible": True, "bill": {"usd": 1.0}}}
    >>> best_strategy(plans, "usd")
    'b'
    >>> plans["a"]["bill"]["verified_usd"] = 0.9  # a simulated bill ranks before the model's
    >>> best_strategy(plans, "usd")
    'a'
    """
    key = _OBJECTIVE_KEY[objective]
    ok = {n: p for n, p in plans.items() if p["modelled"] and p["feasible"] and p["bill"]}
    if not ok:
        return None
    return min(ok, key=lambda n: ok[n]["bill"].get(f"verified_{key}", ok[n]["bill"][key]))


def plan_scenario(
    scenario: Any,
    cost: CostModel,
    *,
    objective: str = "hours",
    strategies: Any = None,
    verify: bool = False,
    seed: int = 0,
    rel_se: float = DEFAULT_REL_SE,
    max_trials: int = DEFAULT_MAX_TRIALS,
    executor: Any = None,
    progress: bool = False,
    curves: bool = True,
) -> dict[str, Any]:
    """Every strategy's best plan for ``scenario`` under ``objective``, with its bill (JSON-able).

    Parameters
    ----------
    scenario : Scenario
        The run (a job's: :meth:`Job.scenario <spare_theory.jobs.job.Job.scenario>`).
    cost : CostModel
        Prices and powers.
    objective : {"hours", "usd", "energy"}
        What each strategy's plan minimises (:func:`spare_theory.optimal_plan`).
    strategies : sequence of str, optional
        The strategies (default: every registered one).
    verify : bool, default False
        Simulate each strategy's best plan and its neighbours on common
        random numbers (``optimal_plan(..., verify=True)``): each record then
        carries ``verified_hours``, ``verified_standard_error`` (hours),
        ``verified_trials``, ``model_error`` (model hours over simulated hours,
        minus 1) and ``moved_by_verification``, and its bill
        ``verified_hours``, ``verified_standard_error`` and ``verified_usd``
        (``usd`` at the simulated hours: dollars are reserved GPUs x hours x
        price).  ``spare-theory plan`` verifies unless ``--no-verify``.
    seed, rel_se, max_trials, executor, progress
        The verification's simulation, as :func:`spare_theory.optimal_plan`.
    curves : bool, default True
        Each record's ``by_r``: the bill at every ``r`` the plan's walk
        tried (``False``: an empty list, and a plan per strategy only).

    Returns
    -------
    dict
        ``objective``, ``scenario`` (its fields and ``provenance``), ``cost``,
        ``plans`` (a record per strategy: ``docs/jobs.md``), ``best`` (the
        strategy of least objective, ``None`` if none finishes) and
        ``verified`` (whether the plans were simulated).

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from; the result echoes it under
      ``scenario`` and no plan reads it.

    Examples
    --------
    >>> job = Job(parameters=7e9, gpus=512, gpus_per_group=8, gpu_mtbf_hours=200.0,
    ...           work_hours=100)
    >>> out = plan_scenario(job.scenario(restart_minutes=30), job.cost_model(),
    ...                     strategies=["ckpt", "spare"])
    >>> out["best"], out["plans"]["spare"]["r"], sorted(out["plans"]["ckpt"]["bill"])[:3]
    ('spare', 5, ['badput_hours', 'busy_gpu_hours', 'co2_tonnes'])
    """
    objective, cost = check_objective(objective, cost)
    names = registered_strategies() if strategies is None else tuple(strategies)
    checks = (
        dict(seed=seed, rel_se=rel_se, max_trials=max_trials, executor=executor, progress=progress)
        if verify
        else None
    )
    plans = {name: _plan_record(scenario, name, objective, cost, checks, curves) for name in names}
    fields = {
        f.name: getattr(scenario, f.name)
        for f in dataclasses.fields(scenario)
        if f.name != "provenance"
    }
    plain = {
        k: v if isinstance(v, int | float | str | bool) or v is None else str(v)
        for k, v in fields.items()
    }
    return {
        "objective": objective,
        "scenario": plain | {"provenance": dict(scenario.provenance)},
        "cost": dataclasses.asdict(cost),
        "plans": plans,
        "best": best_strategy(plans, objective),
        "verified": bool(verify),
    }


def plan_job(
    job: Job,
    cost: CostModel | None = None,
    *,
    objective: str = "hours",
    scenario: dict[str, Any] | None = None,
    failure_log: Any = None,
    log_options: dict[str, Any] | None = None,
    strategies: Any = None,
    **verification: Any,
) -> dict[str, Any]:
    """:func:`plan_scenario` of a job's scenario.

    Parameters
    ----------
    job : Job
        The job.
    cost : CostModel, optional
        Default: :meth:`Job.cost_model` (the preset's watts, the other defaults).
    objective, strategies, **verification
        As :func:`plan_scenario` (``verify``, ``seed``, ``rel_se``, ...).
    scenario : dict, optional
        Scenario fields that replace the job's.
    failure_log : FailureLog, optional
        Take the failure fields from this log (:meth:`Job.scenario`).
    log_options : dict, optional
        The log scenario's keywords (``law``, ``renewal``, ...).

    Returns
    -------
    dict

    Examples
    --------
    >>> job = Job(parameters=7e9, gpus=512, gpus_per_group=8, gpu_mtbf_hours=200.0,
    ...           work_hours=100)
    >>> plan_job(job, scenario={"restart_minutes": 30}, strategies=["ckpt"])["best"]
    'ckpt'
    """
    overrides = {**(scenario or {}), **(log_options or {})}
    sc = job.scenario(failure_log=failure_log, **overrides)
    return plan_scenario(
        sc,
        job.cost_model() if cost is None else cost,
        objective=objective,
        strategies=strategies,
        **verification,
    )


def job_figure(result: dict[str, Any]) -> Figure:
    """The lost time by cause (a stacked bar per strategy) and dollars and MWh against ``r``.

    Parameters
    ----------
    result : dict
        What :func:`plan_job` returned.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels; the right one has dollars on its left axis and MWh on its
        right one, a line per strategy (each ``r`` at its hours-optimal
        interval; one point for the strategies with a single ``r``).

    Examples
    --------
    >>> job = Job(parameters=7e9, gpus=512, gpus_per_group=8, gpu_mtbf_hours=200.0,
    ...           work_hours=100)
    >>> result = plan_job(job, scenario={"restart_minutes": 30}, strategies=["ckpt", "spare"])
    >>> fig = job_figure(result)
    >>> [ax.get_title()[:13] for ax in fig.axes[:2]]
    ['Lost time by ', 'Dollars and M']
    """
    from matplotlib.figure import Figure

    plans = {n: p for n, p in result["plans"].items() if p["modelled"] and p.get("bill")}
    fig = Figure(figsize=(12.0, 4.8), layout="constrained")
    lost, money = fig.subplots(1, 2)
    labels = [p["label"] for p in plans.values()]
    bottom = [0.0] * len(plans)
    colors = dict(zip(BADPUT_CAUSES, [f"C{i}" for i in range(len(BADPUT_CAUSES))]))
    for cause in BADPUT_CAUSES:
        heights = [p["bill"]["badput_hours"][cause] for p in plans.values()]
        if any(h > 0 for h in heights):
            lost.bar(labels, heights, bottom=bottom, label=CAUSE_LABELS[cause], color=colors[cause])
            bottom = [b + h for b, h in zip(bottom, heights)]
    lost.set_ylabel("hours lost (wall time of the whole cluster)")
    lost.set_title("Lost time by cause, best plan of each strategy")
    lost.tick_params(axis="x", labelrotation=20)
    lost.set_ylim(0, 1.4 * max(bottom, default=1.0) or 1.0)  # room for the legend above the bars
    lost.legend(fontsize="small", ncols=2, loc="upper center")
    energy = money.twinx()
    for i, p in enumerate(plans.values()):
        r = [row["r"] for row in p["by_r"]]
        style = {"marker": "o", "color": f"C{i}"}
        money.plot(r, [row["usd"] / 1e6 for row in p["by_r"]], label=p["label"], **style)
        energy.plot(r, [row["energy_mwh"] for row in p["by_r"]], ls="--", **style)
    money.set_xlabel("r (redundancy; spare groups for hot spares, 0 for elastic DP)")
    money.set_ylabel("million US dollars (solid)")
    energy.set_ylabel("MWh (dashed)")
    money.set_title("Dollars and MWh against r")
    money.legend(fontsize="small")
    return fig
