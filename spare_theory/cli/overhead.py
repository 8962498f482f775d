"""``spare-theory overhead`` and ``spare-theory table overhead``."""

from __future__ import annotations

from ._common import Output, add_executor_options, add_json, add_seed, executor_from_args


def register(commands, tables) -> None:
    parser = commands.add_parser("overhead", help="average stack overhead S(N, r): closed forms and simulation")
    parser.add_argument("--N", type=int, required=True, help="number of data-parallel groups")
    parser.add_argument("--r", type=int, required=True, help="redundancy (shards per group)")
    parser.add_argument("--trials", type=int, default=100, help="simulated trajectories (default 100; 0 skips)")
    add_seed(parser)
    add_json(parser)
    parser.set_defaults(handler=_overhead)

    table = tables.add_parser("overhead", help="overhead closed forms versus simulation, placement ablation")
    table.add_argument("--quick", action="store_true", help="small grid and sample sizes (seconds)")
    table.add_argument("--outdir", default=".", help="folder that receives tables/ and figures/ (default .)")
    table.add_argument("--no-progress", action="store_true", help="hide progress bars")
    add_seed(table)
    add_executor_options(table)
    add_json(table)
    table.set_defaults(handler=_table)


def _overhead(args) -> Output:
    # Imported here so that the CLI starts fast.
    from ..overhead import overhead, simulate_overhead
    from ..placement import cyclic_placement

    if args.trials < 0:
        raise ValueError(f"--trials must be >= 0, got {args.trials}")
    data = {"N": args.N, "r": args.r}
    for weighting in ("failure", "time"):
        data[f"closed_form_{weighting}"] = overhead(args.N, args.r, weighting)
    lines = [f"N={args.N} r={args.r}",
             f"  closed form: per failure {data['closed_form_failure']:.4f}x, time weighted {data['closed_form_time']:.4f}x"]
    if args.trials:
        s = simulate_overhead(cyclic_placement(args.N, args.r), args.trials, seed=args.seed)
        for weighting, samples in (("failure", s.per_failure), ("time", s.time_weighted)):
            data[f"simulated_{weighting}"] = float(samples.mean())
            data[f"se_{weighting}"] = float(samples.std(ddof=1) / samples.size**0.5) if samples.size > 1 else None
        data.update(trials=args.trials, seed=args.seed, mean_T=float(s.T.mean()), largest_S_star=int(s.max_stacks.max()))
        lines.append(f"  simulation ({args.trials} trials, seed {args.seed}): per failure "
                     f"{data['simulated_failure']:.4f}x, time weighted {data['simulated_time']:.4f}x, "
                     f"mean T {data['mean_T']:.1f}, largest S* {data['largest_S_star']}")
    return Output("\n".join(lines), data)


def _table(args) -> Output:
    from ..reports.overhead import reproduce

    with executor_from_args(args) as executor:
        paths = reproduce(args.outdir, quick=args.quick, executor=executor, seed=args.seed,
                          progress=not args.no_progress)
    return Output("\n".join(f"wrote {p}" for p in paths), {"files": [str(p) for p in paths]})
