"""``spare-theory reproduce``: regenerate every table and figure."""

from __future__ import annotations

import argparse
import os
import resource
import time
from typing import Any

from ..reports.catalogue import REPORTS
from ..reports.reproduce import MANIFEST_DIR, run_reports
from ._common import Output, add_report_options, executor_from_args


def configure_reproduce(parser: argparse.ArgumentParser) -> None:
    """``spare-theory reproduce``: its description and options."""
    parser.description = (
        "Runs the reports " + ", ".join(REPORTS) + " "
        "side by side, longest first, each spreading its cells over every core by a process "
        "pool (--serial: one process; --workers/--scheduler: the reports in turn on Dask; "
        "the same files either way), writing CSV and Markdown tables to OUTDIR/tables and PNG "
        "figures to OUTDIR/figures; prints the files, the seconds each report took, and the "
        "run's wall time and CPU share. Files are written to a temporary file and renamed, "
        "so an interrupted run (Ctrl-C, kill) "
        "leaves no half-written table or figure; each completed report records a manifest "
        "(seed, --quick, version, file hashes) in "
        f"OUTDIR/{MANIFEST_DIR}/ that --resume uses to skip it."
    )
    parser.add_argument("--only", nargs="+", choices=REPORTS, help="run only these reports")
    parser.add_argument(
        "--serial",
        action="store_true",
        help="run every cell in this process (default without --workers/--scheduler: a "
        "process pool over every core; the files are identical either way)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the reports already written to OUTDIR for the same --seed and --quick "
        "(and package version) whose files are unchanged, instead of recomputing them",
    )
    add_report_options(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> Output:
    cpu_before = _cpu_seconds()
    start = time.perf_counter()
    with executor_from_args(args) as executor:
        runs = run_reports(
            args.outdir,
            quick=args.quick,
            executor=executor,
            seed=args.seed,
            progress=not args.no_progress,
            only=args.only,
            resume=args.resume,
            workers=1 if args.serial else None,
        )
    wall = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu_before
    lines = []
    data: dict[str, Any] = {}
    for run in runs:
        how = "kept from a previous run (same seed and sizes)" if run.kept else "written"
        lines.append(f"{run.name}: {len(run.files)} files {how} in {run.seconds:.1f} s")
        lines.extend(f"  {p}" for p in run.files)
        data[run.name] = {
            "seconds": run.seconds,
            "resumed": run.kept,
            "files": [str(p) for p in run.files],
        }
    cores = os.cpu_count() or 1
    # CPU of this process and its reaped descendants (the pools' processes); a
    # Dask cluster's workers are not counted.
    lines.append(
        f"{len(runs)} reports in {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"({100 * cpu / wall:.0f} % of one core; {cores} cores)"
    )
    return Output("\n".join(lines), data)


def _cpu_seconds() -> float:
    """User and system seconds of this process and of its children that have ended."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total
