"""What the hour-level model prices when a scenario combines fields, and how it approximates.

A scenario built from a failure log combines a non-exponential lifetime
law, lemon groups, failure domains (bursts) and repairs through a pool of
spare nodes.  The cycle laws of :mod:`spare_theory.cycles` cover each
mechanism on its own; :func:`~spare_theory.hourly.process.group_process` maps a
combination onto the process they cover (a
:class:`~spare_theory.hourly.process.GroupProcess`), one stated approximation per
step, named in its ``approximations``, in this order
(``docs/theory.md`` section 9 gives the derivations and the errors measured
against the event simulation, which plays every combination exactly):

1. **Spare pool** (``spare_nodes >= 1``): a group's repair becomes the time
   until all its failed nodes are swapped in,
   ``E[B] = (exp(a E[W]) - 1) / a`` with ``E[W] = swap + E[wait]`` and
   ``a = (g - 1) nu`` the failure rate of its other nodes
   (:func:`~spare_theory.lifetimes.spares.group_down_hours`; the nodes in
   repair are Poisson by Palm's theorem, whatever the repair law), as an
   exponential repair law of that mean.  The cluster's node failure rate is
   ``N`` groups at their mean rate (lemons and domain events included).
   Only the mean of the node repair law enters.  A global restart makes
   every group whole: the slots still waiting take nodes the pool then
   owes, so between restarts fewer slots wait than the stationary
   ``(N - S)^+`` (:func:`~spare_theory.lifetimes.spares.spare_wait_hours`
   with the plan's mean cycle, found as a fixed point by
   :func:`~spare_theory.hourly.model.priced_law`).
   Under non-exponential group clocks (``renewal="group"``) a group is one
   slot whose failures while it waits are absorbed: the pool is fed by the
   up groups only, a birth-death fixed point (:func:`pool_down_minutes`).
2. **Repairs with a non-exponential law, lemons or domains**: each group is
   taken to alternate between exponential up times and its repairs, at the
   rate ``lambda / c + lambda (L - 1) phi / c + lambda_D`` (with lemons
   the one rate that gives lemons and others their mean down share,
   :func:`~spare_theory.hourly.process.down_share_rate`; domain events
   counted as independent failures
   of each of their groups, except the events of a domain that alone ends
   the plan's cycle: those are wipe-outs, priced on top by
   :class:`~spare_theory.cycles.bursts.BurstWipeouts`, ``wiping_share``),
   and the repair cycle of exponential lifetimes is priced at that rate.
   ``c = 1 + M(D) - D / m`` carries a renewal law's clustering: a clock that
   has just fired is young, and the failures it brings within the down time
   ``D`` are absorbed in the same outage. An outage ends at its repair or at
   the next global restart, which makes every group whole, so ``D`` is the
   mean of the shorter (:func:`outage_hours`): the mean repair when restarts
   are rare, far less when they come every few hours (Rep at ``r = 3`` on
   600k GPUs fitted to the StepFun log: ``D`` 5.6 h against a mean repair of
   133 h, and ``c`` 1.10, not 1.37); the time to the restart is the plan's
   own cycle, found as a fixed point
   (:func:`~spare_theory.hourly.model.priced_law`; with a pool the restart
   ends the pool's wait, step 1, not the clustering's outage).
   ``M`` is the renewal function of the clock
   that fired (:func:`~spare_theory.lifetimes.laws.renewal_function`: the
   node's law, mean ``m``, with ``renewal="node"``, the group's with
   ``"group"``), so that the alternating process has the renewal process's
   rate of outages, ``lambda / (1 + lambda D c)`` (exponential: ``c = 1``).
   The stationary down share and the rate of ``r`` overlapping outages of
   independent alternating groups depend on the means only; what is
   dropped is the transient from a restart (young clocks, lemons failing
   first), the correlation of the outages of the groups of one domain (but
   for the events that alone wipe out) or of one lemon's bursts, and, with a
   pool, of the groups waiting together.
3. **Without repairs, domains and lemons together**: the lemons are folded
   into the groups' independent rate ``lambda (1 + (L - 1) phi)`` and
   the domain law is kept.
4. Without repairs, a non-exponential law with lemons is modelled exactly on
   the average over the lemons' placement (a lemon's clock runs ``L``
   times as fast, :class:`~spare_theory.cycles.domains.LemonLifetimes`), as
   the exponential one; a non-exponential law with failure domains has no
   model: :func:`~spare_theory.hourly.process.group_process` raises a ``ValueError`` that says which
   field to drop.

Everything else is priced as it is, so every number the model gave before
these combinations were allowed is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..lifetimes.laws import renewal_function
from ..lifetimes.spares import group_down_hours
from .scenario import Scenario

# Gauss-Legendre nodes over a repair law's quantiles (outage_hours).
_OUTAGE_NODES = 128

__all__ = [
    "cluster_node_failure_rate",
    "clustering",
    "mean_group_rate",
    "outage_hours",
    "pool_down_minutes",
]


def mean_group_rate(scenario: Scenario) -> float:
    """A group's mean failure rate per hour: ``lambda (1 + (L - 1) phi) + lambda_D``.

    ``lambda`` is an ordinary group's rate
    (:attr:`~spare_theory.hourly.scenario.Scenario.group_failure_rate_per_hour`),
    ``phi`` and ``L`` the lemon share (:attr:`Scenario.lemon_share`, the whole count
    of lemons the simulation plays) and rate factor, ``lambda_D`` the
    rate of the group's domain events (0 without domains).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, lemon_fraction=0.1,
    ...               lemon_rate_factor=11.0)
    >>> round(mean_group_rate(sc), 6)
    0.008
    """
    rate = scenario.group_failure_rate_per_hour
    rate *= 1.0 + (scenario.lemon_rate_factor - 1.0) * scenario.lemon_share
    if scenario.domain_mtbf_hours is not None:
        rate += 1.0 / scenario.domain_mtbf_hours
    return rate


def outage_hours(
    repair_minutes: float, repair_law: Any = "exponential", restart_hours: float = math.inf
) -> float:
    """Mean hours a group's outage lasts: ``D = E[min(repair, E)]``, ``E ~ Exp(restart_hours)``.

    An outage ends when the repair (mean ``repair_minutes``, law
    ``repair_law``: ``"exponential"``, ``"fixed"`` or a frozen scipy law in
    minutes) does or when a global restart makes every group whole,
    whichever comes first; the time from a failure to the end of the next
    restart is taken as exponential of mean ``restart_hours`` (``inf``: none
    comes, ``D`` is the mean repair).  ``D = int_0^inf S(t) e^{-t / T} dt``
    with ``S`` the repair law's survival (``D T / (D + T)`` for an
    exponential repair of mean ``D``).

    Examples
    --------
    >>> outage_hours(60.0), outage_hours(60.0, "exponential", 3.0)
    (1.0, 0.75)
    >>> from scipy import stats, integrate
    >>> law = stats.lognorm(1.9, scale=1200.0)  # minutes, heavy-tailed
    >>> quad, _ = integrate.quad(lambda t: law.sf(t) * np.exp(-t / 300.0), 0, np.inf)
    >>> round(outage_hours(float(law.mean()), law, 5.0), 4), round(quad / 60.0, 4)
    (4.0256, 4.0256)
    """
    repair = repair_minutes / 60.0
    if not math.isfinite(restart_hours):
        return repair
    if repair_law == "exponential":
        return repair * restart_hours / (repair + restart_hours)
    if repair_law == "fixed":
        return restart_hours * -math.expm1(-repair / restart_hours)
    # A frozen scipy law in minutes: T E[1 - exp(-X / T)], by Gauss-Legendre over its
    # quantiles (smooth there: the integrand saturates where the quantile diverges).
    nodes, weights = np.polynomial.legendre.leggauss(_OUTAGE_NODES)
    minutes = repair_law.ppf(0.5 * (nodes + 1.0)) / (60.0 * restart_hours)
    return restart_hours * 0.5 * float(weights @ -np.expm1(-minutes))


def clustering(
    scenario: Scenario,
    repair_minutes: float | None,
    repair_law: Any = "exponential",
    restart_hours: float = math.inf,
) -> float:
    """``c = 1 + M(D) - D / m``: extra failures a renewal clock brings within an outage.

    ``D`` the mean outage (:func:`outage_hours` of the repairs priced,
    ``repair_minutes`` of law ``repair_law``, cut short by the next global
    restart ``restart_hours`` away on average), ``M`` the renewal function of
    the clock that fired (the node's law with ``renewal="node"``, the
    group's with ``"group"``), ``m`` its mean (module docstring, step 2); 1
    for exponential lifetimes or without repairs (``repair_minutes=None``).

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48, failure_law="weibull")
    >>> round(clustering(sc, 60.0), 4), round(clustering(sc, 60.0, restart_hours=0.5), 4)
    (1.0167, 1.0077)
    """
    if scenario.exponential or repair_minutes is None:
        return 1.0
    law = scenario.node_lifetime_law if scenario.renewal == "node" else scenario.group_lifetime_law
    down = outage_hours(repair_minutes, repair_law, restart_hours)
    return 1.0 + renewal_function(law, down) - down / float(law.mean())


def cluster_node_failure_rate(scenario: Scenario) -> float:
    """Node failures per hour of the cluster's ``N`` groups (one node per group failure).

    ``N`` times :func:`mean_group_rate`: what feeds the spare pool.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=64, gpu_mtbf_hours=8000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48)
    >>> cluster_node_failure_rate(sc)
    0.128
    """
    return scenario.groups * mean_group_rate(scenario)


def pool_down_minutes(scenario: Scenario, restart_hours: float = math.inf) -> float:
    """Mean minutes from a group's failure until all its nodes are swapped in (with the pool).

    :func:`~spare_theory.lifetimes.spares.group_down_hours` at the cluster's
    node failure rate (:func:`cluster_node_failure_rate`), the nodes' mean
    repair ``repair_minutes``, ``spare_nodes`` and ``swap_minutes``, groups
    of ``nodes_per_group`` nodes among ``N nodes_per_group``; with global
    restarts ``restart_hours`` apart, which fill the slots still waiting
    (the nodes owed to the pool), the wait between them
    (:func:`~spare_theory.lifetimes.spares.spare_wait_hours`).  Group clocks
    of another law (one slot a group) wait as without restarts.

    Raises
    ------
    ValueError
        Naming ``spare_nodes`` for a scenario without a pool.

    Examples
    --------
    >>> sc = Scenario(gpus=2048 * 64, gpus_per_group=2048, gpu_mtbf_hours=8 * 5623.0,
    ...               restart_minutes=60, checkpoint_minutes=5, work_hours=720,
    ...               repair_minutes=133 * 60, spare_nodes=450, swap_minutes=30)
    >>> round(pool_down_minutes(sc), 1)
    30.5
    """
    if not scenario.pool:
        raise ValueError("spare_nodes: the scenario has no spare pool")
    repair = float(scenario.repair_minutes or 0.0) / 60.0
    swap = float(scenario.swap_minutes or 0.0)
    if not scenario.exponential and scenario.renewal == "group":
        return 60.0 * _group_clock_down_hours(scenario, repair, swap / 60.0)
    hours = group_down_hours(
        cluster_node_failure_rate(scenario),
        repair,
        int(scenario.spare_nodes or 0),
        swap_minutes=swap,
        group_nodes=scenario.nodes_per_group,
        nodes=scenario.groups * scenario.nodes_per_group,
        restart_every_hours=restart_hours,
    )
    return 60.0 * hours


def _group_clock_down_hours(scenario: Scenario, repair: float, swap: float) -> float:
    """The pool's down time when one group clock sends one node per outage (a fixed point).

    A group clock of a non-exponential law (``renewal="group"``) fires while
    its group waits for a node too, and those failures are absorbed in the
    outage (no node is sent, the outage is not extended): a group is one
    slot and an up group sends nodes at ``lambda / c`` (:func:`clustering`'s
    ``c = 1 + M(D) - D / m`` at its down time ``D``).  A group waiting for a
    node sends none, which thins the pool's arrivals exactly when it is
    short, so the nodes in repair ``n`` are the birth-death chain with births
    ``(N - (n - S)^+) lambda / c`` and deaths ``n / E[repair]`` (``S`` spares),
    not Poisson at ``N lambda``; ``D = swap + E[(n - S)^+] / (arrival rate)``
    by Little's law, ``D`` and ``c`` solved together by damped iteration
    from ``D = swap`` (``swap``, ``repair`` in hours).
    """
    law = scenario.group_lifetime_law
    spares, N = int(scenario.spare_nodes or 0), scenario.groups
    mean = float(law.mean())
    n = np.arange(spares + N + 1)
    waiting = np.maximum(n - spares, 0)
    down = swap
    for _ in range(200):
        up_rate = 1.0 / (mean * (1.0 + renewal_function(law, down, steps=800)) - down)
        births = (N - waiting[:-1]) * up_rate
        if repair > 0:
            log_pi = np.concatenate(([0.0], np.cumsum(np.log(births * repair / n[1:]))))
            pi = np.exp(log_pi - log_pi.max())
            pi /= pi.sum()
            wait = float(pi @ waiting) / float(pi @ ((N - waiting) * up_rate))
        else:
            wait = 0.0
        new = swap + wait
        if abs(new - down) <= 1e-9 * max(down, 1e-12):
            break
        down = 0.5 * (down + new)
    return float(down)
