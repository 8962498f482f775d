"""The words and the figure of the alternatives report: verdicts, plan names, hours by group size.

:func:`verdicts` says, per scenario, which plan wins, where SPARe stands and
what each plan costs (the samples it skips); :func:`alternatives_figure`
draws the best hours against group size at 600k GPUs (exact-batch plans
solid, elastic dashed).  The tables are :mod:`spare_theory.reports.alternatives`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported only when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["FASTEST_PRESET", "REFERENCE", "alternatives_figure", "plan_name", "verdicts"]

#: The plan every alternative is measured against.
REFERENCE = "spare"
#: The preset of both fast restarts (the reference is also priced there).
FASTEST_PRESET = "fast_restarts"
# How a verdict names the cost a crossover varies.
_VARIED = {
    "restart_minutes": "restarts",
    "reconfigure_minutes": "reconfiguration stalls",
    "repair_minutes": "repairs",
}


def plan_name(row: Any) -> str:
    """A row's plan: ``spare``, ``spare (m = 16)``, ``ckpt (fast_restarts)``."""
    name = str(row.strategy) + (f" (m = {row.microbatches})" if row.microbatches > 1 else "")
    return f"{name} ({row.preset})" if row.preset else name


def _skipped(row: Any) -> str:
    return f"skipping {100 * row.samples_skipped:.1f} % of the global batch"


def _hours_text(hours: float) -> str:
    return f"{hours:,.0f} h" if hours < 1e6 else "does not finish"


def verdicts(table: pd.DataFrame, crossings: pd.DataFrame | None = None) -> dict[str, str]:
    """A few sentences per scenario: the winner, the reference's place, what each plan costs.

    The first sentences compare the plans at the scenario's own costs; the
    fast-restart rows are then compared with the reference (:data:`REFERENCE`,
    SPARe) at the same fast costs.
    """
    out: dict[str, str] = {}
    for label, part in table.groupby("scenario", sort=False):
        part = part.sort_values("hours", kind="stable")
        own = list(part[part["preset"] == ""].itertuples(index=False))
        best = own[0]
        ref = next(r for r in own if r.strategy == REFERENCE and r.microbatches == 1)
        spares = [r for r in own if r.strategy == REFERENCE]
        others = [r for r in own if r.strategy != REFERENCE]
        exact = next(r for r in own if r.exact_batch)
        top = spares[0]
        if best.strategy == REFERENCE:
            rival = others[0]
            text = (
                f"{label}: at the scenario's costs SPARe is the best choice: {plan_name(best)} "
                f"needs {_hours_text(best.hours)}"
                + (f" (SPARe unsplit {_hours_text(ref.hours)})" if best is not ref else "")
                + f"; the best other plan is {plan_name(rival)} ({_hours_text(rival.hours)}"
                + ("" if rival.exact_batch else f", {_skipped(rival)}")
                + ")."
            )
        else:
            text = (
                f"{label}: at the scenario's costs SPARe is not the best choice: {plan_name(best)} "
                f"needs {_hours_text(best.hours)} against {_hours_text(top.hours)} for the "
                f"best SPARe plan ({plan_name(top)}; "
                f"{100 * (1.0 - best.hours / top.hours):.1f} % fewer), "
                + ("with the global batch exact" if best.exact_batch else _skipped(best))
                + "."
            )
            if not best.exact_batch:
                text += (
                    f" The best exact-batch plan is {plan_name(exact)} "
                    f"({_hours_text(exact.hours)})."
                )
        # others[0] is named above (the winner, or the best plan other than SPARe).
        faster = [r for r in others[1:] if r.hours < ref.hours and r is not exact]
        if faster:
            text += (
                f" Also faster than SPARe unsplit ({_hours_text(ref.hours)}): "
                + "; ".join(
                    f"{plan_name(r)} {_hours_text(r.hours)}"
                    + ("" if r.exact_batch else f" ({_skipped(r)})")
                    for r in faster
                )
                + "."
            )
        fast = part[part["preset"] == FASTEST_PRESET]
        ckpt = fast[fast["strategy"] != REFERENCE]
        same = fast[fast["strategy"] == REFERENCE]
        if len(ckpt) and len(same):
            c, sp = next(ckpt.itertuples(index=False)), next(same.itertuples(index=False))
            text += (
                f" With fast restarts (R = {c.restart_minutes:g} min, delta = "
                f"{60 * c.checkpoint_minutes:g} s) {plan_name(c)} needs {_hours_text(c.hours)}, "
                + ("fewer" if c.hours < best.hours else "more")
                + f" than {plan_name(best)} at the scenario's costs; "
                + (
                    "SPARe's best plan at those costs is r = 1, that same plan (no spare pays)"
                    if sp.r == 1
                    else f"SPARe at those costs (r = {sp.r}) {_hours_text(sp.hours)}"
                )
                + "."
            )
        if crossings is not None:
            mine = crossings[crossings["scenario"] == label]
            parts = [
                f"{r.strategy}{' (' + r.preset + ')' if r.preset else ''} with "
                f"{_VARIED[r.varied]} {r.overtakes_reference}"
                for r in mine.itertuples(index=False)
            ]
            if parts:
                text += " Faster than SPARe unsplit: " + "; ".join(parts) + "."
        out[str(label)] = text
    return out


def alternatives_figure(table: pd.DataFrame, work_hours: float) -> Figure:
    """Best hours against group size at 600k GPUs: exact batch solid, elastic dashed."""
    import matplotlib.pyplot as plt

    part = table[table["gpus"] == 600_000]
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    off: list[str] = []
    fast = part[(part["preset"] == FASTEST_PRESET) & (part["strategy"] == REFERENCE)]
    for (strategy, _, preset), line in part.groupby(
        ["strategy", "microbatches", "preset"], sort=False
    ):
        line = line.sort_values("gpus_per_group")
        label = plan_name(next(line.itertuples(index=False)))
        if strategy == REFERENCE and preset:
            continue  # drawn on the CKPT-only line when it is the same plan (r = 1)
        if preset == FASTEST_PRESET and (fast["r"] == 1).all():
            label += " = spare (fast_restarts)"
        if (line["hours"] > 20 * work_hours).all():
            off.append(label)
            continue
        exact = bool(line["exact_batch"].all())
        ax.plot(
            line["gpus_per_group"],
            line["hours"].where(line["hours"] <= 20 * work_hours),
            "o-" if exact else "o--",
            label=label + ("" if exact else " (batch not exact)"),
        )
    ax.axhline(work_hours, color="k", lw=0.8, ls=":", label="failure-free work")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(part["gpus_per_group"].unique()))
    ax.get_xaxis().set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("GPUs per group")
    ax.set_ylabel("expected wall-clock hours (best plan)")
    title = "600k GPUs, no repairs, 3 min stalls: best plan of each strategy"
    if off:
        title += f"\n(off the axes, > {20 * work_hours:,.0f} h: {', '.join(off)})"
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig
