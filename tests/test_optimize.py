import math

import numpy as np
import pytest

from spare_theory import strategy as lookup
from spare_theory._validation import NoClosedFormError
from spare_theory.cycles.base import cycle_law_of
from spare_theory.hourly.process import group_process
from spare_theory.hourly.renewal import hours_grid
from spare_theory.hourly.scenario import Scenario
from spare_theory.placement.rulers import min_groups_for_ruler
from spare_theory.planning.redundancy import r_star_rule
from spare_theory.planning.search import minimize_integer
from spare_theory.training.estimate import time_to_train
from spare_theory.training.optimize import optimal_plan

SC = Scenario(
    gpus=4096,
    gpus_per_group=16,
    gpu_mtbf_hours=5000.0,
    restart_minutes=30,
    checkpoint_minutes=3,
    work_hours=200,
)


@pytest.mark.parametrize("strategy", ["rep", "spare"])
def test_plan_is_the_minimum_of_its_curve(strategy):
    plan = optimal_plan(SC, strategy)
    assert plan.hours == pytest.approx(plan.hours_by_r.min())
    assert plan.r == plan.r_values[np.argmin(plan.hours_by_r)]
    again = time_to_train(
        SC, strategy, r=plan.r, checkpoint_interval_minutes=plan.checkpoint_interval_minutes
    )
    assert again.hours == pytest.approx(plan.hours, rel=1e-12)
    # No neighbouring r and no other interval does better.
    for r in (plan.r - 1, plan.r + 1):
        if strategy != "ckpt" and 1 <= r <= SC.groups and r in plan.r_values:
            assert time_to_train(SC, strategy, r=r).hours >= plan.hours
    for factor in (0.7, 1.4):
        other = time_to_train(
            SC,
            strategy,
            r=plan.r,
            checkpoint_interval_minutes=plan.checkpoint_interval_minutes * factor,
        )
        assert other.hours >= plan.hours


def test_spare_only_uses_rulers_that_exist():
    sc = Scenario(
        gpus=160,
        gpus_per_group=8,
        gpu_mtbf_hours=300.0,
        restart_minutes=60,
        checkpoint_minutes=1,
        work_hours=50,
    )
    plan = optimal_plan(sc, "spare")
    assert all(min_groups_for_ruler(r) <= sc.groups for r in plan.r_values)


def test_ckpt_plan_has_no_r():
    # CKPT-only has no redundancy: its plan reports r = None (its one plan is the r = 1 law).
    plan = optimal_plan(SC, "ckpt")
    assert plan.r is None and plan.estimate.r is None and list(plan.r_values) == [1]


def test_r_star_rule():
    # floor(log2 N + 0.833) by hand: log2 64 = 6; log2 1e6 = 19.93.
    assert r_star_rule(64) == 6
    assert r_star_rule(1_000_000) == 20
    assert r_star_rule(146) == 8  # log2 146 = 7.19
    np.testing.assert_array_equal(r_star_rule([64, 1_000_000]), [6, 20])
    assert r_star_rule(1) == 1


@pytest.mark.parametrize("bad, name", [(0, "N"), (2.5, "N"), (True, "N"), (np.nan, "N")])
def test_r_star_rule_bad(bad, name):
    with pytest.raises(ValueError, match=name):
        r_star_rule(bad)


def test_optimal_plan_bad():
    with pytest.raises(ValueError, match="strategy"):
        optimal_plan(SC, "raid")
    with pytest.raises(ValueError, match="scenario"):
        optimal_plan("600k", "rep")


# ---------------------------------------------------------------------------
# The fast optimiser against a slow, exhaustive one written here.
# ---------------------------------------------------------------------------

H100 = Scenario.published_600k().gpu_mtbf_hours


def S(gpus, per_group, mtbf, restart, checkpoint, work):
    """A Scenario from its six fields in their documented order (keywords only)."""
    return Scenario(
        gpus=gpus,
        gpus_per_group=per_group,
        gpu_mtbf_hours=mtbf,
        restart_minutes=restart,
        checkpoint_minutes=checkpoint,
        work_hours=work,
    )


def _linear_restart(gpus):
    return 60.0 * gpus / 600_000


REFERENCE_SCENARIOS = (
    # The published headline: 600k H100 GPUs, 60 min restart, N = 75,000 .. 146.
    [Scenario.published_600k(g) for g in (8, 64, 256, 1024, 2048, 4096)]
    # Sweep corners: 10k and 1M GPUs, MTBF x0.5 and x2, 8 and 4096 GPUs per group, linear restart.
    + [
        S(g, m, H100 * k, _linear_restart(g), 5.0, 720.0)
        for g in (10_000, 1_000_000)
        for k in (0.5, 2.0)
        for m in (8, 4096)
    ]
    # Sweep interior.
    + [
        S(g, m, H100, _linear_restart(g), 5.0, 720.0)
        for g in (100_000, 300_000)
        for m in (16, 128, 512)
    ]
    + [
        S(1_000_000, 64, H100, _linear_restart(1_000_000), 5.0, 720.0),
        S(10_000, 64, H100 * 0.5, _linear_restart(10_000), 5.0, 720.0),
        S(600_000, 512, H100 * 0.5, 60.0, 5.0, 720.0),
        # Free checkpoints, costly checkpoints, free restarts, other rates, small N.
        S(600_000, 256, H100, 60.0, 0.0, 720.0),
        S(600_000, 256, H100, 60.0, 30.0, 720.0),
        S(600_000, 1024, H100, 0.0, 5.0, 720.0),
        S(100_000, 256, 20_000.0, 15.0, 5.0, 720.0),
        S(160, 8, 300.0, 60.0, 1.0, 50.0),
        S(4096, 16, 5000.0, 30.0, 3.0, 200.0),
        S(1024, 8, 2000.0, 20.0, 5.0, 48.0),
    ]
)

# Relative tolerance on hours (and on ties between two r), the optimiser's contract.
HOURS_RTOL = 1e-4


def _reference_interval_hours(sc, strategy, r):
    """Best hours at ``r`` over the documented search range, tau within a factor 100 of
    Young's ``sqrt(2 delta M)``, in [1 s, 600 W] and, for r > 1, at most M / 2 (M: time
    to Q = 1/e; see optimize.optimal_interval): every point of a grid of step 0.01
    in log tau (2.5x finer than the optimiser's finest first grid; hours against tau can
    have many local minima), then bounded Brent (xatol 1e-7) around the five best local
    minima of the grid.  The grid is evaluated with the model's vectorised form
    (``renewal.hours_grid``, checked equal to ``time_to_train`` in test_training.py),
    Brent with ``time_to_train`` itself; ``delta = 0`` uses 1 s, as documented."""
    from scipy.optimize import minimize_scalar

    if sc.checkpoint_minutes == 0:
        return time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=1 / 60).hours
    lam = sc.group_failure_rate_per_hour
    law = lookup(strategy).cycle_law(sc.groups, r)
    M = 60 * law.mean_u / lam
    young = math.sqrt(2 * sc.checkpoint_minutes * M)
    lo = math.log(max(young / 100, 1 / 60))
    hi = math.log(min(young * 100, 600 * sc.work_hours, M / 2 if r > 1 else math.inf))
    grid = np.linspace(lo, hi, int((hi - lo) / 0.01) + 2)
    with np.errstate(over="ignore"):  # restart-dominated runs: hours overflow to inf
        values = np.concatenate(
            [
                sc.work_hours * hours_grid(group_process(sc), law, chunk)[1]
                for chunk in np.array_split(grid, max(grid.size // 50, 1))
            ]
        )

    def hours(x):
        return time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=math.exp(x)).hours

    padded = np.concatenate([[np.inf], values, [np.inf]])
    minima = np.flatnonzero((padded[1:-1] <= padded[:-2]) & (padded[1:-1] <= padded[2:]))
    best = values.min()
    for i in minima[np.argsort(values[minima])][:5]:
        res = minimize_scalar(
            hours,
            bounds=(grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]),
            method="bounded",
            options={"xatol": 1e-7},
        )
        best = min(best, res.fun)
    return best


def _reference_curve(sc, strategy):
    """Best hours at every r the documented scan visits: r = 1, 2, ... until hours has
    not improved for 3 consecutive r (SPARe: while a modular ruler exists)."""
    from spare_theory.placement.rulers import modular_ruler

    N = sc.groups
    curve = {}
    for r in range(1, (1 if strategy == "ckpt" else N) + 1):
        if strategy == "spare" and r > 1:
            try:
                modular_ruler(N, r)
            except ValueError:
                break
        curve[r] = _reference_interval_hours(sc, strategy, r)
        if r - min(curve, key=curve.get) >= 3:
            break
    return curve


@pytest.mark.slow
@pytest.mark.parametrize(
    "sc",
    REFERENCE_SCENARIOS,
    ids=lambda sc: (
        f"G{sc.gpus}-M{sc.gpus_per_group}-m{sc.gpu_mtbf_hours:.0f}-R{sc.restart_minutes:g}-d{sc.checkpoint_minutes:g}"
    ),
)
def test_optimal_plan_matches_exhaustive_reference(sc):
    for strategy in ("ckpt", "rep", "spare"):
        plan = optimal_plan(sc, strategy)
        curve = _reference_curve(sc, strategy)
        best_r = min(curve, key=curve.get)
        # CKPT-only's plan has r = None: its law is r = 1
        r = lookup(strategy).check_r(sc.groups, plan.r)
        # Same r, or a tie within HOURS_RTOL in the reference's own hours.
        assert r == best_r or curve[r] <= curve[best_r] * (1 + HOURS_RTOL), (strategy, r, best_r)
        assert plan.hours == pytest.approx(curve[best_r], rel=HOURS_RTOL), strategy
        # The plan's own numbers are reproducible from the model...
        again = time_to_train(
            sc, strategy, r=plan.r, checkpoint_interval_minutes=plan.checkpoint_interval_minutes
        )
        assert again.hours == pytest.approx(plan.hours, rel=1e-12)
        # ...and its curve is the best hours at every r it reports.
        for r, hours in zip(plan.r_values, plan.hours_by_r):
            if r in curve:
                assert hours == pytest.approx(curve[r], rel=HOURS_RTOL), (strategy, r)


def test_plan_does_not_repeat_its_estimate():
    import dataclasses

    plan = optimal_plan(SC, "spare")
    assert [f.name for f in dataclasses.fields(plan)] == [
        "estimate",
        "r_values",
        "hours_by_r",
        "planned_restart_failures",  # the planned-restart trigger, not part of the estimate
        "planned_restart_cost",  # the step-cost threshold realising that trigger
        "variables",  # the strategy's own plan variables (an elastic plan's quorum)
        "microbatches",  # the pieces per shard it was planned with
        "method",  # model or simulation
        "verified_hours",  # what verification measured, not part of the estimate
        "verified_standard_error",
        "verified_trials",
        "moved_by_verification",
    ]
    est = plan.estimate
    assert (plan.strategy, plan.r, plan.checkpoint_interval_minutes, plan.hours) == (
        est.strategy,
        est.r,
        est.checkpoint_interval_minutes,
        est.hours,
    )
    assert plan.hours == plan.hours_by_r[list(plan.r_values).index(plan.r)]


def test_clear_caches_empties_them_and_changes_no_number():
    from spare_theory._caching import clear_caches

    before = optimal_plan(SC, "spare")
    assert cycle_law_of.cache_info().currsize > 0
    clear_caches()
    assert cycle_law_of.cache_info().currsize == 0
    after = optimal_plan(SC, "spare")
    assert after.estimate == before.estimate
    np.testing.assert_array_equal(after.hours_by_r, before.hours_by_r)


def test_non_scenario_goes_to_the_dispatch_point():
    with pytest.raises(ValueError, match="scenario must be a Scenario or a StepScenario, got dict"):
        optimal_plan({"gpus": 8}, "spare")


def test_walk_skips_the_r_a_model_refuses_and_says_when_it_refuses_all():
    from spare_theory import Scenario

    # 4 domains of 64 groups: a type's r hosts lie in distinct domains only for r <= 4;
    # the walk starts at r* = 8 and must come down to them.
    racks = Scenario(
        gpus=256 * 2048,
        gpus_per_group=2048,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
        domain_size=64,
        domain_mtbf_hours=20000.0,
    )
    plan = optimal_plan(racks, "spare")
    assert plan.r_values.tolist() == [1, 2, 3, 4] and plan.r == 4
    # 64 does not divide 292: no SPARe model with redundancy, and the plan says why.
    odd = Scenario(
        gpus=292 * 2048,
        gpus_per_group=2048,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
        domain_size=64,
        domain_mtbf_hours=20000.0,
    )
    with pytest.raises(NoClosedFormError, match="must divide"):
        optimal_plan(odd, "spare", method="model")


def _plateau(n: int) -> float:
    """Flat (float noise of 2e-16) up to 28, then rising; the noise is least at 9."""
    if n > 28:
        return 1.0 + (n - 28) ** 2
    return 1.0 if n == 9 else 1.0 + 2.0e-16


def test_minimize_integer_takes_the_smallest_point_of_a_plateau():
    # Float rounding differs from machine to machine, so it must not pick the plan.
    best, seen = minimize_integer(_plateau, [1, 3, 9, 27, 81])
    assert seen[9] < seen[1] and best == 1


def test_minimize_integer_does_not_tie_a_real_gain():
    gain = 1e-9  # far above float noise, far below anything a planner would see
    best, _ = minimize_integer(lambda n: 1.0 - gain * (n == 9), [1, 3, 9, 27, 81])
    assert best == 9


def test_elastic_quorum_on_a_plateau_is_the_smallest():
    # 64 groups, a pool that refills a failed group at once: no run reaches a small
    # quorum, so the hours are flat in it and the plan takes quorum 1.
    sc = Scenario(
        gpus=64 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=2000.0,
        restart_minutes=20,
        checkpoint_minutes=2,
        work_hours=40,
        repair_minutes=60.0,
        swap_minutes=1.0,
        spare_nodes=50,
    )
    plan = optimal_plan(sc, "elastic", method="model")
    assert plan.min_groups == 1
