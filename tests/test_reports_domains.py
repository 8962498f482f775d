"""The domains report: files, columns, and the ablation's main effect."""

import pandas as pd
import pytest

from spare_theory.reports.catalogue import REPORTS, ReportOptions
from spare_theory.reports.domains import ABLATION_COLUMNS


@pytest.mark.slow
def test_quick_reproduce_writes_tables_and_figure(tmp_path):
    paths = REPORTS["domains"].run(ReportOptions(tmp_path, quick=True, progress=False))
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "domain_ablation.csv",
            "domain_ablation.md",
            "domain_closed_form.csv",
            "domain_closed_form.md",
            "lemons.csv",
            "lemons.md",
            "domain_ablation.png",
        ]
    )
    table = pd.read_csv(tmp_path / "tables" / "domain_ablation.csv")
    assert tuple(table.columns) == ABLATION_COLUMNS
    # Domains of 16 groups, 30 % of failures from domain events: the contiguous
    # placement (all hosts of a type in one or two domains) endures far fewer
    # failures than the domain-aware one (each type's hosts in distinct domains).
    cell = table[(table["domain_size"] == 16) & (table["domain_share"] == 0.3)]
    cell = cell.set_index("placement")
    gap = cell.loc["domain_aware", "endured_failures"] - cell.loc["contiguous", "endured_failures"]
    se = (
        cell.loc["domain_aware", "endured_failures_se"] ** 2
        + cell.loc["contiguous", "endured_failures_se"] ** 2
    ) ** 0.5
    assert gap > 4 * se  # 4 SE
    # Without domain events the reference row has hours_change 0 by definition.
    ref = table[(table["placement"] == "ruler") & (table["domain_share"] == 0)]
    assert float(ref["hours_change"].iloc[0]) == 0.0
