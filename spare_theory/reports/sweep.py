"""Sweep tables and figures: the best plan of each strategy over GPU scale and H100 MTBF.

Writes

* ``tables/sweep.csv|md``: the long form of :func:`spare_theory.sweeps.sweep`
  (one row per point and strategy);
* ``tables/sweep_by_point.csv|md``: one row per point, the three strategies
  side by side with SPARe's reduction against the best Rep+CKPT plan and its
  availability;
* ``figures/sweep_reduction.png`` and ``figures/sweep_availability.png``:
  reduction (published SPARe solid, SPARe with 16 micro-batches per shard
  dotted) and availability against the GPU count, one line per MTBF, one
  panel per restart model; open markers are plans with ``r = 1`` (plain
  checkpointing, whatever the strategy).

Both grids add SPARe with micro-batch splitting (:data:`SPLITS`: each failed
group's shard cut into ``m`` pieces computed by its surviving hosts;
``docs/theory.md`` section 7) beside published SPARe and Rep.

The grid spans 10,000 to 1,000,000 GPUs (600,000 included, the published
scenario), the Llama-3-derived H100 per-GPU MTBF and 0.5x and 2x of it, and
both restart-cost models.  The sweep is deterministic: ``seed`` is accepted
for the common report signature and does not change anything.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..hourly.scenario import LLAMA3_H100_GPU_MTBF_HOURS
from ..sweeps import RESTART_MODELS, by_point, split_label, sweep
from ._io import save_figure, write_table
from .catalogue import ReportOptions

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["FULL_GRID", "QUICK_GRID", "SPLITS", "write"]

_MTBF = [f * LLAMA3_H100_GPU_MTBF_HOURS for f in (0.5, 1.0, 2.0)]

#: Pieces per shard of the SPARe plans with micro-batch splitting in both grids
#: (1024 stands for the limit of large ``m``).
SPLITS = (4, 16, 1024)
#: Keyword arguments of :func:`~spare_theory.sweeps.sweep` for the default run:
#: log-spaced GPU counts 10k..1M with the published 600k point added, the
#: Llama-3-derived H100 MTBF and 0.5x and 2x of it, two group sizes, both
#: restart-cost models, and SPARe with :data:`SPLITS` micro-batches per shard.
FULL_GRID: dict[str, Any] = dict(
    gpus=sorted({int(round(g, -3)) for g in np.geomspace(10_000, 1_000_000, 5)} | {600_000}),
    gpu_mtbf_hours=_MTBF,
    gpus_per_group=[512, 2048],
    restart_model=list(RESTART_MODELS),
    microbatches=SPLITS,
)
#: The ``quick=True`` grid (also the defaults of ``spare-theory sweep``).
QUICK_GRID: dict[str, Any] = dict(
    gpus=[10_000, 100_000, 600_000, 1_000_000],
    gpu_mtbf_hours=_MTBF,
    gpus_per_group=[2048],
    restart_model=list(RESTART_MODELS),
    microbatches=SPLITS,
)
# The panel drawn in the figures (one group size keeps them readable).
_FIGURE_GPUS_PER_GROUP = 2048


def _plot(frame: pd.DataFrame, column: str, ylabel: str, strategies: Collection[str]) -> Figure:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    from ..strategies.registry import strategy as lookup

    rows = frame[frame["gpus_per_group"] == _FIGURE_GPUS_PER_GROUP]
    models = list(dict.fromkeys(rows["restart_model"]))
    # One colour per MTBF, one line style per strategy: a SPARe line and its split
    # share a colour.
    palette = plt.get_cmap("tab10")
    colours = {mtbf: palette(i % 10) for i, mtbf in enumerate(sorted(set(rows["gpu_mtbf_hours"])))}
    fig, axes = plt.subplots(
        1, len(models), figsize=(5.5 * len(models), 4), sharey=True, squeeze=False
    )
    for ax, model in zip(axes[0], models):
        for (mtbf, strategy), line in rows[rows["restart_model"] == model].groupby(
            ["gpu_mtbf_hours", "strategy"], sort=True
        ):
            if strategy not in strategies:
                continue
            m = int(line["microbatches"].iloc[0])
            name = f"SPARe+CKPT, m = {m}" if m > 1 else lookup(strategy).label
            style = {"spare": "-", "rep": "--"}.get(strategy, ":")
            ax.plot(
                line["gpus"],
                line[column],
                style,
                marker="o",
                ms=3,
                color=colours[mtbf],
                label=f"{name}, GPU MTBF {mtbf:,.0f} h",
            )
            # r = 1 is plain checkpointing whatever the strategy: open markers, not SPARe's.
            plain = line[line["r"] == 1]
            ax.plot(
                plain["gpus"],
                plain[column],
                "o",
                ms=6,
                mfc="white",
                color=colours[mtbf],
                label="_nolegend_",
            )
        ax.set_xscale("log")
        ax.set_xlabel("GPUs")
        ax.set_title(f"{model} restart cost, {_FIGURE_GPUS_PER_GROUP} GPUs per group")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.grid(True, alpha=0.3)
    axes[0][-1].plot([], [], "o", ms=6, mfc="white", color="grey", label="r = 1 (= CKPT-only)")
    axes[0][0].set_ylabel(ylabel)
    # Beside the panels, long dashes visible: inside, it covered lines.
    axes[0][-1].legend(fontsize=7, handlelength=3.5, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def write(options: ReportOptions) -> list[Path]:
    """Run the sweep grid (:data:`FULL_GRID`, ``quick``: :data:`QUICK_GRID`); write its files.

    Deterministic (``seed`` is not used).

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    frame = sweep(
        **(QUICK_GRID if options.quick else FULL_GRID),
        executor=options.executor,
        progress=options.progress,
    )
    notes = (
        "Best plan of each strategy (optimal r and checkpoint interval) per point; "
        "restart cost constant at 60 min or linear in GPUs (60 min at 600,000 GPUs). "
        "reduction_vs_best_rep = 1 - hours / hours of the best Rep+CKPT plan (a fraction); "
        "availability = work_hours / hours. spare_m<m>: SPARe with each shard cut into m "
        "micro-batches that any surviving host of its type may compute (m = 1024 stands for "
        "the limit of large m). "
        "plain_checkpointing (spare_is_plain_checkpointing) marks plans with r = 1: one copy "
        "per shard, i.e. plain checkpointing whatever the strategy label; where the best "
        "SPARe plan has r = 1 its hours and availability are CKPT-only's, not SPARe's."
    )
    paths = [
        *write_table(
            frame,
            options.outdir / "tables",
            "sweep",
            title="Sweep: best plans over GPU scale and MTBF",
            notes=notes,
        ),
        *write_table(
            by_point(frame),
            options.outdir / "tables",
            "sweep_by_point",
            title="Sweep: strategies side by side per point",
            notes=notes,
        ),
        save_figure(
            _plot(
                frame,
                "reduction_vs_best_rep",
                "less time to train than best Rep+CKPT",
                {"spare", split_label(16)},
            ),
            options.outdir / "figures",
            "sweep_reduction",
        ),
        save_figure(
            _plot(
                frame,
                "availability",
                "availability of the best plan (useful share of wall time)",
                {"spare", "rep"},
            ),
            options.outdir / "figures",
            "sweep_availability",
        ),
    ]
    return paths
