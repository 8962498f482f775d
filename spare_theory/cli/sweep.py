"""``spare-theory sweep``: best plans of every strategy over a grid of scenarios."""

from __future__ import annotations

import argparse

from ._common import Output, Subparsers, add_executor_options, add_json, executor_from_args

_EPILOG = """\
output columns (one row per grid point; --json gives the long form, one record per
point and strategy, with r, checkpoint_interval_minutes, hours, availability and
reduction_vs_best_rep):
  N                            data-parallel groups, gpus // gpus_per_group
  restart_minutes              restart cost R at this point under its restart model
                               (--restart-minutes at every point when constant)
  cluster_mtbf_minutes         mean minutes between failures of the grouped GPUs
  r_<strategy>, hours_<strategy>  best redundancy and expected hours of ckpt, rep, spare
  reduction_vs_best_rep_spare  1 - hours_spare / hours_rep (a fraction)
  availability_spare           work_hours / hours_spare: useful training / wall time
  *_spare_m<m>                 the same for SPARe with m micro-batches per shard
                               (--microbatches)
  spare_is_plain_checkpointing r_spare == 1: the best SPARe plan keeps one copy per shard,
                               i.e. it is plain checkpointing (CKPT-only's hours)"""


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``sweep`` to ``commands``."""
    parser = commands.add_parser(
        "sweep",
        help="best plan of each strategy over GPUs x MTBF x group size x restart model",
        description="Best plan (r, checkpoint interval) of CKPT-only, Rep+CKPT and SPARe+CKPT "
        "at every point of a grid. Each grid axis takes one or more values; the defaults are "
        "the quick grid of 'spare-theory reproduce --quick' (4 GPU counts, H100 MTBF x "
        "0.5/1/2, 2048 GPUs per group, both restart models). --restart-minutes R sets the restart "
        "cost (constant R min unless --restart-model linear: R min at 600,000 GPUs).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--gpus", type=int, nargs="+", default=None, help="GPU counts")
    parser.add_argument(
        "--gpu-mtbf-hours", type=float, nargs="+", default=None, help="per-GPU MTBF values, hours"
    )
    parser.add_argument(
        "--gpus-per-group", type=int, nargs="+", default=None, help="GPUs per data-parallel group"
    )
    parser.add_argument(
        "--restart-model",
        nargs="+",
        choices=("constant", "linear"),
        default=None,
        help="restart cost: constant (R min at every GPU count) or linear in GPUs (R min at "
        "600,000 GPUs); default both, or constant alone when --restart-minutes is given",
    )
    parser.add_argument(
        "--restart-minutes",
        type=float,
        default=None,
        help="restart cost R in minutes (default 60, the SPARe paper's figure at 600,000 GPUs)",
    )
    parser.add_argument(
        "--checkpoint-minutes", type=float, default=5.0, help="checkpoint cost, minutes (default 5)"
    )
    parser.add_argument(
        "--work-hours", type=float, default=720.0, help="failure-free run time, hours (default 720)"
    )
    parser.add_argument(
        "--microbatches",
        type=int,
        nargs="+",
        default=(),
        metavar="M",
        help="also plan SPARe with each failed group's shard cut into M micro-batches "
        "computed by its surviving hosts (M >= 2; e.g. 4 16 1024); default none",
    )
    parser.add_argument(
        "--outdir",
        default=None,
        help="also write tables/sweep.csv|md and sweep_by_point.csv|md here",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_executor_options(parser)
    add_json(parser)
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> Output:
    # Imported here so that the CLI starts fast and --help works without the model layers.
    from ..reports._io import markdown_table, write_table
    from ..reports.sweep import QUICK_GRID
    from ..sweeps import by_point, sweep

    grid = {
        "gpus": args.gpus or QUICK_GRID["gpus"],
        "gpu_mtbf_hours": args.gpu_mtbf_hours or QUICK_GRID["gpu_mtbf_hours"],
        "gpus_per_group": args.gpus_per_group or QUICK_GRID["gpus_per_group"],
        "restart_model": args.restart_model
        or (["constant"] if args.restart_minutes is not None else QUICK_GRID["restart_model"]),
    }
    anchor = {}
    if args.restart_minutes is not None:
        if not args.restart_minutes > 0:
            raise ValueError(f"--restart-minutes must be > 0, got {args.restart_minutes}")
        anchor["restart_anchor_minutes"] = args.restart_minutes
    with executor_from_args(args) as executor:
        frame = sweep(
            **grid,
            checkpoint_minutes=args.checkpoint_minutes,
            work_hours=args.work_hours,
            microbatches=args.microbatches,
            **anchor,
            executor=executor,
            progress=not args.no_progress,
        )
    wide = by_point(frame)
    text = markdown_table(wide)
    if args.outdir is not None:
        paths = [
            *write_table(frame, args.outdir, "sweep"),
            *write_table(wide, args.outdir, "sweep_by_point"),
        ]
        text += "\n" + "\n".join(f"wrote {p}" for p in paths)
    return Output(text, frame.to_dict(orient="records"))
