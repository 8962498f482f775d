"""``spare-theory reproduce``: regenerate every table and figure."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import time
from pathlib import Path

from ..reports.reproduce import MANIFEST_DIR, REPORTS, reproduce
from ._common import Output, Subparsers, add_report_options, executor_from_args


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``reproduce`` to ``commands``."""
    parser = commands.add_parser(
        "reproduce",
        help="regenerate every table and figure",
        description="Runs the reports " + ", ".join(REPORTS) + " "
        "in turn, their cells spread over every core by a process pool (--serial: one "
        "process; same files), writing CSV and Markdown tables to OUTDIR/tables and PNG "
        "figures to OUTDIR/figures; prints the files and the seconds each report took. Files "
        "are written to a temporary file and renamed, so an interrupted run (Ctrl-C, kill) "
        "leaves no half-written table or figure; each completed report records a manifest "
        "(seed, --quick, version, file hashes) in "
        f"OUTDIR/{MANIFEST_DIR}/ that --resume uses to skip it.",
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
    lines = []
    data = {}
    with contextlib.ExitStack() as stack:
        executor = stack.enter_context(executor_from_args(args))
        if executor is None and not args.serial and (os.cpu_count() or 1) > 1:
            # Every core by default; one pool shared by all reports.  On Ctrl-C the
            # queued cells are cancelled, not run to the end.
            pool = concurrent.futures.ProcessPoolExecutor(os.cpu_count())
            stack.callback(pool.shutdown, wait=True, cancel_futures=True)
            executor = pool
        for name in args.only or REPORTS:
            manifest = Path(args.outdir) / MANIFEST_DIR / f"{name}.json"
            before = _stamp(manifest)
            start = time.perf_counter()
            paths = reproduce(
                args.outdir,
                quick=args.quick,
                executor=executor,
                seed=args.seed,
                progress=not args.no_progress,
                only=[name],
                resume=args.resume,
                workers=1,
            )
            seconds = time.perf_counter() - start
            # reproduce rewrites the manifest of every report it runs; an untouched one was kept.
            kept = before is not None and _stamp(manifest) == before
            how = "kept from a previous run (same seed and sizes)" if kept else "written"
            lines.append(f"{name}: {len(paths)} files {how} in {seconds:.1f} s")
            lines.extend(f"  {p}" for p in paths)
            data[name] = {"seconds": seconds, "resumed": kept, "files": [str(p) for p in paths]}
    return Output("\n".join(lines), data)


def _stamp(path: Path) -> tuple[int, int] | None:
    """Inode and modification time of ``path`` (a rewrite by rename changes both), or None."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns
