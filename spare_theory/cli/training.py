"""``spare-theory optimize``, ``spare-theory headline`` and ``spare-theory table training``."""

from __future__ import annotations

from ._common import Output, add_json, add_table_parser

_STRATEGY_NAMES = {"ckpt": "CKPT-only", "rep": "Rep+CKPT", "spare": "SPARe+CKPT"}


def register(commands, tables) -> None:
    parser = commands.add_parser(
        "optimize", help="best (r, checkpoint interval) and hours for each strategy"
    )
    parser.add_argument("--gpus", type=float, default=600_000, help="GPUs (default 600000)")
    parser.add_argument(
        "--gpus-per-group",
        type=float,
        default=2048,
        help="GPUs per data-parallel group (default 2048)",
    )
    parser.add_argument(
        "--gpu-mtbf-hours",
        type=float,
        default=None,
        help="per-GPU MTBF in hours (default: Llama-3-derived H100, about 50,678)",
    )
    parser.add_argument(
        "--restart-minutes", type=float, default=60.0, help="global restart cost (default 60)"
    )
    parser.add_argument(
        "--checkpoint-minutes", type=float, default=5.0, help="checkpoint cost (default 5)"
    )
    parser.add_argument(
        "--work-hours",
        type=float,
        default=720.0,
        help="failure-free hours of training (default 720)",
    )
    add_json(parser)
    parser.set_defaults(handler=_optimize)

    head = commands.add_parser(
        "headline", help="the published 600k-GPU comparison over group sizes"
    )
    add_json(head)
    head.set_defaults(handler=_headline)

    add_table_parser(tables, "training", help="time to train: model vs simulation, r*, headline")


def _plan_record(plan) -> dict:
    est = plan.estimate
    return {
        "r": plan.r,
        "checkpoint_interval_minutes": plan.checkpoint_interval_minutes,
        "hours": plan.hours,
        "availability": est.availability,
        "restarts": est.restarts,
        "breakdown_hours": {
            "useful": est.useful_hours,
            "redundancy": est.redundancy_hours,
            "checkpoint": est.checkpoint_hours,
            "restart": est.restart_hours,
            "lost": est.lost_hours,
        },
        "curve": {"r": plan.r_values.tolist(), "hours": plan.hours_by_r.tolist()},
    }


def _optimize(args) -> Output:
    from ..optimize import optimal_plan
    from ..scenario import LLAMA3_H100_GPU_MTBF_HOURS, Scenario

    sc = Scenario(
        gpus=args.gpus,
        gpus_per_group=args.gpus_per_group,
        gpu_mtbf_hours=LLAMA3_H100_GPU_MTBF_HOURS
        if args.gpu_mtbf_hours is None
        else args.gpu_mtbf_hours,
        restart_minutes=args.restart_minutes,
        checkpoint_minutes=args.checkpoint_minutes,
        work_hours=args.work_hours,
    )
    plans = {s: _plan_record(optimal_plan(sc, s)) for s in _STRATEGY_NAMES}
    lines = [str(sc)]
    for s, p in plans.items():
        lines.append(
            f"  {_STRATEGY_NAMES[s]:<11} r={p['r']:<3} interval {p['checkpoint_interval_minutes']:8.1f} min  "
            f"{p['hours']:12.5g} h  availability {p['availability']:.3f}  restarts {p['restarts']:.4g}"
        )
    return Output("\n".join(lines), {"scenario": vars(sc) | {"groups": sc.groups}, "plans": plans})


def _headline(args) -> Output:
    from ..reports._io import markdown_table
    from ..reports.training import headline_table, headline_verdict

    frame = headline_table()
    verdict = headline_verdict(frame)
    return Output(
        markdown_table(frame, verdict),
        {"rows": frame.to_dict(orient="records"), "verdict": verdict},
    )
