"""``spare-theory table domains``: placements under correlated failures, and lemon groups."""

from __future__ import annotations

from ._common import Subparsers, add_table_parser


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``domains`` to ``tables`` (no top-level command)."""
    add_table_parser(
        tables,
        "domains",
        help="failure domains and lemons: placement ablation, closed form, r*",
        description="Writes OUTDIR/tables/domain_ablation (ruler, contiguous, random and "
        "domain-aware placements for domain sizes 1-64 and shares of failures from domain "
        "events 0-50 %: endured failures, wipe-out time, mean and worst S*, time to train), "
        "domain_closed_form and lemons (.csv, .md) and the figure domain_ablation.",
    )
