"""``spare-theory reproduce``: regenerate every table and figure."""

from __future__ import annotations

import argparse
import time

from ..reports.reproduce import REPORTS, reproduce
from ._common import Output, Subparsers, add_report_options, executor_from_args


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``reproduce`` to ``commands``."""
    parser = commands.add_parser(
        "reproduce",
        help="regenerate every table and figure",
        description="Runs the reports " + ", ".join(REPORTS) + " in turn, writing CSV and "
        "Markdown tables to OUTDIR/tables and PNG figures to OUTDIR/figures; prints the "
        "files and the seconds each report took.",
    )
    parser.add_argument("--only", nargs="+", choices=REPORTS, help="run only these reports")
    add_report_options(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> Output:
    lines = []
    data = {}
    with executor_from_args(args) as executor:
        for name in args.only or REPORTS:
            start = time.perf_counter()
            paths = reproduce(
                args.outdir,
                quick=args.quick,
                executor=executor,
                seed=args.seed,
                progress=not args.no_progress,
                only=[name],
            )
            seconds = time.perf_counter() - start
            lines.append(f"{name}: {len(paths)} files in {seconds:.1f} s")
            lines.extend(f"  {p}" for p in paths)
            data[name] = {"seconds": seconds, "files": [str(p) for p in paths]}
    return Output("\n".join(lines), data)
