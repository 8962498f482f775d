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
    "sweep": ["reduction_vs_best_rep_spare", "availability_spare", "cluster_mtbf_minutes"],
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
