"""``spare-theory audit``: the closed forms against the simulation over random scenarios.

Draws scenarios from an :class:`~spare_theory.audit.space.AuditSpace` (the
default, or ``--space FILE.toml``), plans every strategy by the model, simulates
each model answer at its own plan and prints the errors overall, by optional
field and by strategy, and the worst cells with the index that re-runs each
(``--index``).  ``--out FOLDER`` also writes the tables and figure of
``spare-theory table audit`` there.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ._common import Output, add_executor_options, add_json, add_seed, executor_from_args, integral

_DESCRIPTION = (
    "Audit the closed forms: draw SCENARIOS scenarios at random from the audit space (8-64 "
    "groups of 8-32 GPUs, group MTBF 3-60 h, restarts 2-40 min, checkpoints 0.2-5 min, "
    "Weibull lifetimes, repairs, spare pools, failure domains, lemons, step-level scenarios; "
    "--space FILE.toml sets another), plan every strategy with method='model', simulate each "
    "model answer at that very plan (TRIALS runs, common random numbers across strategies) "
    "and report the relative error: median, 90th percentile, worst, share outside 3 % and 3 "
    "standard errors, share refused, warnings; overall, by optional field and by strategy."
)


def configure_audit(parser: argparse.ArgumentParser) -> None:
    """``spare-theory audit``: its description and options."""
    parser.description = _DESCRIPTION
    parser.add_argument(
        "--scenarios",
        type=integral,
        default=100,
        help="scenarios 0 .. SCENARIOS-1 of the seed (default 100: about 350 cells)",
    )
    parser.add_argument(
        "--index",
        type=integral,
        nargs="+",
        default=None,
        help="audit exactly these scenario indices (re-run a cell of a table)",
    )
    parser.add_argument(
        "--trials", type=integral, default=40, help="simulated runs per model answer (default 40)"
    )
    parser.add_argument(
        "--strategy",
        nargs="+",
        default=None,
        help="strategies to audit (default: every registered one)",
    )
    parser.add_argument("--space", default=None, help="a TOML file setting the audit space")
    parser.add_argument(
        "--worst", type=integral, default=10, help="worst cells to list (default 10)"
    )
    parser.add_argument(
        "--out", default=None, help="also write tables/audit*.{csv,md} and figures/audit.png here"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_seed(parser)
    add_executor_options(parser)
    add_json(parser)
    parser.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace) -> Output:
    from ..audits.run import audit
    from ..audits.space import AuditSpace

    space = AuditSpace() if args.space is None else AuditSpace.from_toml(args.space)
    with executor_from_args(args) as executor:
        result = audit(
            space,
            scenarios=args.scenarios,
            indices=args.index,
            trials=args.trials,
            seed=args.seed,
            strategies=args.strategy,
            executor=executor,
            progress=not args.no_progress,
        )
    text = result.summary()
    worst = result.worst(args.worst)
    if args.out is not None:
        from pathlib import Path

        from ..reports._io import save_figure, write_table
        from ..reports.audit import cells_table, figure, summary_percent

        out = Path(args.out)
        written = [
            *write_table(summary_percent(result), out / "tables", "audit"),
            *write_table(cells_table(result), out / "tables", "audit_cells"),
            save_figure(figure(result), out / "figures", "audit"),
        ]
        text += "\n\nWrote " + ", ".join(str(p) for p in written)
    return Output(
        text,
        {
            "seed": args.seed,
            "trials": result.trials,
            "summary": _records(result.summary_table()),
            "worst": _records(worst.drop(columns=["scenario"])),
            "cells": _records(result.cells),
        },
    )


def _records(frame: Any) -> list[dict[str, Any]]:
    """Rows as JSON-able dicts (NaN and None as null, numpy scalars as Python's)."""
    rows = []
    for row in frame.to_dict(orient="records"):
        clean = {}
        for key, value in row.items():
            if hasattr(value, "item"):
                value = value.item()
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            clean[key] = value
        rows.append(clean)
    return rows
