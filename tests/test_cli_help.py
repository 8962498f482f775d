"""``spare-theory --version`` and the help text of the computing subcommands."""

import subprocess
import sys

import pytest

import spare_theory
from spare_theory.cli import main


def test_version_prints_the_package_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"spare-theory {spare_theory.__version__}"


@pytest.mark.slow
def test_version_from_the_console_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "spare_theory.cli", "--version"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert out.strip() == f"spare-theory {spare_theory.__version__}"


# Each subcommand's --help says what it computes and reads every output column.
HELP_WORDS = {
    "optimize": [
        "expected time to train",
        "availability",
        "restarts",
        "interval",
        "hours",
        "fraction of wall time",
    ],
    "headline": [
        "600,000",
        "Llama 3",
        "availability_spare",
        "uptime_spare",
        "kept_compute_share_spare",
        "reduction_vs_best_rep_spare",
        "overhead_spare",
        "hours_ckpt",
    ],
    "overhead": [
        "S(N, r)",
        "closed_form_failure",
        "closed_form_time",
        "mc_mean_failure",
        "mc_mean_T",
        "max_S_star",
    ],
    "mu": ["wipes out", "gamma", "sharp", "mc_mean_T"],
    "sweep": ["grid", "reduction_vs_<other>", "availability", "--restart-model linear"],
}


@pytest.mark.parametrize("command", sorted(HELP_WORDS))
def test_help_describes_the_computation_and_its_outputs(command, capsys):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for word in HELP_WORDS[command]:
        assert word in text, (command, word)


def test_help_lists_every_subcommand(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("mu", "overhead", "optimize", "headline", "sweep", "reproduce", "table"):
        assert command in out


def test_library_warnings_are_said_in_one_line_each(monkeypatch, capsys):
    """A warning raised under a command is one 'spare-theory: warning:' line, never raw."""
    import warnings

    from spare_theory.cli import mu

    original = mu._run_mu

    def noisy(args):
        for _ in range(3):  # the same place three times: said once
            warnings.warn("invalid value encountered in multiply", RuntimeWarning, stacklevel=1)
        return original(args)

    monkeypatch.setattr(mu, "_run_mu", noisy)
    assert main(["mu", "--N", "13", "--r", "3", "--trials", "0"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("spare-theory: warning: RuntimeWarning at ")
    assert "invalid value encountered in multiply" in err[0]
