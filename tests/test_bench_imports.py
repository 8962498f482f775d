"""Every benchmark in ``bench/`` imports: a renamed or moved API fails here, in CI, not when
someone next times a change (``bench/bench_training.py`` imported a module gone since the
layer split)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "bench"


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda path: path.name)
def test_the_benchmark_imports(path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # each runs its work under ``if __name__ == "__main__"``
    assert module.__doc__, f"{path.name} has no docstring saying what it measures"
