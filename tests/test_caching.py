"""One memoisation for the package: keyed on values, registered, cleared by one call."""

from __future__ import annotations

import ast
import concurrent.futures
import dataclasses
import multiprocessing
import os
import time
from pathlib import Path

import pytest
from scipy import stats

import spare_theory
from spare_theory import Scenario, clear_caches, optimal_plan, paper_scenario, time_to_train
from spare_theory._caching import (
    SHARED_CACHE_ENV,
    _plain_text,
    cached,
    registered_caches,
    shared_cache,
    value_key,
)

PACKAGE = Path(spare_theory.__file__).parent


def test_no_other_memoisation_in_the_package():
    # functools.lru_cache / functools.cache key on hash and identity (a frozen scipy law
    # misses every time) and clear_caches() would not reach them.
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_caching.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            attribute = (
                isinstance(node, ast.Attribute)
                and node.attr in {"lru_cache", "cache"}
                and isinstance(node.value, ast.Name)
                and node.value.id == "functools"
            )
            imported = (
                isinstance(node, ast.ImportFrom)
                and node.module == "functools"
                and any(a.name in {"lru_cache", "cache"} for a in node.names)
            )
            if attribute or imported:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def test_equal_laws_share_a_cache_entry():
    # Two frozen laws with the same parameters are different objects with different
    # hashes; the cache must see one value.
    a, b = stats.weibull_min(0.78, scale=2.0), stats.weibull_min(0.78, scale=2.0)
    assert a is not b and value_key(a) == value_key(b)
    assert value_key(stats.weibull_min(0.7, scale=2.0)) != value_key(a)
    calls = []

    @cached(maxsize=4)
    def mean(law):
        calls.append(1)
        return float(law.mean())

    assert mean(a) == mean(b) and len(calls) == 1


@pytest.mark.slow
def test_scenarios_rebuilt_hit_the_cache():
    clear_caches()
    law = stats.weibull_min(0.78, scale=50_000.0)

    def scenario():
        return Scenario(
            gpus=512,
            gpus_per_group=8,
            restart_minutes=20,
            checkpoint_minutes=5,
            work_hours=24,
            failure_law=law,
        )

    first = time_to_train(scenario(), "spare", r=4)
    hits = sum(c.cache_info().hits for c in registered_caches())
    again = time_to_train(dataclasses.replace(scenario()), "spare", r=4)
    assert again == first
    assert sum(c.cache_info().hits for c in registered_caches()) > hits
    # The published step-level scenario, built twice: the restart windows are computed once.
    a, b = paper_scenario(200), paper_scenario(200)
    assert a == b and value_key(a) == value_key(b)


@pytest.mark.slow
def test_clear_caches_empties_every_cache_and_changes_no_number():
    sc = Scenario.published_600k(4096)
    before = optimal_plan(sc, "spare")
    assert sum(c.cache_info().currsize for c in registered_caches()) > 0
    clear_caches()
    assert all(c.cache_info().currsize == 0 for c in registered_caches())
    after = optimal_plan(sc, "spare")
    assert after.estimate == before.estimate


def test_laws_of_different_strategies_never_share_a_key():
    # A repair cycle over Rep and one over SPARe at the same N, r, mu are different laws.
    from spare_theory.cycles.rep import Rep
    from spare_theory.cycles.repairs import RepairCycle
    from spare_theory.cycles.spare import Spare

    rep, spare = RepairCycle(Rep(64, 3), mu=20.0), RepairCycle(Spare(64, 3), mu=20.0)
    assert value_key(rep) != value_key(spare)
    assert value_key(Rep(64, 3)) == value_key(Rep(64, 3)) != value_key(Spare(64, 3))


# --- shared between processes (cached(shared=True) inside shared_cache()) ---

_CALLS_ENV = "SPARE_THEORY_TEST_CALLS"


@cached(maxsize=8, shared=True)
def _slow_square(x: float) -> float:
    """Records each computation in the file the environment names, then squares."""
    with open(os.environ[_CALLS_ENV], "a") as calls:
        calls.write(f"{x}\n")
    time.sleep(0.2)  # long enough that both processes ask while one computes
    return x * x


@cached(maxsize=8, shared=True)
def _size(names: frozenset) -> int:
    with open(os.environ[_CALLS_ENV], "a") as calls:
        calls.write("size\n")
    return len(names)


def _in_child(task):
    kind, value = task
    return _slow_square(value) if kind == "square" else _size(value)


def _computed(tasks, tmp_path):
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    os.environ[_CALLS_ENV] = str(calls)
    context = multiprocessing.get_context("fork")
    try:
        with (
            shared_cache(tmp_path),
            concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool,
        ):
            results = list(pool.map(_in_child, tasks))
    finally:
        del os.environ[_CALLS_ENV]
    return results, calls.read_text().split()


def test_shared_call_is_computed_once_across_processes(tmp_path):
    tasks = [("square", 3.0)] * 4 + [("square", 4.0)] * 4
    results, calls = _computed(tasks, tmp_path)
    assert results == [9.0] * 4 + [16.0] * 4
    assert sorted(calls) == ["3.0", "4.0"]


def test_keys_that_are_not_plain_values_are_not_shared(tmp_path):
    # A frozenset's repr follows its strings' hashes, which differ between processes
    # (PYTHONHASHSEED): it is computed in-process, never stored; a plain key is stored.
    os.environ[_CALLS_ENV] = str(tmp_path / "calls.txt")
    try:
        with shared_cache(tmp_path) as folder:
            assert _size(frozenset({"a", "b", "c"})) == 3
            assert list(folder.glob("*.pickle")) == []
            assert _slow_square(5.0) == 25.0
            assert len(list(folder.glob("*.pickle"))) == 1
    finally:
        del os.environ[_CALLS_ENV]
        clear_caches()


def test_scipy_laws_are_plain_keys():
    # Scenarios hold frozen scipy laws; value_key reduces them to family and numbers,
    # so plans of scenarios with laws are shared.
    key = value_key(((stats.gamma(2.0, scale=3.0),), {}))
    assert _plain_text(key) == _plain_text(value_key(((stats.gamma(2.0, scale=3.0),), {})))
    assert _plain_text(key) is not None


def test_shared_cache_removes_its_folder_and_restores_the_environment(tmp_path):
    os.environ[SHARED_CACHE_ENV] = "before"
    try:
        with shared_cache(tmp_path) as folder:
            assert os.environ[SHARED_CACHE_ENV] == str(folder) and folder.is_dir()
        assert not folder.exists() and os.environ[SHARED_CACHE_ENV] == "before"
    finally:
        del os.environ[SHARED_CACHE_ENV]
