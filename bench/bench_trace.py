"""Replaying the shipped failure log at 600k GPUs, against one law-driven run of the same scenario.

The issue's target: a 600k-GPU replay of one 720 h run in under 10 s,
reported as a ratio to one law-driven simulated run
(:func:`spare_theory.simulate_training`) of the same scenario, both in this
process.  The scenario is the trace's (``FailureLog.scenario``: Weibull node
clocks, lemons, bursts, the log's repairs through a pool sized for a 0.1 %
Poisson shortage, 30 min swaps) at 600,000 GPUs in groups of 2048 (292
groups of 256 nodes, 75,000 nodes), each strategy at the full model's plan.

Run: ``PYTHONPATH=. python bench/bench_trace.py`` (prints one line per plan).
"""

from __future__ import annotations

import time

import spare_theory as st
from spare_theory.traces.pools import log_spares

PLANS = (("rep", 2, 47.2), ("spare", 14, 432_000.0))


def main() -> None:
    log = st.infinitehbd_failure_log()
    spares = log_spares(log, gpus=600_000, probability=0.001)
    sc = log.scenario(
        gpus=600_000,
        gpus_per_group=2048,
        restart_minutes=60,
        checkpoint_minutes=5,
        work_hours=720,
        spare_nodes=spares,
        swap_minutes=30,
    )
    for name, r, tau in PLANS:
        start = time.perf_counter()
        law = st.simulate_training(sc, name, r=r, checkpoint_interval_minutes=tau, trials=1, seed=0)
        law_s = time.perf_counter() - start
        start = time.perf_counter()
        replay = st.replay_training(
            log, sc, name, r=r, checkpoint_interval_minutes=tau, trials=1, seed=0
        )
        replay_s = time.perf_counter() - start
        print(
            f"{name} r={r}: replay {replay_s:.2f} s ({replay.hours[0]:.0f} h, "
            f"{int(replay.repairs[0])} repairs), law-driven run {law_s:.2f} s "
            f"({law.hours[0]:.0f} h): ratio replay / law = {replay_s / law_s:.2f}"
        )


if __name__ == "__main__":
    main()
