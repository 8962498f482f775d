"""CLI: spare-theory overhead and spare-theory table overhead."""

import json

import pytest

from spare_theory.cli import main


def test_overhead_json(capsys):
    assert (
        main(["overhead", "--N", "128", "--r", "4", "--trials", "40", "--seed", "3", "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["trials"] == 40 and 1 < data["closed_form_failure"] <= data["closed_form_time"] < 4
    # The CLI reports what the library computes: simulation within 4 of its own SEs.
    for weighting in ("failure", "time"):
        gap = abs(data[f"mc_mean_{weighting}"] - data[f"closed_form_{weighting}"])
        assert gap < 4 * data[f"mc_se_{weighting}"] + 1e-3
    assert data["max_S_star"] <= 4 and data["mc_mean_T"] > 4


def test_overhead_text_without_simulation(capsys):
    assert main(["overhead", "--N", "128", "--r", "4", "--trials", "0"]) == 0
    out = capsys.readouterr().out
    assert "closed form" in out and "simulation" not in out


def test_overhead_bad_arguments_exit_2(capsys):
    assert main(["overhead", "--N", "10", "--r", "12"]) == 2
    assert "N" in capsys.readouterr().err
    assert main(["overhead", "--N", "128", "--r", "4", "--trials", "-1"]) == 2


@pytest.mark.slow
def test_table_overhead_quick(tmp_path, capsys):
    assert (
        main(["table", "overhead", "--quick", "--outdir", str(tmp_path), "--no-progress", "--json"])
        == 0
    )
    files = json.loads(capsys.readouterr().out)["files"]
    assert any(f.endswith("overhead_error.csv") for f in files)
    assert (tmp_path / "figures" / "placement_ablation.png").exists()


def test_overhead_samples_equal_the_library_simulation(capsys):
    import numpy as np

    from spare_theory import cyclic_placement, simulate_overhead

    assert (
        main(["overhead", "--N", "200", "--r", "5", "--trials", "7", "--seed", "9", "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    s = simulate_overhead(cyclic_placement(200, 5), 7, seed=9)
    assert data["mc_mean_failure"] == float(s.per_failure.mean())
    assert np.isclose(data["mc_mean_time"], s.time_weighted.mean(), rtol=1e-14, atol=0)
    assert data["mc_mean_T"] == float(s.T.mean()) and data["max_S_star"] == s.max_stacks.max()


def test_default_trials_fit_the_time_budget_and_say_so(capsys):
    argv = ["overhead", "--N", "512", "--r", "6", "--time-budget", "1e-6", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["trials"] == 2 and data["trials_cut_from"] == 100
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cut from 100 to 2 trials" in out and "--trials 0" in out
    # An explicit --trials is never cut.
    assert main([*argv, "--trials", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["trials"] == 5


def test_huge_N_closed_forms_raise_no_library_warning(capsys):
    """At N = 1e12 the quadrature once leaked scipy's IntegrationWarning (r = 16)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for r in ("2", "16", "20"):
            assert main(["overhead", "--N", "1e12", "--r", r, "--trials", "0"]) == 0
    assert capsys.readouterr().err == ""
