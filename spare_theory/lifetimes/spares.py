"""A pool of spare nodes: closed forms for shortages, waits and a group's time to be whole.

A cluster runs ``n`` node slots; failed nodes go to repair and a spare from
a pool of ``S`` takes the failed node's slot after a swap of
``swap_minutes``; a repaired node joins the pool.  When the pool is empty the
failed slot waits (first come, first served) for the next repaired node, then
swaps.  Assumptions, used throughout:

- failures arrive as a Poisson process of constant rate ``lambda`` (failures
  per hour of the whole cluster): the slots waiting for a node are few next
  to ``n``, so the working nodes, and their failure rate, hardly change;
  nodes in the pool do not fail (cold spares);
- repairs take i.i.d. times ``D`` of any law with mean ``E[D]``, all in
  parallel (every failed node is repaired at once, none waits for a repairer).

Then the number of nodes in repair is the infinite-server queue M/G/inf,
whose stationary law is Poisson with mean ``m = lambda E[D]`` whatever the law
of ``D`` (Palm's theorem); a failure finds the pool empty when ``S`` or more
nodes are already in repair, and since Poisson arrivals see time averages
(PASTA)

    P(shortage) = P(N >= S) = poisson.sf(S - 1, m),

while the share of time with at least one slot unfilled is
``P(N > S) = P(shortage with S + 1 spares)``.  The slots waiting for a node
number ``(N - S)^+``; by Little's law their mean wait is

    E[wait] = E[(N - S)^+] / lambda = (m P(N >= S) - S P(N > S)) / lambda,

exact under the assumptions above, for any repair law and any order of
service; with ``S = 0`` it is ``E[D]``: the slot waits as long as a repair.
A failed slot is filled ``W = swap + wait`` after its failure.

**Restarts that fill the waiting slots.**  A training job's global restart
makes every group whole: the slots still waiting take nodes the pool then
owes, and a node back from repair serves a waiting slot before it repays
them.  The nodes in repair ``N`` are unchanged by it, and with
``x = N - S`` the slots waiting ``t`` after the last restart are
``(x(t) - max(0, min_{[restart, t]} x))^+``, not ``x^+``.  With restarts at
rate ``theta`` (mean hours ``1 / theta`` apart) and ``N`` taken as the
birth-death chain of exponential repairs (the same Poisson law), time
reversal gives the mean waiting slots ``sum_{j > S} P(N = j) a_j`` with
``a_j = r_j (1 + a_{j-1})``, ``a_S = 0``, where
``r_i = i mu / (lambda + i mu + theta - lambda r_{i+1})`` is the Laplace
transform at ``theta`` of the time from ``i`` in repair to ``i - 1``
(``mu = 1 / E[D]``): :func:`spare_wait_hours` with ``restart_every_hours``.
At ``theta = 0`` it is ``E[(N - S)^+]``.

**A group of** ``g`` **nodes** is whole again when all its slots are filled.
While it waits, its ``g - 1`` other nodes keep failing at rate
``a = (g - 1) lambda / n`` and each such failure keeps it down for another
``W``: the down time is the busy period of an M/G/inf queue of arrival rate
``a`` and service ``W``, whose mean is ``(exp(a E[W]) - 1) / a`` (from
``P(empty) = exp(-a E[W])``).  This takes the ``W`` of one group's failures
as independent (they are not quite: shortages last) and the group's failure
rate while down as ``a`` (it is ``(g - j) lambda / n`` with ``j`` slots
down); :func:`~spare_theory.lifetimes.spares_sim.simulate_spare_pool`
measures the error: within its standard errors (1 to 3 %) while shortages
are rare or groups small (``tests/test_spares.py``), and 3.2 % +- 0.6 %
short (the whole share 0.7 % high) in a hard case: 20 groups of 50 nodes,
10 nodes in repair on average, 6 spares, the pool empty for 93 % of the
failures (40 trials of 6,000 h).  The group is whole a share ``1 / (1 + g lambda E[B] / n)``
of the time (exponential uptimes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from .._validation import as_count, as_count_array, as_real, as_real_array

__all__ = [
    "check_pool_fields",
    "group_down_hours",
    "group_whole_probability",
    "nodes_in_repair_law",
    "shortage_probability",
    "spare_wait_hours",
    "spares_for_shortage",
]


def check_pool_fields(
    spare_nodes: Any,
    swap: Any,
    *,
    repairs: bool,
    repair_field: str = "repair_minutes",
    swap_field: str = "swap_minutes",
) -> dict[str, Any]:
    """The spare-pool fields of a scenario, checked: ``spare_nodes`` and the swap time.

    ``spare_nodes=None`` or ``0`` is no pool (the swap time must then be
    ``None``); ``spare_nodes >= 1`` needs the nodes' repair time
    (``repairs``) and a swap time ``>= 0``.

    Parameters
    ----------
    spare_nodes : int or None
        Spare nodes, ``>= 0``.
    swap : float or None
        Time to swap a spare in, ``>= 0``, in the unit of ``swap_field``.
    repairs : bool
        Whether the scenario has a repair time.
    repair_field, swap_field : str
        Their names, for the messages and the result (``repair_seconds`` and
        ``swap_seconds`` on a step scenario).

    Returns
    -------
    dict
        ``{"spare_nodes": int or None, swap_field: float or None}``.

    Raises
    ------
    ValueError
        Naming the field.

    Examples
    --------
    >>> check_pool_fields(12, 30, repairs=True)
    {'spare_nodes': 12, 'swap_minutes': 30.0}
    >>> check_pool_fields(12, 30, repairs=False)
    Traceback (most recent call last):
    ...
    ValueError: spare_nodes needs repair_minutes (the failed nodes' repair time), got None
    """
    spares = None if spare_nodes is None else as_count(spare_nodes, "spare_nodes", minimum=0)
    if not spares:
        if swap is not None:
            raise ValueError(f"{swap_field}={swap!r} needs spare_nodes >= 1 (no pool to swap from)")
        return {"spare_nodes": spares, swap_field: None}
    if not repairs:
        raise ValueError(
            f"spare_nodes needs {repair_field} (the failed nodes' repair time), got None"
        )
    if swap is None:
        raise ValueError(f"{swap_field} is required with spare_nodes (the time to swap a spare in)")
    return {"spare_nodes": spares, swap_field: as_real(swap, swap_field, minimum=0.0)}


def _mean_in_repair(failure_rate_per_hour: Any, mean_repair_hours: Any) -> np.ndarray:
    rate = as_real_array(failure_rate_per_hour, "failure_rate_per_hour", minimum=0.0)
    repair = as_real_array(mean_repair_hours, "mean_repair_hours", minimum=0.0)
    return rate * repair


def _out(value: np.ndarray) -> Any:
    return float(value) if np.ndim(value) == 0 else value


def nodes_in_repair_law(failure_rate_per_hour: float, mean_repair_hours: float) -> Any:
    """The stationary law of the number of nodes in repair: Poisson, mean ``lambda E[D]``.

    Palm's theorem for the infinite-server queue M/G/inf: whatever the law of
    the repair times ``D``, only its mean enters (module docstring).

    Parameters
    ----------
    failure_rate_per_hour : float
        Failures per hour of the whole cluster, ``lambda >= 0``.
    mean_repair_hours : float
        Mean repair time ``E[D]``, hours, ``>= 0``.

    Returns
    -------
    frozen scipy.stats.poisson
        ``poisson(lambda E[D])``.

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    600k GPUs as 75,000 nodes failing every 5,623 h each, repairs of 133 h:

    >>> law = nodes_in_repair_law(75_000 / 5623.0, 133.0)
    >>> round(float(law.mean()), 1), int(law.ppf(0.999))
    (1774.0, 1906)
    """
    rate = as_real(failure_rate_per_hour, "failure_rate_per_hour", minimum=0.0)
    repair = as_real(mean_repair_hours, "mean_repair_hours", minimum=0.0)
    return stats.poisson(rate * repair)


def shortage_probability(
    failure_rate_per_hour: npt.ArrayLike,
    mean_repair_hours: npt.ArrayLike,
    spare_nodes: npt.ArrayLike,
) -> Any:
    """The chance that a failed node finds the pool empty: ``P(N >= S)``, ``N`` Poisson.

    ``N`` is the number of nodes already in repair when the failure comes
    (Poisson with mean ``lambda E[D]``, time-stationary by PASTA); the pool
    is empty when ``N >= S`` (module docstring).  ``shortage_probability(...,
    S + 1)`` is the share of time with a slot unfilled, ``P(N > S)``.
    Broadcasts.

    Parameters
    ----------
    failure_rate_per_hour : array_like
        Failures per hour of the whole cluster, ``>= 0``.
    mean_repair_hours : array_like
        Mean repair time, hours, ``>= 0``.
    spare_nodes : array_like of int
        Spare nodes ``S >= 0``.

    Returns
    -------
    float or numpy.ndarray
        ``poisson.sf(S - 1, lambda E[D])`` (1 for ``S = 0``).

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> round(shortage_probability(0.1, 50.0, 10), 4)
    0.0318
    >>> shortage_probability(0.1, 50.0, [0, 5, 20]).round(6).tolist()
    [1.0, 0.559507, 0.0]
    """
    mean = _mean_in_repair(failure_rate_per_hour, mean_repair_hours)
    spares = as_count_array(spare_nodes, "spare_nodes", minimum=0)
    return _out(stats.poisson.sf(spares - 1, mean))


def spares_for_shortage(
    failure_rate_per_hour: float, mean_repair_hours: float, probability: float
) -> int:
    """The fewest spare nodes that keep :func:`shortage_probability` at or under ``probability``.

    The least ``S`` with ``P(N >= S) <= p``: ``S = isf(p) + 1`` of the
    Poisson law of :func:`nodes_in_repair_law`, checked on both sides.

    Parameters
    ----------
    failure_rate_per_hour, mean_repair_hours : float
        As :func:`shortage_probability`.
    probability : float
        Target chance that a failure finds no spare, ``0 < p < 1``.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> spares_for_shortage(0.1, 50.0, 0.01), spares_for_shortage(0.1, 50.0, 0.001)
    (12, 14)
    >>> round(shortage_probability(0.1, 50.0, 12), 5), round(shortage_probability(0.1, 50.0, 11), 5)
    (0.00545, 0.01370)
    """
    law = nodes_in_repair_law(failure_rate_per_hour, mean_repair_hours)
    p = as_real(probability, "probability", minimum=0.0, strict_minimum=True)
    if p >= 1.0:
        raise ValueError(f"probability must be < 1, got {p}")
    spares = int(law.isf(p)) + 1
    while law.sf(spares - 1) > p:  # isf rounds on the safe side; these settle the edge
        spares += 1
    while spares > 0 and law.sf(spares - 2) <= p:
        spares -= 1
    return spares


def spare_wait_hours(
    failure_rate_per_hour: npt.ArrayLike,
    mean_repair_hours: npt.ArrayLike,
    spare_nodes: npt.ArrayLike,
    restart_every_hours: float = math.inf,
) -> Any:
    """Mean wait of a failed slot for a node, hours: ``E[(N - S)^+] / lambda`` (Little's law).

    ``E[(N - S)^+] = m P(N >= S) - S P(N > S)`` for ``N`` Poisson of mean
    ``m = lambda E[D]``; any repair law, any order of service (module
    docstring).  With ``S = 0`` it is ``E[D]``.  Broadcasts.  With restarts
    that fill the waiting slots (``restart_every_hours``, scalars only) the
    mean slots waiting of the module docstring over ``lambda``: the
    birth-death chain of exponential repairs, restarts at random.

    Parameters
    ----------
    failure_rate_per_hour, mean_repair_hours, spare_nodes : array_like
        As :func:`shortage_probability` (the rate ``> 0`` here).
    restart_every_hours : float, optional
        Mean hours between global restarts, ``> 0`` (default ``inf``: none).

    Returns
    -------
    float or numpy.ndarray
        Hours (the swap itself not included).

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> spare_wait_hours(0.1, 50.0, 0)
    50.0
    >>> round(spare_wait_hours(0.1, 50.0, 5), 3), round(spare_wait_hours(0.1, 50.0, 10), 4)
    (8.773, 0.2219)

    Restarts every 20 h fill the waiting slots, so a failure waits less:

    >>> round(spare_wait_hours(0.1, 50.0, 5, restart_every_hours=20.0), 3)
    4.005
    """
    as_real_array(failure_rate_per_hour, "failure_rate_per_hour", minimum=0.0, strict_minimum=True)
    restart = as_real(
        restart_every_hours, "restart_every_hours", minimum=0.0, strict_minimum=True, allow_inf=True
    )
    if math.isfinite(restart):
        return _restarted_wait_hours(
            float(failure_rate_per_hour),  # type: ignore[arg-type]
            float(mean_repair_hours),  # type: ignore[arg-type]
            as_count(spare_nodes, "spare_nodes", minimum=0),
            restart,
        )
    rate = np.asarray(failure_rate_per_hour, dtype=float)
    mean = _mean_in_repair(failure_rate_per_hour, mean_repair_hours)
    spares = as_count_array(spare_nodes, "spare_nodes", minimum=0)
    waiting = mean * stats.poisson.sf(spares - 1, mean) - spares * stats.poisson.sf(spares, mean)
    return _out(np.maximum(waiting, 0.0) / rate)  # cancellation can leave -1e-17


def _restarted_wait_hours(rate: float, repair: float, spares: int, restart: float) -> float:
    """:func:`spare_wait_hours` with restarts ``restart`` hours apart (module docstring)."""
    m = rate * repair
    if m == 0.0:
        return 0.0
    mu, theta = 1.0 / repair, 1.0 / restart
    top = max(spares, int(m + 12.0 * math.sqrt(m) + 30.0))
    i = np.arange(spares + 1, top + 1)
    r = np.empty(i.size)
    nxt = 1.0  # r_{top+1}: its error shrinks geometrically down the chain
    for k in range(i.size - 1, -1, -1):
        nxt = r[k] = i[k] * mu / (rate + i[k] * mu + theta - rate * nxt)
    a = np.empty(i.size)
    before = 0.0
    for k in range(i.size):
        before = a[k] = r[k] * (1.0 + before)
    return float(stats.poisson.pmf(i, m) @ a) / rate


def group_down_hours(
    failure_rate_per_hour: float,
    mean_repair_hours: float,
    spare_nodes: int,
    *,
    swap_minutes: float,
    group_nodes: int,
    nodes: int,
    restart_every_hours: float = math.inf,
) -> float:
    """Mean time from a group's failure until all its slots are filled again, hours.

    ``E[B] = (exp(a E[W]) - 1) / a`` with ``E[W] = swap + E[wait]``
    (:func:`spare_wait_hours`) and ``a = (g - 1) lambda / n`` the failure
    rate of the group's other nodes; ``E[W]`` when ``g = 1``.  Assumptions
    and approximation in the module docstring.

    Parameters
    ----------
    failure_rate_per_hour : float
        Failures per hour of the whole cluster (``nodes`` working nodes), ``> 0``.
    mean_repair_hours : float
        Mean repair time, hours, ``>= 0``.
    spare_nodes : int
        Spare nodes, ``>= 0``.
    swap_minutes : float
        Time to swap a spare into a slot, minutes, ``>= 0``.
    group_nodes : int
        Nodes of the group ``g``, ``1 <= g <= nodes``.
    nodes : int
        Working node slots of the cluster ``n``.

    Returns
    -------
    float
        Hours.

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> kw = dict(swap_minutes=30.0, group_nodes=32, nodes=2000)
    >>> round(group_down_hours(0.1, 50.0, 10, **kw), 3)
    0.722
    >>> round(group_down_hours(0.1, 50.0, 0, **kw), 1)  # no spares: wait for a repair
    52.5
    """
    nodes = as_count(nodes, "nodes")
    group = as_count(group_nodes, "group_nodes", maximum=nodes)
    swap = as_real(swap_minutes, "swap_minutes", minimum=0.0) / 60.0
    wait = swap + spare_wait_hours(
        failure_rate_per_hour, mean_repair_hours, spare_nodes, restart_every_hours
    )
    others = (group - 1) * float(failure_rate_per_hour) / nodes
    with np.errstate(over="ignore"):  # inf: practically never whole
        busy = np.expm1(others * wait) / others if others else wait
    return float(busy)


def group_whole_probability(
    failure_rate_per_hour: float,
    mean_repair_hours: float,
    spare_nodes: int,
    *,
    swap_minutes: float,
    group_nodes: int,
    nodes: int,
) -> float:
    """Share of time a group of ``g`` nodes has all its slots filled: ``1 / (1 + g nu E[B])``.

    Up periods of mean ``1 / (g nu)`` (``nu = lambda / n`` per node,
    exponential uptimes) alternate with down periods of mean ``E[B]``
    (:func:`group_down_hours`).

    Parameters
    ----------
    failure_rate_per_hour, mean_repair_hours, spare_nodes, swap_minutes, group_nodes, nodes
        As :func:`group_down_hours`.

    Returns
    -------
    float
        In ``(0, 1]``.

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    256 servers, 2 % of the cluster's nodes in repair, with and without spares:

    >>> kw = dict(swap_minutes=30.0, group_nodes=256, nodes=75_000)
    >>> round(group_whole_probability(13.3, 133.0, 1950, **kw), 3)
    0.978
    >>> round(group_whole_probability(13.3, 133.0, 0, **kw), 3)
    0.002
    """
    down = group_down_hours(
        failure_rate_per_hour,
        mean_repair_hours,
        spare_nodes,
        swap_minutes=swap_minutes,
        group_nodes=group_nodes,
        nodes=nodes,
    )
    group_rate = int(group_nodes) * float(failure_rate_per_hour) / int(nodes)
    return 1.0 / (1.0 + group_rate * down)
