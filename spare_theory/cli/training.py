"""``spare-theory optimize``, ``spare-theory headline`` and ``spare-theory table training``."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, Subparsers, add_json, add_table_parser

_STRATEGY_NAMES = {"ckpt": "CKPT-only", "rep": "Rep+CKPT", "spare": "SPARe+CKPT"}

_OPTIMIZE_DESCRIPTION = """\
For each strategy (CKPT-only, Rep+CKPT, SPARe+CKPT), the redundancy r and the
checkpoint interval that minimise the expected time to train WORK_HOURS of
failure-free training on the given cluster (the renewal-reward model of
spare_theory.training.estimate; GPUs fail independently at rate 1/GPU_MTBF_HOURS, a
group of GPUS_PER_GROUP GPUs fails when any of its GPUs does).  One line per
strategy."""

_OPTIMIZE_EPILOG = """\
output columns (--json: plans.<strategy>.<key>):
  r             redundancy of the best plan (replicas per shard; 1 for CKPT-only)
  interval      checkpoint interval of the best plan, minutes of compute
                (checkpoint_interval_minutes)
  hours         expected wall-clock hours to finish the work (h)
  availability  work_hours / hours: the fraction of wall time spent on useful
                training (ETTR)
  restarts      expected number of global restarts during the run
With --planned-restarts, Rep and SPARe also choose a planned restart (a global
restart without rollback) and print its trigger after the plan:
  planned restart at k down    restart once k groups are down at once
                               (planned_restart_failures)
  (step cost c)                SPARe: the same trigger as a step-cost threshold,
                               restart once S* reaches c stack layers
                               (planned_restart_cost; absent when no threshold
                               gives that k)
Below the plans: the reductions in time to train, 1 - hours / hours_other
(a fraction: 0.40 is 40 % less wall time), of SPARe+CKPT against Rep+CKPT
and CKPT-only and of Rep+CKPT against CKPT-only.  A plan that does not finish
in practice (infinite hours, or availability below 0.001) is printed as
"does not finish", with the reason.
--json also gives breakdown_hours (useful, redundancy, checkpoint, restart,
lost), feasible and reason per plan, the reductions, and the curve of hours
against r."""

_HEADLINE_DESCRIPTION = """\
First, the SPARe paper's own table (its simulator's scenario with Weibull lifetimes,
N = 200, 600, 1000 groups): Rep+CKPT and SPARe+CKPT time to train over T0,
availability and gain, published beside our step-level model at the authors' plans
(r, k), then at our optimiser's plans (spare-theory table simulator adds our event
simulation); then the best plans on that scenario with micro-batch splitting (each
failed group's shard cut into m = 4, 16 or 1024 pieces that its type's surviving
hosts share).  Second, the comparison at 600,000 H100 GPUs: per-GPU MTBF 50,677 h
(16384 * 54 * 24 / 419 GPU-hours per failure, from the Llama 3 paper, Dubey
et al. 2024: 419 unexpected interruptions in 54 days on 16,384 GPUs), 60 min
global restart, 5 min checkpoints, 720 h of work.  For each group size from 8
to 4096 GPUs, the best plan of every strategy, SPARe with micro-batch splitting
included; then a verdict on where the published figures (40-50 % faster than the
best Rep+CKPT, availability above 90 %) hold and what splitting adds."""

_HEADLINE_EPILOG = """\
output columns (hours are expected wall-clock hours, ratios are fractions):
  gpus_per_group               GPUs per data-parallel group
  N                            data-parallel groups, 600,000 // gpus_per_group
  hours_ckpt                   expected hours of the best CKPT-only plan
  r_rep, hours_rep             redundancy and expected hours of the best Rep+CKPT plan
  r_spare, hours_spare         redundancy and expected hours of the best SPARe+CKPT plan
  overhead_spare               mean step cost S* over kept compute (x a failure-free step)
  availability_spare           useful training / wall time (ETTR)
  uptime_spare                 wall time outside global restarts / wall time (the paper's
                               "availability")
  kept_compute_share_spare     time computing kept work, redundant layers included / wall time
  reduction_vs_best_rep_spare  1 - hours_spare / hours_rep
  *_spare_m<m>                 the best plan of SPARe with m micro-batches per shard:
                               r, hours, reduction_vs_spare (1 - hours / hours_spare)
                               and reduction_vs_best_rep"""


def register(commands: Subparsers, tables: Subparsers) -> None:
    """Add ``optimize`` and ``headline`` to ``commands`` and ``training`` to ``tables``."""
    parser = commands.add_parser(
        "optimize",
        help="best (r, checkpoint interval) and hours for each strategy",
        description=_OPTIMIZE_DESCRIPTION,
        epilog=_OPTIMIZE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        help="per-GPU MTBF in hours (default 50,677: H100, 16384*54*24/419 GPU-hours per "
        "failure from the Llama 3 paper, Dubey et al. 2024)",
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
    parser.add_argument(
        "--planned-restarts",
        action="store_true",
        help="also choose a planned restart (no rollback) by groups down or step cost",
    )
    add_json(parser)
    parser.set_defaults(handler=_optimize)

    head = commands.add_parser(
        "headline",
        help="the published 600k-GPU comparison over group sizes",
        description=_HEADLINE_DESCRIPTION,
        epilog=_HEADLINE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_json(head)
    head.set_defaults(handler=_headline)

    add_table_parser(
        tables,
        "training",
        help="time to train: model vs simulation, r*, headline",
        description="Writes OUTDIR/tables/training_error, r_star, headline and "
        "training_sensitivity (.csv, .md) and the figures time_to_train_vs_r and headline.",
    )


def _plan_record(plan: Any) -> dict[str, Any]:
    est = plan.estimate
    return {
        "r": plan.r,
        "checkpoint_interval_minutes": plan.checkpoint_interval_minutes,
        "hours": plan.hours,
        "availability": est.availability,
        "restarts": est.restarts,
        "feasible": est.feasible,
        "reason": est.reason,
        "breakdown_hours": {
            "useful": est.useful_hours,
            "redundancy": est.redundancy_hours,
            "checkpoint": est.checkpoint_hours,
            "restart": est.restart_hours,
            "lost": est.lost_hours,
        },
        "curve": {"r": plan.r_values.tolist(), "hours": plan.hours_by_r.tolist()},
        "planned_restart_failures": plan.planned_restart_failures,
        "planned_restart_cost": plan.planned_restart_cost,
    }


def _optimize(args: argparse.Namespace) -> Output:
    from ..hourly.scenario import Scenario
    from ..training.optimize import optimal_plan

    # Without --gpu-mtbf-hours, Scenario's own default (the Llama-3-derived H100 MTBF).
    mtbf = {} if args.gpu_mtbf_hours is None else {"gpu_mtbf_hours": args.gpu_mtbf_hours}
    sc = Scenario(
        gpus=args.gpus,
        gpus_per_group=args.gpus_per_group,
        **mtbf,
        restart_minutes=args.restart_minutes,
        checkpoint_minutes=args.checkpoint_minutes,
        work_hours=args.work_hours,
    )
    planned = bool(getattr(args, "planned_restarts", False))
    plans = {
        s: _plan_record(optimal_plan(sc, s, planned_restarts=planned)) for s in _STRATEGY_NAMES
    }
    lines = [str(sc)]
    for s, p in plans.items():
        head = f"  {_STRATEGY_NAMES[s]:<11} r={p['r']:<3} "
        if not p["feasible"]:
            lines.append(head + f"does not finish: {p['reason']}")
            continue
        lines.append(
            head + f"interval {p['checkpoint_interval_minutes']:8.1f} min  {p['hours']:12.5g} h  "
            f"availability {p['availability']:.3f}  restarts {p['restarts']:.4g}" + _trigger_text(p)
        )
    reductions = {
        f"{a}_vs_{b}": _reduction(plans[a], plans[b])
        for a, b in (("spare", "rep"), ("spare", "ckpt"), ("rep", "ckpt"))
    }
    if not any(p["feasible"] for p in plans.values()):
        lines.append(f"No plan finishes: {_why_nothing_finishes(sc)}")
    else:
        lines.append("Reductions in time to train, 1 - hours / hours of the other plan:")
        for key, value in reductions.items():
            a, b = key.split("_vs_")
            lines.append(f"  {_STRATEGY_NAMES[a]:<11} vs {_STRATEGY_NAMES[b]:<11} {_said(value)}")
    lines.append(_COLUMN_READING)
    data = {
        "scenario": vars(sc) | {"N": sc.groups},
        "plans": plans,
        "reductions": reductions,
    }
    return Output("\n".join(lines), data)


_COLUMN_READING = """\
Reading the columns: r = replicas per shard (1 is plain checkpointing); interval = minutes of
compute between checkpoints; h = expected wall-clock hours to finish the work; availability =
work hours / wall hours, the share of wall time that is useful training; restarts = expected
global restarts (a failure that leaves some shard with no live replica) during the run."""


def _trigger_text(plan: dict[str, Any]) -> str:
    """``"  planned restart at k down (step cost c)"``, or ``""`` without a trigger."""
    k, c = plan["planned_restart_failures"], plan["planned_restart_cost"]
    if k is None:
        return ""
    return f"  planned restart at {k} down" + ("" if c is None else f" (step cost {c:g})")


def _reduction(plan: dict[str, Any], other: dict[str, Any]) -> float | None:
    """``1 - hours / hours_other``, or ``None`` when either plan does not finish."""
    if not (plan["feasible"] and other["feasible"]):
        return None
    return 1.0 - plan["hours"] / other["hours"]


def _said(reduction: float | None) -> str:
    """A reduction in words: ``0.431 (43.1 % less time)``."""
    if reduction is None:
        return "not comparable (one of the two does not finish)"
    if reduction >= 0:
        return f"{reduction:.3f} ({100 * reduction:.1f} % less time)"
    return f"{reduction:.3f} ({-100 * reduction:.1f} % more time)"


def _why_nothing_finishes(sc: Any) -> str:
    """Why no strategy finishes on ``sc``, in words (restart or checkpoint against the MTBF)."""
    mtbf = sc.cluster_mtbf_minutes
    if sc.restart_minutes >= mtbf:
        return (
            f"the restart alone ({sc.restart_minutes:g} min) outlasts the mean time between "
            f"failures of the cluster ({mtbf:.3g} min), so almost every restart is cut short; "
            "use fewer GPUs, a larger GPU MTBF or a shorter restart."
        )
    return (
        f"failures arrive every {mtbf:.3g} min on average, too often for a restart of "
        f"{sc.restart_minutes:g} min plus checkpoints of {sc.checkpoint_minutes:g} min to "
        "let work through."
    )


def _headline(args: argparse.Namespace) -> Output:
    from ..reports._io import markdown_table
    from ..reports.simulator import paper_split_table, paper_table, paper_table_text
    from ..reports.training import headline_table, headline_verdict

    paper = paper_table()
    splits = paper_split_table().drop(columns=["sim_total_over_T0", "sim_se"])
    frame = headline_table()
    verdict = headline_verdict(frame)
    return Output(
        paper_table_text(paper)
        + "\n\nThe paper's scenario (Weibull), best plans with micro-batch splitting "
        "(spare m=<m>: each failed group's shard cut into m pieces; model):\n"
        + markdown_table(splits)
        + "\n\n600,000 GPUs:\n"
        + markdown_table(frame, verdict),
        {
            "paper_table": paper.astype(object).where(paper.notna(), None).to_dict("records"),
            "paper_microbatch": splits.to_dict("records"),
            "rows": frame.to_dict(orient="records"),
            "verdict": verdict,
        },
    )
