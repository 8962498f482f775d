"""Verified and simulation-searched plans against model-only plans (issue 28's speed targets).

Baseline: ``optimal_plan(scenario, name, method="model")`` for the five
registered strategies on the published scenario (600k H100 GPUs, 2,048 per
group, 60 min restarts, 5 min checkpoints, 720 h of work), caches cleared.
Measured in the same process, caches cleared again:

- ``verify=True`` for the same five plans (each plan and its neighbours
  simulated to ``rel_se = 0.005`` on common random numbers; the target: all
  five within 60 s on 2 cores), here and over two worker processes;
- a simulation-searched plan (``method="auto"`` where no closed form covers
  the scenario): elastic DP and hot spares on the README's ``cluster.toml``
  (131,072 GPUs in 128 groups, lognormal repairs of mean 123 min, 500 h), and
  elastic DP at 600k GPUs with the same repair law (the target: a
  simulation-searched plan within 5 minutes), serially and then with its
  trials spread over two worker processes (the same plan, by the seeds).

Prints each as seconds and as a ratio to the baseline.  Run:
``python bench/bench_verify.py`` (add ``--skip-600k-search`` to leave out the
longest case).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import sys
import time

from scipy import stats

import spare_theory as st

STRATEGIES = ("ckpt", "rep", "spare", "elastic", "hot_spares")
PUBLISHED = st.Scenario.published_600k()
REPAIRS = stats.lognorm(1.2, scale=60.0)  # the README's cluster.toml repair law, minutes
CLUSTER = st.Scenario(
    gpus=131_072,
    gpus_per_group=1024,
    gpu_mtbf_hours=40_000,
    restart_minutes=30,
    checkpoint_minutes=2,
    work_hours=500,
    repair_law=REPAIRS,
)
REPAIRED_600K = dataclasses.replace(PUBLISHED, repair_law=REPAIRS)


def timed(task) -> tuple[float, object]:
    st.clear_caches()
    start = time.perf_counter()
    result = task()
    return time.perf_counter() - start, result


def model_plans() -> list:
    return [st.optimal_plan(PUBLISHED, name, method="model") for name in STRATEGIES]


def verified_plans(executor: cf.Executor | None = None) -> list:
    return [
        st.optimal_plan(PUBLISHED, name, verify=True, seed=0, executor=executor)
        for name in STRATEGIES
    ]


def measured(plan) -> str:
    if plan.verified_hours is None:
        return plan.caveats[0]
    return (
        f"simulated {plan.verified_hours:8.1f} +- {plan.verified_standard_error:.1f} h"
        f" ({plan.model_error:+.2%}), {plan.verified_trials} runs,"
        f" moved: {plan.moved_by_verification}"
    )


def searched(plan) -> str:
    return (
        f"{plan.hours:.1f} h +- {plan.estimate.standard_error_hours:.1f} h"
        f" (r = {plan.r}, {plan.checkpoint_interval_minutes:.0f} min,"
        f" quorum {plan.min_groups})"
    )


if __name__ == "__main__":
    model_plans()  # imports and first calls, not timed
    base, _ = timed(model_plans)
    print(f"model-only plans, five strategies at 600k GPUs: {base:.2f} s (baseline)")
    verify, plans = timed(verified_plans)
    print(f"verify=True, the same five: {verify:.1f} s, {verify / base:.0f}x the baseline")
    for plan in plans:
        print(f"  {plan.strategy:<10} model {plan.hours:10.1f} h, {measured(plan)}")
    with cf.ProcessPoolExecutor(2) as pool:
        verified_plans(pool)  # start the workers, not timed
        spread, again = timed(functools.partial(verified_plans, pool))
    same = all(a.verified_hours == b.verified_hours for a, b in zip(plans, again, strict=True))
    print(
        f"verify=True over 2 worker processes: {spread:.1f} s, {spread / base:.0f}x the "
        f"baseline (the same figures: {same})"
    )
    cases = [("cluster.toml", CLUSTER, "elastic"), ("cluster.toml", CLUSTER, "hot_spares")]
    full = "--skip-600k-search" not in sys.argv
    if full:
        cases.append(("600k", REPAIRED_600K, "elastic"))
    for label, scenario, name in cases:
        seconds, plan = timed(functools.partial(st.optimal_plan, scenario, name, seed=0))
        print(
            f"simulation-searched {name} on {label} ({plan.method}): {seconds:.1f} s,"
            f" {seconds / base:.0f}x the baseline; {searched(plan)}"
        )
    if full:  # the last case again, its trials spread over two processes
        with cf.ProcessPoolExecutor(2) as pool:
            verified_plans(pool)  # start the workers, not timed
            search = functools.partial(
                st.optimal_plan, REPAIRED_600K, "elastic", seed=0, executor=pool
            )
            spread, again = timed(search)
        print(
            f"the same over 2 worker processes: {spread:.1f} s, {spread / base:.0f}x the"
            f" baseline (the same plan: {again.hours == plan.hours}); {searched(again)}"
        )
