"""The step-level event simulation's front door by strategy name (transitional).

:func:`simulate_steps` resolves a strategy name to its rule
(:func:`spare_theory.steps.rep_run.run_rep` for ``"ckpt"`` and ``"rep"``,
:func:`spare_theory.steps.spare_run.run_spare` for ``"spare"``), checks the
strategy's redundancy and runs
:func:`spare_theory.steps.trials.simulate_step_trials`.  The name is read in
one place, :func:`_strategy_rule`; the strategy objects of
:mod:`spare_theory.strategies` replace it (and this module) by calling the
rules directly.  Semantics of a run: :mod:`spare_theory.steps.runs`.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools

import numpy as np

from .._validation import as_choice, as_count
from .rep_run import run_rep
from .scenario import StepScenario
from .spare_run import check_spare_run, run_spare
from .trials import StepSimulation, StepTrial, simulate_step_trials

__all__ = ["REP_RECOVERIES", "STEP_STRATEGIES", "simulate_steps"]

#: Strategies accepted by :func:`simulate_steps`.
STEP_STRATEGIES = ("ckpt", "rep", "spare")

#: Rep recovery semantics accepted by :func:`simulate_steps` (``rep_recovery``).
REP_RECOVERIES = ("published", "all")


def _strategy_rule(
    scenario: StepScenario, strategy: str, r: int | None, rep_recovery: str
) -> tuple[int, StepTrial]:
    """TRANSITIONAL: the checked ``r`` and the rule of the named strategy.

    The one place of the simulation where a strategy name is read: each
    strategy class of :mod:`spare_theory.strategies` checks its own
    redundancies and hands its rule to :func:`simulate_step_trials`.
    """
    N = scenario.groups
    published = rep_recovery == "published"

    def required() -> int:
        if r is None:
            raise ValueError(f"r is required for strategy {strategy!r}")
        return as_count(r, "r", minimum=1, maximum=N)

    def ckpt() -> tuple[int, StepTrial]:
        checked = as_count(1 if r is None else r, "r", minimum=1, maximum=1)
        return checked, functools.partial(run_rep, published=published)

    def rep() -> tuple[int, StepTrial]:
        return required(), functools.partial(run_rep, published=published)

    def spare() -> tuple[int, StepTrial]:
        checked = required()
        check_spare_run(scenario, checked)  # before any trial runs
        return checked, run_spare

    return {"ckpt": ckpt, "rep": rep, "spare": spare}[strategy]()


def simulate_steps(
    scenario: StepScenario,
    strategy: str,
    *,
    r: int | None = None,
    checkpoint_every_steps: int,
    trials: int,
    seed: int | np.random.SeedSequence,
    rep_recovery: str = "published",
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> StepSimulation:
    """Simulate ``trials`` training runs of ``scenario`` step by step.

    The semantics are those of the SPARe authors' published discrete-event
    simulator (:mod:`spare_theory.steps.runs`): jittered stacks, failure checks
    before each stack, at the all-reduce and at checkpoints, partial
    recoveries, retried steps with reordered stacks (SPARe), replica sets
    (Rep), rollback to the last checkpoint after a global restart.

    Parameters
    ----------
    scenario : StepScenario
        Workload, costs and lifetime law.
    strategy : {"spare", "rep", "ckpt"}
        SPARe, Rep (``r`` replicas per set, ``r`` times the compute per
        worker) or checkpointing alone (Rep with ``r = 1``).
    r : int
        Redundancy, ``1 <= r <= N`` (for ``"spare"`` a cyclic placement must
        exist: ``N >= r(r-1) + 1``); omitted or 1 for ``"ckpt"``.
    checkpoint_every_steps, trials, seed
        As in :func:`~spare_theory.steps.trials.simulate_step_trials` (trial
        ``i`` uses the stream ``child_seed(seed, i)``).
    rep_recovery : {"published", "all"}
        Rep and ckpt only.  ``"published"`` (default) reproduces the published
        binary: after a failed step its controller acts on the lowest failed
        id only (it stops reading failure flags at the first set one), so the
        other workers that failed in the step stay active, compute nothing,
        are flagged again in each later step until removed (their clocks
        expiring meanwhile are renewed but not counted) and count as
        survivors in the replica-set test; and the checkpoint after a step is
        checked and written by the leader the step started with.  ``"all"``:
        every worker that failed in the step is removed at once and the
        current leader writes the checkpoint.
    executor, progress
        As in :func:`~spare_theory.steps.trials.simulate_step_trials`.

    Returns
    -------
    StepSimulation

    Raises
    ------
    ValueError
        Naming the argument (``N`` when SPARe has no cyclic placement).

    Examples
    --------
    Without failures a step takes the slowest of ``N`` jittered stacks plus
    the all-reduce:

    >>> from scipy import stats
    >>> from spare_theory import StepScenario, simulate_steps
    >>> sc = StepScenario(groups=8, steps=50, allreduce_seconds=1.0,
    ...                   failure_law=stats.expon(scale=1e15))
    >>> sim = simulate_steps(sc, "spare", r=2, checkpoint_every_steps=10, trials=2, seed=1)
    >>> int(sim.failures.sum()), round(sim.mean("total_over_T0"), 2)
    (0, 1.16)
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_STRATEGIES)
    rep_recovery = as_choice(rep_recovery, "rep_recovery", REP_RECOVERIES)
    r_checked, trial = _strategy_rule(scenario, strategy, r, rep_recovery)
    return simulate_step_trials(
        scenario,
        trial,
        strategy=strategy,
        r=r_checked,
        checkpoint_every_steps=checkpoint_every_steps,
        trials=trials,
        seed=seed,
        executor=executor,
        progress=progress,
    )
