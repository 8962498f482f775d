"""``spare-theory mu``: endurable failures, theory and simulation."""

from __future__ import annotations

import argparse
import math
import textwrap
from typing import Any

from ._common import (
    Output,
    add_design_options,
)

_EPILOG = """\
output (--json keys):
  marks      the modular Golomb ruler of the placement
  gamma      published Gamma form Gamma(1+1/r) N^(1-1/r), failures
  sharp      this package's sharp form sum_f P(T > f), failures
  mc_mean_T  simulated mean of T, with its standard error mc_se_T"""


def configure_mu(parser: argparse.ArgumentParser) -> None:
    """``spare-theory mu``: its description and options."""
    parser.description = (
        "mu(N, r) = E[T], the failures a cyclic modular-ruler placement of N groups "
        "with redundancy r endures up to and including the one that wipes out a shard type."
    )
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_design_options(parser, trials=2000, what="failure orders")
    parser.set_defaults(handler=_run_mu)


def _run_mu(args: argparse.Namespace) -> Output:
    # Imported here so that the CLI starts fast and --help works without the model layers.
    from .._validation import as_seed_sequence
    from ..placement.placements import MAX_PLACEMENT_BYTES, cyclic_placement
    from ..placement.rulers import modular_ruler
    from ..wipeout.expansion import endurable_failures_gamma
    from ..wipeout.law import endurable_failures
    from ..wipeout.simulation import simulate_wipeout

    as_seed_sequence(args.seed, "--seed")
    if args.trials < 0:
        raise ValueError(f"--trials must be >= 0 (0 skips the simulation), got {args.trials}")
    # Sized before anything is allocated: the simulation holds the N x r placement.
    if args.trials and args.N > 0 and args.r > 0 and 8 * args.N * args.r > MAX_PLACEMENT_BYTES:
        raise ValueError(
            f"--N {args.N} --r {args.r}: simulating needs the {args.N} x {args.r} placement, "
            f"{8 * args.N * args.r / 2**30:.3g} GiB (more than "
            f"{MAX_PLACEMENT_BYTES / 2**30:g} GiB); --trials 0 gives the closed forms at once"
        )
    marks = modular_ruler(args.N, args.r)
    data: dict[str, Any] = {
        "N": args.N,
        "r": args.r,
        "marks": list(marks),
        "gamma": float(endurable_failures_gamma(args.N, args.r)),
        "sharp": float(endurable_failures(args.N, args.r)),
    }
    head = f"mu(N={args.N}, r={args.r}), cyclic placement on marks {' '.join(map(str, marks))}"
    lines = [
        *textwrap.wrap(head, 100, subsequent_indent="    "),
        f"  Gamma form  Gamma(1+1/r) N^(1-1/r) = {data['gamma']:.6g}",
        f"  sharp form  sum_f P(T > f)         = {data['sharp']:.6g}",
    ]
    if args.trials:
        T = simulate_wipeout(
            cyclic_placement(args.N, args.r, marks=marks), args.trials, seed=args.seed
        )
        se = float(T.std(ddof=1) / math.sqrt(T.size)) if T.size > 1 else math.nan
        data.update(mc_mean_T=float(T.mean()), mc_se_T=se, trials=args.trials, seed=args.seed)
        lines.append(
            f"  Monte Carlo ({args.trials} trials)      = {data['mc_mean_T']:.6g} "
            f"+- {se:.3g} (1 SE)"
        )
    text = "\n".join(lines)
    return Output(text, data)
