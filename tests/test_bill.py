"""What a plan costs (issue 27): the bill's formulas and identities, and the model's bill
against the simulation's."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

import spare_theory as st
from spare_theory.planning.bill import BADPUT_CAUSES, make_bill

COST = st.CostModel(
    gpu_hour_usd=2.0, busy_watts_per_gpu=700, idle_watts_per_gpu=100, pue=1.2, kg_co2_per_kwh=0.4
)
# 64 groups of 8 GPUs, group MTBF 16 h (cluster MTBF 15 min), test_elastic's scenario.
BASE = st.Scenario(
    gpus=64 * 8,
    gpus_per_group=8,
    gpu_mtbf_hours=128.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=100,
    reconfigure_minutes=1,
    heal_minutes=0,
)
# (strategy, r, plan variables, tau minutes)
PLANS = [
    ("ckpt", 1, {}, 10),
    ("rep", 2, {}, 20),
    ("spare", 4, {}, 20),
    ("elastic", None, {"min_groups": 32}, 60),
    ("hot_spares", 8, {}, 20),
]


def relative(a, b):
    return abs(a - b) / abs(b)


def test_the_bill_of_hand_numbers():
    # 10 h on 16 GPUs (12 in groups): 8 useful, 1 checkpoint, 1 restart.
    bill = make_bill(
        COST,
        hours=10.0,
        useful_hours=8.0,
        badput_hours={"checkpoint_save": 1.0, "restart": 1.0},
        reserved_gpus=16,
        grouped_gpus=12,
    )
    assert bill.gpu_hours == 160.0
    assert bill.busy_gpu_hours == 12 * 9.0
    assert bill.usd == 320.0
    # 1.2 (108 x 700 + 52 x 100) / 1e6 MWh; 0.4 t per MWh.
    assert bill.energy_mwh == pytest.approx(1.2 * (108 * 700 + 52 * 100) / 1e6, rel=1e-15)
    assert bill.co2_tonnes == pytest.approx(0.4 * bill.energy_mwh, rel=1e-15)
    assert list(bill.badput_hours) == list(BADPUT_CAUSES)
    assert bill.badput_hours["idle_spares"] == 0.0


@pytest.mark.parametrize(("name", "r", "plan", "tau"), PLANS, ids=[p[0] for p in PLANS])
def test_identities_and_energy_bounds(name, r, plan, tau):
    est = st.time_to_train(BASE, name, r=r, checkpoint_interval_minutes=tau, **plan)
    bill = est.bill(COST)
    assert relative(bill.useful_hours + sum(bill.badput_hours.values()), bill.hours) <= 1e-9
    assert bill.hours == est.hours
    assert relative(bill.gpu_hours, 512 * est.hours) <= 1e-12
    assert relative(bill.usd, bill.gpu_hours * COST.gpu_hour_usd) <= 1e-12
    idle_only = COST.pue * bill.gpu_hours * COST.idle_watts_per_gpu / 1e6
    busy_only = COST.pue * bill.gpu_hours * COST.busy_watts_per_gpu / 1e6
    assert idle_only < bill.energy_mwh < busy_only
    assert all(v >= -1e-9 * bill.hours for v in bill.badput_hours.values())


def test_the_causes_by_hand():
    W = BASE.work_hours
    rep = st.time_to_train(BASE, "rep", r=2, checkpoint_interval_minutes=20).badput_hours
    # Rep computes every shard twice: W (r - 1) hours of redundant compute, busy.
    assert relative(rep["redundant_compute"], W) <= 1e-12
    hot = st.time_to_train(BASE, "hot_spares", r=8, checkpoint_interval_minutes=20)
    # 8 of 64 groups wait as spares: the 56 others need W 64/56 hours for the work.
    assert relative(hot.badput_hours["idle_spares"], W * 8 / 56) <= 1e-12
    ckpt = st.time_to_train(BASE, "ckpt", r=1, checkpoint_interval_minutes=10)
    lost = ckpt.badput_hours
    assert (lost["checkpoint_save"], lost["wasted_progress"], lost["restart"]) == (
        ckpt.checkpoint_hours,
        ckpt.lost_hours,
        ckpt.restart_hours,
    )
    # CKPT-only idles through restarts only: busy = GPUs x (hours - restart hours).
    bill = ckpt.bill(COST)
    assert relative(bill.busy_gpu_hours, 512 * (ckpt.hours - ckpt.restart_hours)) <= 1e-12


def test_spare_pool_gpus_are_reserved_and_idle():
    sc = dataclasses.replace(BASE, repair_minutes=60.0, spare_nodes=4, swap_minutes=5.0)
    est = st.time_to_train(sc, "spare", r=4, checkpoint_interval_minutes=20)
    bill = est.bill(COST)
    assert bill.gpu_hours == pytest.approx((512 + 4 * 8) * est.hours, rel=1e-12)
    assert bill.busy_gpu_hours <= 512 * est.hours


def test_step_estimates_have_bills():
    sc = st.paper_scenario(200, steps=2000)
    for name, r in (("rep", 3), ("spare", 8)):
        est = st.time_to_train(sc, name, r=r, checkpoint_every_steps=20)
        bill = est.bill(COST, gpus_per_node=3000)
        assert relative(bill.useful_hours + sum(bill.badput_hours.values()), est.hours) <= 1e-9
        assert bill.gpu_hours == pytest.approx(600_000 * est.hours, rel=1e-12)
        assert all(v >= -1e-9 * est.hours for v in bill.badput_hours.values())


def test_an_infinite_run_has_no_bill():
    sc = st.Scenario(
        gpus=600_000,
        gpus_per_group=2048,
        gpu_mtbf_hours=30.0,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
    )
    with pytest.raises(ValueError, match="hours"):
        st.time_to_train(sc, "ckpt", r=1, checkpoint_interval_minutes=1.0).bill(COST)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pue", 0.9),
        ("gpu_hour_usd", -1.0),
        ("idle_watts_per_gpu", 800.0),
        ("kg_co2_per_kwh", np.nan),
    ],
)
def test_bad_cost_models_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        st.CostModel(**{field: value})


@pytest.mark.slow
def test_dollars_plan_as_hours_and_energy_plans_for_less_energy():
    hours = st.optimal_plan(BASE, "hot_spares")
    assert hours.bill(COST) == hours.estimate.bill(COST)
    usd = st.optimal_plan(BASE, "hot_spares", objective="usd", cost=COST)
    assert usd.estimate == hours.estimate
    energy = st.optimal_plan(BASE, "hot_spares", objective="energy", cost=COST)
    assert energy.bill(COST).energy_mwh <= hours.bill(COST).energy_mwh
    assert energy.hours >= hours.hours * (1 - 1e-9)
    with pytest.raises(ValueError, match="objective"):
        st.optimal_plan(BASE, "ckpt", objective="carbon")
    with pytest.raises(ValueError, match="energy"):
        st.optimal_plan(st.paper_scenario(200, steps=200), "rep", objective="energy")


# The bill's simulation check: mean over runs within K_SE standard errors of the model.
# Elastic DP and hot spares carry the model's known gaps (tests/test_elastic.py: the
# survival-conditioned stalls, docs/theory.md section 8), so they get that file's
# tolerance too: K_SE standard errors or REL_TOL relative.  Their busy GPU-hours have a
# gap of their own: the model counts the stalls inside segments lost at a wipe-out as
# wasted progress (busy), the simulation as reconfiguration (idle); on this cluster that
# puts the model's busy GPU-hours of hot spares 0.2-0.3 % high (3.5-4.7 SE over seeds 8-10).
K_SE = 3.0
REL_TOL = 0.02
TRIALS = 100


@pytest.mark.slow
@pytest.mark.parametrize(("name", "r", "plan", "tau"), PLANS, ids=[p[0] for p in PLANS])
def test_simulated_bills_match_the_model(name, r, plan, tau):
    sc = BASE if name != "ckpt" else dataclasses.replace(BASE, gpu_mtbf_hours=512.0)
    est = st.time_to_train(sc, name, r=r, checkpoint_interval_minutes=tau, **plan)
    runs = st.simulate_training(
        sc, name, r=r, checkpoint_interval_minutes=tau, trials=TRIALS, seed=7, **plan
    )
    bills = runs.bill(COST)
    model = est.bill(COST)
    parts = sum(getattr(bills, f"{cause}_hours") for cause in BADPUT_CAUSES)
    assert np.allclose(bills.useful_hours + parts, bills.hours, rtol=1e-9, atol=0)
    loose = name in ("elastic", "hot_spares")
    for quantity in ("hours", "usd", "energy_mwh", "busy_gpu_hours", "co2_tonnes"):
        gap = abs(bills.mean(quantity) - getattr(model, quantity))
        bound = K_SE * bills.standard_error(quantity)
        assert gap <= bound or (loose and gap <= REL_TOL * getattr(model, quantity)), (
            quantity,
            getattr(model, quantity),
            bills.mean(quantity),
            bills.standard_error(quantity),
        )


# -- the step-level simulation's bill (issue 27, item 2) ------------------------------


def _small_step(N, **fields):
    """The SPARe paper's step scenario at ``N`` groups, 300 steps, 10 min restarts and ten
    times its group lifetimes (3000 N s): a handful of failures per run."""
    sc = st.paper_scenario(
        N, steps=300, restart_seconds=600.0, failure_law=stats.expon(scale=3000.0 * N)
    )
    return dataclasses.replace(sc, **fields)


# (strategy, r, k, scenario, plan variables): every step rule, with and without repairs.
STEP_RUNS = [
    ("ckpt", 1, 10, _small_step(8), {}),
    ("rep", 2, 10, _small_step(12, restart_semantics="fixed"), {}),
    ("rep", 2, 10, _small_step(12, repair_seconds=600.0, rejoin_seconds=5.0), {}),
    ("spare", 3, 10, _small_step(7), {}),
    ("spare", 4, 10, _small_step(13, microbatches=4), {}),
    ("spare", 4, 10, _small_step(13, repair_seconds=600.0, rejoin_seconds=5.0), {}),
    ("elastic", None, 10, _small_step(8, reconfigure_seconds=30.0), {"min_groups": 4}),
    ("hot_spares", 2, 10, _small_step(8, reconfigure_seconds=30.0, repair_seconds=900.0), {}),
]


@pytest.mark.parametrize(
    ("name", "r", "k", "sc", "plan"),
    STEP_RUNS,
    ids=[f"{p[0]}-{i}" for i, p in enumerate(STEP_RUNS)],
)
def test_step_simulation_bill_identities_per_trial(name, r, k, sc, plan):
    sim = st.simulate_training(sc, name, r=r, checkpoint_every_steps=k, trials=4, seed=2, **plan)
    bills = sim.bill(COST, gpus_per_node=8)
    hours = sim.total_seconds / 3600.0
    assert np.array_equal(bills.hours, hours)
    parts = sum(getattr(bills, f"{cause}_hours") for cause in BADPUT_CAUSES)
    assert np.allclose(bills.useful_hours + parts, hours, rtol=1e-9, atol=0)
    assert np.allclose(bills.useful_hours, sc.failure_free_seconds / 3600.0, rtol=1e-12, atol=0)
    for cause in BADPUT_CAUSES:
        assert np.all(getattr(bills, f"{cause}_hours") >= -1e-9 * hours), cause
    gpus = sc.groups * sc.nodes_per_group * 8
    assert np.allclose(bills.gpu_hours, gpus * hours, rtol=1e-12, atol=0)
    watts = COST.pue * bills.gpu_hours / 1e6
    assert np.all(bills.energy_mwh >= watts * COST.idle_watts_per_gpu * (1 - 1e-12))
    assert np.all(bills.energy_mwh <= watts * COST.busy_watts_per_gpu * (1 + 1e-12))
    # Partial recoveries are charged one by one; down time takes the per-worker maximum.
    down = sim.down_seconds / 3600.0
    assert np.all(bills.reconfiguration_hours >= down - bills.restart_hours - 1e-9 * hours)
    # Each trial's breakdown is its own stream's: the same however many trials run.
    two = st.simulate_training(sc, name, r=r, checkpoint_every_steps=k, trials=2, seed=2, **plan)
    assert np.array_equal(two.breakdown_seconds, sim.breakdown_seconds[:2])
    if sc.restart_semantics == "fixed":  # every restart lasts R exactly
        assert np.allclose(bills.restart_hours, sim.global_restarts * 600.0 / 3600.0, rtol=1e-12)


def test_step_simulation_bill_of_a_failure_free_run_by_hand():
    # No failure, no jitter: 20 steps of a 64 s stack and a 1 s all-reduce (T0 = 1300 s),
    # checkpoints after steps 10 and 20.  Rep's r = 2 copies compute 128 s a step, and
    # the first write (58.8 s) delays the next step by all of it (no jitter to hide it).
    # SPARe at r = 3 computes one stack a step.  One hot spare (A = 3 of 4) needs 27 steps,
    # 81 of the 80 shards, and idles through a quarter of each.
    sc = st.StepScenario(
        groups=7,
        steps=20,
        allreduce_seconds=1.0,
        stack_jitter_cv=0.0,
        failure_law=stats.expon(scale=1e15),
    )
    hand = {
        "rep": (2, {"checkpoint_save": 2 * 58.8, "redundant_compute": 20 * 64.0}),
        "spare": (3, {"checkpoint_save": 2 * 58.8}),
    }
    for name, (r, lost) in hand.items():
        bill = st.simulate_training(sc, name, r=r, checkpoint_every_steps=10, trials=1, seed=0)
        bill = bill.bill(COST).trial(0)
        assert bill.useful_hours == pytest.approx(1300.0 / 3600.0, rel=1e-12)
        for cause in BADPUT_CAUSES:
            assert bill.badput_hours[cause] == pytest.approx(
                lost.get(cause, 0.0) / 3600.0, abs=1e-12
            ), (name, cause)
    spare4 = dataclasses.replace(sc, groups=4)
    bill = st.simulate_training(
        spare4, "hot_spares", r=1, checkpoint_every_steps=10, trials=1, seed=0
    )
    lost = bill.bill(COST).trial(0).badput_hours
    assert lost["idle_spares"] == pytest.approx(27 * 65.0 / 4 / 3600.0, rel=1e-12)
    assert lost["redundant_compute"] == pytest.approx(65.0 / 4 / 3600.0, rel=1e-9)
    assert lost["checkpoint_save"] == pytest.approx(3 * 58.8 / 3600.0, rel=1e-12)


def _six_fields(scenario, r, k, rng, **kwargs):
    from spare_theory.steps.rep_run import run_rep

    return run_rep(scenario, r, k, rng, **kwargs)[:6]


def test_a_rule_without_breakdown_has_no_step_bill():
    from spare_theory.steps.trials import simulate_step_trials

    sim = simulate_step_trials(
        _small_step(8),
        _six_fields,
        strategy="rep",
        r=2,
        checkpoint_every_steps=10,
        trials=2,
        seed=0,
    )
    assert sim.breakdown_seconds is None
    with pytest.raises(ValueError, match="no breakdown"):
        sim.bill(COST)
    with pytest.raises(ValueError, match="gpus_per_node"):
        st.simulate_training(
            _small_step(8), "ckpt", r=1, checkpoint_every_steps=10, trials=1, seed=0
        ).bill(COST, gpus_per_node=0)


# The step model's bill against the simulation's mean bill, K_SE = 3 standard errors of
# the simulated mean (the model is a number: the gap's spread is the mean's alone, and a
# correct model fails one quantity with probability about 0.3 % under normality).  The
# cells are those where the step model's time is validated: small runs for CKPT-only and
# Rep; for SPARe test_step_model's r = 6, k = 14 on 60 groups (2,000 steps: at 300 steps
# the model's ignored boundary terms put it 6 to 9 % high) with the tolerance of
# tests/test_step_repairs.py (3 SE or 2 %); for elastic DP and hot spares a cell of
# tests/test_elastic_steps.py and its tolerance (3 SE or 2 %: its documented biases).
# Busy time is measured far more precisely than wall time (no restart in it), and two
# cells miss on it (MISSED, strict xfails below, measured at seed 7).
STEP_CELLS = {
    "ckpt": ("ckpt", 1, 10, _small_step(8), {}, 60, False),
    "rep": ("rep", 2, 10, _small_step(12), {}, 60, False),
    "spare": ("spare", 6, 14, st.paper_scenario(60, steps=2000), {}, 8, True),
    "elastic": (
        "elastic",
        None,
        25,
        st.paper_scenario(200, steps=5000),
        {"min_groups": 91},
        8,
        True,
    ),
    "hot_spares": ("hot_spares", 88, 19, st.paper_scenario(200, steps=5000), {}, 8, True),
}
BUSY = ("busy_gpu_hours", "energy_mwh", "co2_tonnes")
MISSED = {
    "spare": "the step model's SPARe compute is high here: busy GPU-hours +2.4 % (z = +6.3), "
    "redundant compute +5.7 % (z = +10); its hours +5.6 % are within 3 SE (z = +2.9)",
    "hot_spares": "the step model's hot-spares wasted progress (busy) is 10 % low here (40.0 "
    "against 44.5 h): busy GPU-hours -2.7 % (z = -8.7), beyond the 2 % of "
    "tests/test_elastic_steps.py; its hours are within 0.2 % (z = +0.3)",
}


def _step_bills(cell):
    name, r, k, sc, plan, trials, loose = STEP_CELLS[cell]
    model = st.time_to_train(sc, name, r=r, checkpoint_every_steps=k, **plan).bill(COST)
    sim = st.simulate_training(
        sc, name, r=r, checkpoint_every_steps=k, trials=trials, seed=7, **plan
    )
    return model, sim.bill(COST), loose


def _agrees(model, bills, quantity, loose):
    gap = abs(bills.mean(quantity) - getattr(model, quantity))
    return gap <= K_SE * bills.standard_error(quantity) or (
        loose and gap <= REL_TOL * getattr(model, quantity)
    )


@pytest.mark.slow
@pytest.mark.parametrize("cell", list(STEP_CELLS))
def test_simulated_step_bills_match_the_model(cell):
    model, bills, loose = _step_bills(cell)
    assert bills.mean("useful_hours") == pytest.approx(model.useful_hours, rel=1e-12)
    quantities = ("hours", "usd") + (() if cell in MISSED else BUSY)
    for quantity in quantities:
        assert _agrees(model, bills, quantity, loose), (
            quantity,
            getattr(model, quantity),
            bills.mean(quantity),
            bills.standard_error(quantity),
        )


@pytest.mark.slow
@pytest.mark.parametrize(
    "cell",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=why))
        for c, why in MISSED.items()
    ],
)
def test_step_busy_time_known_misses(cell):
    model, bills, loose = _step_bills(cell)
    assert _agrees(model, bills, "busy_gpu_hours", loose)
