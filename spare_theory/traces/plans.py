"""From a failure log to a scenario: every field the log sets, with where it came from.

:func:`log_scenario` (``FailureLog.scenario``) and :func:`log_step_scenario`
(``FailureLog.step_scenario``) build a plan's scenario from a log of
``L`` nodes for a cluster of ``gpus`` GPUs in groups of ``gpus_per_group``,
``g = gpus_per_group / gpus_per_node`` nodes each (a group fails when any
of its nodes does).  The returned scenario keeps a ``provenance`` field:
pairs ``(field, sentence)`` saying where each field set from the log came
from (``dict(scenario.provenance)``; ``dataclasses.replace`` carries it
along unchanged, so a field replaced afterwards no longer matches it).

What the log sets, in hours (``nu`` = :attr:`FailureLog.failure_rate`, failures
per node-hour up):

- **bursts** (``bursts=True``): the failures within ``burst_window_minutes``
  of another (:meth:`FailureLog.bursts`, share ``s``) become domain events:
  the nodes fail on their own at ``nu (1 - s)``, and each burst takes down
  the groups it hits.  The log has no topology (node ids are anonymous), so
  a burst's nodes are taken to be spread uniformly over one copy of the log
  laid on ``L`` consecutive node slots (the ``"bootstrap"`` replay), and a
  domain is the expected number of distinct groups a burst of the mean size
  hits, rounded (:func:`groups_hit`); the domain rate is set so that bursts
  cause as many group failures per hour as that expectation says;
- **lemons** (``lemons=True``): the two-class fit of per-node counts
  (:meth:`FailureLog.heterogeneity`: a share ``phi`` of nodes at ``c`` times
  the others' rate) becomes lemon *groups*.  A group of ``g`` nodes holds
  ``Binomial(g, phi)`` lemon nodes, so its rate has mean and variance that
  the scenario's two-class groups match with the same share ``phi`` and
  factor ``c_g = 1 + y / (1 - y phi)``, ``y = (c - 1) / (sqrt(g) (1 + (c - 1) phi))``
  (``c_g = c`` for one-node groups, near 1 for large groups);
- **the failure law**: ``law="exponential"`` at the groups' mean rate, or
  ``law="weibull"`` with the *shape* of :meth:`FailureLog.fit_lifetime` and
  the *rate* of ``nu``: the fitted Weibull's own mean is far above the node
  MTBF (5x on the shipped trace) because the pooled uptimes of very
  different nodes are heavy-tailed.  Under ``renewal="node"`` (default) each
  node keeps a Weibull renewal clock of mean ``1 / nu`` (of an ordinary
  node) and a group fails at the first of its nodes' clocks, at ``g`` times
  the node rate; ``renewal="group"`` is the published convention (the group
  law is the minimum of ``g`` node laws, drawn afresh at each failure),
  which for shape ``k < 1`` makes a group fail ``g^(1/k - 1)`` times as
  often as its nodes do (a group of 256 nodes at ``k = 0.39``: every 13 s).
  The per-GPU convention of :class:`~spare_theory.hourly.scenario.Scenario`
  holds either way: a node is the first of its ``gpus_per_node`` GPUs;
- **repairs**: ``repair_minutes`` is the log's mean outage (the censored
  exponential fit's mean, exact for complete logs) and ``repair_law`` a
  lognormal matched to the log's median and mean outage (the censored
  maximum-likelihood lognormal is dominated by its tail: on the shipped
  trace its mean is 793 h against the log's 133 h).  With ``spare_nodes``
  these are the nodes' repairs (the pool then sets a group's down time).

The spare pools a log needs are in :mod:`spare_theory.traces.pools`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from .._validation import as_choice, as_count, as_real
from ..hourly.scenario import Scenario
from ..lifetimes.fitting import kaplan_meier
from ..steps.scenario import StepScenario
from .pools import mean_repair_hours

__all__ = [
    "LOG_LAWS",
    "LOG_REPAIR_LAWS",
    "groups_hit",
    "log_scenario",
    "log_step_scenario",
]

#: Failure laws a log's scenario takes (``law=``).
LOG_LAWS = ("exponential", "weibull")
#: Repair laws a log's scenario takes (``repair_law=``).
LOG_REPAIR_LAWS = ("lognormal", "exponential")

# Fields the log sets: refused among the pass-through keywords.
_FROM_LOG = (
    "gpu_mtbf_hours",
    "failure_law",
    "weibull_shape",
    "renewal",
    "lemon_fraction",
    "lemon_rate_factor",
    "domain_size",
    "domain_mtbf_hours",
    "repair_minutes",
    "repair_law",
)


def groups_hit(slots: int, group_nodes: int, burst: float) -> float:
    """Expected distinct groups hit by a burst of ``burst`` nodes spread over ``slots`` slots.

    The ``slots`` consecutive node slots of one copy of a log start at a
    uniformly random offset against the group boundaries (groups of
    ``group_nodes`` slots); a group overlapping ``c`` of them is hit with
    probability ``1 - (1 - c / slots)^burst`` (nodes drawn independently).

    Parameters
    ----------
    slots : int
        Nodes of the log, ``>= 1``.
    group_nodes : int
        Nodes per group, ``>= 1``.
    burst : float
        Nodes of a burst, ``>= 1`` (a mean size may be fractional).

    Returns
    -------
    float

    Examples
    --------
    >>> round(groups_hit(400, 1, 2.93), 3), round(groups_hit(400, 256, 2.93), 3)
    (2.923, 1.753)
    """
    L = as_count(slots, "slots")
    g = as_count(group_nodes, "group_nodes")
    b = as_real(burst, "burst", minimum=1.0)
    total = 0.0
    for offset in range(min(g, L) if g <= L else g):
        first = min(g - offset, L)
        rest = L - first
        pieces = [first] + [g] * (rest // g) + ([rest % g] if rest % g else [])
        c = np.asarray(pieces, dtype=float)
        total += float(np.sum(1.0 - (1.0 - c / L) ** b))
    return total / (min(g, L) if g <= L else g)


def _repairs(log: Any, repair_law: str, unit: float) -> tuple[dict[str, Any], dict[str, str]]:
    """``repair_<unit>`` and ``repair_law`` from the log (``unit``: minutes or seconds per hour)."""
    durations, observed = log.repairs()
    if durations.size == 0:
        return {}, {}
    mean = mean_repair_hours(log)
    if mean is None:
        return {}, {"repair_minutes": "none: no outage of the log ends within its window"}
    name = "repair_minutes" if unit == 60.0 else "repair_seconds"
    done = durations[observed]
    note_mean = f"the log's mean outage, {mean:.4g} h ({observed.sum()} repairs" + (
        f", {int((~observed).sum())} censored: the censored exponential fit's mean)"
        if (~observed).any()
        else ")"
    )
    provenance = {name: note_mean}
    law: Any = "exponential"
    if repair_law == "lognormal":
        resolution = log.time_resolution_hours if (durations == 0).any() else None
        estimate = kaplan_meier(durations, observed, resolution=resolution).sf
        below = np.flatnonzero(estimate.probabilities <= 0.5)
        median = float(estimate.quantiles[below[0]]) if below.size else float(np.median(done))
        if 0 < median < mean:
            sigma = math.sqrt(2.0 * math.log(mean / median))
            law = stats.lognorm(sigma, scale=unit * median)
            fitted = log.fit_repair("lognormal")
            provenance["repair_law"] = (
                f"lognormal matched to the log's median outage {median:.4g} h (Kaplan-Meier) and "
                f"mean {mean:.4g} h: sigma {sigma:.3g}; the censored maximum-likelihood "
                f"lognormal (sigma {fitted.parameters['sigma']:.3g}) has a mean of "
                f"{fitted.mean_hours:.4g} h, set by its tail"
            )
        else:
            provenance["repair_law"] = (
                f"exponential: the log's median outage ({median:.4g} h) is not below its mean"
            )
    else:
        provenance["repair_law"] = "exponential of the log's mean outage (as asked)"
    return {name: mean * unit, "repair_law": law}, provenance


def _node_rates(
    log: Any, group_nodes: int, *, lemons: bool, bursts: bool, burst_window_minutes: float
) -> dict[str, Any]:
    """The groups' independent rate, lemons and the bursts' share from the log."""
    if log.failures == 0:
        fit = log.fit_lifetime("exponential")
        raise ValueError(
            "the log has no failures: no rate to plan with (the rate is below "
            f"{fit.rate_upper_bound_per_hour:.3g} per node-hour at 95 %)"
        )
    nu, g = log.failure_rate, group_nodes
    out: dict[str, Any] = {"nu": nu, "share": 0.0, "burst": None}
    if bursts:
        b = log.bursts(window_minutes=burst_window_minutes)
        if b.bursts:
            out.update(share=b.share, burst=b)
    out["independent"] = nu * (1.0 - out["share"])
    out["phi"], out["c"], out["c_group"] = 0.0, 1.0, 1.0
    if lemons and log.node_count > 1:
        h = log.heterogeneity()
        phi, c = h.lemon_fraction, h.lemon_rate_factor
        if h.aic_lemons < h.aic_poisson and c > 1:
            y = (c - 1.0) / (math.sqrt(g) * (1.0 + (c - 1.0) * phi))
            out.update(phi=phi, c=c, c_group=1.0 + y / (1.0 - y * phi), heterogeneity=h)
    # An ordinary group's rate: the mean rate g nu_ind over the lemon mixture's mean factor.
    out["ordinary"] = g * out["independent"] / (1.0 + (out["c_group"] - 1.0) * out["phi"])
    return out


def log_scenario(
    log: Any,
    *,
    gpus: int,
    gpus_per_group: int,
    gpus_per_node: int = 8,
    law: str = "weibull",
    renewal: str = "node",
    lemons: bool = True,
    bursts: bool = True,
    burst_window_minutes: float = 5.0,
    repair_law: str = "lognormal",
    **fields: Any,
) -> Scenario:
    """The hour-level scenario of a cluster whose nodes fail as the log's do (module docstring).

    Parameters
    ----------
    log : FailureLog
        The log (``L`` nodes).
    gpus, gpus_per_group : int
        The cluster to plan, as :class:`~spare_theory.hourly.scenario.Scenario`.
    gpus_per_node : int
        GPUs per node (a log's row is a node), dividing ``gpus_per_group``.
    law : {"exponential", "weibull"}
        The lifetime law: exponential at the log's rate, or Weibull of the
        fitted shape at the log's rate.
    renewal : {"node", "group"}
        Whose clocks renew under a Weibull law (module docstring).
    lemons, bursts : bool
        Take the two-class lemons and the bursts (as failure domains) from the log.
    burst_window_minutes : float
        Failures closer than this are one burst (default 5).
    repair_law : {"lognormal", "exponential"}
        Shape of the repair law (its mean is the log's).
    **fields
        The other Scenario fields (``restart_minutes``, ``checkpoint_minutes``,
        ``work_hours``, ``spare_nodes``, ``swap_minutes``, ...); not those the
        log sets.

    Returns
    -------
    Scenario
        With ``provenance``: ``(field, sentence)`` pairs.

    Raises
    ------
    ValueError
        Naming the argument: a field the log sets, a ``gpus_per_node`` that
        does not divide ``gpus_per_group``, an unknown law, a log without
        failures.

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> log = infinitehbd_failure_log()
    >>> sc = log.scenario(gpus=100_000, gpus_per_group=2048, restart_minutes=60,
    ...                   checkpoint_minutes=5, work_hours=720, spare_nodes=400, swap_minutes=30)
    >>> sc.groups, sc.failure_law, round(sc.weibull_shape, 3), sc.domain_size
    (48, 'weibull', 0.388, 2)
    >>> round(sc.group_failure_rate_per_hour, 4), round(sc.repair_minutes / 60, 1)
    (0.0339, 133.3)
    >>> print(dict(sc.provenance)["lemon_fraction"][:56])
    two-class fit of per-node counts (AIC 1355 against 1569
    """
    law = as_choice(law, "law", LOG_LAWS)
    renewal = as_choice(renewal, "renewal", ("node", "group"))
    repair_law = as_choice(repair_law, "repair_law", LOG_REPAIR_LAWS)
    given = sorted(set(fields) & set(_FROM_LOG))
    if given:
        raise ValueError(
            f"{', '.join(given)}: set from the log (use law=, renewal=, lemons=, bursts=, "
            "repair_law=, or dataclasses.replace on the result)"
        )
    gpus = as_count(gpus, "gpus")
    per_group = as_count(gpus_per_group, "gpus_per_group", maximum=gpus)
    per_node = as_count(gpus_per_node, "gpus_per_node", maximum=per_group)
    if per_group % per_node:
        raise ValueError(
            f"gpus_per_node={per_node} must divide gpus_per_group={per_group}: a group is "
            "whole nodes"
        )
    g = per_group // per_node
    N = gpus // per_group
    rates = _node_rates(
        log, g, lemons=lemons, bursts=bursts, burst_window_minutes=burst_window_minutes
    )
    out: dict[str, Any] = {"gpus_per_node": per_node}
    notes: dict[str, str] = {}
    lam = rates["ordinary"]  # an ordinary group's independent failures per hour
    node_mtbf = g / lam  # an ordinary node's mean lifetime under node clocks
    head = (
        f"the log's rate {rates['nu']:.4g} per node-hour ({log.failures} failures in "
        f"{log.exposure_hours:.4g} node-hours up)"
    )
    if rates["share"]:
        head += f", less the {rates['share']:.1%} in bursts"
    if rates["phi"]:
        head += f", over the lemons' mean factor {1 + (rates['c_group'] - 1) * rates['phi']:.4g}"
    if law == "exponential":
        out["gpu_mtbf_hours"] = per_group / lam
        notes["gpu_mtbf_hours"] = (
            f"{per_group} GPUs per group over an ordinary group's rate {lam:.4g} /h: " + head
        )
        notes["failure_law"] = "exponential (as asked): a node's MTBF from the log's rate"
    else:
        fit = log.fit_lifetime("weibull")
        k = float(fit.parameters["shape"])
        # A node is the first of per_node Weibull GPUs: E[node] = E[GPU] per_node^(-1/k).
        if renewal == "node":
            node_mean = node_mtbf
            group_note = f"a group fails at the first of its {g} nodes' clocks, at {lam:.4g} /h"
        else:
            node_mean = 1.0 / (rates["independent"])
            group_mean = node_mean * g ** (-1.0 / k)
            group_note = (
                f"the group law is the minimum of {g} node laws, mean {group_mean:.4g} h: "
                f"{g ** (1.0 / k - 1.0):.4g} times the rate of its nodes"
            )
        out.update(
            failure_law="weibull",
            weibull_shape=k,
            gpu_mtbf_hours=node_mean * per_node ** (1.0 / k),
            renewal=renewal,
        )
        notes["weibull_shape"] = (
            f"the shape of the Weibull fitted to the log's uptimes (censored MLE, "
            f"95 % CI {fit.confidence_intervals['shape'][0]:.3g}-"
            f"{fit.confidence_intervals['shape'][1]:.3g}); only the shape: the fit's own mean "
            f"{fit.mean_hours:.4g} h is {fit.mean_hours * rates['nu']:.3g} times the node MTBF"
        )
        notes["gpu_mtbf_hours"] = (
            f"a GPU's mean such that a node (first of {per_node} Weibull GPUs) has mean "
            f"{node_mean:.4g} h: " + head
        )
        notes["failure_law"] = "weibull (as asked), shape from the fit, rate from the log"
        notes["renewal"] = f"{renewal} clocks: " + group_note
    if rates["phi"]:
        h = rates["heterogeneity"]
        out.update(lemon_fraction=rates["phi"], lemon_rate_factor=rates["c_group"])
        notes["lemon_fraction"] = (
            f"two-class fit of per-node counts (AIC {h.aic_lemons:.4g} against "
            f"{h.aic_poisson:.4g} for one rate; dispersion {h.dispersion_index:.3g}): "
            f"{rates['phi']:.1%} of nodes at {rates['c']:.3g} times the others' rate"
        )
        notes["lemon_rate_factor"] = (
            f"{rates['c_group']:.4g}: groups of {g} nodes hold Binomial({g}, "
            f"{rates['phi']:.3g}) lemon nodes; two-class groups of share {rates['phi']:.3g} "
            "with this factor match the mean and variance of their rates"
        )
    if rates["burst"] is not None:
        b = rates["burst"]
        hit = groups_hit(log.node_count, g, max(b.mean_burst_size, 1.0))
        m = max(1, min(round(hit), N))
        D = -(-N // m)
        nodes = N * g
        # Group failures per hour from bursts: nodes x bursts per node-hour x groups hit.
        per_hour = nodes * (b.bursts / log.exposure_hours) * hit
        out.update(domain_size=m, domain_mtbf_hours=D * m / per_hour)
        notes["domain_size"] = (
            f"{m} groups: a burst of the mean size {b.mean_burst_size:.3g} nodes "
            f"({b.bursts} bursts within {b.window_minutes:g} min hold {b.share:.1%} of the "
            f"failures) hits {hit:.3g} groups of {g} nodes on average when spread over one "
            f"copy of the log's {log.node_count} nodes (no topology in the log)"
        )
        notes["domain_mtbf_hours"] = (
            f"{D} domains fail {per_hour / m:.4g} times per hour together: the log's "
            f"{b.bursts / log.exposure_hours * nodes:.4g} bursts per hour on {nodes} nodes, "
            f"each {hit:.3g} group failures"
        )
    repairs, repair_notes = _repairs(log, repair_law, 60.0)
    out.update(repairs)
    notes.update(repair_notes)
    provenance = tuple(sorted(notes.items()))
    return Scenario(gpus=gpus, gpus_per_group=per_group, **out, **fields, provenance=provenance)


def log_step_scenario(
    log: Any,
    *,
    gpus: int,
    gpus_per_group: int,
    gpus_per_node: int = 8,
    law: str = "weibull",
    renewal: str = "node",
    repair_law: str = "lognormal",
    **fields: Any,
) -> StepScenario:
    """The step-level scenario of a cluster whose nodes fail as the log's do.

    ``groups = gpus // gpus_per_group`` workers of ``g`` nodes each.  The
    step-level simulator renews a worker's clock as a whole at each noticed
    failure, so its law is the group's: exponential at ``g`` times the log's
    rate, or Weibull of the fitted shape with that mean (``renewal="node"``,
    the rate the group's nodes have together), or the minimum of ``g`` node
    laws (``renewal="group"``, ``g^(1/k - 1)`` times that rate).  A
    StepScenario has no lemon or domain fields: the provenance says so, and
    :func:`spare_theory.replay_training` on it plays them from the log.
    Repairs as :func:`log_scenario` (seconds).

    Parameters
    ----------
    log : FailureLog
        The log.
    gpus, gpus_per_group, gpus_per_node, law, renewal, repair_law
        As :func:`log_scenario`.
    **fields
        The other StepScenario fields (``steps``, ``allreduce_seconds``,
        ``spare_nodes``, ``swap_seconds``, ...).

    Returns
    -------
    StepScenario
        With ``provenance``.

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> sc = infinitehbd_failure_log().step_scenario(gpus=100_000, gpus_per_group=2048,
    ...                                              steps=100, allreduce_seconds=1.0)
    >>> sc.groups, sc.nodes_per_group, round(sc.group_mean_lifetime_seconds / 3600, 2)
    (48, 256, 21.97)
    """
    law = as_choice(law, "law", LOG_LAWS)
    renewal = as_choice(renewal, "renewal", ("node", "group"))
    repair_law = as_choice(repair_law, "repair_law", LOG_REPAIR_LAWS)
    given = sorted(set(fields) & {"failure_law", "repair_seconds", "repair_law", "groups"})
    if given:
        raise ValueError(f"{', '.join(given)}: set from the log")
    gpus = as_count(gpus, "gpus")
    per_group = as_count(gpus_per_group, "gpus_per_group", maximum=gpus)
    per_node = as_count(gpus_per_node, "gpus_per_node", maximum=per_group)
    if per_group % per_node:
        raise ValueError(f"gpus_per_node={per_node} must divide gpus_per_group={per_group}")
    g = per_group // per_node
    rates = _node_rates(log, g, lemons=False, bursts=False, burst_window_minutes=0.0)
    mean_s = 3600.0 / (g * rates["nu"])
    notes = {
        "lemons": "not represented: a StepScenario has no lemon fields (the replay plays them)",
        "bursts": "not represented: a StepScenario has no domain fields (the replay plays them)",
    }
    if law == "exponential":
        failure = stats.expon(scale=mean_s)
        notes["failure_law"] = (
            f"exponential of mean {mean_s / 3600:.4g} h: {g} nodes at the log's rate "
            f"{rates['nu']:.4g} per node-hour"
        )
    else:
        k = float(log.fit_lifetime("weibull").parameters["shape"])
        mean = mean_s if renewal == "node" else g ** (1.0 - 1.0 / k) * mean_s
        failure = stats.weibull_min(k, scale=mean / math.gamma(1.0 + 1.0 / k))
        notes["failure_law"] = (
            f"Weibull of the fitted shape {k:.3g}, mean {mean / 3600:.4g} h: "
            + (
                f"the rate of {g} nodes at the log's rate (a worker's clock renews as a whole)"
                if renewal == "node"
                else f"the minimum of {g} node laws of the log's mean"
            )
        )
    repairs, repair_notes = _repairs(log, repair_law, 3600.0)
    notes.update(repair_notes)
    return StepScenario(
        groups=gpus // per_group,
        failure_law=failure,
        gpus_per_group=per_group,
        gpus_per_node=per_node,
        **repairs,
        **fields,
        provenance=tuple(sorted(notes.items())),
    )
