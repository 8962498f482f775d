"""The bill's causes from failure classes (issue 39 item 1): ``detection`` (the waits and
stalls until a failure is noticed), ``slowdown`` (the time a straggler's slowed steps take
beyond their work) and ``rollback`` (the compute a corruption sends back beyond the last
checkpoint), in the model and in the simulation, the identities kept.

The simulation measures each on its clock (``hourly.simulation``); the model takes each
from the part of the renewal sums it belongs to (``hourly.renewal``: the restart's wait
``int_0^w Q / Q(rho)``, the laws' ``theta_losses``, the rollback's share of the compute
kept).  Tolerance for each cause: 3 standard errors of its simulated mean plus 1 % of the
simulated hours (the model's hours themselves are held to 3 % elsewhere; a cause is a part
of them).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scenarios import SIXTEEN_GROUPS_WITH_CLASSES, drawn_class_scenario

import spare_theory as st
from spare_theory import CostModel, FailureClass, Scenario
from spare_theory.planning.bill import BADPUT_CAUSES

CLASS_CAUSES = ("detection", "slowdown", "rollback")

MIXED = (
    FailureClass("crash", 0.6),
    FailureClass("hang", 0.2, "hang", 30.0),
    FailureClass("slow", 0.1, "straggler", 40.0, slowdown=2.0),
    FailureClass("sdc", 0.1, "corruption", 30.0, rollback_checkpoints=3),
)
BASE = Scenario(**SIXTEEN_GROUPS_WITH_CLASSES, failure_classes=MIXED)


def _misses(sc: Scenario, name: str, r: int | None, tau: float, seed: int) -> list[str]:
    """The causes whose model and simulated hours part by more than the tolerance."""
    est = st.time_to_train(sc, name, r=r, checkpoint_interval_minutes=tau)
    runs = st.simulate_training(
        sc, name, r=r, checkpoint_interval_minutes=tau, trials=300, seed=seed
    )
    parts = runs.breakdown_hours
    mean, se = parts.mean(axis=0), parts.std(axis=0, ddof=1) / np.sqrt(len(parts))
    found = []
    for i, cause in enumerate(BADPUT_CAUSES, start=1):
        if cause not in CLASS_CAUSES:
            continue
        gap = abs(est.badput_hours[cause] - mean[i])
        if gap > 3 * se[i] + 0.01 * runs.mean_hours:
            found.append(
                f"{name} r={r} {cause}: model {est.badput_hours[cause]:.3f} h, "
                f"simulated {mean[i]:.3f} +- {se[i]:.3f} h"
            )
    return found


def test_a_crash_noticed_at_once_has_none_of_them():
    sc = dataclasses.replace(BASE, failure_classes=(FailureClass("crash", 1.0),))
    est = st.time_to_train(sc, "spare", r=2, checkpoint_interval_minutes=60.0)
    runs = st.simulate_training(
        sc, "spare", r=2, checkpoint_interval_minutes=60.0, trials=20, seed=0
    )
    columns = [BADPUT_CAUSES.index(c) + 1 for c in CLASS_CAUSES]
    assert [est.badput_hours[c] for c in CLASS_CAUSES] == [0.0, 0.0, 0.0]
    assert not runs.breakdown_hours[:, columns].any()


@pytest.mark.parametrize(("name", "r"), [("ckpt", None), ("rep", 2), ("spare", 3)])
def test_the_identities_hold_in_both(name, r):
    est = st.time_to_train(BASE, name, r=r, checkpoint_interval_minutes=60.0)
    assert est.useful_hours + sum(est.badput_hours.values()) == pytest.approx(est.hours, rel=1e-12)
    assert all(est.badput_hours[c] > 0 for c in CLASS_CAUSES)
    runs = st.simulate_training(
        BASE, name, r=r, checkpoint_interval_minutes=60.0, trials=20, seed=1
    )
    np.testing.assert_allclose(runs.breakdown_hours.sum(axis=1), runs.hours, rtol=1e-12)
    bills = runs.bill(CostModel())
    for cause in CLASS_CAUSES:
        assert bills.mean(f"{cause}_hours") > 0


@pytest.mark.parametrize(("name", "r"), [("ckpt", None), ("rep", 2), ("spare", 2)])
def test_each_cause_against_the_simulation(name, r):
    assert _misses(BASE, name, r, 60.0, seed=2) == []


def _classes(rng: np.random.Generator) -> tuple[FailureClass, ...]:
    """A crash, a hang, a straggler and a corruption class, shares and times drawn."""
    hang, slow, sdc = (float(x) for x in rng.uniform(0.03, 0.2, size=3))
    return (
        FailureClass("crash", 1.0 - hang - slow - sdc),
        FailureClass("hang", hang, "hang", float(rng.uniform(1.0, 90.0))),
        FailureClass(
            "slow",
            slow,
            "straggler",
            float(rng.uniform(5.0, 90.0)),
            slowdown=float(rng.uniform(1.2, 3.0)),
        ),
        FailureClass(
            "sdc",
            sdc,
            "corruption",
            float(rng.uniform(0.0, 90.0)),
            rollback_checkpoints=int(rng.integers(1, 4)),
        ),
    )


def _drawn_misses(strategies: tuple[str, ...]) -> list[str]:
    """The misses of the 20 cells seed 2081 draws whose strategy is one of ``strategies``,
    each at the model's own interval (a drawn one can leave a run no chance to finish)."""
    rng = np.random.default_rng(2081)
    misses = []
    for _ in range(20):
        sc, name = drawn_class_scenario(rng, _classes)
        r = {"ckpt": None, "rep": 2, "spare": int(rng.integers(2, 4))}[name]
        if name in strategies:
            plan = st.optimal_plan(sc, name, method="model", r=r)
            misses += _misses(sc, name, r, plan.checkpoint_interval_minutes, seed=7)
    return misses


@pytest.mark.slow  # 14 drawn cells of CKPT-only and Rep, 300 runs each
def test_each_cause_against_the_simulation_on_drawn_scenarios():
    assert _drawn_misses(("ckpt", "rep")) == []


@pytest.mark.slow  # 6 drawn cells of SPARe, 300 runs each
@pytest.mark.xfail(
    strict=True,
    reason="SPARe with repairs leans high once corruptions end cycles (r = 3 on 32 groups of "
    "5 h MTBF, 86 min repairs: detection 79.5 h against 75.0 simulated, restarts 133 against "
    "123, hours +4.1 %: docs/failure_classes.md, 'The bill by cause')",
)
def test_spare_s_causes_against_the_simulation_on_drawn_scenarios():
    assert _drawn_misses(("spare",)) == []


@pytest.mark.slow  # 6 drawn Rep cells with repairs, 300 runs each
def test_hangs_beside_corruption_with_repairs_against_the_simulation():
    # With repairs, a corruption ends the cycle instead of taking its group down, so the
    # groups fail at the other classes' rate and a hang's share of those failures is its
    # share over theirs (GroupProcess.repaired_detections).  Taken over every class, the
    # stall was low and Rep's hours 0.2 to 7.7 % low (z down to -17) on these draws.
    rng = np.random.default_rng(6)
    cells = []
    while len(cells) < 6:
        sc, _ = drawn_class_scenario(rng, _classes)
        rng.integers(2, 4)  # the draw of SPARe's r, kept so the cells stay those measured
        if sc.repair_minutes is not None:
            cells.append(sc)
    for sc in cells:
        plan = st.optimal_plan(sc, "rep", method="model", r=2)
        runs = st.simulate_training(sc, plan, trials=300, seed=11)
        z = (plan.hours - runs.mean_hours) / runs.standard_error_hours
        assert abs(z) < 4, f"{sc.groups} groups: model {plan.hours:.2f} h, z = {z:+.1f}"
