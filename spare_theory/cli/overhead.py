"""``spare-theory overhead`` and ``spare-theory table overhead``."""

from __future__ import annotations

from ._common import Output, add_design_options, add_table_parser


def register(commands, tables) -> None:
    parser = commands.add_parser(
        "overhead", help="average stack overhead S(N, r): closed forms and simulation"
    )
    add_design_options(parser, trials=100, what="trajectories")
    parser.set_defaults(handler=_overhead)

    add_table_parser(
        tables, "overhead", help="overhead closed forms versus simulation, placement ablation"
    )


def _overhead(args) -> Output:
    # Imported here so that the CLI starts fast.
    from .._validation import as_seed_sequence
    from ..average_overhead import overhead, simulate_overhead
    from ..placement import cyclic_placement

    if args.trials < 0:
        raise ValueError(f"--trials must be >= 0, got {args.trials}")
    # Checked even when --trials 0 skips the simulation: a bad seed is never accepted silently.
    as_seed_sequence(args.seed)
    data = {"N": args.N, "r": args.r}
    for weighting in ("failure", "time"):
        data[f"closed_form_{weighting}"] = overhead(args.N, args.r, weighting)
    lines = [
        f"N={args.N} r={args.r}",
        f"  closed form: per failure {data['closed_form_failure']:.4f}x, time weighted {data['closed_form_time']:.4f}x",
    ]
    if args.trials:
        s = simulate_overhead(cyclic_placement(args.N, args.r), args.trials, seed=args.seed)
        for weighting, samples in (("failure", s.per_failure), ("time", s.time_weighted)):
            data[f"simulated_{weighting}"] = float(samples.mean())
            data[f"se_{weighting}"] = (
                float(samples.std(ddof=1) / samples.size**0.5) if samples.size > 1 else None
            )
        data.update(
            trials=args.trials,
            seed=args.seed,
            mean_T=float(s.T.mean()),
            largest_S_star=int(s.max_stacks.max()),
        )
        lines.append(
            f"  simulation ({args.trials} trials, seed {args.seed}): per failure "
            f"{data['simulated_failure']:.4f}x, time weighted {data['simulated_time']:.4f}x, "
            f"mean T {data['mean_T']:.1f}, largest S* {data['largest_S_star']}"
        )
    return Output("\n".join(lines), data)
