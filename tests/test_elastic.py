"""Elastic DP and hot spares in the hour-level world: the model against the event simulation.

- Model against simulation on 24 cells (12 per strategy; with and without
  repairs, several quorums ``q`` and active counts ``A``, and cells where one
  rule of the contract dominates: a long checkpoint, a long restart, long
  stalls): every cell within 3 standard errors or 2 % (``K_SE = 3``), seeded,
  except one known gap of the renewal approximation (``KNOWN_GAP``, a strict
  xfail: it fails if the model is fixed).  The statistical cells are
  ``slow``; two short ones run always.
- The issue's quick model (64 groups, cluster MTBF 15 min, R = 20 min,
  checkpoints 2 min, 40 h, 1 min stalls, quorum 32), recomputed and checked
  against the simulation (the issue's own numbers are not asserted).
- The large-``N`` survival (binomial hazard scaled to the exact mean)
  against the exact chain where both exist.
- Plans: ``optimal_plan`` returns the quorum (elastic) and walks the spares
  (hot spares); the published strategies refuse ``min_groups``.
- Bad input raises ``ValueError`` naming the field.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import spare_theory as st
from spare_theory.cycles.elastic import ElasticCycle
from spare_theory.hourly.process import group_process

#: Tolerance of a model-against-simulation cell: K_SE standard errors or REL_TOL relative.
K_SE = 3.0
REL_TOL = 0.02

# 64 groups of 8 GPUs, group MTBF 16 h (cluster MTBF 15 min), the issue's costs.
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
REPAIR_1H = dict(repair_minutes=60.0)

# (strategy, r, min_groups or None for the default, tau minutes, scenario fields)
CELLS = [
    ("elastic", None, 32, 60, {}),
    ("elastic", None, 48, 30, {}),
    ("elastic", None, 16, 60, {}),
    ("elastic", None, 56, 20, {}),
    ("elastic", None, 32, 60, REPAIR_1H),
    ("elastic", None, 56, 60, REPAIR_1H),
    ("elastic", None, 60, 30, REPAIR_1H),
    ("elastic", None, 48, 60, dict(repair_minutes=30.0, heal_minutes=10.0)),
    ("elastic", None, 62, 20, dict(repair_minutes=300.0)),
    # One rule dominates: the stall after a long checkpoint; no stall after a long
    # restart; long stalls that start over (they would queue otherwise).
    ("elastic", None, 40, 30, dict(checkpoint_minutes=10.0, reconfigure_minutes=3.0)),
    ("elastic", None, 48, 30, dict(restart_minutes=60.0, reconfigure_minutes=5.0)),
    ("elastic", None, 40, 60, dict(reconfigure_minutes=10.0, **REPAIR_1H)),
    ("hot_spares", 4, None, 20, {}),
    ("hot_spares", 8, None, 20, {}),
    ("hot_spares", 8, 40, 30, {}),
    ("hot_spares", 16, 32, 60, {}),
    ("hot_spares", 4, None, 30, REPAIR_1H),
    ("hot_spares", 8, 56, 30, REPAIR_1H),
    ("hot_spares", 2, None, 20, dict(repair_minutes=10.0)),
    ("hot_spares", 8, None, 30, dict(repair_minutes=30.0, heal_minutes=10.0)),
    ("hot_spares", 1, None, 15, dict(repair_minutes=5.0)),
    ("hot_spares", 8, 40, 30, dict(checkpoint_minutes=10.0, reconfigure_minutes=3.0)),
    ("hot_spares", 4, None, 20, dict(restart_minutes=60.0, reconfigure_minutes=5.0)),
    ("hot_spares", 16, 32, 60, dict(reconfigure_minutes=10.0, **REPAIR_1H)),
]
TRIALS = 100
# The renewal sums take a segment's throughput given the cycle is alive at its middle,
# not given it survives to the checkpoint (docs/theory.md section 8): with K = 5 and
# 5 min stalls the two differ by 3.3 % (without stalls the same cell is within 0.3 %).
KNOWN_GAP = {
    22: "hot spares, K = 5, 60 min restarts, 5 min stalls: the model is 3.3 % slow "
    "(survival-conditioned stalls, docs/theory.md section 8)"
}
PARAMS = [
    pytest.param(
        cell,
        id=f"{cell[0]}-r{cell[1]}-q{cell[2]}-{cell[4]}",
        marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAP[i])] if i in KNOWN_GAP else [],
    )
    for i, cell in enumerate(CELLS)
]


def model_and_simulation(cell, *, trials=TRIALS, seed=7, **fields):
    name, r, q, tau, extra = cell
    sc = dataclasses.replace(BASE, **{**extra, **fields})
    plan = {} if q is None else {"min_groups": q}
    est = st.time_to_train(sc, name, r=r, checkpoint_interval_minutes=tau, **plan)
    sim = st.simulate_training(
        sc, name, r=r, checkpoint_interval_minutes=tau, trials=trials, seed=seed, **plan
    )
    return est, sim


def assert_close(est, sim):
    se = sim.standard_error("hours")
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= K_SE * se or gap <= REL_TOL * sim.mean_hours, (
        f"model {est.hours:.2f} h, simulation {sim.mean_hours:.2f} h (SE {se:.2f})"
    )


@pytest.mark.slow
@pytest.mark.parametrize("cell", PARAMS)
def test_model_matches_simulation(cell):
    est, sim = model_and_simulation(cell)
    assert_close(est, sim)
    # The samples skipped: within 3 SE of the runs' mean or 1 point of the batch.  The model
    # overstates them without repairs by up to 0.85 points (2-6 % relative; the renewal's
    # midpoint conditioning, docs/theory.md section 8): a first bound of 0.5 points missed
    # three cells by 0.06-0.35 points.
    skipped_se = sim.standard_error("samples_skipped")
    assert abs(est.samples_skipped - sim.mean("samples_skipped")) <= max(3 * skipped_se, 0.01)
    assert est.exact_batch == sim.exact_batch


@pytest.mark.parametrize("cell", [CELLS[1], CELLS[17]], ids=["elastic", "hot_spares"])
def test_model_matches_a_short_simulation(cell):
    est, sim = model_and_simulation(cell, trials=30, work_hours=40)
    assert_close(est, sim)


@pytest.mark.slow
@pytest.mark.parametrize("quorum", [16, 32])
def test_a_short_run_from_a_fresh_start(quorum):
    # 40 h of work at quorum 16: one cycle is 23 h, and the simulation's fresh start and
    # end of run save 3.4 h that the long-run rate does not see.  Without the finite-run
    # term (hourly.fresh_start) the model was 83.32 h against 79.88 +- 0.27 h (100 runs,
    # seed 7; +4.3 %); with it 80.62 h (+0.9 %).  Quorum 32: 64.96 -> 64.18 h, 63.85 +- 0.13.
    sc = dataclasses.replace(BASE, work_hours=40)
    est = st.time_to_train(sc, "elastic", min_groups=quorum, checkpoint_interval_minutes=60)
    sim = st.simulate_training(
        sc, "elastic", min_groups=quorum, checkpoint_interval_minutes=60, trials=100, seed=7
    )
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= max(K_SE * sim.standard_error("hours"), 0.03 * sim.mean_hours)
    assert gap <= 0.01 * sim.mean_hours  # the long-run rate alone: 4.3 % and 1.7 % off


def test_the_finite_run_term_only_where_the_throughput_falls():
    # With repairs the elastic law settles (no term); Rep keeps the long-run rate.
    from spare_theory.hourly.fresh_start import finite_run_term
    from spare_theory.hourly.renewal import evaluate

    repaired = dataclasses.replace(BASE, repair_minutes=60.0)
    law = st.strategy("elastic").cycle_law(
        repaired.groups, 0, group_process(repaired), min_groups=32
    )
    assert not law.finite_run
    assert st.time_to_train(
        repaired, "elastic", min_groups=32, checkpoint_interval_minutes=60
    ).hours == (evaluate(group_process(repaired), law, 60.0).hours)
    plain = st.strategy("elastic").cycle_law(BASE.groups, 0, group_process(BASE), min_groups=16)
    assert plain.finite_run
    # The term does not grow with the run: it is W-free (2.76 h at quorum 16).
    lam = BASE.group_failure_rate_per_hour
    term = finite_run_term(plain, lam / 3, lam, lam / 30) / lam
    for W in (40, 400):
        sc = dataclasses.replace(BASE, work_hours=W)
        est = st.time_to_train(sc, "elastic", min_groups=16, checkpoint_interval_minutes=60)
        assert est.hours - evaluate(group_process(sc), plain, 60.0).hours == pytest.approx(
            term, rel=1e-9
        )
        assert sum(est.breakdown_hours.values()) == pytest.approx(est.hours, rel=1e-12)


def test_no_finite_run_term_for_a_run_within_one_cycle():
    # The term expands in many cycles: a 10 h run at quorum 1 (cycles of 76 h) keeps the
    # long-run hours; with 2 or more expected wipe-outs the term is whole, linear between.
    from spare_theory.hourly.fresh_start import finite_run_term
    from spare_theory.hourly.renewal import evaluate

    law = st.strategy("elastic").cycle_law(BASE.groups, 0, group_process(BASE), min_groups=1)
    lam = BASE.group_failure_rate_per_hour
    term = finite_run_term(law, lam / 3, lam, lam / 30) / lam
    for W, weight in [(10, 0.0), (1000, 1.0)]:
        sc = dataclasses.replace(BASE, work_hours=W)
        est = st.time_to_train(sc, "elastic", min_groups=1, checkpoint_interval_minutes=60)
        long_run = evaluate(group_process(sc), law, 60.0)
        assert (est.wipeouts < 1) is (weight == 0.0) and (est.wipeouts > 2) is (weight == 1.0)
        assert est.hours == pytest.approx(long_run.hours + weight * term, rel=1e-12)


def test_the_issues_quick_model():
    """64 groups, cluster MTBF 15 min, R 20 min, delta 2 min, 40 h, 1 min stalls, q = 32."""
    sc = dataclasses.replace(BASE, work_hours=40)
    assert sc.cluster_mtbf_minutes == pytest.approx(15.0)
    for extra in ({}, REPAIR_1H):
        run = dataclasses.replace(sc, **extra)
        est = st.time_to_train(run, "elastic", min_groups=32)
        sim = st.simulate_training(
            run,
            "elastic",
            r=None,
            checkpoint_interval_minutes=est.checkpoint_interval_minutes,
            trials=60,
            seed=3,
            min_groups=32,
        )
        assert_close(est, sim)


def test_binomial_hazard_against_the_exact_chain():
    # Where both exist (K <= 512), the scaled binomial hazard's time to Q = 1/e and its
    # mean time to wipe-out are those of the exact chain within 2 % (exact mean by construction).
    for N, q, mu in [(1000, 700, 1.0), (1000, 900, 5.0), (400, 380, 20.0)]:
        exact = ElasticCycle(N, N, q, stall=0.001, mu=mu, rho=0.01)
        scaled = ElasticCycle(N, N, q, stall=0.001, mu=mu, rho=0.01, exact_up_to=0)
        assert scaled.mean_u == pytest.approx(exact.mean_u, rel=0.02)
        assert scaled.hazard_scale < 1.0  # the free process re-crosses K: fewer first passages


def test_exact_without_repairs():
    # The law without repairs is the binomial one: Q at u is P(Binom(N, 1 - e^-u) < K).
    from scipy import stats

    law = ElasticCycle(64, 64, 32)
    u = 0.5
    assert float(np.exp(law.logq(u))) == pytest.approx(
        stats.binom.cdf(32, 64, 1 - np.exp(-u)), rel=1e-6
    )


def test_plans():
    sc = dataclasses.replace(BASE, work_hours=40)
    plan = st.optimal_plan(sc, "elastic")
    assert plan.r is None and 1 <= plan.min_groups <= 64
    assert plan.hours <= st.time_to_train(sc, "elastic", min_groups=32).hours
    assert not plan.estimate.exact_batch and plan.estimate.samples_skipped > 0
    spares = st.optimal_plan(sc, "hot_spares")
    assert spares.min_groups == 64 - spares.r and spares.estimate.exact_batch
    assert spares.estimate.samples_skipped == 0.0
    assert st.optimal_plan(sc, "spare").min_groups is None


def test_published_strategies_report_exact_batches():
    est = st.time_to_train(BASE, "spare", r=4, checkpoint_interval_minutes=60.0)
    sim = st.simulate_training(
        dataclasses.replace(BASE, work_hours=5),
        "rep",
        r=2,
        checkpoint_interval_minutes=60.0,
        trials=3,
        seed=0,
    )
    assert est.exact_batch and est.samples_skipped == 0.0
    assert sim.exact_batch and (sim.samples_skipped == 0).all()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: st.time_to_train(BASE, "elastic", min_groups=65), "min_groups"),
        (lambda: st.time_to_train(BASE, "hot_spares", r=4, min_groups=61), "min_groups"),
        (lambda: st.time_to_train(BASE, "elastic", min_groups=0), "min_groups"),
        (lambda: st.time_to_train(BASE, "spare", r=4, min_groups=3), "min_groups"),
        (
            lambda: st.simulate_training(
                BASE, "rep", r=2, checkpoint_interval_minutes=60, trials=2, seed=0, min_groups=3
            ),
            "min_groups",
        ),
        (lambda: st.time_to_train(BASE, "elastic", r=2), "r"),
        (lambda: st.time_to_train(BASE, "hot_spares", r=None), "r"),
        (lambda: st.time_to_train(BASE, "hot_spares", r=64), "r"),
        (lambda: dataclasses.replace(BASE, reconfigure_minutes=-1), "reconfigure_minutes"),
        (lambda: dataclasses.replace(BASE, heal_minutes=-0.5), "heal_minutes"),
        (lambda: st.Scenario.preset("warp", gpus=8, gpus_per_group=8, work_hours=1), "name"),
        (
            lambda: st.time_to_train(dataclasses.replace(BASE, failure_law="weibull"), "elastic"),
            "failure_law",
        ),
        (
            lambda: st.time_to_train(
                dataclasses.replace(BASE, repair_minutes=30, repair_law="fixed"), "elastic"
            ),
            "repair_law",
        ),
        (
            lambda: st.time_to_train(
                dataclasses.replace(BASE, planned_restart_failures=4), "hot_spares", r=2
            ),
            "planned_restart_failures",
        ),
        (lambda: st.time_to_train(st.paper_scenario(50), "elastic", min_groups=51), "min_groups"),
    ],
)
def test_bad_input_names_the_field(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_presets():
    sc = st.Scenario.preset(
        "in_process_restart", gpus=1024, gpus_per_group=8, checkpoint_minutes=5, work_hours=48
    )
    assert sc.restart_minutes == 1.0 and sc.checkpoint_minutes == 5.0
    fast = st.Scenario.preset("fast_restarts", gpus=1024, gpus_per_group=8, work_hours=48)
    assert (fast.restart_minutes, fast.checkpoint_minutes) == (1.0, 0.05)
    # Faster restarts and checkpoints make CKPT-only faster.
    slow = dataclasses.replace(fast, restart_minutes=20, checkpoint_minutes=5)
    assert st.time_to_train(fast, "ckpt").hours < st.time_to_train(slow, "ckpt").hours


def test_mean_time_to_wipeout_is_the_passage_time():
    # Without repairs: state f lasts 1 / ((N - f) lambda), and K = N - q + 1 failures wipe out.
    lam = BASE.group_failure_rate_per_hour
    expected = sum(1 / ((64 - f) * lam) for f in range(64 - 32 + 1))
    assert st.mean_time_to_wipeout(BASE, "elastic", min_groups=32) == pytest.approx(expected)
    # Repairs (and heal) make it longer; the heal time counts as time out.
    repaired = dataclasses.replace(BASE, repair_minutes=60.0)
    healed = dataclasses.replace(repaired, heal_minutes=30.0)
    fast = st.mean_time_to_wipeout(repaired, "hot_spares", r=2)
    assert expected < st.mean_time_to_wipeout(repaired, "elastic", min_groups=32)
    assert st.mean_time_to_wipeout(healed, "hot_spares", r=2) < fast


PUBLISHED = st.Scenario.published_600k()


@pytest.mark.parametrize("quorum", [32, 146, 157])
def test_the_renewal_pieces_add_up_to_the_mean_cycle(quorum):
    # Without repairs the mean time to wipe-out is exact (the passage time of the down
    # count); the renewal sums' compute and checkpoint pieces of Q must add up to it.  At
    # 292 groups and 687 min segments Q falls from near 1 to near 0 within one segment:
    # one log-linear piece per segment made the cycle 13.1 h instead of 15.5 h (quorum 157).
    from spare_theory.hourly.renewal import renewal_terms, scaled_times

    law = st.strategy("elastic").cycle_law(
        PUBLISHED.groups, 0, group_process(PUBLISHED), min_groups=quorum
    )
    rho, kappa, d = scaled_times(group_process(PUBLISHED), [687.0])
    terms = renewal_terms(law, rho, kappa, d)
    cycle = float(terms.total()[0]) * np.exp(terms.log_q0)
    assert cycle == pytest.approx(law.mean_time_to_wipeout(0.0), rel=1e-3)


def test_pieces_are_split_only_where_the_law_asks():
    # The elastic law splits its pieces: they then integrate Q (a trapezoid on 20,000
    # steps) to 1e-4 where one log-linear piece is off by up to 5x; the other laws keep
    # one piece each, bit for bit (their committed tables rest on it).
    from spare_theory.cycles.base import piece_survival, survival_integral
    from spare_theory.cycles.rep import Rep

    start, width = np.linspace(0.0, 1.0, 9), 0.25
    elastic, rep = ElasticCycle(292, 292, 157), Rep(292, 2)
    assert elastic.split_pieces and not rep.split_pieces
    ends = elastic.logq(start), elastic.logq(start + width)
    pieces = piece_survival(elastic, start, width, *ends, 0.0)
    u = np.linspace(start, start + width, 20_001).T
    exact = np.trapezoid(np.exp(elastic.logq(u)), u, axis=1)
    assert pieces == pytest.approx(exact, rel=1e-4, abs=1e-12)
    assert np.max(np.abs(survival_integral(*ends, width) / exact - 1)) > 0.5
    ends = rep.logq(start), rep.logq(start + width)
    one = survival_integral(*ends, width)
    assert np.array_equal(piece_survival(rep, start, width, *ends, 0.0), one)


@pytest.mark.slow
@pytest.mark.parametrize("quorum", [32, 146, 157])
def test_the_published_scenarios_elastic_plan_against_its_simulation(quorum):
    # Found by verify=True (bench/bench_verify.py): the elastic plan of the published
    # 600k-GPU scenario (292 groups, quorum 157, 687 min) was priced 14.8 % below its
    # simulation (1,716 h against 2,014 +- 3 h over 16 runs; quorum 146: -21 %, quorum
    # 32: -2.8 %): one log-linear piece of Q per segment (docs/theory.md section 8).
    # Measured with the split pieces and the finite-run term (16 runs, seed 0): +0.24 %
    # (157), -0.01 % (146), +0.72 % (32; z = 2.7, the renewal's midpoint conditioning).
    interval = 687.0
    est = st.time_to_train(
        PUBLISHED, "elastic", min_groups=quorum, checkpoint_interval_minutes=interval
    )
    sim = st.simulate_training(
        PUBLISHED, "elastic", min_groups=quorum, checkpoint_interval_minutes=interval,
        trials=16, seed=0,
    )  # fmt: skip
    gap = abs(est.hours - sim.mean_hours)
    assert gap <= max(K_SE * sim.standard_error("hours"), 0.03 * sim.mean_hours), (
        est.hours,
        sim.mean_hours,
    )
