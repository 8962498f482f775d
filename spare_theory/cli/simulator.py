"""``spare-theory table simulator``: the published simulator's cells and the paper's table."""

from __future__ import annotations

import argparse

from ._common import Output, Subparsers, add_table_parser, executor_from_args, report_output


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``simulator`` to ``tables`` (no top-level command)."""
    parser = add_table_parser(
        tables,
        "simulator",
        help="the published simulator: every published cell, and the paper's own table",
        description="Writes OUTDIR/tables/simulator (every cell of the published simulator's "
        "per-run means: published, our event simulation, our closed form, errors, pass/fail "
        "with the criterion in the header) and paper_table (the SPARe paper's Weibull table "
        "at the paper's plans and at our optimiser's) (.csv, .md), and the figure simulator. "
        "Default: 11 representative cells simulated with 2 trials (a few minutes on 2 cores); "
        "--quick: model only and one Rep cell; --full: every cell, 4 trials (SPARe at "
        "N = 1000 costs 10-40 s per trial: tens of minutes).",
        handler=_run,
    )
    parser.add_argument(
        "--full", action="store_true", help="simulate every published cell (4 trials each)"
    )


def _run(args: argparse.Namespace) -> Output:
    from ..reports.simulator import reproduce

    if args.full and args.quick:
        raise ValueError("--full and --quick exclude each other")
    with executor_from_args(args) as executor:
        paths = reproduce(
            args.outdir,
            quick=args.quick,
            executor=executor,
            seed=args.seed,
            progress=not args.no_progress,
            full=args.full,
        )
    return report_output(paths)
