"""Runs that must survive faults: a Dask worker killed in the middle of a sweep or table.

A sweep or report on a Dask cluster hands its cells to
``client.get_executor()``; when a worker process dies, the scheduler
reschedules the cells it held on the surviving (or restarted) workers.
Every cell carries its own seed, so the result must equal the serial run
exactly, not within a tolerance.
"""

import os
import signal
import threading
import time

import distributed
import pandas as pd
import pytest

from spare_theory import sweep
from spare_theory.reports.overhead import overhead_error_table

# Eight cells of equal N (about 0.3 s each): long enough to kill a worker mid-run.
_GRID = dict(
    gpus=[64 * n for n in range(200, 1000, 100)],
    gpu_mtbf_hours=[50_677.0],
    gpus_per_group=[64],
    restart_model="constant",
)


def _run_and_kill_a_worker(client, func):
    """Run ``func(executor)`` in a thread; SIGKILL a worker process while it holds a cell."""
    result, killed = {}, []

    def target():
        result["value"] = func(client.get_executor())

    thread = threading.Thread(target=target)
    thread.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not killed:
        busy = [w for w, tasks in client.processing().items() if tasks]
        if busy:
            pids = client.run(os.getpid, workers=[busy[0]])
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])
        else:
            time.sleep(0.02)
    thread.join(timeout=120)
    assert killed, "no worker was ever busy: the fault was not injected"
    assert not thread.is_alive() and "value" in result
    return result["value"], killed[0]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow
def test_sweep_survives_a_killed_worker_with_identical_results(client):
    serial = sweep(**_GRID, progress=False)
    spread, killed = _run_and_kill_a_worker(
        client, lambda ex: sweep(**_GRID, executor=ex, progress=False)
    )
    pd.testing.assert_frame_equal(spread, serial, check_exact=True)
    # The worker really died: its address left the cluster (the nanny starts a new one).
    assert killed not in client.scheduler_info()["workers"]


@pytest.mark.slow
def test_seeded_table_survives_a_killed_worker_with_identical_results(client):
    kwargs = dict(N=(256, 512), r=(3, 4, 6), trials=20, max_sim_N=512, seed=5, progress=False)
    serial = overhead_error_table(**kwargs)
    spread, _ = _run_and_kill_a_worker(
        client, lambda ex: overhead_error_table(**kwargs, executor=ex)
    )
    pd.testing.assert_frame_equal(spread, serial, check_exact=True)
