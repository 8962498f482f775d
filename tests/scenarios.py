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
