"""``spare-theory table trace``: the shipped failure log, fitted models against its replay."""

from __future__ import annotations

from ._common import Subparsers, add_table_parser


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``trace`` to ``tables`` (no top-level command)."""
    add_table_parser(
        tables,
        "trace",
        help="the StepFun trace at 100k and 600k GPUs: fitted models against the replayed log",
        description="Writes OUTDIR/tables/trace (each strategy's plan from the full fitted "
        "model; the model with the exponential, Weibull and Weibull + lemons + bursts laws "
        "against the event simulation replaying the trace's own faults and repairs, with "
        "bursts kept and broken) and trace_spares (spare nodes for a 1 % and 0.1 % "
        "shortage: Poisson against the replayed log), and prints a verdict line.",
    )
