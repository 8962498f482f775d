"""Time-to-train tables and figures: model vs simulation, r*, the published headline.

* ``training_error_table``: :func:`~spare_theory.training.simulate.simulate_training`
  against :func:`~spare_theory.training.estimate.time_to_train` over a grid of
  scenarios and the three strategies (in band: within 2 % or 3 SE).
* ``r_star_table``: the optimiser's SPARe ``r`` against the SPARe paper's rule
  ``floor(log2 N + 0.833)`` for ``N`` from 64 to 1,000,000, in the published
  regime (cluster MTBF 5 min, 60 min restart), with the time lost by the rule.
* :func:`write` also writes the published headline at 600,000 GPUs and
  its sensitivity to checkpoint and restart cost
  (:mod:`spare_theory.reports.headline`).

Naming, as in the other reports and :func:`spare_theory.sweeps.by_point`:
``N`` groups, ``r`` redundancy, ``<quantity>_<strategy>`` for per-strategy
columns, units in the names (``hours``, ``minutes``), ``mc_*`` for
simulation estimates, and fractions for every ratio (``0.47`` is 47 %).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_seed_sequence, child_seed
from ..hourly.scenario import Scenario
from ..planning.redundancy import r_star_rule
from ..training.estimate import time_to_train
from ..training.optimize import optimal_plan
from ..training.simulate import simulate_training
from ._io import save_figure, with_plan_r, write_table
from .catalogue import ReportOptions
from .economics import ECONOMICS_COST, ECONOMICS_NOTES, ranking_changes
from .headline import (
    HEADLINE_COLUMNS,
    HEADLINE_GPUS_PER_GROUP,
    HEADLINE_NOTES,
    headline_economics,
    headline_figure,
    headline_table,
    headline_verdict,
    sensitivity_table,
)

__all__ = [
    "R_STAR_N",
    "r_star_table",
    "training_bias_text",
    "training_error_table",
    "write",
]

#: Group counts of :func:`r_star_table` (``quick=True`` stops at ``2**16``).
R_STAR_N = (64, 256, 1024, 4096, 16384, 65536, 262144, 1_000_000)
# Error-table grid: (gpus, gpus_per_group, gpu_mtbf_hours, restart_minutes, checkpoint_minutes).
_ERROR_GRID = (
    (1024, 8, 2000.0, 20.0, 5.0),
    (1024, 8, 1000.0, 60.0, 2.0),
    (4096, 16, 8000.0, 30.0, 3.0),
    (2000, 8, 4000.0, 10.0, 10.0),
)
_ERROR_R = {"ckpt": (None,), "rep": (2, 3), "spare": (3, 5)}


def _error_cell(task: tuple[Any, ...]) -> dict[str, Any]:
    (gpus, gpg, mtbf, restart, ckpt), strategy, r, cycles, trials, seed = task
    base = dict(
        gpus=gpus,
        gpus_per_group=gpg,
        gpu_mtbf_hours=mtbf,
        restart_minutes=restart,
        checkpoint_minutes=ckpt,
    )
    # Work for about `cycles` restarts: the model is a renewal-reward limit.
    probe = time_to_train(Scenario(**base, work_hours=1.0), strategy, r=r)
    sc = Scenario(**base, work_hours=cycles / probe.restarts)
    est = time_to_train(sc, strategy, r=r)
    sim = simulate_training(
        sc,
        strategy,
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=trials,
        seed=seed,
    )
    err = est.hours / sim.mean_hours - 1
    z = (
        (est.hours - sim.mean_hours) / sim.standard_error_hours
        if sim.standard_error_hours > 0
        else 0.0
    )
    return {
        "N": sc.groups,
        "cluster_mtbf_minutes": sc.cluster_mtbf_minutes,
        "restart_minutes": restart,
        "checkpoint_minutes": ckpt,
        "strategy": strategy,
        "r": est.r,
        "checkpoint_interval_minutes": est.checkpoint_interval_minutes,
        "work_hours": sc.work_hours,
        "hours": est.hours,
        "mc_mean_hours": sim.mean_hours,
        "mc_se_hours": sim.standard_error_hours,
        "rel_error": err,
        "z": z,
        "in_band": bool(abs(err) <= 0.02 or abs(z) <= 3),
    }


def training_error_table(
    *,
    quick: bool = False,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """Time-to-train model against the independent simulation, one row per cell.

    Four small scenarios (two with ``quick=True``) times the strategies
    (CKPT-only; Rep and SPARe at two ``r`` each), each with the model's best
    interval at that ``r`` and about 30 restarts' worth of work (15 quick),
    simulated 80 times (20 quick).  Cell ``i`` uses ``child_seed(seed, i)``.

    Parameters
    ----------
    quick : bool
        Two scenarios, fewer cycles and trials.
    executor : concurrent.futures.Executor, optional
        Where cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Seed of the table.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns ``N``, ``cluster_mtbf_minutes``, ``restart_minutes``,
        ``checkpoint_minutes``, ``strategy``, ``r``,
        ``checkpoint_interval_minutes``, ``work_hours``, ``hours`` (the model's
        expected time to train), ``mc_mean_hours`` and ``mc_se_hours`` (the
        simulation's mean and standard error), ``rel_error``
        (``hours / mc_mean_hours - 1``, a fraction), ``z`` (the gap in
        standard errors) and ``in_band`` (``|rel_error| <= 0.02`` or
        ``|z| <= 3``).

    Examples
    --------
    About a second even with ``quick=True`` (a slow doctest):

    >>> table = training_error_table(quick=True, progress=False)
    >>> bool(table["in_band"].all()), len(table)
    (True, 10)
    """
    seed = as_seed_sequence(seed)
    grid = _ERROR_GRID[:2] if quick else _ERROR_GRID
    cycles, trials = (15, 20) if quick else (30, 40)
    cells = [(g, s, r) for g in grid for s, rs in _ERROR_R.items() for r in rs]
    tasks = [(g, s, r, cycles, trials, child_seed(seed, i)) for i, (g, s, r) in enumerate(cells)]
    return pd.DataFrame(
        map_tasks(_error_cell, tasks, executor=executor, desc="training table", progress=progress)
    )


def r_star_table(*, N: Iterable[int] | None = None, quick: bool = False) -> pd.DataFrame:
    """SPARe's optimal ``r`` against the rule ``floor(log2 N + 0.833)``, in the published regime.

    Groups of 8 GPUs, per-GPU MTBF set so that the cluster MTBF is 5 min
    (``gpu_mtbf_hours = 5/60 * 8 N``), 60 min restart, 5 min checkpoint,
    720 h of work.

    Parameters
    ----------
    N : sequence of int, optional
        Group counts (default :data:`R_STAR_N`; with ``quick=True`` those up
        to ``2**16``).
    quick : bool
        Drop the largest default ``N``.

    Returns
    -------
    pandas.DataFrame
        Columns ``N``, ``r_optimal`` and ``hours_optimal`` (the optimiser's
        plan), ``r_rule`` and ``hours_rule`` (the rule's ``r``, interval
        optimised) and ``rule_loss`` (``hours_rule / hours_optimal - 1``, a
        fraction).

    Examples
    --------
    >>> table = r_star_table(N=[64, 256])
    >>> table[["N", "r_optimal", "r_rule"]]
         N  r_optimal  r_rule
    0   64          8       6
    1  256          8       8
    >>> print(f"{table['rule_loss'].iloc[0]:.3f}")
    0.087
    """
    if N is None:
        N_list = [n for n in R_STAR_N if not quick or n <= 2**16]
    else:
        N_list = [as_count(n, "N") for n in np.atleast_1d(np.asarray(list(N), dtype=object))]
    rows = []
    for n in N_list:
        sc = Scenario(
            gpus=8 * n,
            gpus_per_group=8,
            gpu_mtbf_hours=5 / 60 * 8 * n,
            restart_minutes=60,
            checkpoint_minutes=5,
            work_hours=720,
        )
        plan = optimal_plan(sc, "spare")
        rule = int(r_star_rule(n))
        rule_hours = time_to_train(sc, "spare", r=rule).hours
        rows.append(
            {
                "N": n,
                "r_optimal": plan.r,
                "r_rule": rule,
                "hours_optimal": plan.hours,
                "hours_rule": rule_hours,
                "rule_loss": rule_hours / plan.hours - 1,
            }
        )
    return with_plan_r(pd.DataFrame(rows))


def training_bias_text(table: pd.DataFrame) -> str:
    """The model's bias against the simulation, per strategy, in words.

    The band (2 % or 3 SE) passes rows whose gap is many standard errors
    but small relative to the hours; this states the gap instead of hiding
    it: per strategy, the mean ``z`` (gap in standard errors), its range,
    the rows with ``|z| > 3``, and the mean relative error (a fraction).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`training_error_table` (columns ``strategy``, ``z``,
        ``rel_error``).

    Returns
    -------
    str
        Markdown bullet lines.

    Examples
    --------
    >>> t = pd.DataFrame({"strategy": ["rep", "rep", "spare", "spare"],
    ...                   "z": [0.5, -1.0, 4.0, 6.0], "rel_error": [1e-4, -2e-4, 3e-3, 4e-3]})
    >>> print(training_bias_text(t))
    - rep: mean z -0.25 (-1.00 to 0.50), 0/2 rows beyond 3 SE, mean rel_error -5e-05;
      no systematic gap.
    - spare: mean z 5.00 (4.00 to 6.00), 2/2 rows beyond 3 SE, mean rel_error 0.0035;
      a known bias: the model is above the simulation in 2/2 rows.
    """
    lines = []
    for strategy, rows in table.groupby("strategy", sort=False):
        z, rel = rows["z"].astype(float), rows["rel_error"].astype(float)
        beyond = int((z.abs() > 3).sum())
        above, below = int((z > 0).sum()), int((z < 0).sum())
        line = (
            f"- {strategy}: mean z {z.mean():.2f} ({z.min():.2f} to {z.max():.2f}), "
            f"{beyond}/{len(z)} rows beyond 3 SE, mean rel_error {rel.mean():.2g}; "
        )
        if beyond and (above == len(z) or below == len(z)):
            side = "above" if above else "below"
            line += f"a known bias: the model is {side} the simulation in {len(z)}/{len(z)} rows."
        else:
            line += "no systematic gap."
        lines.append(line)
    return "\n".join(lines)


def _figures(outdir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    from ..strategies.registry import strategy as lookup

    sc = Scenario.published_600k(gpus_per_group=2048)
    plans = {strategy: optimal_plan(sc, strategy) for strategy in ("ckpt", "rep", "spare")}
    # The optimiser scans only around its optimum; the figure shows every r up to
    # the largest it scanned, so the flatness of the optimum is visible.
    r_top = max(int(plans[s].r_values.max()) for s in ("rep", "spare"))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for strategy, marker in (("rep", "o"), ("spare", "s")):
        r_values, hours = [], []
        for r in range(1, r_top + 1):
            try:
                hours.append(time_to_train(sc, strategy, r=r).hours)
            except ValueError:  # no modular ruler with r marks at this N
                continue
            r_values.append(r)
        plan = plans[strategy]
        ax.plot(
            r_values,
            hours,
            marker=marker,
            label=(f"{lookup(strategy).label} (best r = {plan.r}, {plan.hours:,.0f} h)"),
        )
    top = 30 * plans["rep"].hours
    ckpt = plans["ckpt"].hours
    if ckpt <= top:
        ax.axhline(ckpt, color="k", ls="--", label=f"CKPT-only ({ckpt:,.0f} h)")
    else:  # far above the plotted range: said in the legend, not drawn off the axes
        ax.plot([], [], " ", label=f"CKPT-only: {ckpt:.2g} h, above this range")
    ax.set(
        yscale="log",
        xlabel="redundancy r",
        ylabel="expected hours (interval optimised)",
        title=f"Time to train 720 h of work, 600k GPUs, N = {sc.groups}, R = 60 min",
    )
    ax.set_ylim(0.8 * plans["spare"].hours, top)
    # Labels at 1, 2 and 5 of each decade, written out; no labels on the minor ticks.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3, which="major")
    ax.legend()
    paths = [save_figure(fig, outdir, "time_to_train_vs_r")]
    return paths


def write(options: ReportOptions) -> list[Path]:
    """Write the training, r*, headline and sensitivity tables and both figures.

    Tables ``training_error``, ``r_star``, ``headline``, ``headline_economics``
    (the headline's plans billed, :mod:`spare_theory.reports.economics`) and
    ``training_sensitivity`` (left out with ``quick``: smaller grids and
    samples, seconds); ``seed`` seeds the simulation table, the others are
    deterministic.

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    tables, figures = options.outdir / "tables", options.outdir / "figures"
    paths: list[Path] = []
    err = training_error_table(
        quick=options.quick, executor=options.executor, seed=options.seed, progress=options.progress
    )
    mae = err["rel_error"].abs().mean()
    paths += write_table(
        err,
        tables,
        "training_error",
        title="Time to train: model vs simulation "
        "(in_band: |rel_error| <= 0.02 or |z| <= 3, z = (hours - mc_mean_hours) / mc_se_hours)",
        notes=f"MAE {100 * mae:.2f} %; {int(err['in_band'].sum())}/{len(err)} cells in band "
        "(within 2 % or 3 SE). rel_error = hours / mc_mean_hours - 1, a fraction.\n\n"
        + training_bias_text(err),
    )
    rs = r_star_table(quick=options.quick)
    paths += write_table(
        rs,
        tables,
        "r_star",
        title="SPARe optimal r vs floor(log2 N + 0.833)",
        notes="Cluster MTBF 5 min, R = 60 min, delta = 5 min, 720 h, 8 GPUs per group. "
        "rule_loss = hours_rule / hours_optimal - 1, a fraction.",
    )
    head = headline_table(
        gpus_per_group=HEADLINE_GPUS_PER_GROUP[2:] if options.quick else HEADLINE_GPUS_PER_GROUP,
        cost=ECONOMICS_COST,
    )
    economics = headline_economics(head)
    head = head[list(HEADLINE_COLUMNS)]
    paths += write_table(
        head,
        tables,
        "headline",
        title="600k GPUs, Llama-3 GPU MTBF, R = 60 min, delta = 5 min, 720 h",
        notes=HEADLINE_NOTES + headline_verdict(head),
    )
    paths += write_table(
        economics,
        tables,
        "headline_economics",
        title="The headline's plans in hours, dollars and MWh",
        notes="The plans of tables/headline (same scenarios, same best plans: CKPT-only, "
        "Rep, SPARe and SPARe split into m micro-batches), billed. "
        + ECONOMICS_NOTES
        + "\n\n"
        + "\n\n".join(ranking_changes(economics, "scenario", lambda row: row.plan).values()),
    )
    if not options.quick:
        paths += write_table(
            sensitivity_table(),
            tables,
            "training_sensitivity",
            title="Headline at 2048 GPUs per group vs checkpoint and restart cost",
        )
    paths += _figures(figures)
    paths.append(headline_figure(head, figures))
    return paths
