"""How a job reacts to groups going down and coming back, in the hour-level event simulation.

A *failure rule* holds the state of one restart cycle (all groups up at its
start) and answers, group by group, whether a failure is a wipe-out and what
the job's throughput is now.  Each strategy picks its rule
(:meth:`spare_theory.strategies.Strategy.failure_rules`); the simulation
(:mod:`spare_theory.hourly.simulation`) plays the events and asks the rule.
A rule has

- ``throughput``: work per hour relative to the failure-free run on all ``N``
  groups without redundancy;
- ``fail(group) -> bool``: the group went down; ``True`` at a wipe-out;
- ``rejoin(group)``: a repaired group is back (rules with ``repairable``);
- ``needs_group``: whether the simulation must pick which group failed (a
  rule replaying a pre-drawn trajectory does not);
- ``cost_grows``: whether the step cost ``1 / throughput`` can grow with
  failures (only then can a planned restart on the step cost fire);
- ``repairable``: whether repairs change anything (not when every failure is
  a wipe-out);
- ``reconfigures``: whether membership changes stall the job by the elastic
  contract (:class:`QuorumRules`; the simulation's stall semantics), with
  ``batch_throughput``, the throughput had every step the whole global batch.

The rules use the real placements and the exact controllers of layer 3,
never a closed form: the simulation stays the independent check of the model.
Rule *factories* are small picklable objects (``factory(rng)`` returns a fresh
rule per cycle), so simulations can run on process pools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import child_seed
from ..placement.replicas import replica_set_sizes, replica_sets
from ..stacking.overhead import stacks_trajectory
from ..stacking.reordering import ReorderingController
from ..stacking.stacks import WipedOut, min_load, min_stacks

__all__ = [
    "AnyFailureRules",
    "ControllerRules",
    "PoolRules",
    "QuorumRules",
    "RecomputeRules",
    "ReplicaSetRules",
    "trajectory_pool",
]

# The pool's streams sit under this spawn-key prefix, out of reach of the trial
# indices i of child_seed(seed, i).
_POOL_KEY = 2**63


class _AnyFailure:
    """Every failure is a wipe-out (CKPT-only, and any strategy at ``r = 1``)."""

    reconfigures = False
    needs_group, cost_grows, repairable = True, False, False
    throughput = 1.0

    def fail(self, group: int) -> bool:
        return True

    def rejoin(self, group: int) -> None:  # never called: no group survives a failure
        raise AssertionError("a CKPT-only cycle has no down groups to rejoin")


@dataclass(frozen=True)
class AnyFailureRules:
    """Factory of the rule "every failure is a wipe-out" (throughput 1).

    Examples
    --------
    >>> rule = AnyFailureRules()(np.random.default_rng(0))
    >>> rule.throughput, rule.fail(3)
    (1.0, True)
    """

    def __call__(self, rng: np.random.Generator) -> _AnyFailure:
        return _AnyFailure()


class _ReplicaSets:
    reconfigures = False
    needs_group, cost_grows, repairable = True, False, True

    def __init__(self, sets: np.ndarray, sizes: np.ndarray) -> None:
        self.sets, self.sizes = sets, sizes
        self.dead = np.zeros(sizes.size, dtype=np.int64)
        self.throughput = sizes.size / sets.size

    def fail(self, group: int) -> bool:
        s = self.sets[group]
        self.dead[s] += 1
        return bool(self.dead[s] == self.sizes[s])

    def rejoin(self, group: int) -> None:
        self.dead[self.sets[group]] -= 1


@dataclass(frozen=True)
class ReplicaSetRules:
    """Factory of Rep's rule: a wipe-out when a whole replica set is down.

    The balanced replica sets of :func:`~spare_theory.placement.replica_sets`;
    throughput ``floor(N/r) / N``.

    Examples
    --------
    >>> rule = ReplicaSetRules(6, 3)(np.random.default_rng(0))
    >>> rule.throughput, rule.fail(0), rule.fail(2), rule.fail(4)
    (0.3333333333333333, False, False, True)
    """

    N: int
    r: int

    def __call__(self, rng: np.random.Generator) -> _ReplicaSets:
        return _ReplicaSets(replica_sets(self.N, self.r), replica_set_sizes(self.N, self.r))


class _Controller:
    reconfigures = False
    needs_group, cost_grows, repairable = True, True, False
    throughput = 1.0

    def __init__(self, hosts: np.ndarray, microbatches: int) -> None:
        self.controller = ReorderingController(hosts, microbatches=microbatches)

    def fail(self, group: int) -> bool:
        try:
            self.throughput = 1.0 / self.controller.fail(group)
        except WipedOut:
            return True
        return False

    def rejoin(self, group: int) -> None:  # never called: built without repairs
        raise AssertionError("the online controller does not take rejoins: use RecomputeRules")


@dataclass(frozen=True)
class ControllerRules:
    """Factory of SPARe's rule without repairs: the exact online controller on the placement.

    Throughput ``1 / S*`` (or ``1 / load`` with ``microbatches > 1``) kept by
    :class:`~spare_theory.stacking.ReorderingController`; a wipe-out when a
    type has no surviving host.

    Examples
    --------
    >>> from spare_theory.placement import cyclic_placement
    >>> rule = ControllerRules(cyclic_placement(7, 3))(np.random.default_rng(0))
    >>> rule.fail(0), rule.throughput
    (False, 0.5)
    """

    hosts: np.ndarray
    microbatches: int = 1

    def __call__(self, rng: np.random.Generator) -> _Controller:
        return _Controller(self.hosts, self.microbatches)


class _Recompute:
    reconfigures = False
    needs_group, cost_grows, repairable = True, True, True
    throughput = 1.0

    def __init__(self, hosts: np.ndarray, microbatches: int) -> None:
        self.hosts, self.microbatches = hosts, microbatches
        self.failed: set[int] = set()
        N = hosts.shape[0]
        # Each group computes the type it hosts first (a permutation on the ruler's
        # placement): the start of the certificate of S* = 2 below.
        first = hosts[:, 0]
        self.primary = bool(np.array_equal(np.sort(first), np.arange(N)))
        self.alternatives = hosts[:, 1:].tolist()
        self.half = N // 2  # the greedy certificate is tried up to this many groups down
        self.owner = np.argsort(first).tolist()  # the type whose first host is group g

    def _two_stacks(self) -> bool:
        """A greedy certificate that two stacks suffice (``S* = 2``, the lower bound).

        Every type whose first host is down goes to a surviving host of it
        that takes no other extra type; if that works each group computes
        at most two types.  Exact when it succeeds (``S* >= 2`` after any
        failure); the max flow decides otherwise.
        """
        taken: set[int] = set()
        failed, alternatives, owner = self.failed, self.alternatives, self.owner
        for g in failed:
            for h in alternatives[owner[g]]:
                if h not in failed and h not in taken:
                    taken.add(h)
                    break
            else:
                return False
        return True

    def _cost(self) -> float:
        if self.microbatches == 1:
            if self.primary and 0 < len(self.failed) <= self.half and self._two_stacks():
                return 2
            return min_stacks(self.hosts, self.failed)
        return min_load(self.hosts, self.failed, microbatches=self.microbatches)

    def fail(self, group: int) -> bool:
        self.failed.add(group)
        try:
            self.throughput = 1.0 / self._cost()
        except WipedOut:
            return True
        return False

    def rejoin(self, group: int) -> None:
        self.failed.discard(group)
        self.throughput = 1.0 / self._cost()


@dataclass(frozen=True)
class RecomputeRules:
    """Factory of SPARe's rule with repairs: ``S*`` recomputed exactly after every event.

    :func:`~spare_theory.stacking.min_stacks` on the down set after each
    failure and rejoin (a rejoin can lower ``S*``); with ``microbatches = m >
    1`` the least largest load :func:`~spare_theory.stacking.min_load`
    instead (the pieces are redistributed after every event).

    Examples
    --------
    >>> from spare_theory.placement import cyclic_placement
    >>> rule = RecomputeRules(cyclic_placement(7, 3))(np.random.default_rng(0))
    >>> rule.fail(0), rule.throughput, rule.rejoin(0), rule.throughput
    (False, 0.5, None, 1.0)
    >>> split = RecomputeRules(cyclic_placement(7, 3), microbatches=2)(np.random.default_rng(0))
    >>> split.fail(0), split.throughput
    (False, 0.6666666666666666)
    """

    hosts: np.ndarray
    microbatches: int = 1

    def __call__(self, rng: np.random.Generator) -> _Recompute:
        return _Recompute(self.hosts, self.microbatches)


class _Trajectory:
    reconfigures = False
    needs_group, cost_grows, repairable = False, True, False
    throughput = 1.0

    def __init__(self, trajectory: np.ndarray) -> None:
        self.trajectory, self.failures = trajectory, 0

    def fail(self, group: int) -> bool:
        self.failures += 1
        if self.failures >= self.trajectory.size:
            return True
        self.throughput = 1.0 / self.trajectory[self.failures]
        return False

    def rejoin(self, group: int) -> None:  # never called: pools are refused with repairs
        raise AssertionError("a pre-drawn trajectory has no rejoins")


@dataclass(frozen=True)
class PoolRules:
    """Factory of SPARe's pool rule: each cycle replays a trajectory drawn from a pool.

    The drawn trajectory fixes ``S*_f`` for ``f = 0..T-1`` and the wipe-out
    count ``T`` (from a uniformly random failure order on the real placement,
    :func:`trajectory_pool`); failure *times* are still simulated.  The draw
    takes one integer from the cycle's stream.

    Examples
    --------
    >>> rule = PoolRules((np.array([1, 2, 2]),))(np.random.default_rng(0))
    >>> rule.fail(5), float(rule.throughput), rule.fail(1), rule.fail(2)
    (False, 0.5, False, True)
    """

    pool: tuple[np.ndarray, ...]

    def __call__(self, rng: np.random.Generator) -> _Trajectory:
        return _Trajectory(self.pool[int(rng.integers(len(self.pool)))])


class _Quorum:
    needs_group, cost_grows, repairable, reconfigures = False, False, True, True

    def __init__(self, N: int, active: int, quorum: int) -> None:
        self.N, self.active, self.quorum = N, active, quorum
        self.up = N
        self.batch_throughput = self.throughput = active / N

    def fail(self, group: int) -> bool:
        self.up -= 1
        self.throughput = min(self.active, self.up) / self.N
        return self.up < self.quorum

    def rejoin(self, group: int) -> None:
        self.up += 1
        self.throughput = min(self.active, self.up) / self.N


@dataclass(frozen=True)
class QuorumRules:
    """Factory of the elastic rule: a wipe-out when fewer than ``quorum`` groups are up.

    At most ``active`` groups compute: the throughput is ``min(A, up) / N``
    (``A = N``: elastic DP; ``A = N - r``: ``r`` hot spares), the full-batch
    throughput ``A / N``.  Groups are interchangeable, so the rule needs no
    group identities; it ``reconfigures``: the simulation stalls the job at
    each membership change (:mod:`spare_theory.hourly.simulation`).

    Examples
    --------
    >>> rule = QuorumRules(4, 3, 2)(np.random.default_rng(0))
    >>> rule.throughput, rule.fail(0), rule.throughput, rule.fail(1), rule.fail(2)
    (0.75, False, 0.75, False, True)
    """

    N: int
    active: int
    quorum: int

    def __call__(self, rng: np.random.Generator) -> _Quorum:
        return _Quorum(self.N, self.active, self.quorum)


def trajectory_pool(
    hosts: np.ndarray, size: int, seed: Any, microbatches: int = 1
) -> tuple[np.ndarray, ...]:
    """``size`` trajectories of ``S*_f`` (or loads) to wipe-out, from random failure orders.

    Trajectory ``k`` uses the stream ``child_seed(seed, 2**63, k)``.

    Examples
    --------
    >>> from spare_theory.placement import cyclic_placement
    >>> pool = trajectory_pool(cyclic_placement(13, 4), 2, np.random.SeedSequence(0))
    >>> len(pool), bool(pool[0][0] == 1)
    (2, True)
    """
    N = hosts.shape[0]
    return tuple(
        stacks_trajectory(
            hosts,
            np.random.default_rng(child_seed(seed, _POOL_KEY, k)).permutation(N),
            microbatches=microbatches,
        )
        for k in range(size)
    )
