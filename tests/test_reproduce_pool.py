"""reproduce on its default process pool writes the same files as a serial run."""

from __future__ import annotations

from pathlib import Path

import pytest

from spare_theory.reports.reproduce import reproduce


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


def test_workers_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers"):
        reproduce(tmp_path, quick=True, only=["overhead"], progress=False, workers=0)
