"""Failure logs drawn from stated laws: the known truth a fitted plan is judged against.

:func:`draw_failure_log` plays ``nodes`` independent alternating renewal
processes over a window: each node is up for a draw of ``lifetime``, down
for a draw of ``repair``, up again, and so on.  As a real log watches nodes
that have long been running, each node is seen in its stationary regime:
its first uptime is a draw of the lifetime's residual (equilibrium) law
(:func:`~spare_theory.lifetimes.laws.equilibrium_law`), so the nodes fail
at the law's mean rate from the window's start (a fresh start under a
Weibull law of shape below 1 would fail more often early on).  A share
``lemon_fraction`` of the nodes (the first ones) fail ``lemon_rate_factor``
times as often: their uptimes are the lifetime draws divided by that factor.
What the window cuts is censored as a real log's would be (a repair still
going on at the end has no end).  The result
is a :class:`~spare_theory.traces.failure_log.FailureLog`, so everything a
log feeds (fits, scenarios, replays) takes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import as_count, as_real, as_seed_sequence
from ..lifetimes.laws import equilibrium_law, validate_lifetime_law
from .failure_log import FailureLog

__all__ = ["draw_failure_log"]


def draw_failure_log(
    *,
    nodes: int,
    window_hours: float,
    lifetime: Any,
    repair: Any,
    seed: int | np.random.SeedSequence,
    lemon_fraction: float = 0.0,
    lemon_rate_factor: float = 1.0,
) -> FailureLog:
    """A log of ``nodes`` nodes failing by ``lifetime`` and repaired by ``repair``.

    Node ``i`` alternates uptimes ``U_ij`` and repairs ``D_ij``: its
    ``j``-th failure is at ``sum_{l<=j} U_il + sum_{l<j} D_il`` hours,
    ``U_i0`` from the residual law (module docstring).  The
    uptimes of the first ``round(lemon_fraction * nodes)`` nodes are
    ``U / lemon_rate_factor``.

    Parameters
    ----------
    nodes : int
        Nodes observed, ``>= 1``.
    window_hours : float
        Length of the observation window, hours, ``> 0``.
    lifetime, repair : frozen scipy.stats distribution
        Laws of a node's uptime and of its repair, in hours, support in
        ``[0, inf)``, finite positive means.
    seed : int or numpy.random.SeedSequence
        The draws (the same seed gives the same log).
    lemon_fraction : float
        Share of lemon nodes, in ``[0, 1]``.
    lemon_rate_factor : float
        How many times as often a lemon node fails, ``>= 1``.

    Returns
    -------
    FailureLog
        Window ``[0, window_hours]``, every node counted (those that never
        failed included).

    Raises
    ------
    ValueError
        Naming the argument: a count or window out of range, a law that is
        not a frozen distribution on ``[0, inf)`` with a finite mean.

    Examples
    --------
    Exponential uptimes of mean 1,000 h and 10 h repairs on 200 nodes over
    a year: about ``200 * 8760 / 1010 = 1,735`` failures.

    >>> from scipy import stats
    >>> log = draw_failure_log(nodes=200, window_hours=8760, lifetime=stats.expon(scale=1000),
    ...                        repair=stats.expon(scale=10), seed=1)
    >>> log.node_count, 1600 < log.failures < 1900
    (200, True)
    >>> round(log.node_mtbf_hours / 1000, 1), round(log.fit_repair("exponential").mean_hours)
    (1.0, 10)
    """
    count = as_count(nodes, "nodes", minimum=1)
    window = as_real(window_hours, "window_hours", minimum=0.0, strict_minimum=True)
    validate_lifetime_law(lifetime, "lifetime")
    validate_lifetime_law(repair, "repair")
    share = as_real(lemon_fraction, "lemon_fraction", minimum=0.0, maximum=1.0)
    factor = as_real(lemon_rate_factor, "lemon_rate_factor", minimum=1.0)
    rng = np.random.default_rng(as_seed_sequence(seed))
    speed = np.ones(count)
    speed[: round(share * count)] = factor
    cycle_hours = float(lifetime.mean()) / factor + float(repair.mean())
    # Enough cycles for every node to pass the window's end, with room; more rounds if not.
    cycles = max(8, int(2.0 * window / cycle_hours) + 8)
    up = np.empty((count, 0))
    down = np.empty((count, 0))
    residual = equilibrium_law(lifetime)
    while True:
        drawn = lifetime.rvs(size=(count, cycles), random_state=rng)
        if up.shape[1] == 0:
            drawn[:, 0] = residual.ppf(rng.random(count))
        up = np.hstack([up, drawn / speed[:, None]])
        down = np.hstack([down, repair.rvs(size=(count, cycles), random_state=rng)])
        # Failure j of a node: its first j + 1 uptimes and first j repairs.
        start = np.cumsum(up, axis=1) + np.cumsum(down, axis=1) - down
        if (start[:, -1] > window).all():
            break
    end = start + down
    node, column = np.nonzero(start <= window)
    frame = pd.DataFrame(
        {
            "node": node,
            "start": start[node, column],
            "end": np.where(end[node, column] <= window, end[node, column], np.nan),
        }
    )
    return FailureLog.from_frame(frame, nodes=count, observed_from=0.0, observed_until=window)
