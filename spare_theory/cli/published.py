"""``spare-theory table published``: published pre-training runs beside the prediction."""

from __future__ import annotations

from ._common import Subparsers, add_table_parser


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``published`` to ``tables`` (no top-level command)."""
    add_table_parser(
        tables,
        "published",
        help="Llama 3, OPT, BLOOM, GLM-130B, MegaScale: reported failures and ETT beside "
        "the toolkit's prediction",
        description="Writes OUTDIR/tables/published (.csv, .md): each published run's "
        "GPUs, days, interruptions, checkpoint interval and costs where reported, and "
        "effective training time, beside the CKPT-only prediction at the reported failure "
        "rate (a Job per run), and the restart or checkpoint cost (MegaScale: the run "
        "length) at which the prediction equals the reported figure.",
    )
