"""One trajectory kernel for every m against the two kernels it replaced, in one process.

Until the layer clean-up, ``spare_theory/stacking/_trajectory.py`` held a
compiled whole-shard repair (``m = 1``) and ``_piece_trajectory.py`` the
micro-batch piece repair; now ``_trajectory.trajectory_from_arrays`` is the
piece repair for every ``m`` (``m = 1``: one piece per shard).  The merge
may cost at most 10 % at ``m = 1``.

Baseline: the two former kernels, read from git at ``--baseline`` (the
commit before the merge) into a temporary directory and imported here, so
both sides run in this process on the same placements and orders, with the
same numba.  Candidate: the kernel of this tree.  Trajectories must be
identical.  Sizes ``N = 2,000, 20,000, 75,000`` at ``r`` near ``log2 N``
(and the table's ``r = 17``) for ``m = 1``; two ``m = 8`` cases against the
former piece kernel (given its column table ``host_slots`` once, as
``simulate_overhead`` did).  Each case alternates baseline and candidate
over several repeats and keeps each one's best total, in CPU time of this
process (the machine is shared: CPU time and the best of interleaved repeats
are the least disturbed by other work).  The numba kernels
are loaded or compiled by a warm-up call first, not timed.  Prints seconds
per trajectory and the ratio candidate / baseline (``m = 1``: <= 1.10).

    python bench/bench_kernels.py [--repeats K] [--baseline REV]
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from spare_theory.placement.placements import cyclic_placement, group_stacks
from spare_theory.stacking._trajectory import COMPILED, trajectory_from_arrays

# The commit that added this bench, before the merge: both former kernels, unchanged.
BASELINE = "6c62f21995f6"
# (N, r, m, orders): r near log2 N; orders so that each total takes a fraction of a second.
CASES = [
    (2_000, 11, 1, 40),
    (20_000, 14, 1, 8),
    (75_000, 16, 1, 3),
    (75_000, 17, 1, 3),
    (4_096, 12, 8, 10),
    (20_000, 14, 8, 3),
]
LIMIT = 1.10
ROOT = Path(__file__).resolve().parent.parent


def former_kernel(rev: str, name: str, where: Path) -> ModuleType:
    """``spare_theory/stacking/<name>.py`` at ``rev``, imported as a top-level module."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:spare_theory/stacking/{name}.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    source = source.replace("from .._", "from spare_theory._")  # its layer-0 imports
    path = where / f"former{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repeats per case")
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the former kernels")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        whole = former_kernel(args.baseline, "_trajectory", Path(tmp))
        piece = former_kernel(args.baseline, "_piece_trajectory", Path(tmp))
        small = cyclic_placement(13, 4)
        start = time.perf_counter()
        for m in (1, 8):
            trajectory_from_arrays(small, group_stacks(small), np.arange(13), m)
        whole.trajectory_from_arrays(small, group_stacks(small), np.arange(13))
        piece.load_trajectory_from_arrays(small, group_stacks(small), np.arange(13), 8)
        first = time.perf_counter() - start
        print(f"numba compiled={COMPILED}; baseline {args.baseline}; warm-up {first:.2f} s")
        worst = 0.0
        for N, r, m, runs in CASES:
            hosts = cyclic_placement(N, r)
            stacks = group_stacks(hosts)
            orders = [np.random.default_rng([N, i]).permutation(N) for i in range(runs)]
            if m == 1:
                baseline = functools.partial(whole.trajectory_from_arrays, hosts, stacks)
            else:
                slot = piece.host_slots(hosts, stacks)
                baseline = functools.partial(
                    piece.load_trajectory_from_arrays, hosts, stacks, microbatches=m, slot=slot
                )
            candidate = functools.partial(trajectory_from_arrays, hosts, stacks, microbatches=m)
            best = {"baseline": np.inf, "candidate": np.inf}
            results = {}
            for _ in range(args.repeats):
                for name, run in (("baseline", baseline), ("candidate", candidate)):
                    start = time.process_time()
                    results[name] = [run(o) for o in orders]
                    best[name] = min(best[name], (time.process_time() - start) / runs)
            for a, b in zip(results["baseline"], results["candidate"]):
                assert a.dtype == b.dtype and np.array_equal(a, b), f"N={N} r={r} m={m} differ"
            ratio = best["candidate"] / best["baseline"]
            if m == 1:
                worst = max(worst, ratio)
            mean_T = np.mean([t.size for t in results["baseline"]])
            print(
                f"N={N:>6} r={r:>2} m={m} (mean T {mean_T:6.0f}): former "
                f"{best['baseline']:8.5f} s, one kernel {best['candidate']:8.5f} s per "
                f"trajectory, ratio {ratio:5.3f}"
            )
    print(f"m = 1: worst ratio {worst:.3f} ({'within' if worst <= LIMIT else 'OVER'} {LIMIT:.2f})")


if __name__ == "__main__":
    main()
