"""Endurable failures: theory versus simulation (``tables/mu_error``, ``figures/endurable_failures``).

For every cell ``(N, r)`` of the grid, the Monte Carlo mean of the wipe-out
count ``T`` on the cyclic modular-ruler placement (enough trials for a
standard error of at most ``rel_se_target`` of the mean) against the
published Gamma form and the sharp form of :mod:`spare_theory.wipeout`.
Cells without a modular ruler are kept, with ``status`` saying why.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_real, as_seed_sequence, child_seed
from ..placement import cyclic_placement, modular_ruler
from ..wipeout import endurable_failures, endurable_failures_gamma
from ..wipeout_sim import simulate_wipeout
from ._io import save_figure, write_table

__all__ = [
    "DEFAULT_N",
    "DEFAULT_R",
    "PUBLISHED_GAMMA_MAE_PCT",
    "mu_error_summary",
    "mu_error_table",
    "mu_summary_text",
    "plot_endurable_failures",
    "reproduce",
    "write_mu_report",
]

DEFAULT_N = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 75000)
DEFAULT_R = (2, 3, 4, 6, 8, 12, 16, 20)
#: Mean absolute error of the Gamma form against simulation, as published (%).
PUBLISHED_GAMMA_MAE_PCT = 1.13
# Acceptance band of the sharp form per cell: k standard errors + a relative floor.
BAND_SE, BAND_REL = 3.0, 1e-3
# Pilot run that sizes each cell (its samples are kept).
_PILOT_TRIALS = 256
QUICK_N, QUICK_R, QUICK_REL_SE = (128, 1024, 8192), (2, 4, 8), 0.01


def _cell(task) -> dict:
    """One table row: simulate ``(N, r)`` until SE <= target * mean (or ``trials`` fixed)."""
    N, r, trials, target, seed = task
    row = {"N": N, "r": r}
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
        "mc_mean": mean,
        "mc_se": se,
        "mc_rel_se_pct": 100 * se / mean,
        "gamma": gamma,
        "gamma_err_pct": 100 * (gamma / mean - 1),
        "sharp": sharp,
        "sharp_err_pct": 100 * (sharp / mean - 1),
        "sharp_z": (sharp - mean) / se,
        "sharp_in_band": bool(abs(sharp - mean) <= BAND_SE * se + BAND_REL * mean),
    }


def mu_error_table(
    N_values=DEFAULT_N,
    r_values=DEFAULT_R,
    *,
    trials=None,
    rel_se_target=0.0025,
    seed=0,
    executor=None,
    progress=True,
) -> pd.DataFrame:
    """Theory versus simulation of ``mu(N, r)`` over a grid, one row per cell.

    Parameters
    ----------
    N_values, r_values : sequence of int
        Grid of groups ``N`` and redundancies ``r`` (all pairs).
    trials : int, optional
        Fixed trials per cell; by default each cell runs a seeded pilot of
        256 trials and tops up until the standard error is at most
        ``rel_se_target`` of the mean.
    rel_se_target : float
        Target relative standard error, ``0 < rel_se_target < 1``.
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
        Columns ``N, r, status, marks, trials, mc_mean, mc_se, mc_rel_se_pct,
        gamma, gamma_err_pct, sharp, sharp_err_pct, sharp_z, sharp_in_band``
        (errors in % of the simulated mean; ``sharp_in_band``: within
        3 SE + 0.1 %).  Cells without a modular ruler have ``status``
        ``"no ruler: ..."`` and NaN elsewhere.
    """
    N_values = [as_count(n, "N_values") for n in np.atleast_1d(N_values)]
    r_values = [as_count(r, "r_values") for r in np.atleast_1d(r_values)]
    if trials is not None:
        trials = as_count(trials, "trials", minimum=2)
    target = as_real(rel_se_target, "rel_se_target", minimum=0, maximum=1, strict_minimum=True)
    seed = as_seed_sequence(seed)
    cells = [(N, r) for r in r_values for N in N_values]
    tasks = [(N, r, trials, target, child_seed(seed, i)) for i, (N, r) in enumerate(cells)]
    rows = map_tasks(_cell, tasks, executor=executor, desc="mu table", progress=progress)
    return pd.DataFrame(rows, columns=list(_cell_columns()))


def _cell_columns():
    return (
        "N",
        "r",
        "status",
        "marks",
        "trials",
        "mc_mean",
        "mc_se",
        "mc_rel_se_pct",
        "gamma",
        "gamma_err_pct",
        "sharp",
        "sharp_err_pct",
        "sharp_z",
        "sharp_in_band",
    )


def mu_error_summary(table: pd.DataFrame) -> dict:
    """Mean absolute errors (%) of both forms over the simulated cells, and the band count."""
    ok = table[table["status"] == "ok"]
    return {
        "cells": len(table),
        "simulated_cells": len(ok),
        "gamma_mae_pct": float(ok["gamma_err_pct"].abs().mean()),
        "published_gamma_mae_pct": PUBLISHED_GAMMA_MAE_PCT,
        "sharp_mae_pct": float(ok["sharp_err_pct"].abs().mean()),
        "sharp_max_abs_err_pct": float(ok["sharp_err_pct"].abs().max()),
        "sharp_cells_in_band": int(ok["sharp_in_band"].sum()),
        "max_mc_rel_se_pct": float(ok["mc_rel_se_pct"].max()),
    }


def mu_summary_text(summary: dict) -> str:
    return (
        f"Mean absolute error over {summary['simulated_cells']} simulated cells "
        f"({summary['cells'] - summary['simulated_cells']} without a modular ruler): "
        f"Gamma form {summary['gamma_mae_pct']:.3f} % (published: "
        f"{summary['published_gamma_mae_pct']:.2f} %), sharp form {summary['sharp_mae_pct']:.3f} % "
        f"(largest {summary['sharp_max_abs_err_pct']:.3f} %); sharp form within "
        f"{BAND_SE:g} SE + {100 * BAND_REL:g} % in {summary['sharp_cells_in_band']} of "
        f"{summary['simulated_cells']} cells; largest MC relative SE "
        f"{summary['max_mc_rel_se_pct']:.3f} %."
    )


def plot_endurable_failures(table: pd.DataFrame, r_values=None):
    """``mu`` against ``N`` (log-log) with simulation points, and each form's deviation below.

    Top: sharp form (solid), Gamma form (dashed), Monte Carlo means with
    1.96 SE bars.  Bottom: Gamma form and Monte Carlo relative to the sharp
    form, in %.
    """
    import matplotlib.pyplot as plt

    ok = table[table["status"] == "ok"]
    r_values = sorted(ok["r"].unique()) if r_values is None else list(r_values)
    fig, (ax, dev) = plt.subplots(
        2, 1, figsize=(7, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]}
    )
    for i, r in enumerate(r_values):
        cells = ok[ok["r"] == r].sort_values("N")
        if cells.empty:
            continue
        color = f"C{i % 10}"
        grid = np.unique(np.geomspace(cells["N"].min(), cells["N"].max(), 60).round().astype(int))
        sharp, gamma = endurable_failures(grid, r), endurable_failures_gamma(grid, r)
        ax.plot(grid, sharp, color=color, lw=1.2, label=f"r = {r}")
        ax.plot(grid, gamma, color=color, lw=0.8, ls="--")
        ax.errorbar(
            cells["N"],
            cells["mc_mean"],
            yerr=1.96 * cells["mc_se"],
            fmt="o",
            ms=3.5,
            color=color,
            capsize=2,
        )
        dev.plot(grid, 100 * (gamma / sharp - 1), color=color, lw=0.8, ls="--")
        dev.errorbar(
            cells["N"],
            100 * (cells["mc_mean"] / cells["sharp"] - 1),
            yerr=196 * cells["mc_se"] / cells["sharp"],
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


def write_mu_report(table: pd.DataFrame, outdir) -> list[Path]:
    """Write ``table`` to ``outdir/tables/mu_error.{csv,md}`` (summary as notes) and the figure."""
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


def reproduce(outdir, *, quick=False, executor=None, seed=0, progress=True) -> list[Path]:
    """Write ``tables/mu_error.{csv,md}`` and ``figures/endurable_failures.png`` under ``outdir``.

    ``quick=True`` runs a 3 x 3 grid at 1 % relative SE (a few seconds).
    """
    grid = dict(N_values=QUICK_N, r_values=QUICK_R, rel_se_target=QUICK_REL_SE) if quick else {}
    table = mu_error_table(**grid, seed=seed, executor=executor, progress=progress)
    return write_mu_report(table, outdir)
