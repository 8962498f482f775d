import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_theory import strategy as lookup
from spare_theory.cycles.rep import rep_survival_log
from spare_theory.cycles.spare import Spare
from spare_theory.hourly.process import group_process
from spare_theory.hourly.renewal import hours_grid
from spare_theory.hourly.scenario import Scenario
from spare_theory.training.estimate import time_to_train

BASE = dict(
    gpus=1024,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=48,
)


def daly_hours(sc, tau_minutes):
    """J. T. Daly, "A higher order estimate of the optimum checkpoint interval for
    restart dumps", Future Generation Computer Systems 22(3):303-312, 2006, eq. (20):
    T_wall = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau, exponential failures of
    mean M that also strike during restarts and checkpoints."""
    M = sc.cluster_mtbf_minutes / 60
    R, d, tau = sc.restart_minutes / 60, sc.checkpoint_minutes / 60, tau_minutes / 60
    return M * math.exp(R / M) * math.expm1((tau + d) / M) * sc.work_hours / tau


@pytest.mark.parametrize("mtbf", [500.0, 5000.0, 50000.0])
@pytest.mark.parametrize("restart", [0.0, 10.0, 60.0])
@pytest.mark.parametrize("tau", [5.0, 30.0, 240.0])
def test_ckpt_agrees_with_daly_within_one_percent(mtbf, restart, tau):
    sc = Scenario(
        gpus=8192,
        gpus_per_group=8,
        gpu_mtbf_hours=mtbf,
        restart_minutes=restart,
        checkpoint_minutes=4.0,
        work_hours=100.0,
    )
    est = time_to_train(sc, "ckpt", checkpoint_interval_minutes=tau)
    assert est.hours == pytest.approx(daly_hours(sc, tau), rel=0.01)


@pytest.mark.parametrize(
    "strategy, r", [("ckpt", None), ("rep", 2), ("rep", 3), ("spare", 3), ("spare", 5)]
)
def test_breakdown_adds_up(strategy, r):
    est = time_to_train(Scenario(**BASE), strategy, r=r, checkpoint_interval_minutes=60)
    parts = (
        est.useful_hours
        + est.redundancy_hours
        + est.checkpoint_hours
        + est.restart_hours
        + est.lost_hours
    )
    assert parts == pytest.approx(est.hours, rel=1e-9)
    assert est.useful_hours == pytest.approx(48)
    assert est.availability == pytest.approx(48 / est.hours)
    assert min(est.redundancy_hours, est.checkpoint_hours, est.restart_hours, est.lost_hours) >= 0


def test_rep_redundancy_share_is_r_minus_one():
    est = time_to_train(Scenario(**BASE), "rep", r=4, checkpoint_interval_minutes=60)
    assert est.redundancy_hours == pytest.approx(3 * est.useful_hours, rel=1e-9)


def test_optimal_interval_is_a_minimum():
    sc = Scenario(**BASE)
    best = time_to_train(sc, "spare", r=3)
    for factor in (0.8, 1.25):
        other = time_to_train(
            sc, "spare", r=3, checkpoint_interval_minutes=best.checkpoint_interval_minutes * factor
        )
        assert other.hours >= best.hours


def test_rep_one_is_ckpt():
    sc = Scenario(**BASE)
    a = time_to_train(sc, "rep", r=1, checkpoint_interval_minutes=30)
    b = time_to_train(sc, "ckpt", checkpoint_interval_minutes=30)
    assert a.hours == pytest.approx(b.hours, rel=1e-12)


def test_rep_survival_matches_direct_count():
    # N = 7, r = 2: sets {0,3,6}, {1,4}, {2,5} (g mod 3); brute force over 2^7 patterns.
    u = 0.4
    p = 1 - math.exp(-u)
    alive = 0.0
    for mask in range(1 << 7):
        dead = [(mask >> g) & 1 for g in range(7)]
        sets_dead = any(all(dead[g] for g in range(7) if g % 3 == s) for s in range(3))
        k = sum(dead)
        if not sets_dead:
            alive += p**k * (1 - p) ** (7 - k)
    assert math.exp(rep_survival_log(7, 2, u)) == pytest.approx(alive, rel=1e-12)


def test_restart_dominated_regime_is_finite_or_inf_never_nan():
    sc = Scenario(
        gpus=600_000,
        gpus_per_group=8,
        gpu_mtbf_hours=5000,
        restart_minutes=120,
        checkpoint_minutes=5,
        work_hours=720,
    )
    est = time_to_train(sc, "ckpt", checkpoint_interval_minutes=5)
    assert not math.isnan(est.hours) and est.hours > 1e10
    assert not any(math.isnan(v) for v in vars(est).values() if isinstance(v, float))


@settings(max_examples=25, deadline=None)
@given(
    mtbf=st.floats(1000, 100000),
    restart=st.floats(0, 90),
    delta=st.floats(0.5, 20),
    tau=st.floats(5, 600),
)
def test_property_more_failures_cost_more_time(mtbf, restart, delta, tau):
    kw = dict(
        gpus=2048,
        gpus_per_group=16,
        restart_minutes=restart,
        checkpoint_minutes=delta,
        work_hours=100,
    )
    for strategy, r in (("ckpt", None), ("rep", 2), ("spare", 3)):
        good = time_to_train(
            Scenario(gpu_mtbf_hours=2 * mtbf, **kw), strategy, r=r, checkpoint_interval_minutes=tau
        )
        bad = time_to_train(
            Scenario(gpu_mtbf_hours=mtbf, **kw), strategy, r=r, checkpoint_interval_minutes=tau
        )
        assert bad.hours >= good.hours * (1 - 1e-9)
        assert good.hours >= 100 and 0 <= good.availability <= 1


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(strategy="raid"), "strategy"),
        (dict(strategy="rep"), "r"),
        (dict(strategy="rep", r=0), "r"),
        (dict(strategy="rep", r=200), "r"),
        (dict(strategy="ckpt", r=3), "r"),
        (dict(strategy="spare", r=2.5), "r"),
        (dict(strategy="spare", r=12), "N"),  # no modular ruler with 12 marks for N = 128
        (dict(strategy="ckpt", checkpoint_interval_minutes=0.0), "checkpoint_interval_minutes"),
        (
            dict(strategy="ckpt", checkpoint_interval_minutes=math.nan),
            "checkpoint_interval_minutes",
        ),
    ],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        time_to_train(Scenario(**BASE), **kwargs)


def test_scenario_type_checked():
    with pytest.raises(ValueError, match="scenario"):
        time_to_train({"gpus": 8}, "ckpt")


@pytest.mark.parametrize("strategy, r", [("ckpt", 1), ("rep", 3), ("spare", 6)])
def test_vectorised_hours_equal_scalar_estimates(strategy, r):
    # The optimiser evaluates whole grids of intervals at once; each entry must be the
    # scalar estimate at that interval (segments laid end to end must not mix).
    sc = Scenario(**BASE)
    taus = np.array([0.5, 7.0, 60.0, 900.0, 20000.0])
    law = lookup(strategy).cycle_law(sc.groups, r)
    grid = sc.work_hours * hours_grid(group_process(sc), law, np.log(taus))[1]
    single = [time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=t).hours for t in taus]
    np.testing.assert_allclose(grid, single, rtol=1e-12)


@pytest.mark.slow
def test_spare_beyond_supported_groups_is_a_clear_error():
    from spare_theory.cycles.spare import MAX_SPARE_GROUPS

    sc = Scenario(
        gpus=8 * (MAX_SPARE_GROUPS + 1),
        gpus_per_group=8,
        gpu_mtbf_hours=50_000.0,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
    )
    with pytest.raises(ValueError, match="gpus_per_group"):
        time_to_train(sc, "spare", r=20, checkpoint_interval_minutes=60)
    # Rep and CKPT-only have closed-form survival: any N.
    assert math.isfinite(time_to_train(sc, "rep", r=2, checkpoint_interval_minutes=60).hours)


def test_spare_at_a_million_groups():
    # N = 1.25e6: the survival table is long (spline path); the plan is finite and the
    # interval optimised, without running out of memory or time.
    sc = Scenario(
        gpus=10_000_000,
        gpus_per_group=8,
        gpu_mtbf_hours=50_000.0,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
    )
    est = time_to_train(sc, "spare", r=20)
    assert 720 < est.hours < 2 * 720 * 1.2 and 0 < est.availability <= 0.5 + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("N, r", [(125_000, 15), (1_250_000, 21), (1_250_000, 4)])
def test_long_survival_table_matches_the_exact_form(N, r):
    # Tables beyond 2 * _EXACT_F terms come from a spline through exact nodes; every
    # entry must match the sharp form evaluated directly (absolute error in log P).
    from spare_theory.cycles.spare import log_survival_table
    from spare_theory.wipeout.law import wipeout_survival

    table = log_survival_table(N, r)
    f = np.arange(table.size)
    with np.errstate(divide="ignore"):
        exact = np.log(wipeout_survival(N, r, f))
    np.testing.assert_allclose(table, exact, rtol=0, atol=1e-8)
    assert exact[-1] > -90 and np.log(wipeout_survival(N, r, table.size)) <= -90


@pytest.mark.parametrize("N, r", [(40, 3), (300, 5), (5000, 9)])
def test_spare_cycle_survival_matches_a_direct_binomial_sum(N, r):
    # Q(u) = sum_f Binom(f; N, p) P(T > f) and theta summed over every f = 0..N with
    # scipy's binomial pmf.  At grid nodes the cycle's truncated band sums must agree to
    # rounding (the band drops terms below e^-32); between nodes the linear interpolation
    # of a 640-point grid is allowed 2e-3 in log Q (where log Q > -40) and 1e-3 in theta
    # (its effect on hours is below 2e-5 against an 8192-point grid).
    from scipy.stats import binom

    from spare_theory.placement.placements import cyclic_placement
    from spare_theory.stacking.overhead import expected_stacks
    from spare_theory.wipeout.enumeration import exact_ruler_survival
    from spare_theory.wipeout.law import wipeout_survival

    cycle = Spare(N, r)
    f = np.arange(N + 1)
    # The cycle takes P(T > f) exactly where that is cheap (r = 3 at N = 40), else sharp.
    if r == 3:
        survival = exact_ruler_survival(N, cyclic_placement(N, r)[0])
    else:
        survival = wipeout_survival(N, r, f)
    possible = np.ceil(N / np.maximum(N - f, 1)) <= r
    inv = np.where(possible, 1.0 / expected_stacks(N, r, np.where(possible, f, 0)), 0.0)

    def direct(u):
        w = binom.pmf(f, N, -np.expm1(-u)) * survival * possible
        return math.log(w.sum()), (w * inv).sum() / w.sum()

    nodes = np.flatnonzero(cycle.log_q > -40)
    for i in nodes[:: max(nodes.size // 12, 1)]:
        log_q, theta = direct(cycle.u[i])
        assert cycle.logq(cycle.u[i]) == pytest.approx(log_q, rel=1e-9, abs=1e-9)
        assert cycle.theta(cycle.u[i]) == pytest.approx(theta, rel=1e-9)
    for i in nodes[:-1][:: max(nodes.size // 12, 1)]:
        u = (cycle.u[i] + cycle.u[i + 1]) / 2
        log_q, theta = direct(u)
        assert cycle.logq(u) == pytest.approx(log_q, abs=2e-3)
        assert cycle.theta(u) == pytest.approx(theta, rel=1e-3)


# ---------------------------------------------------------------------------
# The layer's seams: strategies, the renewal evaluation, uptime, dispatch.
# ---------------------------------------------------------------------------


def test_every_strategy_has_one_cycle_law():
    from spare_theory import registered_strategies
    from spare_theory.cycles.base import CycleLaw
    from spare_theory.strategies.registry import PUBLISHED_STRATEGIES

    assert registered_strategies()[:3] == PUBLISHED_STRATEGIES
    for name in PUBLISHED_STRATEGIES:
        law = lookup(name).cycle_law(64, 1 if name == "ckpt" else 3)
        assert isinstance(law, CycleLaw)


def test_a_new_cycle_law_is_one_class():
    # CKPT-only written from scratch on the interface alone (log Q = -N u, theta = 1,
    # the generic u_at): the renewal evaluation needs nothing else, and it agrees with
    # the built-in law to rounding (the built-in computes N log(1 - p), not -N u).
    from spare_theory.cycles.base import CycleLaw
    from spare_theory.hourly.renewal import evaluate

    class Plain(CycleLaw):
        name = "plain"

        def logq(self, u):
            return -self.N * np.asarray(u, dtype=float)

        def theta(self, u):
            return np.ones(np.shape(u))

    sc = Scenario(**BASE)
    for tau in (5.0, 60.0, 600.0):
        mine = evaluate(group_process(sc), Plain(sc.groups, 1), tau)
        ref = time_to_train(sc, "ckpt", checkpoint_interval_minutes=tau)
        assert mine.strategy == "plain"
        assert mine.hours == pytest.approx(ref.hours, rel=1e-9)
        assert mine.restarts == pytest.approx(ref.restarts, rel=1e-9)


@pytest.mark.parametrize("strategy, r", [("ckpt", None), ("rep", 3), ("spare", 5)])
def test_uptime_is_the_share_outside_restarts(strategy, r):
    est = time_to_train(Scenario(**BASE), strategy, r=r, checkpoint_interval_minutes=60)
    assert est.uptime == pytest.approx(1 - est.restart_hours / est.hours, rel=1e-12)
    # Checkpoints and lost work are up-time: uptime exceeds the useful share.
    assert est.availability < est.uptime < 1
    free = time_to_train(
        Scenario(**{**BASE, "restart_minutes": 0}), strategy, r=r, checkpoint_interval_minutes=60
    )
    assert free.uptime == 1.0 and free.restart_hours == 0.0


def test_uptime_when_the_run_never_ends():
    # Restarts far longer than the cluster MTBF: hours overflow to inf, uptime stays
    # defined (restart share of the cycle) and is tiny, never NaN.
    sc = Scenario(**{**BASE, "gpu_mtbf_hours": 5.0, "restart_minutes": 600.0})
    est = time_to_train(sc, "ckpt", checkpoint_interval_minutes=5)
    assert math.isinf(est.hours) and est.availability == 0.0
    assert 0.0 <= est.uptime < 1e-3


def test_step_level_keyword_is_rejected_for_an_hour_level_scenario():
    with pytest.raises(ValueError, match="checkpoint_every_steps"):
        time_to_train(Scenario(**BASE), "spare", r=3, checkpoint_every_steps=100)
