"""The best plans of the strategies on one scenario, as records and as text that tells the truth.

Shared by ``optimize`` (one scenario) and ``sweep`` (a grid of them): every
registered strategy (or those given) is planned with
:func:`spare_theory.optimal_plan`; a strategy that does not split shards is
planned without micro-batches (it changes nothing for it), and one the
model does not cover on this scenario is reported as such instead of
failing the command.  Beside each plan the text gives the range of ``r``
within 1 % of the best, says when the checkpoint interval is a limit of the
search rather than advice, adds the documented biases that apply to each plan
(its ``caveats``, which the front doors attach) and warns when GPUs are left
out of the groups.  Each strategy shows its own plan variables
(:func:`plan_variables`): ``r`` only where it has one, hot spares' spare
groups and the elastic quorum in their own columns.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import textwrap
from collections.abc import Sequence
from typing import Any

from .points import iter_fields

__all__ = [
    "LEFT_OUT_SHARE",
    "R_TOLERANCE",
    "add_strategy_option",
    "caveat_lines",
    "hours_text",
    "left_out_warning",
    "minutes_text",
    "plan_record",
    "plan_variables",
    "plans_text",
    "reductions",
    "scenario_text",
    "value_text",
]

#: The ``r`` printed beside the best are those within this share of its hours (1 %).
R_TOLERANCE = 0.01
#: GPUs outside the groups are a warning from this share of all GPUs on (1 %).
LEFT_OUT_SHARE = 0.01
_WIDTH = 100


def _hour(scenario: Any) -> bool:
    return hasattr(scenario, "gpus")  # a Scenario (a StepScenario counts groups, not GPUs)


def add_strategy_option(parser: argparse.ArgumentParser) -> None:
    """``--strategy NAME ...``: the registered strategies to plan (default: all of them)."""
    from ..strategies.registry import registered_strategies

    names = registered_strategies()
    parser.add_argument(
        "--strategy",
        nargs="+",
        choices=names,
        default=list(names),
        metavar="NAME",
        help=f"strategies to plan, in this order (default: every registered one: "
        f"{', '.join(names)})",
    )


def left_out_warning(scenario: Any) -> str | None:
    """The GPUs outside every group, in words, when they are :data:`LEFT_OUT_SHARE` or more.

    Fewer are only noted in :func:`scenario_text` (the published 600k
    scenario leaves 1,984 GPUs out at 2048 per group, 0.3 %).  ``None`` at
    step level and below the share.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> print(left_out_warning(Scenario(gpus=100_000, gpus_per_group=60_000,
    ...     restart_minutes=60, checkpoint_minutes=5, work_hours=720)))
    40,000 of 100,000 GPUs are in no group (100,000 = 1 x 60,000 + 40,000): they compute
    nothing and their failures stop nothing; the plans are for N = 1 group
    """
    if not _hour(scenario):
        return None
    left = scenario.gpus % scenario.gpus_per_group
    if left < LEFT_OUT_SHARE * scenario.gpus:
        return None
    N = scenario.groups
    return (
        f"{left:,} of {scenario.gpus:,} GPUs are in no group ({scenario.gpus:,} = {N:,} x "
        f"{scenario.gpus_per_group:,} + {left:,}): they compute\nnothing and their failures "
        f"stop nothing; the plans are for N = {N:,} group{'s' if N > 1 else ''}"
    ).replace("\n", " ")


def plan_record(
    scenario: Any, name: str, *, planned_restarts: bool = False, **search: Any
) -> dict[str, Any]:
    """The best plan of strategy ``name`` on ``scenario``, as a JSON-able record.

    Parameters
    ----------
    scenario : Scenario or StepScenario
        The run.
    name : str
        A registered strategy.
    planned_restarts : bool
        Also choose a planned-restart trigger (hour level).
    **search
        ``method``, ``verify``, ``seed``, ``rel_se``, ``max_trials``,
        ``executor``, ``progress`` of :func:`spare_theory.optimal_plan`.

    Returns
    -------
    dict
        ``strategy``, ``label``, ``modelled`` (``False``: ``reason`` says
        why not) and, for a plan: ``r``, ``r_within_1pct`` (smallest and
        largest ``r`` within :data:`R_TOLERANCE` of the best hours), the
        interval (``checkpoint_interval_minutes`` and ``interval_limit``, or
        ``checkpoint_every_steps``), ``no_periodic_checkpoint``, ``hours``,
        ``availability`` (hour level) or ``total_over_T0`` and ``uptime``,
        ``restarts``, ``feasible``, ``reason``, ``microbatches`` (those it
        was planned with), ``curve`` (hours against every ``r`` scanned),
        the planned-restart trigger, ``plan_variables`` (the strategy's own,
        such as an elastic quorum), ``variables`` (:func:`plan_variables`:
        the plan's variables as the strategy names them, each also a key of
        its own: ``min_groups``, ``spare_groups``), ``exact_batch`` and
        ``samples_skipped`` (the share of the global batch not trained),
        ``caveats`` (the documented biases that apply to the plan, or a
        verified plan's measured error), ``method`` (``"model"`` or
        ``"simulation"``: what searched the plan), ``standard_error_hours``
        (a simulated plan's; ``None`` for a model plan), ``verified_hours``,
        ``verified_standard_error``, ``verified_trials``, ``model_error`` and
        ``moved_by_verification`` (``None``/``False`` unless verified) and, at
        hour level, ``breakdown_hours``.  ``r`` is ``None`` (null in JSON)
        for a plan without one.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=4096, gpus_per_group=16, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=30, checkpoint_minutes=3, work_hours=100)
    >>> rec = plan_record(sc, "spare")
    >>> rec["r"], rec["r_within_1pct"], rec["interval_limit"], round(rec["hours"], 1)
    (7, [5, 8], None, 209.7)
    >>> rec["caveats"][-1][:33], plan_record(sc, "hot_spares")["variables"]
    ('audit (150 random scenarios, seed', {'spare_groups': 23, 'min_groups': 233})
    """
    from ..strategies.registry import strategy
    from ..training.optimize import optimal_plan

    chosen = strategy(name)
    record: dict[str, Any] = {"strategy": chosen.name, "label": chosen.label}
    try:
        chosen.check_microbatches(scenario.microbatches)
    except ValueError:  # a strategy that does not split: the split changes nothing for it
        scenario = dataclasses.replace(scenario, microbatches=1)
    try:
        plan = optimal_plan(scenario, chosen, planned_restarts=planned_restarts, **search)
    except ValueError as exc:
        return record | {"modelled": False, "reason": str(exc)}
    est = plan.estimate
    key = None if plan.r is None else chosen.r_variable  # what the plan's r is called
    low, high = (None, None) if key is None else plan.r_within(R_TOLERANCE)
    own = dict(plan.variables)
    variables = ({} if key is None else {key: plan.r}) | own
    record |= {
        "modelled": True,
        "r": plan.r,
        "r_within_1pct": [low, high],
        # The walk over r stopped while still within 1 %: larger r may be as good.
        "r_within_1pct_open": key is not None
        and high == int(plan.r_values.max())
        and high < scenario.groups
        and chosen.accepts(scenario.groups, high + 1),
        "microbatches": scenario.microbatches,
        "hours": plan.hours,
        "restarts": est.restarts,
        "uptime": est.uptime,
        "curve": {"r": plan.r_values.tolist(), "hours": plan.hours_by_r.tolist()},
        "planned_restart_failures": plan.planned_restart_failures,
        "planned_restart_cost": plan.planned_restart_cost,
        # The strategy's own plan variables (an elastic quorum), chosen with r.
        "plan_variables": own,
        "variables": variables,
        **variables,
        "caveats": list(plan.caveats),
        "method": plan.method,
        "standard_error_hours": getattr(est, "standard_error_hours", None),
        "verified_hours": plan.verified_hours,
        "verified_standard_error": plan.verified_standard_error,
        "verified_trials": plan.verified_trials,
        "model_error": plan.model_error,
        "moved_by_verification": plan.moved_by_verification,
        # Whether every step trains the whole global batch; if not, the share skipped.
        "exact_batch": bool(getattr(est, "exact_batch", True)),
        "samples_skipped": float(getattr(est, "samples_skipped", 0.0)),
    }
    if plan.checkpoint_every_steps is not None:
        feasible = math.isfinite(est.seconds)
        return record | {
            "checkpoint_every_steps": plan.checkpoint_every_steps,
            # A checkpoint every `steps` steps is one at the end: none during the run.
            "no_periodic_checkpoint": plan.checkpoint_every_steps >= scenario.steps,
            "total_over_T0": est.total_over_T0,
            "feasible": feasible,
            "reason": "" if feasible else "expected time to train is infinite",
        }
    limit, tau = est.interval_limit, est.checkpoint_interval_minutes
    return record | {
        "checkpoint_interval_minutes": tau,
        "interval_limit": limit,
        # At the upper limit with an interval longer than the whole run, no checkpoint is due.
        "no_periodic_checkpoint": limit == "upper" and tau >= 60 * plan.hours,
        "availability": est.availability,
        "feasible": est.feasible,
        "reason": est.reason,
        "breakdown_hours": est.breakdown_hours,
    }


def reductions(plans: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """``1 - hours / hours_other`` for every later strategy against every earlier one.

    ``None`` where either plan does not finish or is not modelled.

    Examples
    --------
    >>> reductions({"rep": {"feasible": True, "hours": 200.0},
    ...             "spare": {"feasible": True, "hours": 150.0}})
    {'spare_vs_rep': 0.25}
    """
    names = list(plans)
    out: dict[str, float | None] = {}
    for j, a in enumerate(names):
        for b in names[:j]:
            pa, pb = plans[a], plans[b]
            both = pa.get("feasible") and pb.get("feasible")
            out[f"{a}_vs_{b}"] = 1.0 - pa["hours"] / pb["hours"] if both else None
    return out


def scenario_text(scenario: Any) -> str:
    """The scenario in a few lines: every field set to other than its default, and ``N``.

    Examples
    --------
    >>> from spare_theory import paper_scenario
    >>> print(scenario_text(paper_scenario(200)))
    step-level scenario (StepScenario): groups=200, steps=10,000, allreduce_seconds=2,
      failure_law=expon:scale=60000
      N = 200 groups, failure-free time T0 = 183.3 h, cluster MTBF 300 s
    """
    shown = ", ".join(f"{k}={value_text(v)}" for k, v in iter_fields(scenario))
    if _hour(scenario):
        head = f"hour-level scenario (Scenario): {shown}"
        derived = (
            f"N = {scenario.groups:,} group{'s' if scenario.groups > 1 else ''} of "
            f"{scenario.gpus_per_group:,} GPUs, "
            f"cluster MTBF {scenario.cluster_mtbf_minutes:.3g} min"
        )
        if scenario.domain_size is not None and scenario.domain_mtbf_hours is not None:
            domains = -(-scenario.groups // scenario.domain_size)
            every = 60 * scenario.domain_mtbf_hours / domains
            derived += f" from group failures, plus a domain failure every {every:.3g} min"
        left = scenario.gpus % scenario.gpus_per_group
        if left:
            derived += f" ({left:,} GPUs in no group)"
    else:
        head = f"step-level scenario (StepScenario): {shown}"
        derived = (
            f"N = {scenario.groups:,} groups, failure-free time T0 = "
            f"{scenario.failure_free_hours:.1f} h, "
            f"cluster MTBF {scenario.cluster_mtbf_seconds:.3g} s"
        )
    lines = textwrap.wrap(head, _WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    lines.append("  " + derived)
    provenance = getattr(scenario, "provenance", ())
    if provenance:
        lines.append("  where the fields come from:")
    for name, sentence in provenance:
        lines += textwrap.wrap(
            f"{name}: {sentence}", _WIDTH, initial_indent="    ", subsequent_indent="      "
        )
    return "\n".join(lines)


def value_text(value: Any) -> str:
    """A field's value in text: integers from 10,000 with separators, reals to six digits."""
    if isinstance(value, float):
        return f"{value:,.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if value >= 10_000 else str(value)
    return str(value)


def hours_text(hours: float) -> str:
    """Expected hours, four significant digits (``1,725``, ``5.934e+08``)."""
    return f"{hours:,.4g}"


def minutes_text(minutes: float) -> str:
    """A checkpoint interval in minutes: three significant digits, whole minutes from 1,000."""
    return f"{minutes:,.0f}" if minutes >= 1000 else f"{minutes:.3g}"


#: Column titles of plan variables whose key is not a title already (the rest: ``_`` to space).
_TITLES = {"min_groups": "quorum"}


def plan_variables(plans: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The variable columns of a table of plan records: what ``r`` is called, then the others.

    ``r`` and the other names of a plan's ``r`` (hot spares' ``spare_groups``)
    first, then the strategies' own plan variables, each in the order met.

    Examples
    --------
    >>> plan_variables({"elastic": {"variables": {"min_groups": 32},
    ...                             "plan_variables": {"min_groups": 32}},
    ...                 "hot_spares": {"variables": {"spare_groups": 4, "min_groups": 60},
    ...                                "plan_variables": {"min_groups": 60}}})
    (['r', 'spare_groups'], ['min_groups'])
    """
    redundancy: list[str] = ["r"]
    own: list[str] = []
    for record in plans.values():
        for name in record.get("variables", {}):
            mine = name in record["plan_variables"]
            if name not in (own if mine else redundancy):
                (own if mine else redundancy).append(name)
    return redundancy, own


def _row(record: dict[str, Any], redundancy: Sequence[str], own: Sequence[str]) -> list[str]:
    if not record["modelled"] or not record["feasible"]:
        return [record["label"], *("-" for _ in [*redundancy, *own]), "-", "-", "-", "-", "-"]
    mine = record["variables"]
    low, high = record["r_within_1pct"]
    within = "-" if low is None else str(low) if low == high else f"{low}-{high}"
    if low is not None and record["r_within_1pct_open"]:
        within += "+"
    if "checkpoint_every_steps" in record:
        k = record["checkpoint_every_steps"]
        every = f"{k} step{'s' if k > 1 else ''}"
        share = f"{record['total_over_T0']:.3f}"
    else:
        every = f"{minutes_text(record['checkpoint_interval_minutes'])} min"
        share = f"{record['availability']:.3f}"
    if record["no_periodic_checkpoint"]:
        every = "none pays"
    elif record.get("interval_limit"):
        every += "*"
    return [
        record["label"],
        *("-" if mine.get(c) is None else str(mine[c]) for c in redundancy),
        within,
        *("-" if mine.get(c) is None else str(mine[c]) for c in own),
        every,
        hours_text(record["hours"]),
        share,
        f"{record['restarts']:.3g}",
    ]


def _table(headers: Sequence[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for cells in [list(headers), *rows]:
        first = f"  {cells[0]:<{widths[0]}}"
        lines.append(first + "".join(f"  {c:>{w}}" for c, w in zip(cells[1:], widths[1:])))
    return lines


def plans_text(plans: dict[str, dict[str, Any]], scenario: Any) -> list[str]:
    """The plans as a table (at most 100 columns) and the notes that go with it.

    One row per strategy: ``r`` (``-`` for a strategy without one, or
    whose ``r`` has another name: hot spares' ``spare groups``), the values
    of that ``r`` within 1 % of the best hours, the strategy's own plan
    variables (the elastic ``quorum``; :func:`plan_variables`), the checkpoint interval (``none
    pays`` when no periodic checkpoint pays off, ``*`` when it sits at a
    limit of the search), expected hours, availability (hour level) or time
    to train over ``T0`` (step level) and restarts; then a line per plan
    that does not finish or is not modelled, per trigger, per interval at a
    limit, and each plan's caveats.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=4096, gpus_per_group=16, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=30, checkpoint_minutes=3, work_hours=100)
    >>> print("\\n".join(plans_text({"spare": plan_record(sc, "spare")}, sc)))
      strategy    r  within 1 %  checkpoint every  hours  availability  restarts
      SPARe+CKPT  7         5-8           156 min  209.7         0.477       ...
    """
    step = not _hour(scenario)
    redundancy, own = plan_variables(plans)
    headers = (
        "strategy",
        *(_TITLES.get(c, c.replace("_", " ")) for c in redundancy),
        "within 1 %",
        *(_TITLES.get(c, c.replace("_", " ")) for c in own),
        "checkpoint every",
        "hours",
        "total / T0" if step else "availability",
        "restarts",
    )
    lines = _table(headers, [_row(p, redundancy, own) for p in plans.values()])
    notes = [_method_note(plans)]
    for p in plans.values():
        label = p["label"]
        if not p["modelled"]:
            notes.append(f"{label}: no plan on this scenario: {p['reason']}")
        elif not p["feasible"]:
            notes.append(f"{label}: does not finish: {p['reason']}")
        elif p["no_periodic_checkpoint"]:
            notes.append(f"{label}: no periodic checkpoint pays off: {_why_no_checkpoint(p)}")
        elif p.get("interval_limit") == "upper":
            notes.append(
                f"{label}: * the interval is the top of the range searched; the hours still "
                "fall beyond it"
            )
        elif p.get("interval_limit") == "lower":
            notes.append(
                f"{label}: * the interval is the smallest searched (1 s when checkpoints are "
                "free): checkpoint as often as possible"
            )
        if p["modelled"] and p["planned_restart_failures"] is not None:
            cost = p["planned_restart_cost"]
            notes.append(
                f"{label}: planned restart (no rollback) once {p['planned_restart_failures']} "
                "groups are down" + ("" if cost is None else f" (step cost {cost:g})")
            )
        if p["modelled"] and not p["exact_batch"]:
            notes.append(
                f"{label}: trains only part of the global batch, {100 * p['samples_skipped']:.3g} "
                "% of the samples skipped (samples_skipped): its hours are for less training "
                "than an exact-batch plan's, and the reductions compare unlike runs"
            )
        if p["modelled"] and p["microbatches"] != scenario.microbatches:
            notes.append(f"{label}: does not split shards, planned with microbatches = 1")
    notes += [f"caveat: {c}" for c in caveat_lines(plans)]
    for note in notes:
        lines += textwrap.wrap(note, _WIDTH, initial_indent="  ", subsequent_indent="    ")
    return lines


def _method_note(plans: dict[str, dict[str, Any]]) -> str:
    """Which method answered each plan, in one line."""
    by: dict[str, list[str]] = {}
    for p in plans.values():
        if p["modelled"]:
            by.setdefault(p["method"], []).append(p["label"])
    said = {
        "model": "planned by the closed forms",
        "simulation": "planned by the event simulation (no closed form covers the scenario; "
        "hours are simulated means)",
    }
    return "; ".join(f"{', '.join(labels)}: {said[m]}" for m, labels in by.items()) + "."


def caveat_lines(plans: dict[str, dict[str, Any]]) -> list[str]:
    """Each plan's caveats (those its estimate carries), as ``label: caveat``.

    Examples
    --------
    >>> caveat_lines({"spare": {"label": "SPARe+CKPT", "modelled": True, "caveats": ["high"]},
    ...               "rep": {"label": "Rep+CKPT", "modelled": False}})
    ['SPARe+CKPT: high']
    """
    return [
        f"{p['label']}: {text}" for p in plans.values() if p["modelled"] for text in p["caveats"]
    ]


def _why_no_checkpoint(plan: dict[str, Any]) -> str:
    if "checkpoint_every_steps" in plan:
        return "the best interval is the whole run (one checkpoint, at the end)"
    return (
        f"the hours fall as the interval grows up to the search's limit "
        f"({minutes_text(plan['checkpoint_interval_minutes'])} min, 600 x the work hours), "
        "longer than "
        f"the run ({hours_text(plan['hours'])} h); expected restarts {plan['restarts']:.3g}"
    )
