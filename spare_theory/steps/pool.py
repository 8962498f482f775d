"""The step-level model of a spare-node pool: a worker's repair becomes its down time.

With ``spare_nodes >= 1`` a :class:`~spare_theory.steps.scenario.StepScenario`'s
``repair_seconds`` is a node's repair; the closed form prices the worker's
down time instead, the busy period of
:func:`~spare_theory.lifetimes.spares.group_down_hours` at the cluster's
node failure rate ``N / E[L]`` (one node per worker failure), the nodes'
mean repair, ``spare_nodes`` and ``swap_seconds``, workers of
``nodes_per_group`` nodes; as an exponential repair law of that mean (the
hour-level model's step 1, :mod:`spare_theory.hourly.compose`).
"""

from __future__ import annotations

from ..lifetimes.spares import group_down_hours
from .scenario import StepScenario

__all__ = ["priced_step_scenario"]


def priced_step_scenario(scenario: StepScenario) -> StepScenario:
    """``scenario`` with the pool turned into the workers' repair law (itself without a pool).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = replace(paper_scenario(200), repair_seconds=36_000.0, spare_nodes=160,
    ...              swap_seconds=300.0)
    >>> priced = priced_step_scenario(sc)
    >>> round(priced.repair_seconds), priced.spare_nodes
    (300, None)
    """
    if not scenario.pool:
        return scenario
    hours = group_down_hours(
        3600.0 / scenario.cluster_mtbf_seconds,
        float(scenario.repair_seconds or 0.0) / 3600.0,
        int(scenario.spare_nodes or 0),
        swap_minutes=float(scenario.swap_seconds or 0.0) / 60.0,
        group_nodes=scenario.nodes_per_group,
        nodes=scenario.groups * scenario.nodes_per_group,
    )
    out = scenario.without_repairs()
    fields = {"repair_seconds": 3600.0 * hours, "repair_law": "exponential"}
    return type(scenario)(**{**vars(out), **fields, "rejoin_seconds": scenario.rejoin_seconds})
