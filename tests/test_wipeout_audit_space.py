"""The wipe-out doors on the audit's scenario space (issue 41, item 1), drawn at random.

Every hour-level scenario of :class:`~spare_theory.audits.space.AuditSpace` is put to both
doors for CKPT-only, Rep and SPARe: each either refuses it naming a field or an argument
(both the same way), or both answer and agree within 3 % or 3 standard errors of the
simulation's mean.  SPARe with repairs is held apart: its measured miss is the strict xfail
below (``docs/audit.md``, "The wipe-out doors").
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

from spare_theory import NoClosedFormError, mean_time_to_wipeout, simulate_time_to_wipeout
from spare_theory.audits.space import AuditSpace
from spare_theory.hourly.scenario import Scenario

pytestmark = pytest.mark.slow

TRIALS = 4000


def _r(strategy: str, N: int, rng: np.random.Generator) -> int | None:
    """A redundancy the strategy takes at ``N`` groups, drawn from 2 to 4."""
    if strategy == "ckpt":
        return None
    r = int(rng.integers(2, 5))
    if strategy == "rep":
        return r if N % r == 0 else (2 if N % 2 == 0 else None)
    while r * (r - 1) + 1 > N:  # a modular ruler with r marks needs r(r-1)+1 groups
        r -= 1
    return r


def _cells(space: AuditSpace, seed: int, count: int, strategies: tuple[str, ...]):
    for index in range(count):
        scenario = space.draw(seed, index).scenario
        if not isinstance(scenario, Scenario):
            continue
        rng = np.random.default_rng([seed, index])
        for strategy in strategies:
            r = _r(strategy, scenario.groups, rng)
            if strategy == "rep" and r is None:
                continue
            yield index, scenario, strategy, r


def _both(scenario: Scenario, strategy: str, r: int | None, seed: int):
    """``(model hours, simulation)``, or the refusal's message when both doors refuse."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            model = mean_time_to_wipeout(scenario, strategy, r=r)
        except (NoClosedFormError, ValueError) as exc:
            with pytest.raises(ValueError) as refused:
                simulate_time_to_wipeout(scenario, strategy, r=r, trials=2, seed=seed)
            assert str(refused.value).split(":")[0] == str(exc).split(":")[0]
            return str(exc)
        sim = simulate_time_to_wipeout(scenario, strategy, r=r, trials=TRIALS, seed=seed)
    assert math.isfinite(model)
    return model, sim


def _misses(cells, seed: int) -> tuple[int, list[str]]:
    answered, misses = 0, []
    for index, scenario, strategy, r in cells:
        got = _both(scenario, strategy, r, seed * 1000 + index)
        if isinstance(got, str):
            continue
        answered += 1
        model, sim = got
        error = model - sim.mean_hours
        if abs(error) > max(0.03 * sim.mean_hours, 3 * sim.standard_error_hours):
            misses.append(f"{index} {strategy} r={r}: {model:.4g} h vs {sim.mean_hours:.4g} h")
    return answered, misses


def test_the_wipeout_doors_agree_or_refuse_alike_on_the_audit_space():
    space = AuditSpace()
    cells = [
        cell
        for cell in _cells(space, 13, 300, ("ckpt", "rep", "spare"))
        if not (cell[2] == "spare" and cell[1].repairs)
    ]
    answered, misses = _misses(cells, 13)
    # 172 cells answer (74 CKPT-only, 43 Rep, 55 SPARe); with the sharp law in SPARe's
    # door, seed 11's 98 answered cells had 11 outside, all SPARe at N <= 23.
    assert answered >= 150
    assert misses == []


@pytest.mark.xfail(
    strict=True,
    reason="SPARe's repair cycle under non-exponential repair laws and slow repairs at small N: "
    "17 of 142 outside on a repairs-only draw, worst +12.8 %, docs/audit.md",
)
def test_spare_with_repairs_agrees_on_the_audit_space():
    space = dataclasses.replace(
        AuditSpace(),
        step_share=0.0,
        weibull_share=0.0,
        repairs_share=1.0,
        pool_share=0.0,
        domains_share=0.0,
        lemons_share=0.0,
    )
    answered, misses = _misses(_cells(space, 5, 40, ("spare",)), 5)
    assert answered == 40
    assert misses == []
