"""Cost of the elastic strategies against the published ones, in one process.

Cold (caches emptied before each call, :func:`spare_theory.clear_caches`):

- ``time_to_train`` at a fixed interval and at the best interval, elastic DP
  (quorum ``ceil(N/2)``) against SPARe at its rule ``r*`` and Rep ``r = 2``,
  at 600,000 GPUs in groups of 4096, 2048, 256 and 8 (``N`` = 146 to 75,000),
  without and with 1 h repairs;
- ``optimal_plan``: elastic (searching the quorum) and hot spares (walking
  ``r``) against SPARe, at ``N`` = 146 and 292;
- the event simulation: ms per run of elastic DP against Rep ``r = 2`` on the
  tests' 64-group scenario.

Prints ms and the ratio to the baseline of the same row.

Run: ``python bench/bench_elastic.py``.
"""

import dataclasses
import time

from spare_theory import Scenario, clear_caches, optimal_plan, simulate_training, time_to_train
from spare_theory.planning.redundancy import r_star_rule
from spare_theory.strategies.registry import strategy


def _ms(func, *args, **kwargs) -> float:
    clear_caches()
    start = time.perf_counter()
    func(*args, **kwargs)
    return 1000 * (time.perf_counter() - start)


def _spare_r(N: int) -> int:
    spare = strategy("spare")
    return max(r for r in range(1, int(r_star_rule(N)) + 1) if spare.accepts(N, r))


def main() -> None:
    print("time_to_train, cold: elastic vs SPARe r* and Rep r=2 (ms, ratio to SPARe)")
    for m in (4096, 2048, 256, 8):
        for repair in (None, 60.0):
            sc = dataclasses.replace(Scenario.published_600k(m), repair_minutes=repair)
            N = sc.groups
            for tau in (60.0, None):
                el = _ms(time_to_train, sc, "elastic", checkpoint_interval_minutes=tau)
                rep = _ms(time_to_train, sc, "rep", 2, tau)
                spare = (
                    _ms(time_to_train, sc, "spare", _spare_r(N), tau) if N <= 3000 else float("nan")
                )
                print(
                    f"  N={N:6d} repairs={repair} tau={tau}: elastic {el:8.1f}  "
                    f"rep {rep:8.1f}  spare {spare:8.1f}  elastic/spare {el / spare:5.2f}"
                )
    print("optimal_plan, cold (ms, ratio to SPARe)")
    for m in (4096, 2048):
        sc = Scenario.published_600k(m)
        spare = _ms(optimal_plan, sc, "spare")
        for name in ("elastic", "hot_spares"):
            t = _ms(optimal_plan, sc, name)
            print(f"  N={sc.groups}: {name} {t:8.1f} spare {spare:8.1f} ratio {t / spare:5.2f}")
    sc = Scenario(
        gpus=64 * 8,
        gpus_per_group=8,
        gpu_mtbf_hours=128.0,
        restart_minutes=20,
        checkpoint_minutes=2,
        work_hours=100,
        reconfigure_minutes=1,
    )
    trials = 50
    el = _ms(simulate_training, sc, "elastic", None, 60.0, trials, seed=0) / trials
    rep = _ms(simulate_training, sc, "rep", 2, 60.0, trials, seed=0) / trials
    print(
        f"simulation, ms per 100 h run at N=64: elastic {el:.1f} rep {rep:.1f} ratio {el / rep:.2f}"
    )


if __name__ == "__main__":
    main()
