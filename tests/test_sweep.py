"""Sweeps: restart-cost models, grid labelling, consistency with the layers below."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spare_theory import sweep, time_to_train
from spare_theory.strategies.registry import PUBLISHED_STRATEGIES as STRATEGIES
from spare_theory.sweeps import by_point, scaled_restart_minutes

# Llama 3 paper (Dubey et al. 2024): 419 unexpected interruptions in 54 days on 16,384 H100s.
LLAMA3_MTBF_HOURS = 16_384 * 54 * 24 / 419


@pytest.fixture(scope="module")
def small():
    return sweep(
        gpus=[16_384, 600_000],
        gpu_mtbf_hours=[LLAMA3_MTBF_HOURS / 2, LLAMA3_MTBF_HOURS],
        gpus_per_group=[256, 2048],
        restart_model=["constant", "linear"],
        progress=False,
    )


def test_restart_models_are_anchored_at_60_minutes_for_600k_gpus():
    assert scaled_restart_minutes(600_000, model="linear") == pytest.approx(60.0)
    assert scaled_restart_minutes(600_000, model="constant") == 60.0
    np.testing.assert_allclose(
        scaled_restart_minutes([10_000, 300_000, 1_200_000], model="linear"), [1.0, 30.0, 120.0]
    )
    np.testing.assert_array_equal(
        scaled_restart_minutes([10_000, 1_200_000], model="constant"), [60.0, 60.0]
    )
    assert scaled_restart_minutes(
        1000, model="linear", anchor_minutes=10, anchor_gpus=2000
    ) == pytest.approx(5.0)


def test_restart_model_function_is_not_named_like_the_scenario_field():
    import spare_theory.sweeps as sweeps

    assert not hasattr(sweeps, "restart_minutes")
    with pytest.raises(TypeError):
        scaled_restart_minutes(600_000, "linear")  # the model is keyword-only


def test_sweep_refuses_positional_arguments():
    # Scenario orders its fields gpus, gpus_per_group, gpu_mtbf_hours: a positional
    # sweep(gpus, gpu_mtbf_hours, gpus_per_group) call would silently swap two axes.
    with pytest.raises(TypeError):
        sweep([16_384], [50_000.0], [2048], progress=False)
    with pytest.raises(TypeError):
        sweep([16_384], gpu_mtbf_hours=[50_000.0], gpus_per_group=[2048], progress=False)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(gpus=[1000], gpus_per_group=[2048]), "gpus_per_group"),
        (dict(gpus=[]), "gpus"),
        (dict(gpus=[10_000.5]), "gpus"),
        (dict(gpu_mtbf_hours=[0.0]), "gpu_mtbf_hours"),
        (dict(gpu_mtbf_hours=[float("nan")]), "gpu_mtbf_hours"),
        (dict(restart_model="quadratic"), "restart_model"),
        (dict(restart_model=[]), "restart_model"),
        (dict(checkpoint_minutes=-1.0), "checkpoint_minutes"),
        (dict(work_hours=0), "work_hours"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, name):
    args = dict(
        gpus=[100_000], gpu_mtbf_hours=[LLAMA3_MTBF_HOURS], gpus_per_group=[2048], progress=False
    )
    with pytest.raises(ValueError, match=name):
        sweep(**(args | kwargs))


def test_long_form_labels_every_point_and_strategy_in_grid_order(small):
    assert len(small) == 2 * 2 * 2 * 2 * len(STRATEGIES)
    assert list(small["strategy"][:3]) == list(STRATEGIES)
    points = small[["restart_model", "gpus_per_group", "gpus", "gpu_mtbf_hours"]].drop_duplicates()
    assert list(points["restart_model"]) == ["constant"] * 8 + ["linear"] * 8
    assert list(points["gpus_per_group"][:8]) == [256] * 4 + [2048] * 4
    assert (small["N"] == small["gpus"] // small["gpus_per_group"]).all()
    # Nothing missing but CKPT-only's r, which it does not have (None, as the API says).
    assert small["r"].isna().tolist() == (small["strategy"] == "ckpt").tolist()
    assert not small.drop(columns="r").isna().any().any()
    # The published scenario: a cluster MTBF of about 5.1 min at 600k H100s.
    at_600k = small[(small["gpus"] == 600_000) & (small["gpu_mtbf_hours"] == LLAMA3_MTBF_HOURS)]
    grouped = at_600k["N"] * at_600k["gpus_per_group"]
    np.testing.assert_allclose(at_600k["cluster_mtbf_minutes"], 60 * LLAMA3_MTBF_HOURS / grouped)
    assert at_600k["cluster_mtbf_minutes"].between(5.0, 5.2).all()
    linear = small[small["restart_model"] == "linear"]
    np.testing.assert_allclose(linear["restart_minutes"], 60.0 * linear["gpus"] / 600_000)


def test_each_row_is_the_time_to_train_of_its_plan_and_reduction_is_against_best_rep(small):
    from spare_theory import Scenario

    for _, point in small.groupby(
        ["restart_model", "gpus_per_group", "gpus", "gpu_mtbf_hours"], sort=False
    ):
        rep_hours = point.loc[point["strategy"] == "rep", "hours"].item()
        for row in point.itertuples():
            scenario = Scenario(
                gpus=row.gpus,
                gpus_per_group=row.gpus_per_group,
                gpu_mtbf_hours=row.gpu_mtbf_hours,
                restart_minutes=row.restart_minutes,
                checkpoint_minutes=5.0,
                work_hours=720.0,
            )
            estimate = time_to_train(
                scenario,
                row.strategy,
                r=None if pd.isna(row.r) else int(row.r),
                checkpoint_interval_minutes=row.checkpoint_interval_minutes,
            )
            assert estimate.hours == pytest.approx(row.hours, rel=1e-9)
            assert estimate.availability == pytest.approx(row.availability, rel=1e-9)
            assert row.reduction_vs_best_rep == pytest.approx(
                1.0 - row.hours / rep_hours, rel=1e-12
            )
            assert 0.0 < row.availability <= 1.0
            assert row.hours >= 720.0  # never faster than the failure-free run


def test_by_point_puts_strategies_side_by_side(small):
    wide = by_point(small)
    assert len(wide) == len(small) // len(STRATEGIES)
    spare = small[small["strategy"] == "spare"].reset_index(drop=True)
    np.testing.assert_array_equal(wide["hours_spare"], spare["hours"])
    np.testing.assert_array_equal(wide["r_rep"], small.loc[small["strategy"] == "rep", "r"])
    np.testing.assert_array_equal(
        wide["reduction_vs_best_rep_spare"], spare["reduction_vs_best_rep"]
    )
    np.testing.assert_array_equal(wide["availability_spare"], spare["availability"])


def test_an_r1_spare_plan_is_labelled_plain_checkpointing():
    # 10,000 GPUs fail rarely enough that the best SPARe plan keeps one copy per shard:
    # it is plain checkpointing, and its hours are CKPT-only's.
    frame = sweep(
        gpus=[10_000, 600_000],
        gpu_mtbf_hours=[50_677.0],
        gpus_per_group=[64],
        restart_model="constant",
        progress=False,
    )
    assert (frame["plain_checkpointing"] == (frame["r"] == 1)).all()
    wide = by_point(frame)
    low, high = wide.iloc[0], wide.iloc[1]
    assert low["r_spare"] == 1 and low["spare_is_plain_checkpointing"]
    assert low["hours_spare"] == pytest.approx(low["hours_ckpt"], rel=1e-9)
    assert high["r_spare"] > 1 and not high["spare_is_plain_checkpointing"]


def test_linear_restart_never_slower_than_constant_below_the_anchor(small):
    # Below 600k GPUs the linear model restarts faster, so no best plan can be slower.
    below = small[small["gpus"] < 600_000]
    constant = below[below["restart_model"] == "constant"].reset_index(drop=True)
    linear = below[below["restart_model"] == "linear"].reset_index(drop=True)
    assert (linear["hours"] <= constant["hours"] * (1 + 1e-6)).all()  # optimiser slack, as below
    at = small[small["gpus"] == 600_000]
    pd.testing.assert_series_equal(
        at.loc[at["restart_model"] == "linear", "hours"].reset_index(drop=True),
        at.loc[at["restart_model"] == "constant", "hours"].reset_index(drop=True),
        check_exact=False,
        rtol=1e-12,
    )


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(
    gpus=st.sampled_from([12_000, 65_536, 250_000, 900_000]),
    mtbf=st.floats(5_000, 200_000),
    gpus_per_group=st.sampled_from([64, 512, 2048]),
)
def test_a_more_reliable_gpu_never_makes_the_best_plan_slower(gpus, mtbf, gpus_per_group):
    # Every plan's hours fall as failures get rarer, so the best plan's must too.
    frame = sweep(
        gpus=[gpus],
        gpu_mtbf_hours=[mtbf, 2 * mtbf],
        gpus_per_group=[gpus_per_group],
        restart_model="constant",
        progress=False,
    )
    for strategy in STRATEGIES:
        worse, better = frame.loc[frame["strategy"] == strategy, "hours"]
        # 1e-6: slack for the optimiser's bounded search over the interval.
        assert better <= worse * (1 + 1e-6), strategy


def test_cli_sweep_json_and_tables(tmp_path, capsys):
    import json

    from spare_theory.cli import main

    argv = [
        "sweep",
        "--gpus",
        "16384",
        "131072",
        "--gpus-per-group",
        "2048",
        "--gpu-mtbf-hours",
        "50000",
        "--restart-model",
        "linear",
        "--strategy",
        *STRATEGIES,
        "--no-progress",
        "--json",
        "--outdir",
        str(tmp_path),
    ]
    assert main(argv) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["gpus"], r["strategy"]) for r in records] == [
        (g, s) for g in (16_384, 131_072) for s in STRATEGIES
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "sweep.csv",
        "sweep.md",
        "sweep_by_point.csv",
        "sweep_by_point.md",
    ]
    assert main(["sweep", "--gpus", "100", "--gpus-per-group", "2048", "--no-progress"]) == 2
    assert "gpus_per_group" in capsys.readouterr().err


def test_microbatch_splits_add_rows_that_never_lose_to_published_spare():
    # min_load with m pieces never exceeds min_stacks, and refining m = 4 -> 16
    # never raises it, so the best plans' hours must be ordered the same way.
    frame = sweep(
        gpus=[131_072, 600_000],
        gpu_mtbf_hours=[50_000.0],
        gpus_per_group=[2048],
        restart_model="constant",
        microbatches=[4, 16],
        progress=False,
    )
    assert list(frame["strategy"][:5]) == ["ckpt", "rep", "spare", "spare_m4", "spare_m16"]
    assert list(frame["microbatches"][:5]) == [1, 1, 1, 4, 16]
    wide = by_point(frame)
    assert (wide["hours_spare_m4"] <= wide["hours_spare"] * (1 + 1e-12)).all()
    assert (wide["hours_spare_m16"] <= wide["hours_spare_m4"] * (1 + 1e-12)).all()
    assert (wide["hours_spare_m16"] < wide["hours_spare"]).any()
    expected = 1 - wide["hours_spare_m16"] / wide["hours_rep"]
    assert np.allclose(wide["reduction_vs_best_rep_spare_m16"], expected)


@pytest.mark.parametrize("bad", [[1], [0], [2.5]])
def test_microbatch_splits_are_checked(bad):
    with pytest.raises(ValueError, match="microbatches"):
        sweep(
            gpus=[131_072],
            gpu_mtbf_hours=[50_000.0],
            gpus_per_group=[2048],
            microbatches=bad,
            progress=False,
        )
