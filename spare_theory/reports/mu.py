"""Endurable failures, theory versus simulation (tables/mu_error, figures/endurable_failures).

For every cell ``(N, r)`` of the grid, the Monte Carlo mean of the wipe-out
count ``T`` on the cyclic modular-ruler placement (enough trials for a
standard error of at most ``rel_se_target`` of the mean) against the
published Gamma form and the sharp form of :mod:`spare_theory.wipeout.law`.
Cells without a modular ruler are kept, with ``status`` saying why.

Naming: ``N`` groups, ``r`` redundancy; ``mc_*`` are Monte Carlo estimates;
relative errors, standard errors and MAEs are fractions (``0.01`` is 1 %).
"""

from __future__ import annotations

import concurrent.futures
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_real, as_seed_sequence, child_seed
from ..placement.placements import cyclic_placement
from ..placement.rulers import modular_ruler
from ..wipeout.expansion import endurable_failures_gamma
from ..wipeout.law import endurable_failures
from ..wipeout.simulation import simulate_wipeout
from ._io import save_figure, write_table
from .catalogue import ReportOptions

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = [
    "COLUMNS",
    "DEFAULT_N",
    "DEFAULT_R",
    "DEFAULT_REL_SE",
    "PUBLISHED_MAE_GAMMA",
    "QUICK_N",
    "QUICK_R",
    "QUICK_REL_SE",
    "mu_error_summary",
    "mu_error_table",
    "mu_summary_text",
    "plot_endurable_failures",
    "write",
    "write_mu_report",
]

#: Group counts ``N`` of the default grid.
DEFAULT_N = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 75000)
#: Redundancies ``r`` of the default grid.
DEFAULT_R = (2, 3, 4, 6, 8, 12, 16, 20)
#: Mean absolute relative error of the Gamma form against simulation as
#: published in the SPARe paper (a fraction: 1.13 %).
PUBLISHED_MAE_GAMMA = 0.0113
# Acceptance band of the sharp form per cell: k standard errors + a relative floor.
BAND_SE, BAND_REL = 3.0, 1e-3
# Pilot run that sizes each cell (its samples are kept).
_PILOT_TRIALS = 256
#: The ``quick=True`` grid and its target relative standard error.
QUICK_N, QUICK_R, QUICK_REL_SE = (128, 1024, 8192), (2, 4, 8), 0.01
#: Target relative standard error of every default cell (0.6 %).
DEFAULT_REL_SE = 0.006
#: Columns of :func:`mu_error_table`, in order.
COLUMNS = (
    "N",
    "r",
    "status",
    "marks",
    "trials",
    "mc_mean_T",
    "mc_se_T",
    "mc_rel_se_T",
    "gamma",
    "rel_error_gamma",
    "sharp",
    "rel_error_sharp",
    "z_sharp",
    "in_band_sharp",
)


def _cell(task: tuple[int, int, int | None, float, np.random.SeedSequence]) -> dict[str, Any]:
    """One table row: simulate ``(N, r)`` until SE <= target * mean (or ``trials`` fixed)."""
    N, r, trials, target, seed = task
    row: dict[str, Any] = {"N": N, "r": r}
    try:
        marks = modular_ruler(N, r)
    except ValueError as exc:
        return {**row, "status": f"no ruler: {exc}"}
    hosts = cyclic_placement(N, r, marks=marks)
    if trials is not None:
        T = simulate_wipeout(hosts, trials, seed=child_seed(seed, 0))
    else:
        # Pilot, then top-ups sized from the running coefficient of variation;
        # every batch has its own stream, so the cell is deterministic.
        T = simulate_wipeout(hosts, _PILOT_TRIALS, seed=child_seed(seed, 0))
        batch = 1
        while T.std(ddof=1) / math.sqrt(T.size) > target * T.mean():
            needed = math.ceil((T.std(ddof=1) / (target * T.mean())) ** 2 * 1.05) - T.size
            extra = simulate_wipeout(
                hosts, max(needed, _PILOT_TRIALS), seed=child_seed(seed, batch)
            )
            T, batch = np.concatenate([T, extra]), batch + 1
    mean, se = float(T.mean()), float(T.std(ddof=1) / math.sqrt(T.size))
    gamma, sharp = float(endurable_failures_gamma(N, r)), float(endurable_failures(N, r))
    return {
        **row,
        "status": "ok",
        "marks": " ".join(str(m) for m in marks),
        "trials": int(T.size),
        "mc_mean_T": mean,
        "mc_se_T": se,
        "mc_rel_se_T": se / mean,
        "gamma": gamma,
        "rel_error_gamma": gamma / mean - 1,
        "sharp": sharp,
        "rel_error_sharp": sharp / mean - 1,
        "z_sharp": (sharp - mean) / se,
        "in_band_sharp": bool(abs(sharp - mean) <= BAND_SE * se + BAND_REL * mean),
    }


def mu_error_table(
    *,
    N: Iterable[int] | npt.ArrayLike = DEFAULT_N,
    r: Iterable[int] | npt.ArrayLike = DEFAULT_R,
    trials: int | None = None,
    rel_se_target: float = DEFAULT_REL_SE,
    seed: int | np.random.SeedSequence = 0,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Theory versus simulation of ``mu(N, r)`` over a grid, one row per cell.

    Each cell simulates the wipe-out count ``T`` on the cyclic modular-ruler
    placement and compares its mean with the published Gamma form
    ``Gamma(1 + 1/r) N^(1 - 1/r)`` and this package's sharp form
    ``sum_f P(T > f)``.

    Parameters
    ----------
    N : sequence of int
        Group counts of the grid (keyword-only, like every argument).
    r : sequence of int
        Redundancies of the grid; the table has all ``(N, r)`` pairs, ``r``
        varying slowest.
    trials : int, optional
        Fixed trials per cell (>= 2); by default each cell runs a seeded
        pilot of 256 trials and tops up until the standard error is at most
        ``rel_se_target`` of the mean.
    rel_se_target : float
        Target relative standard error, a fraction, ``0 < rel_se_target < 1``.
    seed : int or numpy.random.SeedSequence
        Cell ``i`` uses ``child_seed(seed, i)``: the table is identical on
        any executor.
    executor : concurrent.futures.Executor, optional
        Where cells run (``None``: serially).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`: ``N``, ``r``, ``status``, ``marks`` (the
        ruler), ``trials``, ``mc_mean_T`` and ``mc_se_T`` (Monte Carlo mean of
        ``T`` and its standard error, failures), ``mc_rel_se_T`` (their ratio),
        ``gamma`` and ``sharp`` (the closed forms, failures),
        ``rel_error_gamma`` and ``rel_error_sharp`` (``form / mc_mean_T - 1``,
        fractions), ``z_sharp`` (the sharp form's gap in standard errors) and
        ``in_band_sharp`` (within 3 SE + 0.1 % of the mean).  Cells without a
        modular ruler have ``status`` ``"no ruler: ..."`` and NaN elsewhere.

    Raises
    ------
    ValueError
        Naming the argument: counts that are not positive integers,
        ``trials < 2``, ``rel_se_target`` outside ``(0, 1)``, a bad seed.

    Examples
    --------
    >>> table = mu_error_table(N=[128], r=[2, 20], trials=200, seed=1, progress=False)
    >>> list(table["status"].str[:8])
    ['ok', 'no ruler']
    >>> row = table.iloc[0]
    >>> print(f"mu {row['sharp']:.2f} (sharp), {row['gamma']:.2f} (Gamma), "
    ...       f"simulated {row['mc_mean_T']:.1f} +- {row['mc_se_T']:.1f}")
    mu 10.53 (sharp), 10.03 (Gamma), simulated 10.7 +- 0.3
    """
    N_list = [as_count(n, "N") for n in np.atleast_1d(np.asarray(N, dtype=object))]
    r_list = [as_count(k, "r") for k in np.atleast_1d(np.asarray(r, dtype=object))]
    if trials is not None:
        trials = as_count(trials, "trials", minimum=2)
    target = as_real(rel_se_target, "rel_se_target", minimum=0, maximum=1, strict_minimum=True)
    seed = as_seed_sequence(seed)
    cells = [(n, k) for k in r_list for n in N_list]
    tasks = [(n, k, trials, target, child_seed(seed, i)) for i, (n, k) in enumerate(cells)]
    rows = map_tasks(_cell, tasks, executor=executor, desc="mu table", progress=progress)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def mu_error_summary(table: pd.DataFrame) -> dict[str, float | int]:
    """Mean absolute relative errors of both forms over the simulated cells, and the band count.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`mu_error_table`.

    Returns
    -------
    dict
        ``cells`` and ``simulated_cells`` (counts); ``mae_gamma`` and
        ``mae_sharp`` (mean of ``|rel_error_*|``, fractions);
        ``published_mae_gamma`` (:data:`PUBLISHED_MAE_GAMMA`);
        ``max_abs_rel_error_sharp``; ``cells_in_band_sharp`` (count);
        ``max_mc_rel_se_T`` (a fraction).

    Examples
    --------
    >>> table = mu_error_table(N=[128, 1024], r=[2], trials=200, seed=1, progress=False)
    >>> summary = mu_error_summary(table)
    >>> summary["simulated_cells"], summary["published_mae_gamma"]
    (2, 0.0113)
    >>> print(f"{summary['mae_sharp']:.4f}")
    0.0256
    """
    ok = table[table["status"] == "ok"]
    return {
        "cells": len(table),
        "simulated_cells": len(ok),
        "mae_gamma": float(ok["rel_error_gamma"].abs().mean()),
        "published_mae_gamma": PUBLISHED_MAE_GAMMA,
        "mae_sharp": float(ok["rel_error_sharp"].abs().mean()),
        "max_abs_rel_error_sharp": float(ok["rel_error_sharp"].abs().max()),
        "cells_in_band_sharp": int(ok["in_band_sharp"].sum()),
        "max_mc_rel_se_T": float(ok["mc_rel_se_T"].max()),
    }


def mu_summary_text(summary: dict[str, float | int]) -> str:
    """One sentence stating a :func:`mu_error_summary` (fractions shown in %).

    Examples
    --------
    >>> summary = dict(cells=3, simulated_cells=2, mae_gamma=0.0077, published_mae_gamma=0.0113,
    ...                mae_sharp=0.0022, max_abs_rel_error_sharp=0.0063,
    ...                cells_in_band_sharp=2, max_mc_rel_se_T=0.0025)
    >>> print(mu_summary_text(summary))
    Mean absolute error over 2 simulated cells (1 without a modular ruler): Gamma form
    0.770 % (published: 1.13 %), sharp form 0.220 % (largest 0.630 %); sharp form within
    3 SE + 0.1 % in 2 of 2 cells; largest MC relative SE 0.250 %.
    """
    return (
        f"Mean absolute error over {summary['simulated_cells']} simulated cells "
        f"({summary['cells'] - summary['simulated_cells']} without a modular ruler): "
        f"Gamma form {100 * summary['mae_gamma']:.3f} % (published: "
        f"{100 * summary['published_mae_gamma']:.2f} %), sharp form "
        f"{100 * summary['mae_sharp']:.3f} % "
        f"(largest {100 * summary['max_abs_rel_error_sharp']:.3f} %); sharp form within "
        f"{BAND_SE:g} SE + {100 * BAND_REL:g} % in {summary['cells_in_band_sharp']} of "
        f"{summary['simulated_cells']} cells; largest MC relative SE "
        f"{100 * summary['max_mc_rel_se_T']:.3f} %."
    )


def plot_endurable_failures(table: pd.DataFrame, *, r: Iterable[int] | None = None) -> Figure:
    """``mu`` against ``N`` (log-log) with simulation points, and each form's deviation below.

    Top: sharp form (solid), Gamma form (dashed), Monte Carlo means with
    1.96 SE bars.  Bottom: Gamma form and Monte Carlo relative to the sharp
    form, in %.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`mu_error_table`.
    r : sequence of int, optional
        Redundancies to draw (default: every simulated ``r``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> table = mu_error_table(N=[128, 1024], r=[2], trials=50, seed=1, progress=False)
    >>> fig = plot_endurable_failures(table)
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['endurable failures mu(N, r)', 'relative to sharp form (%)']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt

    ok = table[table["status"] == "ok"]
    r_list = sorted(ok["r"].unique()) if r is None else list(r)
    fig, (ax, dev) = plt.subplots(
        2, 1, figsize=(7, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    for i, k in enumerate(r_list):
        cells = ok[ok["r"] == k].sort_values("N")
        if cells.empty:
            continue
        color = f"C{i % 10}"
        grid = np.unique(np.geomspace(cells["N"].min(), cells["N"].max(), 60).round().astype(int))
        sharp, gamma = endurable_failures(grid, k), endurable_failures_gamma(grid, k)
        ax.plot(grid, sharp, color=color, lw=1.2, label=f"r = {k}")
        ax.plot(grid, gamma, color=color, lw=0.8, ls="--")
        ax.errorbar(
            cells["N"],
            cells["mc_mean_T"],
            yerr=1.96 * cells["mc_se_T"],
            fmt="o",
            ms=3.5,
            color=color,
            capsize=2,
        )
        dev.plot(grid, 100 * (gamma / sharp - 1), color=color, lw=0.8, ls="--")
        dev.errorbar(
            cells["N"],
            100 * (cells["mc_mean_T"] / cells["sharp"] - 1),
            yerr=196 * cells["mc_se_T"] / cells["sharp"],
            fmt="o",
            ms=3,
            color=color,
            capsize=2,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("endurable failures mu(N, r)")
    ax.set_title("Failures until wipe-out: sharp (solid), Gamma (dashed), simulation (dots)")
    ax.legend(title="redundancy", fontsize=8)
    dev.axhline(0, color="k", lw=0.6)
    dev.set_xlabel("data-parallel groups N")
    dev.set_ylabel("relative to sharp form (%)")
    for a in (ax, dev):
        a.grid(True, which="both", alpha=0.3)
    return fig


def write_mu_report(table: pd.DataFrame, outdir: str | os.PathLike[str]) -> list[Path]:
    """Write ``outdir/tables/mu_error.{csv,md}`` (summary as notes) and the figure.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`mu_error_table`.
    outdir : path
        Folder that receives ``tables/`` and ``figures/``.

    Returns
    -------
    list of pathlib.Path
        The files written: the CSV, the Markdown table and
        ``figures/endurable_failures.png``.

    Examples
    --------
    >>> import tempfile
    >>> table = mu_error_table(N=[128], r=[2], trials=50, seed=1, progress=False)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in write_mu_report(table, tmp)]
    ['mu_error.csv', 'mu_error.md', 'endurable_failures.png']
    """
    outdir = Path(outdir)
    paths = list(
        write_table(
            table,
            outdir / "tables",
            "mu_error",
            title="Endurable failures mu(N, r): theory versus simulation",
            notes=mu_summary_text(mu_error_summary(table)),
        )
    )
    paths.append(
        save_figure(plot_endurable_failures(table), outdir / "figures", "endurable_failures")
    )
    return paths


def write(options: ReportOptions) -> list[Path]:
    """Write ``tables/mu_error.{csv,md}`` and ``figures/endurable_failures.png``.

    The grid is :data:`DEFAULT_N` x :data:`DEFAULT_R` at 0.6 % relative
    standard error (:data:`DEFAULT_REL_SE`) (about a minute on two cores);
    ``quick`` runs :data:`QUICK_N` x :data:`QUICK_R` at 1 % (a few seconds).
    Cell ``i`` is seeded by ``child_seed(seed, i)``.

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    if options.quick:
        table = mu_error_table(
            N=QUICK_N,
            r=QUICK_R,
            rel_se_target=QUICK_REL_SE,
            seed=options.seed,
            executor=options.executor,
            progress=options.progress,
        )
    else:
        table = mu_error_table(
            seed=options.seed, executor=options.executor, progress=options.progress
        )
    return write_mu_report(table, options.outdir)
