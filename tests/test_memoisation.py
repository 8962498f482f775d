"""The caches of layers 1-3 are the package's one cache: keyed on values, emptied by one call.

``tests/test_caching.py`` checks that no module memoises with functools; this
checks each memoised function of placement/, wipeout/ and stacking/ in use.
"""

from __future__ import annotations

import numpy as np
import pytest

import spare_theory
from spare_theory._caching import clear_caches
from spare_theory.placement import rulers
from spare_theory.stacking import load
from spare_theory.wipeout import expansion


@pytest.mark.parametrize(
    ("cache", "call"),
    [
        (rulers._modular_ruler_cached, lambda: spare_theory.modular_ruler(np.int64(1000), 5)),
        (rulers._constructed_ruler, lambda: spare_theory.golomb_ruler(31)),
        (expansion.survival_sum, lambda: spare_theory.wipeout_law(1000, 3).mean()),
        (expansion._turning_point, lambda: spare_theory.wipeout_law(1000, 3).sf(500)),
        (load.load_table, lambda: spare_theory.expected_load(100, 4, 10, microbatches=4)),
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
