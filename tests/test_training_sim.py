import numpy as np
import pytest

from spare_theory.hourly.scenario import Scenario
from spare_theory.training import simulate as front_door
from spare_theory.training.estimate import time_to_train
from spare_theory.training.simulate import simulate_training

BASE = dict(
    gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20, checkpoint_minutes=5
)
K = 4  # tolerance in standard errors of the simulated mean


def _with_cycles(strategy, r, cycles=30, **over):
    """The scenario whose expected number of restarts is about ``cycles``.

    The model is a renewal-reward limit; a run of many cycles makes the
    boundary terms (fresh start, last partial cycle) small.
    """
    probe = time_to_train(Scenario(**{**BASE, **over}, work_hours=1.0), strategy, r=r)
    return Scenario(**{**BASE, **over}, work_hours=cycles / probe.restarts)


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy, r, over",
    [
        ("ckpt", None, {}),
        ("rep", 2, {}),
        ("rep", 3, dict(gpus=1000)),  # r does not divide N = 125: sets of 3 and 4
        ("spare", 3, {}),
        ("spare", 5, dict(restart_minutes=60, checkpoint_minutes=2)),
    ],
)
def test_model_matches_simulation(strategy, r, over):
    sc = _with_cycles(strategy, r, **over)
    est = time_to_train(sc, strategy, r=r)
    sim = simulate_training(
        sc,
        strategy,
        r=r,
        checkpoint_interval_minutes=est.checkpoint_interval_minutes,
        trials=60,
        seed=7,
    )
    # Within K standard errors, or 1 %: the renewal-reward limit's O(1/cycles)
    # boundary terms at ~30 cycles (docs/theory.md, section 4).
    tol = max(K * sim.standard_error_hours, 0.01 * sim.mean_hours)
    assert abs(est.hours - sim.mean_hours) <= tol
    assert abs(est.restarts - sim.restarts.mean()) <= max(
        K * sim.restarts.std(ddof=1) / np.sqrt(60), 0.05 * est.restarts
    )


def test_spare_beats_rep_when_restarts_dominate():
    sc = Scenario(**{**BASE, "restart_minutes": 60}, work_hours=200)
    spare = simulate_training(
        sc, "spare", r=5, checkpoint_interval_minutes=120, trials=20, seed=1
    ).mean_hours
    rep = simulate_training(
        sc, "rep", r=2, checkpoint_interval_minutes=120, trials=20, seed=1
    ).mean_hours
    assert spare < rep


def test_seeded_and_independent_of_batching():
    sc = Scenario(**BASE, work_hours=30)
    a = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60, trials=6, seed=3)
    b = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60, trials=3, seed=3)
    c = simulate_training(sc, "spare", r=3, checkpoint_interval_minutes=60, trials=6, seed=4)
    np.testing.assert_array_equal(a.hours[:3], b.hours)
    assert not np.array_equal(a.hours, c.hours)
    assert np.all(a.hours >= 30)


def test_no_failures_gives_work_plus_checkpoints():
    sc = Scenario(**{**BASE, "gpu_mtbf_hours": 1e12}, work_hours=10)
    sim = simulate_training(sc, "rep", r=2, checkpoint_interval_minutes=60, trials=2, seed=0)
    # 20 h of compute at throughput 1/2 in 20 segments of 1 h, each with a 5 min checkpoint.
    np.testing.assert_allclose(sim.hours, 20 + 20 * 5 / 60)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(strategy="x"), "strategy"),
        (dict(r=0), "r"),
        (dict(checkpoint_interval_minutes=-1), "checkpoint_interval_minutes"),
        (dict(trials=0), "trials"),
        (dict(seed=-1), "seed"),
        (dict(seed=None), "seed"),
        (dict(overhead_source="closed"), "overhead_source"),
        (dict(overhead_source=None), "overhead_source"),
        (dict(pool_size=0), "pool_size"),
        (dict(pool_size=2.5), "pool_size"),
    ],
)
def test_bad_arguments(kwargs, name):
    args = dict(strategy="spare", r=3, checkpoint_interval_minutes=60, trials=2, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        simulate_training(Scenario(**BASE, work_hours=5), **args)


@pytest.mark.slow
def test_pool_matches_controller():
    """Pool mode reproduces the per-cycle controller's mean hours.

    Runs of one call share their pool, so the spread of their hours misses the
    pool's own sampling error; the pool-mode standard error is taken from the
    spread of independent calls (independent pools) instead.
    """
    sc = _with_cycles(
        "spare", 5, cycles=25, gpus=8000, gpu_mtbf_hours=20000.0, restart_minutes=30
    )  # N = 1000
    tau = time_to_train(sc, "spare", r=5).checkpoint_interval_minutes
    ctrl = simulate_training(
        sc,
        "spare",
        r=5,
        checkpoint_interval_minutes=tau,
        trials=30,
        seed=11,
        overhead_source="controller",
    )
    calls = np.array(
        [
            simulate_training(
                sc,
                "spare",
                r=5,
                checkpoint_interval_minutes=tau,
                trials=6,
                seed=np.random.SeedSequence(12, spawn_key=(j,)),
                overhead_source="pool",
                pool_size=16,
            ).mean_hours
            for j in range(10)
        ]
    )
    se = np.hypot(ctrl.standard_error_hours, calls.std(ddof=1) / np.sqrt(calls.size))
    assert abs(calls.mean() - ctrl.mean_hours) <= K * se


def test_pool_seeded_and_independent_of_batching():
    sc = Scenario(**BASE, work_hours=30)
    plan = {"r": 3, "checkpoint_interval_minutes": 60}
    a = simulate_training(
        sc, "spare", **plan, trials=6, seed=3, overhead_source="pool", pool_size=8
    )
    b = simulate_training(
        sc, "spare", **plan, trials=3, seed=3, overhead_source="pool", pool_size=8
    )
    c = simulate_training(
        sc, "spare", **plan, trials=6, seed=4, overhead_source="pool", pool_size=8
    )
    np.testing.assert_array_equal(a.hours[:3], b.hours)
    np.testing.assert_array_equal(a.restarts[:3], b.restarts)
    assert not np.array_equal(a.hours, c.hours)
    # The pool draws are not the controller's: a different sample from the same seed.
    assert not np.array_equal(
        a.hours,
        simulate_training(
            sc, "spare", **plan, trials=6, seed=3, overhead_source="controller"
        ).hours,
    )


def test_auto_switches_to_pool_above_threshold(monkeypatch):
    sc = Scenario(**BASE, work_hours=30)  # N = 128

    def run(**kw):
        return simulate_training(
            sc, "spare", r=3, checkpoint_interval_minutes=60, trials=4, seed=5, **kw
        ).hours

    # At or under the threshold "auto" is the controller, bit for bit.
    np.testing.assert_array_equal(run(), run(overhead_source="controller"))
    monkeypatch.setattr(front_door, "CONTROLLER_MAX_GROUPS", 127)
    np.testing.assert_array_equal(run(), run(overhead_source="pool"))
    assert not np.array_equal(run(), run(overhead_source="controller"))


@pytest.mark.slow
def test_simulation_does_not_import_the_model():
    # The event simulation is the independent check of the closed-form model: importing
    # it must load none of the model's modules (nor the closed forms it rests on).
    import subprocess
    import sys

    model = [
        "spare_theory.training.estimate",
        "spare_theory.training.optimize",
        "spare_theory.cycles.base",
        "spare_theory.cycles.spare",
        "spare_theory.hourly.renewal",
        "spare_theory.hourly.model",
        "spare_theory.planning.search",
    ]
    code = (
        "import sys, spare_theory.hourly.simulation; "
        f"print([m for m in {model!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
