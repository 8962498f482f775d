"""Silent data corruption (issue 39 item 1): a node computes on corrupted state until the
corruption is found, then the whole job restarts from the checkpoint ``k`` back, whatever
the strategy's redundancy; the model against the event simulation.

The simulation plays the semantics directly (``hourly.simulation``: the wipe-out at
detection, the saved work and its bill rolled back ``k - 1`` checkpoints more); the model
prices them in closed form (``cycles.late.LateFailures``: the survival, and the work of
the extra checkpoints lost per cycle, ``hourly.renewal.priced_terms``).  Tolerance: 3 % or
3 standard errors of the simulated mean, the package's rule.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scenarios import drawn_class_scenario, model_plans_outside
from scipy import stats

import spare_theory as st
from spare_theory import CostModel, FailureClass, NoClosedFormError, Scenario
from spare_theory.cycles.late import LateFailures
from spare_theory.cycles.rep import CkptOnly, Rep
from spare_theory.lifetimes.classes import FAILURE_CLASS_PRESETS, parse_failure_classes

SDC = (
    FailureClass("crash", 0.8),
    FailureClass("sdc", 0.2, "corruption", detect_minutes=30.0, rollback_checkpoints=3),
)
BASE = Scenario(
    gpus=128,
    gpus_per_group=8,
    gpu_mtbf_hours=100.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=40,
    failure_classes=SDC,
)


def test_the_command_line_form_takes_a_rollback():
    assert parse_failure_classes("crash:0.8:crash:0,sdc:0.2:corruption:30:3") == SDC


def test_one_rep_cycle_against_drawn_groups():
    # Rep r = 2 on 10 groups (5 pairs): each group's failure comes after Exp(1); a
    # corruption (a third of them) leaves the group up and ends the cycle s later; a pair
    # both failed ends it too.  Drawn here, independently of the law.
    N, s, share, k = 10, 0.05, 1 / 3, 3
    law = LateFailures(Rep(N, 2), corruptions=((s, share, k),))
    rng = np.random.default_rng(8)
    trials = 200_000
    start = rng.exponential(size=(trials, N))
    corrupt = rng.random((trials, N)) < share
    failed_at = np.where(corrupt, np.inf, start)
    pair_end = np.maximum(failed_at[:, 0::2], failed_at[:, 1::2]).min(axis=1)
    found_at = np.where(corrupt, start + s, np.inf).min(axis=1)
    end = np.minimum(pair_end, found_at)
    for u in (0.05, 0.2, 0.5):
        q = (end > u).mean()
        assert abs(np.exp(law.logq(u)) - q) < 4 * np.sqrt(q * (1 - q) / trials)
    # The cycles a corruption ends send the job k - 1 checkpoints further back.
    by_corruption = (found_at < pair_end).mean()
    se = np.sqrt(by_corruption * (1 - by_corruption) / trials)
    assert abs(law.rollback_segments() / (k - 1) - by_corruption) < 4 * se


def test_a_ckpt_cycle_ends_in_a_corruption_found_before_any_other_failure():
    # CKPT-only on N groups, each failing once after Exp(1): given n of them fail at once
    # (Binomial(N, 1 - b)), the first crash comes after Exp(n) and the first corruption,
    # found s later, after Exp(N - n) + s, so it ends the cycle with chance
    # e^{-n s} (N - n) / N (the crash after it: memoryless), averaged over n.
    N, s, b = 27, 0.072, 0.816
    law = LateFailures(CkptOnly(N), corruptions=((s, b, 1),))
    (ending,) = law.late_endings()
    n = np.arange(N + 1)
    exact = np.sum(stats.binom.pmf(n, N, 1 - b) * np.exp(-n * s) * (N - n) / N)
    assert ending == pytest.approx(exact, rel=1e-3)


def test_which_late_class_ends_a_rep_cycle_against_drawn_groups():
    # Rep r = 2 on 10 groups: a group's failure comes after Exp(1); a straggler (a quarter
    # of them) fails its group s_slow later, a corruption (a fifth) leaves it up and ends
    # the cycle s_sdc later; a pair both failed ends it, by the class of the pair's later
    # failure.  Drawn here, independently of the law's integral.
    N, s_slow, s_sdc = 10, 0.08, 0.05
    law = LateFailures(Rep(N, 2), stragglers=((s_slow, 0.25, 2.0),), corruptions=((s_sdc, 0.2, 1),))
    rng = np.random.default_rng(9)
    trials = 200_000
    start = rng.exponential(size=(trials, N))
    kind = rng.choice(3, size=(trials, N), p=[0.55, 0.25, 0.2])  # at once, straggler, sdc
    failed_at = np.select([kind == 0, kind == 1], [start, start + s_slow], np.inf)
    pairs = failed_at.reshape(trials, N // 2, 2)
    pair_end = pairs.max(axis=2)
    first = pair_end.argmin(axis=1)
    rows = np.arange(trials)
    later = pairs[rows, first].argmax(axis=1)
    ender = kind.reshape(trials, N // 2, 2)[rows, first, later]
    found_at = np.where(kind == 2, start + s_sdc, np.inf).min(axis=1)
    by_sdc = found_at < pair_end[rows, first]
    drawn = ((~by_sdc & (ender == 1)).mean(), by_sdc.mean())
    for p, q in zip(law.late_endings(), drawn):
        assert abs(p - q) < 4 * np.sqrt(q * (1 - q) / trials)


def test_a_rollback_further_back_costs_more_in_both_and_the_bill_adds_up():
    scenarios = [
        dataclasses.replace(
            BASE, failure_classes=(SDC[0], dataclasses.replace(SDC[1], rollback_checkpoints=k))
        )
        for k in (1, 2, 4)
    ]
    for name, r in [("ckpt", None), ("spare", 3)]:
        args = dict(r=r, checkpoint_interval_minutes=30.0)
        hours = [st.time_to_train(sc, name, **args).hours for sc in scenarios]
        runs = [st.simulate_training(sc, name, trials=40, seed=3, **args) for sc in scenarios]
        assert hours == sorted(hours)
        assert [x.mean_hours for x in runs] == sorted(x.mean_hours for x in runs)
        # Each run's wall time is the sum of its causes, rolled-back work included.
        bills = runs[-1].bill(CostModel())
        parts = runs[-1].breakdown_hours.sum(axis=1)
        assert np.allclose(parts, runs[-1].hours) and np.isfinite(bills.usd).all()


def _classes(rng: np.random.Generator) -> tuple[FailureClass, ...]:
    """A corruption class beside a crash class, and a straggler class in half the
    draws."""
    sdc = float(rng.uniform(0.01, 0.2))
    corruption = FailureClass(
        "sdc",
        sdc,
        "corruption",
        float(rng.uniform(0.0, 180.0)),
        rollback_checkpoints=int(rng.integers(1, 4)),
    )
    if rng.random() < 0.5:
        slow = float(rng.uniform(0.05, 0.3))
        straggler = FailureClass(
            "slow", slow, "straggler", float(rng.uniform(5.0, 120.0)), slowdown=3.0
        )
        classes: tuple[FailureClass, ...] = (
            FailureClass("crash", 1.0 - sdc - slow),
            corruption,
            straggler,
        )
    else:
        classes = (FailureClass("crash", 1.0 - sdc), corruption)
    return classes


def _drawn(rng: np.random.Generator) -> tuple[Scenario, str]:
    """A scenario with :func:`_classes` and a strategy (``drawn_class_scenario``)."""
    return drawn_class_scenario(rng, _classes)


def test_model_against_simulation_on_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=5, cells=4, trials=200) == []


@pytest.mark.slow  # 30 drawn cells, 300 runs each
def test_model_against_simulation_on_more_drawn_scenarios():
    assert model_plans_outside(_drawn, seed=2053, cells=30, trials=300) == []


@pytest.mark.parametrize(
    ("fields", "strategy", "r", "says"),
    [
        ({}, "hot_spares", 2, "own law"),
        ({"planned_restart_failures": 3}, "spare", 4, "planned_restart_failures"),
        ({"domain_size": 4, "domain_mtbf_hours": 500.0}, "rep", 2, "corruption"),
    ],
)
def test_what_the_model_does_not_cover_is_refused_by_name(fields, strategy, r, says):
    sc = dataclasses.replace(BASE, **fields)
    with pytest.raises(NoClosedFormError, match=says):
        st.time_to_train(sc, strategy, r=r, checkpoint_interval_minutes=30.0)


def test_the_presets_carry_their_sources_figures():
    # Llama 3's Table 5 (arXiv:2407.21783): 419 unexpected interruptions, 6 silent data
    # corruptions, 7 NCCL watchdog timeouts; BLOOM's chronicles: three hangs of 18, 6, 11 h.
    llama = {c.kind: c for c in st.failure_class_preset("llama3")}
    assert llama["corruption"].share == pytest.approx(6 / 419)
    assert llama["hang"].share == pytest.approx(7 / 419)
    bloom = {c.kind: c for c in st.failure_class_preset("bloom")}
    assert bloom["hang"].detect_minutes == pytest.approx((18 + 6 + 11) / 3 * 60)
    for name, classes in FAILURE_CLASS_PRESETS.items():
        assert parse_failure_classes(name) == classes
        dataclasses.replace(BASE, failure_classes=classes)  # shares that sum to 1


def test_a_preset_by_name_on_the_command_line_and_in_a_job_file(tmp_path, capsys):
    from spare_theory.cli import main
    from spare_theory.jobs.files import load_job_file

    argv = ["optimize", "--gpus", "128", "--gpus-per-group", "8", "--gpu-mtbf-hours", "100"]
    argv += ["--restart-minutes", "20", "--checkpoint-minutes", "2", "--work-hours", "40"]
    argv += ["--strategy", "ckpt", "--method", "model", "--json"]
    assert main([*argv, "--failure-classes", "llama3"]) == 0
    assert main([*argv, "--failure-classes", "llama4"]) == 2
    assert "preset (llama3, bloom)" in capsys.readouterr().err
    text = "[job]\nparameters = 7e9\ngpus = 1024\ngpus_per_group = 8\nwork_hours = 100\n"
    text += 'failure_classes = "bloom"\n'
    path = tmp_path / "job.toml"
    path.write_text(text)
    assert load_job_file(path).job.failure_classes == st.failure_class_preset("bloom")
    path.write_text(text.replace('"bloom"', '"opt"'))
    with pytest.raises(ValueError, match="'opt' is not a preset"):
        load_job_file(path)
