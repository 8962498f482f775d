"""Bad input to every public function raises ValueError naming the argument.

One case per line: the call, and a pattern that the message must contain (the
argument's name, and where it helps the allowed range).  Nothing may return NaN
or a wrong number silently.
"""

import math

import numpy as np
import pytest

import spare_theory as st

NAN, INF = math.nan, math.inf


def _hosts(N=13, r=4):
    return st.cyclic_placement(N, r)


def _scenario(**changes):
    fields = dict(
        gpus=65_536,
        gpus_per_group=64,
        gpu_mtbf_hours=50_000.0,
        restart_minutes=30.0,
        checkpoint_minutes=2.0,
        work_hours=100.0,
    )
    fields.update(changes)
    return st.Scenario(**fields)


def _controller_fail(group, twice=False):
    controller = st.ReorderingController(_hosts())
    if twice:
        controller.fail(group)
    controller.fail(group)


CASES = [
    # placement
    ("golomb r=0", lambda: st.golomb_ruler(0), r"\br\b.*>= 1"),
    ("golomb r fractional", lambda: st.golomb_ruler(2.5), r"\br\b.*integer"),
    ("golomb r bool", lambda: st.golomb_ruler(True), r"\br\b.*integer"),
    ("modular N too small", lambda: st.modular_ruler(5, 3), r"N=5.*r=3.*7"),
    ("modular N=0", lambda: st.modular_ruler(0, 2), r"\bN\b.*>= 1"),
    ("modular r > N", lambda: st.modular_ruler(10, 11), r"N=10.*r=11"),
    ("cyclic r > N", lambda: st.cyclic_placement(10, 11), r"\br\b.*<= 10"),
    ("cyclic N nan", lambda: st.cyclic_placement(NAN, 3), r"\bN\b.*integer"),
    ("random seed negative", lambda: st.random_placement(10, 3, seed=-1), r"seed.*non-negative"),
    ("random seed fractional", lambda: st.random_placement(10, 3, seed=1.5), r"seed"),
    ("hosts 1-D", lambda: st.validate_hosts([0, 1, 2]), r"hosts.*2-D"),
    ("hosts float", lambda: st.validate_hosts(np.eye(3)), r"hosts.*integers"),
    (
        "hosts out of range",
        lambda: st.validate_hosts([[0, 5], [1, 0], [2, 1]]),
        r"hosts.*\[0, N=3\)",
    ),
    (
        "hosts not a placement",
        lambda: st.validate_hosts([[0, 1], [0, 2], [2, 0]]),
        r"hosts.*permutation",
    ),
    # wipe-out
    ("gamma N=0", lambda: st.endurable_failures_gamma(0, 2), r"\bN\b"),
    ("gamma r=0", lambda: st.endurable_failures_gamma(100, 0), r"\br\b"),
    ("gamma N nan", lambda: st.endurable_failures_gamma(NAN, 2), r"\bN\b"),
    ("gamma r inf", lambda: st.endurable_failures_gamma(100, INF), r"\br\b"),
    ("gamma N array with negative", lambda: st.endurable_failures_gamma([10, -1], 2), r"\bN\b"),
    ("mu N bool", lambda: st.endurable_failures(True, 2), r"\bN\b"),
    ("mu r fractional", lambda: st.endurable_failures(100, 2.5), r"\br\b"),
    ("mu r > N", lambda: st.endurable_failures(5, 6), r"\br\b|\bN\b"),
    ("survival f < 0", lambda: st.wipeout_survival(100, 3, -1), r"failures"),
    ("survival f > N", lambda: st.wipeout_survival(100, 3, 101), r"failures"),
    ("exact N > 24", lambda: st.exact_endurable_failures(st.cyclic_placement(25, 2)), r"N.*24"),
    ("exact malformed", lambda: st.exact_endurable_failures([[0, 0], [1, 1]]), r"hosts"),
    ("simulate trials=0", lambda: st.simulate_wipeout(_hosts(), 0, seed=1), r"trials.*>= 1"),
    (
        "simulate trials fractional",
        lambda: st.simulate_wipeout(_hosts(), 2.5, seed=1),
        r"trials.*integer",
    ),
    ("simulate seed negative", lambda: st.simulate_wipeout(_hosts(), 10, seed=-5), r"seed"),
    ("simulate seed string", lambda: st.simulate_wipeout(_hosts(), 10, seed="a"), r"seed"),
    (
        "simulate bad hosts",
        lambda: st.simulate_wipeout(np.array([[0, 3], [1, 0], [2, 1]]), 10, seed=0),
        r"hosts",
    ),
    (
        "simulate memory cap 0",
        lambda: st.simulate_wipeout(_hosts(), 10, seed=0, memory_limit_bytes=0),
        r"memory_limit_bytes",
    ),
    # overhead and reordering
    (
        "min_stacks group out of range",
        lambda: st.min_stacks(_hosts(), [13]),
        r"failed.*\[0, 13\)|failed.*13",
    ),
    ("min_stacks negative group", lambda: st.min_stacks(_hosts(), [-1]), r"failed"),
    (
        "min_stacks repeated group",
        lambda: st.min_stacks(_hosts(), [1, 1]),
        r"failed.*(repeat|distinct|duplicate)",
    ),
    ("min_stacks fractional group", lambda: st.min_stacks(_hosts(), [0.5]), r"failed"),
    ("min_stacks bad hosts", lambda: st.min_stacks([[0, 1], [0, 2], [2, 0]], []), r"hosts"),
    ("reorder repeated group", lambda: st.reorder(_hosts(), [2, 2]), r"failed"),
    (
        "reorder bad order",
        lambda: st.reorder(_hosts(), [2], order=np.zeros((3, 3), dtype=int)),
        r"order",
    ),
    ("controller group out of range", lambda: _controller_fail(13), r"group"),
    ("controller group twice", lambda: _controller_fail(3, twice=True), r"group.*(already|failed)"),
    (
        "overhead weighting",
        lambda: st.overhead(100, 3, weighting="wall"),
        r"weighting.*failure.*time",
    ),
    ("overhead N=0", lambda: st.overhead(0, 3), r"\bN\b"),
    ("simulate_overhead trials<0", lambda: st.simulate_overhead(_hosts(), -1, seed=0), r"trials"),
    ("expected_stacks f > N", lambda: st.expected_stacks(100, 3, 101), r"failures"),
    ("stacks_lower_bound f = N", lambda: st.stacks_lower_bound(10, 10), r"failures"),
    # time to train
    ("scenario gpus=0", lambda: _scenario(gpus=0), r"gpus"),
    ("scenario gpus fractional", lambda: _scenario(gpus=600_000.5), r"gpus"),
    ("scenario gpus bool", lambda: _scenario(gpus=True), r"gpus"),
    ("scenario mtbf zero", lambda: _scenario(gpu_mtbf_hours=0), r"gpu_mtbf_hours.*> 0"),
    ("scenario mtbf negative", lambda: _scenario(gpu_mtbf_hours=-5), r"gpu_mtbf_hours.*> 0"),
    ("scenario mtbf nan", lambda: _scenario(gpu_mtbf_hours=NAN), r"gpu_mtbf_hours"),
    ("scenario restart negative", lambda: _scenario(restart_minutes=-1), r"restart_minutes.*>= 0"),
    ("scenario checkpoint nan", lambda: _scenario(checkpoint_minutes=NAN), r"checkpoint_minutes"),
    ("scenario work inf", lambda: _scenario(work_hours=INF), r"work_hours"),
    (
        "scenario group larger than cluster",
        lambda: _scenario(gpus_per_group=131_072),
        r"gpus_per_group",
    ),
    ("time_to_train strategy", lambda: st.time_to_train(_scenario(), "foo"), r"strategy"),
    ("time_to_train r=0", lambda: st.time_to_train(_scenario(), "spare", r=0), r"\br\b"),
    (
        "time_to_train interval<0",
        lambda: st.time_to_train(_scenario(), "spare", r=2, checkpoint_interval_minutes=-1),
        r"checkpoint_interval_minutes",
    ),
    ("optimal_plan strategy", lambda: st.optimal_plan(_scenario(), "bogus"), r"strategy"),
    ("r_star_rule N=0", lambda: st.r_star_rule(0), r"\bN\b"),
    (
        "simulate_training trials=0",
        lambda: st.simulate_training(
            _scenario(), "spare", r=3, checkpoint_interval_minutes=30.0, trials=0, seed=0
        ),
        r"trials",
    ),
    (
        "sweep negative gpus",
        lambda: st.sweep(gpus=[-5], gpu_mtbf_hours=[50_000], gpus_per_group=[8]),
        r"gpus",
    ),
    # Appended by the hardening pass (issue 6): arrays, extremes, more layer-4/5 arguments.
    ("survival array with NaN", lambda: st.wipeout_survival(100, 3, [1.0, NAN]), r"failures"),
    ("survival array f > N", lambda: st.wipeout_survival([100, 200], 3, [150, 150]), r"failures"),
    ("survival fractional N array", lambda: st.wipeout_survival([100.5], 3, 1), r"\bN\b"),
    ("count above 2**62", lambda: st.endurable_failures_gamma(2**63, 3), r"\bN\b.*2\*\*62"),
    (
        "uint64 count above 2**63",
        lambda: st.endurable_failures(np.uint64(2**63), 3),
        r"\bN\b.*2\*\*62",
    ),
    ("placement too large to allocate", lambda: st.cyclic_placement(10**12, 2), r"\bN\b"),
    ("expected_stacks past pigeonhole", lambda: st.expected_stacks(100, 3, 80), r"failures"),
    ("expected_stacks boolean r", lambda: st.expected_stacks(100, True, 1), r"\br\b"),
    ("overhead r > sqrt(N)", lambda: st.overhead(10, 4), r"\bN\b"),
    (
        "simulate_training negative interval",
        lambda: st.simulate_training(
            _scenario(), "spare", r=3, checkpoint_interval_minutes=-30.0, trials=2, seed=0
        ),
        r"checkpoint_interval",
    ),
    (
        "simulate_training bad seed",
        lambda: st.simulate_training(
            _scenario(), "spare", r=3, checkpoint_interval_minutes=30.0, trials=2, seed=-1
        ),
        r"seed",
    ),
    (
        "simulate_training bad strategy",
        lambda: st.simulate_training(
            _scenario(), "bogus", r=3, checkpoint_interval_minutes=30.0, trials=2, seed=0
        ),
        r"strategy",
    ),
    ("Scenario NaN mtbf", lambda: _scenario(gpu_mtbf_hours=NAN), r"gpu_mtbf_hours"),
    ("Scenario failure law", lambda: _scenario(failure_law="bogus"), r"failure_law"),
    (
        "sweep NaN mtbf",
        lambda: st.sweep(gpus=[1024], gpu_mtbf_hours=[NAN], gpus_per_group=[8]),
        r"gpu_mtbf_hours",
    ),
    (
        "sweep bad restart model",
        lambda: st.sweep(
            gpus=[1024], gpu_mtbf_hours=[50_000], gpus_per_group=[8], restart_model=["bogus"]
        ),
        r"restart_model",
    ),
]


@pytest.mark.parametrize(
    "call,pattern", [(c, p) for _, c, p in CASES], ids=[n for n, _, _ in CASES]
)
def test_bad_input_raises_value_error_naming_the_argument(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


def test_enough_cases():
    assert len(CASES) >= 40
