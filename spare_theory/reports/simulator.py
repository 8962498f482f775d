"""The published simulator reproduced: every published cell, and the SPARe paper's own table.

The SPARe paper's time-to-train figures come from the authors' discrete-event
simulator (public repository tsinghua-fib-lab/AutoSOTA, folder
``ICML-2026/paper-3612-SPARe/best_code``, BSD).  Its per-run statistics,
averaged over the 3 published runs of every cell, are the package data
``spare_theory/data/published_des_trails.csv`` (exponential lifetimes,
``N = 200`` and ``1000``, both strategies, every ``r`` and checkpoint
interval ``k`` the authors ran).

* :func:`simulator_table`: every published cell beside our event simulation
  (:func:`spare_theory.training.simulate.simulate_steps`) and our closed form
  (:func:`spare_theory.training.estimate.step_time_to_train`), their errors and
  pass/fail.
* :func:`paper_table`: the paper's headline table (Weibull lifetimes,
  ``N = 200, 600, 1000``) at the paper's plans and at our optimiser's.
* :func:`paper_split_table`: the same scenario's best plans of Rep, published
  SPARe and SPARe with micro-batch splitting (``m`` = 4, 16 and 1024, the
  limit of large ``m``; ``docs/theory.md`` section 7), with a simulated
  check of the split plans.

Simulation cost sets the sizes: one SPARe run takes 3-5 s at ``N = 200`` and
10-40 s at ``N = 1000`` (Rep about 1 s), so the default simulates a
representative subset of cells with 2 trials, ``quick`` one Rep cell, and
``full`` every cell with 4 trials.  The model runs on every cell.
"""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import math
import os
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_seed_sequence, child_seed
from ..steps.scenario import StepScenario, paper_scenario
from ..training.estimate import step_time_to_train
from ..training.optimize import optimal_plan
from ..training.simulate import simulate_steps
from ._io import save_figure, write_table

__all__ = [
    "MODEL_CRITERIA",
    "PAPER_PLANS",
    "PAPER_SPLITS",
    "PAPER_TABLE",
    "SIM_CRITERIA",
    "paper_split_table",
    "paper_table",
    "paper_table_text",
    "published_cells",
    "reproduce",
    "simulator_table",
]

#: Simulation pass criterion: relative error and combined-SE bounds on the total time.
SIM_CRITERIA = {"rel_error": 0.03, "z": 3.0}
#: Model criteria: mean absolute relative error, worst cell, uptime (absolute, fraction).
MODEL_CRITERIA = {"mae": 0.02, "max_error": 0.05, "uptime_error": 0.02}

#: The SPARe paper's table (Weibull lifetimes, shape 0.78): total time over T0
#: and availability (uptime) of Rep+CKPT and SPARe+CKPT, and SPARe's gain
#: ``1 - spare / rep``, per ``N``.
PAPER_TABLE = {
    200: {"rep": 6.07, "rep_uptime": 0.617, "spare": 2.92, "spare_uptime": 0.870, "gain": 0.519},
    600: {"rep": 4.27, "rep_uptime": 0.799, "spare": 2.49, "spare_uptime": 0.939, "gain": 0.417},
    1000: {"rep": 3.88, "rep_uptime": 0.844, "spare": 2.34, "spare_uptime": 0.965, "gain": 0.396},
}
#: The plans ``(r, k)`` the authors ran for that table (their public ``run.sh``).
PAPER_PLANS = {
    200: {"rep": (3, 6), "spare": (9, 15)},
    600: {"rep": (3, 8), "spare": (8, 23)},
    1000: {"rep": (3, 10), "spare": (9, 30)},
}

#: Pieces per shard of the split SPARe plans of :func:`paper_split_table`
#: (1024 stands for the limit of large ``m``).
PAPER_SPLITS = (4, 16, 1024)

# Cells simulated at the default size: a representative subset (both N, both
# strategies, small / optimal / large r); quick: one cheap Rep cell.
_DEFAULT_CELLS = {
    ("rep", 200, 2),
    ("rep", 200, 3),
    ("rep", 200, 6),
    ("rep", 200, 12),
    ("rep", 1000, 3),
    ("rep", 1000, 10),
    ("rep", 1000, 26),
    ("spare", 200, 5),
    ("spare", 200, 9),
    ("spare", 200, 12),
    ("spare", 1000, 9),
}
_QUICK_CELLS = {("rep", 200, 3)}
_TRIALS = {"quick": 2, "default": 2, "full": 4}


def published_cells() -> pd.DataFrame:
    """The published per-cell means (``spare_theory/data/published_des_trails.csv``).

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``strategy``, ``failure_law``, ``N``, ``r``,
        ``checkpoint_every_steps``, the scenario, ``runs``, the means (and
        the total's sd) of total seconds, up seconds, failures and global
        restarts, ``T0_seconds``, ``total_over_T0``, ``uptime``.

    Examples
    --------
    >>> cells = published_cells()
    >>> len(cells), sorted(set(cells["N"]))
    (72, [200, 1000])
    """
    text = resources.files("spare_theory").joinpath("data/published_des_trails.csv").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    frame = pd.DataFrame(list(csv.DictReader(lines)))
    ints = ["N", "r", "checkpoint_every_steps", "steps", "runs"]
    for column in frame.columns:
        if column in ints:
            frame[column] = frame[column].astype(int)
        elif column not in ("strategy", "failure_law"):
            frame[column] = frame[column].astype(float)
    return frame


def _scenario(row: Any) -> StepScenario:
    return paper_scenario(
        int(row["N"]),
        failure_law=str(row["failure_law"]),
        restart_seconds=float(row["restart_seconds"]),
        allreduce_seconds=float(row["allreduce_seconds"]),
        steps=int(row["steps"]),
    )


def _simulate(task: tuple) -> dict[str, float]:
    """One simulated cell: means and standard errors of total/T0, uptime and restarts."""
    scenario, strategy, r, k, trials, seed = task
    sim = simulate_steps(
        scenario, strategy, r=r, checkpoint_every_steps=k, trials=trials, seed=seed
    )
    out = {"sim_trials": float(trials)}
    for name in ("total_over_T0", "uptime", "restarts"):
        out[f"sim_{name}"] = sim.mean(name)
        out[f"sim_{name}_se"] = sim.standard_error(name) if trials > 1 else math.nan
    return out


def simulator_table(
    *,
    size: str = "default",
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Every published cell: the published mean, our simulation, our model, errors, pass/fail.

    Simulation (cells chosen by ``size``): ``sim_rel_error = sim / published - 1``
    on total/T0 and ``sim_z = (sim - published) / sqrt(SE_sim^2 + SE_pub^2)``
    with ``SE_pub = sd / sqrt(runs)`` of the published runs; ``sim_pass`` when
    ``|sim_rel_error| <= 0.03`` or ``|sim_z| <= 3``.  Model (every cell):
    ``model_rel_error = model / published - 1`` on total/T0 and
    ``model_uptime_error = model - published`` (absolute, a fraction);
    ``model_pass`` when ``|model_rel_error| <= 0.05`` and
    ``|model_uptime_error| <= 0.02`` (the table-wide target adds a mean
    absolute error of at most 0.02).

    Parameters
    ----------
    size : {"quick", "default", "full"}
        Simulated cells: one Rep cell (``N = 200``, ``r = 3``) with 2 trials;
        11 representative cells with 2 trials; every cell with 4 trials.
    executor : concurrent.futures.Executor, optional
        Where the simulated cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Cell ``i`` of the published file simulates with ``child_seed(seed, i)``.
    progress : bool
        Show a progress bar over simulated cells.

    Returns
    -------
    pandas.DataFrame
        One row per published cell; ``sim_*`` columns are NaN where the cell
        was not simulated (``sim_pass`` is then ``None``).

    Raises
    ------
    ValueError
        Naming ``size`` or ``seed``.

    Examples
    --------
    >>> table = simulator_table(size="quick")
    >>> len(table), int(table["sim_trials"].notna().sum())
    (72, 1)
    >>> bool(table["model_rel_error"].abs().mean() < 0.02)
    True
    """
    if size not in _TRIALS:
        raise ValueError(f"size must be one of {list(_TRIALS)}, got {size!r}")
    root = as_seed_sequence(seed)
    cells = published_cells()
    chosen = {"quick": _QUICK_CELLS, "default": _DEFAULT_CELLS}.get(size)
    rows: list[dict[str, Any]] = []
    tasks, where = [], []
    for i, row in cells.iterrows():
        sc = _scenario(row)
        strategy, r, k = str(row["strategy"]), int(row["r"]), int(row["checkpoint_every_steps"])
        est = step_time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
        published_restarts = float(row["global_restarts_mean"])
        rows.append(
            {
                "strategy": strategy,
                "N": int(row["N"]),
                "r": r,
                "k": k,
                "published_total_over_T0": float(row["total_over_T0"]),
                "published_se": float(row["total_seconds_sd"])
                / math.sqrt(int(row["runs"]))
                / float(row["T0_seconds"]),
                "published_uptime": float(row["uptime"]),
                "published_restarts": published_restarts,
                "model_total_over_T0": est.total_over_T0,
                "model_rel_error": est.total_over_T0 / float(row["total_over_T0"]) - 1.0,
                "model_uptime": est.uptime,
                "model_uptime_error": est.uptime - float(row["uptime"]),
                "model_restarts": est.restarts,
            }
        )
        if chosen is None or (strategy, int(row["N"]), r) in chosen:
            tasks.append((sc, strategy, r, k, _TRIALS[size], child_seed(root, int(i))))
            where.append(len(rows) - 1)
    results = map_tasks(
        _simulate, tasks, executor=executor, desc="simulated cells", progress=progress
    )
    for j, res in zip(where, results, strict=True):
        rows[j].update(res)
    frame = pd.DataFrame(rows)
    for name in ("total_over_T0", "total_over_T0_se", "uptime", "uptime_se", "restarts"):
        if f"sim_{name}" not in frame:
            frame[f"sim_{name}"] = math.nan
    if "sim_trials" not in frame:
        frame["sim_trials"] = math.nan
    published = frame["published_total_over_T0"]
    frame["sim_rel_error"] = frame["sim_total_over_T0"] / published - 1.0
    combined = np.hypot(frame["sim_total_over_T0_se"], frame["published_se"])
    frame["sim_z"] = (frame["sim_total_over_T0"] - published) / combined
    simulated = frame["sim_total_over_T0"].notna()
    ok = (frame["sim_rel_error"].abs() <= SIM_CRITERIA["rel_error"]) | (
        frame["sim_z"].abs() <= SIM_CRITERIA["z"]
    )
    frame["sim_pass"] = pd.Series(np.where(simulated, ok, None), dtype=object)
    frame["model_pass"] = (frame["model_rel_error"].abs() <= MODEL_CRITERIA["max_error"]) & (
        frame["model_uptime_error"].abs() <= MODEL_CRITERIA["uptime_error"]
    )
    order = [
        "strategy",
        "N",
        "r",
        "k",
        "published_total_over_T0",
        "published_se",
        "sim_total_over_T0",
        "sim_total_over_T0_se",
        "sim_trials",
        "sim_rel_error",
        "sim_z",
        "sim_pass",
        "model_total_over_T0",
        "model_rel_error",
        "model_pass",
        "published_uptime",
        "sim_uptime",
        "model_uptime",
        "model_uptime_error",
        "published_restarts",
        "sim_restarts",
        "model_restarts",
    ]
    return frame[order]


def _paper_sim(task: tuple) -> tuple[float, float, float]:
    scenario, strategy, r, k, trials, seed = task
    sim = simulate_steps(
        scenario, strategy, r=r, checkpoint_every_steps=k, trials=trials, seed=seed
    )
    return sim.mean("total_over_T0"), sim.standard_error("total_over_T0"), sim.mean("uptime")


def paper_table(
    *,
    simulate: Any = (),
    trials: int = 2,
    optimise: bool = True,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """The SPARe paper's table (Weibull lifetimes) beside our model, simulation and optimiser.

    For ``N = 200, 600, 1000`` on ``paper_scenario(N, failure_law="weibull")``
    (shape 0.78, mean lifetime ``300 N`` s): total time over ``T0`` and
    uptime (the paper's availability) of Rep+CKPT and SPARe+CKPT at the
    paper's plans (:data:`PAPER_PLANS`), SPARe's gain ``1 - spare / rep``;
    then the plans of :func:`spare_theory.optimal_plan` (``r`` and ``k``
    searched) with their model values.

    Parameters
    ----------
    simulate : iterable of (N, strategy)
        Cells of the paper's plans to simulate (:func:`spare_theory.simulate_steps`).
    trials : int
        Simulated runs per cell, ``>= 2``.
    optimise : bool
        Add the optimiser's plans (about 1 s per strategy and ``N``).
    executor : concurrent.futures.Executor, optional
        Where the simulated cells run.
    seed : int or numpy.random.SeedSequence
        Cell ``(N, strategy)`` number ``i`` of the table uses ``child_seed(seed, i)``.
    progress : bool
        Show a progress bar over simulated cells.

    Returns
    -------
    pandas.DataFrame
        One row per ``N`` and plan source (``"paper"``, ``"optimiser"``).

    Examples
    --------
    >>> t = paper_table(optimise=False)
    >>> t[["N", "rep_model", "spare_model", "gain_model"]].round(2).values.tolist()
    [[200.0, 5.97, 2.96, 0.5], [600.0, 4.29, 2.49, 0.42], [1000.0, 3.91, 2.34, 0.4]]
    """
    trials = as_count(trials, "trials", minimum=2)
    root = as_seed_sequence(seed)
    wanted = {(int(n), str(s)) for n, s in simulate}
    rows: list[dict[str, Any]] = []
    tasks, where = [], []
    for i, (N, published) in enumerate(PAPER_TABLE.items()):
        sc = paper_scenario(N, failure_law="weibull")
        row: dict[str, Any] = {"N": N, "plans": "paper"}
        for j, strategy in enumerate(("rep", "spare")):
            r, k = PAPER_PLANS[N][strategy]
            est = step_time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
            row |= {
                f"{strategy}_r": r,
                f"{strategy}_k": k,
                f"{strategy}_published": published[strategy],
                f"{strategy}_model": est.total_over_T0,
                f"{strategy}_sim": math.nan,
                f"{strategy}_sim_se": math.nan,
                f"{strategy}_uptime_published": published[f"{strategy}_uptime"],
                f"{strategy}_uptime_model": est.uptime,
                f"{strategy}_uptime_sim": math.nan,
            }
            if (N, strategy) in wanted:
                tasks.append((sc, strategy, r, k, trials, child_seed(root, 2 * i + j)))
                where.append((len(rows), strategy))
        row["gain_published"] = published["gain"]
        rows.append(row)
        if optimise:
            opt: dict[str, Any] = {"N": N, "plans": "optimiser"}
            for strategy in ("rep", "spare"):
                plan = optimal_plan(sc, strategy)
                opt |= {
                    f"{strategy}_r": plan.r,
                    f"{strategy}_k": plan.checkpoint_every_steps,
                    f"{strategy}_published": math.nan,
                    f"{strategy}_model": plan.estimate.total_over_T0,
                    f"{strategy}_sim": math.nan,
                    f"{strategy}_sim_se": math.nan,
                    f"{strategy}_uptime_published": math.nan,
                    f"{strategy}_uptime_model": plan.estimate.uptime,
                    f"{strategy}_uptime_sim": math.nan,
                }
            opt["gain_published"] = math.nan
            rows.append(opt)
    results = map_tasks(_paper_sim, tasks, executor=executor, desc="paper cells", progress=progress)
    for (j, strategy), (mean, se, uptime) in zip(where, results, strict=True):
        rows[j] |= {
            f"{strategy}_sim": mean,
            f"{strategy}_sim_se": se,
            f"{strategy}_uptime_sim": uptime,
        }
    frame = pd.DataFrame(rows)
    frame["gain_model"] = 1.0 - frame["spare_model"] / frame["rep_model"]
    frame["gain_sim"] = 1.0 - frame["spare_sim"] / frame["rep_sim"]
    frame["rep_sim_trials"] = np.where(frame["rep_sim"].notna(), trials, np.nan)
    frame["spare_sim_trials"] = np.where(frame["spare_sim"].notna(), trials, np.nan)
    return frame


def paper_split_table(
    *,
    N: Any = tuple(PAPER_TABLE),
    microbatches: Any = PAPER_SPLITS,
    simulate: Any = (),
    trials: int = 2,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Best plans on the paper's scenario: Rep, published SPARe and SPARe split into micro-batches.

    On ``paper_scenario(N, failure_law="weibull")`` each row is the best plan
    (:func:`spare_theory.optimal_plan`: ``r`` and the checkpoint interval
    ``k`` in steps) of Rep+CKPT, published SPARe, or SPARe with
    ``StepScenario.microbatches = m`` (each failed group's shard cut into
    ``m`` pieces that the surviving hosts of its type share; the step costs
    the largest host load).

    Parameters
    ----------
    N : sequence of int
        Group counts (default the paper's 200, 600, 1000).
    microbatches : sequence of int
        Pieces per shard ``m >= 2`` of the split plans (default :data:`PAPER_SPLITS`).
    simulate : iterable of (N, m)
        Split plans to check with :func:`spare_theory.simulate_steps` (``m =
        1``: published SPARe's plan).
    trials : int
        Simulated runs per checked plan, ``>= 2``.
    executor : concurrent.futures.Executor, optional
        Where the simulated plans run.
    seed : int or numpy.random.SeedSequence
        Checked plan number ``i`` (in table order) uses ``child_seed(seed, i)``.
    progress : bool
        Show a progress bar over simulated plans.

    Returns
    -------
    pandas.DataFrame
        One row per ``N`` and plan: ``N``, ``plan`` (``rep``, ``spare``,
        ``spare m=<m>``), ``microbatches`` (0 for Rep), ``r``,
        ``checkpoint_every_steps``, ``total_over_T0`` and ``uptime`` (model),
        ``reduction_vs_spare`` and ``reduction_vs_rep`` (``1 - total / total
        of the other``, fractions), ``sim_total_over_T0`` and its ``sim_se``
        (NaN where not simulated).

    Examples
    --------
    >>> t = paper_split_table(N=[200], microbatches=[16])
    >>> t[["plan", "r"]].values.tolist()
    [['rep', 3], ['spare', 8], ['spare m=16', 7]]
    >>> bool(t["total_over_T0"].iloc[2] < t["total_over_T0"].iloc[1])
    True
    """
    trials = as_count(trials, "trials", minimum=2)
    root = as_seed_sequence(seed)
    splits = [as_count(m, "microbatches", minimum=2) for m in microbatches]
    wanted = {(int(n), int(m)) for n, m in simulate}
    rows: list[dict[str, Any]] = []
    tasks: list[tuple[Any, ...]] = []
    where: list[int] = []
    for n in N:
        sc = paper_scenario(as_count(n, "N"), failure_law="weibull")
        plans = [("rep", 0, optimal_plan(sc, "rep")), ("spare", 1, optimal_plan(sc, "spare"))]
        plans += [
            (f"spare m={m}", m, optimal_plan(dataclasses.replace(sc, microbatches=m), "spare"))
            for m in splits
        ]
        spare_total = plans[1][2].estimate.total_over_T0
        rep_total = plans[0][2].estimate.total_over_T0
        for name, m, plan in plans:
            total = plan.estimate.total_over_T0
            if (sc.groups, m) in wanted:
                split = dataclasses.replace(sc, microbatches=m) if m > 1 else sc
                seed_i = child_seed(root, len(tasks))
                tasks.append((split, "spare", plan.r, plan.checkpoint_every_steps, trials, seed_i))
                where.append(len(rows))
            rows.append(
                {
                    "N": sc.groups,
                    "plan": name,
                    "microbatches": m,
                    "r": plan.r,
                    "checkpoint_every_steps": plan.checkpoint_every_steps,
                    "total_over_T0": total,
                    "uptime": plan.estimate.uptime,
                    "reduction_vs_spare": 1.0 - total / spare_total,
                    "reduction_vs_rep": 1.0 - total / rep_total,
                    "sim_total_over_T0": math.nan,
                    "sim_se": math.nan,
                }
            )
    results = map_tasks(_paper_sim, tasks, executor=executor, desc="split plans", progress=progress)
    for j, (mean, se, _) in zip(where, results, strict=True):
        rows[j] |= {"sim_total_over_T0": mean, "sim_se": se}
    return pd.DataFrame(rows)


def _header(table: pd.DataFrame) -> str:
    """The pass criteria and the table-wide results, for the top of the Markdown table."""
    mae = float(table["model_rel_error"].abs().mean())
    worst = float(table["model_rel_error"].abs().max())
    uptime = float(table["model_uptime_error"].abs().max())
    simulated = table["sim_pass"].notna()
    passed = int((table["sim_pass"] == True).sum())  # noqa: E712 (object column)
    model_ok = (
        mae <= MODEL_CRITERIA["mae"]
        and worst <= MODEL_CRITERIA["max_error"]
        and uptime <= MODEL_CRITERIA["uptime_error"]
    )
    return (
        "Criteria. Simulation (sim_pass): total/T0 within 3 % of the published mean "
        "(|sim_rel_error| <= 0.03) or within 3 combined standard errors (|sim_z| <= 3, "
        "z = (sim - published) / sqrt(SE_sim^2 + SE_published^2), SE_published = sd / "
        "sqrt(3 runs)). Model (model_pass per cell: |model_rel_error| <= 0.05 and "
        "|model_uptime_error| <= 0.02; table-wide also MAE <= 0.02). Errors are fractions "
        "(0.03 = 3 %); uptime errors are absolute (0.02 = 2 percentage points).\n\n"
        f"Results. Simulation: {passed}/{int(simulated.sum())} simulated cells pass "
        f"({int(table['sim_trials'].max()) if simulated.any() else 0} trials each; "
        "the other cells are not simulated at this size: --full simulates all). "
        f"Model on all {len(table)} cells: MAE {100 * mae:.2f} %, worst {100 * worst:.2f} %, "
        f"worst uptime error {100 * uptime:.2f} pp: {'PASS' if model_ok else 'FAIL'}.\n\n"
    )


def _figure(table: pd.DataFrame, outdir: Path) -> Path:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    colours = {"rep": "tab:red", "spare": "tab:blue"}
    names = {"rep": "Rep+CKPT", "spare": "SPARe+CKPT"}
    for ax, N in zip(axes, (200, 1000), strict=True):
        for strategy in ("rep", "spare"):
            part = table[(table["N"] == N) & (table["strategy"] == strategy)].sort_values("r")
            c = colours[strategy]
            ax.plot(
                part["r"],
                part["published_total_over_T0"],
                "o",
                mfc="none",
                color=c,
                label=f"{names[strategy]} published",
            )
            ax.plot(
                part["r"],
                part["model_total_over_T0"],
                "-",
                color=c,
                label=f"{names[strategy]} model",
            )
            sim = part[part["sim_total_over_T0"].notna()]
            ax.errorbar(
                sim["r"],
                sim["sim_total_over_T0"],
                yerr=3 * sim["sim_total_over_T0_se"].fillna(0.0),
                fmt="x",
                color=c,
                capsize=3,
                label=f"{names[strategy]} simulation (3 SE)",
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(ScalarFormatter())
        ax.set_xlabel("redundancy r (the authors' k for each r)")
        ax.set_title(f"N = {N}, exponential lifetimes")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("time to train / T0")
    axes[0].legend(fontsize=8)
    fig.suptitle("Published simulator vs our closed form and event simulation")
    fig.tight_layout()
    return save_figure(fig, outdir, "simulator")


def paper_table_text(frame: pd.DataFrame) -> str:
    """The paper's table as plain text: published, model and simulation side by side.

    Totals over ``T0`` with two decimals, uptime (the paper's availability)
    as a fraction with three; the simulation columns only when a cell was
    simulated, and each gain line only with the values there are.  At most
    100 columns.

    Examples
    --------
    >>> text = paper_table_text(paper_table(optimise=False))
    >>> print(text.splitlines()[0])
    The SPARe paper's table (Weibull lifetimes, shape 0.78; time to train / T0 and uptime):
    >>> print(text.splitlines()[4])
                    gain: paper 51.9 %, model 50.5 %
    """

    def num(x: float, fmt: str) -> str:
        return "-" if not math.isfinite(x) else format(x, fmt)

    simulated = bool(frame[["rep_sim", "spare_sim"]].notna().to_numpy().any())
    head = (
        f"{'N':>5} {'plans':<9} {'strategy':<10} {'r':>3} {'k':>3} {'paper':>6} {'model':>6}"
        + (f" {'sim':>12}" if simulated else "")
        + f"  {'uptime: paper':>13} {'model':>6}"
        + (f" {'sim':>6}" if simulated else "")
    )
    lines = [
        "The SPARe paper's table (Weibull lifetimes, shape 0.78; time to train / T0 and uptime):",
        head,
    ]
    for row in frame.itertuples(index=False):
        d = row._asdict()
        for strategy, name in (("rep", "Rep+CKPT"), ("spare", "SPARe+CKPT")):
            sim = d[f"{strategy}_sim"]
            sim_text = f"{sim:.2f}+-{d[f'{strategy}_sim_se']:.2f}" if math.isfinite(sim) else "-"
            lines.append(
                f"{d['N']:>5} {d['plans']:<9} {name:<10} {d[f'{strategy}_r']:>3} "
                f"{d[f'{strategy}_k']:>3} {num(d[f'{strategy}_published'], '.2f'):>6} "
                f"{num(d[f'{strategy}_model'], '.2f'):>6}"
                + (f" {sim_text:>12}" if simulated else "")
                + f"  {num(d[f'{strategy}_uptime_published'], '.3f'):>13} "
                f"{num(d[f'{strategy}_uptime_model'], '.3f'):>6}"
                + (f" {num(d[f'{strategy}_uptime_sim'], '.3f'):>6}" if simulated else "")
            )
        gains = [
            f"{source} {100 * d[f'gain_{key}']:.1f} %"
            for source, key in (("paper", "published"), ("model", "model"), ("sim", "sim"))
            if math.isfinite(d[f"gain_{key}"])
        ]
        lines.append(f"{'':>5} {'':<9} gain: " + ", ".join(gains))
    footer = "paper: the published table; model: step_time_to_train; " + (
        "sim: simulate_steps, mean +- SE ('-': not simulated)."
        if simulated
        else "spare-theory table simulator adds our event simulation."
    )
    lines += textwrap.wrap(footer, 100)
    return "\n".join(lines)


def reproduce(
    outdir: str | os.PathLike[str],
    *,
    quick: bool = False,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
    full: bool = False,
) -> list[Path]:
    """Write the ``simulator`` and ``paper_table`` tables and the ``simulator`` figure.

    Parameters
    ----------
    outdir : path
        Folder that receives ``tables/`` and ``figures/``.
    quick : bool
        Model on every cell, one small simulated cell, no paper-table
        simulation nor optimiser (seconds).
    executor : concurrent.futures.Executor, optional
        Where the simulated cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Seed of the simulations.
    progress : bool
        Show progress bars.
    full : bool
        Simulate every published cell (4 trials) and every cell of the
        paper's table (tens of minutes on 2 cores).

    Returns
    -------
    list of pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:  # doctest: +SKIP
    ...     [p.name for p in reproduce(tmp, quick=True, progress=False)]
    ['simulator.csv', 'simulator.md', 'paper_table.csv', 'paper_table.md',
     'paper_microbatch.csv', 'paper_microbatch.md', 'simulator.png']
    """
    outdir = Path(outdir)
    tables, figures = outdir / "tables", outdir / "figures"
    size = "full" if full else "quick" if quick else "default"
    root = as_seed_sequence(seed)
    table = simulator_table(
        size=size, executor=executor, seed=child_seed(root, 0), progress=progress
    )
    paths = list(
        write_table(
            table,
            tables,
            "simulator",
            title="Published simulator (tsinghua-fib-lab/AutoSOTA, ICML-2026/paper-3612-SPARe/"
            "best_code): every published cell vs our simulation and closed form\n\n"
            + _header(table),
            notes="published_*: means over the 3 published runs; published_se = sd / sqrt(3) "
            "of total/T0. sim_*: simulate_steps (rep_recovery='published'); model_*: "
            "step_time_to_train at the same (r, k). Empty sim cells were not simulated.",
        )
    )
    if full:
        simulate = [(n, s) for n in PAPER_TABLE for s in ("rep", "spare")]
        trials = _TRIALS["full"]
    elif quick:
        simulate, trials = [], 2
    else:
        simulate = [(200, "rep"), (600, "rep"), (1000, "rep"), (200, "spare")]
        trials = 2
    paper = paper_table(
        simulate=simulate,
        trials=trials,
        optimise=not quick,
        executor=executor,
        seed=child_seed(root, 1),
        progress=progress,
    )
    paths += write_table(
        paper,
        tables,
        "paper_table",
        title="The SPARe paper's table (Weibull, N = 200 / 600 / 1000): published vs ours",
        notes=f"*_published: the paper's table; *_model: step_time_to_train; *_sim: "
        f"simulate_steps, {trials} trials (empty where not simulated at this size). "
        "plans = paper: the (r, k) of the authors' run.sh; optimiser: optimal_plan on the "
        "same scenario. Totals are over T0; uptime is the paper's availability; gain = "
        "1 - spare / rep.",
    )
    splits = paper_split_table(
        N=(200,) if quick else tuple(PAPER_TABLE),
        simulate=[] if quick else [(200, 16)],
        trials=trials,
        executor=executor,
        seed=child_seed(root, 2),
        progress=progress,
    )
    paths += write_table(
        splits,
        tables,
        "paper_microbatch",
        title="The SPARe paper's scenario (Weibull): best plans with micro-batch splitting",
        notes="Best plan (optimal_plan: r and k searched) of Rep+CKPT, published SPARe and "
        "SPARe with each failed group's shard cut into m micro-batches (StepScenario."
        "microbatches; m = 1024 stands for the limit of large m). total_over_T0 and uptime "
        "from the model; reduction_vs_* = 1 - total / total of the other plan (fractions). "
        f"sim_*: simulate_steps at that plan, {trials} trials (empty where not simulated).",
    )
    paths.append(_figure(table, figures))
    return paths
