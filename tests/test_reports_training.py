import pandas as pd

from spare_theory.reports import training as rt


def test_quick_reproduce_writes_tables_and_figures(tmp_path):
    paths = rt.reproduce(tmp_path, quick=True, progress=False)
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
    assert err["pass"].all()
    head = pd.read_csv(tmp_path / "tables" / "headline.csv")
    # SPARe beats the best Rep+CKPT and CKPT-only at every group size.
    assert (head.spare_h < head.rep_h).all() and (head.rep_h < head.ckpt_h).all()


def test_error_table_is_seeded():
    a = rt.training_error_table(quick=True, seed=5, progress=False)
    b = rt.training_error_table(quick=True, seed=5, progress=False)
    pd.testing.assert_frame_equal(a, b)
