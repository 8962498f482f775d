"""Scenarios several test modules build on (pytest puts tests/ on the path: ``scenarios``)."""

#: Sixteen groups of 64 GPUs at 2,400 h GPU MTBF, 20 min restarts, 5 min checkpoints and
#: 80 h of work: small enough that every strategy and field simulates in seconds.
SIXTEEN_GROUPS = dict(
    gpus=16 * 64,
    gpus_per_group=64,
    gpu_mtbf_hours=2400.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=80,
)

#: Sixteen groups of 64 GPUs at 1,200 h GPU MTBF, 15 min restarts, 2 min checkpoints and
#: 60 h of work: the failure-class tests' base (their classes beside it).
SIXTEEN_GROUPS_WITH_CLASSES = dict(
    gpus=16 * 64,
    gpus_per_group=64,
    gpu_mtbf_hours=1200.0,
    restart_minutes=15,
    checkpoint_minutes=2,
    work_hours=60,
)


def repair_cycle_mean_hours(scenario, name: str, r: int) -> float:
    """Hours to the first wipe-out under the strategy's repair cycle, that ``time_to_train`` prices.

    ``mean_time_to_wipeout`` without its refusal of the regions where the wipe-out doors'
    audit measured it off (``CycleLaw.wipeout_refusal``): the law is still the one the
    training model reads there, and hand-picked cells of it are checked.
    """
    from spare_theory import strategy
    from spare_theory.hourly.model import wipeout_mean_hours
    from spare_theory.hourly.process import group_process

    return wipeout_mean_hours(group_process(scenario), strategy(name).cycle_law(scenario.groups, r))


def model_plans_outside(drawn, seed: int, cells: int, trials: int) -> list[tuple]:
    """The cells ``drawn(rng)`` gives whose model plan misses the simulation at that plan
    (as the audit does) by more than 3 % and 3 standard errors: ``(scenario, strategy,
    plan, runs)`` each."""
    import numpy as np

    import spare_theory as st

    rng = np.random.default_rng(seed)
    outside = []
    for _ in range(cells):
        sc, name = drawn(rng)
        plan = st.optimal_plan(sc, name, method="model")
        runs = st.simulate_training(sc, plan, trials=trials, seed=seed)
        mean, se = runs.mean_hours, runs.standard_error_hours
        if abs(plan.hours - mean) > max(0.03 * mean, 3 * se):
            outside.append((sc, name, plan, runs))
    return outside


def drawn_class_scenario(rng, draw_classes) -> tuple:
    """A scenario with failure classes and a strategy, drawn over the space users set: 8 to
    32 groups of 8 GPUs, group MTBF 5 to 40 h (log-uniform), exponential repairs of 10 to
    120 min in half the draws, the classes ``draw_classes(rng)`` gives, restarts of 5 to 40
    min, checkpoints of 0.5 to 5 min, 20 to 60 h of work; CKPT-only, Rep or SPARe."""
    import numpy as np

    from spare_theory import Scenario

    groups = int(rng.integers(8, 33))
    group_mtbf_hours = float(np.exp(rng.uniform(np.log(5.0), np.log(40.0))))
    repairs = None if rng.random() < 0.5 else float(rng.uniform(10.0, 120.0))
    classes = draw_classes(rng)
    sc = Scenario(
        gpus=8 * groups,
        gpus_per_group=8,
        gpu_mtbf_hours=8 * group_mtbf_hours,
        restart_minutes=float(rng.uniform(5.0, 40.0)),
        checkpoint_minutes=float(rng.uniform(0.5, 5.0)),
        work_hours=float(rng.uniform(20.0, 60.0)),
        repair_minutes=repairs,
        failure_classes=classes,
    )
    return sc, str(rng.choice(["ckpt", "rep", "spare"]))
