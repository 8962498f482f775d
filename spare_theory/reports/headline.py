"""The published headline at 600,000 GPUs: best plans per group size, verdict, sensitivity.

* :func:`headline_table`: the SPARe paper's scenario, 600,000 H100 GPUs with
  the per-GPU MTBF derived from the Llama 3 paper (Dubey et al. 2024: 419
  unexpected interruptions in 54 days on 16,384 GPUs) and a 60 min restart;
  the best plan of each strategy per group size, SPARe also with micro-batch
  splitting.
* :func:`headline_verdict`: where the published reduction and availability
  hold on that table, in words.
* :func:`sensitivity_table`: the headline at 2048 GPUs per group against
  checkpoint and restart cost.
* :func:`headline_figure`: SPARe's reduction against the best Rep+CKPT plan.

:func:`spare_theory.reports.training.write` writes them (tables
``headline``, ``training_sensitivity``; figure ``headline``).  Naming as in
:mod:`spare_theory.reports.training`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .._validation import as_count
from ..hourly.scenario import Scenario
from ..planning.bill import CostModel
from ..training.optimize import optimal_plan
from ._io import save_figure
from .economics import BILL_COLUMNS, bill_fields, rank_columns

__all__ = [
    "HEADLINE_COLUMNS",
    "HEADLINE_GPUS_PER_GROUP",
    "HEADLINE_MICROBATCHES",
    "HEADLINE_NOTES",
    "headline_economics",
    "headline_figure",
    "headline_table",
    "headline_verdict",
    "sensitivity_table",
]

#: Group sizes (GPUs per group) of the headline table.
HEADLINE_GPUS_PER_GROUP = (8, 1024, 2048, 4096)
#: Pieces per shard of the headline's SPARe plans with micro-batch splitting
#: (``docs/theory.md`` section 7); 1024 stands for the limit of large ``m``.
HEADLINE_MICROBATCHES = (4, 16, 1024)


def _split_columns(splits: Iterable[int]) -> list[str]:
    """Headline columns of SPARe split into ``m`` micro-batches, for each ``m``."""
    names = ("r", "hours", "reduction_vs_spare", "reduction_vs_best_rep")
    return [f"{name}_spare_m{m}" for m in splits for name in names]


#: Columns of :func:`headline_table` (``sensitivity_table`` puts
#: ``checkpoint_minutes`` and ``restart_minutes`` in place of ``gpus_per_group``).
HEADLINE_COLUMNS = (
    "gpus_per_group",
    "N",
    "hours_ckpt",
    "r_rep",
    "hours_rep",
    "r_spare",
    "hours_spare",
    "overhead_spare",
    "availability_spare",
    "uptime_spare",
    "kept_compute_share_spare",
    "reduction_vs_best_rep_spare",
    *_split_columns(HEADLINE_MICROBATCHES),
)


def _best(
    sc: Scenario, microbatches: Iterable[int] = (), cost: CostModel | None = None
) -> dict[str, Any]:
    ckpt, rep, spare = (optimal_plan(sc, s) for s in ("ckpt", "rep", "spare"))
    est = spare.estimate
    plans = {"ckpt": ckpt, "rep": rep, "spare": spare}
    splits: dict[str, Any] = {}
    for m in microbatches:
        split = plans[f"spare_m{m}"] = optimal_plan(sc, "spare", microbatches=m)
        splits |= {
            f"r_spare_m{m}": split.r,
            f"hours_spare_m{m}": split.hours,
            f"reduction_vs_spare_spare_m{m}": 1 - split.hours / spare.hours,
            f"reduction_vs_best_rep_spare_m{m}": 1 - split.hours / rep.hours,
        }
    # Billed here, where the plans are (the economics table re-plans nothing).
    bills = (
        {}
        if cost is None
        else {
            f"{column}_{name}": value
            for name, plan in plans.items()
            for column, value in {"r": plan.r, **bill_fields(plan, cost)}.items()
        }
    )
    return {
        "N": sc.groups,
        "hours_ckpt": ckpt.hours,
        "r_rep": rep.r,
        "hours_rep": rep.hours,
        "r_spare": spare.r,
        "hours_spare": spare.hours,
        "overhead_spare": (est.useful_hours + est.redundancy_hours) / est.useful_hours,
        "availability_spare": est.availability,
        "uptime_spare": est.uptime,
        "kept_compute_share_spare": (est.useful_hours + est.redundancy_hours) / est.hours,
        "reduction_vs_best_rep_spare": 1 - spare.hours / rep.hours,
        **splits,
        **bills,
    }


def headline_table(
    *,
    gpus_per_group: Iterable[int] = HEADLINE_GPUS_PER_GROUP,
    checkpoint_minutes: float = 5.0,
    work_hours: float = 720.0,
    restart_minutes: float = 60.0,
    microbatches: Iterable[int] = HEADLINE_MICROBATCHES,
    cost: CostModel | None = None,
) -> pd.DataFrame:
    """The published comparison at 600,000 GPUs, one row per group size.

    Each row is
    :meth:`Scenario.published_600k <spare_theory.hourly.scenario.Scenario.published_600k>`
    at that group size and the best plan of each strategy, published SPARe and
    SPARe with micro-batch splitting (each failed group's shard cut into ``m``
    pieces that the surviving hosts of its type share).

    Parameters
    ----------
    gpus_per_group : sequence of int
        Group sizes (default :data:`HEADLINE_GPUS_PER_GROUP`, 8 to 4096).
    checkpoint_minutes, work_hours, restart_minutes : float
        The scenario's checkpoint cost (minutes), failure-free work (hours)
        and restart cost (minutes).
    microbatches : sequence of int
        Pieces per shard ``m >= 2`` of the split SPARe plans (default
        :data:`HEADLINE_MICROBATCHES`; empty: published SPARe only).
    cost : CostModel, optional
        Also bill every plan (:func:`~spare_theory.reports.economics.bill_fields`):
        columns ``r_ckpt`` and ``<bill column>_<plan>`` after the others, for
        the plans ``ckpt``, ``rep``, ``spare`` and ``spare_m<m>``
        (:func:`headline_economics` reads them).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`HEADLINE_COLUMNS`: ``gpus_per_group``, ``N``,
        ``hours_ckpt``, ``r_rep``, ``hours_rep``, ``r_spare``, ``hours_spare``
        (best plans, expected hours), ``overhead_spare`` (mean step cost
        ``S*`` over kept compute, in failure-free steps),
        ``availability_spare`` (useful training / wall time, the ETTR of
        Kokolis et al., HPCA 2025), ``uptime_spare`` (wall time outside global
        restarts / wall time, :attr:`TrainingEstimate.uptime
        <spare_theory.hourly.renewal.TrainingEstimate.uptime>`, the SPARe paper's
        "availability"), ``kept_compute_share_spare`` (time computing kept
        work, redundant layers included / wall time) and
        ``reduction_vs_best_rep_spare`` (``1 - hours_spare / hours_rep``);
        then per ``m`` in ``microbatches``: ``r_spare_m<m>``,
        ``hours_spare_m<m>`` (best split plan), ``reduction_vs_spare_spare_m<m>``
        (``1 - hours_spare_m<m> / hours_spare``) and
        ``reduction_vs_best_rep_spare_m<m>``.  All ratios are fractions.

    Examples
    --------
    >>> row = headline_table(gpus_per_group=[4096]).iloc[0]
    >>> int(row["N"]), int(row["r_rep"]), int(row["r_spare"])
    (146, 3, 9)
    >>> print(f"{row['hours_rep']:.0f} h -> {row['hours_spare']:.0f} h, "
    ...       f"reduction {row['reduction_vs_best_rep_spare']:.3f}")
    3935 h -> 1923 h, reduction 0.511
    >>> bool(row["hours_spare_m16"] < row["hours_spare_m4"] < row["hours_spare"])
    True
    """
    splits = [as_count(m, "microbatches", minimum=2) for m in microbatches]
    columns = [c for c in HEADLINE_COLUMNS if c not in _split_columns(HEADLINE_MICROBATCHES)]
    columns += _split_columns(splits)
    if cost is not None:
        names = ["ckpt", "rep", "spare", *(f"spare_m{m}" for m in splits)]
        columns += ["r_ckpt", *(f"{c}_{name}" for name in names for c in BILL_COLUMNS)]
    return pd.DataFrame(
        [
            {
                "gpus_per_group": g,
                **_best(
                    Scenario.published_600k(
                        gpus_per_group=g,
                        checkpoint_minutes=checkpoint_minutes,
                        work_hours=work_hours,
                        restart_minutes=restart_minutes,
                    ),
                    splits,
                    cost,
                ),
            }
            for g in gpus_per_group
        ],
        columns=columns,
    )


def headline_economics(head: pd.DataFrame) -> pd.DataFrame:
    """The headline's plans in hours, dollars and MWh: one row per group size and plan.

    ``head`` is a :func:`headline_table` with ``cost`` given; the rows are its
    plans (``ckpt``, ``rep``, ``spare``, ``spare_m<m>``) with ``r``, hours and
    the bill columns, ranked by hours, dollars and energy within each group
    size (:func:`~spare_theory.reports.economics.rank_columns`).

    Examples
    --------
    >>> from spare_theory import CostModel
    >>> head = headline_table(gpus_per_group=[4096], microbatches=[16], cost=CostModel())
    >>> econ = headline_economics(head)
    >>> econ[["plan", "rank_hours", "rank_energy"]].values.tolist()
    [['ckpt', 4, 4], ['rep', 3, 3], ['spare', 2, 2], ['spare_m16', 1, 1]]
    """
    names = [c.removeprefix("usd_") for c in head.columns if c.startswith("usd_")]
    rows = [
        {
            "scenario": f"600k GPUs, groups of {int(row['gpus_per_group'])}",
            "gpus_per_group": row["gpus_per_group"],
            "N": row["N"],
            "plan": name,
            "r": row[f"r_{name}"],
            "hours": row[f"hours_{name}"],
            **{c: row[f"{c}_{name}"] for c in BILL_COLUMNS},
        }
        for _, row in head.iterrows()
        for name in names
    ]
    return rank_columns(pd.DataFrame(rows), "scenario")


def sensitivity_table(*, gpus_per_group: int = 2048) -> pd.DataFrame:
    """The headline at one group size against checkpoint cost and restart cost.

    Checkpoint cost 1, 5 and 15 min times restart cost 15, 60 and 120 min.

    Parameters
    ----------
    gpus_per_group : int
        Group size of the 600,000-GPU scenario.

    Returns
    -------
    pandas.DataFrame
        Columns ``checkpoint_minutes``, ``restart_minutes``, then those of
        :func:`headline_table` from ``N`` to ``reduction_vs_best_rep_spare``
        (published SPARe only).

    Examples
    --------
    >>> table = sensitivity_table(gpus_per_group=4096)
    >>> table.loc[table["restart_minutes"] == 60, ["checkpoint_minutes", "r_spare"]]
       checkpoint_minutes  r_spare
    1                 1.0        ...
    4                 5.0        9
    7                15.0        ...
    """
    rows = []
    for ckpt in (1.0, 5.0, 15.0):
        for restart in (15.0, 60.0, 120.0):
            sc = Scenario.published_600k(
                gpus_per_group=gpus_per_group, checkpoint_minutes=ckpt, restart_minutes=restart
            )
            rows.append({"checkpoint_minutes": ckpt, "restart_minutes": restart, **_best(sc)})
    return pd.DataFrame(rows)


#: Notes under the headline table: what its columns mean (then :func:`headline_verdict`).
HEADLINE_NOTES = """\
Availability = useful training / wall time (ETTR-like). Uptime = wall time outside global
restarts / wall time (the SPARe paper's "availability"). Kept-compute share = time computing
kept work, redundant layers included / wall time. Overhead = mean step cost (S*) over kept
compute.
All ratios are fractions: reduction_vs_best_rep_spare = 1 - hours_spare / hours_rep.
*_spare_m<m>: SPARe with each failed group's shard cut into m micro-batches that the
surviving hosts of its type share (m = 1024 stands for the limit of large m);
reduction_vs_spare_spare_m<m> = 1 - hours_spare_m<m> / hours_spare.
"""


def headline_verdict(frame: pd.DataFrame) -> str:
    """One paragraph: where the published reduction and availability hold on ``frame``.

    The SPARe paper reports SPARe+CKPT 40-50 % faster than the best
    Rep+CKPT plan and an availability above 90 %, its availability being
    uptime (wall time outside recoveries); the paragraph says at which group
    sizes ``frame`` (a :func:`headline_table`) agrees, and how the useful
    share of wall time compares.

    Examples
    --------
    >>> print(headline_verdict(headline_table(gpus_per_group=[2048, 4096])))
    Published 40-50 % reduction vs best Rep+CKPT holds at gpus_per_group [2048];
    reductions range 47-51 %. Uptime > 90 % at [2048, 4096]; kept-compute share > 90 %
    at none. Useful share (availability, ETTR) at most 0.42: after the first failure
    S* >= 2, so it stays below ~1/2. CKPT-only needs 5.93e+08 h or more: it barely
    progresses. Splitting each shard into m micro-batches cuts SPARe's time by ...
    """
    reduction = frame["reduction_vs_best_rep_spare"]
    hold = frame[(reduction >= 0.40) & (reduction <= 0.50)]
    up = frame[frame["uptime_spare"] > 0.9]
    kept = frame[frame["kept_compute_share_spare"] > 0.9]
    return (
        f"Published 40-50 % reduction vs best Rep+CKPT holds at gpus_per_group "
        f"{list(hold['gpus_per_group']) or 'none'}; reductions range "
        f"{100 * reduction.min():.0f}-{100 * reduction.max():.0f} %. "
        f"Uptime > 90 % at {list(up['gpus_per_group']) or 'none'}; kept-compute share > 90 % "
        f"at {list(kept['gpus_per_group']) or 'none'}. Useful share (availability, ETTR) at "
        f"most {frame['availability_spare'].max():.2f}: after the first failure S* >= 2, so it "
        f"stays below ~1/2. CKPT-only needs {frame['hours_ckpt'].min():.3g} h or more: it "
        f"barely progresses." + _splits_verdict(frame)
    )


def _splits_verdict(frame: pd.DataFrame) -> str:
    """The reductions of the micro-batch splits in ``frame`` (empty when it has none)."""
    splits = [int(c.rsplit("_m", 1)[1]) for c in frame.columns if c.startswith("hours_spare_m")]
    if not splits:
        return ""

    def span(column: str) -> str:
        return f"{100 * frame[column].min():.0f}-{100 * frame[column].max():.0f} %"

    parts = [
        f"m = {m}: {span(f'reduction_vs_spare_spare_m{m}')} "
        f"({span(f'reduction_vs_best_rep_spare_m{m}')} vs best Rep+CKPT)"
        for m in splits
    ]
    return (
        " Splitting each shard into m micro-batches cuts SPARe's time by " + "; ".join(parts) + "."
    )


def headline_figure(frame: pd.DataFrame, outdir: str | os.PathLike[str]) -> Path:
    """Write ``outdir/headline.png``: SPARe's reduction against the best Rep+CKPT plan per ``N``.

    One line for published SPARe and one per micro-batch split in ``frame``
    (a :func:`headline_table`), over the published 40-50 % band, on a log
    axis of group counts.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`headline_table`.
    outdir : path-like
        Folder (created if needed).

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     headline_figure(headline_table(gpus_per_group=[4096], microbatches=[]), tmp).name
    'headline.png'
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator, PercentFormatter

    fig, ax = plt.subplots(figsize=(7.5, 4))
    ax.plot(
        frame["N"],
        frame["reduction_vs_best_rep_spare"],
        "o-",
        color="tab:blue",
        label="SPARe+CKPT (published)",
    )
    for column, colour in zip(
        (c for c in frame.columns if c.startswith("reduction_vs_best_rep_spare_m")),
        ("tab:cyan", "tab:purple", "tab:green"),
    ):
        m = column.rsplit("_m", 1)[1]
        ax.plot(frame["N"], frame[column], "s:", ms=4, color=colour, label=f"SPARe+CKPT, m = {m}")
    ax.axhspan(0.40, 0.50, color="0.88", label="published: 40-50 %")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_xscale("log")
    # One labelled tick per group count of the table, none in between.
    ax.set_xticks(frame["N"], [f"{n:,}" for n in frame["N"]])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set(
        xlabel="groups N (600k GPUs; 4,096 down to 8 GPUs per group)",
        ylabel="less time to train than best Rep+CKPT",
        title="SPARe vs the best Rep+CKPT plan at 600k GPUs (model)",
    )
    ax.grid(alpha=0.3)
    # Outside the axes: inside, the legend covered a line whatever its corner.
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, title="m: micro-batches")
    return save_figure(fig, outdir, "headline")
