"""``spare-theory reproduce``, and every report declared with its function and files."""

import inspect
import json
from pathlib import Path

import pytest

from spare_theory.cli import main
from spare_theory.reports import reproduce as umbrella
from spare_theory.reports.catalogue import REPORTS, ReportOptions


@pytest.mark.slow
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


@pytest.mark.slow
def test_umbrella_returns_the_list_of_files(tmp_path):
    paths = umbrella.reproduce(tmp_path, quick=True, only=["sweep"], progress=False)
    assert isinstance(paths, list) and all(isinstance(p, Path) and p.is_file() for p in paths)
    with pytest.raises(ValueError, match="only"):
        umbrella.reproduce(tmp_path, only=["plots"])


@pytest.mark.parametrize("name", list(REPORTS))
def test_every_report_is_declared_with_its_function_and_files(name):
    report = REPORTS[name]
    assert report.name == name and callable(report.function())
    assert inspect.signature(report.function()).parameters.keys() == {"options"}
    files = report.files("out")
    assert len(files) == 2 * len(report.tables) + len(report.figures) == len(set(files))


def test_a_report_that_writes_an_undeclared_file_is_refused(tmp_path, monkeypatch):
    import spare_theory.reports.sweep as sweep_report

    def stray(options):
        path = options.outdir / "tables" / "stray.csv"
        return [path]

    monkeypatch.setattr(sweep_report, "write", stray)
    with pytest.raises(RuntimeError, match="undeclared"):
        REPORTS["sweep"].run(ReportOptions(tmp_path))
    with pytest.raises(ValueError, match="full"):
        REPORTS["sweep"].run(ReportOptions(tmp_path, full=True))


@pytest.mark.slow
def test_resume_keeps_the_reports_already_written_for_the_same_run(tmp_path, capsys, monkeypatch):
    argv = ["reproduce", "--quick", "--only", "sweep", "--outdir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)["sweep"]
    assert first["resumed"] is False
    manifest = umbrella.read_manifest(tmp_path, "sweep")
    assert manifest["quick"] is True and manifest["seed"]["entropy"] == "0"
    assert {Path(f["path"]).name for f in manifest["files"]} == {
        Path(f).name for f in first["files"]
    }
    stamps = {f: Path(f).stat().st_mtime_ns for f in first["files"]}

    # With --resume the report must not run at all: make running it an error.
    import spare_theory.reports.sweep as sweep_report

    def refuse(*args, **kwargs):
        raise AssertionError("resume recomputed a report already written")

    monkeypatch.setattr(sweep_report, "write", refuse)
    assert main([*argv, "--resume", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)["sweep"]
    assert second["resumed"] is True and second["files"] == first["files"]
    assert {f: Path(f).stat().st_mtime_ns for f in first["files"]} == stamps

    # Another seed, another --quick, or a changed file: recomputed.
    with pytest.raises(AssertionError, match="recomputed"):
        umbrella.reproduce(tmp_path, quick=True, seed=1, only=["sweep"], resume=True)
    with pytest.raises(AssertionError, match="recomputed"):
        umbrella.reproduce(tmp_path, quick=False, only=["sweep"], resume=True)
    Path(first["files"][0]).write_text("edited")
    with pytest.raises(AssertionError, match="recomputed"):
        umbrella.reproduce(tmp_path, quick=True, only=["sweep"], resume=True)


@pytest.mark.slow
def test_an_interrupted_report_leaves_no_partial_file_and_no_manifest(tmp_path, monkeypatch):
    import matplotlib.figure

    umbrella.reproduce(tmp_path, quick=True, only=["sweep"], progress=False)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.png")}

    # Ctrl-C while the second figure is being written (after its bytes started to flow).
    real_savefig = matplotlib.figure.Figure.savefig
    calls = []

    def interrupted_savefig(self, fname, *args, **kwargs):
        calls.append(fname)
        real_savefig(self, fname, *args, **kwargs)
        if len(calls) == 2:
            Path(fname).write_bytes(b"half a png")
            raise KeyboardInterrupt

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", interrupted_savefig)
    with pytest.raises(KeyboardInterrupt):
        umbrella.reproduce(tmp_path, quick=True, only=["sweep"], progress=False)
    # The interrupted figure is the previous complete one; no temporary file is left behind.
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.png")} == before
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]
    # No manifest: --resume recomputes the interrupted report.
    assert umbrella.read_manifest(tmp_path, "sweep") is None


@pytest.mark.slow
def test_reproduce_killed_mid_run_leaves_only_complete_files(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "spare_theory.cli", "reproduce", "--quick", "--only", "sweep"]
    # Its own process group, killed whole: the report's pool workers go with it
    # (killing the parent alone left them orphaned).
    proc = subprocess.Popen(
        [*cmd, "--outdir", str(tmp_path), "--no-progress"], start_new_session=True
    )
    time.sleep(4.0)  # imports take ~2 s; the quick sweep a few s more
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # Whatever was written is complete: every CSV parses, every PNG ends with its IEND chunk.
    import pandas as pd

    def real(pattern):  # a kill may leave a hidden temporary file, never a partial real one
        return [p for p in tmp_path.rglob(pattern) if not p.name.startswith(".")]

    for csv in real("*.csv"):
        assert len(pd.read_csv(csv)) > 0
    for png in real("*.png"):
        assert png.read_bytes().endswith(b"IEND\xaeB`\x82")
    # The next run removes the temporary files the kill left behind.
    umbrella.reproduce(tmp_path, quick=True, only=["sweep"], progress=False)
    assert not [p for p in tmp_path.rglob(".*") if p.is_file() and p.parent.name != ".reproduce"]
