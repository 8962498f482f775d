"""``spare-theory sweep``: the best plan of every strategy at every point of a grid of scenarios.

Every scenario option of ``optimize`` takes one or more values here; the
grid is their product.  Options left out take the same defaults as in
``optimize`` (no hidden grid), ``--grid quick|full`` starts from the sweep
report's grid instead.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from ._common import (
    Output,
    add_executor_options,
    add_json,
    executor_from_args,
)
from .fields import add_scenario_options
from .laws import LAW_SYNTAX
from .plans import add_strategy_option, left_out_warning, plan_record, plans_text, value_text
from .points import ScenarioPoint, scenario_points, scenario_record

_DESCRIPTION = """\
The best plan (r, checkpoint interval) of each strategy at every point of a grid
of scenarios.  Every scenario option (the fields of Scenario and StepScenario,
--paper, --domain-share) takes one or more values, and the grid is their
product; an option left out takes its default, the same as in 'spare-theory
optimize' (one value).  --grid quick or full starts from the grid of the sweep
report (GPU counts, the H100 MTBF x 0.5/1/2, group sizes, both restart models,
SPARe with 1, 4, 16 and 1024 micro-batches) for the axes not given.
--restart-model linear scales the restart cost with the GPU count
(--restart-minutes at 600,000 GPUs)."""

_EPILOG = (
    """\
output: one block per grid point (its values first), the table and notes of
'spare-theory optimize' for that scenario (see its --help for the columns).
--json and --outdir DIR (DIR/sweep.csv and .md) give the long form, one row
per point and strategy: every scenario field, N, restart_model, and the plan:
r, r_within_1pct_low/high, checkpoint_interval_minutes or checkpoint_every_steps,
no_periodic_checkpoint, hours, availability or total_over_T0, restarts,
feasible, modelled, reason, <part>_hours (hour level) and reduction_vs_<other>
(1 - hours / hours of the other strategy at that point, a fraction);
DIR/sweep_by_point.csv and .md one row per point: the fields that vary, then
r_<strategy>, hours_<strategy> and availability_<strategy> (or total_over_T0).

"""
    + LAW_SYNTAX
)


def configure_sweep(parser: argparse.ArgumentParser) -> None:
    """``spare-theory sweep``: its description and options."""
    parser.description = _DESCRIPTION
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_strategy_option(parser)
    parser.add_argument(
        "--restart-model",
        nargs="+",
        choices=("constant", "linear"),
        default=None,
        help="restart cost: constant (--restart-minutes at every GPU count; the default) or "
        "linear in the GPU count (--restart-minutes at 600,000 GPUs); both: a grid axis",
    )
    parser.add_argument(
        "--grid",
        choices=("quick", "full"),
        default=None,
        help="start from the sweep report's quick or full grid for the axes not given",
    )
    parser.add_argument(
        "--outdir",
        default=None,
        help="also write sweep.csv|md (long form) and sweep_by_point.csv|md (one row per point) "
        "in this folder",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_executor_options(parser)
    add_json(parser)
    add_scenario_options(parser, several=True)
    parser.set_defaults(handler=_run)


def _report_grid(args: argparse.Namespace) -> None:
    """Fill the axes not given from the sweep report's grid (``--grid``)."""
    from ..reports.sweep import FULL_GRID, QUICK_GRID

    grid = QUICK_GRID if args.grid == "quick" else FULL_GRID
    for name in ("gpus", "gpu_mtbf_hours", "gpus_per_group"):
        if getattr(args, f"field_{name}") is None:
            setattr(args, f"field_{name}", list(grid[name]))
    if args.field_microbatches is None:
        args.field_microbatches = [1, *grid["microbatches"]]
    if args.restart_model is None:
        args.restart_model = list(grid["restart_model"])


def _with_restart_models(points: list[ScenarioPoint], models: list[str]) -> list[ScenarioPoint]:
    """Each hour-level point under each restart-cost model (the restart minutes as the anchor)."""
    from ..sweeps import scaled_restart_minutes

    out = []
    for point in points:
        sc = point.scenario
        for model in models:
            axes = point.axes | ({"restart_model": model} if len(models) > 1 else {})
            if model == "constant":
                out.append(ScenarioPoint(axes, sc))
                continue
            if not hasattr(sc, "restart_minutes"):
                raise ValueError("--restart-model linear scales hour-level scenarios only")
            if not sc.restart_minutes > 0:
                raise ValueError(
                    "--restart-minutes must be > 0 with --restart-model linear (the restart "
                    f"cost at 600,000 GPUs), got {sc.restart_minutes:g}"
                )
            minutes = float(
                scaled_restart_minutes(sc.gpus, model=model, anchor_minutes=sc.restart_minutes)
            )
            out.append(ScenarioPoint(axes, dataclasses.replace(sc, restart_minutes=minutes)))
    return out


def _plans_at(task: tuple[Any, tuple[str, ...]]) -> dict[str, dict[str, Any]]:
    """The plan records of every strategy at one point (a picklable map_tasks task)."""
    scenario, strategies = task
    return {s: plan_record(scenario, s) for s in strategies}


def _rows(scenario: Any, model: str, plans: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The long-form rows of one point: the scenario's fields and each plan, flattened."""
    base = scenario_record(scenario) | {"restart_model": model}
    rows = []
    for name, plan in plans.items():
        nested = ("curve", "breakdown_hours", "plan_variables", "variables", "caveats")
        row = base | {k: v for k, v in plan.items() if k not in nested}
        row |= plan.get("plan_variables", {})
        low, high = row.pop("r_within_1pct", (None, None))
        row |= {"r_within_1pct_low": low, "r_within_1pct_high": high}
        row |= {f"{part}_hours": h for part, h in plan.get("breakdown_hours", {}).items()}
        for other, theirs in plans.items():
            if other != name:
                both = plan.get("feasible") and theirs.get("feasible")
                row[f"reduction_vs_{other}"] = 1 - plan["hours"] / theirs["hours"] if both else None
        rows.append(row)
    return rows


_TITLE = "spare-theory sweep: the best plan of each strategy per point"


def _by_point(frame: Any) -> Any:
    """One row per point: the fields that vary, then ``r_<s>``, ``hours_<s>`` and the share."""
    share = "availability" if "availability" in frame else "total_over_T0"
    fields = [c for c in frame.columns[: frame.columns.get_loc("strategy")] if c != "level"]
    varying = [c for c in fields if frame[c].astype(str).nunique() > 1] or ["N"]
    frame = frame.assign(point=frame.groupby(fields, sort=False, dropna=False).ngroup())
    wide = frame.pivot(index="point", columns="strategy", values=["r", "hours", share])
    wide.columns = [f"{q}_{s}" for q, s in wide.columns]
    order = list(dict.fromkeys(frame["strategy"]))
    wide = wide[[f"{q}_{s}" for s in order for q in ("r", "hours", share)]]
    return frame.drop_duplicates("point")[["point", *varying]].merge(wide, on="point")


def _run(args: argparse.Namespace) -> Output:
    import sys

    import pandas as pd

    from .._parallel import map_tasks
    from ..reports._io import write_table

    if args.grid is not None:
        _report_grid(args)
    models = args.restart_model or ["constant"]
    points = _with_restart_models(scenario_points(args, several=True), models)
    if len(points) == 1:
        print(
            "spare-theory: note: one point; give an option several values to sweep it "
            "(--gpus 1e5 6e5 1e6), or --grid quick",
            file=sys.stderr,
        )
    strategies = tuple(args.strategy)
    with executor_from_args(args) as executor:
        results = map_tasks(
            _plans_at,
            [(p.scenario, strategies) for p in points],
            executor=executor,
            desc="sweep points",
            progress=not args.no_progress,
        )
    lines, rows, warnings = [], [], []
    for point, plans in zip(points, results):
        model = point.axes.get("restart_model", models[0])
        rows += _rows(point.scenario, model, plans)
        shown = ", ".join(f"{k}={value_text(v)}" for k, v in point.axes.items()) or "the one point"
        lines += [f"{shown}:", *plans_text(plans, point.scenario)]
        if (warning := left_out_warning(point.scenario)) and warning not in warnings:
            warnings.append(warning)
    frame = pd.DataFrame(rows)
    if args.outdir is not None:
        notes = (
            "reduction_vs_<s> = 1 - hours / hours of strategy s at the same point (a fraction); "
            "availability = work_hours / hours."
        )
        paths = [
            *write_table(frame, args.outdir, "sweep", title=_TITLE, notes=notes),
            *write_table(_by_point(frame), args.outdir, "sweep_by_point", title=_TITLE),
        ]
        lines += [f"wrote {p}" for p in paths]
    data = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return Output("\n".join(lines), data, warnings=tuple(warnings))
