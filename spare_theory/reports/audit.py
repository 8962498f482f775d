"""``spare-theory table audit``: the closed forms audited over random scenarios.

A small run of :func:`spare_theory.audits.run.audit` on the default
:class:`~spare_theory.audits.space.AuditSpace` (:data:`SCENARIOS` scenarios,
every strategy, :data:`TRIALS` simulated runs per model answer):

- ``tables/audit``: the errors overall, by optional field and by strategy
  (:meth:`AuditResult.summary_table
  <spare_theory.audits.run.AuditResult.summary_table>`), in percent;
- ``tables/audit_cells``: every cell, with the index that re-draws its
  scenario (``spare-theory audit --seed SEED --index I``);
- ``figures/audit``: each model answer's error against the simulation by
  optional field, the 3 % band shaded.

Percentages are written to 0.1 (and the simulated hours to 4 significant
digits) so that the last bits that differ between library versions do not
reach the committed files.  The slow test ``tests/test_audit.py`` runs the
larger audit (at least 300 model answers) on a seed of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..audits.run import WITHIN_REL, WITHIN_SE, AuditResult, audit
from ..audits.space import FIELDS
from ._io import save_figure, write_table
from .catalogue import ReportOptions

__all__ = ["SCENARIOS", "TRIALS", "cells_table", "figure", "summary_percent", "write"]

#: Scenarios of the report's audit (``--quick``: 6) and runs per model answer (``--quick``: 10).
SCENARIOS, TRIALS = 30, 40


def summary_percent(result: AuditResult) -> pd.DataFrame:
    """The summary table with the errors and shares in percent, rounded to 0.1.

    Examples
    --------
    >>> from spare_theory.audits import AuditSpace, audit
    >>> res = audit(AuditSpace(step_share=0.0), scenarios=1, trials=4, strategies=["ckpt"])
    >>> list(summary_percent(res).columns)[:4]
    ['by', 'group', 'cells', 'model']
    """
    table = result.summary_table()
    percent = (
        "refused_share",
        "median_abs_error",
        "p90_abs_error",
        "worst_error",
        "outside_share",
        "kept_outside_share",
    )
    return pd.DataFrame(
        {
            name: (100 * table[name]).round(1) if name in percent else table[name]
            for name in table.columns
        }
    ).rename(columns={name: f"{name}_pct" for name in percent})


def cells_table(result: AuditResult) -> pd.DataFrame:
    """Every cell, rounded for the committed file (hours to 4 significant digits).

    ``r`` and ``min_groups`` are blank where the plan has none (CKPT-only's and
    elastic DP's ``r``, the quorum of the strategies without one), as the API's ``None``.
    """
    cells = result.cells
    out = cells[["index", "level", "fields", "strategy", "status"]].copy()
    for name in ("r", "min_groups"):
        out[name] = pd.to_numeric(cells[name], errors="coerce").astype(float)
    for name in ("interval", "model_hours", "simulated_hours", "standard_error_hours"):
        out[name] = cells[name].map(_significant).astype(float)
    out["error_pct"] = (100 * cells["error"].astype(float)).round(1)
    out["z"] = cells["z"].astype(float).round(1)
    out["within"] = cells["within"]
    out["audit_refused"] = cells["audit_refused"]
    out["warnings"] = cells["warnings"]
    out["reason"] = [_reason(row) for row in cells.itertuples(index=False)]
    return out


def _significant(value: Any) -> Any:
    return value if value is None or value != value else float(f"{float(value):.4g}")


def _reason(row: Any) -> str:
    """The refusal's or failure's first clause (the full text is in the audit's ``message``)."""
    if row.status == "model" or not row.message:
        return ""
    return str(row.message).split(":")[0].split(" (")[0][:90]


def figure(result: AuditResult) -> Any:
    import matplotlib.pyplot as plt

    answered = result.model_cells
    tags = answered["fields"].str.split(", ")
    groups = [g for g in ("none", *FIELDS) if tags.apply(lambda t, g=g: g in t).any()]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.axhspan(-100 * WITHIN_REL, 100 * WITHIN_REL, color="0.9", zorder=0)
    rng = np.random.default_rng(0)  # horizontal jitter only
    for x, name in enumerate(groups):
        rows = answered[tags.apply(lambda t, n=name: n in t)]
        err = 100 * rows["error"].to_numpy(dtype=float)
        inside = rows["within"].to_numpy(dtype=bool)
        jitter = x + rng.uniform(-0.25, 0.25, len(err))
        ax.scatter(jitter[inside], err[inside], s=10, color="tab:blue")
        ax.scatter(jitter[~inside], err[~inside], s=14, color="tab:red")
    ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")
    ax.set_ylabel("model / simulation - 1 (%)")
    ax.set_title(
        f"Audit: {len(answered)} model answers on {result.cells['index'].nunique()} random "
        f"scenarios (red: outside {WITHIN_REL:.0%} and {WITHIN_SE:g} SE)"
    )
    ax.axhline(0, color="0.4", lw=0.8)
    return fig


def write(options: ReportOptions) -> list[Path]:
    """Write ``tables/audit``, ``tables/audit_cells`` and ``figures/audit`` (module docstring).

    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    scenarios, trials = (6, 10) if options.quick else (SCENARIOS, TRIALS)
    result = audit(
        scenarios=scenarios,
        trials=trials,
        seed=options.seed,
        executor=options.executor,
        progress=options.progress,
    )
    answered = result.model_cells
    within = answered["within"].astype(bool)
    verdict = (
        f"{int(within.sum())} of {len(answered)} model answers within {WITHIN_REL:.0%} or "
        f"{WITHIN_SE:g} standard errors ({within.mean():.1%}); "
        f"{(result.cells['status'] == 'refused').mean():.1%} of the cells refused to the "
        f"simulation; {int(result.cells['warnings'].sum())} warnings."
    )
    refused = answered["audit_refused"].astype(bool)
    if refused.any():
        kept = within[~refused]
        verdict += (
            f" The shipped audit's rule (strategies.coverage) refuses {int(refused.sum())} of "
            f"those answers; {int(kept.sum())} of the {len(kept)} it keeps are within "
            f"({kept.mean():.1%})."
        )
    tables = options.outdir / "tables"
    return [
        *write_table(
            summary_percent(result),
            tables,
            "audit",
            title="Audit: every strategy's model plan against its simulation, random scenarios",
            notes=f"spare-theory audit --scenarios {scenarios} --trials {trials} (the default "
            "AuditSpace: 8-64 groups of 8-32 GPUs, group MTBF 3-60 h, restarts 2-40 min, "
            "checkpoints 0.2-5 min, 20-80 h; Weibull 0.5-1.3 on group or node clocks; "
            "exponential, fixed or lognormal repairs of 10-600 min; pools of 1-32 spare nodes; "
            "domains of 2-8 groups with 5-50 % of the failures; lemons; a fifth at the step "
            "level). Each cell: optimal_plan(method='model'), then simulate_training at that "
            f"plan with {trials} runs, the strategies of a scenario on common random numbers. "
            "A scenario with several optional fields counts under each. outside: model "
            f"answers outside {WITHIN_REL:.0%} and {WITHIN_SE:g} SE. " + verdict,
        ),
        *write_table(
            cells_table(result),
            tables,
            "audit_cells",
            title="Audit: every cell (re-run one: spare-theory audit --seed SEED --index INDEX)",
            notes="interval: minutes (hour level) or steps (step level); error_pct: model "
            "hours / simulated mean - 1; z: in standard errors of the simulated mean.",
        ),
        save_figure(figure(result), options.outdir / "figures", "audit"),
    ]
