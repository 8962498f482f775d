"""Placement ablation: Golomb (modular ruler) versus contiguous versus random placement.

:func:`placement_ablation_table` simulates the same ``N`` and ``r`` under
the three placements (endured failures, both overhead averages, largest
``S*``); :func:`placement_ablation_figure` draws it.
:func:`spare_theory.reports.overhead.write` writes both
(``tables/placement_ablation``, figure ``placement_ablation``).  Naming as
in :mod:`spare_theory.reports.overhead`.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_count_list, as_seed_sequence, child_seed
from ..placement.placements import contiguous_placement, cyclic_placement, random_placement
from ..stacking.overhead import simulate_overhead
from ._io import save_figure

__all__ = ["ABLATION_COLUMNS", "placement_ablation_figure", "placement_ablation_table"]

#: Columns of :func:`placement_ablation_table`, in order.
ABLATION_COLUMNS = (
    "N",
    "r",
    "placement",
    "trials",
    "mc_mean_T",
    "mc_mean_failure",
    "mc_mean_time",
    "max_S_star",
    "mean_max_S_star",
)


def _ablation_cell(task: tuple[int, int, str, int, np.random.SeedSequence]) -> dict[str, Any]:
    N, r, kind, trials, seed = task
    if kind == "golomb":
        hosts = cyclic_placement(N, r)
    elif kind == "contiguous":
        hosts = contiguous_placement(N, r)
    else:
        hosts = random_placement(N, r, seed=child_seed(seed, 1))
    s = simulate_overhead(hosts, trials, seed=child_seed(seed, 0))
    return {
        "N": N,
        "r": r,
        "placement": kind,
        "trials": trials,
        "mc_mean_T": float(s.T.mean()),
        "mc_mean_failure": float(s.per_failure.mean()),
        "mc_mean_time": float(s.time_weighted.mean()),
        "max_S_star": int(s.max_stacks.max()),
        "mean_max_S_star": float(s.max_stacks.mean()),
    }


def placement_ablation_table(
    *,
    N: int = 1024,
    r: Iterable[int] | npt.ArrayLike = (4, 8, 12),
    trials: int = 40,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """Golomb versus contiguous versus random placement at equal ``N, r``.

    Parameters
    ----------
    N : int
        Groups (keyword-only, like every argument).
    r : sequence of int
        Redundancies; one row per ``r`` and placement.
    trials : int
        Simulated failure sequences per row.
    executor : concurrent.futures.Executor, optional
        Where cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Seed of the table.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ABLATION_COLUMNS`: ``N``, ``r``, ``placement``
        (``golomb``, ``contiguous``, ``random``), ``trials``, ``mc_mean_T``
        (mean wipe-out count ``mu``, failures), ``mc_mean_failure`` and
        ``mc_mean_time`` (both overhead averages, times a failure-free step),
        ``max_S_star`` (the largest ``S*`` over all trials) and
        ``mean_max_S_star`` (the mean over trials of each trial's largest
        ``S*``).

    Examples
    --------
    >>> table = placement_ablation_table(N=64, r=[3], trials=10, progress=False)
    >>> table[["placement", "max_S_star", "mean_max_S_star"]]
        placement  max_S_star  mean_max_S_star
    0      golomb           2              2.0
    1  contiguous           3              2.2
    2      random           2              2.0
    """
    N = as_count(N, "N")
    r_list = as_count_list(r, "r")
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    cells = [(N, k, kind) for k in r_list for kind in ("golomb", "contiguous", "random")]
    tasks = [(*cell, trials, child_seed(seed, i)) for i, cell in enumerate(cells)]
    return pd.DataFrame(
        map_tasks(_ablation_cell, tasks, executor=executor, desc="ablation", progress=progress),
        columns=list(ABLATION_COLUMNS),
    )


def placement_ablation_figure(ablation: pd.DataFrame, outdir: str | os.PathLike[str]) -> Path:
    """Write ``outdir/placement_ablation.png``: the ablation's three measures per placement.

    Three bar panels, one bar per placement and ``r``: the endured failures
    ``mu = E[T]``, the time-weighted average overhead and the largest ``S*``.

    Parameters
    ----------
    ablation : pandas.DataFrame
        From :func:`placement_ablation_table`.
    outdir : path-like
        Folder (created if needed).

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> table = placement_ablation_table(N=64, r=[3], trials=4, progress=False)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     placement_ablation_figure(table, tmp).name
    'placement_ablation.png'
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), layout="constrained")
    kinds = ("golomb", "contiguous", "random")
    width = 0.25
    for ax, column, label, ylabel in zip(
        axes,
        ("mc_mean_T", "mc_mean_time", "max_S_star"),
        ("endured failures mu = E[T]", "average overhead S (time weighted)", "largest S*"),
        ("failures up to the wipe-out", "step cost (x a failure-free step)", "stack layers"),
    ):
        for j, kind in enumerate(kinds):
            rows = ablation[ablation["placement"] == kind]
            ax.bar(np.arange(len(rows)) + (j - 1) * width, rows[column], width, label=kind)
        ax.set_xticks(np.arange(len(rows)), [f"r={k}" for k in rows["r"]])
        ax.set_title(label, fontsize=10)
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Placement ablation at N={ablation['N'].iloc[0]}")
    return save_figure(fig, outdir, "placement_ablation")
