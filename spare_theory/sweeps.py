"""Sweeps of the best plan of every strategy over GPU count, MTBF and group size.

A sweep evaluates, at every point of the grid
``gpus x gpu_mtbf_hours x gpus_per_group x restart_model``, the best plan of
each strategy (:func:`spare_theory.training.optimize.optimal_plan` for ``"ckpt"``,
``"rep"`` and ``"spare"``), the availability of that plan (``Plan.estimate``,
from :func:`spare_theory.training.estimate.time_to_train`) and every strategy's
reduction in time to train against the best Rep+CKPT plan.  The result is a
long-form :class:`pandas.DataFrame`: one row per point and strategy.

Restart cost
------------
A global restart re-initialises the collective communicators of all ``G``
GPUs.  Two models of its cost ``R`` (minutes) are offered, both anchored at the
SPARe paper's published scenario, a 60 min restart at 600,000 GPUs:

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

import concurrent.futures
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ._parallel import map_tasks
from ._validation import as_choice, as_count, as_count_array, as_real, as_real_array
from .hourly.scenario import Scenario
from .strategies.registry import PUBLISHED_STRATEGIES
from .strategies.registry import strategy as lookup
from .training.optimize import optimal_plan

__all__ = [
    "ANCHOR_GPUS",
    "ANCHOR_RESTART_MINUTES",
    "RESTART_MODELS",
    "SweepPoint",
    "by_point",
    "scaled_restart_minutes",
    "split_label",
    "sweep",
]

#: Restart-cost models understood by :func:`scaled_restart_minutes` and :func:`sweep`.
RESTART_MODELS = ("constant", "linear")

#: The SPARe paper's published scenario anchors both restart-cost models:
#: a 60 min global restart at 600,000 GPUs.
ANCHOR_RESTART_MINUTES = 60.0
ANCHOR_GPUS = 600_000


def scaled_restart_minutes(
    gpus: npt.ArrayLike,
    *,
    model: str = "linear",
    anchor_minutes: float = ANCHOR_RESTART_MINUTES,
    anchor_gpus: int = ANCHOR_GPUS,
) -> float | np.ndarray:
    """Global restart cost ``R`` in minutes for ``gpus`` GPUs under a restart-cost ``model``.

    ``"constant"``: ``R(G) = R_0``; ``"linear"``: ``R(G) = R_0 G / G_0``, with
    ``R_0 = anchor_minutes`` and ``G_0 = anchor_gpus`` (60 min at 600,000
    GPUs, the SPARe paper's published scenario).

    Parameters
    ----------
    gpus : array_like of int
        Number of GPUs ``G`` (>= 1); broadcasts.
    model : {"constant", "linear"}
        The restart-cost model.
    anchor_minutes : float
        Restart cost ``R_0`` at ``anchor_gpus`` GPUs, minutes (> 0; default 60).
    anchor_gpus : int
        GPU count ``G_0`` of the anchor (default 600,000).

    Returns
    -------
    float or numpy.ndarray
        ``R`` in minutes, a float for scalar ``gpus``.

    Raises
    ------
    ValueError
        Naming the argument: ``gpus`` or ``anchor_gpus`` not positive
        integers, ``anchor_minutes <= 0`` or an unknown ``model``.

    Examples
    --------
    >>> scaled_restart_minutes(300_000)
    30.0
    >>> scaled_restart_minutes([10_000, 1_200_000], model="constant")
    array([60., 60.])
    >>> scaled_restart_minutes(1000, anchor_minutes=10, anchor_gpus=2000)
    5.0
    """
    g = as_count_array(gpus, "gpus")
    as_choice(model, "model", RESTART_MODELS)
    r0 = as_real(anchor_minutes, "anchor_minutes", minimum=0.0, strict_minimum=True)
    g0 = as_count(anchor_gpus, "anchor_gpus")
    out = np.full(g.shape, r0) if model == "constant" else r0 * g / g0
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: a scenario and the label of its restart-cost model.

    Attributes
    ----------
    scenario : Scenario
        The cluster, its failure rate and costs at this point.
    restart_model : str
        ``"constant"`` or ``"linear"``: how ``scenario.restart_minutes`` was set.
    microbatches : tuple of int
        Pieces per shard ``m`` of the extra SPARe plans with micro-batch
        splitting (strategy label ``spare_m<m>``); empty: none.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=16_384, gpus_per_group=2048, gpu_mtbf_hours=50_000.0,
    ...               restart_minutes=60.0, checkpoint_minutes=5.0, work_hours=720.0)
    >>> SweepPoint(scenario=sc, restart_model="constant").scenario.groups
    8
    """

    scenario: Scenario
    restart_model: str
    microbatches: tuple[int, ...] = ()


def split_label(microbatches: int) -> str:
    """Strategy label of SPARe with ``microbatches`` pieces per shard in sweep tables.

    Parameters
    ----------
    microbatches : int
        Pieces per shard ``m >= 2`` (``m = 1`` is published SPARe, label ``"spare"``).

    Returns
    -------
    str
        ``"spare_m<m>"``; columns of :func:`by_point` use it as their suffix.

    Examples
    --------
    >>> split_label(16)
    'spare_m16'
    """
    return f"spare_m{as_count(microbatches, 'microbatches', minimum=2)}"


def _reduction(hours: float, rep_hours: float) -> float:
    """``1 - hours / rep_hours``; 0 when neither run completes (both infinite)."""
    if np.isinf(hours) and np.isinf(rep_hours):
        return 0.0
    return 1.0 - hours / rep_hours


def _evaluate(point: SweepPoint) -> list[dict[str, Any]]:
    """Rows (one per strategy, then one per micro-batch split of SPARe) for one grid point."""
    sc = point.scenario
    plans = {(s, 1): optimal_plan(sc, s) for s in PUBLISHED_STRATEGIES}
    plans |= {
        (split_label(m), m): optimal_plan(sc, "spare", microbatches=m) for m in point.microbatches
    }
    best_rep_hours = plans["rep", 1].hours
    rows = []
    for (strategy, m), plan in plans.items():
        rows.append(
            {
                "gpus": sc.gpus,
                "gpu_mtbf_hours": sc.gpu_mtbf_hours,
                "gpus_per_group": sc.gpus_per_group,
                "N": sc.groups,
                "restart_model": point.restart_model,
                "restart_minutes": sc.restart_minutes,
                "cluster_mtbf_minutes": sc.cluster_mtbf_minutes,
                "strategy": strategy,
                "microbatches": m,
                "r": plan.r,
                "checkpoint_interval_minutes": plan.checkpoint_interval_minutes,
                "hours": plan.hours,
                "availability": plan.estimate.availability,
                "reduction_vs_best_rep": _reduction(plan.hours, best_rep_hours),
                "plain_checkpointing": lookup(plan.strategy).check_r(sc.groups, plan.r) == 1,
            }
        )
    return rows


def _evaluate_cell(points: tuple[SweepPoint, ...]) -> list[list[dict[str, Any]]]:
    """Rows of the points of one cell, a picklable map_tasks task.

    The points of a cell share ``N``: the time-to-train layer caches its
    cycle model per ``(strategy, N, r)`` (the costly part, seconds at
    ``N ~ 10^5``), so each model is built once per cell wherever it runs.
    """
    return [_evaluate(point) for point in points]


def _count_list(values: npt.ArrayLike, name: str) -> list[int]:
    arr = np.atleast_1d(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence, got {values!r}")
    return [int(v) for v in as_count_array(arr, name)]


def _positive_list(values: npt.ArrayLike, name: str) -> list[float]:
    arr = np.atleast_1d(values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence, got {values!r}")
    return [float(v) for v in as_real_array(arr, name, minimum=0.0, strict_minimum=True)]


def sweep(
    *,
    gpus: Sequence[int] | npt.ArrayLike,
    gpu_mtbf_hours: Sequence[float] | npt.ArrayLike,
    gpus_per_group: Sequence[int] | npt.ArrayLike,
    restart_model: str | Iterable[str] = "linear",
    checkpoint_minutes: float = 5.0,
    work_hours: float = 720.0,
    restart_anchor_minutes: float = ANCHOR_RESTART_MINUTES,
    restart_anchor_gpus: int = ANCHOR_GPUS,
    microbatches: Sequence[int] = (),
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Best plan of every strategy over a grid of cluster scenarios.

    Every argument is keyword-only: the grid axes are easy to swap by position
    (``Scenario`` orders them ``gpus, gpus_per_group, gpu_mtbf_hours``).  At each
    point, with ``N = gpus // gpus_per_group`` groups and restart cost
    ``R = scaled_restart_minutes(gpus, model=restart_model)``, the best plan
    of each strategy is :func:`~spare_theory.training.optimize.optimal_plan` and its
    reduction against Rep+CKPT is ``1 - hours / hours_rep`` (a fraction).

    Parameters
    ----------
    gpus : sequence of int
        GPU counts ``G`` (each >= every ``gpus_per_group``), e.g. 10,000 to
        1,000,000.
    gpu_mtbf_hours : sequence of float
        Per-GPU mean time between failures ``m_gpu`` in hours (> 0); the
        H100 figure derived from the Llama 3 paper (Dubey et al. 2024: 419
        unexpected interruptions in 54 days on 16,384 GPUs) is
        ``16384 * 54 * 24 / 419 = 50,677`` h.
    gpus_per_group : sequence of int
        GPUs per data-parallel group ``M``; ``N = G // M`` groups.
    restart_model : {"constant", "linear"} or sequence of them
        Restart-cost model(s), see :func:`scaled_restart_minutes`; a sequence
        adds the models as a fourth grid axis.
    checkpoint_minutes : float
        Cost ``delta`` of one checkpoint, minutes (>= 0).
    work_hours : float
        Failure-free wall time of the run on all GPUs, hours (> 0).
    restart_anchor_minutes : float
        Restart cost at ``restart_anchor_gpus`` GPUs, minutes (default 60).
    restart_anchor_gpus : int
        GPU count of the restart-cost anchor (default 600,000).
    microbatches : sequence of int
        Also plan SPARe with micro-batch splitting, each shard cut into ``m``
        pieces (``optimal_plan(..., microbatches=m)``), for each ``m >= 2``
        given: rows with strategy :func:`split_label` ``(m)``.  Default none.
    executor : concurrent.futures.Executor, optional
        Where the grid points run (``None``: serially in this process).
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Long form, one row per point and strategy, in grid order
        (``restart_model``, ``gpus_per_group``, ``gpus``, ``gpu_mtbf_hours``,
        then strategy ``ckpt``, ``rep``, ``spare``, then ``spare_m<m>`` for
        each ``microbatches``), with columns

        - ``gpus``, ``gpu_mtbf_hours``, ``gpus_per_group``: the point;
        - ``N``: data-parallel groups, ``gpus // gpus_per_group``;
        - ``restart_model``, ``restart_minutes``: the restart-cost model and
          its cost ``R`` at this point, minutes;
        - ``cluster_mtbf_minutes``: ``60 m_gpu / (N M)``, minutes;
        - ``strategy``, ``microbatches`` (pieces per shard; 1 but on the
          ``spare_m<m>`` rows), ``r``, ``checkpoint_interval_minutes``: the
          best plan;
        - ``hours``: its expected time to train, hours;
        - ``availability``: ``work_hours / hours``, the fraction of wall time
          spent on useful training;
        - ``reduction_vs_best_rep``: ``1 - hours / hours_rep``, the fraction of
          time saved against the best Rep+CKPT plan (0 on the ``rep`` rows,
          negative where a strategy is slower);
        - ``plain_checkpointing``: ``r == 1``, the plan keeps one copy of
          each shard, so whatever its strategy label it *is* CKPT-only (where
          the failure rate is low, the best SPARe and Rep plans are).

    Raises
    ------
    ValueError
        Naming the argument: an empty grid axis, counts that are not positive
        integers, ``gpus_per_group > gpus``, non-positive or NaN MTBFs, an
        unknown restart model, negative costs, ``work_hours <= 0``.
    TypeError
        When the grid is passed by position.

    Examples
    --------
    >>> frame = sweep(gpus=[16_384, 131_072], gpu_mtbf_hours=[50_000.0],
    ...               gpus_per_group=[2048], restart_model="constant", progress=False)
    >>> frame[["gpus", "N", "strategy", "r", "hours", "reduction_vs_best_rep"]].round(3)
         gpus   N strategy     r      hours  reduction_vs_best_rep
    0   16384   8     ckpt  <NA>   1274.226                  0.000
    1   16384   8      rep     1   1274.226                  0.000
    2   16384   8    spare     1   1274.226                  0.000
    3  131072  64     ckpt  <NA>  20811.267                 -7.803
    4  131072  64      rep     2   2364.009                  0.000
    5  131072  64    spare     6   1734.299                  0.266
    """
    g_values = _count_list(gpus, "gpus")
    m_values = _positive_list(gpu_mtbf_hours, "gpu_mtbf_hours")
    gpg_values = _count_list(gpus_per_group, "gpus_per_group")
    models = [restart_model] if isinstance(restart_model, str) else list(restart_model)
    if not models:
        raise ValueError("restart_model must name at least one model")
    for model in models:
        as_choice(model, "restart_model", RESTART_MODELS)
    splits = tuple(dict.fromkeys(as_count(m, "microbatches", minimum=2) for m in microbatches))
    # Scenario checks the rest (gpus_per_group <= gpus, costs, work) naming the field.
    points = [
        SweepPoint(
            scenario=Scenario(
                gpus=g,
                gpus_per_group=gpg,
                gpu_mtbf_hours=m,
                restart_minutes=float(
                    scaled_restart_minutes(
                        g,
                        model=model,
                        anchor_minutes=restart_anchor_minutes,
                        anchor_gpus=restart_anchor_gpus,
                    )
                ),
                checkpoint_minutes=checkpoint_minutes,
                work_hours=work_hours,
            ),
            restart_model=model,
            microbatches=splits,
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
    rows: list[list[dict[str, Any]]] = [[] for _ in points]
    for cell, cell_rows in zip(cells, results):
        for index, point_rows in zip(cell, cell_rows):
            rows[index] = point_rows
    # r is None for a strategy without one: a nullable integer column, as the API says.
    return pd.DataFrame([row for point_rows in rows for row in point_rows]).astype({"r": "Int64"})


_POINT_COLUMNS = [
    "restart_model",
    "gpus_per_group",
    "gpus",
    "gpu_mtbf_hours",
    "N",
    "restart_minutes",
    "cluster_mtbf_minutes",
]


def by_point(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per grid point from the long form of :func:`sweep`.

    Parameters
    ----------
    frame : pandas.DataFrame
        The long form returned by :func:`sweep`.

    Returns
    -------
    pandas.DataFrame
        Rows in the sweep's grid order.  Columns: the point's labels
        (``restart_model``, ``gpus_per_group``, ``gpus``, ``gpu_mtbf_hours``,
        ``N``, ``restart_minutes``, ``cluster_mtbf_minutes``), then
        ``hours_<strategy>`` for ``ckpt``, ``rep``, ``spare`` and each
        ``spare_m<m>`` present (the best plan's hours) and ``r_<strategy>``
        (its redundancy) for each of them but CKPT-only, which has none,
        ``reduction_vs_best_rep_<s>`` (``1 - hours_<s> / hours_rep``, a
        fraction) and ``availability_<s>`` (a fraction) for ``spare`` and
        each split, and
        ``spare_is_plain_checkpointing`` (``r_spare == 1``: the best "SPARe"
        plan has no redundancy and is plain checkpointing; its hours and
        availability are CKPT-only's, not SPARe's).

    Examples
    --------
    >>> frame = sweep(gpus=[131_072], gpu_mtbf_hours=[50_000.0], gpus_per_group=[2048],
    ...               restart_model="constant", progress=False)
    >>> row = by_point(frame).iloc[0]
    >>> int(row["N"]), int(row["r_rep"]), int(row["r_spare"])
    (64, 2, 6)
    >>> print(f"{row['reduction_vs_best_rep_spare']:.3f} {row['availability_spare']:.3f}")
    0.266 0.415
    >>> bool(row["spare_is_plain_checkpointing"])
    False
    """
    names = list(dict.fromkeys(frame["strategy"]))  # ckpt, rep, spare, then the splits
    per_strategy = {s: frame[frame["strategy"] == s].set_index(_POINT_COLUMNS) for s in names}
    wide = pd.concat(
        [
            # A strategy without an r (CKPT-only) has no r column.
            per_strategy[s][
                ["r", "hours"] if per_strategy[s]["r"].notna().any() else ["hours"]
            ].rename(columns={"r": f"r_{s}", "hours": f"hours_{s}"})
            for s in names
        ],
        axis=1,
    )
    for s in names[names.index("spare") :]:
        wide[f"reduction_vs_best_rep_{s}"] = per_strategy[s]["reduction_vs_best_rep"]
        wide[f"availability_{s}"] = per_strategy[s]["availability"]
    wide["spare_is_plain_checkpointing"] = per_strategy["spare"]["r"] == 1
    return wide.reset_index()
