"""Trials of the step-level event simulation: the loop over seeds and its result.

:func:`simulate_step_trials` runs a strategy's rule (``trial``, e.g.
:func:`spare_theory.steps.spare_run.run_spare`) once per trial, each on its
own stream ``child_seed(seed, i)``, serially or on an executor, and gathers
the per-trial figures in a :class:`StepSimulation`.  Semantics of a run:
:mod:`spare_theory.steps.runs`.
"""

from __future__ import annotations

import concurrent.futures as cf
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._parallel import map_tasks
from .._samples import TrialSamples
from .._validation import as_count, as_real, as_seed_sequence, child_seed
from ..hourly.sources import Replay
from ..planning.bill import BADPUT_CAUSES, BillSamples, CostModel, make_bill
from .runs import BREAKDOWN_FIELDS, RUN_FIELDS, RepairTimes, RunCut
from .scenario import StepScenario
from .sources import LogClocks, PoolRepairTimes

__all__ = ["StepSimulation", "StepTrial", "simulate_step_trials"]

#: A strategy's rule for one run: ``trial(scenario, r, k, rng, *, repairs) -> tuple``: the
#: values of ``RUN_FIELDS``, optionally followed by those of ``BREAKDOWN_FIELDS``.
StepTrial = Callable[..., tuple]

_COUNTS = {"failures", "global_restarts", "recomputed_stacks"}


@dataclass(frozen=True)
class StepSimulation(TrialSamples):
    """Per-trial results of a step-level simulation (one entry per trial).

    Attributes
    ----------
    scenario : StepScenario
        The simulated scenario.
    strategy : str
        The strategy's name (a label: ``"ckpt"``, ``"rep"``, ``"spare"``).
    r : int
        Redundancy (1 for ``"ckpt"``).
    checkpoint_every_steps : int
        Checkpoint interval ``k``, steps.
    total_seconds : numpy.ndarray
        Wall time to complete the steps, seconds.
    up_seconds : numpy.ndarray
        ``total - down``: wall time outside global and partial recoveries, seconds.
    failures : numpy.ndarray
        Failures noticed (at compute, all-reduce, checkpoint and restart checks).
    global_restarts : numpy.ndarray
        Global restarts.
    recomputed_stacks : numpy.ndarray
        Stacks (pieces, with micro-batches) computed in retried attempts of a
        step, summed over workers (SPARe only; 0 for Rep).
    samples_skipped : numpy.ndarray
        Share of the global batch not trained over the steps the run kept (0
        for the exact-batch strategies; an elastic job's steps train
        ``min(A, n)`` of its ``A`` shards with ``n`` workers up).
    exact_batch : bool
        Whether the plan keeps the global batch exact (every step trains all
        ``A`` shards), so that no table compares unlike things silently.
    breakdown_seconds : numpy.ndarray or None
        Each run's wall time by cause, one row per trial, columns
        :data:`~spare_theory.steps.runs.BREAKDOWN_FIELDS` (the useful work,
        then the badput causes; they add up to ``total_seconds``), for
        :meth:`bill`; ``None`` when the rule reports no breakdown.

    Examples
    --------
    >>> from spare_theory.steps.rep_run import run_rep
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sim = simulate_step_trials(paper_scenario(50, steps=200), run_rep, strategy="rep",
    ...                            r=3, checkpoint_every_steps=5, trials=3, seed=0)
    >>> sim.trials, sim.total_seconds.shape, bool((sim.uptime <= 1.0).all())
    (3, (3,), True)
    >>> sim.mean("total_over_T0") > 1.0, sim.standard_error("failures") >= 0.0
    (True, True)
    >>> sim.to_frame().columns.tolist()[:3]
    ['trial', 'total_seconds', 'up_seconds']
    """

    #: Per-trial quantities beside the array fields.
    derived: ClassVar[tuple[str, ...]] = (
        "restarts",
        "down_seconds",
        "hours",
        "uptime",
        "total_over_T0",
    )

    scenario: StepScenario
    strategy: str
    r: int
    checkpoint_every_steps: int
    total_seconds: np.ndarray
    up_seconds: np.ndarray
    failures: np.ndarray
    global_restarts: np.ndarray
    recomputed_stacks: np.ndarray
    samples_skipped: np.ndarray
    exact_batch: bool = True
    breakdown_seconds: np.ndarray | None = None

    @property
    def restarts(self) -> np.ndarray:
        """Global restarts per trial (``global_restarts``; the name the other results use)."""
        return self.global_restarts

    @property
    def down_seconds(self) -> np.ndarray:
        """``total - up``: time in global and partial recoveries (and elastic stalls), seconds."""
        return self.total_seconds - self.up_seconds

    @property
    def hours(self) -> np.ndarray:
        """``total_seconds / 3600``, hours."""
        return self.total_seconds / 3600.0

    @property
    def uptime(self) -> np.ndarray:
        """``up / total`` per trial (the paper's "availability")."""
        return self.up_seconds / self.total_seconds

    @property
    def total_over_T0(self) -> np.ndarray:
        """``total / T0`` per trial, ``T0 = scenario.failure_free_seconds``."""
        return self.total_seconds / self.scenario.failure_free_seconds

    def bill(self, cost: CostModel, *, gpus_per_node: int = 8) -> BillSamples:
        """Each run's bill under ``cost``, from its own measured breakdown.

        The causes as :attr:`StepEstimate.badput_hours
        <spare_theory.steps.estimate.StepEstimate.badput_hours>` means them,
        measured on each run's clock (:mod:`spare_theory.steps.runs`, "The
        bill's breakdown"), with ``gpus_per_node`` as for
        :meth:`StepEstimate.bill <spare_theory.steps.estimate.StepEstimate.bill>`:
        ``G_r = (groups x nodes_per_group + spare_nodes) x gpus_per_node``
        reserved, ``G_c = groups x nodes_per_group x gpus_per_node`` in groups.
        Three parts are split differently from the model (``docs/jobs.md``
        gives their measured sizes): the all-reduce shortened by a failure
        shortens the kept step (redundant compute; the model: wasted
        progress); rejoin stalls are reconfiguration (the model: wasted
        progress); partial recoveries are their wall time, one
        ``partial_recovery_seconds`` each (``down_seconds`` takes the
        per-worker maximum).

        Parameters
        ----------
        cost : CostModel
        gpus_per_node : int
            GPUs per node, ``>= 1`` (default 8).

        Returns
        -------
        BillSamples
            One bill per trial.

        Raises
        ------
        ValueError
            When the rule reported no breakdown; naming ``gpus_per_node``.

        Examples
        --------
        >>> from spare_theory import CostModel
        >>> from spare_theory.steps.rep_run import run_rep
        >>> from spare_theory.steps.scenario import paper_scenario
        >>> sim = simulate_step_trials(paper_scenario(50, steps=200), run_rep, strategy="rep",
        ...                            r=3, checkpoint_every_steps=5, trials=3, seed=0)
        >>> bills = sim.bill(CostModel(), gpus_per_node=8)
        >>> bool(np.allclose(bills.gpu_hours, 50 * 8 * sim.hours, rtol=1e-12))
        True
        >>> lost = sum(bills.mean(f"{cause}_hours") for cause in BADPUT_CAUSES)
        >>> round((bills.mean("useful_hours") + lost) / sim.mean("hours"), 12)
        1.0
        """
        if self.breakdown_seconds is None:
            raise ValueError("this simulation's rule reports no breakdown: no bill")
        per_node = as_count(gpus_per_node, "gpus_per_node")
        sc = self.scenario
        nodes = sc.groups * sc.nodes_per_group
        parts = self.breakdown_seconds.T / 3600.0
        return make_bill(
            cost,
            hours=self.hours,
            useful_hours=parts[0],
            badput_hours=dict(zip(BADPUT_CAUSES, parts[1:])),
            reserved_gpus=(nodes + (sc.spare_nodes or 0)) * per_node,
            grouped_gpus=nodes * per_node,
        )


def _run_trial(task: tuple) -> tuple:
    scenario, trial, r, k, seed, replay, max_seconds = task
    # The horizon is passed only when set and to a rule that takes it (the package's
    # rules do; a third-party rule need not, and then plays its runs to the end).
    takes = "max_seconds" in inspect.signature(trial).parameters
    cut = {"max_seconds": max_seconds} if takes and math.isfinite(max_seconds) else {}
    try:
        return _play_trial(scenario, trial, r, k, seed, replay, cut)
    except RunCut as stop:
        return stop.result()


def _play_trial(
    scenario: StepScenario, trial: Any, r: int, k: int, seed: Any, replay: Any, cut: dict
) -> tuple:
    rng = np.random.default_rng(seed)
    if replay is None:
        # Repairs draw from their own child stream: without them nothing changes.
        if not scenario.repairs:
            return trial(scenario, r, k, rng, repairs=None, **cut)
        kind = PoolRepairTimes if scenario.pool else RepairTimes
        return trial(scenario, r, k, rng, repairs=kind(scenario, child_seed(seed, 0)), **cut)
    clocks = LogClocks(
        replay.table,
        scenario.groups,
        scenario.nodes_per_group,
        replay.mapping,
        np.random.default_rng(child_seed(seed, 1)),
    )
    repairs = None
    if replay.repairs == "log" or scenario.repairs:
        durations = clocks.durations if replay.repairs == "log" else None
        kind = PoolRepairTimes if scenario.pool else RepairTimes
        repairs = kind(scenario, child_seed(seed, 0), durations)
    return trial(scenario, r, k, rng, repairs=repairs, clocks=clocks, **cut)


def simulate_step_trials(
    scenario: StepScenario,
    trial: StepTrial,
    *,
    strategy: str,
    r: int,
    checkpoint_every_steps: int,
    trials: int,
    seed: int | np.random.SeedSequence,
    executor: cf.Executor | None = None,
    progress: bool = False,
    exact_batch: bool = True,
    replay: Replay | None = None,
    first_trial: int = 0,
    max_hours: float = math.inf,
) -> StepSimulation:
    """Run ``trials`` simulated training runs of ``scenario`` under a strategy's rule ``trial``.

    Trial ``i`` runs ``trial(scenario, r, k, rng, repairs=repairs)`` with
    ``rng = numpy.random.default_rng(child_seed(seed, i))`` and, when the
    scenario has repairs, ``repairs`` a
    :class:`~spare_theory.steps.runs.RepairTimes` on the stream
    ``child_seed(child_seed(seed, i), 0)`` (else ``None``): results do not
    depend on the executor or on how many trials are run.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law.
    trial : callable
        A picklable rule ``(scenario, r, k, rng, *, repairs) -> tuple`` of
        :data:`~spare_theory.steps.runs.RUN_FIELDS` (e.g.
        :func:`~spare_theory.steps.spare_run.run_spare`, or a bound method of
        a strategy object); it is trusted with ``r``.
    strategy : str
        The strategy's name, stored in the result (a label only).
    r : int
        Redundancy, ``>= 0`` (0: elastic DP's spare groups).
    checkpoint_every_steps : int
        Checkpoint interval ``k >= 1``, steps (a checkpoint also follows the
        last step).
    trials : int
        Independent runs, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Root of the trials' streams.
    executor : concurrent.futures.Executor, optional
        Runs trials in parallel; ``None`` runs them here.
    progress : bool
        Show a progress bar over trials.
    exact_batch : bool
        Stored in the result (:attr:`StepSimulation.exact_batch`: the plan's).
    replay : Replay, optional
        The workers' faults from a failure log
        (:class:`~spare_theory.steps.sources.LogClocks`, shifts on the stream
        ``child_seed(child_seed(seed, i), 1)``), repairs the log's outages
        (``replay.repairs == "log"``) or the scenario's; ``trial`` then takes
        ``clocks=``.  A spare pool (``scenario.spare_nodes``) is played by
        :class:`~spare_theory.steps.sources.PoolRepairTimes`.
    first_trial : int
        Index of the first trial, ``>= 0``: trials ``first_trial, ...,
        first_trial + trials - 1`` are run (more trials added to a sample).
    max_hours : float
        Horizon, hours (default none): a run still unfinished when a global
        restart ends after it stops there with an infinite ``total_seconds``
        (a ``trial`` with a ``max_seconds`` keyword is given it, in seconds;
        one without plays its runs to the end), so a plan whose runs never
        finish costs a bounded time to rule out.

    Returns
    -------
    StepSimulation

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    The first trials do not depend on how many are run:

    >>> from spare_theory.steps.rep_run import run_rep
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = paper_scenario(20, steps=100)
    >>> three, two = (simulate_step_trials(sc, run_rep, strategy="rep", r=4,
    ...                                    checkpoint_every_steps=5, trials=n, seed=4)
    ...               for n in (3, 2))
    >>> bool((three.total_seconds[:2] == two.total_seconds).all())
    True
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    if not callable(trial):
        raise ValueError(f"trial must be callable, got {type(trial).__name__}")
    r = as_count(r, "r", minimum=0)
    k = as_count(checkpoint_every_steps, "checkpoint_every_steps")
    n = as_count(trials, "trials")
    first = as_count(first_trial, "first_trial", minimum=0)
    root = as_seed_sequence(seed)
    horizon = 3600.0 * as_real(
        max_hours, "max_hours", minimum=0.0, strict_minimum=True, allow_inf=True
    )
    tasks = [
        (scenario, trial, r, k, child_seed(root, i), replay, horizon)
        for i in range(first, first + n)
    ]
    rows = map_tasks(_run_trial, tasks, executor=executor, desc="trials", progress=progress)
    table = np.array(rows, dtype=np.float64).reshape(n, -1)
    if table.shape[1] not in (len(RUN_FIELDS), len(RUN_FIELDS) + len(BREAKDOWN_FIELDS)):
        raise ValueError(
            f"trial returned {table.shape[1]} values; expected RUN_FIELDS "
            f"({len(RUN_FIELDS)}), optionally followed by BREAKDOWN_FIELDS"
        )
    values = {
        name: (col.astype(np.int64) if name in _COUNTS else col)
        for name, col in zip(RUN_FIELDS, table.T)
    }
    breakdown = table[:, len(RUN_FIELDS) :] if table.shape[1] > len(RUN_FIELDS) else None
    return StepSimulation(
        scenario=scenario,
        strategy=strategy,
        r=r,
        checkpoint_every_steps=k,
        exact_batch=exact_batch,
        breakdown_seconds=breakdown,
        **values,
    )
