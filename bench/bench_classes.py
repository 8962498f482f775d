"""A CKPT-only model plan with failure classes that misdiagnose, against one without.

Baseline: ``optimal_plan(scenario, "ckpt", method="model")`` with one crash
class (every failure noticed at once).  Measured, in the same process with the
caches cleared: the same scenario with a crash, a hang, a straggler and a
corruption class, each with ``misdiagnosis = 0.45`` (about 35 outcomes a class
by the number of calls, so about 110 restart lengths mixed; the cycle law
merges the outcomes it cannot tell apart and keeps each segment's straggler
speed for its losses).  Prints the ratio.

Run: ``python bench/bench_classes.py``.
"""

from __future__ import annotations

import dataclasses
import time

import spare_theory as st
from spare_theory import FailureClass, Scenario

WRONG = 0.45
CLASSES = (
    FailureClass("crash", 0.5, detect_minutes=5.0, misdiagnosis=WRONG),
    FailureClass("hang", 0.2, "hang", 40.0, misdiagnosis=WRONG),
    FailureClass("slow", 0.2, "straggler", 60.0, slowdown=2.0, misdiagnosis=WRONG),
    FailureClass("sdc", 0.1, "corruption", 50.0, rollback_checkpoints=2, misdiagnosis=WRONG),
)
SCENARIO = Scenario(
    gpus=8 * 20,
    gpus_per_group=8,
    gpu_mtbf_hours=8 * 15.0,
    restart_minutes=20,
    checkpoint_minutes=2,
    work_hours=40,
    failure_classes=CLASSES,
)


def timed(scenario: Scenario) -> float:
    st.clear_caches()
    start = time.perf_counter()
    st.optimal_plan(scenario, "ckpt", method="model")
    return time.perf_counter() - start


if __name__ == "__main__":
    plain = dataclasses.replace(SCENARIO, failure_classes=(FailureClass("crash", 1.0),))
    timed(plain)  # imports and first calls, not timed
    base = timed(plain)
    classes = timed(SCENARIO)
    print(f"CKPT-only model plan, crashes only: {base:.3f} s (baseline)")
    print(f"with four classes at misdiagnosis {WRONG}: {classes / base:.0f}x ({classes:.2f} s)")
