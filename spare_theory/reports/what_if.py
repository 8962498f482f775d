"""What each resilience feature is worth: a job's best plan under named changes, and how
the best plan moves when each uncertain input is halved and doubled.

A planner's question is which feature to pay for.  :func:`what_if` plans the
job as given and then the job under each change (a feature of
:data:`~spare_theory.reports.changes.WHAT_IF_CHANGES`, a strategy, or any
:class:`~spare_theory.jobs.job.Job` or
:class:`~spare_theory.hourly.scenario.Scenario` field set to a value), each
with every strategy (or the change's), and ranks the changes by what their best
plan saves against the job's best plan, in hours, dollars and MWh.
:func:`sensitivity` scales each uncertain input of the priced scenario (the
GPU MTBF, the restart and checkpoint costs, the repair time) by each factor
and says whether the best strategy changes.  :func:`what_if_figure` draws both.

Every plan is :func:`spare_theory.optimal_plan`'s on the changed job, under
the same objective and (when verified) the same seed, so the changes are
compared on common random numbers; the savings are differences of best plans,
each with the caveats its plan carries.  What ``spare-theory plan JOB.toml
--what-if`` prints; ``docs/jobs.md`` says what each feature sets and where its
figure comes from.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._validation import as_real
from ..hourly.scenario import Scenario
from ..jobs.job import Job
from ..planning.bill import CostModel
from ..strategies.registry import strategy
from ..training.objective import check_objective
from .changes import Change, changes_for
from .job_plan import plan_scenario

if TYPE_CHECKING:  # matplotlib only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["SENSITIVITY_INPUTS", "sensitivity", "what_if", "what_if_figure"]


SENSITIVITY_INPUTS = ("gpu_mtbf_hours", "restart_minutes", "checkpoint_minutes", "repair_minutes")


def _priced(
    subject: Job | Scenario,
    change: Change | None,
    overrides: Mapping[str, Any],
    failure_log: Any = None,
) -> tuple[Scenario, Job | None]:
    """The scenario a change implies, and the changed job (``None`` for a scenario)."""
    if isinstance(subject, Job):
        job = subject if change is None else dataclasses.replace(subject, **dict(change.job))
        fields = {**overrides, **dict(change.scenario if change else ())}
        sc = job.scenario(failure_log=failure_log, **fields)
    else:
        job = None
        fields = dict(change.scenario) if change else {}
        sc = dataclasses.replace(subject, **{**overrides, **fields})
    if change is not None:
        sc = dataclasses.replace(sc, failure_classes=change.classes(sc.failure_classes))
    return sc, job


def _best_row(result: dict[str, Any]) -> dict[str, Any]:
    """The best plan of a :func:`plan_scenario` result as one table row."""
    best = result["best"]
    if best is None:
        reasons = {n: p.get("reason") for n, p in result["plans"].items()}
        said = "; ".join(f"{n}: {r}" for n, r in reasons.items() if r) or "no plan finishes"
        return {
            "strategy": None,
            "hours": math.inf,
            "usd": math.inf,
            "energy_mwh": math.inf,
            "reason": said,
        }
    plan = result["plans"][best]
    bill = plan["bill"]
    return {
        "strategy": best,
        "r": plan["r"],
        "plan_variables": dict(plan["plan_variables"]),
        "checkpoint_interval_minutes": plan["checkpoint_interval_minutes"],
        "hours": bill.get("verified_hours", bill["hours"]),
        "usd": bill.get("verified_usd", bill["usd"]),
        "energy_mwh": bill["energy_mwh"],
        "method": plan["method"],
        "reason": None,
    }


def _checked(
    subject: Any, objective: str, cost: CostModel | None, strategies: Sequence[str] | None
) -> tuple[str, tuple[str, ...] | None]:
    """``(objective, strategy names)`` checked for :func:`what_if` and :func:`sensitivity`."""
    if not isinstance(subject, Job | Scenario):
        raise ValueError(f"subject must be a Job or a Scenario, got {type(subject).__name__}")
    objective, _ = check_objective(objective, cost)
    return objective, None if strategies is None else tuple(strategy(s).name for s in strategies)


def what_if(
    subject: Job | Scenario,
    changes: Any = None,
    *,
    cost: CostModel | None = None,
    objective: str = "hours",
    strategies: Sequence[str] | None = None,
    scenario: Mapping[str, Any] | None = None,
    failure_log: Any = None,
    verify: bool = False,
    seed: int = 0,
    **verification: Any,
) -> pd.DataFrame:
    """Each change's best plan and what it saves against the job as given, ranked.

    Parameters
    ----------
    subject : Job or Scenario
        The job as given (or a scenario: then only Scenario fields and
        strategies change).
    changes : sequence of str or Change, optional
        Features of :data:`~spare_theory.reports.changes.WHAT_IF_CHANGES`,
        ``"strategy:NAME"``, ``"FIELD=VALUE[,...]"``
        (:func:`~spare_theory.reports.changes.parse_change`) or
        :class:`~spare_theory.reports.changes.Change`
        objects.  Default: every feature that applies and every registered
        strategy.
    cost : CostModel, optional
        Prices and powers.  Default: each changed job's
        :meth:`~spare_theory.jobs.job.Job.cost_model` (a change of GPU or
        watts prices itself), for a scenario ``CostModel()``.
    objective : {"hours", "usd", "energy"}
        What each plan minimises and the changes are ranked by.
    strategies : sequence of str, optional
        The strategies of the job as given and of each change that names
        none (default: every registered one).
    scenario : mapping, optional
        Scenario fields that replace the job's (as ``[scenario]`` of a job
        file, and the log scenario's keywords), under every change.
    failure_log : FailureLog, optional
        A job's failure fields from this log
        (:meth:`~spare_theory.jobs.job.Job.scenario`).
    verify, seed, **verification
        Simulate each best plan (:func:`spare_theory.optimal_plan`'s
        ``verify``, ``rel_se``, ``max_trials``, ``executor``, ``progress``);
        every change on the same ``seed``: common random numbers.

    Returns
    -------
    pandas.DataFrame
        One row per change, the job as given first (``change`` is ``"as
        given"``), the others by ``saved_<objective>`` (largest saving
        first).  Columns: ``change``, ``description``, ``strategy``, ``r``,
        ``plan_variables``, ``checkpoint_interval_minutes``, ``hours``,
        ``usd``, ``energy_mwh`` (the best plan's; simulated hours and
        dollars where verified), ``saved_hours``, ``saved_usd``,
        ``saved_energy_mwh`` (the job as given minus the change: positive
        saves), ``saved_share`` (of the objective), ``method`` and
        ``reason`` (why no plan finishes, else ``None``).  ``attrs`` holds
        ``objective``.

    Raises
    ------
    ValueError
        Naming the change, field or strategy: an unknown one, a Job field
        asked of a scenario, a value the Job or Scenario refuses.

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from; no plan reads it.

    Examples
    --------
    A 405B model on 1,024 GPUs, checkpointed to storage that writes 100 GB/s
    (a minute a checkpoint):

    >>> job = Job(parameters=405e9, gpus=1024, gpus_per_group=64, gpu_mtbf_hours=5000.0,
    ...           work_hours=100, storage_write_gbps=100.0)
    >>> table = what_if(job, ["async_checkpoints", "strategy:ckpt"])
    >>> table["change"].tolist()
    ['as given', 'async_checkpoints', 'strategy:ckpt']
    >>> bool(table.loc[1, "saved_hours"] > 0), bool(table.loc[2, "saved_hours"] <= 0)
    (True, True)
    """
    objective, names = _checked(subject, objective, cost, strategies)
    asked = changes_for(subject, changes)
    overrides = dict(scenario or {})
    checks = dict(verify=verify, seed=seed, **verification)

    def best(change: Change | None) -> dict[str, Any]:
        sc, job = _priced(subject, change, overrides, failure_log)
        priced = cost or (job.cost_model() if job is not None else CostModel())
        chosen = change.strategies if change and change.strategies else names
        result = plan_scenario(
            sc, priced, objective=objective, strategies=chosen, curves=False, **checks
        )
        return _best_row(result)

    rows = [{"change": "as given", "description": "the job as given", **best(None)}]
    rows += [{"change": c.name, "description": c.description, **best(c)} for c in asked]
    table = pd.DataFrame(rows)
    table["r"] = pd.Series([row.get("r") for row in rows], dtype=object)  # None: no r
    base = table.iloc[0]
    key = {"hours": "hours", "usd": "usd", "energy": "energy_mwh"}[objective]
    for column in ("hours", "usd", "energy_mwh"):
        table[f"saved_{column}"] = base[column] - table[column]
    table["saved_share"] = table[f"saved_{key}"] / base[key]
    ranked = table.iloc[1:].sort_values(f"saved_{key}", ascending=False, kind="stable")
    table = pd.concat([table.iloc[:1], ranked], ignore_index=True)
    table.attrs["objective"] = objective
    return table


def sensitivity(
    subject: Job | Scenario,
    inputs: Iterable[str] | None = None,
    *,
    factors: Sequence[float] = (0.5, 2.0),
    cost: CostModel | None = None,
    objective: str = "hours",
    strategies: Sequence[str] | None = None,
    scenario: Mapping[str, Any] | None = None,
    failure_log: Any = None,
) -> pd.DataFrame:
    """How the best plan moves when each uncertain input is scaled, and whether its strategy
    changes.

    Each input is a field of the priced scenario (a job's
    :meth:`~spare_theory.jobs.job.Job.scenario`), multiplied by each factor
    with the others as given; each point is :func:`spare_theory.optimal_plan`'s
    best plan over the strategies (model hours; ``method="auto"`` simulates
    where no closed form covers the scenario).

    Parameters
    ----------
    subject : Job or Scenario
        The job as given.
    inputs : iterable of str, optional
        Scenario fields (default :data:`SENSITIVITY_INPUTS`, ``repair_minutes``
        only where set).
    factors : sequence of float
        Multipliers, each ``> 0`` (default: halved and doubled).
    cost, objective, strategies, scenario, failure_log
        As :func:`what_if`.

    Returns
    -------
    pandas.DataFrame
        One row per input and factor: ``input``, ``factor``, ``value`` (the
        scaled field), ``strategy``, ``r``, ``hours``, ``usd``,
        ``energy_mwh``, ``change`` (hours over the job's best hours, minus 1)
        and ``strategy_changed``.  ``attrs`` holds ``base_strategy`` and
        ``base_hours``.

    Raises
    ------
    ValueError
        Naming the input or factor: a field that is not a number of the
        scenario, or unset, a factor that is not positive and finite.

    Notes
    -----
    Fields with no effect here:

    - ``provenance``: where the fields came from; no plan reads it.

    Examples
    --------
    >>> job = Job(parameters=70e9, gpus=1024, gpus_per_group=64, gpu_mtbf_hours=5000.0,
    ...           work_hours=100)
    >>> table = sensitivity(job, ["gpu_mtbf_hours"], strategies=["ckpt", "spare"])
    >>> table[["factor", "value"]].values.tolist()
    [[0.5, 2500.0], [2.0, 10000.0]]
    >>> bool(table.loc[0, "change"] > 0 > table.loc[1, "change"])
    True
    """
    objective, names = _checked(subject, objective, cost, strategies)
    scales = [as_real(f, "factors", minimum=0.0, strict_minimum=True) for f in factors]
    base_sc, job = _priced(subject, None, dict(scenario or {}), failure_log)
    priced = cost or (job.cost_model() if job is not None else CostModel())
    if inputs is None:
        inputs = [f for f in SENSITIVITY_INPUTS if getattr(base_sc, f) is not None]

    def best(sc: Scenario) -> dict[str, Any]:
        result = plan_scenario(sc, priced, objective=objective, strategies=names, curves=False)
        return _best_row(result)

    base = best(base_sc)
    rows = []
    for field in inputs:
        value = getattr(base_sc, field, None) if isinstance(field, str) else None
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValueError(
                f"inputs: {field!r} is not a number of the scenario (got {value!r}); "
                f"the default inputs are {', '.join(SENSITIVITY_INPUTS)}"
            )
        for factor in scales:
            scaled: Scenario = dataclasses.replace(base_sc, **{field: value * factor})  # type: ignore[arg-type]
            point = best(scaled)
            rows.append(
                {
                    "input": field,
                    "factor": factor,
                    "value": value * factor,
                    "strategy": point["strategy"],
                    "r": point.get("r"),
                    "hours": point["hours"],
                    "usd": point["usd"],
                    "energy_mwh": point["energy_mwh"],
                    "change": point["hours"] / base["hours"] - 1.0,
                    "strategy_changed": point["strategy"] != base["strategy"],
                }
            )
    table = pd.DataFrame(rows)
    table["r"] = pd.Series([row["r"] for row in rows], dtype=object)  # None: no r
    table.attrs.update(base_strategy=base["strategy"], base_hours=base["hours"])
    return table


def what_if_figure(changes: pd.DataFrame, sensitivities: pd.DataFrame | None = None) -> Figure:
    """What each change saves (bars) and, beside it, the best plan's hours against each input
    halved and doubled (a tornado; a ring where the best strategy changes).

    Parameters
    ----------
    changes : pandas.DataFrame
        What :func:`what_if` returned.
    sensitivities : pandas.DataFrame, optional
        What :func:`sensitivity` returned (the right panel).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> table = pd.DataFrame({"change": ["as given", "a", "b"], "saved_hours": [0, 3.0, -1.0]})
    >>> table.attrs["objective"] = "hours"
    >>> [ax.get_title() for ax in what_if_figure(table).axes]
    ['What each change saves (hours)']
    """
    from matplotlib.figure import Figure

    objective = changes.attrs.get("objective", "hours")
    key = {"hours": "hours", "usd": "usd", "energy": "energy_mwh"}[objective]
    panels = 1 if sensitivities is None or sensitivities.empty else 2
    fig = Figure(figsize=(6.0 * panels, 4.8), layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    shown = changes.iloc[1:][::-1]  # the largest saving on top
    saved = shown[f"saved_{key}"].astype(float)
    axes[0].barh(shown["change"], saved, color=["C2" if s > 0 else "C3" for s in saved])
    axes[0].axvline(0.0, color="k", lw=0.8)
    axes[0].set_xlabel(f"saved against the job as given ({key}; negative: costs more)")
    axes[0].set_title(f"What each change saves ({key})")
    if sensitivities is not None and panels == 2:
        ax = axes[1]
        inputs = list(dict.fromkeys(sensitivities["input"]))
        for i, name in enumerate(inputs):
            rows = sensitivities[sensitivities["input"] == name]
            for _, row in rows.iterrows():
                ax.barh(i, 100 * row["change"], color="C0" if row["factor"] < 1 else "C1")
                if row["strategy_changed"]:
                    ax.plot(100 * row["change"], i, "o", mfc="none", mec="k", ms=10)
        ax.set_yticks(range(len(inputs)), inputs)
        ax.axvline(0.0, color="k", lw=0.8)
        ax.set_xlabel("best plan's hours, % change (blue: input halved, orange: doubled)")
        ax.set_title("Sensitivity (ring: the best strategy changes)")
    return fig
