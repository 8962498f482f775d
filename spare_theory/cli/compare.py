"""``spare-theory compare``: SPARe beside what planners pick.

``compare`` prices one hour-level scenario (the generated scenario options of
:mod:`spare_theory.cli.fields`; default ``Scenario.published_600k()``, 600k
GPUs in groups of 2048) with every registered strategy's best plan, the
fast-restart CKPT-only presets and SPARe at fast restarts, says where SPARe is
not the best choice and what the winner costs in skipped samples, and where
CKPT-only with in-memory checkpoints overtakes SPARe in the restart cost
(``--stall-crossovers`` adds elastic DP's and hot spares' reconfiguration
stall: about ten best plans each).  The rows and sentences are those of
:mod:`spare_theory.reports.alternatives`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import Output, UsageError, add_json
from .fields import add_scenario_options
from .points import scenario_points

_DESCRIPTION = (
    "Every registered strategy's best plan on one hour-level scenario (default: 600k GPUs in "
    "groups of 2048, 60 min restarts, 5 min checkpoints, 720 h, 3 min reconfiguration "
    "stalls, no repairs), the fast-restart CKPT-only presets (Scenario.preset: in-process "
    "restart R = 1 min, in-memory checkpoints delta = 3 s, both) and SPARe at fast restarts: "
    "hours, uptime, samples skipped, exact batch; a verdict; where each alternative "
    "overtakes SPARe."
)


def configure_compare(parser: argparse.ArgumentParser) -> None:
    """``spare-theory compare``: its description and options."""
    parser.description = _DESCRIPTION
    parser.add_argument(
        "--stall-crossovers",
        action="store_true",
        help="also search the reconfiguration stall below which elastic DP and hot spares "
        "beat SPARe (brentq on [0.05, 30] min; about ten best plans each, seconds to a "
        "minute at 600k GPUs)",
    )
    add_json(parser)
    add_scenario_options(parser)
    parser.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> Output:
    from ..hourly.scenario import Scenario
    from ..reports.alternatives import compare

    (point,) = scenario_points(args)
    sc = point.scenario
    if not isinstance(sc, Scenario):
        raise UsageError(
            "compare prices hour-level scenarios (the fast-restart presets are Scenario's); "
            "drop --paper and the step-level options"
        )
    plans, cross, verdict = compare(
        sc, label="This scenario", stall_crossovers=args.stall_crossovers
    )
    return Output(
        "\n".join([*_wrap(str(sc)), "", *_table_text(plans), "", *_wrap(verdict)]),
        {
            "scenario": str(sc),
            "plans": _records(plans),
            "crossovers": _records(cross),
            "verdict": verdict,
        },
    )


def _records(frame: Any) -> list[dict[str, Any]]:
    return [
        {k: (None if v != v else v) for k, v in row.items()}  # NaN -> null
        for row in frame.to_dict(orient="records")
    ]


def _wrap(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, 100)


def _table_text(plans: Any) -> list[str]:
    import pandas as pd

    from ..reports.alternatives_text import plan_name

    headers = ["plan", "r", "quorum", "interval", "hours", "uptime", "skipped", "exact", ""]
    body = []
    for row in plans.sort_values("hours", kind="stable").itertuples(index=False):
        name = plan_name(row)
        q = row.min_groups
        body.append(
            [
                name,
                "-" if pd.isna(row.r) else f"{int(row.r)}",
                "-" if pd.isna(q) else f"{int(q)}",
                f"{row.checkpoint_interval_minutes:.3g} min",
                f"{row.hours:,.0f}" if row.hours < 1e6 else "never",
                f"{row.uptime:.3f}",
                f"{100 * row.samples_skipped:.1f} %",
                "yes" if row.exact_batch else "no",
                "best" if row.winner else ("best exact" if row.best_exact else ""),
            ]
        )
    widths = [max(len(r[i]) for r in [headers, *body]) for i in range(len(headers))]
    lines = []
    for cells in [headers, *body]:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1], strict=True)]
        lines.append("  ".join([first, *rest, cells[-1]]).rstrip())
    return lines
