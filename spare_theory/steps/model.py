"""The step-level closed form's front door by strategy name (transitional).

The SPARe paper's time-to-train and availability figures come from the
authors' discrete-event simulator (public repository tsinghua-fib-lab/AutoSOTA,
folder ``ICML-2026/paper-3612-SPARe/best_code``, BSD), whose workload is
counted in synchronous steps (:class:`~spare_theory.steps.scenario.StepScenario`).
The closed form predicts its expected wall time, uptime, restarts and
failures without simulating; the event simulation
(:func:`spare_theory.steps.simulation.simulate_steps`) is the independent
check.  Derivation: ``docs/step_model.md``.  The pieces:

- :mod:`~spare_theory.steps.extremes`: the expected step (extreme values of
  the jitter);
- :mod:`~spare_theory.steps.restarts`: restart windows and the resume burst;
- :mod:`~spare_theory.steps.cycles` (Rep, CKPT-only),
  :mod:`~spare_theory.steps.spare_cycle` (SPARe) and
  :mod:`~spare_theory.steps.repairs` (with repairs): a strategy's cycle
  table, a :class:`~spare_theory.steps.cycles.StepCycle`;
- :mod:`~spare_theory.steps.estimate`: the renewal-reward estimate from a
  cycle table, the same for every strategy.

:func:`step_time_to_train` resolves a strategy name to its two cycle-table
builders and checks the strategy's redundancy, in one place,
:func:`_strategy_builders`; the strategy objects of
:mod:`spare_theory.strategies` replace it (and this module) by calling
:func:`spare_theory.steps.estimate.step_estimate` with their builders.
"""

from __future__ import annotations

from .._validation import as_choice, as_count
from .cycles import rep_step_cycle
from .estimate import CycleBuilder, StepEstimate, step_estimate
from .repairs import rep_repair_step_cycle, spare_repair_step_cycle
from .scenario import StepScenario
from .spare_cycle import spare_step_cycle

__all__ = ["STEP_MODEL_STRATEGIES", "step_time_to_train"]

#: Strategies accepted by :func:`step_time_to_train`.
STEP_MODEL_STRATEGIES = ("ckpt", "rep", "spare")


def _strategy_builders(
    scenario: StepScenario, strategy: str, r: int
) -> tuple[int, CycleBuilder, CycleBuilder]:
    """TRANSITIONAL: the checked ``r`` and the two cycle-table builders of the named strategy.

    The one place of the closed form where a strategy name is read: each
    strategy class of :mod:`spare_theory.strategies` checks its own
    redundancies and hands its builders to
    :func:`~spare_theory.steps.estimate.step_estimate`.
    """
    N = scenario.groups

    def ckpt() -> tuple[int, CycleBuilder, CycleBuilder]:
        if as_count(r, "r") != 1:
            raise ValueError(f"r must be 1 for strategy 'ckpt', got {r}")
        return 1, rep_step_cycle, rep_repair_step_cycle

    def rep() -> tuple[int, CycleBuilder, CycleBuilder]:
        return as_count(r, "r", maximum=N), rep_step_cycle, rep_repair_step_cycle

    def spare() -> tuple[int, CycleBuilder, CycleBuilder]:
        checked = as_count(r, "r", maximum=N)
        if checked > 1 and checked * (checked - 1) + 1 > N:
            raise ValueError(
                f"r={checked} needs N >= r(r-1)+1 = {checked * (checked - 1) + 1} groups, got N={N}"
            )
        if scenario.microbatches > 1 and scenario.repairs:
            raise ValueError(
                "microbatches > 1 with repairs is not modelled; set microbatches=1 or "
                "repair_seconds=None"
            )
        return checked, spare_step_cycle, spare_repair_step_cycle

    return {"ckpt": ckpt, "rep": rep, "spare": spare}[strategy]()


def step_time_to_train(
    scenario: StepScenario, strategy: str, *, r: int, checkpoint_every_steps: int
) -> StepEstimate:
    """Expected wall time, uptime and restarts of the published step-level simulator.

    Renewal reward over restart cycles
    (:func:`spare_theory.steps.estimate.estimate_steps` and
    ``docs/step_model.md``): ``restarts = n / E[P]`` and
    ``seconds = restarts (E[D] + E[C])``, with ``E[D]`` the restart
    (:func:`~spare_theory.steps.restarts.expected_restart_seconds`), ``E[C]``
    the computation until the wipe-out is detected and ``E[P]`` the net
    steps kept per cycle.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    strategy : {"ckpt", "rep", "spare"}
        CKPT-only (every failure a global restart), Rep (``r`` times the
        compute per worker, consecutive replica sets, a restart when a set
        is empty) or SPARe (ruler placement, ``S*`` stacks, a restart at
        wipe-out).
    r : int
        Redundancy, ``1`` for ``"ckpt"``; ``1 <= r <= N`` (SPARe needs
        ``N >= r(r-1)+1``).
    checkpoint_every_steps : int
        ``k``, as in :func:`~spare_theory.steps.estimate.estimate_steps`.

    Returns
    -------
    StepEstimate

    Raises
    ------
    ValueError
        Naming the argument (unknown strategy, ``r`` out of range, and as
        :func:`~spare_theory.steps.estimate.estimate_steps`).

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> est = step_time_to_train(paper_scenario(1000), "spare", r=9, checkpoint_every_steps=30)
    >>> print(round(est.total_over_T0, 2), round(est.uptime, 3), round(est.restarts, 1))
    2.39 0.961 9.8
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    strategy = as_choice(strategy, "strategy", STEP_MODEL_STRATEGIES)
    r_checked, step_cycle, repair_step_cycle = _strategy_builders(scenario, strategy, r)
    k = as_count(checkpoint_every_steps, "checkpoint_every_steps")
    return step_estimate(
        scenario,
        step_cycle,
        repair_step_cycle,
        strategy=strategy,
        r=r_checked,
        checkpoint_every_steps=k,
    )
