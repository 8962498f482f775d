"""``spare-theory reproduce``: regenerate every table and figure."""

from __future__ import annotations

from ..reports.reproduce import REPORTS, reproduce
from ._common import Output, add_report_options, executor_from_args


def register(commands, tables) -> None:
    parser = commands.add_parser("reproduce", help="regenerate every table and figure")
    parser.add_argument("--only", nargs="+", choices=REPORTS, help="run only these reports")
    add_report_options(parser)
    parser.set_defaults(handler=_run)


def _run(args) -> Output:
    with executor_from_args(args) as executor:
        done = reproduce(
            args.outdir,
            quick=args.quick,
            executor=executor,
            seed=args.seed,
            progress=not args.no_progress,
            only=args.only,
        )
    lines = []
    for name, (seconds, paths) in done.items():
        lines.append(f"{name}: {len(paths)} files in {seconds:.1f} s")
        lines.extend(f"  {p}" for p in paths)
    data = {
        name: {"seconds": s, "files": [str(p) for p in paths]} for name, (s, paths) in done.items()
    }
    return Output("\n".join(lines), data)
