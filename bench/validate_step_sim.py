"""Compare the step-level simulation (simulate_training) with the published per-cell means.

The reference is the package data ``spare_theory/data/published_des_trails.csv``
(means over the 3 published runs of the SPARe authors' simulator, public
repository tsinghua-fib-lab/AutoSOTA, ``ICML-2026/paper-3612-SPARe/best_code``).
For every selected cell and quantity it prints ours (mean and standard error
over ``--trials`` trials), theirs (mean of 3 runs and the SE of that mean,
``sd / sqrt(3)``; the sd is published for the total only and taken
proportional to it for the other quantities; counts get a Poisson floor
``sqrt(mean / runs)``), the relative error and
``z = (ours - theirs) / sqrt(SE_ours^2 + SE_theirs^2)``.  A cell passes when
every quantity is within 3 % of the published mean or within 3 combined
standard errors.

    python bench/validate_step_sim.py --N 200 --r 3 9 --trials 10 --out /tmp/cells.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from importlib import resources

import numpy as np

from spare_theory.steps.scenario import paper_scenario
from spare_theory.training.simulate import simulate_training

QUANTITIES = (
    ("total_seconds", "total_seconds_mean"),
    ("up_seconds", "up_seconds_mean"),
    ("failures", "failures_mean"),
    ("global_restarts", "global_restarts_mean"),
)
REL_TOL = 0.03
Z_TOL = 3.0


def published_cells() -> list[dict]:
    """Rows of the packaged reference table (comment lines skipped)."""
    text = resources.files("spare_theory").joinpath("data/published_des_trails.csv").read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def compare_cell(row: dict, trials: int, seed: int) -> list[dict]:
    N, r, k = int(row["N"]), int(row["r"]), int(row["checkpoint_every_steps"])
    scenario = paper_scenario(
        N,
        failure_law=row["failure_law"],
        restart_seconds=float(row["restart_seconds"]),
        allreduce_seconds=float(row["allreduce_seconds"]),
        steps=int(row["steps"]),
    )
    start = time.perf_counter()
    sim = simulate_training(
        scenario, row["strategy"], r=r, checkpoint_every_steps=k, trials=trials, seed=seed
    )
    seconds = (time.perf_counter() - start) / trials
    runs = int(row["runs"])
    out = []
    for ours_name, theirs_name in QUANTITIES:
        ours = sim.mean(ours_name)
        se = sim.standard_error(ours_name) if trials > 1 else math.nan
        theirs = float(row[theirs_name])
        # Their sd is published for the total only; for the other quantities
        # take it proportional (quantity / total) to the published total sd.
        total_se = float(row["total_seconds_sd"]) / math.sqrt(runs)
        se_theirs = theirs / float(row["total_seconds_mean"]) * total_se
        if ours_name in ("failures", "global_restarts"):
            # Counts vary at least like Poisson counts (floors a 0 sd from few trials).
            se = max(se if math.isfinite(se) else 0.0, math.sqrt(ours / trials))
            se_theirs = max(se_theirs, math.sqrt(theirs / runs))
        rel = ours / theirs - 1.0 if theirs else math.nan
        combined = math.hypot(se, se_theirs)
        z = (ours - theirs) / combined if combined > 0 else math.nan
        ok = abs(rel) <= REL_TOL or (math.isfinite(z) and abs(z) <= Z_TOL)
        out.append(
            {
                "strategy": row["strategy"],
                "N": N,
                "r": r,
                "k": k,
                "quantity": ours_name,
                "ours": ours,
                "ours_se": se,
                "theirs": theirs,
                "theirs_se": se_theirs,
                "rel_error": rel,
                "z": z,
                "ok": ok,
                "trials": trials,
                "seconds_per_trial": seconds,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--N", type=int, nargs="*", default=None)
    parser.add_argument("--r", type=int, nargs="*", default=None)
    parser.add_argument("--strategy", nargs="*", default=None)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", default=None, help="append result rows to this CSV")
    args = parser.parse_args(argv)
    rows = [
        row
        for row in published_cells()
        if (args.N is None or int(row["N"]) in args.N)
        and (args.r is None or int(row["r"]) in args.r)
        and (args.strategy is None or row["strategy"] in args.strategy)
    ]
    writer = None
    handle = open(args.out, "a", newline="") if args.out else None  # noqa: SIM115
    failures = 0
    try:
        for i, row in enumerate(rows):
            results = compare_cell(row, args.trials, args.seed + i)
            for res in results:
                if handle is not None:
                    if writer is None:
                        writer = csv.DictWriter(handle, fieldnames=list(res))
                        if handle.tell() == 0:
                            writer.writeheader()
                    writer.writerow(res)
                failures += not res["ok"]
                print(
                    f"{res['strategy']:5s} N={res['N']:4d} r={res['r']:2d} k={res['k']:2d} "
                    f"{res['quantity']:16s} ours {res['ours']:12.1f} +- {res['ours_se']:9.1f} "
                    f"theirs {res['theirs']:12.1f} err {100 * res['rel_error']:+6.2f}% "
                    f"z {res['z']:+6.2f} {'ok' if res['ok'] else 'FAIL'} "
                    f"({res['seconds_per_trial']:.1f} s/trial)",
                    flush=True,
                )
            if handle is not None:
                handle.flush()
    finally:
        if handle is not None:
            handle.close()
    print(f"{failures} of {len(rows) * len(QUANTITIES)} comparisons outside tolerance")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    np.seterr(all="raise")
    sys.exit(main())
