"""Layers 1-3 memoise with the package's one cache (``spare_theory._caching.cached``).

``cached`` keys on values and registers every cache, so ``clear_caches()``
empties them all; ``functools.lru_cache`` does neither.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import spare_theory
from spare_theory._caching import clear_caches
from spare_theory.placement import rulers
from spare_theory.stacking import load
from spare_theory.wipeout import expansion

PACKAGE = Path(spare_theory.__file__).parent
FUNCTOOLS_CACHE = re.compile(
    r"functools\.(lru_cache|cache)\b|from functools import .*\b(lru_)?cache\b"
)


@pytest.mark.parametrize("layer", ["placement", "wipeout", "stacking"])
def test_no_functools_memoisation(layer: str) -> None:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        hits = [line for line in path.read_text().splitlines() if FUNCTOOLS_CACHE.search(line)]
        assert not hits, f"{path.relative_to(PACKAGE)} memoises with functools: {hits}"


def test_checker_sees_functools_memoisation() -> None:
    assert FUNCTOOLS_CACHE.search("@functools.lru_cache(maxsize=8)")
    assert FUNCTOOLS_CACHE.search("@functools.cache")
    assert FUNCTOOLS_CACHE.search("from functools import lru_cache")
    assert not FUNCTOOLS_CACHE.search("functools.partial(f, seg=seg)")


@pytest.mark.parametrize(
    ("cache", "call"),
    [
        (rulers._modular_ruler_cached, lambda: spare_theory.modular_ruler(np.int64(1000), 5)),
        (rulers._constructed_ruler, lambda: spare_theory.golomb_ruler(31)),
        (expansion.survival_sum, lambda: spare_theory.wipeout_law(1000, 3).mean()),
        (expansion._turning_point, lambda: spare_theory.wipeout_law(1000, 3).sf(500)),
        (load.load_table, lambda: spare_theory.expected_load(292, 8, 40, microbatches=8)),
    ],
    ids=["modular_ruler", "constructed_ruler", "survival_sum", "turning_point", "load_table"],
)
def test_caches_are_registered_and_keyed_on_values(cache, call) -> None:
    clear_caches()
    assert cache.cache_info().currsize == 0
    first = call()
    filled = cache.cache_info()
    assert filled.currsize >= 1
    again = call()  # equal values (an np.int64 N included) must hit, not add entries
    assert cache.cache_info().currsize == filled.currsize
    assert cache.cache_info().hits > filled.hits
    assert np.array_equal(np.asarray(first), np.asarray(again))
    clear_caches()  # empties only registered caches
    assert cache.cache_info().currsize == 0
