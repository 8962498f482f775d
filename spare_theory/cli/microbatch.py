"""``spare-theory table microbatch``: the load with micro-batch splitting, model against exact."""

from __future__ import annotations

from ._common import Subparsers, add_table_parser


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``microbatch`` to ``tables`` (no top-level command)."""
    add_table_parser(
        tables,
        "microbatch",
        help="micro-batch splitting: closed-form load against exact loads",
        description="Writes OUTDIR/tables/microbatch_error (closed-form overhead with m pieces "
        "per shard against exact-load simulation, m = 1, 2, 4, 8, 16), microbatch_600k (time to "
        "train at 600k GPUs) and the figure microbatch_load.",
    )
