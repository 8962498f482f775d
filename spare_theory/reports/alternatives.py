"""What planners would pick instead of SPARe: elastic DP, hot spares, fast restarts (issue 21).

Writes

* ``tables/alternatives.csv|md``: every registered strategy's best plan
  (:func:`spare_theory.training.optimize.optimal_plan`) at 600,000 GPUs
  (:meth:`spare_theory.Scenario.published_600k`: Llama 3 GPU MTBF, 60 min
  restarts, 5 min checkpoints, 720 h of work, no repairs, the default 3 min
  reconfiguration stall) in groups of :data:`GROUP_SIZES` GPUs and at 100,000
  GPUs in groups of 1024 (``N = 97``), plus CKPT-only with the fast-restart
  presets (:meth:`spare_theory.Scenario.preset`: in-process restart ``R = 1``
  min, in-memory checkpoints ``delta = 3`` s, both): ``r``, the quorum
  ``min_groups``, the checkpoint interval, hours, uptime, the share of the
  global batch skipped and whether the batch stays exact, the winner of each
  scenario and the best exact-batch plan;
* ``tables/alternatives_crossover.csv|md``: where each alternative overtakes
  SPARe's best plan: the restart cost ``R`` below which CKPT-only with
  in-memory checkpoints has fewer hours (every scenario), and the
  reconfiguration stall below which elastic DP and hot spares have fewer
  hours (:data:`STALL_SCENARIOS`): a root of the difference of best hours
  found with :func:`scipy.optimize.brentq`, or "never in [a, b]";
* ``tables/alternatives_paper.csv|md``: the same plans on the SPARe paper's
  step-level scenario (:func:`~spare_theory.steps.scenario.paper_scenario`,
  ``N`` in :data:`PAPER_GROUPS`; no presets, they are ``Scenario``'s);
* ``tables/alternatives_economics.csv|md``: the same plans in hours, dollars
  and MWh (:mod:`spare_theory.reports.economics`: each plan billed where it
  is computed, under :data:`~spare_theory.reports.economics.ECONOMICS_COST`),
  their ranks by each, and where the energy ranking differs from the time
  ranking;
* ``figures/alternatives.png``: best hours against group size at 600k GPUs,
  one line per strategy, exact-batch plans solid, elastic (batch not exact)
  dashed.

Each scenario's verdict (the Markdown notes) says which plan wins, where
SPARe is not the best choice, and what the winner costs in skipped samples.
Repairs are not in this table (``tables/repairs_600k`` has them): with 1 h
repairs every rejoin stalls the elastic job, and at 600k GPUs the 3 min stall
then costs more than it saves.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd
from scipy.optimize import brentq

from .._parallel import map_tasks
from ..hourly.scenario import PRESETS, Scenario
from ..steps.scenario import paper_scenario
from ..strategies.registry import registered_strategies
from ..training.optimize import optimal_plan
from ._io import save_figure, with_plan_r, write_table
from .alternatives_text import (
    FASTEST_PRESET,
    REFERENCE,
    alternatives_figure,
    plan_name,
    verdicts,
)
from .catalogue import ReportOptions
from .economics import BILL_COLUMNS, ECONOMICS_NOTES, bill_fields, rank_columns, ranking_changes
from .trace import trace_scenario

__all__ = [
    "GROUP_SIZES",
    "PAPER_GROUPS",
    "RESTART_RANGE",
    "STALL_RANGE",
    "STALL_SCENARIOS",
    "TRACE_SCENARIO",
    "compare",
    "crossover_table",
    "paper_table",
    "plans_table",
    "scenarios",
    "write",
]

#: Group sizes (GPUs) of the 600k rows.
GROUP_SIZES: tuple[int, ...] = (8, 512, 2048, 4096)
_QUICK_GROUP_SIZES: tuple[int, ...] = (4096,)
#: Restart costs searched for CKPT-only's crossover, minutes.
RESTART_RANGE: tuple[float, float] = (0.05, 60.0)
#: Reconfiguration stalls searched for elastic DP's and hot spares' crossovers, minutes.
STALL_RANGE: tuple[float, float] = (0.05, 30.0)
#: Repair times searched for elastic DP's and hot spares' crossovers, minutes (both sides
#: repaired: SPARe is priced at the same repair time).
REPAIR_RANGE: tuple[float, float] = (10.0, 600.0)
#: Scenarios whose stall and repair crossovers are searched (each costs about ten best plans).
STALL_SCENARIOS: tuple[str, ...] = ("600k GPUs, groups of 2048", "100k GPUs, groups of 1024")
_QUICK_STALL_SCENARIOS: tuple[str, ...] = ()
# Crossover tolerance (minutes), and the coarser one of the repair searches (two minutes
# in hours of repair, said in whole minutes; each step prices two plans with repairs).
_XTOL = 0.01
_REPAIR_XTOL = 2.0
# Costs that both sides pay: the reference is re-priced at each value.
_PAIRED = ("repair_minutes",)


#: Label of the shipped failure log's fitted scenario (``reports.trace.trace_scenario``).
TRACE_SCENARIO = "StepFun trace, 100k GPUs, groups of 2048"


def scenarios(
    group_sizes: tuple[int, ...] = GROUP_SIZES, *, trace: bool = True
) -> dict[str, Scenario]:
    """The scenarios of the table: 600k GPUs in groups of ``group_sizes``, 100k GPUs, the trace.

    The last (``trace=True``) is the shipped StepFun failure log's fitted
    scenario at 100k GPUs (Weibull node clocks, lemons, bursts as domains,
    the log's repairs through a pool of spare servers; ``tables/trace.md``
    checks it against the replayed log).

    Examples
    --------
    >>> {k: v.groups for k, v in scenarios((2048,), trace=False).items()}
    {'600k GPUs, groups of 2048': 292, '100k GPUs, groups of 1024': 97}
    """
    out = {f"600k GPUs, groups of {g}": Scenario.published_600k(g) for g in group_sizes}
    out["100k GPUs, groups of 1024"] = dataclasses.replace(
        Scenario.published_600k(1024), gpus=100_000
    )
    if trace:
        out[TRACE_SCENARIO] = trace_scenario(100_000)
    return out


def with_preset(scenario: Scenario, preset: str) -> Scenario:
    """``scenario`` with the costs of ``Scenario.preset(preset)`` (its other fields kept)."""
    fields = {
        f.name: getattr(scenario, f.name)
        for f in dataclasses.fields(scenario)
        if f.init and f.name not in PRESETS[preset]
    }
    return Scenario.preset(preset, **fields)


def _plan_row(task: tuple[str, Scenario, str, str | None, int]) -> dict[str, Any]:
    label, base, strategy, preset, microbatches = task
    sc = base if preset is None else with_preset(base, preset)
    plan = optimal_plan(sc, strategy, microbatches=microbatches)
    est = plan.estimate
    return {
        "scenario": label,
        "gpus": sc.gpus,
        "gpus_per_group": sc.gpus_per_group,
        "groups": sc.groups,
        "strategy": strategy,
        "preset": preset or "",
        "microbatches": microbatches,
        "restart_minutes": sc.restart_minutes,
        "checkpoint_minutes": sc.checkpoint_minutes,
        "reconfigure_minutes": sc.reconfigure_minutes,
        "r": plan.r,
        "min_groups": plan.min_groups,
        "checkpoint_interval_minutes": est.checkpoint_interval_minutes,
        "hours": est.hours,
        "uptime": est.uptime,
        "samples_skipped": est.samples_skipped,
        "exact_batch": bool(est.exact_batch),
        # Billed here, where the plan is: the economics table re-plans nothing.
        **bill_fields(plan),
    }


#: Micro-batches of the split SPARe row (``optimal_plan(..., microbatches=16)``).
MICROBATCHES = 16

#: The crossovers searched: (strategy, preset applied first or None, field varied, range).
#: CKPT-only is priced at in-memory checkpoints against its restart cost; elastic DP
#: and hot spares against their reconfiguration stall, and against the repair time of
#: failed groups (SPARe repaired alike).
CROSSOVERS: tuple[tuple[str, str | None, str, tuple[float, float]], ...] = (
    ("ckpt", "in_memory_checkpoints", "restart_minutes", RESTART_RANGE),
    ("elastic", None, "reconfigure_minutes", STALL_RANGE),
    ("hot_spares", None, "reconfigure_minutes", STALL_RANGE),
    ("elastic", None, "repair_minutes", REPAIR_RANGE),
    ("hot_spares", None, "repair_minutes", REPAIR_RANGE),
)


def _best_hours(sc: Scenario, strategy: str) -> float:
    return float(optimal_plan(sc, strategy).hours)


def _crossover(task: tuple[str, Scenario, tuple[Any, ...]]) -> dict[str, Any]:
    """Where a strategy's best hours, as one cost falls, drop below the reference's."""
    label, base, (strategy, preset, what, (a, b)) = task
    reference = _best_hours(base, REFERENCE)
    start = base if preset is None else with_preset(base, preset)
    paired = what in _PAIRED

    def hours(x: float) -> float:
        field: dict[str, Any] = {what: x}
        return _best_hours(dataclasses.replace(start, **field), strategy)

    def reference_at(x: float) -> float:
        field: dict[str, Any] = {what: x}
        return _best_hours(dataclasses.replace(base, **field), REFERENCE) if paired else reference

    def gap(x: float) -> float:
        return hours(x) - reference_at(x)

    # The alternative wins where the gap is negative; a root where its sign changes.
    ha, hb = hours(a), hours(b)
    ra, rb = reference_at(a), reference_at(b)
    ga, gb = ha - ra, hb - rb
    root: float | None = None
    if (ga < 0) != (gb < 0):
        root = float(brentq(gap, a, b, xtol=_REPAIR_XTOL if paired else _XTOL))
        said = f"{'below' if ga < 0 else 'above'} {root:{'.0f' if paired else '.3g'}} min"
    elif ga >= 0:
        said = f"never in [{a:g}, {b:g}] min"
    else:
        said = f"everywhere in [{a:g}, {b:g}] min"
    return {
        "scenario": label,
        "strategy": strategy,
        "preset": preset or "",
        "varied": what,
        "low": a,
        "high": b,
        "reference_hours": reference,
        "hours_at_low": ha,
        "hours_at_high": hb,
        "reference_at_low": ra,
        "reference_at_high": rb,
        "crossover": root,
        "overtakes_reference": said,
    }


def _run(task: tuple[str, Any]) -> dict[str, Any]:
    kind, args = task
    return _plan_row(args) if kind == "plan" else _crossover(args)


def _tasks(chosen: dict[str, Scenario], stall_scenarios: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Plan rows and crossover searches; the restart-cost searches run everywhere (cheap)."""
    plans: list[tuple[str, Any]] = [
        ("plan", (label, sc, s, None, 1))
        for label, sc in chosen.items()
        for s in registered_strategies()
    ]
    # SPARe with each failed shard split into micro-batches (section 7), the toolkit's
    # best SPARe plan: the alternatives are measured against it too.
    plans += [("plan", (label, sc, REFERENCE, None, MICROBATCHES)) for label, sc in chosen.items()]
    plans += [
        ("plan", (label, sc, CROSSOVERS[0][0], p, 1))
        for label, sc in chosen.items()
        for p in PRESETS
    ]
    # The reference at the fastest costs too, so no row compares unlike costs silently.
    plans += [("plan", (label, sc, REFERENCE, FASTEST_PRESET, 1)) for label, sc in chosen.items()]
    cheap = [("cross", (label, sc, CROSSOVERS[0])) for label, sc in chosen.items()]
    long = [
        ("cross", (label, chosen[label], spec))
        for label in stall_scenarios
        if label in chosen
        for spec in CROSSOVERS[1:]
    ]
    # The long searches first, so a pool of two stays busy.
    return long + plans + cheap


def _mark(table: pd.DataFrame) -> pd.DataFrame:
    best = table.groupby("scenario")["hours"].transform("min")
    table["winner"] = table["hours"] == best
    exact = table["hours"].where(table["exact_batch"])
    table["best_exact"] = table["exact_batch"] & (
        table["hours"] == exact.groupby(table["scenario"]).transform("min")
    )
    return table


def plans_table(
    chosen: dict[str, Scenario] | None = None,
    *,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every registered strategy's best plan and the CKPT-only presets (module docstring).

    Examples
    --------
    >>> t = plans_table(scenarios((), trace=False), progress=False)
    >>> t.loc[t["winner"], ["strategy", "preset"]].values.tolist()
    [['ckpt', 'fast_restarts'], ['spare', 'fast_restarts']]
    """
    chosen = scenarios() if chosen is None else chosen
    rows = map_tasks(
        _run,
        [t for t in _tasks(chosen, ()) if t[0] == "plan"],
        executor=executor,
        desc="alternatives",
        progress=progress,
    )
    return _mark(with_plan_r(pd.DataFrame(rows)))


def crossover_table(
    chosen: dict[str, Scenario] | None = None,
    stall_scenarios: tuple[str, ...] = STALL_SCENARIOS,
    *,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Where each alternative overtakes SPARe (module docstring)."""
    chosen = scenarios() if chosen is None else chosen
    tasks = [t for t in _tasks(chosen, stall_scenarios) if t[0] == "cross"]
    rows = map_tasks(_run, tasks, executor=executor, desc="crossovers", progress=progress)
    return with_plan_r(pd.DataFrame(rows))


def _both(
    chosen: dict[str, Scenario],
    stall_scenarios: tuple[str, ...],
    executor: concurrent.futures.Executor | None,
    progress: bool,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables from one task list (one pool, the long searches first)."""
    tasks = _tasks(chosen, stall_scenarios)
    rows = map_tasks(_run, tasks, executor=executor, desc="alternatives", progress=progress)

    plans = [row for task, row in zip(tasks, rows, strict=True) if task[0] == "plan"]
    cross = [row for task, row in zip(tasks, rows, strict=True) if task[0] == "cross"]
    order = {label: i for i, label in enumerate(chosen)}
    plan_frame = pd.DataFrame(plans).sort_values(
        "scenario", key=lambda s: s.map(order), kind="stable"
    )
    cross_frame = pd.DataFrame(cross).sort_values(
        "scenario", key=lambda s: s.map(order), kind="stable"
    )
    return _mark(plan_frame.reset_index(drop=True)), cross_frame.reset_index(drop=True)


#: Group counts of the SPARe paper's step-level scenario in ``alternatives_paper``.
PAPER_GROUPS: tuple[int, ...] = (200, 1000)


def _paper_row(task: tuple[int, str, int]) -> dict[str, Any]:
    N, strategy, microbatches = task
    sc = paper_scenario(N)
    plan = optimal_plan(sc, strategy, microbatches=microbatches)
    est = plan.estimate
    return {
        "scenario": f"paper's scenario, N = {N}",
        "groups": N,
        "strategy": strategy,
        "preset": "",
        "microbatches": microbatches,
        "r": plan.r,
        "min_groups": plan.min_groups,
        "checkpoint_every_steps": plan.checkpoint_every_steps,
        "total_over_T0": est.total_over_T0,
        "hours": est.hours,
        "uptime": est.uptime,
        "samples_skipped": est.samples_skipped,
        "exact_batch": bool(est.exact_batch),
    }


def paper_table(
    groups: tuple[int, ...] = PAPER_GROUPS,
    *,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Every registered strategy's best plan (and SPARe with 16 micro-batches) on the paper's
    step-level scenario (:func:`~spare_theory.steps.scenario.paper_scenario`, default 3 min
    stalls and 1 min heal): ``r``, quorum, interval in steps, time over ``T0``, hours.

    Examples
    --------
    >>> t = paper_table((200,), progress=False)
    >>> t.loc[t["winner"], ["strategy", "microbatches", "r"]].values.tolist()
    [['spare', 16, 8]]
    """
    tasks = [(N, s, 1) for N in groups for s in registered_strategies()]
    tasks += [(N, REFERENCE, MICROBATCHES) for N in groups]
    rows = map_tasks(_paper_row, tasks, executor=executor, desc="paper", progress=progress)
    return _mark(with_plan_r(pd.DataFrame(rows)))


def compare(
    scenario: Scenario, *, label: str | None = None, stall_crossovers: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """One scenario's plans table, crossovers and verdict (``spare-theory compare``), serially.

    Examples
    --------
    >>> sc = Scenario.published_600k(4096)
    >>> plans, cross, verdict = compare(sc, label="600k/4096")
    >>> print(verdict.split(". ")[0])  # doctest: +NORMALIZE_WHITESPACE
    600k/4096: at the scenario's costs SPARe is the best choice: spare (m = 16) needs
    1,381 h (SPARe unsplit 1,923 h); the best other plan is elastic (2,073 h, skipping
    31.5 % of the global batch)
    >>> cross[["strategy", "overtakes_reference"]].values.tolist()
    [['ckpt', 'below 4.26 min']]
    """
    name = str(scenario) if label is None else label
    stalls = (name,) if stall_crossovers else ()
    plans, cross = _both({name: scenario}, stalls, None, False)
    return plans, cross, verdicts(plans, cross)[name]


def write(options: ReportOptions) -> list[Path]:
    """Write the alternatives, crossover and paper tables and the figure (deterministic).

    ``quick``: 600k GPUs in groups of 4096 and 100k GPUs; no stall crossovers
    (each is about ten best plans of elastic DP or hot spares); the paper's
    scenario as at default sizes (N = 200).

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    chosen = scenarios(
        _QUICK_GROUP_SIZES if options.quick else GROUP_SIZES, trace=not options.quick
    )
    stalls = _QUICK_STALL_SCENARIOS if options.quick else STALL_SCENARIOS
    table, cross = _both(chosen, stalls, options.executor, options.progress)
    said = verdicts(table, cross)
    paper = paper_table(
        PAPER_GROUPS[:1] if options.quick else PAPER_GROUPS,
        executor=options.executor,
        progress=options.progress,
    )
    paper_said = verdicts(paper)
    work = float(next(iter(chosen.values())).work_hours)
    notes = (
        "Scenario.published_600k (Llama 3 GPU MTBF, R = 60 min, delta = 5 min, 720 h of "
        "work, no repairs, reconfigure_minutes = 3, heal_minutes = 1) at 600k GPUs and at "
        "100k GPUs in groups of 1024; the StepFun trace's fitted scenario at 100k GPUs "
        "(log.scenario: Weibull node clocks, lemons, bursts as domains, the log's repairs "
        "through a pool of spare servers for a 0.1 % shortage, 30 min swaps; tables/trace.md "
        "checks it against the replayed log); hour-level renewal model, each strategy at its best "
        "plan (optimal_plan: r, the elastic quorum min_groups, the interval). preset: "
        "CKPT-only with Scenario.preset (in_process_restart R = 1 min, "
        "in_memory_checkpoints delta = 3 s, fast_restarts both; the minute of restart at "
        "600k GPUs is this package's allowance, no public figure). samples_skipped: the "
        "share of the global batch not trained (elastic DP trains min(A, N - f) of N "
        "shards); exact_batch: the global batch stays exact. winner: fewest hours of the "
        "scenario; best_exact: fewest hours among exact-batch plans. Hours above 1e6 mean "
        "the plan does not finish (CKPT-only at 60 min restarts against a 5 min cluster MTBF)."
    )
    economics = rank_columns(table[list(_ECONOMICS_COLUMNS)], "scenario")
    return [
        *write_table(
            table.drop(columns=list(BILL_COLUMNS)),
            options.outdir / "tables",
            "alternatives",
            title="What planners would pick instead of SPARe: best plan of every strategy",
            notes=notes + "\n\n" + "\n\n".join(said.values()),
        ),
        *write_table(
            cross,
            options.outdir / "tables",
            "alternatives_crossover",
            title="Where each alternative overtakes SPARe's best unsplit plan",
            notes="For each scenario, the cost below which an alternative's best plan needs "
            "fewer hours than SPARe's best unsplit plan (m = 1; SPARe does not stall to "
            "reconfigure; against SPARe with 16 micro-batches the roots are lower): CKPT-only "
            "with in-memory checkpoints (delta = 3 s) against the restart cost R in "
            f"[{RESTART_RANGE[0]:g}, {RESTART_RANGE[1]:g}] min; elastic DP and hot spares "
            f"against the reconfiguration stall in [{STALL_RANGE[0]:g}, {STALL_RANGE[1]:g}] min "
            f"and against the repair time of failed groups in [{REPAIR_RANGE[0]:g}, "
            f"{REPAIR_RANGE[1]:g}] min, SPARe repaired alike (reference_at_low/high: its hours "
            "there; with repairs an alternative may win above the root instead) "
            f"(searched at: {', '.join(stalls) or 'none, --quick'}). A root of the difference "
            f"of best hours (scipy.optimize.brentq, xtol {_XTOL} min, {_REPAIR_XTOL:g} min for "
            "repairs), or 'never in [a, b]' / 'everywhere in [a, b]' when the difference keeps "
            "its sign on the range.",
        ),
        *write_table(
            paper,
            options.outdir / "tables",
            "alternatives_paper",
            title="The SPARe paper's step-level scenario: best plan of every strategy",
            notes="paper_scenario(N) (10,000 steps of 64 s stacks, cluster MTBF 300 s, "
            "exponential lifetimes, 1 h restart windows, 58.8 s checkpoints, no repairs; "
            "reconfigure_seconds = 180, heal_seconds = 60) with the step-level model "
            "(docs/theory.md section 8, the step level), each strategy at its best plan "
            "(r, quorum, interval in steps). total_over_T0: time to train over the "
            "failure-free T0; hours: the same in hours. No fast-restart presets here (they "
            "are Scenario's). winner and best_exact as in tables/alternatives."
            "\n\n" + "\n\n".join(paper_said.values()),
        ),
        *write_table(
            economics,
            options.outdir / "tables",
            "alternatives_economics",
            title="The alternatives in hours, dollars and MWh",
            notes="The plans of tables/alternatives (same scenarios, same best plans), billed. "
            + ECONOMICS_NOTES
            + "\n\n"
            + "\n\n".join(ranking_changes(economics, "scenario", plan_name).values()),
        ),
        save_figure(alternatives_figure(table, work), options.outdir / "figures", "alternatives"),
    ]


#: Columns of ``tables/alternatives_economics`` (then the ranks).
_ECONOMICS_COLUMNS = (
    "scenario",
    "strategy",
    "preset",
    "microbatches",
    "r",
    "hours",
    "samples_skipped",
    *BILL_COLUMNS,
)
