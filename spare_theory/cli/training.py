"""``spare-theory optimize`` and ``spare-theory headline``."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from ._common import (
    Output,
    UsageError,
    add_executor_options,
    add_json,
    add_seed,
    executor_from_args,
    integral,
    real,
)
from .fields import add_scenario_options
from .laws import LAW_SYNTAX
from .plans import (
    add_strategy_option,
    caveat_lines,
    hours_text,
    left_out_warning,
    plan_record,
    plans_text,
    reductions,
    scenario_text,
)
from .points import scenario_points, scenario_record

_OPTIMIZE_DESCRIPTION = """\
For each strategy (default: every registered one), the redundancy r and the
checkpoint interval that minimise the expected time to train the scenario
(spare_theory.optimal_plan: the renewal-reward model of an hour-level Scenario,
or the step-level model of the SPARe paper's simulator for a StepScenario).
Every field of both scenario classes is an option below; --scenario FILE reads
them from TOML, --paper N starts from the paper's step-level scenario.
Without options: 600,000 H100 GPUs in groups of 2048 (GPU MTBF 50,677 h from
the Llama 3 paper), 60 min restarts, 5 min checkpoints, 720 h of work.  One
line per strategy."""

_OPTIMIZE_EPILOG = (
    """\
output columns (--json: plans.<strategy>.<key>):
  r             redundancy of the best plan (replicas per shard; 1 for CKPT-only);
                "-" for a strategy without one (elastic DP) or whose r has its
                own column (null in --json where the plan has no r)
  spare groups  hot spares: idle groups that take a failed group's place (its r;
                spare_groups)
  within 1 %    the r (spare groups) whose best hours are within 1 % of the best
                (r_within_1pct): how flat the optimum is; "+" when the scan over r
                stopped inside that range (r_within_1pct_open: larger r may be as
                good)
  quorum        elastic DP and hot spares: fewest groups up for the job to go on
                (min_groups), chosen with r
  checkpoint    checkpoint interval of the best plan: minutes of compute
  every         (checkpoint_interval_minutes) or steps (checkpoint_every_steps);
                "none pays" when no periodic checkpoint pays off (the hours fall
                up to the search's limit, longer than the run), "*" when the
                interval is a limit of the search (interval_limit)
  hours         expected wall-clock hours to finish the work (h)
  availability  work_hours / hours: the fraction of wall time spent on useful
                training (ETTR); step level: total / T0, the time to train over
                the failure-free time
  restarts      expected number of global restarts during the run
With --planned-restarts, Rep and SPARe also choose a planned restart (a global
restart without rollback) and print its trigger below the table:
  planned restart once k groups are down   (planned_restart_failures)
  (step cost c)                SPARe: the same trigger as a step-cost threshold,
                               restart once S* reaches c stack layers
                               (planned_restart_cost; absent when no threshold
                               gives that k)
Below the table: a line for each plan that does not finish (infinite hours, or
availability below 0.001) or that the model does not cover on this scenario,
a caveat for each documented bias that applies, then the reductions in time
to train, 1 - hours / hours_other (a fraction: 0.40 is 40 % less wall time),
of every strategy against every one listed before it.  A warning on stderr
when GPUs are left out of the groups.
--json also gives breakdown_hours (useful, redundancy, checkpoint, restart,
lost), feasible, reason, variables (the plan's own variables by name) and
caveats per plan, the reductions, every caveat, and the curve of hours
against r.

"""
    + LAW_SYNTAX
)

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
terminal columns of the 600,000-GPU table (hours: expected wall-clock hours,
reductions: percent less time to train):
  group, N           GPUs per data-parallel group, and N = 600,000 // group
  Rep r, hours       the best Rep+CKPT plan
  SPARe r, hours     the best SPARe+CKPT plan
  uptime             wall time outside global restarts / wall time (the paper's
                     "availability")
  avail              useful training / wall time (ETTR)
  vs Rep             1 - hours_spare / hours_rep
  m=<m>              SPARe with m micro-batches per shard: its r and 1 - its hours /
                     published SPARe's
--json rows (fractions for every ratio):
  gpus_per_group, N, hours_ckpt (best CKPT-only plan), r_rep, hours_rep, r_spare,
  hours_spare, overhead_spare (mean step cost S* over kept compute, x a
  failure-free step), availability_spare, uptime_spare, kept_compute_share_spare
  (time computing kept work, redundant layers included / wall time),
  reduction_vs_best_rep_spare (1 - hours_spare / hours_rep), and per m:
  r_spare_m<m>, hours_spare_m<m>, reduction_vs_spare_spare_m<m> and
  reduction_vs_best_rep_spare_m<m>"""


def configure_optimize(parser: argparse.ArgumentParser) -> None:
    """``spare-theory optimize``: its description and options."""
    parser.description = _OPTIMIZE_DESCRIPTION
    parser.epilog = _OPTIMIZE_EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_strategy_option(parser)
    parser.add_argument(
        "--planned-restarts",
        action="store_true",
        help="also choose a planned restart (no rollback) by groups down or step cost",
    )
    parser.add_argument(
        "--method",
        choices=("auto", "model", "simulation"),  # optimize.PLAN_METHODS (test_cli_plan checks)
        default="auto",
        help="value candidate plans by the closed forms (model), the event simulation "
        "(simulation), or the model where it covers the scenario (auto, the default)",
    )
    parser.add_argument(
        "--verify",
        nargs="?",
        const="law",
        choices=("law", "log"),
        default=None,
        help="simulate each plan and its neighbours (r +- 1, interval x 0.7 and x 1.4, quorum "
        "+- a step) on common random numbers and move to a better neighbour: against the "
        "scenario's law (law, the default) or the replay of --failure-log (log)",
    )
    parser.add_argument(
        "--rel-se",
        type=real,
        default=None,
        help="relative standard error of each simulated plan's mean (default: optimal_plan's, "
        "0.005)",
    )
    parser.add_argument(
        "--max-trials",
        type=integral,
        default=None,
        help="most simulated runs per candidate plan (default: optimal_plan's, 512)",
    )
    add_seed(parser)
    add_executor_options(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    add_json(parser)
    add_scenario_options(parser)
    parser.set_defaults(handler=_optimize)


def configure_headline(parser: argparse.ArgumentParser) -> None:
    """``spare-theory headline``: its description and options."""
    parser.description = _HEADLINE_DESCRIPTION
    parser.epilog = _HEADLINE_EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_json(parser)
    parser.set_defaults(handler=_headline)


def _optimize(args: argparse.Namespace) -> Output:
    (point,) = scenario_points(args)
    sc = point.scenario
    planned = bool(args.planned_restarts)
    if planned and not hasattr(sc, "gpus"):
        raise UsageError("--planned-restarts plans hour-level scenarios only (not --paper)")
    verify: Any = args.verify is not None
    if args.verify == "log":
        if args.failure_log is None:
            raise UsageError("--verify log replays --failure-log: give one")
        from ..traces.inputs import open_log

        verify = open_log(args.failure_log, nodes=args.log_nodes, time_unit=args.log_time_unit)
    with executor_from_args(args) as executor:
        search = dict(
            method=args.method,
            verify=verify,
            seed=args.seed,
            executor=executor,
            progress=not args.no_progress,
        )
        given = {"rel_se": args.rel_se, "max_trials": args.max_trials}
        search |= {name: value for name, value in given.items() if value is not None}
        plans = {s: plan_record(sc, s, planned_restarts=planned, **search) for s in args.strategy}
    if not any(p["modelled"] for p in plans.values()):
        raise ValueError("; ".join(f"{p['label']}: {p['reason']}" for p in plans.values()))
    lines = [scenario_text(sc), *plans_text(plans, sc)]
    found = reductions(plans)
    modelled = [p for p in plans.values() if p["modelled"]]
    if not any(p["feasible"] for p in modelled):
        which = "plan the model covers" if len(modelled) < len(plans) else "plan"
        lines += textwrap.wrap(f"No {which} finishes: {_why_nothing_finishes(sc)}", 100)
    elif found:
        lines.append("Reductions in time to train, 1 - hours / hours of the other plan:")
        for key, value in found.items():
            a, b = (plans[n]["label"] for n in key.split("_vs_"))
            lines.append(f"  {a:<11} vs {b:<11} {_said(value)}")
    reading = _COLUMN_READING.format(share=_SHARES[scenario_record(sc)["level"]])
    lines += textwrap.wrap(" ".join(reading.split()), 100)
    warning = left_out_warning(sc)
    data = {
        "scenario": scenario_record(sc),
        "plans": plans,
        "reductions": found,
        "caveats": caveat_lines(plans),
    }
    return Output("\n".join(lines), data, warnings=(warning,) if warning else ())


_COLUMN_READING = """\
Reading the columns: r = replicas per shard (1 is plain checkpointing); within 1 % = the r
whose hours are within 1 % of the best (+: the scan stopped there); checkpoint every = compute
between checkpoints; hours = expected wall-clock hours to finish the work; {share};
restarts = expected global restarts (a failure that leaves some shard with no live replica)."""
_SHARES = {
    "hour": "availability = work hours / wall hours, the share of wall time spent training",
    "step": "total / T0 = wall time over the failure-free time T0 of the run",
}


def _said(reduction: float | None) -> str:
    """A reduction in words: ``0.431 (43.1 % less time)``."""
    if reduction is None:
        return "not comparable (one of the two does not finish)"
    if reduction >= 0:
        return f"{reduction:.3f} ({100 * reduction:.1f} % less time)"
    return f"{reduction:.3f} ({-100 * reduction:.1f} % more time)"


def _why_nothing_finishes(sc: Any) -> str:
    """Why no strategy finishes on ``sc``, in words (restart or checkpoint against the MTBF)."""
    if hasattr(sc, "cluster_mtbf_minutes"):
        mtbf, restart = sc.cluster_mtbf_minutes, sc.restart_minutes
        checkpoint = sc.checkpoint_minutes
    else:
        mtbf = sc.cluster_mtbf_seconds / 60
        restart, checkpoint = sc.restart_seconds / 60, sc.checkpoint_seconds / 60
    if restart >= mtbf:
        return (
            f"the restart alone ({restart:g} min) outlasts the mean time between "
            f"failures of the cluster ({mtbf:.3g} min), so almost every restart is cut short; "
            "use fewer GPUs, a larger GPU MTBF or a shorter restart."
        )
    return (
        f"failures arrive every {mtbf:.3g} min on average, too often for a restart of "
        f"{restart:g} min plus checkpoints of {checkpoint:g} min to let work through."
    )


def _headline(args: argparse.Namespace) -> Output:
    from ..reports.headline import HEADLINE_MICROBATCHES, headline_table, headline_verdict
    from ..reports.paper import paper_split_table, paper_table, paper_table_text

    paper = paper_table()
    splits = paper_split_table().drop(columns=["sim_total_over_T0", "sim_se"])
    frame = headline_table()
    verdict = headline_verdict(frame)
    text = [
        paper_table_text(paper),
        "",
        "The paper's scenario (Weibull), best plans with micro-batch splitting (model; m: pieces",
        "per failed group's shard; reductions in time to train against published SPARe and Rep):",
        *_splits_text(splits),
        "",
        "600,000 GPUs (Llama-3 H100 MTBF, R = 60 min, delta = 5 min, 720 h), best plans",
        "(group: GPUs per group; m: SPARe with m micro-batches, its r and its reduction against",
        "published SPARe):",
        *_headline_text(frame, HEADLINE_MICROBATCHES),
        *textwrap.wrap(verdict, 100),
        "Every column (hours_ckpt, overhead_spare, kept_compute_share_spare, the split plans' "
        "hours): --json.",
    ]
    return Output(
        "\n".join(text),
        {
            "paper_table": paper.astype(object).where(paper.notna(), None).to_dict("records"),
            "paper_microbatch": splits.to_dict("records"),
            "rows": frame.to_dict(orient="records"),
            "verdict": verdict,
        },
    )


def _percent(value: float) -> str:
    """A reduction in time to train: ``46.8 %``."""
    return f"{100 * value:.1f} %"


def _splits_text(splits: Any) -> list[str]:
    """The paper's split plans, one row per N and plan; a plan is not compared with itself."""
    rows = []
    for row in splits.itertuples(index=False):
        rows.append(
            [
                f"{row.N}",
                row.plan,
                f"{row.r}",
                f"{row.checkpoint_every_steps}",
                f"{row.total_over_T0:.3f}",
                f"{row.uptime:.3f}",
                # The unsplit rows are the baselines (Rep, then SPARe).
                "-" if row.microbatches == 1 else _percent(row.reduction_vs_spare),
                "-" if row.reduction_vs_rep == 0 else _percent(row.reduction_vs_rep),
            ]
        )
    headers = ["N", "plan", "r", "k", "total / T0", "uptime", "vs SPARe", "vs Rep"]
    return _columns(headers, rows, left=1)


def _headline_text(frame: Any, splits: Any) -> list[str]:
    """The 600k table in 100 columns: best Rep and SPARe, SPARe's shares, each split's r, gain."""
    headers = ["group", "N", "Rep r", "hours", "SPARe r", "hours", "uptime", "avail", "vs Rep"]
    headers += [f"m={m}" for m in splits]
    rows = []
    for row in frame.to_dict(orient="records"):
        cells = [
            f"{row['gpus_per_group']:,}",
            f"{row['N']:,}",
            f"{row['r_rep']}",
            hours_text(row["hours_rep"]),
            f"{row['r_spare']}",
            hours_text(row["hours_spare"]),
            f"{row['uptime_spare']:.3f}",
            f"{row['availability_spare']:.3f}",
            _percent(row["reduction_vs_best_rep_spare"]),
        ]
        cells += [
            f"{row[f'r_spare_m{m}']} {_percent(row[f'reduction_vs_spare_spare_m{m}'])}"
            for m in splits
        ]
        rows.append(cells)
    return _columns(headers, rows)


def _columns(headers: list[str], rows: list[list[str]], left: int | None = None) -> list[str]:
    """Columns two spaces apart, right-aligned but column ``left`` (a label)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    return [
        "  ".join(
            f"{c:<{w}}" if i == left else f"{c:>{w}}" for i, (c, w) in enumerate(zip(cells, widths))
        )
        for cells in [headers, *rows]
    ]
