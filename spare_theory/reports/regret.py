"""``spare-theory table regret``: how good the toolkit's plans are when a log is replayed.

For each failure log (the shipped StepFun trace, and logs drawn from the
stated laws of :data:`DRAWN_LAWS`), each cluster size of :data:`GPUS` and
each strategy, the planner's scenario is ``log.scenario(gpus, ...)`` (the
cluster of :data:`~spare_theory.reports.trace.CLUSTER`, a spare pool for a
0.1 % Poisson shortage), and

- the **toolkit's plan** is :func:`spare_theory.optimal_plan` on it
  (``method`` says whether a closed form or the simulation search answered);
- the **verified plan** is that of ``optimal_plan(..., verify=log)``
  (:func:`~spare_theory.training.verify.verify_plan` on the plan): the plan and
  its neighbours replayed on the log, a better neighbour (by two paired
  standard errors) taken;
- the **grid** is every plan within two neighbour steps of the toolkit's
  plan (:func:`~spare_theory.training.verify.neighbours` applied twice:
  ``r +- 1, +- 2``, the interval ``x 0.7, x 1.4`` and their products, the
  quorum +- one and two steps), which holds the verified plan.

Every plan of the grid is replayed on the log (bootstrap mapping: copies of
the whole log at uniform shifts) with the same ``trials`` streams, apart
from the streams verification used.  Then

    regret = replayed hours of the plan / least replayed hours of the grid - 1,

its standard error that of the ratio of two paired means,
``sd(X - (1 + regret) Y) / (sqrt(n) mean(Y))``.  The least of the grid's
noisy means is biased low, so a regret is if anything overstated.  A grid
plan's runs stop at 3 times the plan's replayed mean
(:data:`~spare_theory.training.verify.NEIGHBOUR_HORIZON`): one that does
not finish there is not the best.  A plan over 20 times the work
(CKPT-only at 600k GPUs) is not replayed.

``tables/regret_pick`` says, for each log and size, which strategy the
toolkit's plans pick (least model hours; verified: least verified hours)
and which the replay picks (least replayed hours over every strategy's
grid), with the regret of the pick against the replay's best.
"""

from __future__ import annotations

import concurrent.futures
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._caching import cached
from .._parallel import map_tasks
from .._validation import as_seed_sequence, child_seed
from ..strategies.registry import strategy
from ..traces.draw import draw_failure_log
from ..traces.failure_log import infinitehbd_failure_log
from ..traces.pools import log_spares
from ..traces.replay import log_player
from ..training.optimize import optimal_plan
from ..training.resolve import reported_r, resolve
from ..training.simsearch import DEFAULT_MAX_TRIALS, DEFAULT_REL_SE, HORIZON_WORK, play_probed
from ..training.verify import (
    LOG_SOURCE,
    NEIGHBOUR_HORIZON,
    neighbours,
    played_key,
    verify_plan,
)
from ._io import write_table
from .catalogue import ReportOptions
from .trace import CLUSTER, GPUS, POOL_SHORTAGE, STRATEGIES

__all__ = [
    "DEFAULT_CELLS",
    "DRAWN_LAWS",
    "LOGS",
    "pick_table",
    "regret_cell",
    "regret_log",
    "regret_table",
    "write",
]

#: The logs: the shipped trace and those drawn from :data:`DRAWN_LAWS`.
LOGS = ("stepfun", "exponential", "weibull_lemons")
#: The drawn logs' laws, from the trace's own figures (its 400 nodes and
#: 8,375.5 h; node MTBF 5,623 h; repairs of median 20.4 h and mean 133.3 h, a
#: lognormal of those; its two-class fit, 26.6 % of nodes failing 6.8 times as
#: often): ``exponential``, memoryless nodes of the trace's mean rate;
#: ``weibull_lemons``, Weibull uptimes of shape 0.7 and the lemons, at the same
#: mean rate over the nodes.
DRAWN_LAWS: dict[str, dict[str, Any]] = {
    "exponential": {"shape": None, "lemon_fraction": 0.0, "lemon_rate_factor": 1.0},
    "weibull_lemons": {"shape": 0.7, "lemon_fraction": 0.266, "lemon_rate_factor": 6.8},
}
_NODES, _WINDOW_HOURS, _NODE_MTBF_HOURS = 400, 8375.52, 5623.12
_REPAIR_MEDIAN_HOURS, _REPAIR_MEAN_HOURS = 20.41, 133.3
#: The default report's logs and sizes (``--full``: every log at both sizes).
DEFAULT_CELLS = (
    ("stepfun", 100_000),
    ("stepfun", 600_000),
    ("exponential", 100_000),
    ("weibull_lemons", 100_000),
)
# Streams of the report's seed: the drawn logs, the replays, the verifications.
_LOG_STREAM, _REPLAY_STREAM, _VERIFY_STREAM = 0, 1, 2


@cached(maxsize=4)
def regret_log(name: str, seed: int = 0) -> Any:
    """The log ``name`` of :data:`LOGS` (a drawn one from ``seed``'s log stream).

    Examples
    --------
    >>> log = regret_log("exponential")
    >>> log.node_count, 450 < log.failures < 650
    (400, True)
    """
    if name == "stepfun":
        return infinitehbd_failure_log()
    if name not in DRAWN_LAWS:
        raise ValueError(f"log must be one of {list(LOGS)}, got {name!r}")
    law = DRAWN_LAWS[name]
    phi, factor = law["lemon_fraction"], law["lemon_rate_factor"]
    # Mean uptime of an ordinary node, so that the nodes' mean rate is the trace's.
    mean = _NODE_MTBF_HOURS * (1.0 + phi * (factor - 1.0))
    k = law["shape"]
    lifetime = (
        stats.expon(scale=mean)
        if k is None
        else stats.weibull_min(k, scale=mean / math.gamma(1.0 + 1.0 / k))
    )
    sigma = math.sqrt(2.0 * math.log(_REPAIR_MEAN_HOURS / _REPAIR_MEDIAN_HOURS))
    return draw_failure_log(
        nodes=_NODES,
        window_hours=_WINDOW_HOURS,
        lifetime=lifetime,
        repair=stats.lognorm(sigma, scale=_REPAIR_MEDIAN_HOURS),
        seed=child_seed(as_seed_sequence(seed), _LOG_STREAM, LOGS.index(name)),
        lemon_fraction=phi,
        lemon_rate_factor=factor,
    )


def _grid(resolved: Any, horizon_hours: float) -> list[Any]:
    """The plan and every plan within two neighbour steps of it, the plan first.

    Plans that play alike up to ``horizon_hours`` (:func:`played_key`: intervals
    beyond it) are one plan of the grid.
    """
    found: dict[tuple, Any] = {}
    for candidate in [resolved, *neighbours(resolved)]:
        for near in [candidate, *neighbours(candidate)]:
            found.setdefault(played_key(near, horizon_hours), near)
    return list(found.values())


def _replayed(play: Any, resolved: Any, trials: int, horizon: float) -> np.ndarray:
    """``trials`` replayed hours of the plan; all ``inf`` if one of its first runs is unfinished.

    Such a plan is not the grid's best whatever its other runs do, and its
    runs, cut at the horizon, are the longest to play.
    """
    hours = np.asarray(play_probed(play, resolved, trials, horizon).hours, float)
    return hours if hours.size == trials else np.full(trials, np.inf)


def _ratio(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``mean(x) / mean(y) - 1`` and its standard error over paired samples."""
    ratio = float(x.mean() / y.mean())
    se = float(np.std(x - ratio * y, ddof=1) / (math.sqrt(x.size) * y.mean()))
    return ratio - 1.0, se


def _plan_fields(prefix: str, resolved: Any) -> dict[str, Any]:
    variables = dict(resolved.plan)
    return {
        f"{prefix}r": reported_r(resolved),
        f"{prefix}min_groups": variables.get("min_groups"),
        f"{prefix}checkpoint_interval_minutes": resolved.checkpoint_interval_minutes,
    }


def regret_cell(task: tuple) -> dict[str, Any]:
    """One row of :func:`regret_table`: ``(log, gpus, strategy, trials, seed)``.

    The row's ``"_hours"`` holds the replayed hours of the plan, the verified
    plan and the grid's best (for :func:`pick_table`).
    """
    log_name, gpus, name, trials, seed = task
    root = as_seed_sequence(seed)
    log = regret_log(log_name, seed)
    spares = log_spares(log, gpus=gpus, probability=POOL_SHORTAGE)
    scenario = log.scenario(gpus=gpus, spare_nodes=spares, **CLUSTER)
    key = (LOGS.index(log_name), gpus)
    plan = optimal_plan(scenario, name, seed=child_seed(root, _VERIFY_STREAM, *key))
    resolved = resolve(scenario, plan)
    row: dict[str, Any] = {
        "log": log_name,
        "gpus": gpus,
        "groups": scenario.groups,
        "strategy": name,
        "method": plan.method,
        **_plan_fields("", resolved),
        "model_hours": plan.hours,
    }
    if not plan.hours <= HORIZON_WORK * scenario.work_hours:
        return {**row, "_hours": None}
    # What optimal_plan(verify=log) does, on the plan already found (not planned again).
    verified = verify_plan(
        plan,
        resolved.scenario,
        play=log_player(log, seed=child_seed(root, _VERIFY_STREAM, *key)),
        rel_se=DEFAULT_REL_SE,
        max_trials=DEFAULT_MAX_TRIALS,
        source=LOG_SOURCE,
    )
    # Every strategy of a log and size on the same streams: their plans are paired too.
    play = log_player(log, seed=child_seed(root, _REPLAY_STREAM, *key))
    mine = np.asarray(play(resolved, 0, trials, HORIZON_WORK * scenario.work_hours).hours, float)
    # A grid plan with a run this long is not the best (its runs then stop unfinished).
    horizon = NEIGHBOUR_HORIZON * float(mine.mean())
    grid = _grid(resolved, horizon)
    moved = resolve(scenario, verified)
    keys = [played_key(j, horizon) for j in grid]
    if played_key(moved, horizon) not in keys:
        grid.append(moved)
        keys.append(played_key(moved, horizon))
    hours = [mine, *(_replayed(play, j, trials, horizon) for j in grid[1:])]
    means = np.array([h.mean() if np.isfinite(h).all() else np.inf for h in hours])
    best = int(np.argmin(means))
    theirs = hours[keys.index(played_key(moved, horizon))]
    regret, regret_se = _ratio(mine, hours[best])
    verified_regret, verified_se = _ratio(theirs, hours[best])
    return {
        **row,
        "replay_hours": float(mine.mean()),
        "replay_se": float(mine.std(ddof=1) / math.sqrt(mine.size)),
        "model_error_pct": 100.0 * (plan.hours / float(mine.mean()) - 1.0),
        **_plan_fields("verified_", moved),
        "moved": bool(verified.moved_by_verification),
        "verified_hours": verified.verified_hours,
        **_plan_fields("best_", grid[best]),
        "best_hours": float(means[best]),
        "grid_plans": len(grid),
        "trials": trials,
        "regret_pct": 100.0 * regret,
        "regret_se_pct": 100.0 * regret_se,
        "verified_regret_pct": 100.0 * verified_regret,
        "verified_regret_se_pct": 100.0 * verified_se,
        "_hours": {"plan": mine, "verified": theirs, "best": hours[best]},
    }


def regret_table(
    cells: tuple[tuple[str, int], ...] | None = None,
    strategies: tuple[str, ...] = STRATEGIES,
    *,
    trials: int = 12,
    seed: int = 0,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The regret table and the pick table (module docstring).

    Parameters
    ----------
    cells : tuple of (str, int), optional
        The logs (:data:`LOGS`) and cluster sizes (GPUs), each strategy at
        each (default: every log at every size of :data:`GPUS`).
    strategies : tuple of str
        Registered strategies.
    trials : int
        Replays of every plan of a grid.
    seed : int
        Root seed: the drawn logs, the verifications and the replays.
    executor, progress
        Where the cells run; a progress bar.

    Returns
    -------
    regrets : pandas.DataFrame
        One row per log, size and strategy: the plan, its model and replayed
        hours, the verified plan, the grid's best, ``regret_pct`` and
        ``verified_regret_pct`` with their standard errors.
    picks : pandas.DataFrame
        One row per log and size: the strategies picked by the model, by
        verification and by the replay, and the regret of each pick.

    Examples
    --------
    A cell takes seconds (a slow doctest):

    >>> regrets, picks = regret_table((("stepfun", 100_000),), ("rep",), trials=4)
    >>> regrets["grid_plans"].tolist(), bool(regrets["regret_pct"].iloc[0] > -1e-9)
    ([13], True)
    """
    for name in strategies:
        strategy(name)  # an unknown name fails here, not in a worker
    if cells is None:
        cells = tuple((log, g) for log in LOGS for g in GPUS)
    tasks = [(log, g, s, trials, seed) for log, g in cells for s in strategies]
    rows = map_tasks(regret_cell, tasks, executor=executor, desc="regret", progress=progress)
    picks = pick_table(rows)
    table = pd.DataFrame([{k: v for k, v in row.items() if k != "_hours"} for row in rows])
    return table, picks


def pick_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Per log and size: the strategy each method picks and the replay's regret of it."""
    out = []
    for log in dict.fromkeys(row["log"] for row in rows):
        for gpus in dict.fromkeys(row["gpus"] for row in rows if row["log"] == log):
            done = [r for r in rows if (r["log"], r["gpus"]) == (log, gpus) and r["_hours"]]
            if not done:
                continue
            runs = {r["strategy"]: r["_hours"] for r in done}
            best = min(runs, key=lambda s: float(runs[s]["best"].mean()))
            record: dict[str, Any] = {"log": log, "gpus": gpus, "replay_pick": best}
            for method, key in (("model", "model_hours"), ("verified", "verified_hours")):
                chosen = min(done, key=lambda r: r[key])["strategy"]
                plan = runs[chosen]["plan" if method == "model" else "verified"]
                regret, se = _ratio(plan, runs[best]["best"])
                record |= {
                    f"{method}_pick": chosen,
                    f"{method}_pick_agrees": chosen == best,
                    f"{method}_pick_regret_pct": 100.0 * regret,
                    f"{method}_pick_regret_se_pct": 100.0 * se,
                }
            out.append(record)
    return pd.DataFrame(out)


def _verdict(table: pd.DataFrame) -> str:
    done = table.dropna(subset=["regret_pct"])
    if done.empty:
        return "verdict: no plan finishes on the replayed logs"
    within = (done["verified_regret_pct"] <= 1.0) | (
        done["verified_regret_pct"] <= 2.0 * done["verified_regret_se_pct"]
    )
    return (
        f"verdict: over {len(done)} plans the toolkit's plans lose at most "
        f"{done['regret_pct'].max():.2f} % to the best of their grids (verified plans "
        f"{done['verified_regret_pct'].max():.2f} %); {int(within.sum())} of {len(done)} "
        "verified plans are within 1 % or two standard errors"
    )


def write(options: ReportOptions) -> list[Path]:
    """Write ``tables/regret`` and ``tables/regret_pick`` (module docstring).

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    sizes: dict[str, Any] = {"cells": DEFAULT_CELLS}
    if options.quick:
        sizes = {"cells": (("stepfun", 100_000),), "strategies": ("ckpt", "rep", "spare")}
        sizes["trials"] = 4
    elif options.full:
        sizes = {}
    seed = options.seed if isinstance(options.seed, int) else _int_seed(options.seed)
    table, picks = regret_table(
        **sizes, seed=seed, executor=options.executor, progress=options.progress
    )
    verdict = _verdict(table)
    return [
        *write_table(
            table,
            options.outdir / "tables",
            "regret",
            title="Regret: the toolkit's plans against the best of a grid, on replayed logs",
            notes="log.scenario(gpus, gpus_per_group=2048, restart 60 min, checkpoints 5 min, "
            "720 h of work, spares for a 0.1 % Poisson shortage, swap 30 min) for the StepFun "
            "trace and logs drawn from stated laws (exponential; Weibull k = 0.7 with lemons; "
            "the trace's mean rate and repairs); the plan: optimal_plan (method: model or "
            "simulation); verified_*: optimal_plan(verify=log); the grid: every plan within "
            "two neighbour steps (r +- 1, 2; interval x 0.7, x 1.4 and products; quorum +- 1, "
            "2 steps), all replayed on the log with the same trials; regret = replayed hours / "
            "the grid's least - 1, standard error of the paired ratio. " + verdict,
        ),
        *write_table(
            picks,
            options.outdir / "tables",
            "regret_pick",
            title="Which strategy: the toolkit's pick against the replay's",
            notes="model_pick: least model hours of the five plans; verified_pick: least "
            "verified hours; replay_pick: least replayed hours over every strategy's grid; "
            "*_pick_regret_pct: the pick's replayed hours against the replay pick's best - 1.",
        ),
    ]


def _int_seed(seed: np.random.SeedSequence) -> int:
    """An integer standing for a SeedSequence (the drawn logs are cached by it)."""
    return int(seed.generate_state(1, np.uint64)[0])
