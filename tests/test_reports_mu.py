"""The mu error table, its summary, figure and files (spare_theory.reports.mu)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from spare_theory.reports import mu as rep
from spare_theory.reports.catalogue import REPORTS, ReportOptions
from spare_theory.wipeout.expansion import endurable_failures_gamma
from spare_theory.wipeout.law import endurable_failures

GRID = dict(N=[128, 1024], r=[2, 20])


def test_table_rows_and_no_ruler_cells_are_kept():
    table = rep.mu_error_table(**GRID, trials=300, seed=1, progress=False)
    assert list(zip(table["N"], table["r"])) == [(128, 2), (1024, 2), (128, 20), (1024, 20)]
    no_ruler = table[(table["N"] == 128) & (table["r"] == 20)].iloc[0]
    assert no_ruler["status"].startswith("no ruler:") and "381" in no_ruler["status"]
    assert np.isnan(no_ruler["mc_mean_T"])
    ok = table[table["status"] == "ok"]
    assert len(ok) == 3 and (ok["trials"] == 300).all()
    np.testing.assert_allclose(
        ok["gamma"], endurable_failures_gamma(ok["N"].to_numpy(), ok["r"].to_numpy())
    )
    np.testing.assert_allclose(
        ok["sharp"], endurable_failures(ok["N"].to_numpy(), ok["r"].to_numpy())
    )
    np.testing.assert_allclose(ok["rel_error_sharp"], ok["sharp"] / ok["mc_mean_T"] - 1)
    np.testing.assert_allclose(ok["rel_error_gamma"], ok["gamma"] / ok["mc_mean_T"] - 1)
    np.testing.assert_allclose(ok["mc_rel_se_T"], ok["mc_se_T"] / ok["mc_mean_T"])


def test_adaptive_trials_reach_the_target_and_do_not_depend_on_the_executor():
    grid = dict(N=[256, 1024], r=[3, 8])
    serial = rep.mu_error_table(**grid, rel_se_target=0.01, seed=7, progress=False)
    ok = serial[serial["status"] == "ok"]
    assert (ok["mc_rel_se_T"] <= 0.01).all()
    with ThreadPoolExecutor(2) as pool:
        threaded = rep.mu_error_table(
            **grid, rel_se_target=0.01, seed=7, executor=pool, progress=False
        )
    pd.testing.assert_frame_equal(serial, threaded)


def test_summary_reports_both_maes_next_to_published():
    table = rep.mu_error_table(**GRID, trials=300, seed=1, progress=False)
    summary = rep.mu_error_summary(table)
    ok = table[table["status"] == "ok"]
    assert summary["published_mae_gamma"] == 0.0113
    assert summary["mae_gamma"] == pytest.approx(ok["rel_error_gamma"].abs().mean())
    assert summary["mae_sharp"] == pytest.approx(ok["rel_error_sharp"].abs().mean())
    assert (summary["cells"], summary["simulated_cells"]) == (4, 3)
    assert "1.13 %" in rep.mu_summary_text(summary)


@pytest.mark.slow
def test_reproduce_quick_writes_table_and_figure(tmp_path):
    paths = REPORTS["mu"].run(ReportOptions(tmp_path, quick=True, seed=3, progress=False))
    names = sorted(p.relative_to(tmp_path).as_posix() for p in paths)
    assert names == ["figures/endurable_failures.png", "tables/mu_error.csv", "tables/mu_error.md"]
    table = pd.read_csv(tmp_path / "tables" / "mu_error.csv")
    assert len(table) == len(rep.QUICK_N) * len(rep.QUICK_R)
    assert "published: 1.13 %" in (tmp_path / "tables" / "mu_error.md").read_text()
    assert (tmp_path / "figures" / "endurable_failures.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    "kwargs",
    [dict(rel_se_target=0), dict(rel_se_target=2), dict(trials=1), dict(N=[0]), dict(r=[2.5])],
)
def test_bad_arguments_name_themselves(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        rep.mu_error_table(**{**GRID, **kwargs}, progress=False)


def test_grid_is_keyword_only_and_named_like_the_other_tables():
    with pytest.raises(TypeError):
        rep.mu_error_table([128], [2], trials=10, progress=False)
    assert list(rep.mu_error_table(N=[128], r=[2], trials=10, progress=False).columns) == list(
        rep.COLUMNS
    )
    # Fractions everywhere: no column is a percentage.
    assert not [c for c in rep.COLUMNS if "pct" in c or "percent" in c]
