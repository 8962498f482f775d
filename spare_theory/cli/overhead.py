"""``spare-theory overhead``: average stack overhead, closed forms and simulation."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, add_design_options

#: Wall-clock budget of the default simulation, seconds (``--time-budget``).
DEFAULT_TIME_BUDGET_SECONDS = 60.0
#: Trials simulated when the budget allows them (``--trials`` overrides).
DEFAULT_TRIALS = 100

_DESCRIPTION = """\
Average stack overhead S(N, r) of SPARe on the cyclic modular-ruler placement
of N groups with redundancy r: the mean step cost S* (in failure-free steps)
from a fresh start to the wipe-out, as a plain average over the failure index
and weighted by the time each state lasts.  Prints the closed forms and, unless
--trials 0, the exact simulation of that many failure sequences.

A trajectory costs about N r steps (seconds at N = 75,000): the first one is
timed, the estimate for all trials is printed before the rest run (with a
progress bar on stderr), and without --trials the number of trials is cut to
what fits in --time-budget seconds (default 60; the output says so).
--trials 0 gives the closed forms at once."""

_EPILOG = """\
output (--json keys):
  closed_form_failure  S averaged over the failure index, closed form (x a failure-free step)
  closed_form_time     S weighted by the time each state lasts, closed form
  mc_mean_failure      simulated per-failure average, with its standard error mc_se_failure
  mc_mean_time         simulated time-weighted average, with its standard error mc_se_time
  mc_mean_T            simulated mean number of failures up to the wipe-out (mu)
  max_S_star           largest S* seen in any simulated sequence"""


def configure_overhead(parser: argparse.ArgumentParser) -> None:
    """``spare-theory overhead``: its description and options."""
    parser.description = _DESCRIPTION
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_design_options(parser, trials=DEFAULT_TRIALS, what="trajectories")
    # None: the default, which the time budget may cut; an explicit --trials is always run.
    parser.set_defaults(trials=None)
    parser.add_argument(
        "--time-budget",
        type=float,
        default=DEFAULT_TIME_BUDGET_SECONDS,
        help=f"seconds the default simulation may take (default {DEFAULT_TIME_BUDGET_SECONDS:g}); "
        f"fewer than {DEFAULT_TRIALS} trials are run when one trajectory is too slow",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(handler=_overhead)


def _overhead(args: argparse.Namespace) -> Output:
    # Imported here so that the CLI starts fast.
    from .._validation import as_seed_sequence
    from ..placement.placements import cyclic_placement
    from ..stacking.overhead import overhead

    explicit = args.trials is not None
    trials = args.trials if explicit else DEFAULT_TRIALS
    if trials < 0:
        raise ValueError(f"--trials must be >= 0, got {trials}")
    if not args.time_budget > 0:
        raise ValueError(f"--time-budget must be > 0 seconds, got {args.time_budget}")
    # Checked even when --trials 0 skips the simulation: a bad seed is never accepted silently.
    seed = as_seed_sequence(args.seed)
    data: dict[str, Any] = {"N": args.N, "r": args.r}
    for weighting in ("failure", "time"):
        data[f"closed_form_{weighting}"] = overhead(args.N, args.r, weighting)
    lines = [
        f"N={args.N} r={args.r}",
        f"  closed form: per failure {data['closed_form_failure']:.4f}x, "
        f"time weighted {data['closed_form_time']:.4f}x",
    ]
    if trials:
        run = _simulate(
            cyclic_placement(args.N, args.r),
            trials,
            seed,
            budget=None if explicit else args.time_budget,
            progress=not args.no_progress,
        )
        for weighting in ("failure", "time"):
            samples = run[weighting]
            data[f"mc_mean_{weighting}"] = float(samples.mean())
            data[f"mc_se_{weighting}"] = (
                float(samples.std(ddof=1) / samples.size**0.5) if samples.size > 1 else None
            )
        data.update(
            trials=int(run["T"].size),
            seed=args.seed,
            mc_mean_T=float(run["T"].mean()),
            max_S_star=int(run["max_stacks"].max()),
            seconds=run["seconds"],
        )
        lines.append(
            f"  simulation ({data['trials']} trials, seed {args.seed}): per failure "
            f"{data['mc_mean_failure']:.4f}x, time weighted {data['mc_mean_time']:.4f}x, "
            f"mean T {data['mc_mean_T']:.1f}, largest S* {data['max_S_star']}"
        )
        if data["trials"] < trials:
            data["trials_cut_from"] = trials
            lines.append(
                f"  (cut from {trials} to {data['trials']} trials to fit the "
                f"{args.time_budget:g} s budget: one trajectory took "
                f"{run['first_seconds']:.2g} s; --trials {trials} runs them all, "
                "--trials 0 gives the closed form at once)"
            )
    return Output("\n".join(lines), data)


def _simulate(
    hosts: Any, trials: int, seed: Any, *, budget: float | None, progress: bool
) -> dict[str, Any]:
    """:func:`~spare_theory.stacking.overhead.simulate_overhead`, one trial at a time.

    Trial ``i`` draws its order from ``child_seed(seed, i)`` exactly as
    ``simulate_overhead`` does, so the samples equal its first ``trials``
    (tests/test_cli_overhead.py checks it).  The first trajectory is timed;
    the estimate for all trials goes to stderr before the rest run, and with
    a ``budget`` (seconds) the trials are cut to what fits in it.
    """
    import sys
    import time

    import numpy as np

    from .._parallel import progress_bar
    from .._validation import child_seed
    from ..stacking.overhead import stacks_trajectory

    N = hosts.shape[0]
    weights = 1.0 / (N - np.arange(N, dtype=float))
    out: dict[str, list[float]] = {"T": [], "failure": [], "time": [], "max_stacks": []}
    start = time.perf_counter()
    first = 0.0
    with progress_bar(trials, "trajectories", progress) as bar:
        for i in range(trials):
            order = np.random.default_rng(child_seed(seed, i)).permutation(N)
            trajectory = stacks_trajectory(hosts, order)
            w = weights[: trajectory.size]
            out["T"].append(trajectory.size)
            out["failure"].append(float(trajectory.mean()))
            out["time"].append(float(w @ trajectory / w.sum()))
            out["max_stacks"].append(int(trajectory[-1]))
            bar.update(1)
            if i == 0:
                first = time.perf_counter() - start
                if budget is not None:
                    trials = min(trials, max(2, int(budget // max(first, 1e-9))))
                    bar.total = trials
                if first * trials > 5:
                    bar.write(
                        f"overhead: one trajectory took {first:.2g} s; {trials} trials will take "
                        f"about {first * trials:.0f} s (--trials 0: the closed form at once)",
                        file=sys.stderr,
                    )
            if i + 1 >= trials:
                break
    result: dict[str, Any] = {k: np.asarray(v) for k, v in out.items()}
    result.update(seconds=time.perf_counter() - start, first_seconds=first)
    return result
