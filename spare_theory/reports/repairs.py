"""Repairs and planned restarts at 600k GPUs: best plans against repair time; wipe-out check.

Writes

* ``tables/repairs_600k.csv|md``: the best plan of each strategy
  (:func:`spare_theory.training.optimize.optimal_plan`) at 600,000 GPUs
  (:meth:`spare_theory.Scenario.published_600k`, groups of 2048 and 1024
  GPUs) against the mean repair time (10 min, 1 h, 6 h, never):
  ``r``, interval, hours, availability, expected wipe-outs and repairs, the
  winner of each row group, for SPARe the smallest ``r`` within 1 % of its
  best hours (:meth:`~spare_theory.planning.plan.Plan.smallest_r_within`), and,
  where repairs are slow or absent (6 h, never), the best plan with planned
  restarts (``optimal_plan(..., planned_restarts=True)``: trigger ``k``,
  the step-cost threshold realising it, ``r``, hours);
* ``tables/repairs_wipeout.csv|md``: mean hours to the first wipe-out from a
  healthy start, model (the strategy's repair cycle,
  :func:`~spare_theory.hourly.model.wipeout_mean_hours`: what
  :func:`spare_theory.mean_time_to_wipeout` answers, here also where it refuses
  SPARe's repairs slower than a fifth of a group's lifetime at ``r >= 3``)
  against the event simulation
  (:func:`spare_theory.training.simulate.simulate_time_to_wipeout`), ``N = 64``
  groups of 2048 GPUs, repairs from 1 minute to 1 day, with ``z`` =
  (model - simulation) / SE;
* ``tables/repairs_paper.csv|md``: the same question on the SPARe paper's
  step-level scenario (:func:`spare_theory.steps.scenario.paper_scenario`,
  ``N = 200`` by default, about 25 s; ``N = 1000`` adds about 40 s on two
  cores; cluster MTBF 300 s, 1 h restart windows) with
  ``StepScenario(repair_seconds=...)``: each strategy's best plan
  (:func:`spare_theory.optimal_plan` of a step-level scenario: ``r`` and the
  checkpoint interval in steps), its time to train over ``T0``, uptime and
  restarts, the winner, and for SPARe the smallest ``r`` within 1 % of its
  best time;
* ``figures/repairs_paper.png``: the same for the paper's scenario (time to
  train over ``T0``);
* ``figures/repairs_600k.png``: best hours of each strategy against repair
  time, and the ``r`` SPARe needs (best and smallest within 1 %).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_seed_sequence, child_seed
from ..hourly.model import wipeout_mean_hours
from ..hourly.process import group_process
from ..hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS, Scenario
from ..steps.scenario import paper_scenario
from ..strategies.registry import PUBLISHED_STRATEGIES
from ..strategies.registry import strategy as registered_strategy
from ..training.estimate import optimal_checkpoint_steps
from ..training.optimize import optimal_plan
from ..training.simulate import simulate_time_to_wipeout
from ._io import save_figure, with_plan_r, write_table
from .catalogue import ReportOptions

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = [
    "PAPER_GROUPS",
    "PLANNED_REPAIRS",
    "REPAIR_MINUTES",
    "WIPEOUT_CELLS",
    "paper_plans_table",
    "plans_table",
    "wipeout_table",
    "write",
]

#: Mean repair times of the 600k table, minutes (``None``: no repairs).
REPAIR_MINUTES: tuple[float | None, ...] = (10.0, 60.0, 360.0, None)
#: Repair times at which the table also searches planned restarts.
PLANNED_REPAIRS: tuple[float | None, ...] = (None,)
#: ``(repair minutes, strategy, r, trials)`` of the wipe-out check (``N = 64``).
WIPEOUT_CELLS: tuple[tuple[float | None, str, int, int], ...] = (
    (None, "rep", 2, 400),
    (None, "spare", 3, 400),
    (1.0, "rep", 2, 100),
    (1.0, "spare", 2, 100),
    (10.0, "spare", 2, 200),
    (10.0, "spare", 3, 40),
    (60.0, "spare", 3, 200),
    (60.0, "spare", 4, 40),
    (360.0, "spare", 3, 400),
    (360.0, "rep", 2, 400),
    (1440.0, "spare", 4, 400),
)
_QUICK_WIPEOUT = ((None, "rep", 2, 100), (360.0, "spare", 3, 100), (1440.0, "spare", 4, 100))


def _label(minutes: float | None) -> str:
    if minutes is None:
        return "never"
    return f"{minutes / 60:g} h" if minutes >= 60 else f"{minutes:g} min"


def _plan_cell(task: tuple[int, float | None, str, bool]) -> dict[str, Any]:
    gpg, minutes, strategy, planned = task
    sc = dataclasses.replace(Scenario.published_600k(gpus_per_group=gpg), repair_minutes=minutes)
    plan = optimal_plan(sc, strategy)
    est = plan.estimate
    row: dict[str, Any] = {
        "gpus_per_group": gpg,
        "groups": sc.groups,
        "repair": _label(minutes),
        "strategy": strategy,
        "r": plan.r,
        "checkpoint_interval_minutes": est.checkpoint_interval_minutes,
        "hours": est.hours,
        "availability": est.availability,
        "wipeouts": est.wipeouts,
        "repairs": est.repairs,
        "r_within_1pct": plan.smallest_r_within(0.01),
        "planned_k": None,
        "planned_cost": None,
        "planned_r": None,
        "planned_hours": None,
    }
    # Planned restarts need a redundancy to keep running on (CKPT-only has none).
    if planned and int(plan.r_values.max()) > 1:
        best = optimal_plan(sc, strategy, planned_restarts=True)
        row.update(
            planned_k=best.planned_restart_failures,
            planned_cost=best.planned_restart_cost,
            planned_r=best.r,
            planned_hours=best.hours,
            planned_restarts=best.estimate.planned_restarts,
        )
    return row


def plans_table(
    gpus_per_group: tuple[int, ...] = (2048, 1024),
    repair_minutes: tuple[float | None, ...] = REPAIR_MINUTES,
    *,
    planned: tuple[float | None, ...] = PLANNED_REPAIRS,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Best plans at 600k GPUs against the repair time (module docstring).

    Parameters
    ----------
    gpus_per_group : tuple of int
        Group sizes of :meth:`spare_theory.Scenario.published_600k`.
    repair_minutes : tuple of float or None
        Mean repair times (``None``: no repairs).
    planned : tuple of float or None
        Repair times at which planned restarts are also searched.
    executor : concurrent.futures.Executor, optional
        Where the cells run (``None``: serially).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per group size, repair time and strategy; ``winner`` marks
        the fewest hours of its group size and repair time (planned
        restarts included).

    Examples
    --------
    >>> t = plans_table((2048,), (10.0,), planned=(), progress=False)
    >>> t[["strategy", "r_within_1pct", "winner"]].values.tolist()
    [['ckpt', 1, False], ['rep', 2, False], ['spare', 4, True]]

    (SPARe's best ``r`` itself is not shown: on this plateau of hours it is
    decided by differences of 1e-16 and moves between machines.)
    """
    tasks = [
        (g, m, s, m in planned)
        for g in gpus_per_group
        for m in repair_minutes
        for s in PUBLISHED_STRATEGIES
    ]
    rows = map_tasks(_plan_cell, tasks, executor=executor, desc="repairs plans", progress=progress)
    table = with_plan_r(pd.DataFrame(rows))
    best = table[["hours", "planned_hours"]].astype(float).min(axis=1, skipna=True)
    group_best = best.groupby([table["gpus_per_group"], table["repair"]]).transform("min")
    table["winner"] = best == group_best
    return table


#: Group counts ``N`` of the paper's scenario in the step-level table.
PAPER_GROUPS: tuple[int, ...] = (200,)


def _paper_cell(task: tuple[int, float | None, str]) -> dict[str, Any]:
    N, minutes, strategy = task
    sc = dataclasses.replace(
        paper_scenario(N), repair_seconds=None if minutes is None else 60.0 * minutes
    )
    plan = optimal_plan(sc, strategy)
    hours = dict(zip(plan.r_values.tolist(), plan.hours_by_r.tolist(), strict=True))
    # A walk may stop after three worse r below the best (SPARe walks down from r*):
    # go on down while within 1 %.
    r = min(hours)
    while r - 1 >= 2 and r - 1 not in hours:
        try:
            est = optimal_checkpoint_steps(sc, strategy, r=r - 1)
        except ValueError:
            break
        hours[r - 1] = est.hours
        if est.hours > 1.01 * plan.hours:
            break
        r -= 1
    within = min(r for r, h in hours.items() if h <= 1.01 * plan.hours)
    est = plan.estimate
    return {
        "groups": N,
        "repair": _label(minutes),
        "strategy": strategy,
        "r": plan.r,
        "checkpoint_every_steps": est.checkpoint_every_steps,
        "total_over_T0": est.total_over_T0,
        "hours": est.hours,
        "uptime": est.uptime,
        "restarts": est.restarts,
        "r_within_1pct": within,
    }


def paper_plans_table(
    groups: tuple[int, ...] = PAPER_GROUPS,
    repair_minutes: tuple[float | None, ...] = REPAIR_MINUTES,
    *,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Best plans on the SPARe paper's step-level scenario against the repair time.

    Each cell is ``optimal_plan(paper_scenario(N) with repair_seconds =
    60 * minutes, strategy)`` (exponential repairs, no rejoin stall); for
    SPARe the scan of ``r`` goes on down while the best time stays within
    1 % (``r_within_1pct``).

    Parameters
    ----------
    groups : tuple of int
        ``N`` of :func:`spare_theory.steps.scenario.paper_scenario`.
    repair_minutes : tuple of float or None
        Mean repair times, minutes (``None``: no repairs).
    executor : concurrent.futures.Executor, optional
        Where the cells run (``None``: serially).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per ``N``, repair time and strategy: ``r``,
        ``checkpoint_every_steps``, ``total_over_T0`` (time to train over the
        failure-free ``T0``), ``hours``, ``uptime``, ``restarts``,
        ``r_within_1pct``, and ``winner`` (the fewest hours of its ``N`` and
        repair time).

    Examples
    --------
    >>> t = paper_plans_table((31,), (10.0,), progress=False)
    >>> t[["strategy", "r", "r_within_1pct", "winner"]].values.tolist()
    [['ckpt', <NA>, 1, False], ['rep', 4, 4, False], ['spare', 6, 6, True]]
    """
    tasks = [(N, m, s) for N in groups for m in repair_minutes for s in PUBLISHED_STRATEGIES]
    rows = map_tasks(_paper_cell, tasks, executor=executor, desc="repairs paper", progress=progress)
    table = with_plan_r(pd.DataFrame(rows))
    best = table.groupby(["groups", "repair"])["hours"].transform("min")
    table["winner"] = table["hours"] == best
    return table


def _wipeout_cell(
    task: tuple[float | None, str, int, int, np.random.SeedSequence],
) -> dict[str, Any]:
    minutes, name, r, trials, seed = task
    sc = Scenario(
        gpus=64 * 2048,
        gpus_per_group=2048,
        gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=100,
        repair_minutes=minutes,
    )
    # The repair cycle time_to_train prices, whose wipe-out door refuses SPARe's slow
    # repairs at r >= 3 (measured off on the audit's space at 9 to 57 groups): checked here.
    model = wipeout_mean_hours(group_process(sc), registered_strategy(name).cycle_law(sc.groups, r))
    sim = simulate_time_to_wipeout(sc, name, r=r, trials=trials, seed=seed)
    se = sim.standard_error_hours
    return {
        "repair": _label(minutes),
        "strategy": name,
        "r": r,
        "trials": trials,
        "model_hours": model,
        "sim_hours": sim.mean_hours,
        "se": se,
        "z": (model - sim.mean_hours) / se if se > 0 else math.nan,
        "rel_error": model / sim.mean_hours - 1,
    }


def wipeout_table(
    cells: tuple[tuple[float | None, str, int, int], ...] = WIPEOUT_CELLS,
    *,
    seed: int | np.random.SeedSequence = 0,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Mean hours to the first wipe-out, model against simulation, ``N = 64`` (module docstring).

    Parameters
    ----------
    cells : tuple of (repair minutes or None, strategy, r, trials)
        The cells; cell ``i`` is simulated with ``child_seed(seed, i)``.
    seed : int or numpy.random.SeedSequence
        Root seed.
    executor : concurrent.futures.Executor, optional
        Where the cells run (``None``: serially).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per cell: model and simulated hours, SE, ``z``, relative error.

    Examples
    --------
    >>> t = wipeout_table(((None, "rep", 2, 50),), seed=1, progress=False)
    >>> round(float(t["model_hours"][0]), 2), bool(abs(t["z"][0]) < 4)
    (4.28, True)
    """
    root = as_seed_sequence(seed)
    tasks = [(*cell, child_seed(root, i)) for i, cell in enumerate(cells)]
    rows = map_tasks(
        _wipeout_cell, tasks, executor=executor, desc="repairs wipe-out", progress=progress
    )
    return with_plan_r(pd.DataFrame(rows))


def _figure(
    table: pd.DataFrame, by: str, value: str, ylabel: str, reference: float, title: str
) -> Figure:
    """Best ``value`` of Rep and SPARe (top) and SPARe's ``r`` (bottom) against repair time.

    One column per value of ``by``; ``reference`` is drawn dashed (the
    failure-free work); ``title`` is formatted with the column's ``by`` value
    and ``N``; planned-restart plans are crosses where the table has them.
    """
    import matplotlib.pyplot as plt

    keys = sorted(table[by].unique(), reverse=by == "gpus_per_group")
    fig, axes = plt.subplots(2, len(keys), figsize=(5.2 * len(keys), 7.0), squeeze=False)
    for col, key in enumerate(keys):
        part = table[table[by] == key]
        labels = list(dict.fromkeys(part["repair"]))
        x = np.arange(len(labels))
        ax = axes[0, col]
        for strategy in ("rep", "spare"):
            rows = part[part["strategy"] == strategy].set_index("repair").loc[labels]
            ax.plot(x, rows[value], "o-", label=f"{strategy} (best plan)")
            if "planned_hours" in rows:
                planned = rows["planned_hours"].astype(float)
                if planned.notna().any():
                    ax.plot(x, planned, "x", ms=9, label=f"{strategy} + planned restarts")
        ax.axhline(reference, color="k", lw=0.8, ls="--", label="failure-free work")
        ax.set_xticks(x, labels)
        ax.set_ylabel(ylabel)
        ax.set_title(title.format(key=key, N=part["groups"].iloc[0]))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax = axes[1, col]
        spare = part[part["strategy"] == "spare"].set_index("repair").loc[labels]
        ax.plot(x, spare["r"], "o-", label="SPARe best r")
        ax.plot(x, spare["r_within_1pct"], "s--", label="smallest r within 1 %")
        ax.set_xticks(x, labels)
        ax.set_xlabel("mean repair time")
        ax.set_ylabel("r")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def write(options: ReportOptions) -> list[Path]:
    """Write the 600k plans, wipe-out check and paper tables and their figures.

    ``quick``: groups of 2048 only, repairs of 10 min, 1 h and never, no
    planned restarts, three wipe-out cells; the paper's scenario with the same
    three repair times.

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    if options.quick:
        plans = plans_table(
            (2048,),
            (10.0, 60.0, None),
            planned=(),
            executor=options.executor,
            progress=options.progress,
        )
        wipe = wipeout_table(
            _QUICK_WIPEOUT, seed=options.seed, executor=options.executor, progress=options.progress
        )
        paper = paper_plans_table(
            (200,), (10.0, 60.0, None), executor=options.executor, progress=options.progress
        )
    else:
        plans = plans_table(executor=options.executor, progress=options.progress)
        wipe = wipeout_table(
            seed=options.seed, executor=options.executor, progress=options.progress
        )
        paper = paper_plans_table(executor=options.executor, progress=options.progress)
    worst = float(wipe["z"].abs().max())
    return [
        *write_table(
            plans,
            options.outdir / "tables",
            "repairs_600k",
            title="Repairs at 600,000 GPUs: best plan of each strategy against repair time",
            notes="Scenario.published_600k (Llama 3 MTBF, 60 min restarts, 5 min checkpoints, "
            "720 h of work) with exponential repairs of the given mean, no rejoin stall; "
            "renewal model, each plan at its best r and checkpoint interval. r_within_1pct: "
            "the smallest r whose best hours are within 1 % of the optimum (SPARe). planned_*: "
            "the best plan with planned restarts (restart without rollback once k groups are "
            "down; planned_cost: the same trigger as SPARe's step-cost threshold, restart once "
            "S* reaches it), searched at 6 h and without repairs. winner: fewest hours of the row "
            "group, planned restarts included. CKPT-only does not finish (cluster MTBF 5 min).",
        ),
        *write_table(
            wipe,
            options.outdir / "tables",
            "repairs_wipeout",
            title="Mean hours to the first wipe-out: model against event simulation",
            notes="N = 64 groups of 2048 H100s (group MTBF 24.7 h), exponential repairs; "
            "z = (model - simulation) / SE; largest |z| "
            f"{worst:.2f}.",
        ),
        *write_table(
            paper,
            options.outdir / "tables",
            "repairs_paper",
            title="Repairs on the SPARe paper's scenario: best plan of each strategy "
            "against repair time",
            notes="paper_scenario(N) (10,000 steps of 64 s stacks, all-reduce N/100 s, "
            "cluster MTBF 300 s, exponential lifetimes, 1 h restart windows, 58.8 s "
            "checkpoints) with exponential repairs of the given mean, no rejoin stall; "
            "step-level model (docs/step_model.md section 11), each plan at its best r and "
            "checkpoint interval (steps). total_over_T0: time to train over the failure-free "
            "T0. r_within_1pct: the smallest r within 1 % of the best time (SPARe). winner: "
            "fewest hours of the row group.",
        ),
        save_figure(
            _figure(
                plans,
                "gpus_per_group",
                "hours",
                "expected wall-clock hours",
                720.0,
                "600k GPUs, groups of {key} (N = {N})",
            ),
            options.outdir / "figures",
            "repairs_600k",
        ),
        save_figure(
            _figure(
                paper,
                "groups",
                "total_over_T0",
                "time to train / T0",
                1.0,
                "The SPARe paper's scenario, N = {key}",
            ),
            options.outdir / "figures",
            "repairs_paper",
        ),
    ]
