"""Results explain themselves: estimates and plans carry the caveats of their plan, and say it all.

- A documented bias is attached where its measurement applies and nowhere
  else: SPARe's (measured at ``r >= 2``) not to a SPARe plan at ``r = 1``,
  which is CKPT-only; elastic DP's no-repair offset not with repairs.
- Every front door that returns an estimate or a plan attaches them.
- ``summary()`` of both estimates and of a plan gives the plan, the hours,
  the breakdown (adding up to the hours) and the caveats; a variable the
  plan does not have (``r = None``) prints as ``-``, in the summary and in the
  CLI's table and JSON.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from spare_theory import (
    Scenario,
    optimal_checkpoint_steps,
    optimal_plan,
    paper_scenario,
    strategy,
    time_to_train,
)
from spare_theory.cli.plans import plans_text

WEIBULL = Scenario(
    gpus=1024,
    gpus_per_group=8,
    gpu_mtbf_hours=2000.0,
    restart_minutes=60,
    checkpoint_minutes=5,
    work_hours=48,
    failure_law="weibull",
)


def documented(caveats):
    """The documented biases: every model answer also ends with the audit's measured error."""
    assert caveats[-1].startswith("audit ("), caveats
    return caveats[:-1]


def test_a_caveat_is_attached_only_where_it_was_measured():
    spare = documented(time_to_train(WEIBULL, "spare", r=4, checkpoint_interval_minutes=60).caveats)
    assert len(spare) == 1 and "docs/theory.md section 4" in spare[0]
    # r = 1 is CKPT-only, whose model has no measured bias under Weibull lifetimes.
    at = {"checkpoint_interval_minutes": 60}
    assert documented(time_to_train(WEIBULL, "spare", r=1, **at).caveats) == ()
    assert documented(time_to_train(WEIBULL, "rep", r=2, **at).caveats) == ()
    exponential = dataclasses.replace(WEIBULL, failure_law="exponential")
    assert documented(time_to_train(exponential, "spare", r=4, **at).caveats) == ()
    plain = dataclasses.replace(exponential, reconfigure_minutes=1.0)
    elastic = documented(time_to_train(plain, "elastic", min_groups=100, **at).caveats)
    assert len(elastic) == 1 and "docs/theory.md section 8" in elastic[0]
    assert tuple(strategy("elastic").caveats(plain, None)) == elastic  # no r: the same
    repaired = dataclasses.replace(plain, repair_minutes=60.0)
    assert documented(time_to_train(repaired, "elastic", **at).caveats) == ()


def test_every_front_door_attaches_them():
    plan = optimal_plan(WEIBULL, "spare")
    assert plan.r > 1 and plan.caveats == plan.estimate.caveats
    assert documented(plan.caveats) == tuple(strategy("spare").caveats(WEIBULL, plan.r)) != ()
    assert time_to_train(WEIBULL, "spare", r=4).caveats  # the interval searched


@pytest.mark.slow
def test_the_step_level_front_doors_attach_them():
    step = dataclasses.replace(paper_scenario(200, steps=500), microbatches=4)
    assert time_to_train(step, "spare", r=9, checkpoint_every_steps=10).caveats
    best = documented(optimal_checkpoint_steps(step, "spare", r=9).caveats)
    assert len(best) == 1 and "docs/step_model.md section 10" in best[0]
    assert documented(time_to_train(step, "spare", r=1, checkpoint_every_steps=10).caveats) == ()


def _lines(text: str) -> dict[str, str]:
    return dict(
        pair
        for line in text.splitlines()
        for pair in re.findall(r"(\S[^:]*?):\s{2,}(\S+(?: \S+)*)", line)
    )


def test_summaries_say_the_plan_the_hours_the_breakdown_and_the_caveats():
    plan = optimal_plan(WEIBULL, "spare")
    text = plan.summary()
    cells = _lines(text)
    assert cells["strategy"] == "spare" and cells["r"] == str(plan.r)
    assert float(cells["hours"].replace(",", "")) == pytest.approx(plan.hours, rel=1e-5)
    parts = re.findall(r"^  (useful|redundancy|checkpoint|restart|lost)\s+(\S+)", text, re.M)
    assert [p for p, _ in parts] == list(plan.estimate.breakdown_hours)
    assert sum(float(h) for _, h in parts) == pytest.approx(plan.hours, rel=1e-5)
    assert "[1] under non-exponential GPU lifetimes" in text
    assert text == plan.summary() and len(max(text.splitlines(), key=len)) <= 78
    step = time_to_train(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6)
    # No documented bias at the step level here: the audit's line alone (200 groups).
    assert "[1] audit (150 random scenarios" in step.summary() and "[2]" not in step.summary()
    assert _lines(step.summary())["total / T0"] == f"{step.total_over_T0:.4f}"


def test_a_plan_without_r_shows_a_dash():
    est = time_to_train(WEIBULL, "rep", r=2, checkpoint_interval_minutes=60)
    assert _lines(dataclasses.replace(est, r=None).summary())["r"] == "-"
    record = {
        "strategy": "nor",
        "label": "No r",
        "modelled": True,
        "feasible": True,
        "r": None,
        "r_within_1pct": [None, None],
        "r_within_1pct_open": False,
        "variables": {"min_groups": 12},
        "plan_variables": {"min_groups": 12},
        "checkpoint_interval_minutes": 30.0,
        "interval_limit": None,
        "no_periodic_checkpoint": False,
        "hours": 10.0,
        "availability": 0.5,
        "restarts": 3.0,
        "samples_skipped": 0.0,
        "exact_batch": True,
        "microbatches": 1,
        "planned_restart_failures": None,
        "caveats": [],
        "method": "model",
    }
    header, row = plans_text({"nor": record}, WEIBULL)[:2]
    assert header.split() == [
        *["strategy", "r", "within", "1", "%", "quorum", "checkpoint", "every"],
        *["hours", "availability", "restarts"],
    ]
    assert row.split()[:6] == ["No", "r", "-", "-", "12", "30"]
    assert json.loads(json.dumps(record))["r"] is None
