"""Step-level failure sources beyond a law: a spare-node pool and a replayed failure log.

Both plug into :class:`~spare_theory.steps.runs.StepRun` without changing a
strategy's rules:

- :class:`PoolRepairTimes` is a :class:`~spare_theory.steps.runs.RepairTimes`
  whose worker is ready ``swap_seconds`` after its removal if the pool has
  a spare node, else ``swap_seconds`` after the next repaired node comes
  back (first come, first served); every removed worker's node returns to
  the pool after its repair (a draw of the scenario's repair law, or the
  log's outage).  A global restart makes every worker ready at once (the
  model's convention); the queue's nodes are owed to the pool (its count
  goes below 0 until repairs repay it), so a removal finds a spare exactly
  when fewer than ``spare_nodes`` nodes are in repair; nodes in repair stay
  in repair.  A worker of ``g = nodes_per_group`` nodes is ready when every
  slot it lost is filled: while it is down its other ``g - 1`` nodes keep
  failing, each at the per-node rate ``1 / (g E[L])`` of the worker's law
  as a Poisson stream (exact for the exponential law, whose group clock is
  the superposition of its nodes'), and each such failure sends its node to
  repair and needs a spare of its own (as the hour-level simulation's node
  slots, :mod:`spare_theory.hourly.sources`).  They are node failures, not
  worker failures: the run's failure count does not include them.  With a
  log's outages (``durations``) the log's own faults play the nodes.
- :class:`LogClocks` gives each worker the next fault of its nodes' replayed
  histories (node slots mapped onto a log's nodes as
  :class:`~spare_theory.hourly.sources.LogFaults` does: ``"identity"``,
  ``"bootstrap"``, ``"nodes"``), with the interface of
  :class:`~spare_theory.lifetimes.clocks.RenewalClocks` that the runs use:
  ``next[w]`` and ``renew(idx, at)``, which moves a worker to its first
  fault strictly after ``at`` (faults of its nodes at one instant are one
  failure) and keeps the length of the outage it consumed.

Nothing here uses a model.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Any

import numpy as np

from .._validation import as_seed_sequence, child_seed
from ..hourly.sources import FaultTable
from .runs import RepairTimes
from .scenario import StepScenario

__all__ = ["LogClocks", "PoolRepairTimes"]


class PoolRepairTimes(RepairTimes):
    """Repairs through a pool of ``spare_nodes`` spares (module docstring).

    Parameters
    ----------
    scenario : StepScenario
        ``spare_nodes``, ``swap_seconds``, ``nodes_per_group`` and the nodes' repair law.
    seed : int or numpy.random.SeedSequence
        The repair stream (the other nodes' failures draw from its child 1).
    durations : callable, optional
        Repair seconds of workers ``idx`` (a log's outages) instead of draws.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = replace(paper_scenario(4), repair_seconds=600.0, repair_law="fixed",
    ...              spare_nodes=1, swap_seconds=60.0)
    >>> pool = PoolRepairTimes(sc, 0)
    >>> pool.start(np.array([0, 1]), 0.0)  # one spare: worker 1 waits for worker 0's node
    >>> pool.due(60.0).tolist(), pool.due(659.0).tolist(), pool.due(660.0).tolist()
    ([0], [], [1])
    """

    def __init__(self, scenario: StepScenario, seed: Any, durations: Any = None) -> None:
        super().__init__(scenario, seed, durations)
        self.pool = int(scenario.spare_nodes or 0)
        self.swap = float(scenario.swap_seconds or 0.0)
        self.back: list[float] = []  # times at which repaired nodes come back, a heap
        self.waiting: deque[int] = deque()  # one entry per slot waiting for a node
        g = scenario.nodes_per_group
        #: Failure rate of a down worker's other nodes, per second (0: one node, or a log).
        self.others_per_second = (
            (g - 1) / (g * scenario.group_mean_lifetime_seconds) if durations is None else 0.0
        )
        self._others = np.random.default_rng(child_seed(as_seed_sequence(seed), 1))
        self.missing = np.zeros(scenario.groups, dtype=np.int64)  # slots without a node
        self.filled = np.full(scenario.groups, -np.inf)  # when the last assigned slot fills
        self.next_other = np.full(scenario.groups, np.inf)  # next failure of another node

    def _lose(self, w: int, at: float, repair_seconds: float) -> None:
        """Worker ``w`` loses a node at ``at``: a spare fills its slot, or the slot waits."""
        heapq.heappush(self.back, at + repair_seconds)
        if self.pool > 0:
            self.pool -= 1
            self.filled[w] = max(self.filled[w], at + self.swap)
        else:
            self.missing[w] += 1
            self.waiting.append(w)
        self.ready[w] = self.filled[w] if self.missing[w] == 0 else np.inf
        if self.others_per_second:
            self.next_other[w] = at + self._others.exponential(1.0 / self.others_per_second)

    def start(self, idx: np.ndarray, at: float) -> None:
        """Workers ``idx`` removed at ``at``: a spare each if any, else the queue."""
        idx = np.asarray(idx, dtype=np.int64)
        if not idx.size:
            return
        for w, d in zip(idx.tolist(), np.maximum(self.draw(idx), 0.0).tolist()):
            self._lose(w, at, d)

    def due(self, t: float) -> np.ndarray:
        """Workers ready by ``t``: the events up to ``t`` in time order, then the ready ones.

        The events are nodes back from repair (serving the queue first) and
        failures of a down worker's other nodes, which count only while the
        worker is still down.
        """
        while True:
            w = int(np.argmin(self.next_other))
            other = self.next_other[w]
            repaired = self.back[0] if self.back else np.inf
            if min(other, repaired) > t:
                break
            if repaired <= other:
                heapq.heappop(self.back)
                if self.waiting:
                    v = self.waiting.popleft()
                    self.missing[v] -= 1
                    self.filled[v] = max(self.filled[v], repaired + self.swap)
                    if self.missing[v] == 0:
                        self.ready[v] = self.filled[v]
                else:
                    self.pool += 1
            elif self.ready[w] <= other:  # the worker was back first
                self.next_other[w] = np.inf
            else:
                self._lose(w, other, float(np.maximum(self.draw(np.array([w])), 0.0)[0]))
        back = super().due(t)
        self.filled[back] = -np.inf
        self.next_other[back] = np.inf
        return back

    def clear(self) -> None:
        """A global restart makes every worker ready: the queue's nodes are owed to the pool."""
        super().clear()
        self.pool -= len(self.waiting)
        self.waiting.clear()
        self.missing[:] = 0
        self.filled[:] = -np.inf
        self.next_other[:] = np.inf


class LogClocks:
    """Each worker's next fault in a replayed log, seconds (module docstring).

    Worker ``w`` owns node slots ``w g .. w g + g - 1`` (``g =
    nodes_per_group``); slot ``s`` plays log node ``node[s]`` shifted by
    ``shift[s]`` (the mappings of :class:`~spare_theory.hourly.sources.LogFaults`).
    The faults of a worker's slots form one history of period ``W`` (the
    log's window).

    Parameters
    ----------
    table : FaultTable
        The log's faults (hours).
    groups, nodes_per_group : int
        Workers and nodes per worker.
    mapping : {"identity", "bootstrap", "nodes"}
        How slots take the log's nodes.
    rng : numpy.random.Generator
        The shifts' stream.

    Examples
    --------
    >>> table = FaultTable(np.array([1.0, 5.0]), np.array([0.5, 2.0]), np.array([0, 2]),
    ...                    np.array([2, 0]), 10.0)
    >>> clocks = LogClocks(table, 2, 1, "identity", np.random.default_rng(0))
    >>> first = clocks.next[0]
    >>> clocks.renew(0, first); bool(clocks.next[0] > first), clocks.consumed[0] in (1800.0, 7200.0)
    (True, True)
    >>> bool(np.isinf(clocks.next[1]))  # node 1 never fails
    True
    """

    def __init__(
        self,
        table: FaultTable,
        groups: int,
        nodes_per_group: int,
        mapping: str,
        rng: np.random.Generator,
    ) -> None:
        W = table.window_hours * 3600.0
        slots = groups * nodes_per_group
        node, shift = table.slot_histories(slots, mapping, rng, W)
        slot, k = table.slot_outages(node)
        owner = slot // nodes_per_group
        times = (table.starts[k] * 3600.0 - shift[slot]) % W
        order = np.lexsort((times, owner))
        owner, times, lengths = owner[order], times[order], table.durations[k][order] * 3600.0
        bounds = np.searchsorted(owner, np.arange(groups + 1))
        self.times = [times[bounds[w] : bounds[w + 1]] for w in range(groups)]
        self.lengths = [lengths[bounds[w] : bounds[w + 1]] for w in range(groups)]
        self.window = W
        self.next = np.full(groups, np.inf)
        self._index = np.zeros(groups, dtype=np.int64)
        #: Length of the outage each worker's last renewal consumed, seconds.
        self.consumed = np.zeros(groups)
        for w in range(groups):
            if self.times[w].size:
                self.next[w] = self.times[w][0]

    def _move(self, w: int, at: float) -> None:
        times = self.times[w]
        if not times.size:
            return
        self.consumed[w] = self.lengths[w][self._index[w]]
        period = math.floor(at / self.window)
        j = int(np.searchsorted(times, at - period * self.window, side="right"))
        if j == times.size:
            period, j = period + 1, 0
        self._index[w] = j
        self.next[w] = times[j] + period * self.window

    def renew(self, idx: np.ndarray | int, at: np.ndarray | float) -> None:
        """Move workers ``idx`` to their first fault after ``at``."""
        if np.ndim(idx):
            for w, a in zip(np.asarray(idx).tolist(), np.broadcast_to(at, np.shape(idx)).tolist()):
                self._move(int(w), float(a))
        else:
            self._move(int(idx), float(at))

    def durations(self, idx: np.ndarray) -> np.ndarray:
        """The log's outage lengths consumed by workers ``idx``, seconds (their repairs)."""
        return self.consumed[np.asarray(idx, dtype=np.int64)]
