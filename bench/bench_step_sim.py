"""Cost of one step-level trial (10,000 steps) at the paper's sizes.

Baseline, in the same process: drawing the stack jitter alone for the same
number of steps (``N x S`` normals per step with ``S`` the trial's mean
stacks per step, here 1 for Rep's single compute), which any step-level
simulation has to do.  Prints seconds per trial, the ratio to the baseline,
and the share of the SPARe trial spent in the reordering
(:class:`spare_theory.stacking.reordering.StackReorderer`, one call per
failure whose survivors' top ``S`` stacks no longer cover every type).

Then the cost of the bill's breakdown (issue 27: each run accumulates its
wall time by cause): the rules of ``--baseline`` (default the commit before
it; ``spare_theory/steps/runs.py`` and the three rule modules read from git
and imported here beside this tree's) against this tree's, interleaved on the
same trials in this process, best CPU time of ``--repeats``; the totals must
be identical.  Prints the ratio this tree / baseline per rule.

Run: ``python bench/bench_step_sim.py [--skip-profile] [--baseline REV] [--repeats K]``
(about a minute of CPU for each part).
"""

import argparse
import cProfile
import importlib.util
import pstats
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np

from spare_theory.steps.elastic_run import run_elastic
from spare_theory.steps.rep_run import run_rep
from spare_theory.steps.scenario import paper_scenario
from spare_theory.steps.spare_run import run_spare
from spare_theory.training.simulate import simulate_training

ROOT = Path(__file__).resolve().parent.parent
# The commit before the breakdown was added (issue 27's step-level bill).
BASELINE = "addec3496e8e"
# (label, rule, scenario, r, k, keywords, trials): a few hundred failures each.
BILL_CASES = [
    ("rep r=3", run_rep, paper_scenario(200, steps=3000), 3, 6, {}, 3),
    ("ckpt", run_rep, paper_scenario(50, steps=3000, restart_seconds=600.0), 1, 4, {}, 3),
    ("spare r=9", run_spare, paper_scenario(200, steps=3000), 9, 15, {}, 3),
    (
        "spare r=4 m=4",
        run_spare,
        replace(paper_scenario(13, steps=1000), microbatches=4),
        4,
        10,
        {},
        2,
    ),
    ("hot spares r=88", run_elastic, paper_scenario(200, steps=5000), 88, 19, {"quorum": 112}, 3),
]
CELLS = [  # (N, strategy, r, k): the published intervals
    (200, "rep", 3, 6),
    (200, "spare", 9, 15),
    (1000, "rep", 5, 9),
    (1000, "spare", 9, 30),
]


def baseline(N: int, steps: int, stacks: int) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        np.maximum(0.1, 1.0 + 0.05 * rng.standard_normal((N, stacks))).sum(axis=1).max()
    return time.perf_counter() - start


def baseline_rules(rev: str) -> dict[str, ModuleType]:
    """The step rules at ``rev``, imported as ``spare_theory.steps.base_*`` beside these."""
    modules = {}
    for name in ("runs", "rep_run", "spare_run", "elastic_run"):
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:spare_theory/steps/{name}.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.replace("from .runs import", "from .base_runs import")
        full = f"spare_theory.steps.base_{name}"
        spec = importlib.util.spec_from_loader(full, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        module.__package__ = "spare_theory.steps"
        sys.modules[full] = module
        exec(compile(source, f"{rev}:{name}.py", "exec"), module.__dict__)
        modules[name] = module
    return modules


def bill_overhead(rev: str, repeats: int) -> None:
    """This tree's rules (with the breakdown) against ``rev``'s, CPU time, same trials."""
    base = baseline_rules(rev)
    print(f"breakdown cost: this tree / {rev}, best CPU time of {repeats} interleaved repeats")
    for label, rule, sc, r, k, kw, trials in BILL_CASES:
        old = getattr(base[rule.__module__.rsplit(".", 1)[1]], rule.__name__)
        best = {"old": np.inf, "new": np.inf}
        for _ in range(repeats):
            for side, fn in (("old", old), ("new", rule)):
                start = time.process_time()
                out = [fn(sc, r, k, np.random.default_rng(i), **kw) for i in range(trials)]
                best[side] = min(best[side], time.process_time() - start)
                if side == "old":
                    totals = [o[:6] for o in out]
                else:
                    assert [o[:6] for o in out] == totals, label  # the totals do not move
        print(
            f"  {label:16s} baseline {best['old'] / trials:6.2f} s/trial, "
            f"this tree {best['new'] / trials:6.2f} s/trial: ratio {best['new'] / best['old']:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the former rules")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved repeats per case")
    parser.add_argument("--skip-profile", action="store_true", help="only the breakdown's cost")
    args = parser.parse_args()
    if not args.skip_profile:
        profile_cells()
    bill_overhead(args.baseline, args.repeats)


def profile_cells() -> None:
    for N, strategy, r, k in CELLS:
        sc = paper_scenario(N)
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        sim = simulate_training(sc, strategy, r=r, checkpoint_every_steps=k, trials=1, seed=1)
        profile.disable()
        seconds = time.perf_counter() - start
        stats = pstats.Stats(profile)
        reorder = sum(
            v[3]
            for key, v in stats.stats.items()
            # The simulator calls a StackReorderer (reorder's per-placement form).
            if key[0].endswith("reordering.py") and key[2] == "__call__"  # type: ignore[attr-defined]
        )
        base = baseline(N, 10_000, 2 if strategy == "spare" else 1)
        print(
            f"N={N:5d} {strategy:5s} r={r:2d} k={k:2d}: {seconds:6.2f} s/trial "
            f"({seconds / base:5.1f}x the jitter draws alone; "
            f"reorder {100 * reorder / seconds:4.1f}%); "
            f"total/T0 {sim.total_over_T0[0]:.3f}, {int(sim.failures[0])} failures, "
            f"{int(sim.global_restarts[0])} restarts"
        )


if __name__ == "__main__":
    main()
