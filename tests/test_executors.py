"""Results do not depend on where the cells run: serial, process pool, Dask.

One local Dask cluster (two worker processes) and one process pool serve every
test of this module; each test compares the executors' results with the serial
run for the same seed, exactly (not within a tolerance: the cells carry their
own seeds, so any difference is a bug).
"""

import concurrent.futures as cf
import subprocess
import sys

import distributed
import numpy as np
import pandas as pd
import pytest

from spare_theory import _parallel
from spare_theory._validation import as_seed_sequence, child_seed


@pytest.fixture(scope="module")
def executors():
    import cloudpickle

    # Dask workers are fresh processes that cannot import this test module:
    # ship its helper functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        cf.ProcessPoolExecutor(max_workers=2) as pool,
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield {"process pool": pool, "dask": client.get_executor()}
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _draw(seed):
    """A seeded cell: five uniforms from its own stream."""
    return np.random.default_rng(seed).random(5)


@pytest.mark.slow
def test_map_tasks_seeded_cells_identical(executors):
    root = as_seed_sequence(2024)
    tasks = [child_seed(root, i) for i in range(24)]
    serial = np.array(_parallel.map_tasks(_draw, tasks, progress=False))
    # The cells' streams really differ, so equality below is not vacuous.
    assert len({tuple(row) for row in serial}) == len(tasks)
    for name, executor in executors.items():
        spread = np.array(_parallel.map_tasks(_draw, tasks, executor=executor, progress=False))
        np.testing.assert_array_equal(spread, serial, err_msg=name)


def test_map_tasks_keeps_task_order_when_cells_finish_out_of_order(executors):
    # Cells of very unequal cost finish in another order than submitted.
    sizes = [200_000, 10, 100_000, 1, 50_000, 5]
    serial = _parallel.map_tasks(_sum_of_range, sizes, progress=False)
    for name, executor in executors.items():
        assert (
            _parallel.map_tasks(_sum_of_range, sizes, executor=executor, progress=False) == serial
        ), name


def _sum_of_range(n):
    return int(np.arange(n).sum())


@pytest.mark.slow
def test_sweep_identical_on_every_executor(executors):
    from spare_theory import sweep

    kwargs = dict(
        gpus=[16_384, 131_072],  # N = 8 and 64: small cycle models, fast
        gpu_mtbf_hours=[25_000.0, 50_700.0],
        gpus_per_group=[2048],
        restart_model=["constant", "linear"],
        progress=False,
    )
    serial = sweep(**kwargs)
    assert len(serial) == 2 * 2 * 2 * 3
    for name, executor in executors.items():
        pd.testing.assert_frame_equal(
            sweep(**kwargs, executor=executor), serial, check_exact=True, obj=name
        )


def test_importing_the_package_never_imports_dask():
    code = (
        "import sys, spare_theory, spare_theory.sweeps, spare_theory.cli\n"
        "spare_theory.cli.build_parser()\n"
        "dask = [m for m in sys.modules if m == 'dask' or m.startswith(('dask.', 'distributed'))]\n"
        "assert not dask, sorted(dask)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "table, kwargs",
    [
        ("mu_error_table", dict(N=[64, 256], r=[2, 3], trials=300)),
        ("overhead_error_table", dict(N=[64, 128], r=[3, 4], trials=20)),
    ],
)
def test_random_error_tables_identical_on_every_executor(executors, table, kwargs):
    import importlib

    module = importlib.import_module("spare_theory.reports." + table.split("_")[0])
    build = getattr(module, table)
    serial = build(**kwargs, seed=11, progress=False)
    # A different seed changes the simulated columns, so the tables are really random.
    assert not serial.equals(build(**kwargs, seed=12, progress=False))
    for name, executor in executors.items():
        pd.testing.assert_frame_equal(
            build(**kwargs, seed=11, executor=executor, progress=False), serial, obj=name
        )
