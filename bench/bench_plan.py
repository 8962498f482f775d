"""``spare-theory plan examples/job.toml`` against plain plans of the same scenario.

Baseline: ``optimal_plan`` of every registered strategy on the example job's
scenario (what ``spare-theory optimize`` computes), caches cleared.  Measured,
in the same process with the caches cleared again: the ``plan`` command
(``--json``: the job file read, every strategy planned and priced, the bills by
``r``), with ``--objective hours`` and ``--objective energy``.  Each is run
once before timing so that imports are not counted; prints the ratios (the
issue's target: the command within 10 s on 2 cores).

Run: ``python bench/bench_plan.py``.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path

import spare_theory as st
from spare_theory.cli import main
from spare_theory.jobs.files import load_job_file

JOB = Path(__file__).resolve().parents[1] / "examples" / "job.toml"


def plain_plans() -> None:
    spec = load_job_file(JOB)
    scenario = spec.job.scenario(**spec.scenario)
    for name in st.registered_strategies():
        st.optimal_plan(scenario, name)


def command(objective: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["plan", str(JOB), "--json", "--objective", objective])
    assert code == 0, code


def timed(task, *args) -> float:
    st.clear_caches()
    start = time.perf_counter()
    task(*args)
    return time.perf_counter() - start


if __name__ == "__main__":
    plain_plans()
    command("hours")  # imports and first calls, not timed
    base = timed(plain_plans)
    hours = timed(command, "hours")
    energy = timed(command, "energy")
    print(f"plain optimal_plan of every strategy: {base:.2f} s (baseline)")
    print(f"spare-theory plan --objective hours:  {hours / base:.2f}x the baseline ({hours:.2f} s)")
    print(
        f"spare-theory plan --objective energy: {energy / base:.2f}x the baseline ({energy:.2f} s)"
    )
