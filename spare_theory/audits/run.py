"""The audit: every strategy's model plan, simulated at that very plan, over random scenarios.

For scenario ``i`` of :meth:`AuditSpace.draw(seed, i)
<spare_theory.audits.space.AuditSpace.draw>` and each strategy, the cell asks
``optimal_plan(scenario, strategy, method="model")``.  A model answer is then
simulated at exactly that plan (as ``simulate_training(scenario, plan,
trials=trials, seed=...)``), every strategy of the scenario on the same
streams (common random numbers, key ``(i, 1)`` of the seed), each run cut
at :data:`HORIZON` times the model's hours, and

    error = model hours / simulated mean hours - 1,
    z = (model hours - simulated mean hours) / its standard error.

A cell is **within** when ``|error| <= 3 %`` or ``|z| <= 3``
(:data:`WITHIN_REL`, :data:`WITHIN_SE`); a refusal
(:class:`~spare_theory._validation.NoClosedFormError`) is counted as
``refused``, any other error as ``failed`` with its message, a model answer
over :data:`HOPELESS` times the work as ``unsimulated`` (not played), and every
warning raised while a cell ran is counted in its row.  The summary gives,
overall, by optional field and by strategy: the cells, the share refused, the
median, 90th percentile and worst ``|error|``, and the share outside.

A cell depends only on the seed, its index and the space, never on how the
scenarios are split or where they run: ``audit(space, seed=s,
indices=[i])`` re-runs scenario ``i`` alone.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import NoClosedFormError, as_count, as_seed_sequence, child_seed
from ..steps.scenario import StepScenario
from ..strategies.coverage import audit_refusal, closed_forms_only
from ..strategies.registry import registered_strategies, strategy
from ..training.optimize import optimal_plan
from ..training.resolve import resolve
from ..training.simsearch import play_probed, simulation_player
from .space import FIELDS, AuditSpace, DrawnScenario

__all__ = [
    "HOPELESS",
    "HORIZON",
    "WITHIN_REL",
    "WITHIN_SE",
    "AuditResult",
    "audit",
    "audit_scenario",
]

#: A model answer is within when its relative error is at most this ...
WITHIN_REL = 0.03
#: ... or when it is within this many standard errors of the simulated mean.
WITHIN_SE = 3.0
#: A simulated run still unfinished at this many times the model's hours stops there; a
#: cell with such a run has ``error = -1`` (the model's hours are nothing of the runs').
HORIZON = 20.0
#: A model answer over this many times the failure-free work is not simulated (status
#: ``"unsimulated"``): whatever its error, the plan is one no planner runs.
HOPELESS = 20.0

_COLUMNS = (
    "index",
    "level",
    "fields",
    "strategy",
    "status",
    "r",
    "min_groups",
    "interval",
    "model_hours",
    "simulated_hours",
    "standard_error_hours",
    "error",
    "z",
    "within",
    "audit_refused",
    "warnings",
    "message",
    "seconds",
    "scenario",
)


def _work_hours(scenario: Any) -> float:
    """The failure-free hours of either scenario level."""
    if isinstance(scenario, StepScenario):
        return float(scenario.failure_free_hours)
    return float(scenario.work_hours)


def _plan_interval(plan: Any) -> float:
    """The plan's checkpoint interval: minutes (hour level) or steps (step level)."""
    if plan.checkpoint_every_steps is not None:
        return float(plan.checkpoint_every_steps)
    return float(plan.checkpoint_interval_minutes)


def _cell(drawn: DrawnScenario, name: str, trials: int, sim_seed: Any) -> dict[str, Any]:
    """One strategy on one scenario: the model's plan and the simulation at that plan."""
    start = time.perf_counter()
    row: dict[str, Any] = dict.fromkeys(_COLUMNS)
    row.update(
        index=drawn.index,
        level=drawn.level,
        fields=", ".join(drawn.fields) or "none",
        strategy=name,
        scenario=drawn.description,
        within=False,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # The closed forms themselves, also where the shipped audit refuses them.
        row["audit_refused"] = audit_refusal(name, drawn.scenario) is not None
        try:
            with closed_forms_only():
                plan = optimal_plan(drawn.scenario, name, method="model")
        except NoClosedFormError as exc:
            row.update(status="refused", message=str(exc))
            plan = None
        except (ValueError, ArithmeticError, RuntimeError) as exc:
            row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
            plan = None
        work = _work_hours(drawn.scenario)
        if plan is not None and plan.hours > HOPELESS * work:
            # A simulation costs events in proportion to its hours: millions of hours of a
            # restart-bound plan are not played (as the regret report does not replay them).
            row.update(
                status="unsimulated",
                r=plan.r,
                min_groups=plan.min_groups,
                interval=_plan_interval(plan),
                model_hours=float(plan.hours),
                message=f"model hours {plan.hours:.4g} over {HOPELESS:g} times the work "
                f"{work:.4g} h: a hopeless plan, not simulated",
            )
            plan = None
        if plan is not None:
            model = float(plan.hours)
            resolved = resolve(drawn.scenario, plan)
            runs = play_probed(simulation_player(seed=sim_seed), resolved, trials, HORIZON * model)
            mean, se = float(runs.mean("hours")), float(runs.standard_error("hours"))
            if math.isfinite(mean):
                error = model / mean - 1.0
                z = (model - mean) / se if se > 0 else (0.0 if model == mean else math.inf)
            else:  # some runs did not finish within HORIZON times the model's hours
                error, z = -1.0, -math.inf
            row.update(
                status="model",
                r=plan.r,
                min_groups=plan.min_groups,
                interval=_plan_interval(plan),
                model_hours=model,
                simulated_hours=mean,
                standard_error_hours=se,
                error=error,
                z=z,
                within=bool(abs(error) <= WITHIN_REL or abs(z) <= WITHIN_SE),
            )
    row["seconds"] = time.perf_counter() - start
    row["warnings"] = len(caught)
    if caught and row["message"] is None:
        first = caught[0]
        row["message"] = (
            f"{first.category.__name__}: {first.message} ({first.filename}:{first.lineno})"
        )
    return row


def audit_scenario(task: tuple[AuditSpace, Any, int, int, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Every strategy's cell on scenario ``index`` (a task of :func:`audit`).

    Parameters
    ----------
    task : tuple
        ``(space, seed, index, trials, strategies)``: the scenario is
        ``space.draw(seed, index)``; its simulations use key ``(index, 1)``
        of ``seed`` for every strategy (common random numbers).

    Returns
    -------
    list of dict
        One row per strategy (the columns of :attr:`AuditResult.cells`).
    """
    space, seed, index, trials, names = task
    root = as_seed_sequence(seed)
    drawn = space.draw(root, index)
    sim_seed = child_seed(root, index, 1)
    return [_cell(drawn, name, trials, sim_seed) for name in names]


@dataclass(frozen=True)
class AuditResult:
    """What :func:`audit` found: one row per scenario and strategy, and their summaries.

    Attributes
    ----------
    cells : pandas.DataFrame
        One row per (scenario, strategy): ``index`` (the scenario's, under
        :attr:`seed`), ``level`` (``"hour"``, ``"step"``), ``fields`` (its
        optional fields, comma-separated, or ``"none"``), ``strategy``,
        ``status`` (``"model"``; ``"refused"``; ``"failed"``; ``"unsimulated"``,
        a model answer over :data:`HOPELESS` times the work), the plan
        (``r``, ``min_groups``, ``interval``: minutes at the hour level,
        steps at the step level), ``model_hours``, ``simulated_hours`` and
        their ``standard_error_hours``, the relative ``error`` and ``z``,
        ``within``, ``audit_refused`` (whether the shipped audit's rule
        refuses the model there:
        :func:`~spare_theory.strategies.coverage.audit_refusal`; the cell
        measures the closed form all the same), the number of ``warnings``
        raised, ``message`` (the
        refusal, failure or first warning), ``seconds`` (the cell's wall
        time: plan and simulation; the only column that varies between runs)
        and ``scenario`` (its :attr:`~spare_theory.audits.space.DrawnScenario.description`).
    space : AuditSpace
        The space the scenarios were drawn from.
    seed : int or numpy.random.SeedSequence
        The audit's seed: ``space.draw(seed, index)`` gives a row's scenario again.
    trials : int
        Simulated runs per model answer.

    Examples
    --------
    >>> from spare_theory.audits import AuditSpace, audit
    >>> res = audit(AuditSpace(step_share=0.0), scenarios=2, trials=4, seed=1,
    ...             strategies=["ckpt", "spare"])
    >>> res.cells["status"].tolist()
    ['unsimulated', 'model', 'model', 'refused']
    >>> table = res.summary_table()
    >>> int(table.loc[table["by"] == "all", "model"].iloc[0])
    2
    """

    cells: pd.DataFrame
    space: AuditSpace = field(repr=False)
    seed: Any
    trials: int

    @property
    def model_cells(self) -> pd.DataFrame:
        """The rows the model answered (``status == "model"``)."""
        return self.cells[self.cells["status"] == "model"]

    def to_frame(self) -> pd.DataFrame:
        """:attr:`cells`, a copy."""
        return self.cells.copy()

    def summary_table(self) -> pd.DataFrame:
        """The errors overall, by optional field and by strategy.

        Returns
        -------
        pandas.DataFrame
            One row per group (``by`` is ``"all"``, ``"field"`` or
            ``"strategy"``; ``group`` names it; a scenario with several
            fields counts under each, ``"none"`` is those without any):
            ``cells``, ``model`` (answered and simulated), ``refused_share``,
            ``failed``, ``unsimulated`` (model answers over :data:`HOPELESS` times the work),
            ``median_abs_error``, ``p90_abs_error``, ``worst_error`` (the
            signed error of largest magnitude), ``outside`` (model answers
            outside 3 % and 3 SE), ``outside_share``, ``audit_refused`` (model
            answers the shipped audit's rule refuses), ``kept_outside`` and
            ``kept_outside_share`` (outside among the model answers it keeps:
            what ``method="model"`` hands out) and ``warnings``.
        """
        cells = self.cells
        groups: list[tuple[str, str, pd.Series]] = [("all", "all", cells["index"] >= 0)]
        tags = cells["fields"].str.split(", ")
        for name in ("none", *FIELDS):
            mask = tags.apply(lambda t, n=name: n in t)
            if mask.any():
                groups.append(("field", name, mask))
        for name in dict.fromkeys(cells["strategy"]):
            groups.append(("strategy", name, cells["strategy"] == name))
        return pd.DataFrame([_group_row(by, name, cells[mask]) for by, name, mask in groups])

    def worst(self, n: int = 10) -> pd.DataFrame:
        """The ``n`` model answers of largest ``|error|``, each with its seed index to re-run."""
        answered = self.model_cells
        order = answered["error"].abs().sort_values(ascending=False, kind="stable").index
        return answered.loc[order[:n]]

    def summary(self) -> str:
        """The audit as text: the summary table and the worst cells."""
        table = self.summary_table()
        lines = [
            f"Audit: {self.cells['index'].nunique()} scenarios, {len(self.cells)} cells, "
            f"{len(self.model_cells)} model answers, each simulated {self.trials} times "
            f"(seed {self.seed!r}); within = |error| <= {WITHIN_REL:.0%} or |z| <= {WITHIN_SE:g}; "
            f"{int((self.cells['status'] == 'unsimulated').sum())} over {HOPELESS:g} times "
            "the work not simulated; "
            f"{int(self.model_cells['audit_refused'].astype(bool).sum())} the shipped audit's "
            "rule refuses (strategies.coverage).",
            "",
            f"{'by':9s} {'group':18s} {'cells':>5s} {'model':>5s} {'refused':>7s} "
            f"{'median':>7s} {'p90':>7s} {'worst':>8s} {'outside':>7s} {'warn':>4s}",
        ]
        for row in table.itertuples(index=False):
            lines.append(
                f"{row.by:9s} {row.group:18s} {row.cells:5d} {row.model:5d} "
                f"{row.refused_share:7.0%} {_pct(row.median_abs_error):>7s} "
                f"{_pct(row.p90_abs_error):>7s} {_pct(row.worst_error, sign=True):>8s} "
                f"{row.outside:7d} {row.warnings:4d}"
            )
        lines += [
            "",
            "Worst model answers (re-run one with audit(space, seed=..., indices=[index])):",
        ]
        for row in self.worst(5).itertuples(index=False):
            lines.append(
                f"  index {row.index:4d}  {row.strategy:10s} {_pct(row.error, sign=True):>8s} "
                f"(z {row.z:+.1f})  {row.level}, {row.fields}"
            )
        return "\n".join(lines)


def _pct(value: float, *, sign: bool = False) -> str:
    if value is None or not np.isfinite(value):
        return "-"
    return f"{100 * value:+.1f} %" if sign else f"{100 * value:.1f} %"


def _group_row(by: str, name: str, cells: pd.DataFrame) -> dict[str, Any]:
    answered = cells[cells["status"] == "model"]
    errors = answered["error"].to_numpy(dtype=float)
    absolute = np.abs(errors)
    outside = int((~answered["within"].astype(bool)).sum())
    refused = answered["audit_refused"].astype(bool)
    kept = answered[~refused]
    kept_outside = int((~kept["within"].astype(bool)).sum())
    return {
        "by": by,
        "group": name,
        "cells": len(cells),
        "model": len(answered),
        "refused_share": float((cells["status"] == "refused").mean()) if len(cells) else math.nan,
        "failed": int((cells["status"] == "failed").sum()),
        "unsimulated": int((cells["status"] == "unsimulated").sum()),
        "median_abs_error": float(np.median(absolute)) if len(absolute) else math.nan,
        "p90_abs_error": float(np.quantile(absolute, 0.9)) if len(absolute) else math.nan,
        "worst_error": float(errors[np.argmax(absolute)]) if len(absolute) else math.nan,
        "outside": outside,
        "outside_share": outside / len(answered) if len(answered) else math.nan,
        "audit_refused": int(refused.sum()),
        "kept_outside": kept_outside,
        "kept_outside_share": kept_outside / len(kept) if len(kept) else math.nan,
        "warnings": int(cells["warnings"].sum()),
    }


def audit(
    space: AuditSpace | None = None,
    *,
    scenarios: int = 100,
    indices: Iterable[int] | None = None,
    trials: int = 40,
    seed: int | np.random.SeedSequence = 0,
    strategies: Sequence[str] | None = None,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> AuditResult:
    """Audit the closed forms against the event simulation over random scenarios.

    Parameters
    ----------
    space : AuditSpace, optional
        Where the scenarios are drawn (default :class:`AuditSpace`()).
    scenarios : int, default 100
        Scenarios ``0, ..., scenarios - 1`` of ``seed`` (each gives one cell
        per strategy; about two in three are model answers in the default space).
    indices : iterable of int, optional
        Audit exactly these scenarios instead (re-run a cell from its index).
    trials : int, default 40
        Simulated runs per model answer, ``>= 2``.
    seed : int or numpy.random.SeedSequence
        Root seed: scenarios, simulations and results are identical however
        the work is split or spread.
    strategies : sequence of str, optional
        Registered strategies to audit (default: every one).
    executor : concurrent.futures.Executor, optional
        Runs the scenarios in parallel (results identical); ``None``: here.
    progress : bool
        Show a progress bar.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> res = audit(AuditSpace(step_share=0.0), scenarios=2, trials=4, seed=1,
    ...             strategies=["ckpt", "spare"])
    >>> len(res.cells), sorted(set(res.cells["strategy"]))
    (4, ['ckpt', 'spare'])
    >>> again = audit(AuditSpace(step_share=0.0), indices=[1], trials=4, seed=1,
    ...               strategies=["ckpt", "spare"])
    >>> import numpy as np  # a refused cell's hours are NaN, equal to themselves here
    >>> np.array_equal(again.cells["model_hours"],
    ...                res.cells[res.cells["index"] == 1]["model_hours"], equal_nan=True)
    True
    """
    space = AuditSpace() if space is None else space
    if not isinstance(space, AuditSpace):
        raise ValueError(f"space must be an AuditSpace, got {type(space).__name__}")
    trials = as_count(trials, "trials", minimum=2)
    names = tuple(registered_strategies() if strategies is None else strategies)
    for name in names:
        strategy(name)  # an unknown name raises here, naming it
    if not names:
        raise ValueError("strategies: at least one strategy to audit")
    if indices is None:
        chosen = list(range(as_count(scenarios, "scenarios")))
    else:
        chosen = [as_count(i, "indices", minimum=0) for i in indices]
        if not chosen:
            raise ValueError("indices: at least one scenario index")
    root = as_seed_sequence(seed)
    tasks = [(space, root, i, trials, names) for i in chosen]
    rows = map_tasks(audit_scenario, tasks, executor=executor, desc="audit", progress=progress)
    cells = pd.DataFrame([row for block in rows for row in block], columns=list(_COLUMNS))
    # Fixed dtypes, whatever the cells hold: a plan without r or quorum is <NA>.
    cells = cells.astype({"r": "Int64", "min_groups": "Int64", "within": bool, "warnings": int})
    floats = ["interval", "model_hours", "simulated_hours", "standard_error_hours", "error", "z"]
    cells[floats] = cells[floats].astype(float)
    return AuditResult(cells=cells, space=space, seed=seed, trials=trials)
