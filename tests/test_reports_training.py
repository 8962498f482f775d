import numpy as np
import pandas as pd
import pytest

from spare_theory.reports import headline
from spare_theory.reports import training as rt
from spare_theory.reports._io import CSV_ROUNDING
from spare_theory.reports.catalogue import REPORTS, ReportOptions


@pytest.mark.slow
def test_quick_reproduce_writes_tables_and_figures(tmp_path):
    paths = REPORTS["training"].run(ReportOptions(tmp_path, quick=True, progress=False))
    names = {p.name for p in paths}
    assert {
        "training_error.csv",
        "r_star.md",
        "headline.md",
        "time_to_train_vs_r.png",
        "headline.png",
    } <= names
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    err = pd.read_csv(tmp_path / "tables" / "training_error.csv")
    assert set(err.strategy) == {"ckpt", "rep", "spare"}
    assert err["in_band"].all()
    head = pd.read_csv(tmp_path / "tables" / "headline.csv")
    assert list(head.columns) == list(headline.HEADLINE_COLUMNS)
    # SPARe beats the best Rep+CKPT and CKPT-only at every group size.
    assert (head.hours_spare < head.hours_rep).all() and (head.hours_rep < head.hours_ckpt).all()
    # Ratios are fractions, not percentages. The CSV keeps 6 significant digits, so
    # 1 - a / b recomputed from the written hours is off by up to 1e-5 a / b (+ its own 5e-6).
    rounding = 4 * CSV_ROUNDING
    np.testing.assert_allclose(
        head.reduction_vs_best_rep_spare,
        1 - head.hours_spare / head.hours_rep,
        rtol=0,
        atol=rounding,
    )
    # Uptime counts checkpoints and lost compute as up, the kept-compute share does not.
    assert (head.uptime_spare >= head.kept_compute_share_spare).all()
    assert (head.uptime_spare <= 1).all() and (head.availability_spare < head.uptime_spare).all()
    # Splitting never raises the load (min_load <= min_stacks; m = 4 -> 16 refines), so the
    # split plans are ordered; their reductions are fractions of the right baselines.
    for m in headline.HEADLINE_MICROBATCHES:
        np.testing.assert_allclose(
            head[f"reduction_vs_spare_spare_m{m}"],
            1 - head[f"hours_spare_m{m}"] / head.hours_spare,
            rtol=0,
            atol=rounding,
        )
    assert (head.hours_spare_m4 < head.hours_spare).all()
    assert (head.hours_spare_m16 <= head.hours_spare_m4).all()
    r_star = pd.read_csv(tmp_path / "tables" / "r_star.csv")
    np.testing.assert_allclose(
        r_star.rule_loss, r_star.hours_rule / r_star.hours_optimal - 1, rtol=0, atol=rounding
    )


@pytest.mark.slow
def test_error_table_is_seeded():
    a = rt.training_error_table(quick=True, seed=5, progress=False)
    b = rt.training_error_table(quick=True, seed=5, progress=False)
    pd.testing.assert_frame_equal(a, b)


def test_table_functions_take_keyword_arguments_only():
    with pytest.raises(TypeError):
        headline.headline_table((2048,))
    with pytest.raises(TypeError):
        rt.r_star_table(True)
    with pytest.raises(TypeError):
        headline.sensitivity_table(2048)
    with pytest.raises(ValueError, match="N"):
        rt.r_star_table(N=[0])
    with pytest.raises(ValueError, match="microbatches"):
        headline.headline_table(gpus_per_group=[2048], microbatches=[1])
