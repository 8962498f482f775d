"""``spare-theory table trace``: the shipped failure log, models against its own replay.

For the public StepFun trace (:func:`~spare_theory.traces.failure_log.infinitehbd_failure_log`,
400 servers, 348 days) on clusters of 100,000 and 600,000 GPUs (groups of
2048 GPUs, 8 per node: 256 nodes per group; 60 min restarts, 5 min
checkpoints, 720 h of work; a pool of spare nodes swapped in 30 min), writes

* ``tables/trace.csv|md``: for each strategy, the plan the full fitted model
  picks (:func:`spare_theory.optimal_plan` on ``log.scenario(...)``: Weibull
  node clocks, lemons and bursts as domains, the log's repairs through the
  pool), then at that plan the model with each fitted law, ``exponential``,
  ``weibull`` (node clocks) and ``full`` (Weibull + lemons + bursts), against
  the replay of the trace itself (:func:`spare_theory.replay_training`,
  ``mapping="bootstrap"``: copies of the whole log, bursts kept; and
  ``"nodes"``: single histories, bursts broken), with each model's error
  against the bootstrap replay and ``z = (full - replay) / SE``.  A plan
  whose model hours exceed 20 times the work is not replayed (it would not
  finish);
* ``tables/trace_spares.csv|md``: the spares that keep a failure's chance of
  finding the pool empty under 1 % and 0.1 %: the Poisson count of nodes in
  repair (Palm's theorem, :func:`~spare_theory.traces.pools.log_spares`)
  against the count the replayed log needs
  (:func:`~spare_theory.traces.pools.replayed_spares`), and the share of
  failures short at the Poisson count on the replay.

The verdict line (printed on stderr with ``progress``, and in the table's
notes) sums up the first table.  ``quick=True``: 100,000 GPUs,
CKPT-only, Rep and SPARe, 2 replays per cell.
"""

from __future__ import annotations

import concurrent.futures
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._caching import cached
from .._parallel import map_tasks
from .._validation import as_seed_sequence, child_seed
from ..traces.failure_log import infinitehbd_failure_log
from ..traces.pools import log_spares, replayed_shortage, replayed_spares
from ..traces.replay import replay_training
from ..training.estimate import time_to_train
from ..training.optimize import optimal_plan
from ._io import with_plan_r, write_table
from .catalogue import ReportOptions

__all__ = [
    "GPUS",
    "STRATEGIES",
    "spares_table",
    "trace_cell",
    "trace_scenario",
    "trace_table",
    "write",
]

#: Cluster sizes of the tables.
GPUS = (100_000, 600_000)
#: Strategies compared (the elastic ones through their own hour-level law).
STRATEGIES = ("ckpt", "rep", "spare", "elastic", "hot_spares")
#: The model variants: ``log.scenario`` keywords.
MODELS: dict[str, dict[str, Any]] = {
    "exponential": {"law": "exponential", "lemons": False, "bursts": False},
    "weibull": {"law": "weibull", "lemons": False, "bursts": False},
    "full": {},
}
#: The cluster around the log (``log.scenario`` keywords besides the size).
CLUSTER: dict[str, Any] = {
    "gpus_per_group": 2048,
    "restart_minutes": 60.0,
    "checkpoint_minutes": 5.0,
    "work_hours": 720.0,
    "swap_minutes": 30.0,
}
#: Shortage probability the pool is sized for (Poisson count, as the model prices it).
POOL_SHORTAGE = 0.001
# A plan slower than this many times the work is not replayed.
_REPLAY_CAP = 20.0


# A table cell and the alternatives and regret reports build each one several times.
@cached(maxsize=8, shared=True)
def trace_scenario(gpus: int, model: str = "full") -> Any:
    """The shipped trace's scenario at ``gpus`` GPUs (:data:`CLUSTER`), a pool for 0.1 %.

    ``model`` names the fitted law (:data:`MODELS`); the pool holds the
    Poisson count of spares for :data:`POOL_SHORTAGE`.

    Examples
    --------
    >>> sc = trace_scenario(100_000)
    >>> sc.groups, sc.spare_nodes, sc.failure_law
    (48, 352, 'weibull')
    """
    log = infinitehbd_failure_log()
    spares = log_spares(log, gpus=gpus, probability=POOL_SHORTAGE)
    return log.scenario(gpus=gpus, spare_nodes=spares, **CLUSTER, **MODELS[model])


def trace_cell(task: tuple) -> dict[str, Any]:
    """One row of :func:`trace_table`: ``(gpus, strategy, trials, seed)``."""
    gpus, name, trials, seed = task
    seed = as_seed_sequence(seed)
    log = infinitehbd_failure_log()
    full = trace_scenario(gpus)
    spares = full.spare_nodes
    plan = optimal_plan(full, name)
    variables = dict(plan.variables)
    tau = plan.checkpoint_interval_minutes  # an hour-level plan always has one
    row: dict[str, Any] = {
        "gpus": gpus,
        "groups": full.groups,
        "strategy": name,
        "r": plan.r,
        "min_groups": variables.get("min_groups"),
        "checkpoint_interval_minutes": tau,
        "spare_nodes": spares,
    }
    for model in MODELS:
        sc = trace_scenario(gpus, model)
        row[f"{model}_hours"] = time_to_train(
            sc, name, r=plan.r, checkpoint_interval_minutes=tau, **variables
        ).hours
    replays = ("bootstrap", "nodes")
    if not row["full_hours"] <= _REPLAY_CAP * full.work_hours:
        for mapping in replays:
            row[f"replay_{mapping}_hours"] = row[f"replay_{mapping}_se"] = math.nan
        row["replay_restarts"] = math.nan
    else:
        for k, mapping in enumerate(replays):
            runs = replay_training(
                log,
                full,
                name,
                r=plan.r,
                checkpoint_interval_minutes=tau,
                trials=trials,
                seed=child_seed(seed, k),
                mapping=mapping,
                **variables,
            )
            row[f"replay_{mapping}_hours"] = runs.mean_hours
            row[f"replay_{mapping}_se"] = runs.standard_error_hours
            if mapping == "bootstrap":
                row["replay_restarts"] = float(runs.restarts.mean())
    replay, se = row["replay_bootstrap_hours"], row["replay_bootstrap_se"]
    for model in MODELS:
        row[f"{model}_error_pct"] = 100.0 * (row[f"{model}_hours"] - replay) / replay
    row["z_full"] = (row["full_hours"] - replay) / se if se > 0 else math.nan
    return row


def trace_table(
    gpus: tuple[int, ...] = GPUS,
    strategies: tuple[str, ...] = STRATEGIES,
    *,
    trials: int = 4,
    seed: int | np.random.SeedSequence = 0,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Models against the replayed trace (module docstring), one row per size and strategy.

    Cell ``i`` replays with ``child_seed(seed, i)``.

    Examples
    --------
    A cell takes seconds (a slow doctest):

    >>> trace_table((100_000,), ("rep",), trials=2)["r"].tolist()
    [2]
    """
    root = as_seed_sequence(seed)
    cells = [(g, s) for g in gpus for s in strategies]
    tasks = [(g, s, trials, child_seed(root, i)) for i, (g, s) in enumerate(cells)]
    rows = map_tasks(trace_cell, tasks, executor=executor, desc="trace", progress=progress)
    return with_plan_r(pd.DataFrame(rows))


def spares_table(
    gpus: tuple[int, ...] = GPUS,
    probabilities: tuple[float, ...] = (0.01, 0.001),
    *,
    trials: int = 8,
    seed: int | np.random.SeedSequence = 0,
) -> pd.DataFrame:
    """Spares for a shortage probability: Poisson (Palm) against the replayed trace.

    Examples
    --------
    >>> spares_table((100_000,), (0.01,), trials=4)[["poisson_spares", "replay_spares"]].values
    array([[338, 379]])
    """
    log = infinitehbd_failure_log()
    root = as_seed_sequence(seed)
    rows = []
    for g in gpus:
        nodes = g // 8
        for p in probabilities:
            poisson = log_spares(log, gpus=g, probability=p)
            needed = replayed_spares(log, gpus=g, probability=p, trials=trials, seed=root)
            share, se, _ = replayed_shortage(
                log, gpus=g, spare_nodes=poisson, trials=trials, seed=root
            )
            rows.append(
                {
                    "gpus": g,
                    "nodes": nodes,
                    "mean_in_repair": nodes
                    * log.failure_rate
                    * log.fit_repair("exponential").mean_hours,
                    "shortage_target": p,
                    "poisson_spares": poisson,
                    "replay_spares": needed,
                    "replay_shortage_at_poisson": share,
                    "replay_shortage_at_poisson_se": se,
                }
            )
    return with_plan_r(pd.DataFrame(rows))


def _verdict(table: pd.DataFrame) -> str:
    done = table.dropna(subset=["replay_bootstrap_hours"])
    if done.empty:
        return "verdict: no plan finishes on the replayed trace"
    worst = {m: float(done[f"{m}_error_pct"].abs().max()) for m in MODELS}
    best = min(worst, key=worst.__getitem__)
    broken = 100.0 * (done["replay_nodes_hours"] / done["replay_bootstrap_hours"] - 1.0)
    return (
        "verdict: against the replayed trace the models miss by at most "
        + ", ".join(f"{m} {worst[m]:.1f} %" for m in MODELS)
        + f" over {len(done)} plans (best: {best}); breaking the bursts (single-node "
        + f"replays) changes the hours by {broken.min():+.1f} to {broken.max():+.1f} %"
    )


def write(options: ReportOptions) -> list[Path]:
    """Write the trace table and the spares table (module docstring).

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    if options.quick:
        table = trace_table(
            (100_000,),
            ("ckpt", "rep", "spare"),
            trials=2,
            seed=options.seed,
            executor=options.executor,
            progress=options.progress,
        )
        spares = spares_table((100_000,), trials=4, seed=options.seed)
    else:
        table = trace_table(seed=options.seed, executor=options.executor, progress=options.progress)
        spares = spares_table(seed=options.seed)
    verdict = _verdict(table)
    if options.progress:  # on stderr, so that --json output stays JSON
        print(verdict, file=sys.stderr)
    return [
        *write_table(
            table,
            options.outdir / "tables",
            "trace",
            title="The StepFun trace: fitted models against the replayed log",
            notes="log.scenario(gpus, gpus_per_group=2048, restart 60 min, checkpoints 5 min, "
            "720 h of work, spares for a 0.1 % Poisson shortage, swap 30 min); the plan is the "
            "full model's best (r, interval, quorum); *_hours: the renewal model with each "
            "fitted law at that plan (exponential; weibull: node clocks of the fitted shape; "
            "full: Weibull + lemons + bursts as domains); replay_*: the event simulation "
            "driven by the trace's own faults and repairs (bootstrap: copies of the whole log; "
            "nodes: single histories, bursts broken); *_error_pct against the bootstrap "
            "replay. " + verdict,
        ),
        *write_table(
            spares,
            options.outdir / "tables",
            "trace_spares",
            title="Spare nodes for a shortage probability: Poisson against the replayed trace",
            notes="poisson_spares: the fewest spares with P(N >= S) under the target, N the "
            "nodes in repair, Poisson of mean rate x mean repair (Palm's theorem); "
            "replay_spares: the fewest with the replayed log's share of failures finding "
            "S or more nodes in repair under the target (bursts and long repairs make the "
            "count over-dispersed); replay_shortage_at_poisson: that share at the Poisson "
            "count.",
        ),
    ]
