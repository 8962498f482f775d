"""The spare pools a failure log needs, and its outages as a replay reads them.

:func:`log_spares`, the spare counts that keep the pool's
shortage probability under a target (Poisson counts of nodes in repair,
Palm's theorem), and :func:`replayed_shortage`, the share of failures that
find the pool empty when the log itself is replayed, which bursts and
lemons raise above the Poisson figure.

:func:`fault_table` lays the log's outages out per node for the replays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .._validation import as_choice, as_count, as_real, as_seed_sequence, child_seed
from ..hourly.sources import FaultTable
from ..lifetimes.spares import shortage_probability, spares_for_shortage

__all__ = ["fault_table", "log_spares", "mean_repair_hours", "replayed_shortage", "replayed_spares"]


def mean_repair_hours(log: Any) -> float | None:
    """The log's mean outage in hours, ``None`` when no outage ends in the window.

    The censored exponential's maximum-likelihood mean, exactly: the time
    in repair (censored outages to the window's end) over the repairs seen.

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> round(mean_repair_hours(infinitehbd_failure_log()), 2)
    133.25
    """
    durations, observed = log.repairs()
    return float(durations.sum() / observed.sum()) if observed.any() else None


def log_spares(log: Any, *, gpus: int, gpus_per_node: int = 8, probability: float) -> int:
    """The fewest spare nodes that keep the shortage probability at or under ``probability``.

    The ``gpus / gpus_per_node`` nodes fail at the log's rate and stay in
    repair for the log's mean outage; the nodes in repair are then Poisson
    (Palm's theorem), :func:`~spare_theory.lifetimes.spares.spares_for_shortage`.
    Bursts and lemons make the count over-dispersed, so this is a lower bound
    in practice (:func:`replayed_shortage` measures it on the log).

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> log = infinitehbd_failure_log()
    >>> log_spares(log, gpus=100_000, probability=0.01), log_spares(log, gpus=600_000,
    ...                                                              probability=0.001)
    (338, 1910)
    """
    nodes = as_count(gpus, "gpus") // as_count(gpus_per_node, "gpus_per_node")
    mean = mean_repair_hours(log)
    if mean is None:
        raise ValueError("log: no outage ends within the log's window, so no repair time")
    return spares_for_shortage(nodes * log.failure_rate, mean, probability)


def _in_repair_at_failures(
    log: Any, nodes: int, trials: int, seed: Any, mapping: str
) -> list[np.ndarray]:
    """Per trial, the outages under way at each failure of a replayed cluster of ``nodes``."""
    table = fault_table(log)
    W = table.window_hours
    root = as_seed_sequence(seed)
    out = []
    for i in range(trials):
        rng = np.random.default_rng(child_seed(root, i))
        node, shift = table.slot_histories(nodes, mapping, rng, W)
        # Every outage of every slot, on the circle of length W.
        slot, k = table.slot_outages(node)
        start = (table.starts[k] - shift[slot]) % W
        ends = start + np.minimum(table.durations[k], W)
        # Under way at a start: starts before it less ends before it, on the unrolled
        # circle (an outage crossing W counts from 0 too); itself excluded.
        starts_all = np.sort(np.concatenate([start, start - W]))
        ends_all = np.sort(np.concatenate([ends, ends - W]))
        out.append(
            np.searchsorted(starts_all, start, side="left")
            - np.searchsorted(ends_all, start, side="right")
        )
    return out


def replayed_shortage(
    log: Any,
    *,
    gpus: int,
    gpus_per_node: int = 8,
    spare_nodes: Any,
    trials: int,
    seed: Any,
    mapping: str = "bootstrap",
) -> tuple[Any, Any, Any]:
    """The share of failures that find ``spare_nodes`` or more nodes in repair, on the log.

    The cluster's ``gpus / gpus_per_node`` nodes replay the log's histories
    (``mapping`` as :func:`spare_theory.replay_training`: ``"bootstrap"``
    copies of the whole log, ``"nodes"`` single histories), each copy at its
    own uniform shift, over one period of the log's window; a failure finds
    the pool empty when ``spare_nodes`` or more of the cluster's outages are
    under way (a node in repair, whatever the pool does: its length is the
    log's), the pool's rule in the simulations and the model.  Trial ``i``
    draws its shifts from ``child_seed(seed, i)``.

    Parameters
    ----------
    log : FailureLog
        The log.
    gpus, gpus_per_node : int
        The cluster's GPUs and GPUs per node.
    spare_nodes : int or array_like of int
        Pool sizes ``S >= 0``.
    trials : int
        Replays, ``>= 2``.
    seed : int or numpy.random.SeedSequence
        Seed.
    mapping : {"bootstrap", "nodes"}
        How nodes take the log's histories.

    Returns
    -------
    (share, standard error, Poisson figure)
        Floats for one ``spare_nodes``, arrays otherwise; the Poisson figure
        is :func:`~spare_theory.lifetimes.spares.shortage_probability` at the
        log's rate and mean repair.

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> share, se, poisson = replayed_shortage(infinitehbd_failure_log(), gpus=100_000,
    ...                                        spare_nodes=338, trials=4, seed=0)
    >>> round(poisson, 4), round(share, 3), round(se, 3)  # bursts and long repairs: 13x
    (0.0092, 0.119, 0.02)
    """
    nodes = as_count(gpus, "gpus") // as_count(gpus_per_node, "gpus_per_node")
    spares = np.atleast_1d(np.asarray(spare_nodes))
    spares = np.array([as_count(x, "spare_nodes", minimum=0) for x in spares.tolist()])
    trials = as_count(trials, "trials", minimum=2)
    mapping = as_choice(mapping, "mapping", ("bootstrap", "nodes"))
    counts = _in_repair_at_failures(log, nodes, trials, seed, mapping)
    shares = np.array([[np.mean(c >= S) for S in spares.tolist()] for c in counts])
    mean = shares.mean(axis=0)
    se = shares.std(axis=0, ddof=1) / math.sqrt(trials)
    poisson = np.asarray(
        shortage_probability(
            nodes * log.failure_rate, log.fit_repair("exponential").mean_hours, spares
        ),
        dtype=float,
    )
    if np.ndim(spare_nodes) == 0:
        return float(mean[0]), float(se[0]), float(poisson[0])
    return mean, se, poisson


def replayed_spares(
    log: Any,
    *,
    gpus: int,
    gpus_per_node: int = 8,
    probability: float,
    trials: int,
    seed: Any,
    mapping: str = "bootstrap",
) -> int:
    """The fewest spares whose replayed shortage share (:func:`replayed_shortage`) is ``<= p``.

    The mean over ``trials`` replays; every pool size is read off the same
    replays (the outages under way at each failure).

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> replayed_spares(infinitehbd_failure_log(), gpus=100_000, probability=0.01, trials=4,
    ...                 seed=0)
    379
    """
    nodes = as_count(gpus, "gpus") // as_count(gpus_per_node, "gpus_per_node")
    p = as_real(probability, "probability", minimum=0.0, strict_minimum=True, maximum=1.0)
    trials = as_count(trials, "trials", minimum=2)
    mapping = as_choice(mapping, "mapping", ("bootstrap", "nodes"))
    counts = _in_repair_at_failures(log, nodes, trials, seed, mapping)
    # share(S) = mean over trials of P(count >= S): the least S at or under p.
    grid = np.arange(int(max(c.max() for c in counts)) + 2)
    share = np.mean(
        [1.0 - np.searchsorted(np.sort(c), grid, side="left") / c.size for c in counts], axis=0
    )
    return int(np.argmax(share <= p))


def fault_table(log: Any) -> FaultTable:
    """The log's outages per node as the replay reads them (a ``FaultTable``).

    Nodes in the log's order (its labels sorted, then the nodes that never
    failed); an outage still under way at the window's end lasts to it.

    Examples
    --------
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> t = fault_table(infinitehbd_failure_log())
    >>> t.nodes, t.outages, int((t.counts == 0).sum())
    (400, 582, 169)
    """
    outages = log.outages()
    codes, _ = pd.factorize(outages["node"], sort=True)
    counts = np.bincount(codes, minlength=log.node_count)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    order = np.lexsort((outages["start_hours"].to_numpy(), codes))
    start = outages["start_hours"].to_numpy()[order]
    end = outages["end_hours"].to_numpy()[order]
    return FaultTable(start, end - start, offsets, counts, float(log.window_hours))
