"""Every ``spare-theory`` command of the README's and the docs' shell blocks runs.

Commands are read from the fenced ``bash``/``sh``/``shell``/``console`` blocks
of README.md, CONTRIBUTING.md and docs/*.md: each line (or ``&&`` part of a
line) that starts with ``spare-theory``, comments dropped, ``\\`` continuations
joined.  Each runs in process through :func:`spare_theory.cli.main` in a
scratch folder (whatever it writes lands there), which also holds the fenced
``toml`` blocks whose first line names a file (``# cluster.toml``).  The fast
commands always run; reports, tables, sweeps and simulations are marked slow
(still run in CI).  A full ``reproduce`` (the README's main job, about 10 minutes)
runs with ``--quick``: the same code at small sizes; the committed tables check
the full sizes (``tests/test_committed_tables.py``, ``tests/test_wipeout_law.py``).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from spare_theory.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
# Subcommands that run reports, grids of plans, audits or bootstraps: minutes, not seconds.
_SLOW = {"reproduce", "table", "headline", "sweep", "fit", "compare", "plan", "audit"}


def _blocks(kinds: set[str]) -> list[tuple[Path, str]]:
    return [
        (path, body)
        for path in DOCUMENTS
        for kind, body in _BLOCK.findall(path.read_text())
        if kind in kinds
    ]


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for path, body in _blocks({"bash", "sh", "shell", "console"}):
        for line in body.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:1] == ["spare-theory"]:
                    found.append((f"{path.name}: {' '.join(words)}", words[1:]))
    return found


def _slow(argv: list[str]) -> bool:
    simulates = argv[:1] == ["overhead"] and "--trials" not in argv  # up to a 60 s budget
    # A scenario file may hold fields no closed form covers for some strategy: the
    # simulation search plans those, in minutes at the README's 128 groups.
    searches = argv[:1] == ["optimize"] and "--scenario" in argv and "--method" not in argv
    return bool(_SLOW & set(argv[:1])) or simulates or searches or "--planned-restarts" in argv


COMMANDS = _commands()


def test_the_documents_have_examples():
    assert len(COMMANDS) >= 10
    assert any(_slow(argv) for _, argv in COMMANDS)
    assert any(not _slow(argv) for _, argv in COMMANDS)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(argv, id=name, marks=[pytest.mark.slow] if _slow(argv) else [])
        for name, argv in COMMANDS
    ],
)
def test_documented_command_runs(argv, tmp_path, monkeypatch, capsys):
    for _, body in _blocks({"toml"}):
        name = re.match(r"#\s*(\S+\.toml)\s*\n", body)
        if name:
            (tmp_path / name[1]).write_text(body)
    monkeypatch.chdir(tmp_path)
    if argv[:1] == ["reproduce"] and "--quick" not in argv:
        argv = [*argv, "--quick"]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "error" not in captured.err
    assert captured.out.strip()
