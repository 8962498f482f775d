import math

import pytest

from spare_theory import strategy, time_to_train
from spare_theory.hourly.scenario import (
    LLAMA3_H100_GPU_MTBF_HOURS,
    Scenario,
    check_checkpoint_interval,
)

BASE = dict(
    gpus=1024,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=20,
    checkpoint_minutes=5,
    work_hours=48,
)


def test_derived_quantities():
    sc = Scenario(**BASE)
    assert sc.groups == 128
    assert sc.group_failure_rate_per_hour == pytest.approx(8 / 2000)
    assert sc.cluster_mtbf_minutes == pytest.approx(60 * 2000 / 1024)


def test_non_dividing_group_size_floors_groups():
    sc = Scenario(**{**BASE, "gpus": 1030})
    assert sc.groups == 128


def test_llama3_preset_gives_five_minute_cluster_mtbf():
    # Llama 3 paper (Dubey et al. 2024): 419 failures in 54 days on 16,384 GPUs,
    # ~50,700 GPU-hours per failure.
    assert pytest.approx(50_700, rel=0.001) == LLAMA3_H100_GPU_MTBF_HOURS
    sc = Scenario.published_600k(gpus_per_group=2048)
    assert sc.gpus == 600_000 and sc.restart_minutes == 60
    assert 4.9 < 60 * sc.gpu_mtbf_hours / sc.gpus < 5.2


def test_integral_floats_normalised():
    sc = Scenario(**{**BASE, "gpus": 1024.0})
    assert isinstance(sc.gpus, int)


@pytest.mark.parametrize(
    "field, value",
    [
        ("gpus", 0),
        ("gpus", 10.5),
        ("gpus", True),
        ("gpus", "1024"),
        ("gpus_per_group", 2048),
        ("gpus_per_group", 0),
        ("gpus_per_group", False),
        ("gpu_mtbf_hours", 0.0),
        ("gpu_mtbf_hours", math.nan),
        ("gpu_mtbf_hours", math.inf),
        ("restart_minutes", -1.0),
        ("restart_minutes", math.nan),
        ("checkpoint_minutes", -0.1),
        ("checkpoint_minutes", math.inf),
        ("work_hours", 0.0),
        ("work_hours", -5.0),
        ("failure_law", "gamma"),
    ],
)
def test_bad_fields_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        Scenario(**{**BASE, field: value})


def test_frozen():
    sc = Scenario(**BASE)
    with pytest.raises(AttributeError):
        sc.gpus = 5


def test_fields_are_keyword_only():
    # Six numbers in a row are easy to swap silently: a positional call is a TypeError.
    with pytest.raises(TypeError):
        Scenario(1024, 8, 2000.0, 20, 5, 48)


@pytest.mark.parametrize(
    "name, r, expected",
    [("ckpt", None, 1), ("ckpt", 1, 1), ("rep", 7, 7), ("spare", 4, 4), ("spare", 4.0, 4)],
)
def test_strategies_accept_their_redundancies(name, r, expected):
    assert strategy(name).check_r(Scenario(**BASE).groups, r) == expected


@pytest.mark.parametrize(
    "name, r, match",
    [
        ("ckpt", 2, r"\br\b"),
        ("rep", None, r"\br\b"),
        ("rep", 129, r"\br\b"),  # N = 128
        ("spare", 0, r"\br\b"),
        ("spare", 12, r"N=128.*r=12"),  # no modular ruler with 12 marks at N = 128
    ],
)
def test_strategies_refuse_other_redundancies(name, r, match):
    with pytest.raises(ValueError, match=match):
        strategy(name).check_r(Scenario(**BASE).groups, r)
    with pytest.raises(ValueError, match=match):
        time_to_train(Scenario(**BASE), name, r=r, checkpoint_interval_minutes=60.0)


def test_unknown_strategy_and_scenario_are_named():
    with pytest.raises(ValueError, match="strategy"):
        time_to_train(Scenario(**BASE), "raid", r=2, checkpoint_interval_minutes=60.0)
    with pytest.raises(ValueError, match="scenario"):
        time_to_train(dict(BASE), "rep", r=2, checkpoint_interval_minutes=60.0)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "5"])
def test_check_checkpoint_interval_rejects(bad):
    with pytest.raises(ValueError, match="checkpoint_interval_minutes"):
        check_checkpoint_interval(bad)
