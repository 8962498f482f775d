"""``spare-theory plan JOB.toml``: a job's best plan per strategy, with its bill.

The job file (:mod:`spare_theory.jobs.files`, ``docs/jobs.md``) names the
model, the cluster and the prices; the command plans every strategy under
``--objective`` (hours, dollars or energy), prints each best plan with its
bill and its lost time by cause, and with ``--require EXPR`` (repeatable:
``availability>=0.9``, ``usd<=2e7``) exits with code 3 when the best plan
misses one, so that CI can gate on it.  The library is imported in the
handler only: ``spare-theory --help`` does not load it.
"""

from __future__ import annotations

import argparse
import math
import operator
import re
import textwrap
from collections.abc import Callable
from typing import Any

from ._common import (
    Output,
    UsageError,
    add_executor_options,
    add_json,
    add_seed,
    executor_from_args,
    integral,
    real,
)

__all__ = [
    "REQUIRE_NAMES",
    "Requirement",
    "configure_plan",
    "parse_requirement",
]

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "<": operator.lt,
    ">": operator.gt,
}
_REQUIREMENT = re.compile(r"^\s*([a-z_0-9]+)\s*(<=|>=|==|<|>)\s*(\S+)\s*$")
#: What ``--require`` may name: the best plan's figures and its bill's.
REQUIRE_NAMES = (
    "hours",
    "verified_hours",
    "availability",
    "uptime",
    "restarts",
    "r",
    "checkpoint_interval_minutes",
    "samples_skipped",
    "gpu_hours",
    "busy_gpu_hours",
    "usd",
    "verified_usd",
    "energy_mwh",
    "co2_tonnes",
    "useful_hours",
)
_WIDTH = 100
_CAUSES_SHORT = {
    "checkpoint_save": "ckpt save",
    "wasted_progress": "wasted",
    "restart": "restart",
    "redundant_compute": "redundant",
    "reconfiguration": "reconfig",
    "skipped_samples": "skipped",
    "idle_spares": "idle spares",
    "detection": "detection",
    "slowdown": "slowdown",
    "rollback": "rollback",
}
_CLASS_CAUSES = ("detection", "slowdown", "rollback")


class Requirement:
    """One ``--require`` expression, ``NAME OP NUMBER`` (parsed without ``eval``)."""

    def __init__(self, text: str, name: str, op: str, value: float) -> None:
        self.text, self.name, self.op, self.value = text, name, op, value

    def check(self, actual: float) -> bool:
        """Whether ``actual OP value`` holds."""
        return _OPERATORS[self.op](actual, self.value)


def parse_requirement(text: str) -> Requirement:
    """``NAME OP NUMBER`` with ``OP`` one of ``<= >= == < >`` and ``NAME`` in :data:`REQUIRE_NAMES`.

    Raises
    ------
    argparse.ArgumentTypeError
        For anything else (an unknown name, a missing operator, no number).

    Examples
    --------
    >>> req = parse_requirement("availability>=0.9")
    >>> req.name, req.op, req.value, req.check(0.95)
    ('availability', '>=', 0.9, True)
    >>> parse_requirement("__import__('os')")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not NAME OP NUMBER: "__import__('os')"
    """
    match = _REQUIREMENT.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not NAME OP NUMBER: {text!r}")
    name, op, number = match.groups()
    if name not in REQUIRE_NAMES:
        raise argparse.ArgumentTypeError(
            f"unknown name {name!r} in {text!r} (known: {', '.join(REQUIRE_NAMES)})"
        )
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {number!r} in {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {number!r} in {text!r}")
    return Requirement(text, name, op, value)


def configure_plan(parser: argparse.ArgumentParser) -> None:
    """``spare-theory plan``: its description and options."""
    from ..reports.changes import WHAT_IF_CHANGES  # the feature names, when the parser is built

    parser.description = (
        "Plan a job described by a TOML file ([job], [cost], optional [log] and "
        "[scenario]; docs/jobs.md) with every strategy, and price each best plan."
    )
    parser.add_argument("job_file", metavar="JOB.toml", help="the job file")
    parser.add_argument(
        "--objective",
        choices=("hours", "usd", "energy"),
        default="hours",
        help="what each plan minimises (default hours; dollars are proportional to hours)",
    )
    parser.add_argument(
        "--require",
        action="append",
        type=parse_requirement,
        default=[],
        metavar="EXPR",
        help="NAME OP NUMBER the best plan must meet, e.g. availability>=0.9 or usd<=2e7 "
        "(repeatable; exit code 3 when one is missed)",
    )
    parser.add_argument(
        "--strategy",
        nargs="+",
        default=None,
        metavar="NAME",
        help="strategies to plan (default: every registered one)",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="skip the simulation of each best plan and its neighbours (the model's hours only)",
    )
    parser.add_argument(
        "--rel-se",
        type=real,
        default=None,
        help="relative standard error of each verified plan's simulated mean hours "
        "(default: optimal_plan's, 0.005)",
    )
    parser.add_argument(
        "--max-trials",
        type=integral,
        default=None,
        help="most simulated runs per verified candidate (default: optimal_plan's, 512)",
    )
    parser.add_argument(
        "--what-if",
        nargs="*",
        default=None,
        metavar="CHANGE",
        help="also plan the job under each CHANGE and rank them by what they save: a feature "
        f"({', '.join(WHAT_IF_CHANGES)}), "
        "strategy:NAME, or FIELD=VALUE[,FIELD=VALUE] of the job or scenario (none named: every "
        "feature and strategy); with the best plan's sensitivity to the MTBF, restart, "
        "checkpoint and repair times halved and doubled (the model's plans; docs/jobs.md)",
    )
    add_seed(parser)
    add_executor_options(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument(
        "--plot",
        default=None,
        metavar="FILE.png",
        help="write the figure (with --what-if also FILE_what_if.png)",
    )
    add_json(parser)
    parser.set_defaults(handler=_handle)


def _best_values(plan: dict[str, Any]) -> dict[str, float]:
    """The numbers ``--require`` names, of one plan record."""
    values = {k: plan[k] for k in REQUIRE_NAMES if k in plan and plan[k] is not None}
    values.update({k: v for k, v in plan["bill"].items() if k in REQUIRE_NAMES})
    return values


def _handle(args: argparse.Namespace) -> Output:
    from pathlib import Path

    from ..jobs.files import load_job_file
    from ..reports.job_plan import job_figure, plan_scenario

    plot = None if args.plot is None else Path(args.plot)
    if plot is not None and plot.suffix != ".png":
        raise UsageError(f"--plot must name a .png file, got {args.plot!r}")
    spec = load_job_file(args.job_file)
    overrides = {**spec.scenario, **spec.log_options()}
    scenario = spec.job.scenario(failure_log=spec.failure_log(), **overrides)
    with executor_from_args(args) as executor:
        result = plan_scenario(
            scenario,
            spec.cost,
            objective=args.objective,
            strategies=args.strategy,
            verify=not args.no_verify,
            seed=args.seed,
            executor=executor,
            progress=not args.no_progress,
            **{k: v for k in ("rel_se", "max_trials") if (v := getattr(args, k)) is not None},
        )
    best = result["best"]
    checks = []
    for req in args.require:
        actual = None if best is None else _best_values(result["plans"][best]).get(req.name)
        met = actual is not None and req.check(actual)
        checks.append({"expression": req.text, "actual": actual, "met": met})
    result["requirements"] = checks
    text = _text(spec.job, scenario, result)
    worth = None
    if args.what_if is not None:
        worth = _what_if(args, spec, overrides)
        result["what_if"], result["sensitivity"] = (_records(t) for t in worth)
        text += "\n" + _what_if_text(*worth)
    if plot is not None:
        from ..reports._io import save_figure

        save_figure(job_figure(result), plot.parent, plot.stem)
        text += f"\nwrote {plot}"
        if worth is not None:
            from ..reports.what_if import what_if_figure

            save_figure(what_if_figure(*worth), plot.parent, f"{plot.stem}_what_if")
            text += f"\nwrote {plot.parent / (plot.stem + '_what_if.png')}"
    missed = [c["expression"] for c in checks if not c["met"]]
    return Output(text, result, exit_code=3 if missed else 0)


def _text(job: Any, scenario: Any, result: dict[str, Any]) -> str:
    from .plans import hours_text, minutes_text, scenario_text

    cost = result["cost"]
    lines = [
        f"job: {job.parameters:.4g} parameters ({job.state_bytes / 1e12:.4g} TB of state), "
        f"{job.gpus:,} {job.gpu.upper()} GPUs in groups of {job.gpus_per_group}, "
        f"{job.work_hours:,.6g} h of work",
    ]
    lines += textwrap.wrap(
        f"cost: ${cost['gpu_hour_usd']:g} per GPU-hour, {cost['busy_watts_per_gpu']:g} W busy "
        f"and {cost['idle_watts_per_gpu']:.4g} W idle per GPU, PUE {cost['pue']:g}, "
        f"{cost['kg_co2_per_kwh']:g} kg CO2 per kWh",
        _WIDTH,
    )
    lines.append(scenario_text(scenario))
    lines.append(f"best plan of each strategy (objective: {result['objective']}):")
    verified = result["verified"]
    rows = []
    for p in result["plans"].values():
        if not p["modelled"] or p["bill"] is None:
            rows.append([p["label"], *["-"] * (9 if verified else 7)])
            continue
        bill = p["bill"]
        checked = []
        if verified:
            checked = ["-", "-"]
            if "verified_hours" in bill:
                se = bill["verified_standard_error"]
                checked = [
                    f"{hours_text(bill['verified_hours'])} +- {se:.2g}",
                    f"{100 * p['model_error']:+.2f} %" if p["model_error"] is not None else "-",
                ]
        usd = bill.get("verified_usd", bill["usd"])
        rows.append(
            [
                p["label"],
                "-" if p["r"] is None else str(p["r"]),
                f"{minutes_text(p['checkpoint_interval_minutes'])} min",
                hours_text(p["hours"]),
                *checked,
                f"{p['availability']:.3f}",
                f"{usd / 1e6:,.4g}",
                f"{bill['energy_mwh']:,.4g}",
                f"{bill['co2_tonnes']:,.4g}",
            ]
        )
    headers = ["strategy", "r", "checkpoint every", "hours"]
    headers += ["simulated hours", "model error"] if verified else []
    headers += ["availability", "M$", "MWh", "t CO2"]
    lines += _table(headers, rows)
    if verified:
        lines += textwrap.wrap(
            "simulated hours: each best plan and its neighbours played on common random numbers "
            "(mean +- standard error); model error: the model's hours over them, minus 1; M$ at "
            "the simulated hours; MWh and t CO2 the model's; --no-verify skips it",
            _WIDTH,
            initial_indent="  ",
            subsequent_indent="  ",
        )
    lines.append("lost hours by cause (wall time; useful + lost = hours):")
    billed = [p for p in result["plans"].values() if p["modelled"] and p["bill"] is not None]
    # The failure classes' causes only where some plan has them (a crash noticed at once has
    # none), so the table keeps its width.
    causes = [
        c
        for c in _CAUSES_SHORT
        if c not in _CLASS_CAUSES or any(p["bill"]["badput_hours"][c] for p in billed)
    ]
    rows = [
        [p["label"], hours_text(p["bill"]["useful_hours"])]
        + [f"{p['bill']['badput_hours'][c]:,.4g}" for c in causes]
        for p in billed
    ]
    lines += _table(["strategy", "useful", *(_CAUSES_SHORT[c] for c in causes)], rows)
    for p in result["plans"].values():
        if not p["modelled"]:
            note = f"{p['label']}: no plan from the model: {p['reason']}"
        elif not p["feasible"]:
            note = f"{p['label']}: does not finish: {p['reason']}"
        else:
            notes = [f"{k} = {v} (chosen with r)" for k, v in p["plan_variables"].items()]
            notes += p["caveats"]  # a verified plan's: its measured error
            if not notes:
                continue
            note = f"{p['label']}: {'; '.join(notes)}"
        lines += textwrap.wrap(note, _WIDTH, initial_indent="  ", subsequent_indent="    ")
    best = result["best"]
    label = "none finishes" if best is None else result["plans"][best]["label"]
    lines.append(f"best plan ({result['objective']}): {label}")
    for check in result["requirements"]:
        actual = "no plan" if check["actual"] is None else f"{check['actual']:.6g}"
        verdict = "met" if check["met"] else "MISSED"
        lines.append(f"  require {check['expression']}: {actual}, {verdict}")
    return "\n".join(lines)


def _what_if(args: argparse.Namespace, spec: Any, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """``--what-if``: the changes ranked and the sensitivity, on the job as planned."""
    from ..reports.what_if import sensitivity, what_if

    given = dict(
        cost=spec.cost,
        objective=args.objective,
        strategies=args.strategy,
        scenario=overrides,
        failure_log=spec.failure_log(),
    )
    return what_if(spec.job, args.what_if or None, **given), sensitivity(spec.job, **given)


def _records(table: Any) -> list[dict[str, Any]]:
    """A table's rows for JSON: a run that never finishes has ``None`` numbers."""
    return [
        {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in row.items()}
        for row in table.to_dict("records")
    ]


def _what_if_text(changes: Any, sensitivities: Any) -> str:
    """The ranked changes and the sensitivity, as tables."""
    from .plans import hours_text

    key = {"hours": "hours", "usd": "usd", "energy": "energy_mwh"}[changes.attrs["objective"]]
    lines = [f"what each change saves against the job as given (model plans; by {key}):"]
    rows = []
    for row in changes.to_dict("records"):
        if row["strategy"] is None:
            rows.append([row["change"], "-", "-", "-", "-", "-", "-", "-"])
            continue
        rows.append(
            [
                row["change"],
                row["strategy"],
                "-" if row["r"] is None else str(row["r"]),
                hours_text(row["hours"]),
                f"{row['usd'] / 1e6:,.4g}",
                f"{row['energy_mwh']:,.4g}",
                f"{row['saved_hours']:+,.4g}",
                f"{100 * row['saved_share']:+.2f} %",
            ]
        )
    headers = ["change", "strategy", "r", "hours", "M$", "MWh", "saved h", "saved"]
    lines += _table(headers, rows)
    for row in changes.to_dict("records")[1:]:
        said = row["description"] if row["reason"] is None else f"no plan: {row['reason']}"
        lines += textwrap.wrap(
            f"{row['change']}: {said}", _WIDTH, initial_indent="  ", subsequent_indent="    "
        )
    base = sensitivities.attrs
    lines.append(
        f"sensitivity of the best plan ({base['base_strategy']}, "
        f"{hours_text(base['base_hours'])} h) to each input scaled:"
    )
    rows = [
        [
            row["input"],
            f"x {row['factor']:g}",
            f"{row['value']:.4g}",
            row["strategy"] or "-",
            hours_text(row["hours"]),
            f"{100 * row['change']:+.2f} %",
            "yes" if row["strategy_changed"] else "",
        ]
        for row in sensitivities.to_dict("records")
    ]
    lines += _table(["input", "factor", "value", "strategy", "hours", "change", "new best"], rows)
    return "\n".join(lines)


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    return [
        f"  {cells[0]:<{widths[0]}}" + "".join(f"  {c:>{w}}" for c, w in zip(cells[1:], widths[1:]))
        for cells in [headers, *rows]
    ]
