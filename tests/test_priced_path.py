"""``docs/architecture.md``, "How one plan is priced", checked against the code.

Each numbered step names a function; the plan the page prices runs under a
profiler, and every named function must be entered, in the order of the list
(each after the one before it: a step repeated at every ``r`` may be entered
again later).  A step renamed, moved or bypassed fails here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import spare_theory as st
from spare_theory import Scenario, optimal_plan

SECTION = "## How one plan is priced"
STEP = re.compile(r"^\d+\. `([\w.]+)`", re.MULTILINE)


def _steps() -> list[str]:
    text = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text()
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return STEP.findall(body)


def _code(dotted: str):
    """The code object a dotted name (from ``spare_theory``) runs."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = __import__("spare_theory." + ".".join(parts[:split]), fromlist=["_"])
            break
        except ModuleNotFoundError:
            continue
    for attr in parts[split:]:
        obj = obj.__dict__[attr] if isinstance(obj, type) else getattr(obj, attr)
    obj = obj.fget if isinstance(obj, property) else obj
    while hasattr(obj, "__wrapped__"):  # the value-keyed cache's wrapper
        obj = obj.__wrapped__
    return obj.__code__


def test_the_page_names_the_path_in_the_order_it_is_entered():
    steps = _steps()
    assert len(steps) >= 20, steps
    codes = [_code(step) for step in steps]
    scenario = Scenario.published_600k(2048)
    optimal_plan(scenario, "spare")  # load every lazy module first
    st.clear_caches()
    entered: list = []

    def profile(frame, event, arg):
        if event == "call":
            entered.append(frame.f_code)

    sys.setprofile(profile)
    try:
        optimal_plan(scenario, "spare")
    finally:
        sys.setprofile(None)
        st.clear_caches()
    position = -1
    for step, code in zip(steps, codes, strict=True):
        later = [i for i, c in enumerate(entered) if c is code and i > position]
        assert later, f"{step} is not entered after the step before it"
        position = later[0]
