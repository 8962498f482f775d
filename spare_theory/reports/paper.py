"""The SPARe paper's own table, and the best plans of its scenario with micro-batch splitting.

Both tables are on ``paper_scenario(N, failure_law="weibull")`` (Weibull
lifetimes, shape 0.78, ``N = 200, 600, 1000``), the scenario of the paper's
headline table; :mod:`spare_theory.reports.simulator` writes them beside the
published simulator's cells.

* :func:`paper_table`: the paper's headline table at the paper's plans and
  at our optimiser's.
* :func:`paper_split_table`: the same scenario's best plans of Rep, published
  SPARe and SPARe with micro-batch splitting (``m`` = 4, 16 and 1024, the
  limit of large ``m``; ``docs/theory.md`` section 7), with a simulated
  check of the split plans.
* :func:`paper_table_text`: :func:`paper_table` as plain text (``spare-theory
  headline``).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import textwrap
from typing import Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_seed_sequence, child_seed
from ..steps.scenario import paper_scenario
from ..training.estimate import time_to_train
from ..training.optimize import optimal_plan
from ..training.simulate import simulate_training

__all__ = [
    "PAPER_PLANS",
    "PAPER_SPLITS",
    "PAPER_TABLE",
    "paper_split_table",
    "paper_table",
    "paper_table_text",
]

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


def _paper_sim(task: tuple) -> tuple[float, float, float]:
    scenario, strategy, r, k, trials, seed = task
    sim = simulate_training(
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
        Cells of the paper's plans to simulate (:func:`spare_theory.simulate_training`).
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
    [[200.0, 5.96, 2.95, 0.5], [600.0, 4.3, 2.5, 0.42], [1000.0, 3.9, 2.35, 0.4]]
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
            est = time_to_train(sc, strategy, r=r, checkpoint_every_steps=k)
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
        Split plans to check with :func:`spare_theory.simulate_training` (``m =
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
    [['rep', 3], ['spare', 9], ['spare m=16', 8]]
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
    footer = "paper: the published table; model: time_to_train; " + (
        "sim: simulate_training, mean +- SE ('-': not simulated)."
        if simulated
        else "spare-theory table simulator adds our event simulation."
    )
    lines += textwrap.wrap(footer, 100)
    return "\n".join(lines)
