"""``spare-theory overhead`` and ``spare-theory table overhead``."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, Subparsers, add_design_options, add_table_parser

_DESCRIPTION = """\
Average stack overhead S(N, r) of SPARe on the cyclic modular-ruler placement
of N groups with redundancy r: the mean step cost S* (in failure-free steps)
from a fresh start to the wipe-out, as a plain average over the failure index
and weighted by the time each state lasts.  Prints the closed forms and, unless
--trials 0, the exact simulation of that many failure sequences."""

_EPILOG = """\
output (--json keys):
  closed_form_failure  S averaged over the failure index, closed form (x a failure-free step)
  closed_form_time     S weighted by the time each state lasts, closed form
  mc_mean_failure      simulated per-failure average, with its standard error mc_se_failure
  mc_mean_time         simulated time-weighted average, with its standard error mc_se_time
  mc_mean_T            simulated mean number of failures up to the wipe-out (mu)
  max_S_star           largest S* seen in any simulated sequence"""


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``overhead`` to ``commands`` and ``overhead`` to ``tables``."""
    parser = commands.add_parser(
        "overhead",
        help="average stack overhead S(N, r): closed forms and simulation",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_design_options(parser, trials=100, what="trajectories")
    parser.set_defaults(handler=_overhead)

    add_table_parser(
        tables,
        "overhead",
        help="overhead closed forms versus simulation, placement ablation",
        description="Writes OUTDIR/tables/overhead_error.{csv,md}, placement_ablation.{csv,md} "
        "and the figures overhead, overhead_trajectory and placement_ablation.",
    )


def _overhead(args: argparse.Namespace) -> Output:
    # Imported here so that the CLI starts fast.
    from .._validation import as_seed_sequence
    from ..average_overhead import overhead, simulate_overhead
    from ..placement import cyclic_placement

    if args.trials < 0:
        raise ValueError(f"--trials must be >= 0, got {args.trials}")
    # Checked even when --trials 0 skips the simulation: a bad seed is never accepted silently.
    as_seed_sequence(args.seed)
    data: dict[str, Any] = {"N": args.N, "r": args.r}
    for weighting in ("failure", "time"):
        data[f"closed_form_{weighting}"] = overhead(args.N, args.r, weighting)
    lines = [
        f"N={args.N} r={args.r}",
        f"  closed form: per failure {data['closed_form_failure']:.4f}x, "
        f"time weighted {data['closed_form_time']:.4f}x",
    ]
    if args.trials:
        s = simulate_overhead(cyclic_placement(args.N, args.r), args.trials, seed=args.seed)
        for weighting, samples in (("failure", s.per_failure), ("time", s.time_weighted)):
            data[f"mc_mean_{weighting}"] = float(samples.mean())
            data[f"mc_se_{weighting}"] = (
                float(samples.std(ddof=1) / samples.size**0.5) if samples.size > 1 else None
            )
        data.update(
            trials=args.trials,
            seed=args.seed,
            mc_mean_T=float(s.T.mean()),
            max_S_star=int(s.max_stacks.max()),
        )
        lines.append(
            f"  simulation ({args.trials} trials, seed {args.seed}): per failure "
            f"{data['mc_mean_failure']:.4f}x, time weighted {data['mc_mean_time']:.4f}x, "
            f"mean T {data['mc_mean_T']:.1f}, largest S* {data['max_S_star']}"
        )
    return Output("\n".join(lines), data)
