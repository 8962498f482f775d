"""reproduce side by side on its default process pools writes the same files as a serial run."""

from __future__ import annotations

from pathlib import Path

import pytest

from spare_theory.reports.catalogue import REPORTS
from spare_theory.reports.reproduce import reproduce, run_reports


def _contents(paths: list[Path], root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in paths if p.suffix in (".csv", ".md")}


@pytest.mark.slow
def test_pool_and_serial_write_identical_tables(tmp_path: Path) -> None:
    serial = reproduce(
        tmp_path / "serial", quick=True, only=["overhead"], progress=False, workers=1
    )
    pooled = reproduce(tmp_path / "pool", quick=True, only=["overhead"], progress=False, workers=2)
    assert [p.name for p in serial] == [p.name for p in pooled]
    assert _contents(serial, tmp_path / "serial") == _contents(pooled, tmp_path / "pool")


@pytest.mark.slow
def test_reports_side_by_side_write_what_they_write_in_turn(tmp_path: Path) -> None:
    # Two reports run side by side in report processes, each with its own cell pool;
    # the order asked for is the order returned, whichever finishes first.
    names = ["sweep", "overhead"]
    serial = run_reports(tmp_path / "serial", quick=True, only=names, progress=False, workers=1)
    side = run_reports(tmp_path / "side", quick=True, only=names, progress=False, workers=2)
    assert [r.name for r in side] == names == [r.name for r in serial]
    assert all(r.seconds > 0 and not r.kept for r in side)
    files = [p for r in serial for p in r.files]
    assert _contents(files, tmp_path / "serial") == _contents(
        [p for r in side for p in r.files], tmp_path / "side"
    )
    # resume keeps both, side by side too.
    again = run_reports(tmp_path / "side", quick=True, only=names, progress=False, resume=True)
    assert all(r.kept for r in again) and [r.files for r in again] == [r.files for r in side]


def test_every_report_has_a_cost_to_order_it_by() -> None:
    assert all(report.cost_seconds > 0 for report in REPORTS.values())


def test_workers_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers"):
        reproduce(tmp_path, quick=True, only=["overhead"], progress=False, workers=0)
