"""A log as a command line names it, and its scenario: what ``--failure-log LOG`` needs.

:func:`open_log` takes a path, the name ``"infinitehbd"`` (the shipped
trace) or a log; :func:`scenario_from_log` builds the plan's scenario from it
with command-line keywords (:mod:`spare_theory.traces.plans`).
"""

from __future__ import annotations

from typing import Any

from .failure_log import INFINITEHBD_NODES, FailureLog, infinitehbd_trace_path, load_failure_log
from .plans import log_scenario, log_step_scenario

__all__ = ["open_log", "scenario_from_log"]


def open_log(
    source: Any,
    *,
    node: str = "node",
    start: str = "start",
    end: str = "end",
    nodes: int | None = None,
    observed_from: Any = None,
    observed_until: Any = None,
    time_unit: str | None = None,
) -> Any:
    """A failure log from a path, the name ``"infinitehbd"``, or a log itself.

    ``"infinitehbd"`` is the shipped trace, read with its defaults (400
    nodes, days, the window from day 0) unless the keywords say otherwise; a
    path is :func:`~spare_theory.traces.failure_log.load_failure_log` with
    the keywords (``time_unit`` default hours); a
    :class:`~spare_theory.traces.failure_log.FailureLog` is returned as is.
    What a command line's ``LOG`` argument needs.

    Examples
    --------
    >>> open_log("infinitehbd").node_count
    400
    """
    if isinstance(source, FailureLog):
        return source
    options: dict[str, Any] = {
        "node": node,
        "start": start,
        "end": end,
        "nodes": nodes,
        "observed_from": observed_from,
        "observed_until": observed_until,
        "time_unit": time_unit or "hours",
    }
    if str(source) != "infinitehbd":
        return load_failure_log(source, **options)
    options["nodes"] = INFINITEHBD_NODES if nodes is None else nodes
    options["observed_from"] = 0.0 if observed_from is None else observed_from
    options["time_unit"] = time_unit or "days"
    return load_failure_log(infinitehbd_trace_path(), **options)


def scenario_from_log(
    source: Any, *, step: bool = False, read: dict[str, Any] | None = None, **fields: Any
) -> Any:
    """The scenario of a log given as a command line gives it: a path or ``"infinitehbd"``.

    :func:`open_log` with the reading keywords ``read`` (``node``,
    ``start``, ``end``, ``nodes``, ``observed_from``, ``observed_until``,
    ``time_unit``), then :func:`log_scenario` (or :func:`log_step_scenario`
    with ``step=True``) with ``fields`` (``gpus``, ``gpus_per_group``,
    ``gpus_per_node``, ``law``, ``lemons``, ``bursts``, the scenario's costs,
    ``spare_nodes``, ``swap_minutes``, ...).  For ``spare-theory optimize
    --failure-log LOG``.

    Examples
    --------
    >>> sc = scenario_from_log("infinitehbd", gpus=100_000, gpus_per_group=2048,
    ...                        restart_minutes=60, checkpoint_minutes=5, work_hours=720)
    >>> sc.groups, sc.failure_law
    (48, 'weibull')
    """
    log = open_log(source, **(read or {}))
    return log_step_scenario(log, **fields) if step else log_scenario(log, **fields)
