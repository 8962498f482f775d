"""Event simulation of whole training runs under domain failures, lemons and exclusion.

One trial plays a run from a fresh start until ``work_hours`` of work are saved,
as :mod:`spare_theory.hourly.simulation` does, with the failure model of
:mod:`spare_theory.stacking.domains_sim`: at the start of every cycle (a global
restart, all groups healthy) each group's failure time is drawn,
``X_g = min(E_g / (lambda w_g), V_{d(g)} / lambda_D)`` hours
(:func:`~spare_theory.stacking.domains_sim.failure_times`); the exact reordering
controller on the chosen placement turns them into ``S*`` after each event
and the wipe-out time (:func:`~spare_theory.stacking.domains_sim.cycle_trajectory`).
Work advances at ``1 / S*``; checkpoints every ``tau`` of compute time cost
``delta`` and save the segment if they complete before the wipe-out; a
wipe-out during a restart starts a new one.

**Lemons** (``Scenario.lemon_fraction``, ``lemon_rate_factor``): each run
draws its lemon groups once (a uniformly random subset,
:func:`~spare_theory.stacking.domains_sim.lemon_rates`); they keep their rate across
restarts (a restart replaces the software state, not the faulty node).

**Exclusion policy** (``exclude_after = k``): a group slot that has failed
``k`` times (counted over the run) is drained at the next restart and
replaced by a node from the spare pool, itself a lemon with probability
``lemon_fraction``; its count starts again from 0.

**Trajectory pool** (``pool_size``): without lemons and exclusion all cycles
are independent and identically distributed, so ``pool_size`` cycle
trajectories (streams ``child_seed(seed, 2**63, k)``) can be drawn once and
shared; each cycle of each run picks one uniformly with its run's generator.
The mean is unbiased; runs of one call share the pool's sampling error.

Nothing here uses a model: only the placement, the failure-time sampler, the
controller and the scenario's argument checks.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._parallel import map_tasks
from .._samples import HourSamples
from .._validation import as_count, as_seed_sequence, child_seed
from ..placement.domains import failure_domains, placement_hosts
from ..placement.placements import validate_hosts
from ..placement.rulers import modular_ruler
from ..stacking.domains_sim import cycle_trajectory, failure_times, lemon_rates
from .scenario import Scenario, check_checkpoint_interval

__all__ = ["NOT_PLAYED", "DomainTrainingSamples", "simulate_domain_training"]

_POOL_KEY = 2**63
# Runs per task when the runs are spread over an executor.
_TRIALS_PER_TASK = 4


@dataclass(frozen=True)
class DomainTrainingSamples(HourSamples):
    """Per-run results of :func:`simulate_domain_training`.

    Attributes
    ----------
    hours : numpy.ndarray
        Wall-clock hours of each run.
    restarts : numpy.ndarray
        Global restarts (wipe-outs) of each run.
    exclusions : numpy.ndarray
        Group slots replaced by the exclusion policy in each run.

    Examples
    --------
    >>> import numpy as np
    >>> runs = DomainTrainingSamples(np.array([10.0, 12.0]), np.array([1, 2]), np.array([0, 0]))
    >>> runs.mean_hours, round(runs.standard_error_hours, 3)
    (11.0, 1.0)
    """

    hours: npt.NDArray[np.float64]
    restarts: npt.NDArray[np.int64]
    exclusions: npt.NDArray[np.int64]


def _advance(
    clock: float, start: float, times: list[float], stacks: list[int], tau: float, need: float
) -> tuple[float, float, bool]:
    """Compute from ``clock`` for ``tau`` hours or until ``need`` work: ``(work, clock, wiped)``.

    The cycle started at ``start``; ``S* = stacks[k]`` on
    ``[start + times[k], start + times[k+1])`` and the wipe-out is at
    ``start + times[-1]``.  Lists, not arrays: the loop reads one element
    per event, and Python floats do the same IEEE arithmetic faster.
    """
    k = bisect_right(times, clock - start) - 1
    work, left = 0.0, tau
    while True:
        rate = 1.0 / stacks[k]
        event = start + times[k + 1]
        dt = min(left, (need - work) / rate)
        if clock + dt < event:
            return work + rate * dt, clock + dt, False
        work += rate * (event - clock)
        left -= event - clock
        clock = event
        k += 1
        if k == len(stacks):
            return work, clock, True


#: Scenario fields this simulation refuses, with why: it plays exponential group clocks,
#: domain events and lemons, restarts at wipe-outs only, and whole-shard SPARe steps.
NOT_PLAYED = {
    "failure_law": "a non-exponential lifetime law (its group clocks are exponential)",
    "repair_minutes": "repairs (a failed group is out until the next restart)",
    "planned_restart_failures": "planned restarts (it restarts at wipe-outs only)",
    "planned_restart_cost": "planned restarts (it restarts at wipe-outs only)",
    "spare_nodes": "a spare pool (no group is repaired)",
    "microbatches": "micro-batch splitting (a step costs S* whole stacks)",
    "failure_classes": "failures that go unnoticed or are misdiagnosed (every failure is "
    "noticed at once, rightly)",
}


def _refuse_unplayed(scenario: Scenario) -> None:
    """Raise ``ValueError`` naming each field of :data:`NOT_PLAYED` that ``scenario`` sets."""
    present = {
        "failure_law": not scenario.exponential,
        "repair_minutes": scenario.repairs,
        "planned_restart_failures": scenario.planned_restart_failures is not None,
        "planned_restart_cost": scenario.planned_restart_cost is not None,
        "spare_nodes": scenario.pool,
        "failure_classes": scenario.detect_minutes > 0
        or any(c.misdiagnosis > 0 for c in scenario.failure_classes),
        "microbatches": scenario.microbatches > 1,
    }
    named = [name for name, on in present.items() if on]
    if named:
        raise ValueError(
            "; ".join(f"{n}: simulate_domain_training does not play {NOT_PLAYED[n]}" for n in named)
            + "; simulate_training plays it"
        )


def simulate_domain_training(
    scenario: Scenario,
    r: int,
    checkpoint_interval_minutes: float,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    placement: str | npt.ArrayLike | None = None,
    exclude_after: int | None = None,
    pool_size: int | None = None,
    trajectories: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> DomainTrainingSamples:
    """Simulate ``trials`` SPARe runs under the scenario's domain failures and lemons.

    Parameters
    ----------
    scenario : Scenario
        The run; ``domain_size`` / ``domain_mtbf_hours`` and
        ``lemon_fraction`` / ``lemon_rate_factor`` are honoured (any
        combination).
    r : int
        Redundancy (a modular ruler must exist at ``N``).
    checkpoint_interval_minutes : float
        Compute minutes between checkpoints, ``> 0``.
    trials : int
        Runs, ``>= 1``; run ``i`` uses ``child_seed(seed, i)`` (its lemons
        ``child_seed(seed, i, 1)``).
    seed : int or numpy.random.SeedSequence
        Seed.
    placement : str or array_like of int, optional
        One of :data:`~spare_theory.placement.domains.PLACEMENTS` or a
        placement of shape ``(N, r)``; default the scenario's
        (:attr:`~spare_theory.hourly.scenario.Scenario.placement`).
    exclude_after : int, optional
        Replace a group slot after this many failures (module docstring).
    pool_size : int, optional
        Share this many cycle trajectories between all cycles (only without
        lemons and exclusion); default: a fresh trajectory every cycle.
    trajectories : sequence of (times, stacks), optional
        A ready pool instead of ``pool_size`` (same conditions): ``times``
        in hours from the cycle start, the last the wipe-out, and ``stacks``
        the ``S*`` of each state (:func:`~spare_theory.stacking.domains_sim.cycle_trajectory`
        with times divided by the total failure rate of a group), e.g. the
        trajectories an overhead estimate already ran.
    executor : concurrent.futures.Executor, optional
        Runs blocks of runs in parallel (identical results); ``None``: here.
    progress : bool
        Show a progress bar.

    Returns
    -------
    DomainTrainingSamples

    Raises
    ------
    ValueError
        Naming the argument, and each field of :data:`NOT_PLAYED` the
        scenario sets (a non-exponential law, repairs, planned restarts, a
        spare pool, micro-batches, failure classes with a detection time).

    Notes
    -----
    Fields with no effect here:

    - ``reconfigure_minutes``, ``heal_minutes``: the elastic strategies'
      stalls, and this simulation plays SPARe only;
    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=256 * 8, gpus_per_group=8, gpu_mtbf_hours=250.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=20,
    ...               domain_size=16, domain_mtbf_hours=500.0)
    >>> runs = simulate_domain_training(sc, 6, 60.0, 4, seed=0)
    >>> round(runs.mean_hours, 1), runs.restarts.tolist()
    (45.4, [3, 3, 2, 3])
    """
    _refuse_unplayed(scenario)
    N = scenario.groups
    r = as_count(r, "r", maximum=N)
    if r > 1:
        modular_ruler(N, r)  # raises ValueError naming N and r if no ruler exists
    tau = check_checkpoint_interval(checkpoint_interval_minutes) / 60
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    m = scenario.domain_size
    if placement is None or isinstance(placement, str):
        hosts = placement_hosts(placement or scenario.placement, N, r, m, seed=0)
    else:
        hosts = validate_hosts(placement, "placement")
        if hosts.shape != (N, r):
            raise ValueError(f"placement must have shape ({N}, {r}), got {hosts.shape}")
    k_out = None if exclude_after is None else as_count(exclude_after, "exclude_after")
    lemons = scenario.lemon_fraction > 0 and scenario.lemon_rate_factor > 1
    if pool_size is not None or trajectories is not None:
        if pool_size is not None:
            pool_size = as_count(pool_size, "pool_size")
        if lemons or k_out is not None:
            raise ValueError(
                "pool_size and trajectories need identical cycles: no lemons and no exclude_after"
            )
    lam = scenario.group_failure_rate_per_hour
    lam_d = 0.0 if scenario.domain_mtbf_hours is None else 1.0 / scenario.domain_mtbf_hours
    setup = _Setup(
        scenario=scenario,
        hosts=hosts,
        domains=failure_domains(N, m or 1),
        total=lam + lam_d,
        share=lam_d / (lam + lam_d),
        tau=tau,
        exclude_after=k_out,
        lemons=lemons,
        pool=None,
    )
    pool = (
        None
        if trajectories is None
        else tuple((np.asarray(t).tolist(), np.asarray(s).tolist()) for t, s in trajectories)
    )
    if pool_size is not None and pool is None:
        draws = (
            setup.draw(np.random.default_rng(child_seed(seed, _POOL_KEY, k)), np.ones(N))
            for k in range(pool_size)
        )
        pool = tuple((times, stacks) for times, stacks, _ in draws)
    setup = dataclasses.replace(setup, pool=pool)
    tasks = [
        (setup, seed, first, min(_TRIALS_PER_TASK, trials - first))
        for first in range(0, trials, _TRIALS_PER_TASK)
    ]
    rows = [
        row
        for block in map_tasks(_runs, tasks, executor=executor, desc="runs", progress=progress)
        for row in block
    ]
    hours, restarts, exclusions = (np.array(column) for column in zip(*rows))
    return DomainTrainingSamples(
        hours.astype(np.float64), restarts.astype(np.int64), exclusions.astype(np.int64)
    )


@dataclass(frozen=True)
class _Setup:
    """What every run of one call shares (picklable, for process pools)."""

    scenario: Scenario
    hosts: np.ndarray
    domains: np.ndarray
    total: float
    share: float
    tau: float
    exclude_after: int | None
    lemons: bool
    pool: tuple[tuple[list[float], list[int]], ...] | None

    def draw(
        self, rng: np.random.Generator, w: np.ndarray
    ) -> tuple[list[float], list[int], np.ndarray]:
        """One cycle's ``(times, stacks, failure times)``, hours (lists: ``_advance`` reads)."""
        X = failure_times(rng, 1, self.domains, self.share, w)[0] / self.total
        times, stacks, _ = cycle_trajectory(self.hosts, X)
        return times.tolist(), stacks.tolist(), X


def _one_run(setup: _Setup, seed: np.random.SeedSequence, i: int) -> tuple[float, int, int]:
    """Hours, restarts and exclusions of run ``i`` (its streams ``child_seed(seed, i)``)."""
    scenario, tau, k_out, pool = setup.scenario, setup.tau, setup.exclude_after, setup.pool
    N = scenario.groups
    R, delta, W = (
        scenario.restart_minutes / 60,
        scenario.checkpoint_minutes / 60,
        scenario.work_hours,
    )
    eps = 1e-12 * W
    restarts = exclusions = 0
    rng = np.random.default_rng(child_seed(seed, i))
    w = (
        lemon_rates(
            N,
            scenario.lemon_fraction,
            scenario.lemon_rate_factor,
            seed=child_seed(seed, i, 1),
        )
        if setup.lemons
        else np.ones(N)
    )
    counts = np.zeros(N, dtype=np.int64)
    t, saved, fresh = 0.0, 0.0, True
    while True:
        if pool is not None:
            times, stacks = pool[int(rng.integers(len(pool)))]
        else:
            times, stacks, X = setup.draw(rng, w)
        start, end = t, t + times[-1]
        clock = t if fresh else t + R
        done = False
        if fresh or clock < end:
            fresh = False
            while True:
                work, clock, wiped = _advance(clock, start, times, stacks, tau, W - saved)
                if wiped or clock + delta >= end:
                    break
                clock += delta
                saved += work
                if saved >= W - eps:
                    done = True
                    break
        if done:
            return clock, restarts, exclusions
        t = end
        restarts += 1
        if k_out is not None:
            counts[times[-1] >= X] += 1
            worn = np.flatnonzero(counts >= k_out)
            if worn.size:
                exclusions += worn.size
                counts[worn] = 0
                lemon = rng.random(worn.size) < scenario.lemon_fraction
                w[worn] = np.where(lemon, scenario.lemon_rate_factor, 1.0)


def _runs(task: tuple) -> list[tuple[float, int, int]]:
    setup, seed, first, count = task
    return [_one_run(setup, seed, i) for i in range(first, first + count)]
