"""Sweeps of the best plan of every strategy over GPU count, MTBF and group size.

A sweep evaluates, at every point of the grid
``gpus x gpu_mtbf_hours x gpus_per_group x restart_model``, the best plan of
each strategy (:func:`spare_theory.optimize.optimal_plan` for ``"ckpt"``,
``"rep"`` and ``"spare"``), the availability of that plan
(``Plan.estimate``, from :func:`spare_theory.training.time_to_train`) and every strategy's reduction in
time to train against the best Rep+CKPT plan.  The result is a long-form
:class:`pandas.DataFrame`: one row per point and strategy.

Restart cost
------------
A global restart re-initialises the collective communicators of all ``G``
GPUs.  Two models of its cost ``R`` (minutes) are offered, both anchored at the
published scenario, 60 min at 600,000 GPUs (MODEL.md section 1):

* ``"constant"``: ``R(G) = R_0``;
* ``"linear"``: ``R(G) = R_0 * G / G_0``, the cost growing with the number of
  ranks to connect (``R_0 = 60`` min, ``G_0 = 600,000``).

Distribution
------------
The points are independent cells run with
:func:`spare_theory._parallel.map_tasks`, so ``executor`` may be any
:class:`concurrent.futures.Executor` (a process pool, or
``dask.distributed.Client(...).get_executor()`` to spread a sweep over a Dask
cluster).  Every quantity is a closed form or a deterministic optimisation,
so the table is identical wherever the cells run.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._parallel import map_tasks
from ._validation import as_choice, as_count, as_count_array, as_real, as_real_array
from .optimize import optimal_plan
from .scenario import Scenario
from .training import STRATEGIES

__all__ = ["RESTART_MODELS", "STRATEGIES", "SweepPoint", "by_point", "restart_minutes", "sweep"]

RESTART_MODELS = ("constant", "linear")

# The published scenario that anchors both restart-cost models (MODEL.md section 1).
ANCHOR_RESTART_MINUTES = 60.0
ANCHOR_GPUS = 600_000


def restart_minutes(
    gpus, model="linear", *, anchor_minutes=ANCHOR_RESTART_MINUTES, anchor_gpus=ANCHOR_GPUS
):
    """Global restart cost ``R`` in minutes for ``gpus`` GPUs under ``model``.

    Parameters
    ----------
    gpus : array_like of int
        Number of GPUs ``G`` (>= 1); broadcasts.
    model : {"constant", "linear"}
        ``"constant"``: ``R = anchor_minutes``; ``"linear"``:
        ``R = anchor_minutes * G / anchor_gpus``.
    anchor_minutes : float
        Restart cost at ``anchor_gpus`` GPUs, minutes (> 0; default 60).
    anchor_gpus : int
        GPU count of the anchor (default 600,000).

    Returns
    -------
    float or ndarray
        ``R`` in minutes, a float for scalar ``gpus``.
    """
    g = as_count_array(gpus, "gpus")
    as_choice(model, "model", RESTART_MODELS)
    r0 = as_real(anchor_minutes, "anchor_minutes", minimum=0.0, strict_minimum=True)
    g0 = as_count(anchor_gpus, "anchor_gpus")
    out = np.full(g.shape, r0) if model == "constant" else r0 * g / g0
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: a scenario and the label of its restart model."""

    scenario: Scenario
    restart_model: str


def _reduction(hours: float, rep_hours: float) -> float:
    """``1 - hours / rep_hours``; 0 when neither run completes (both infinite)."""
    if np.isinf(hours) and np.isinf(rep_hours):
        return 0.0
    return 1.0 - hours / rep_hours


def _evaluate(point: SweepPoint) -> list[dict]:
    """Rows (one per strategy) for one grid point."""
    sc = point.scenario
    plans = {s: optimal_plan(sc, s) for s in STRATEGIES}
    best_rep_hours = plans["rep"].hours
    rows = []
    for strategy, plan in plans.items():
        rows.append(
            {
                "gpus": sc.gpus,
                "gpu_mtbf_hours": sc.gpu_mtbf_hours,
                "gpus_per_group": sc.gpus_per_group,
                "groups": sc.groups,
                "restart_model": point.restart_model,
                "restart_minutes": sc.restart_minutes,
                "cluster_mtbf_minutes": sc.cluster_mtbf_minutes,
                "strategy": strategy,
                "r": plan.r,
                "checkpoint_interval_minutes": plan.checkpoint_interval_minutes,
                "hours": plan.hours,
                "availability": plan.estimate.availability,
                "reduction_vs_best_rep": _reduction(plan.hours, best_rep_hours),
            }
        )
    return rows


def _evaluate_cell(points: tuple[SweepPoint, ...]) -> list[list[dict]]:
    """Rows of the points of one cell, a picklable map_tasks task.

    The points of a cell share ``N``: the time-to-train layer caches its
    cycle model per ``(strategy, N, r)`` (the costly part, seconds at
    ``N ~ 10^5``), so each model is built once per cell wherever it runs.
    """
    return [_evaluate(point) for point in points]


def _as_sequence(values, name, kind):
    arr = np.atleast_1d(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence, got {values!r}")
    if kind == "count":
        return [int(v) for v in as_count_array(arr, name)]
    return [float(v) for v in as_real_array(arr, name, minimum=0.0, strict_minimum=True)]


def sweep(
    gpus,
    gpu_mtbf_hours,
    gpus_per_group,
    *,
    restart_model="linear",
    checkpoint_minutes=5.0,
    work_hours=720.0,
    restart_anchor_minutes=ANCHOR_RESTART_MINUTES,
    restart_anchor_gpus=ANCHOR_GPUS,
    executor=None,
    progress=True,
) -> pd.DataFrame:
    """Best plan of every strategy over a grid of cluster scenarios.

    Parameters
    ----------
    gpus : sequence of int
        GPU counts ``G`` (each >= every ``gpus_per_group``), e.g. 10,000 to
        1,000,000.
    gpu_mtbf_hours : sequence of float
        Per-GPU mean time between failures ``m_gpu`` in hours (> 0); the
        Llama-3-derived H100 figure is about 50,700 h.
    gpus_per_group : sequence of int
        GPUs per data-parallel group ``M``; ``N = G // M`` groups.
    restart_model : {"constant", "linear"} or sequence of them
        Restart-cost model(s), see :func:`restart_minutes`; a sequence adds
        the models as a fourth grid axis.
    checkpoint_minutes : float
        Cost ``delta`` of one checkpoint, minutes (> 0).
    work_hours : float
        Failure-free wall time of the run on all GPUs, hours (> 0).
    restart_anchor_minutes, restart_anchor_gpus : float, int
        Anchor of the restart models (60 min at 600,000 GPUs).
    executor : concurrent.futures.Executor, optional
        Where the grid points run (``None``: serially in this process).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Long form, one row per point and strategy, in grid order
        (``restart_model``, ``gpus_per_group``, ``gpus``, ``gpu_mtbf_hours``,
        then strategy ``ckpt``, ``rep``, ``spare``), with columns ``gpus``,
        ``gpu_mtbf_hours``, ``gpus_per_group``, ``groups``, ``restart_model``,
        ``restart_minutes``, ``cluster_mtbf_minutes`` (``60 m_gpu / (N M)``),
        ``strategy``, ``r``, ``checkpoint_interval_minutes``, ``hours``
        (expected time to train of the best plan), ``availability`` (share of
        wall time spent on useful training) and ``reduction_vs_best_rep``
        (``1 - hours / hours_rep``: SPARe's saving against the best Rep+CKPT
        plan on the ``spare`` rows, zero on the ``rep`` rows).
    """
    g_values = _as_sequence(gpus, "gpus", "count")
    m_values = _as_sequence(gpu_mtbf_hours, "gpu_mtbf_hours", "real")
    gpg_values = _as_sequence(gpus_per_group, "gpus_per_group", "count")
    models = [restart_model] if isinstance(restart_model, str) else list(restart_model)
    if not models:
        raise ValueError("restart_model must name at least one model")
    for model in models:
        as_choice(model, "restart_model", RESTART_MODELS)
    # Scenario checks the rest (gpus_per_group <= gpus, costs, work) naming the field.
    points = [
        SweepPoint(
            Scenario(
                gpus=g,
                gpus_per_group=gpg,
                gpu_mtbf_hours=m,
                restart_minutes=restart_minutes(
                    g, model, anchor_minutes=restart_anchor_minutes, anchor_gpus=restart_anchor_gpus
                ),
                checkpoint_minutes=checkpoint_minutes,
                work_hours=work_hours,
            ),
            model,
        )
        for model, gpg, g, m in itertools.product(models, gpg_values, g_values, m_values)
    ]
    # One cell per N, largest first so that a pool starts the slowest cells early.
    by_groups: dict[int, list[int]] = {}
    for index, point in enumerate(points):
        by_groups.setdefault(point.scenario.groups, []).append(index)
    cells = [by_groups[N] for N in sorted(by_groups, reverse=True)]
    results = map_tasks(
        _evaluate_cell,
        [tuple(points[i] for i in cell) for cell in cells],
        executor=executor,
        desc="sweep (cells of equal N)",
        progress=progress,
    )
    rows: list[list[dict]] = [[] for _ in points]
    for cell, cell_rows in zip(cells, results):
        for index, point_rows in zip(cell, cell_rows):
            rows[index] = point_rows
    return pd.DataFrame([row for point_rows in rows for row in point_rows])


_POINT_COLUMNS = [
    "restart_model",
    "gpus_per_group",
    "gpus",
    "gpu_mtbf_hours",
    "groups",
    "restart_minutes",
    "cluster_mtbf_minutes",
]


def by_point(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per grid point from the long form of :func:`sweep`.

    Columns: the point's labels, then ``hours_<strategy>`` and ``r_<strategy>``
    for each strategy, ``spare_reduction_vs_best_rep`` and
    ``spare_availability``; rows in the sweep's grid order.
    """
    per_strategy = {s: frame[frame["strategy"] == s].set_index(_POINT_COLUMNS) for s in STRATEGIES}
    wide = pd.concat(
        [
            per_strategy[s][["r", "hours"]].rename(columns=lambda c, s=s: f"{c}_{s}")
            for s in STRATEGIES
        ],
        axis=1,
    )
    wide["spare_reduction_vs_best_rep"] = per_strategy["spare"]["reduction_vs_best_rep"]
    wide["spare_availability"] = per_strategy["spare"]["availability"]
    return wide.reset_index()
