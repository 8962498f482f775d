"""The step-level model of a spare-node pool: a worker's repair becomes its down time.

With ``spare_nodes >= 1`` a :class:`~spare_theory.steps.scenario.StepScenario`'s
``repair_seconds`` is a node's repair; the closed form prices the worker's
down time instead, the busy period of
:func:`~spare_theory.lifetimes.spares.group_down_hours` at the cluster's
node failure rate ``N / E[L]`` (one node per worker failure), the nodes'
mean repair, ``spare_nodes`` and ``swap_seconds``, workers of
``nodes_per_group`` nodes; as an exponential repair law of that mean (the
hour-level model's step 1, :mod:`spare_theory.hourly.compose`).

A global restart makes every worker ready: the workers still waiting take
nodes the pool then owes, so between restarts fewer wait than the stationary
count (:func:`~spare_theory.lifetimes.spares.spare_wait_hours` with
restarts).  The restarts' distance is the plan's own cycle, the mean time
from a resume to its wipe-out plus the restart, found as a fixed point with
the strategy's table (:func:`pool_priced_scenario`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .._numerics import restart_fixed_point
from ..lifetimes.spares import group_down_hours
from .cycles import StepCycle
from .restarts import restart_windows
from .scenario import StepScenario

__all__ = ["pool_priced_scenario", "priced_step_scenario"]


def priced_step_scenario(
    scenario: StepScenario, restart_every_hours: float = math.inf
) -> StepScenario:
    """``scenario`` with the pool turned into the workers' repair law (itself without a pool).

    ``restart_every_hours``: the mean hours between global restarts, which
    fill the waiting workers (default ``inf``: none).

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
        restart_every_hours=restart_every_hours,
    )
    out = scenario.without_repairs()
    fields = {"repair_seconds": 3600.0 * hours, "repair_law": "exponential"}
    return type(scenario)(**{**vars(out), **fields, "rejoin_seconds": scenario.rejoin_seconds})


def pool_priced_scenario(
    scenario: StepScenario, repaired_cycle: Callable[[StepScenario], StepCycle]
) -> StepScenario:
    """:func:`priced_step_scenario` at the restarts of the plan it prices (module docstring).

    ``repaired_cycle(priced)``: the plan's table with repairs; its mean
    length ``int Q dt`` plus a restart's mean window is the restarts' mean
    distance (:func:`~spare_theory._numerics.restart_fixed_point`).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.repairs import spare_repair_step_cycle
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = replace(paper_scenario(200), repair_seconds=36_000.0, spare_nodes=40,
    ...              swap_seconds=300.0)
    >>> at_restarts = pool_priced_scenario(sc, lambda s: spare_repair_step_cycle(s, 6))
    >>> bool(at_restarts.repair_seconds < priced_step_scenario(sc).repair_seconds)
    True
    """
    if not scenario.pool:
        return scenario

    def priced_at(hours: float) -> tuple[float, StepScenario]:
        priced = priced_step_scenario(scenario, hours)
        seconds = float(repaired_cycle(priced).q_integral()[-1])
        return (seconds + restart_windows(priced).mean_seconds) / 3600.0, priced

    at_restarts: StepScenario = restart_fixed_point(priced_at)
    return at_restarts
