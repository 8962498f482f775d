"""Stack overhead: theory versus simulation, placement ablation, trajectories.

Writes ``tables/overhead_error`` (Monte Carlo mean and SE of both weightings
against the closed forms on the mu grid), ``tables/placement_ablation`` and
the figures ``overhead``, ``overhead_trajectory`` and ``placement_ablation``
(the ablation's table and figure are built in
:mod:`spare_theory.reports.placement_ablation`).
Every cell with a modular ruler, up to ``N = 75,000`` and ``r = 20``, is
simulated with exact ``S*`` (compiled trajectories,
:mod:`spare_theory.stacking._trajectory`) to a relative standard error of 0.25 %
(see :func:`overhead_error_table` for the estimator).

Naming, as in :mod:`spare_theory.reports.mu`: ``N`` groups, ``r`` redundancy,
``mc_*`` Monte Carlo estimates, relative errors and MAEs as fractions.  The
two weightings of the average overhead ``S(N, r)`` (see
:func:`spare_theory.stacking.overhead.overhead`) are the suffixes ``_failure``
(plain average over the failure index) and ``_time`` (time weighted).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._parallel import map_tasks
from .._validation import as_count, as_count_list, as_real, as_seed_sequence, child_seed
from ..placement.placements import cyclic_placement
from ..placement.rulers import modular_ruler
from ..stacking.overhead import overhead, simulate_overhead, stacks_trajectory
from ..stacking.stacks import stacks_lower_bound
from ..wipeout.simulation import simulate_wipeout
from ._io import save_figure, write_table
from .catalogue import ReportOptions
from .mu import DEFAULT_N, DEFAULT_R
from .placement_ablation import placement_ablation_figure, placement_ablation_table

__all__ = ["COLUMNS", "PUBLISHED_MAE_OVERHEAD", "overhead_error_table", "write"]

#: Mean absolute relative error of the published overhead closed form against
#: simulation, as published in the SPARe paper (a fraction: 0.60 %).
PUBLISHED_MAE_OVERHEAD = 0.0060
# Acceptance band per cell: BAND_SE standard errors + BAND_REL relative.
BAND_SE, BAND_REL = 3.0, 1e-3
#: Default target of the relative standard error of every simulated cell (0.25 %).
REL_SE_TARGET = 0.0025
#: Cells from this many groups up are summarised separately (the 100k-GPU regime).
LARGE_N = 8192
WEIGHTINGS = {"failure": "per_failure", "time": "time_weighted"}
# Cost of one exact trajectory over one wipe-out sample (both ~ N r): sizes the
# two halves of a cell.  A constant, so that cell sizes never depend on timing.
_TRAJECTORY_COST = 100.0
# Wipe-out samples of the pilot (cheap: ~ N r double comparisons each).
_PILOT_WIPEOUTS = 256
# Top-up rounds after the pilot, each sized for _MARGIN times the target SE.
_ROUNDS, _MARGIN = 3, 0.9
#: Columns of :func:`overhead_error_table`, in order.
COLUMNS = (
    "N",
    "r",
    "status",
    "trials",
    "wipeout_samples",
    "mc_mean_T",
    *(
        f"{quantity}_{weighting}"
        for weighting in WEIGHTINGS
        for quantity in (
            "closed_form",
            "mc_mean",
            "mc_se",
            "mc_rel_se",
            "rel_error",
            "in_band",
            "excess",
        )
    ),
)


def _bound_averages(N: int, T: np.ndarray) -> dict[str, np.ndarray]:
    """Both averages of the counting bound ``L_f = ceil(N/(N-f))`` over ``f < T``, per ``T``."""
    f = np.arange(N)
    bound = np.asarray(stacks_lower_bound(N, f), dtype=float)
    weight = 1.0 / (N - f)
    total = np.concatenate([[0.0], np.cumsum(bound)])
    weighted = np.concatenate([[0.0], np.cumsum(bound * weight)])
    norm = np.concatenate([[0.0], np.cumsum(weight)])
    return {"failure": total[T] / T, "time": weighted[T] / norm[T]}


def _cell(
    task: tuple[int, int, int, float | None, int, int | None, np.random.SeedSequence],
) -> dict[str, Any]:
    N, r, trials, target, max_trials, max_sim_N, seed = task
    row: dict[str, Any] = {"N": N, "r": r}
    try:
        marks = modular_ruler(N, r)
    except ValueError:
        return {**row, "status": "no modular ruler"}
    for weighting in WEIGHTINGS:
        row[f"closed_form_{weighting}"] = overhead(N, r, weighting)
    if max_sim_N is not None and max_sim_N < N:
        return {**row, "status": f"closed form only (N > {max_sim_N})"}
    hosts = cyclic_placement(N, r, marks=marks)
    # Per trial, S*_f = L_f + (S*_f - L_f): the average of the counting bound
    # L_f is a function of T alone, estimated from cheap exact wipe-out
    # samples; the excess needs exact trajectories but is small and rare.
    runs = [simulate_overhead(hosts, trials, seed=child_seed(seed, 0))]
    waits = [simulate_wipeout(hosts, max(trials, _PILOT_WIPEOUTS), seed=child_seed(seed, 1))]

    def estimate() -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
        T_traj = np.concatenate([s.T for s in runs])
        T_wipe = np.concatenate(waits)
        on_traj, on_wipe = _bound_averages(N, T_traj), _bound_averages(N, T_wipe)
        parts = {}
        for weighting, attr in WEIGHTINGS.items():
            samples = np.concatenate([getattr(s, attr) for s in runs])
            excess = samples - on_traj[weighting]
            # Two roundings of the same sum when S* = L all along: exactly 0 then.
            excess[np.abs(excess) < 1e-12] = 0.0
            parts[weighting] = (on_wipe[weighting], excess)
        return T_wipe, parts

    # Size for a little under the target (pilot variances are estimates), and
    # top up again while a weighting still misses it: rounds k = 0, 1, 2 with
    # streams child_seed(seed, 2 + 2k) (trajectories) and 3 + 2k (wipe-outs).
    goal = 0.0 if target is None else target
    for k in range(_ROUNDS if target is not None else 0):
        _, parts = estimate()
        n_traj, n_wipe = sum(s.T.size for s in runs), sum(w.size for w in waits)
        need_traj, need_wipe = n_traj, n_wipe
        for bound_part, excess in parts.values():
            mean = bound_part.mean() + excess.mean()
            budget = (_MARGIN * goal * mean) ** 2
            sd_x, sd_b = excess.std(ddof=1), bound_part.std(ddof=1)
            if sd_x**2 / n_traj + sd_b**2 / n_wipe <= (goal * mean) ** 2:
                continue
            # Least cost n c_x + M c_b with var_x/n + var_b/M <= budget.
            scale = (sd_x * np.sqrt(_TRAJECTORY_COST) + sd_b) / budget
            need_traj = max(need_traj, int(np.ceil(sd_x / np.sqrt(_TRAJECTORY_COST) * scale)))
            need_wipe = max(need_wipe, int(np.ceil(sd_b * scale)))
        need_traj = min(need_traj, max_trials)
        need_wipe = min(need_wipe, max_trials * 50)
        if need_traj <= n_traj and need_wipe <= n_wipe:
            break
        if need_traj > n_traj:
            extra = need_traj - n_traj
            runs.append(simulate_overhead(hosts, extra, seed=child_seed(seed, 2 + 2 * k)))
        if need_wipe > n_wipe:
            extra = need_wipe - n_wipe
            waits.append(simulate_wipeout(hosts, extra, seed=child_seed(seed, 3 + 2 * k)))
    T_wipe, parts = estimate()
    n_traj = sum(s.T.size for s in runs)
    row.update(
        status="ok", trials=n_traj, wipeout_samples=T_wipe.size, mc_mean_T=float(T_wipe.mean())
    )
    for weighting, (bound_part, excess) in parts.items():
        mean = float(bound_part.mean() + excess.mean())
        se = float(np.sqrt(bound_part.var(ddof=1) / bound_part.size + excess.var(ddof=1) / n_traj))
        closed = row[f"closed_form_{weighting}"]
        row[f"mc_mean_{weighting}"], row[f"mc_se_{weighting}"] = mean, se
        row[f"mc_rel_se_{weighting}"] = se / mean
        row[f"rel_error_{weighting}"] = closed / mean - 1
        row[f"in_band_{weighting}"] = bool(abs(closed - mean) <= BAND_SE * se + BAND_REL * mean)
        row[f"excess_{weighting}"] = float(excess.mean())
    return row


def overhead_error_table(
    *,
    N: Iterable[int] | npt.ArrayLike = DEFAULT_N,
    r: Iterable[int] | npt.ArrayLike = DEFAULT_R,
    trials: int = 16,
    rel_se_target: float | None = REL_SE_TARGET,
    max_trials: int = 400,
    max_sim_N: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
) -> pd.DataFrame:
    """Closed forms of both weightings against simulation on the grid ``N x r``.

    Every cell with a modular ruler is simulated with exact ``S*``.  Per
    trial the average of ``S*_f`` over ``f < T`` splits into the average of
    the counting bound ``L_f = ceil(N/(N-f))`` (a function of the wipe-out
    count ``T`` alone) plus the excess ``S*_f - L_f``; so

        mc_mean = mean_j h(T'_j) + mean_i [Y_i - h(T_i)],

    ``h(T)`` the bound's average, ``T'_j`` exact wipe-out samples
    (:func:`spare_theory.wipeout.simulation.simulate_wipeout`, cheap), ``Y_i`` and
    ``T_i`` the averages and wipe-out counts of exact ``S*`` trajectories
    (:func:`spare_theory.stacking.overhead.simulate_overhead`).  Both terms
    are unbiased and independent, ``mc_se^2 = var(h)/M + var(excess)/n``;
    the excess is zero in most trials, so a few trajectories suffice where
    the plain mean of ``Y`` would need hundreds.  A pilot (``trials``
    trajectories, 256 wipe-out samples) sizes each cell for
    ``mc_se <= rel_se_target * mc_mean`` in both weightings at the least
    cost (one trajectory counted as 100 wipe-out samples), capped at
    ``max_trials`` trajectories.  One task per cell with stream
    ``child_seed(seed, cell_index)``; the biggest cells are submitted first.

    Parameters
    ----------
    N : sequence of int
        Group counts of the grid (keyword-only, like every argument).
    r : sequence of int
        Redundancies of the grid; the table has all pairs, ``N`` varying slowest.
    trials : int
        Exact trajectories of the pilot, per cell (>= 2).
    rel_se_target : float or None
        Target relative standard error per cell (default 0.25 %); ``None``:
        the pilot only.
    max_trials : int
        Cap on exact trajectories per cell (``mc_rel_se_*`` says if it bound).
    max_sim_N : int, optional
        Cells with more groups get the closed forms only (default: none).
    executor : concurrent.futures.Executor, optional
        Where cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Seed of the table.
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`: ``N``, ``r``, ``status``, ``trials`` (exact
        trajectories), ``wipeout_samples``, ``mc_mean_T`` (simulated mean
        wipe-out count, failures), then for ``w`` in ``failure``, ``time``:
        ``closed_form_w`` (the closed form of ``S(N, r)``, times a
        failure-free step), ``mc_mean_w``, ``mc_se_w`` and ``mc_rel_se_w``
        (simulated mean, standard error and its ratio to the mean),
        ``rel_error_w`` (``closed_form_w / mc_mean_w - 1``, a fraction),
        ``in_band_w`` (within ``3 SE + 0.1 %``) and ``excess_w`` (the mean
        excess of ``S*`` over the counting bound, the part of the overhead
        the closed form ``expected_stacks`` leaves out).

    Raises
    ------
    ValueError
        Naming the argument: counts that are not positive integers,
        ``trials < 2``, a target outside ``(0, 1)``, a bad seed.

    Examples
    --------
    >>> table = overhead_error_table(N=[64, 300], r=[3], trials=20, max_sim_N=200,
    ...                              progress=False)
    >>> list(table["status"])
    ['ok', 'closed form only (N > 200)']
    >>> row = table.iloc[0]
    >>> print(f"S = {row['closed_form_failure']:.3f} (closed form), "
    ...       f"{row['mc_mean_failure']:.4f} +- {row['mc_se_failure']:.4f} (simulated)")
    S = 1.925 (closed form), 1.9... +- 0.00... (simulated)
    >>> bool(table["mc_rel_se_failure"].iloc[0] <= 0.0025)
    True
    """
    N_list, r_list = as_count_list(N, "N"), as_count_list(r, "r")
    trials = as_count(trials, "trials", minimum=2)
    target = (
        None
        if rel_se_target is None
        else as_real(rel_se_target, "rel_se_target", minimum=0.0, maximum=1.0, strict_minimum=True)
    )
    max_trials = as_count(max_trials, "max_trials", minimum=trials)
    sim_cap = None if max_sim_N is None else as_count(max_sim_N, "max_sim_N")
    seed = as_seed_sequence(seed)
    cells = [(n, k) for n in N_list for k in r_list]
    tasks = [
        (n, k, trials, target, max_trials, sim_cap, child_seed(seed, i))
        for i, (n, k) in enumerate(cells)
    ]
    # Biggest cells first, so that a pool does not wait on one at the end;
    # results go back to grid order (each cell has its own stream).
    order = sorted(range(len(tasks)), key=lambda i: -cells[i][0] * cells[i][1] ** 2)
    done = map_tasks(
        _cell, [tasks[i] for i in order], executor=executor, desc="overhead", progress=progress
    )
    rows: list[dict[str, Any]] = [{}] * len(tasks)
    for i, result in zip(order, done):
        rows[i] = result
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _plot_overhead(table: pd.DataFrame, outdir: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    sim = table[table["status"] == "ok"]
    for color, n in zip(plt.cm.viridis(np.linspace(0, 0.85, 3)), sorted(sim["N"].unique())[-3:]):
        cells = table[(table["N"] == n) & table["closed_form_failure"].notna()]
        ax.plot(
            cells["r"],
            cells["closed_form_failure"],
            "-",
            color=color,
            label=f"N={n} closed form (per failure)",
        )
        ax.plot(
            cells["r"],
            cells["closed_form_time"],
            "--",
            color=color,
            label=f"N={n} closed form (time)",
        )
        pts = sim[sim["N"] == n]
        ax.errorbar(
            pts["r"], pts["mc_mean_failure"], 3 * pts["mc_se_failure"], fmt="o", color=color, ms=4
        )
        ax.errorbar(
            pts["r"],
            pts["mc_mean_time"],
            3 * pts["mc_se_time"],
            fmt="s",
            mfc="none",
            color=color,
            ms=4,
        )
    rs = np.array(sorted(table["r"].unique()))
    ax.plot(rs, rs, ":", color="grey", label="replication (r x)")
    ax.set_xticks(rs)  # r is an integer: ticks at the simulated r only
    ax.set(
        xlabel="redundancy r",
        ylabel="average stack overhead S (x)",
        ylim=(0.9, 4),
        title="SPARe overhead: simulation (markers, ±3 SE) over closed forms",
    )
    ax.legend(fontsize=7)
    return save_figure(fig, outdir, "overhead")


def _plot_trajectories(
    outdir: Path, seed: np.random.SeedSequence, N: int = 1024, r: int = 12, runs: int = 4
) -> Path:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    hosts = cyclic_placement(N, r)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    f = np.arange(int(0.8 * N))
    # The bound first, wide and pale, so the runs (which mostly sit on it) stay visible on top.
    ax.step(
        f,
        stacks_lower_bound(N, f),
        where="post",
        color="0.75",
        lw=5,
        zorder=1,
        label="lower bound ceil(N/(N-f))",
    )
    for i in range(runs):
        order = np.random.default_rng(child_seed(seed, 10_000 + i)).permutation(N)
        traj = stacks_trajectory(hosts, order)
        (line,) = ax.step(
            np.arange(traj.size),
            traj,
            where="post",
            lw=1.2,
            zorder=2 + i,
            label=f"run {i}: wiped out at failure T={traj.size}",
        )
        ax.plot(traj.size - 1, traj[-1], "x", ms=8, mew=2, color=line.get_color(), zorder=10)
    ax.set(
        xlabel="failed groups f",
        ylabel="S* (stack layers per step)",
        title=f"S* along seeded failure runs, N={N}, r={r}\n"
        "(T: failures up to and including the wipe-out, marked x)",
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=7, loc="upper left")
    return save_figure(fig, outdir, "overhead_trajectory")


def _summary(table: pd.DataFrame) -> str:
    sim = table[table["status"] == "ok"]
    large = sim[sim["N"] >= LARGE_N]
    lines = []
    for weighting in WEIGHTINGS:
        errors = sim[f"rel_error_{weighting}"].abs()
        inside = int(sim[f"in_band_{weighting}"].sum())
        lines.append(
            f"- {weighting} weighting: MAE {100 * errors.mean():.3f} % over all {len(sim)} "
            f"simulated cells, {100 * large[f'rel_error_{weighting}'].abs().mean():.3f} % over "
            f"the {len(large)} cells with N >= {LARGE_N} (published closed form: "
            f"{100 * PUBLISHED_MAE_OVERHEAD:.2f} %); {inside}/{len(sim)} cells within "
            f"{BAND_SE:g} SE + {100 * BAND_REL:g} %; largest relative SE "
            f"{100 * sim[f'mc_rel_se_{weighting}'].max():.3f} %."
        )
    skipped = sorted(
        int(n) for n in table.loc[table["status"].str.startswith("closed"), "N"].unique()
    )
    if skipped:
        lines.append(f"- Closed form only: N = {skipped}.")
    lines.append(
        "- Every cell with a modular ruler is simulated with exact S*: mc_mean = mean of the "
        "counting bound's average h(T) over `wipeout_samples` exact wipe-out counts + mean "
        "excess of S* over the bound over `trials` exact trajectories (excess_*)."
    )
    lines.append("- rel_error_* = closed_form_* / mc_mean_* - 1, a fraction (0.01 is 1 %).")
    return "\n".join(lines)


def write(options: ReportOptions) -> list[Path]:
    """Write the overhead and placement ablation tables and their figures.

    ``tables/overhead_error`` (:func:`overhead_error_table` on the mu grid,
    every cell simulated to 0.25 % relative SE; ``quick``: a 3 x 4 grid to
    1 %), ``tables/placement_ablation`` and the figures ``overhead``,
    ``overhead_trajectory`` and ``placement_ablation``.

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    seed = as_seed_sequence(options.seed)
    if options.quick:
        table = overhead_error_table(
            N=(128, 1024, 8192),
            r=(2, 4, 8, 12),
            trials=8,
            rel_se_target=0.01,
            executor=options.executor,
            seed=child_seed(seed, 0),
            progress=options.progress,
        )
        ablation = placement_ablation_table(
            N=256,
            r=(4, 8),
            trials=10,
            executor=options.executor,
            seed=child_seed(seed, 1),
            progress=options.progress,
        )
    else:
        # Every cell simulated, each to 0.25 % relative SE (see overhead_error_table).
        table = overhead_error_table(
            N=DEFAULT_N,
            r=DEFAULT_R,
            trials=8,
            rel_se_target=REL_SE_TARGET,
            executor=options.executor,
            seed=child_seed(seed, 0),
            progress=options.progress,
        )
        ablation = placement_ablation_table(
            N=1024,
            r=(4, 8, 12),
            trials=30,
            executor=options.executor,
            seed=child_seed(seed, 1),
            progress=options.progress,
        )
    tables, figures = options.outdir / "tables", options.outdir / "figures"
    return [
        *write_table(
            table,
            tables,
            "overhead_error",
            title="Average stack overhead S(N, r): theory vs simulation",
            notes=_summary(table),
        ),
        *write_table(
            ablation,
            tables,
            "placement_ablation",
            title="Placement ablation: ruler vs contiguous vs random",
        ),
        _plot_overhead(table, figures),
        _plot_trajectories(figures, child_seed(seed, 2)),
        placement_ablation_figure(ablation, figures),
    ]
