"""A job's derived restart and checkpoint costs (issue 27): the formulas, by hand."""

import dataclasses

import pytest

import spare_theory as st
from spare_theory.jobs.job import GPU_PRESETS, megascale_init_seconds

# 1e9 parameters x 10 bytes = 1e10 bytes of state; hand-picked bandwidths.
SMALL = dict(
    parameters=1e9,
    bytes_per_parameter=10,
    gpus=64,
    gpus_per_group=8,
    work_hours=50,
    storage_write_gbps=50,
    storage_read_gbps=100,
    host_copy_gbps=20,
    network_gbps=40,
    detect_seconds=30,
    schedule_seconds=15,
    init_seconds=5,
)


def test_persistent_synchronous_derivations():
    job = st.Job(**SMALL)
    # restore 1e10 / 100e9 = 0.1 s; restart (30 + 15 + 5 + 0.1) / 60; write 1e10 / 50e9 = 0.2 s.
    assert job.restore_seconds == pytest.approx(0.1, rel=1e-15)
    assert job.restart_minutes == pytest.approx(50.1 / 60, rel=1e-15)
    assert job.checkpoint_minutes == pytest.approx(0.2 / 60, rel=1e-15)


def test_memory_tier_and_async_derivations():
    memory = st.Job(**SMALL, checkpoint_tier="memory")
    # restore from a peer: 1e10 / (8 x 40e9) = 0.03125 s; copy: 1e10 / (8 x 20e9) = 0.0625 s.
    assert memory.restart_minutes == pytest.approx(50.03125 / 60, rel=1e-15)
    assert memory.checkpoint_minutes == pytest.approx(0.0625 / 60, rel=1e-15)
    background = st.Job(**SMALL, checkpoint_async=True)
    assert background.restart_minutes == pytest.approx(50.1 / 60, rel=1e-15)  # storage read
    assert background.checkpoint_minutes == pytest.approx(0.0625 / 60, rel=1e-15)


def test_init_seconds_as_a_function_of_the_gpu_count():
    job = st.Job(**{**SMALL, "init_seconds": lambda gpus: 2.0 * gpus})
    assert job.restart_minutes == pytest.approx((30 + 15 + 128 + 0.1) / 60, rel=1e-15)
    # The default passes through MegaScale's published bounds (NSDI 2024, section 3.5):
    # 5 s at 2,048 GPUs and 30 s at 12,288 (its largest job), linear in the count.
    assert megascale_init_seconds(2048) == pytest.approx(5.0, rel=1e-15)
    assert megascale_init_seconds(12_288) == pytest.approx(30.0, rel=1e-15)
    default = st.Job(**{k: v for k, v in SMALL.items() if k != "init_seconds"})
    assert default.init == pytest.approx(5.0 * 64 / 2048, rel=1e-15)


def test_a_jobs_scenario_is_the_hand_written_one_and_gives_its_numbers_exactly():
    job = st.Job(**SMALL, gpu="a100")
    hand = st.Scenario(
        gpus=64,
        gpus_per_group=8,
        gpu_mtbf_hours=8 * 1000 / 6.5 * 24,
        restart_minutes=50.1 / 60,
        checkpoint_minutes=0.2 / 60,
        work_hours=50,
    )
    sc = job.scenario()
    assert sc == hand
    assert st.time_to_train(sc, "ckpt", r=1, checkpoint_interval_minutes=20.0) == st.time_to_train(
        hand, "ckpt", r=1, checkpoint_interval_minutes=20.0
    )
    assert st.time_to_train(sc, "spare", r=3, checkpoint_interval_minutes=60.0) == st.time_to_train(
        hand, "spare", r=3, checkpoint_interval_minutes=60.0
    )
    notes = dict(sc.provenance)
    assert set(notes) == {"restart_minutes", "checkpoint_minutes", "gpu_mtbf_hours"}
    assert "Kokolis" in notes["gpu_mtbf_hours"]
    assert "read at 100 GB/s" in notes["restart_minutes"]


def test_overrides_replace_fields_and_drop_their_sentences():
    sc = st.Job(**SMALL).scenario(restart_minutes=10, repair_minutes=30)
    assert sc.restart_minutes == 10.0 and sc.repair_minutes == 30.0
    assert "restart_minutes" not in dict(sc.provenance)


@pytest.mark.slow
def test_a_failure_log_sets_the_failure_fields_and_keeps_its_sentences():
    log = st.infinitehbd_failure_log()
    job = st.Job(**{**SMALL, "gpus": 4096, "gpus_per_group": 256})
    sc = job.scenario(failure_log=log)
    from_log = log.scenario(
        gpus=4096,
        gpus_per_group=256,
        gpus_per_node=8,
        restart_minutes=job.restart_minutes,
        checkpoint_minutes=job.checkpoint_minutes,
        work_hours=50,
    )
    # Frozen scipy laws compare by identity: the repair law by its parameters.
    assert dataclasses.replace(sc, repair_law="exponential") == dataclasses.replace(
        from_log, repair_law="exponential"
    )
    assert sc.repair_law.args == from_log.repair_law.args
    assert sc.repair_law.kwds == from_log.repair_law.kwds
    notes = dict(sc.provenance)
    assert {"restart_minutes", "checkpoint_minutes", "weibull_shape"} <= set(notes)
    assert notes["weibull_shape"] == dict(from_log.provenance)["weibull_shape"]


def test_cost_model_takes_the_presets_watts():
    for name, preset in GPU_PRESETS.items():
        cost = st.Job(**SMALL, gpu=name).cost_model(gpu_hour_usd=1.0)
        assert (cost.busy_watts_per_gpu, cost.idle_watts_per_gpu) == (
            preset.busy_watts,
            preset.idle_watts,
        )
        assert cost.gpu_hour_usd == 1.0
    assert st.Job(**SMALL, busy_watts_per_gpu=500).cost_model().busy_watts_per_gpu == 500.0
    # The H100 preset reuses the project's Llama 3 MTBF.
    assert GPU_PRESETS["h100"].mtbf_hours == st.hourly.scenario.LLAMA3_H100_GPU_MTBF_HOURS


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("parameters", -1.0),
        ("parameters", float("nan")),
        ("work_hours", float("nan")),
        ("storage_read_gbps", 0.0),
        ("detect_seconds", -1.0),
        ("gpu", "tpu"),
        ("checkpoint_tier", "disk"),
        ("checkpoint_async", "yes"),
        ("init_seconds", -5.0),
        ("init_seconds", lambda gpus: -1.0),
        ("gpus_per_group", 128),
        ("gpu_mtbf_hours", 0.0),
    ],
)
def test_bad_input_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        st.Job(**{**SMALL, field: value})


def test_jobs_are_frozen():
    job = st.Job(**SMALL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.gpus = 8  # type: ignore[misc]
