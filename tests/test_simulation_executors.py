"""The simulations of layers 2 and 3 draw the same samples serially, in a pool and on Dask.

As in ``tests/test_executors.py``: one process pool and one local Dask cluster
serve the module, and every spread run must equal the serial run exactly
(each block or trial carries its own seed, so any difference is a bug).  The
cases are sized to split into several tasks.
"""

import concurrent.futures as cf
import sys

import distributed
import numpy as np
import pytest

from spare_theory import (
    contiguous_placement,
    cyclic_placement,
    random_placement,
    simulate_domain_overhead,
    simulate_domain_wipeout,
    simulate_overhead,
    simulate_wipeout,
)
from spare_theory.placement.domains import domain_aware_placement
from spare_theory.stacking.domains_sim import lemon_rates
from spare_theory.wipeout.simulation import sampling_plan, split_tasks


@pytest.fixture(scope="module")
def executors():
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with (
        cf.ProcessPoolExecutor(max_workers=2) as pool,
        cf.ThreadPoolExecutor(max_workers=3) as threads,
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield {"process pool": pool, "threads": threads, "dask": client.get_executor()}
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _fields(samples):
    if isinstance(samples, np.ndarray):
        return {"T": samples}
    return {name: getattr(samples, name) for name in samples.quantities}


def _wipeout_dense(**kw):
    return simulate_wipeout(cyclic_placement(1000, 3), 500, **kw)


def _wipeout_sparse(**kw):
    return simulate_wipeout(cyclic_placement(100_000, 3), 300, **kw)


def _wipeout_any_placement(**kw):
    return simulate_wipeout(random_placement(300, 4, seed=1), 700, **kw)


def _overhead(**kw):
    return simulate_overhead(cyclic_placement(100, 3), 40, **kw)


def _overhead_loads(**kw):
    return simulate_overhead(random_placement(120, 5, seed=2), 20, microbatches=4, **kw)


def _domain_wipeout(**kw):
    hosts = domain_aware_placement(64, 4, 8)
    lemons = lemon_rates(64, 0.1, 5.0, seed=3)
    return simulate_domain_wipeout(
        hosts, 3000, domains=8, domain_failure_share=0.3, group_rates=lemons, **kw
    )


def _domain_overhead(**kw):
    return simulate_domain_overhead(
        contiguous_placement(32, 3), 20, domains=4, domain_failure_share=0.5, **kw
    )


SIMULATIONS = [
    _wipeout_dense,
    _wipeout_sparse,
    _wipeout_any_placement,
    _overhead,
    _overhead_loads,
    _domain_wipeout,
    _domain_overhead,
]


def test_cases_really_split_into_several_tasks():
    assert sampling_plan(1000, 3).method == "dense" and sampling_plan(10**5, 3).method == "sparse"
    assert len(split_tasks(-(-500 // sampling_plan(1000, 3).block_trials))) > 1
    assert len(split_tasks(-(-300 // sampling_plan(10**5, 3).block_trials))) > 1
    assert len(split_tasks(-(-3000 // (2**16 // 64)))) == 3  # domain wipe-out blocks
    assert len(split_tasks(20)) == 16 and len(split_tasks(40)) == 16


@pytest.mark.slow
@pytest.mark.parametrize("simulate", SIMULATIONS, ids=[f.__name__[1:] for f in SIMULATIONS])
def test_identical_on_every_executor(executors, simulate):
    serial = _fields(simulate(seed=11))
    # Another seed changes the samples, so the equalities below are not vacuous.
    other = _fields(simulate(seed=12))
    assert any(not np.array_equal(serial[k], other[k]) for k in serial)
    assert all(
        np.array_equal(v, w)
        for v, w in zip(serial.values(), _fields(simulate(seed=11, progress=True)).values())
    )
    for name, executor in executors.items():
        spread = _fields(simulate(seed=11, executor=executor))
        assert spread.keys() == serial.keys()
        for key in serial:
            assert spread[key].dtype == serial[key].dtype, (name, key)
            np.testing.assert_array_equal(spread[key], serial[key], err_msg=f"{name}: {key}")
