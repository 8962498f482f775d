"""Failures of node slots for the hour-level event simulation: laws, domains, spares, a log.

The simulation (:mod:`spare_theory.hourly.simulation`) asks a *failure
source* when the next group fails and which.  Its two plain sources (one
exponential clock for all groups, or one renewal clock per group) stay
there; :class:`NodeWorld` is the source for everything else, one object per
run that outlives the restarts:

- **slots**: the cluster's ``N g`` node slots, ``g = gpus_per_group /
  gpus_per_node`` per group (``g = 1``, one slot per group, when nothing
  needs nodes: lemons or domains alone); a group fails when one of its slots
  does while the group is whole, and a slot's fault while its group is
  already down keeps the group down longer;
- **fault times** of the slots, either from the scenario's law
  (:class:`ClockFaults`: a renewal clock per slot started in equilibrium,
  never reset at a restart and renewed silently while the slot waits, as the
  group clocks of the plain source; a lemon group's clocks run
  ``lemon_rate_factor`` times as fast, its lemons drawn once per run as
  :func:`~spare_theory.stacking.domains_sim.lemon_rates` does; every failure
  domain of ``domain_size`` groups also fails as a whole at rate
  ``1 / domain_mtbf_hours``, taking one slot of each of its whole groups, the
  first one up) or from a failure log (:class:`LogFaults`: the log's own
  fault times, each slot a shifted copy of one log node's history, wrapping
  around the log's end; :data:`MAPPINGS`);
- **repairs**: a failed slot is filled after the scenario's repair time
  (``repair_minutes``, a group repair as without nodes), or after the log's
  own outage length (``repairs="log"``), or through the **spare pool**
  (``spare_nodes``): the slot is filled ``swap_minutes`` after its failure
  if the pool has a spare, else it waits, first come first served, for the
  next repaired node, and every failed node returns to the pool after its
  repair.  Without repairs a failed slot waits for the next global restart.

A global restart makes every group whole at once (the convention of the
model: the scheduler places the job on healthy nodes); the nodes of the
slots still waiting for one are owed to the pool (its count goes below 0
and the next repaired nodes repay it), so that a failure finds a spare
exactly when fewer than ``spare_nodes`` nodes are in repair, as in the
model.  Nodes in repair stay in repair, and the fault times go on (they
belong to the slots).  Nothing here uses a model: only the scenario's
fields, the repair-time quantiles of :mod:`~spare_theory.hourly.repairs_sim`
and the lemon and domain labels of layers 2 and 3.

The module is about 600 lines, not split: :class:`NodeWorld` reads the fault
sources' state directly in the event loop's hot path (per-event overhead is
what replays cost), so the sources and the world it drives stay together.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from heapq import heapify, heappop, heappush, heapreplace
from typing import Any

import numpy as np
from scipy import stats

from .._validation import as_choice
from ..lifetimes.laws import equilibrium_law, memoryless
from ..stacking.domains_sim import lemon_rates
from ..wipeout.domains import failure_domains
from .repairs_sim import repair_hours
from .scenario import Scenario

__all__ = [
    "MAPPINGS",
    "REPLAY_REPAIRS",
    "ClockFaults",
    "FaultTable",
    "LogFaults",
    "NodeWorld",
    "Replay",
    "needs_nodes",
]

#: How the slots of a cluster take the histories of a log's nodes (:class:`LogFaults`).
MAPPINGS = ("identity", "bootstrap", "nodes")
#: Where a replayed slot's repair time comes from: the log's outage, or the scenario.
REPLAY_REPAIRS = ("log", "scenario")

# Lifetimes drawn from a law at once.
_BATCH = 1024


@dataclass(frozen=True)
class FaultTable:
    """A failure log's faults per node, in hours from the window's start (what a replay reads).

    Attributes
    ----------
    starts, durations : numpy.ndarray
        Each outage's start and length (censored ones to the window's end),
        grouped by node and sorted by start within a node.
    offsets, counts : numpy.ndarray
        Where each node's outages sit in ``starts`` and how many it has (0
        for a node that never failed).
    window_hours : float
        Length of the log's window: the period of a replayed history.

    Examples
    --------
    >>> t = FaultTable(np.array([1.0, 5.0, 2.0]), np.array([0.5, 1.0, 3.0]),
    ...                np.array([0, 2, 3]), np.array([2, 1, 0]), 10.0)
    >>> t.nodes, t.outages
    (3, 3)
    """

    starts: np.ndarray
    durations: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    window_hours: float

    @property
    def nodes(self) -> int:
        """Nodes of the log, those that never failed included."""
        return int(self.counts.size)

    @property
    def outages(self) -> int:
        """Outages of the log."""
        return int(self.starts.size)

    def slot_histories(
        self, slots: int, mapping: str, rng: np.random.Generator, window: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The log node each of ``slots`` node slots replays, and its shift in ``[0, window)``.

        ``window`` is the log's window in the caller's unit (the shifts are
        drawn in it).  ``"identity"``: slot ``i`` is node ``i``, one shift for
        all; ``"bootstrap"``: copies of the whole log, one shift per copy;
        ``"nodes"``: nodes drawn with replacement, one shift each.

        Examples
        --------
        >>> t = FaultTable(np.array([1.0]), np.array([0.5]), np.array([0, 1]),
        ...                np.array([1, 0]), 10.0)
        >>> node, shift = t.slot_histories(5, "bootstrap", np.random.default_rng(0), 10.0)
        >>> node.tolist(), bool(shift[0] == shift[1] != shift[2])
        ([0, 1, 0, 1, 0], True)
        """
        L = self.nodes
        if mapping == "identity":
            if slots != L:
                raise ValueError(
                    f"mapping='identity' needs as many node slots as the log has nodes ({L}), "
                    f"got {slots}: use 'bootstrap' or 'nodes'"
                )
            return np.arange(slots), np.full(slots, rng.uniform(0.0, window))
        if mapping == "bootstrap":
            copies = rng.uniform(0.0, window, -(-slots // L))
            return np.arange(slots) % L, copies[np.arange(slots) // L]
        node = rng.integers(L, size=slots)
        return node, rng.uniform(0.0, window, slots)

    def slot_outages(self, node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every outage of every slot: ``(slot, k)``, slot-major, ``k`` indexing ``starts``.

        Examples
        --------
        >>> t = FaultTable(np.array([1.0, 5.0, 2.0]), np.array([0.5, 1.0, 3.0]),
        ...                np.array([0, 2, 3]), np.array([2, 1, 0]), 10.0)
        >>> [a.tolist() for a in t.slot_outages(np.array([1, 0, 2]))]
        [[0, 1, 1], [2, 0, 1]]
        """
        per_slot = self.counts[node]
        slot = np.repeat(np.arange(node.size), per_slot)
        within = np.arange(slot.size) - np.repeat(np.cumsum(per_slot) - per_slot, per_slot)
        return slot, np.repeat(self.offsets[node], per_slot) + within


@dataclass(frozen=True)
class Replay:
    """A replay of a log in the event simulation: its faults, the mapping, the repairs.

    Attributes
    ----------
    table : FaultTable
        The log's faults.
    mapping : {"identity", "bootstrap", "nodes"}
        :data:`MAPPINGS` (:class:`LogFaults`).
    repairs : {"log", "scenario"}
        A slot is filled after the log's outage length (or through the pool
        with the log's repair times), or after the scenario's repair fields
        decide (none: down until the next global restart).

    Examples
    --------
    >>> table = FaultTable(np.array([1.0]), np.array([0.5]), np.array([0]), np.array([1]), 10.0)
    >>> Replay(table, "bootstrap", "log").repairs
    'log'
    """

    table: FaultTable
    mapping: str = "bootstrap"
    repairs: str = "log"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mapping", as_choice(self.mapping, "mapping", MAPPINGS))
        object.__setattr__(self, "repairs", as_choice(self.repairs, "repairs", REPLAY_REPAIRS))


def needs_nodes(scenario: Scenario) -> bool:
    """Whether the plain sources cannot play ``scenario`` (lemons, domains, node clocks, a pool).

    Examples
    --------
    >>> sc = Scenario(gpus=64, gpus_per_group=8, restart_minutes=1, checkpoint_minutes=1,
    ...               work_hours=1)
    >>> needs_nodes(sc), needs_nodes(Scenario(**{**vars(sc), "lemon_fraction": 0.1,
    ...                                          "lemon_rate_factor": 3.0}))
    (False, True)
    """
    return (
        scenario.pool
        or scenario.domain_size is not None
        or (scenario.lemon_fraction > 0 and scenario.lemon_rate_factor > 1)
        or (scenario.renewal == "node" and not scenario.exponential)
    )


class ClockFaults:
    """Fault times of slots from renewal clocks of a law, and whole-domain events.

    Slot ``s``'s clock runs ``speed[s]`` times as fast as the law (lemons);
    it starts in equilibrium and is renewed from its expiry.  Domain ``d``
    fails after ``Exp(domain_rate)`` times; :meth:`pop` returns ``-(d + 1)``
    for it.  Draws come from ``rng`` (lifetimes in batches of 1024).

    Examples
    --------
    >>> from scipy import stats
    >>> f = ClockFaults(stats.expon(scale=2.0), np.ones(3), 0, 0.0, np.random.default_rng(0))
    >>> t = f.next_hours; unit, duration = f.pop()
    >>> 0 <= unit < 3, duration is None, bool(f.next_hours >= t)
    (True, True, True)
    """

    def __init__(
        self,
        law: Any,
        speed: np.ndarray,
        domains: int,
        domain_rate: float,
        rng: np.random.Generator,
    ) -> None:
        self.law, self.speed, self.rng = law, speed, rng
        self.exponential = memoryless(law)
        first = np.atleast_1d(equilibrium_law(law).rvs(size=speed.size, random_state=rng))
        self.heap: list[tuple[float, int]] = [
            (float(x), s) for s, x in enumerate(np.asarray(first, dtype=float) / speed)
        ]
        self.domain_rate = domain_rate
        if domains and domain_rate > 0:
            waits = rng.exponential(1.0 / domain_rate, domains)
            self.heap += [(float(w), -(d + 1)) for d, w in enumerate(waits)]
        heapify(self.heap)
        #: Time of the next fault or domain event, hours (an attribute: the event
        #: loop reads it at every event).
        self.next_hours = self.heap[0][0]
        self.buffer: list[float] = []

    def _lifetime(self) -> float:
        if not self.buffer:
            if self.exponential:
                draws = self.rng.exponential(float(self.law.mean()), _BATCH)
            else:
                draws = self.law.rvs(size=_BATCH, random_state=self.rng)
            self.buffer = np.asarray(draws, dtype=float).tolist()[::-1]
        return self.buffer.pop()

    def pop(self) -> tuple[int, float | None]:
        """The next ``(slot or -(domain + 1), None)``; its clock renewed from the expiry."""
        t, unit = self.heap[0]
        if unit < 0:
            step = float(self.rng.exponential(1.0 / self.domain_rate))
        else:
            step = self._lifetime() / self.speed[unit]
        heapreplace(self.heap, (t + step, unit))
        self.next_hours = self.heap[0][0]
        return unit, None


class LogFaults:
    """Fault times of slots replayed from a log: each slot one log node's shifted history.

    Slot ``s`` plays log node ``node[s]`` shifted by ``shift[s]`` hours: its
    faults come at ``start - shift + p W`` for every outage start of the
    node and every ``p >= 0`` with a non-negative time (``W`` the window:
    the history wraps around the log's end), each with the outage's length.
    The mappings (:data:`MAPPINGS`) for a cluster of ``n`` slots and a log of
    ``L`` nodes:

    - ``"identity"``: ``n = L``, slot ``s`` is node ``s``, one shift for all
      (a uniformly drawn time of the log);
    - ``"bootstrap"``: copies of the whole log, slot ``s`` is node
      ``s mod L`` of copy ``s // L``, each copy its own uniform shift, so a
      burst stays a burst within a copy and no node's history repeats in
      lockstep (the last copy may be partial);
    - ``"nodes"``: every slot a node drawn with replacement, with its own
      shift (keeps each node's rate and repairs, breaks the bursts).

    Examples
    --------
    >>> table = FaultTable(np.array([1.0, 5.0]), np.array([0.5, 1.0]), np.array([0, 2]),
    ...                    np.array([2, 0]), 10.0)
    >>> f = LogFaults(table, 2, "identity", np.random.default_rng(0))
    >>> [f.pop() for _ in range(3)]  # node 0's two outages, then again a window later
    [(0, 0.5), (0, 1.0), (0, 0.5)]
    """

    def __init__(self, table: FaultTable, slots: int, mapping: str, rng: np.random.Generator):
        self.table = table
        L, W = table.nodes, table.window_hours
        node, shift = table.slot_histories(slots, mapping, rng, W)
        counts = table.counts[node]
        live = np.flatnonzero(counts > 0)
        node, shift = node[live], shift[live]
        # First outage at or after the shift: a search in (node, start) keys.
        keys = np.repeat(np.arange(L), table.counts) * (2.0 * W) + table.starts
        k = np.searchsorted(keys, node * (2.0 * W) + shift)
        end = table.offsets[node] + table.counts[node]
        wrapped = k >= end
        # Per live slot: its next outage not yet in the stream, the node's first
        # outage and one past its last, and the shift of the current wrap.
        self._next = np.where(wrapped, table.offsets[node], k)
        self._first, self._end = table.offsets[node], end
        self._base = np.where(wrapped, W, 0.0) - shift
        self._slot = live
        self.window = W
        self._horizon = 0.0
        # The stream: faults in the order a heap of each slot's next fault keyed
        # (time, slot index) pops them, a window of them at a time (a heap of tens
        # of thousands of slots costs microseconds of cache misses per pop).
        self._times: list[float] = []
        self._units: list[int] = []
        self._lengths: list[float] = []
        self._at = 0
        #: Time of the next fault, hours (``inf`` if no slot ever fails).
        self.next_hours = math.inf
        if live.size:
            self._extend()

    def _extend(self) -> None:
        """Replace the consumed stream by every fault before the next horizon, in heap order.

        Each slot's faults come in its history's order, a wrap adding ``W``
        to its shift as the heap's pops did; the heap pops the least
        ``(time, slot index)`` among the slots' next faults, which for
        nondecreasing histories is their sorted order (checked).
        """
        starts, durations, W = self.table.starts, self.table.durations, self.window
        k, base, first, end = self._next, self._base, self._first, self._end
        times: list[np.ndarray] = []
        owners: list[np.ndarray] = []
        outages: list[np.ndarray] = []
        while not times:
            self._horizon += W
            horizon = self._horizon
            while True:
                active = np.flatnonzero(starts[k] + base < horizon)
                if not active.size:
                    break
                # The rest of each active slot's current wrap, cut at the horizon.
                left = end[active] - k[active]
                owner = np.repeat(active, left)
                index = np.repeat(k[active] - np.cumsum(left) + left, left) + np.arange(left.sum())
                t = starts[index] + base[owner]
                keep = t < horizon  # a prefix of each slot's run (its times increase)
                times.append(t[keep])
                owners.append(owner[keep])
                outages.append(index[keep])
                k[active] += np.bincount(owner[keep], minlength=k.size)[active]
                done = active[k[active] == end[active]]
                k[done] = first[done]
                base[done] += W
        t, owner, index = np.concatenate(times), np.concatenate(owners), np.concatenate(outages)
        emitted = np.arange(t.size)  # each slot's faults in its history's order
        order = np.lexsort((emitted, owner, t))
        by_slot = emitted[order][np.argsort(owner[order], kind="stable")]
        if not np.all(np.diff(by_slot)[np.diff(np.sort(owner)) == 0] > 0):
            raise AssertionError("a slot's fault times decrease: the stream is not the heap's")
        self._times = t[order].tolist()
        self._units = self._slot[owner[order]].tolist()
        self._lengths = durations[index[order]].tolist()
        self._at = 0
        self.next_hours = self._times[0]

    def pop(self) -> tuple[int, float | None]:
        """The next fault: ``(slot, the outage's length in hours)``."""
        at = self._at
        unit, duration = self._units[at], self._lengths[at]
        at += 1
        if at == len(self._times):
            self._extend()
        else:
            self._at = at
            self.next_hours = self._times[at]
        return unit, duration


class NodeWorld:
    """The failure source of one run over node slots (module docstring).

    The simulation calls :meth:`cycle` at each global restart; the object
    itself is the cycle's failure source: :meth:`next_time`, :meth:`pick`
    (a group, or ``None`` for an event that fails no group: a fault in a
    group already down, a slot filled, a node back from repair),
    :meth:`restore`, and the heap :attr:`due` of ``(time, group)`` returns
    that the simulation pops (a group is back when its last slot is filled,
    plus ``heal`` hours for an elastic job).

    Its own events are slot fills and, with a pool, nodes back from repair.
    A restart voids the fills scheduled before it (every slot is filled by
    it), so they are dropped there rather than played.  A node back while
    no slot waits only returns a spare to the pool, which changes nothing
    until a failure asks the pool; it is counted then (in ``_repair``),
    so that only a node that fills a waiting slot is an event.  Both leave
    every run's draws and events where they were: the runs' hours move by
    float rounding only (a compute span no longer split at those instants).

    Parameters
    ----------
    scenario : Scenario
        The run.
    rng : numpy.random.Generator
        The run's stream (lemons, clocks or shifts, repairs).
    replay : Replay, optional
        Fault times from a log instead of the scenario's law.

    Examples
    --------
    >>> sc = Scenario(gpus=64, gpus_per_group=16, gpu_mtbf_hours=100.0, restart_minutes=1,
    ...               checkpoint_minutes=1, work_hours=1, repair_minutes=60, spare_nodes=1,
    ...               swap_minutes=6)
    >>> world = NodeWorld(sc, np.random.default_rng(0))
    >>> world.slots, world.cycle(0.0, returns=True) is world
    (8, True)
    """

    owns_repairs, needs_pick, draws_ahead = True, True, True

    def __init__(self, scenario: Scenario, rng: np.random.Generator, replay: Replay | None = None):
        self.rng = rng
        N = scenario.groups
        # Node slots where nodes matter: a log's nodes, node clocks, or exponential nodes
        # feeding a pool (a group clock of another law stays one slot: one node per failure).
        nodes = (
            replay is not None
            or (scenario.renewal == "node" and not scenario.exponential)
            or (scenario.pool and scenario.exponential)
        )
        self.per_group = scenario.nodes_per_group if nodes else 1
        self.slots = N * self.per_group
        self.scenario = scenario
        if replay is not None:
            self.faults: Any = LogFaults(replay.table, self.slots, replay.mapping, rng)
            self.log_repairs = replay.repairs == "log"
            self.domain = None
        else:
            lemons = scenario.lemon_fraction > 0 and scenario.lemon_rate_factor > 1
            speed = (
                lemon_rates(
                    N,
                    scenario.lemon_fraction,
                    scenario.lemon_rate_factor,
                    seed=int(rng.integers(2**63)),
                )
                if lemons
                else np.ones(N)
            )
            domain = scenario.domain_size
            self.domain = None if domain is None else failure_domains(N, domain)
            if scenario.exponential:
                law = stats.expon(scale=self.per_group / scenario.group_failure_rate_per_hour)
            else:
                law = scenario.node_lifetime_law if nodes else scenario.group_lifetime_law
            self.faults = ClockFaults(
                law,
                np.repeat(speed, self.per_group),
                0 if self.domain is None else int(self.domain.max()) + 1,
                0.0 if scenario.domain_mtbf_hours is None else 1.0 / scenario.domain_mtbf_hours,
                rng,
            )
            self.log_repairs = False
        #: The groups of each domain, in increasing order (a domain event walks them).
        self.domain_groups: list[list[int]] = (
            []
            if self.domain is None
            else [
                part.tolist()
                for part in np.split(
                    np.argsort(self.domain, kind="stable"), np.cumsum(np.bincount(self.domain))[:-1]
                )
            ]
        )
        #: Whether failed slots are filled again within a cycle.
        self.repairs = self.log_repairs or scenario.repair_minutes is not None
        #: Spares in the pool (``None``: no pool).
        self.pool: int | None = scenario.spare_nodes if scenario.pool else None
        self.swap = (scenario.swap_minutes or 0.0) / 60.0
        # Not arrays: the events read and write them one element at a time.
        self.down_slot = bytearray(self.slots)
        self.missing = [0] * N  # slots of each group down
        self.group_down = [False] * N
        self.failed: list[int] = []  # slots failed since the last restart
        self.waiting: deque[int] = deque()  # slots waiting for a node, first come first
        self.fills: list[tuple[float, int]] = []  # (time, slot) of this cycle, a heap
        self.repaired: list[float] = []  # times nodes come back from repair, a heap
        self.pending: list[int] = []  # groups failing at this instant (a domain event)
        self.t = 0.0
        self.due: list[tuple[float, int]] = []
        self.returns, self.heal = False, 0.0
        self.repair_draws: list[float] = []

    def cycle(self, t: float, *, returns: bool, heal_hours: float = 0.0) -> NodeWorld:
        """A global restart at ``t``: every group whole; ``returns``: groups come back in it."""
        if self.pool is not None:
            # The slots still waiting are filled by the restart: their nodes are owed to
            # the pool, repaid by the next repairs (a failure finds a spare only while
            # fewer than spare_nodes nodes are in repair).
            self.pool -= len(self.waiting)
        # Undo this cycle's failures one by one: a run restarts once per failure under
        # CKPT-only, where clearing every slot would cost the cluster's size each time.
        down_slot, missing, group_down, per_group = (
            self.down_slot,
            self.missing,
            self.group_down,
            self.per_group,
        )
        for slot in self.failed:
            down_slot[slot] = 0
            g = slot // per_group
            missing[g], group_down[g] = 0, False
        self.failed.clear()
        self.waiting.clear()
        self.fills = []  # the restart fills every slot
        self.pending.clear()
        self.due = []
        self.returns, self.heal = returns, heal_hours
        return self

    def next_time(self, t: float, healthy: int) -> float:
        """Time of the next event (faults, fills, repairs; now for a domain event's rest)."""
        if self.pending:
            return t
        nxt = self.faults.next_hours
        # Inlined min()s, without calls (the hottest lines of a replay).
        fills = self.fills
        if fills and fills[0][0] < nxt:
            nxt = fills[0][0]
        repaired = self.repaired
        if self.waiting and repaired[0] < nxt:  # a slot waits: the pool has lent every node
            nxt = repaired[0]
        return nxt

    def _repair(self, slot: int, t: float, duration: float | None) -> None:
        """Slot ``slot`` failed at ``t``: its node to repair, the slot's fill scheduled."""
        if not self.repairs:
            return
        if self.log_repairs and duration is not None:
            repair = duration
        else:
            if not self.repair_draws:  # quantiles of the repair law, a batch at a time
                batch = repair_hours(self.scenario, self.rng.random(_BATCH))
                self.repair_draws = np.asarray(batch, dtype=float).tolist()[::-1]
            repair = self.repair_draws.pop()
        if self.pool is None:
            heappush(self.fills, (t + repair, slot))
            return
        repaired = self.repaired
        if not self.waiting:  # the nodes back by now, lazily (class docstring)
            while repaired and repaired[0] <= t:
                heappop(repaired)
                self.pool += 1
        heappush(repaired, t + repair)
        if self.pool > 0:  # (below 0: nodes owed since a restart, module docstring)
            self.pool -= 1
            heappush(self.fills, (t + self.swap, slot))
        else:
            self.waiting.append(slot)

    def _fail_slot(self, slot: int, t: float, duration: float | None) -> int | None:
        """Slot ``slot`` fails at ``t``: its group if that was whole, else ``None``."""
        down_slot = self.down_slot
        if down_slot[slot]:
            return None  # a replayed fault of a slot still waiting: nothing new
        down_slot[slot] = 1
        self.failed.append(slot)
        g = slot // self.per_group
        self.missing[g] += 1
        self._repair(slot, t, duration)
        group_down = self.group_down
        if group_down[g]:
            return None
        group_down[g] = True
        return g

    def pick(self, healthy: int) -> int | None:
        """Play the next event; the group that failed (``None``: no group failed)."""
        if self.pending:
            return self.pending.pop()
        faults, fills, repaired = self.faults, self.fills, self.repaired
        t = faults.next_hours
        # A node back from repair fills the first waiting slot; a fill at the same
        # instant comes first, and both before a fault.
        if self.waiting and repaired[0] <= t and not (fills and fills[0][0] <= repaired[0]):
            back = heappop(repaired)
            heappush(fills, (back + self.swap, self.waiting.popleft()))
            return None
        if fills and fills[0][0] <= t:
            t, slot = heappop(fills)
            if self.down_slot[slot]:
                self.down_slot[slot] = 0
                g = slot // self.per_group
                missing = self.missing
                missing[g] -= 1
                if missing[g] == 0 and self.returns:
                    heappush(self.due, (t + self.heal, g))
            return None
        unit, duration = faults.pop()
        if unit >= 0:
            return self._fail_slot(unit, t, duration)
        # A domain event: one slot (the first up) of each whole group of the domain.
        per_group, down_slot = self.per_group, self.down_slot
        for g in self.domain_groups[-unit - 1]:
            if self.group_down[g]:
                continue
            first = g * per_group
            for slot in range(first, first + per_group):
                if not down_slot[slot]:
                    if self._fail_slot(slot, t, None) is not None:
                        self.pending.append(g)
                    break
        self.pending.reverse()
        return self.pending.pop() if self.pending else None

    def restore(self, group: int, healthy: int) -> None:
        """The simulation took ``group`` back (down again at once if a slot failed meanwhile)."""
        if self.missing[group]:
            self.pending.append(group)  # a fault during an elastic job's heal
        else:
            self.group_down[group] = False
