"""Test-session settings shared by the tests and the doctests.

The doctests below run whole tables or many simulated trials (several seconds
each); they join the ``slow`` tier, like the slow tests of ``tests/``
(``python -m pytest -m "not slow"`` is the everyday tier; CI runs both).
"""

from __future__ import annotations

import pytest

SLOW_DOCTESTS = {
    "spare_theory.reports.alternatives.compare",
    "spare_theory.reports.alternatives.paper_table",
    "spare_theory.reports.alternatives.plans_table",
    "spare_theory.reports.microbatch.table_600k",
    "spare_theory.reports.repairs.paper_plans_table",
    "spare_theory.reports.repairs.plans_table",
    "spare_theory.reports.simulator.paper_split_table",
    "spare_theory.reports.reproduce.reproduce",
    "spare_theory.reports.reproduce.run_reports",
    "spare_theory.reports.simulator.simulator_table",
    "spare_theory.reports.trace.trace_table",
    "spare_theory.reports.training.headline_table",
    "spare_theory.reports.training.headline_verdict",
    "spare_theory.reports.training.training_error_table",
    "spare_theory.traces.patterns.count_heterogeneity",
    "spare_theory.training.simulate.simulate_time_to_wipeout",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
