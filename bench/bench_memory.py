"""Peak memory and throughput of simulate_wipeout at the largest published scale.

Runs ``simulate_wipeout`` at N = 1,000,000 groups, r = 20 under its default
memory cap (1 GiB) in a fresh child process, and reports the child's peak
resident memory (getrusage ru_maxrss) next to the cap, and trials per second.
A second run with a 256 MiB cap shows that the cap, not the trial count,
bounds memory.  Usage: ``python bench/bench_memory.py [--trials 64]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import spare_theory as st
N, r, trials, cap = (int(a) for a in sys.argv[1:5])
hosts = st.cyclic_placement(N, r)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
T = st.simulate_wipeout(hosts, trials, seed=1, memory_limit_bytes=cap)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
summary = {"seconds": seconds, "peak_kib": peak, "before_kib": base, "mean_T": float(T.mean())}
print(json.dumps(summary))
"""


def run(N: int, r: int, trials: int, cap: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(N), str(r), str(trials), str(cap)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--N", type=int, default=1_000_000)
    parser.add_argument("--r", type=int, default=20)
    parser.add_argument("--trials", type=int, default=64)
    args = parser.parse_args()
    for cap in (2**30, 2**28):
        res = run(args.N, args.r, args.trials, cap)
        extra = (res["peak_kib"] - res["before_kib"]) * 1024
        print(
            f"N={args.N:,} r={args.r} trials={args.trials} cap={cap / 2**20:.0f} MiB: "
            f"peak RSS {res['peak_kib'] / 1024:.0f} MiB "
            f"(placement+interpreter {res['before_kib'] / 1024:.0f} MiB, "
            f"simulation adds {extra / 2**20:.0f} MiB = {extra / cap:.2f} of the cap), "
            f"{args.trials / res['seconds']:.1f} trials/s, mean T = {res['mean_T']:,.0f}"
        )


if __name__ == "__main__":
    main()
