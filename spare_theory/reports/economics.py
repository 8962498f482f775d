"""The paper's economics, checked: plans in hours, dollars and MWh side by side (issue 27, item 5).

The SPARe paper claims lower energy and financial cost as well as fewer hours.
A plan's :class:`~spare_theory.planning.bill.Bill` prices it
(:meth:`Plan.bill <spare_theory.planning.plan.Plan.bill>`): every reserved GPU
for the whole wall time in dollars, and the energy of the GPUs computing
(checkpoints, lost and redundant work included) at their busy power and of the
waiting ones (restarts, stalls, down groups) at their idle power.  The reports
that compute the 600k plans (:mod:`spare_theory.reports.headline` through
:mod:`spare_theory.reports.training`, and :mod:`spare_theory.reports.alternatives`)
bill the plans they already have with :data:`ECONOMICS_COST` (no plan is
searched again) and write them with this module's helpers.

Dollars rank plans as hours do wherever every plan reserves the same GPUs
(``usd = reserved GPUs x hours x gpu_hour_usd``); energy need not: a plan that
computes redundant work at full power can finish first and still draw more
than one that waits through restarts at idle power.  :func:`ranking_changes`
says where.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..planning.bill import CostModel
from ..planning.plan import Plan

__all__ = [
    "BILL_COLUMNS",
    "ECONOMICS_COST",
    "ECONOMICS_NOTES",
    "bill_fields",
    "rank_columns",
    "ranking_changes",
]

#: The cost model of the economics tables: :class:`~spare_theory.planning.bill.CostModel`'s
#: defaults (an H100 at $2.99 an hour, 700 W busy, 100 W idle, PUE 1.10, 0.3734 kg CO2/kWh).
ECONOMICS_COST = CostModel()

#: The bill columns a plan row gains (:func:`bill_fields`).
BILL_COLUMNS = ("gpu_hours", "busy_gpu_hours", "usd", "energy_mwh", "co2_tonnes")

#: What the economics tables' notes say about the cost model.
ECONOMICS_NOTES = (
    "Bills (Plan.bill) under CostModel()'s defaults: $2.99 a GPU-hour (Lambda's on-demand "
    "H100 SXM price), 700 W a computing GPU (H100 SXM board power), 100 W a waiting one "
    "(this package's choice), PUE 1.10 (Google's fleet, 2023), 0.3734 kg CO2/kWh (US "
    "average, EPA eGRID2022); docs/jobs.md gives the sources. gpu_hours: every reserved "
    "GPU for the whole wall time; usd = gpu_hours x 2.99; busy_gpu_hours: GPU-hours "
    "computing or checkpointing (lost and redundant work included); energy_mwh = 1.10 x "
    "(busy x 700 W + idle x 100 W) / 1e6. rank_*: the plan's place in its scenario by "
    "hours, dollars and energy (1: fewest)."
)


def bill_fields(plan: Plan[Any], cost: CostModel = ECONOMICS_COST) -> dict[str, float]:
    """A plan's bill as table columns (:data:`BILL_COLUMNS`).

    Examples
    --------
    >>> from spare_theory import Scenario, optimal_plan
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> row = bill_fields(optimal_plan(sc, "ckpt"))
    >>> sorted(row) == sorted(BILL_COLUMNS), round(row["usd"] / row["gpu_hours"], 2)
    (True, 2.99)
    """
    bill = plan.bill(cost)
    return {name: float(getattr(bill, name)) for name in BILL_COLUMNS}


def rank_columns(frame: pd.DataFrame, by: str | list[str]) -> pd.DataFrame:
    """``frame`` with ``rank_hours``, ``rank_usd`` and ``rank_energy`` within each ``by`` group.

    Ties share the lower rank (``method="min"``).

    Examples
    --------
    >>> f = pd.DataFrame({"scenario": ["a", "a", "a"], "hours": [3.0, 1.0, 2.0],
    ...                   "usd": [3.0, 1.0, 2.0], "energy_mwh": [1.0, 5.0, 2.0]})
    >>> rank_columns(f, "scenario")[["rank_hours", "rank_energy"]].values.tolist()
    [[3, 1], [1, 3], [2, 2]]
    """
    out = frame.copy()
    groups = out.groupby(by, sort=False)
    for name, column in (("hours", "hours"), ("usd", "usd"), ("energy", "energy_mwh")):
        out[f"rank_{name}"] = groups[column].rank(method="min").astype(int)
    return out


def ranking_changes(
    frame: pd.DataFrame, by: str, name: Callable[[Any], str], groups: Iterable[str] | None = None
) -> dict[str, str]:
    """Per ``by`` group, a sentence on where the energy ranking differs from the time ranking.

    The plans in order of energy, each with its place by hours, and how many
    pairs of plans finish in one order and draw energy in the other.

    Parameters
    ----------
    frame : pandas.DataFrame
        Plan rows with ``hours`` and ``energy_mwh``.
    by : str
        The column that groups rows into scenarios.
    name : callable
        A row (namedtuple) to the plan's name.
    groups : iterable of str, optional
        The groups to say, in order (default: all, in the frame's order).

    Examples
    --------
    >>> f = pd.DataFrame({"scenario": ["s"] * 3, "plan": ["x", "y", "z"],
    ...                   "hours": [1.0, 2.0, 3.0], "energy_mwh": [3.0, 2.0, 4.0]})
    >>> print(ranking_changes(f, "scenario", lambda r: r.plan)["s"])
    s: by energy (MWh; place by hours in brackets): y 2 [2], x 3 [1], z 4 [3]; 1 pair of plans
    finishes in one order and draws energy in the other.
    """
    out: dict[str, str] = {}
    labels = list(dict.fromkeys(frame[by])) if groups is None else list(groups)
    for label in labels:
        part = frame[frame[by] == label]
        by_hours = part["hours"].rank(method="min").astype(int)
        rows = sorted(
            zip(part.itertuples(index=False), by_hours, strict=True),
            key=lambda pair: float(pair[0].energy_mwh),
        )
        hours, energy = part["hours"].to_numpy(), part["energy_mwh"].to_numpy()
        # Pairs ordered one way by hours and the other by energy (each pair once).
        opposite = np.sign(np.subtract.outer(hours, hours)) * np.sign(
            np.subtract.outer(energy, energy)
        )
        swapped = int(np.count_nonzero(np.triu(opposite < 0, 1)))
        if swapped == 0:
            out[label] = f"{label}: energy ranks the plans as time does."
            continue
        order = ", ".join(f"{name(row)} {_num(row.energy_mwh)} [{place}]" for row, place in rows)
        pairs = f"{swapped} pair{'s' if swapped > 1 else ''} of plans"
        verb = "finish" if swapped > 1 else "finishes"
        draw = "draw" if swapped > 1 else "draws"
        out[label] = (
            f"{label}: by energy (MWh; place by hours in brackets): {order}; {pairs} {verb} "
            f"in one order and {draw} energy in the other."
        )
    return out


def _num(x: float) -> str:
    """A table figure in words: thousands separated, three significant digits from 1e6."""
    return f"{x:.3g}" if abs(x) >= 1e6 else f"{x:,.0f}"
