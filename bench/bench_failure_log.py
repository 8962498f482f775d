"""Loading and fitting a failure log of one million faults, against reading the CSV alone.

Writes a synthetic log (seeded) of ``--faults`` faults on 20,000 nodes to a
CSV file first: Weibull uptimes (shape 0.7), lognormal repairs, some faults
still open at the end.  Then, in this process, times

- the baseline, ``pandas.read_csv`` of the file;
- ``load_failure_log`` (read, merge overlapping faults, uptimes) plus
  ``fit_lifetime("weibull")`` (censored MLE, intervals, KM distance), the
  figure the target of 5 s is about;
- ``fit_repair("lognormal")`` on its own.

and prints each as seconds and as a ratio to the baseline (best of
``--repeat`` runs; the machine is shared, so ratios are what compare).
Usage: ``python bench/bench_failure_log.py [--faults 1000000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from spare_theory.traces.failure_log import load_failure_log

NODES = 20_000


def write_log(path: Path, faults: int, seed: int = 20240330) -> float:
    """A synthetic log of exactly ``faults`` faults; returns the window's end, hours.

    Every node's simulated history runs past the window's end, so that no
    node looks up after its last simulated fault.
    """
    rng = np.random.default_rng(seed)
    per_node = int(2.5 * faults / NODES) + 20
    uptimes = stats.weibull_min(0.7, scale=100.0).rvs((NODES, per_node), random_state=rng)
    repairs = stats.lognorm(1.5, scale=2.0).rvs((NODES, per_node), random_state=rng)
    ends = np.cumsum(uptimes + repairs, axis=1)
    starts = ends - repairs
    window = float(np.partition(starts.ravel(), faults)[faults])  # `faults` starts before it
    if window >= ends[:, -1].min():
        raise ValueError("some node's simulated history ends inside the window")
    inside = starts < window
    frame = pd.DataFrame(
        {
            "node": np.repeat(np.arange(NODES), per_node)[inside.ravel()],
            "start": starts[inside],
            "end": np.where(ends[inside] <= window, ends[inside], np.nan),
        }
    )
    frame.sample(frac=1.0, random_state=1).to_csv(path, index=False)  # rows in any order
    return window


def best_of(repeat: int, work) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "faults.csv"
        window = write_log(path, args.faults)
        options = dict(nodes=NODES, observed_from=0.0, observed_until=window)

        def load_and_fit():
            log = load_failure_log(path, **options)
            return log, log.fit_lifetime("weibull")

        baseline, frame = best_of(args.repeat, lambda: pd.read_csv(path))
        measured, (log, fit) = best_of(args.repeat, load_and_fit)
        repair, repair_fit = best_of(args.repeat, lambda: log.fit_repair("lognormal"))
    print(f"{len(frame):,} faults on {NODES:,} nodes, {log.failures:,} failures, {window:.0f} h")
    print(f"  pandas.read_csv (baseline)          {baseline:6.2f} s")
    print(
        f"  load_failure_log + fit_lifetime     {measured:6.2f} s  = {measured / baseline:5.1f} x "
        f"baseline  (shape {fit.parameters['shape']:.4f}, truth 0.7)"
    )
    print(
        f"  fit_repair('lognormal')             {repair:6.2f} s  = {repair / baseline:5.1f} x "
        f"baseline  (sigma {repair_fit.parameters['sigma']:.4f}, truth 1.5)"
    )


if __name__ == "__main__":
    main()
