"""Failure domains and lemon groups: the placement ablation and the effect on ``r*``.

Writes ``tables/domain_ablation`` (ruler, contiguous, random and domain-aware
placements, for domain sizes and shares of failures from domain events:
endured failures, wipe-out time, mean and worst ``S*``, time to train),
``tables/domain_closed_form`` (the closed-form wipe-out time of the
domain-aware placement against the simulation), ``tables/lemons`` (lemon
groups: the best ``r`` and the hours of the model, the simulation with and
without excluding a group after ``k`` failures) and the figure
``domain_ablation``.

The cluster (default): ``N = 1024`` groups of 512 GPUs (524,288 GPUs), the
Llama-3-derived H100 MTBF, 60 min restarts, 5 min checkpoints, 720 h of
work, ``r = 10`` (the rule's ``floor(log2 N + 0.833)``) and the checkpoint
interval of today's optimal plan at that ``r`` (independent failures), kept
for every cell: the table shows what correlated failures cost the plan one
would choose today.  A share ``s`` of every group's failure rate is moved to
its domain (:func:`~spare_theory.hourly.domains.scenario_with_domain_share`),
so the marginal failure rate of a group never changes.  Naming: ``*_se``
standard errors, times ``u`` in units of ``1/lambda`` (a group's mean time
between failures), fractions not percent.
"""

from __future__ import annotations

import concurrent.futures
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_seed_sequence, child_seed
from ..hourly.domains import scenario_with_domain_share
from ..hourly.domains_sim import simulate_domain_training
from ..hourly.scenario import Scenario
from ..placement.domains import PLACEMENTS, failure_domains, placement_hosts
from ..stacking.domains_sim import cycle_trajectory, failure_times, simulate_domain_wipeout
from ..training.estimate import time_to_train
from ..training.optimize import optimal_plan
from ..wipeout.domains import domain_wipeout_law
from ._io import save_figure, write_table
from .catalogue import ReportOptions

__all__ = [
    "ABLATION_COLUMNS",
    "base_scenario",
    "closed_form_table",
    "domain_ablation_table",
    "lemon_table",
    "write",
]

ABLATION_COLUMNS = (
    "placement",
    "domain_size",
    "domain_share",
    "N",
    "r",
    "endured_failures",
    "endured_failures_se",
    "wipeout_u",
    "wipeout_u_se",
    "stacks_time_weighted",
    "stacks_worst_mean",
    "stacks_worst_max",
    "hours_sim",
    "hours_sim_se",
    "hours_model",
    "hours_change",
)


def base_scenario(gpus_per_group: int = 512, groups: int = 1024) -> Scenario:
    """The ablation's cluster: ``groups`` groups of ``gpus_per_group`` GPUs, 720 h of work.

    Examples
    --------
    >>> sc = base_scenario()
    >>> sc.groups, sc.restart_minutes, sc.work_hours
    (1024, 60.0, 720.0)
    """
    return Scenario(
        gpus=groups * gpus_per_group,
        gpus_per_group=gpus_per_group,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
    )


def _ablation_cell(task: tuple[Any, ...]) -> dict[str, Any]:
    base, r, tau, name, m, s, trials, runs, wipe_trials, model, seed = task
    N = base.groups
    row: dict[str, Any] = {"placement": name, "domain_size": m, "domain_share": s, "N": N, "r": r}
    try:
        hosts = placement_hosts(name, N, r, m, seed=0)
    except ValueError:
        return row  # no domain-aware placement (r > N / m): the row stays empty
    wipe = simulate_domain_wipeout(
        hosts, wipe_trials, seed=child_seed(seed, 0), domains=m, domain_failure_share=s
    )
    n = wipe.time.size
    row.update(
        endured_failures=wipe.failures.mean(),
        endured_failures_se=wipe.failures.std(ddof=1) / math.sqrt(n),
        wipeout_u=wipe.time.mean(),
        wipeout_u_se=wipe.time.std(ddof=1) / math.sqrt(n),
    )
    # Cycle trajectories with the exact controller: S* statistics, and the pool
    # of the training runs (times in hours: the total rate of a group is lambda).
    dom = failure_domains(N, m)
    lam = base.group_failure_rate_per_hour
    pool, weighted, worst = [], [], []
    for i in range(trials):
        rng = np.random.default_rng(child_seed(seed, 1, i))
        X = failure_times(rng, 1, dom, s, np.ones(N))[0]
        times, stacks, _ = cycle_trajectory(hosts, X)
        weighted.append(float(np.diff(times) @ stacks) / times[-1])
        worst.append(stacks[-1])
        pool.append((times / lam, stacks))
    sc = scenario_with_domain_share(base, m, s)
    runs_out = simulate_domain_training(
        sc, r, tau, runs, seed=child_seed(seed, 2), placement=hosts, trajectories=pool
    )
    row.update(
        stacks_time_weighted=float(np.mean(weighted)),
        stacks_worst_mean=float(np.mean(worst)),
        stacks_worst_max=float(np.max(worst)),
        hours_sim=runs_out.mean_hours,
        hours_sim_se=runs_out.standard_error_hours,
    )
    if model and name == "domain_aware" and N % m == 0:
        row["hours_model"] = time_to_train(sc, "spare", r=r, checkpoint_interval_minutes=tau).hours
    return row


def domain_ablation_table(
    base: Scenario | None = None,
    *,
    r: int = 10,
    domain_sizes: tuple[int, ...] = (1, 4, 16, 64),
    shares: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5),
    placements: tuple[str, ...] = PLACEMENTS,
    trials: int = 24,
    runs: int = 12,
    wipeout_trials: int = 2000,
    model: bool = True,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """The placement ablation under domain failures (one row per placement, size, share).

    For every cell: ``wipeout_trials`` vectorised cycles give the endured
    failures and the wipe-out time ``u``; ``trials`` cycles through the exact
    controller give the time-weighted ``S*`` (over the cycle's clock), the
    ``S*`` of the last state before the wipe-out (mean and largest), and
    serve as the trajectory pool of ``runs`` simulated training runs at
    today's optimal interval for ``r``.  ``hours_model``: the renewal model
    (domain-aware rows).  ``hours_change``: ``hours_sim`` over the ruler's
    ``hours_sim`` without domain events, minus 1.  Share 0 is computed once
    per placement (the domain size does not matter there), listed at
    ``domain_size = 1``.

    Parameters
    ----------
    base : Scenario, optional
        The cluster without domains (default :func:`base_scenario`).
    r : int
        Redundancy.
    domain_sizes, shares, placements : tuple
        The grid.
    trials, runs, wipeout_trials : int
        Sample sizes (see above).
    model : bool
        Add the model's hours on the domain-aware rows.
    executor : concurrent.futures.Executor, optional
        Where the cells run.
    seed : int or numpy.random.SeedSequence
        Cell ``c`` uses ``child_seed(seed, c)``.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ABLATION_COLUMNS`.

    Examples
    --------
    >>> table = domain_ablation_table(base_scenario(2048, 256), r=6, domain_sizes=(16,),
    ...     shares=(0.0, 0.3), placements=("ruler", "domain_aware"), trials=4, runs=2,
    ...     wipeout_trials=100, model=False, progress=False)
    >>> table[["placement", "domain_size", "domain_share"]].values.tolist()
    [['ruler', 1, 0.0], ['domain_aware', 1, 0.0], ['ruler', 16, 0.3], ['domain_aware', 16, 0.3]]
    """
    base = base_scenario() if base is None else base
    seed = as_seed_sequence(seed)
    tau = time_to_train(base, "spare", r=r).checkpoint_interval_minutes
    cells = [(name, 1, 0.0) for name in placements if 0.0 in shares]
    cells += [(name, m, s) for s in shares if s > 0 for m in domain_sizes for name in placements]
    tasks = [
        (base, r, tau, name, m, s, trials, runs, wipeout_trials, model, child_seed(seed, c))
        for c, (name, m, s) in enumerate(cells)
    ]
    rows = map_tasks(_ablation_cell, tasks, executor=executor, desc="domains", progress=progress)
    frame = pd.DataFrame(rows).reindex(columns=list(ABLATION_COLUMNS))
    reference = frame[(frame["placement"] == "ruler") & (frame["domain_share"] == 0)]["hours_sim"]
    if len(reference):
        frame["hours_change"] = frame["hours_sim"] / float(reference.iloc[0]) - 1
    return frame


def closed_form_table(
    cells: tuple[tuple[int, int, int, float], ...] = (
        (256, 6, 4, 0.3),
        (256, 6, 16, 0.1),
        (256, 6, 16, 0.5),
        (1024, 10, 4, 0.5),
        (1024, 10, 16, 0.3),
        (1024, 10, 64, 0.1),
        (1024, 10, 64, 0.3),
        (1024, 10, 64, 0.5),
    ),
    *,
    trials: int = 4000,
    seed: int | np.random.SeedSequence = 0,
) -> pd.DataFrame:
    """Closed-form mean wipe-out time of the domain-aware placement against the simulation.

    Parameters
    ----------
    cells : tuple of (N, r, domain_size, share)
        The grid.
    trials : int
        Simulated cycles per cell.
    seed : int or numpy.random.SeedSequence
        Cell ``c`` uses ``child_seed(seed, c)``.

    Returns
    -------
    pandas.DataFrame
        ``N, r, domain_size, domain_share, route, wipeout_u_closed_form,
        wipeout_u_sim, wipeout_u_sim_se, rel_error``.

    Examples
    --------
    >>> closed_form_table(((64, 4, 8, 0.3),), trials=200)[["route", "N"]].values.tolist()
    [['enumerate', 64]]
    """
    seed = as_seed_sequence(seed)
    rows = []
    for c, (N, r, m, s) in enumerate(cells):
        law = domain_wipeout_law(N, r, m, s)
        sim = simulate_domain_wipeout(
            law.hosts, trials, seed=child_seed(seed, c), domains=m, domain_failure_share=s
        )
        mean = float(sim.time.mean())
        rows.append(
            {
                "N": N,
                "r": r,
                "domain_size": m,
                "domain_share": s,
                "route": law.route,
                "wipeout_u_closed_form": law.mean(),
                "wipeout_u_sim": mean,
                "wipeout_u_sim_se": float(sim.time.std(ddof=1) / math.sqrt(trials)),
                "rel_error": law.mean() / mean - 1,
            }
        )
    return pd.DataFrame(rows)


def lemon_table(
    base: Scenario | None = None,
    *,
    fractions: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1),
    rate_factor: float = 10.0,
    r_values: tuple[int, ...] = (8, 9, 10, 11, 12, 13, 14),
    exclude_after: int = 16,
    runs: int = 6,
    seed: int | np.random.SeedSequence = 0,
) -> pd.DataFrame:
    """Lemon groups: the model's best ``r`` and hours; the simulation with and without exclusion.

    The simulation runs at the model's best ``r`` and interval; exclusion
    replaces a group slot after ``exclude_after`` failures.

    Parameters
    ----------
    base : Scenario, optional
        The cluster (default :func:`base_scenario`).
    fractions : tuple of float
        Lemon shares.
    rate_factor : float
        A lemon's failure rate over an ordinary group's.
    r_values : tuple of int
        Redundancies the model searches.
    exclude_after : int
        Failures after which a slot is replaced.
    runs : int
        Simulated runs per policy (0: model only).
    seed : int or numpy.random.SeedSequence
        Row ``c`` uses ``child_seed(seed, c)``.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> t = lemon_table(base_scenario(2048, 256), fractions=(0.05,), r_values=(6, 7), runs=0)
    >>> t[["lemon_fraction", "r_star"]].values.tolist()
    [[0.05, 7.0]]
    """
    base = base_scenario() if base is None else base
    seed = as_seed_sequence(seed)
    fields = {k: getattr(base, k) for k in base.__dataclass_fields__}
    rows = []
    for c, phi in enumerate(fractions):
        # Without lemons their rate is no field of the scenario (Scenario refuses it).
        factor = rate_factor if phi > 0 else 1.0
        sc = Scenario(**{**fields, "lemon_fraction": phi, "lemon_rate_factor": factor})
        plan = optimal_plan(sc, "spare", r_values=r_values)
        row: dict[str, Any] = {
            "lemon_fraction": phi,
            "lemon_rate_factor": rate_factor,
            "r_star": plan.r,
            "checkpoint_interval_minutes": plan.estimate.checkpoint_interval_minutes,
            "hours_model": plan.estimate.hours,
            "restarts_model": plan.estimate.restarts,
        }
        if runs:
            tau = plan.estimate.checkpoint_interval_minutes
            r = plan.r
            assert r is not None  # SPARe's plan always has one
            keep = simulate_domain_training(sc, r, tau, runs, seed=child_seed(seed, c))
            drop = simulate_domain_training(
                sc, r, tau, runs, seed=child_seed(seed, c), exclude_after=exclude_after
            )
            row.update(
                hours_sim=keep.mean_hours,
                hours_sim_se=keep.standard_error_hours,
                hours_sim_excluding=drop.mean_hours,
                hours_sim_excluding_se=drop.standard_error_hours,
                exclusions_per_run=float(drop.exclusions.mean()),
                exclude_after=exclude_after,
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _figure(table: pd.DataFrame, outdir: Path) -> Path:
    import matplotlib.pyplot as plt

    sizes = sorted(m for m in table["domain_size"].unique() if m > 1)
    fig, axes = plt.subplots(1, max(len(sizes), 1), figsize=(4 * max(len(sizes), 1), 3.4))
    axes = np.atleast_1d(axes)
    for ax, m in zip(axes, sizes):
        for name in table["placement"].unique():
            rows = table[
                (table["placement"] == name)
                & ((table["domain_size"] == m) | (table["domain_share"] == 0))
            ].sort_values("domain_share")
            ax.errorbar(
                100 * rows["domain_share"],
                rows["hours_sim"],
                yerr=rows["hours_sim_se"],
                marker="o",
                capsize=2,
                label=name,
            )
        ax.set_title(f"domains of {m} groups", fontsize=10)
        ax.set_xlabel("share of failures from domain events (%)")
    axes[0].set_ylabel("time to train (h, simulated)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Placement under correlated failures, N={int(table['N'].iloc[0])}")
    fig.tight_layout()
    return save_figure(fig, outdir, "domain_ablation")


def write(options: ReportOptions) -> list[Path]:
    """Write the domain and lemon tables and the figure.

    About a minute on one core; ``quick`` (``N = 256``, ``r = 6``, a small
    grid, no lemon simulation) a few seconds.

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    seed = as_seed_sequence(options.seed)
    if options.quick:
        base = base_scenario(2048, 256)
        ablation = domain_ablation_table(
            base,
            r=6,
            domain_sizes=(4, 16),
            shares=(0.0, 0.3),
            trials=6,
            runs=3,
            wipeout_trials=300,
            model=False,
            executor=options.executor,
            seed=child_seed(seed, 0),
            progress=options.progress,
        )
        closed = closed_form_table(((256, 6, 4, 0.3),), trials=500, seed=child_seed(seed, 1))
        lemons = lemon_table(
            base, fractions=(0.0, 0.05), r_values=(5, 6, 7), runs=0, seed=child_seed(seed, 2)
        )
    else:
        ablation = domain_ablation_table(
            executor=options.executor, seed=child_seed(seed, 0), progress=options.progress
        )
        closed = closed_form_table(seed=child_seed(seed, 1))
        lemons = lemon_table(seed=child_seed(seed, 2))
    tables = options.outdir / "tables"
    paths = [
        *write_table(
            ablation,
            tables,
            "domain_ablation",
            title="Placements under domain failures",
            notes=_ablation_notes(ablation),
        ),
        *write_table(
            closed,
            tables,
            "domain_closed_form",
            title="Closed-form wipe-out time of the domain-aware placement",
            notes=f"Mean absolute error {100 * closed['rel_error'].abs().mean():.2f} %.",
        ),
        *write_table(
            lemons,
            tables,
            "lemons",
            title="Lemon groups: best r and time to train",
            notes="Model: SPARe with lemon lifetimes (averaged over the lemons' places); "
            "simulation at the model's best r and interval, with and without replacing a "
            "group slot after exclude_after failures.",
        ),
        _figure(ablation, options.outdir / "figures"),
    ]
    return paths


def _ablation_notes(table: pd.DataFrame) -> str:
    lines = [
        "Times u in units of a group's mean time between failures; hours at today's "
        "optimal interval for r; hours_change relative to the ruler without domain events."
    ]
    for s in sorted(table["domain_share"].unique()):
        if s == 0:
            continue
        big = table[(table["domain_share"] == s)]
        m = int(big["domain_size"].max())
        big = big[big["domain_size"] == m].set_index("placement")["hours_change"]
        lines.append(
            f"Share {100 * s:g} %, domains of {m}: "
            + ", ".join(f"{name} {100 * v:+.1f} %" for name, v in big.items() if pd.notna(v))
        )
    return "\n".join(lines)
