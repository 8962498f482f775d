"""``spare-theory table repairs``: best plans against repair time at 600k GPUs, wipe-out check."""

from __future__ import annotations

from ._common import Subparsers, add_table_parser


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``repairs`` to ``tables`` (no top-level command)."""
    add_table_parser(
        tables,
        "repairs",
        help="repairs and planned restarts: best plans at 600k GPUs, wipe-out model check",
        description="Writes OUTDIR/tables/repairs_600k (best plan of each strategy against "
        "repair time, 1 min to never, groups of 2048 and 1024 GPUs, smallest r within 1 %, "
        "planned restarts), repairs_wipeout (mean time to wipe-out, model against simulation) "
        "and the figure repairs_600k.",
    )
