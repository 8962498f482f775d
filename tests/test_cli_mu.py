"""``spare-theory mu`` and ``spare-theory table mu``."""

import json

import pytest

from spare_theory.cli import main
from spare_theory.wipeout.expansion import endurable_failures_gamma
from spare_theory.wipeout.law import endurable_failures


def test_mu_json(capsys):
    assert main(["mu", "--N", "4096", "--r", "16", "--trials", "200", "--seed", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["gamma"] == pytest.approx(endurable_failures_gamma(4096, 16))
    assert data["sharp"] == pytest.approx(endurable_failures(4096, 16))
    assert data["trials"] == 200 and len(data["marks"]) == 16
    # The simulated mean is near the theory (k = 5 SE, a loose check of the wiring).
    assert abs(data["mc_mean_T"] - data["sharp"]) <= 5 * data["mc_se_T"]


def test_mu_text(capsys):
    assert main(["mu", "--N", "1024", "--r", "4", "--trials", "100"]) == 0
    out = capsys.readouterr().out
    assert "Gamma form" in out and "sharp form" in out and "+-" in out


def test_mu_closed_forms_only_at_huge_N(capsys):
    # --trials 0 skips the simulation, so the closed forms are available where no
    # placement fits in memory.
    assert main(["mu", "--N", str(10**12), "--r", "20", "--trials", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "mc_mean_T" not in data
    assert data["sharp"] == pytest.approx(endurable_failures(10**12, 20))


@pytest.mark.parametrize(
    "argv, word",
    [
        (["mu", "--N", "100", "--r", "16"], "N=100"),
        (["mu", "--N", "4096", "--r", "16", "--trials", "-1"], "trials"),
        (["mu", "--N", "4096", "--r", "3", "--trials", "0", "--seed", "-1"], "seed"),
        (["mu", "--N", "4096"], "--r"),
        (["mu", "--N", "4096", "--r", "3", "--seed", "-1"], "seed"),
    ],
)
def test_bad_arguments_one_line_exit_2(capsys, argv, word):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


@pytest.mark.slow
def test_table_mu_quick(tmp_path, capsys):
    assert (
        main(["table", "mu", "--quick", "--outdir", str(tmp_path), "--no-progress", "--json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    for path in data["files"]:
        assert (tmp_path / path).exists() or __import__("pathlib").Path(path).exists()
    assert "Gamma form" in data["verdicts"]["mu_error"]


def test_table_commands_print_their_verdict(tmp_path, capsys):
    """The verdict of the Markdown table is on stdout, not only in the file."""
    assert main(["table", "mu", "--quick", "--outdir", str(tmp_path), "--no-progress"]) == 0
    text = capsys.readouterr().out
    verdict = (tmp_path / "tables" / "mu_error.md").read_text().rstrip().splitlines()[-1]
    assert " ".join(verdict.split()[:6]) in " ".join(text.split())
    assert "Mean absolute error" in text and "wrote" in text
    # 100 columns, but for the paths written (as long as the temporary directory's).
    assert max(len(line) for line in text.splitlines() if str(tmp_path) not in line) <= 100


def test_mu_refuses_a_huge_simulation_before_allocating(capsys):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    assert main(["mu", "--N", str(10**9), "--r", "16"]) == 2
    err = capsys.readouterr().err
    assert "GiB" in err and "--trials 0" in err
    # Nothing near the 119 GiB placement was touched (peak memory grew by < 100 MiB).
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024


def test_cyclic_placement_refuses_before_allocating():
    import resource

    from spare_theory.placement.placements import MAX_PLACEMENT_BYTES, cyclic_placement

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError, match="MAX_PLACEMENT_BYTES"):
        cyclic_placement(10**9, 16)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024
    assert MAX_PLACEMENT_BYTES < 8 * 10**9 * 16
