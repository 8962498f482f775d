"""Argument checks: each names the argument and the allowed range."""

import numpy as np
import pytest

from spare_theory import _validation as v


@pytest.mark.parametrize("good,expected", [(5, 5), (np.int32(7), 7), (4096.0, 4096)])
def test_as_count_accepts_integers(good, expected):
    assert v.as_count(good, "N") == expected


@pytest.mark.parametrize(
    "bad,match",
    [
        (True, "integer"),
        (2.5, "integer"),
        (float("nan"), "integer"),
        (float("inf"), "integer"),
        ("3", "integer"),
        (None, "integer"),
        (0, ">= 1"),
        (-4, ">= 1"),
    ],
)
def test_as_count_rejects(bad, match):
    with pytest.raises(ValueError, match=f"trials.*{match}|{match}.*trials|trials must"):
        v.as_count(bad, "trials")


def test_as_count_upper_bound():
    with pytest.raises(ValueError, match=r"r must be >= 1 and <= 10, got 11"):
        v.as_count(11, "r", maximum=10)


def test_as_count_array():
    out = v.as_count_array([1, 2.0, 3], "N")
    assert out.dtype == np.int64 and list(out) == [1, 2, 3]
    for bad in ([1, 2.5], [1, np.nan], [True, False], [0, 1], ["a"]):
        with pytest.raises(ValueError, match="N"):
            v.as_count_array(bad, "N")


def test_as_real_bounds_and_nan():
    assert v.as_real(2, "x", minimum=0) == 2.0
    with pytest.raises(ValueError, match="gpu_mtbf_hours must be > 0"):
        v.as_real(0.0, "gpu_mtbf_hours", minimum=0, strict_minimum=True)
    with pytest.raises(ValueError, match="restart_minutes must be >= 0"):
        v.as_real(-1, "restart_minutes", minimum=0)
    for bad in (float("nan"), float("inf"), "1", None, True):
        with pytest.raises(ValueError, match="x must"):
            v.as_real(bad, "x")


def test_as_real_array():
    assert v.as_real_array([1, 2.5], "x").dtype == np.float64
    with pytest.raises(ValueError, match="finite"):
        v.as_real_array([1, np.inf], "x")


def test_seed_sequence_and_children():
    ss = v.as_seed_sequence(42)
    assert isinstance(ss, np.random.SeedSequence)
    assert v.as_seed_sequence(ss) is ss
    for bad in (-1, 1.5, "x", None, True):
        with pytest.raises(ValueError, match="seed"):
            v.as_seed_sequence(bad)
    # A child stream is addressable directly and equals the spawned one.
    assert np.array_equal(v.child_seed(ss, 3).generate_state(4), ss.spawn(4)[3].generate_state(4))
    assert not np.array_equal(
        v.child_seed(ss, 1).generate_state(4), v.child_seed(ss, 2).generate_state(4)
    )


def test_as_choice():
    assert v.as_choice("time", "weighting", {"time", "failure"}) == "time"
    with pytest.raises(ValueError, match=r"weighting must be one of \['failure', 'time'\]"):
        v.as_choice("wall", "weighting", {"time", "failure"})
