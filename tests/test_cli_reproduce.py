"""``spare-theory reproduce`` and the common return type of every ``reports.*.reproduce``."""

import inspect
import json
from pathlib import Path

import pytest

from spare_theory.cli import main
from spare_theory.reports import reproduce as umbrella


def test_reproduce_quick_sweep_writes_and_lists_its_files(tmp_path, capsys):
    argv = ["reproduce", "--quick", "--only", "sweep", "--outdir", str(tmp_path)]
    assert main([*argv, "--no-progress", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["sweep"] and data["sweep"]["seconds"] > 0
    files = [Path(f) for f in data["sweep"]["files"]]
    assert {f.name for f in files} == {
        "sweep.csv",
        "sweep.md",
        "sweep_by_point.csv",
        "sweep_by_point.md",
        "sweep_reduction.png",
        "sweep_availability.png",
    }
    assert all(f.is_file() and f.stat().st_size > 0 for f in files)


def test_umbrella_returns_the_list_of_files(tmp_path):
    paths = umbrella.reproduce(tmp_path, quick=True, only=["sweep"], progress=False)
    assert isinstance(paths, list) and all(isinstance(p, Path) and p.is_file() for p in paths)
    with pytest.raises(ValueError, match="only"):
        umbrella.reproduce(tmp_path, only=["plots"])


@pytest.mark.parametrize("name", umbrella.REPORTS)
def test_every_report_has_the_common_signature(name):
    import importlib

    func = importlib.import_module(f"spare_theory.reports.{name}").reproduce
    signature = inspect.signature(func)
    assert list(signature.parameters) == ["outdir", "quick", "executor", "seed", "progress"]
    assert all(p.kind is p.KEYWORD_ONLY for n, p in signature.parameters.items() if n != "outdir")
    assert signature.return_annotation == "list[Path]"
