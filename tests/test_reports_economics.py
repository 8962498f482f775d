"""The 600k comparison in hours, dollars and MWh: the bills' identities, the ranks, the words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spare_theory import CostModel, Scenario, optimal_plan
from spare_theory.reports import alternatives as alt
from spare_theory.reports._io import CSV_ROUNDING
from spare_theory.reports.economics import (
    BILL_COLUMNS,
    ECONOMICS_COST,
    bill_fields,
    rank_columns,
    ranking_changes,
)
from spare_theory.reports.headline import HEADLINE_COLUMNS, headline_economics, headline_table

ROOT = Path(__file__).resolve().parent.parent
LABEL = "100k GPUs, groups of 1024"


def _check_identities(frame: pd.DataFrame, gpus: pd.Series | None, rtol: float = 1e-9) -> None:
    """The bill's formulas from the cost model's stated figures (not from the code).

    ``gpus``: the reserved GPUs of each row, where known; ``rtol``: 1e-9 on the figures
    themselves, a few of the CSV's roundings on a written table.
    """
    price, busy_w, idle_w, pue, kg = 2.99, 700.0, 100.0, 1.10, 0.3734
    assert (ECONOMICS_COST.gpu_hour_usd, ECONOMICS_COST.pue) == (price, pue)
    if gpus is not None:
        np.testing.assert_allclose(frame["gpu_hours"], gpus * frame["hours"], rtol=rtol)
    np.testing.assert_allclose(frame["usd"], price * frame["gpu_hours"], rtol=rtol)
    idle = frame["gpu_hours"] - frame["busy_gpu_hours"]
    energy = pue * (frame["busy_gpu_hours"] * busy_w + idle * idle_w) / 1e6
    np.testing.assert_allclose(frame["energy_mwh"], energy, rtol=rtol)
    np.testing.assert_allclose(frame["co2_tonnes"], kg * frame["energy_mwh"], rtol=rtol)
    # Within the all-idle and all-busy bounds.
    assert (frame["busy_gpu_hours"] >= 0).all()
    assert (frame["busy_gpu_hours"] <= frame["gpu_hours"] * (1 + 1e-12)).all()
    low = pue * frame["gpu_hours"] * idle_w / 1e6
    high = pue * frame["gpu_hours"] * busy_w / 1e6
    assert (frame["energy_mwh"] >= low * (1 - 1e-12)).all()
    assert (frame["energy_mwh"] <= high * (1 + 1e-12)).all()


def _check_ranks(frame: pd.DataFrame) -> None:
    for _, part in frame.groupby("scenario"):
        for rank, column in (
            ("rank_hours", "hours"),
            ("rank_usd", "usd"),
            ("rank_energy", "energy_mwh"),
        ):
            # A plan's rank is one more than the number of plans strictly below it.
            values = part[column].to_numpy()
            expected = [1 + int((values < v).sum()) for v in values]
            assert part[rank].tolist() == expected


@pytest.fixture(scope="module")
def plans() -> pd.DataFrame:
    chosen = {LABEL: alt.scenarios((), trace=False)[LABEL]}
    return alt.plans_table(chosen, progress=False)


@pytest.mark.slow
def test_every_alternatives_row_is_billed_where_it_is_planned(plans):
    assert set(BILL_COLUMNS) <= set(plans.columns)
    # No spare pool in this scenario: the reserved GPUs are the scenario's.
    _check_identities(plans, plans["gpus"])
    row = plans[(plans["strategy"] == "spare") & (plans["microbatches"] == 1)].iloc[0]
    sc = alt.scenarios((), trace=False)[LABEL]
    expected = bill_fields(optimal_plan(sc, "spare"))
    assert {c: row[c] for c in BILL_COLUMNS} == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_the_ranks_count_the_plans_below(plans):
    _check_ranks(rank_columns(plans, "scenario"))


@pytest.mark.slow
def test_the_headline_is_billed_without_changing_its_columns():
    head = headline_table(gpus_per_group=[4096], microbatches=[16], cost=CostModel())
    plain = headline_table(gpus_per_group=[4096], microbatches=[16])
    pd.testing.assert_frame_equal(head[list(plain.columns)], plain)
    econ = headline_economics(head)
    assert econ["plan"].tolist() == ["ckpt", "rep", "spare", "spare_m16"]
    _check_identities(econ, pd.Series(600_000.0, index=econ.index))
    _check_ranks(econ)
    sc = Scenario.published_600k(4096)
    assert econ.loc[econ["plan"] == "rep", "usd"].iloc[0] == pytest.approx(
        optimal_plan(sc, "rep").bill(CostModel()).usd, rel=1e-12
    )


def test_the_committed_economics_tables_satisfy_the_bill_identities():
    for name in ("alternatives_economics", "headline_economics"):
        frame = pd.read_csv(ROOT / "tables" / f"{name}.csv")
        # The CSV keeps 6 significant digits: the identities hold to a few roundings. The trace's
        # scenario also reserves its spare servers: GPU-hours checked on the 600k rows.
        big = frame[frame["scenario"].str.startswith("600k")]
        written = 3 * CSV_ROUNDING
        _check_identities(big, pd.Series(600_000.0, index=big.index), written)
        _check_identities(frame, None, written)
        _check_ranks(frame)
        assert set(frame["scenario"]) >= {"600k GPUs, groups of 2048"}


def test_the_committed_headline_keeps_its_columns():
    frame = pd.read_csv(ROOT / "tables" / "headline.csv")
    assert tuple(frame.columns) == HEADLINE_COLUMNS


def test_ranking_changes_names_the_swaps_and_only_them():
    frame = pd.DataFrame(
        {
            "scenario": ["a"] * 3 + ["b"] * 2,
            "plan": ["x", "y", "z", "u", "v"],
            "hours": [1.0, 2.0, 3.0, 1.0, 2.0],
            "energy_mwh": [5.0, 2.0, 1.0, 1.0, 2.0],
        }
    )
    said = ranking_changes(frame, "scenario", lambda r: r.plan)
    # a: every pair swaps (energy falls as hours rise): 3 pairs; b: none.
    assert said["a"].startswith("a: by energy (MWh; place by hours in brackets): z 1 [3], y 2 [2]")
    assert "3 pairs of plans finish in one order and draw energy in the other" in said["a"]
    assert said["b"] == "b: energy ranks the plans as time does."
