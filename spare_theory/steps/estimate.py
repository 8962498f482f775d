"""The renewal-reward estimate of a step-level run from a strategy's cycle table.

``docs/step_model.md``; a :class:`~spare_theory.steps.cycles.StepCycle`
holds everything strategy-specific, so the estimate is one function for
every strategy.  Notation as in :mod:`spare_theory.steps.cycles` (seconds);
``k`` steps between checkpoints, ``delta`` a checkpoint, ``n`` steps.

1. Checkpoints every ``k`` steps (work based).  The leader checks its clock
   first: a failure since its last check (``w_L = b`` below) loses the
   checkpoint, probability ``1 - e^{-lambda w_L}``.
2. Progress and rework.  Steps progress at ``(1 - phi)/(tau + delta/k)``
   (``phi`` the share of time in failure handling, ``tau`` the harmonic
   mean attempt given no wipe-out).  After a resume the checkpointed step is
   redone and checkpointed again; checkpoint ``j`` completes at ``c_j``.  A
   failure is noticed at the end of its attempt, or of the next one if it
   falls in the last ``b`` of it (the cycle's ``post``), so checkpoint ``j``
   is kept iff the wipe-out failure comes after ``c_j - delta - b``:
   ``E[P] = k sum_j Q(c_j - delta - b)`` steps.  The detection remainder
   ``rho`` (from the failure to the restart) is averaged over a uniform
   phase in the checkpoint period.  ``E[C] = int Q dt + E[rho]``.
3. Renewal reward, ``cycles = n / E[P]``, ``total = cycles (E[D] + E[C])``,
   with the run's two ends (:mod:`spare_theory.steps.run_ends`): the last
   cycle ends when the work is done (no wipe-out, rollback or restart), the
   first starts fresh (no redone step, no burst).  The time they save comes
   off the compute beyond the kept work (rework; failures, handling and
   stalls in proportion); ``down = restarts E[D] +`` the partial recoveries
   and stalls, ``uptime = 1 - down/total``.  A cycle is followed for at most
   four runs' worth of steps; one that reaches that horizon counts as a
   renewal without a restart (so with no failures the estimate is the
   jittered failure-free run).
4. Repairs (:func:`estimate_with_repairs`): without a rejoin stall a repair
   only shrinks the down set (same clocks), so the run is never longer than
   without repairs; where the repaired table's stationary up-times
   (non-exponential laws, slow repairs) would say otherwise, the estimate
   without repairs stands.
5. Elastic jobs (a table with ``membership``): a step trains ``batch(t)`` of the
   global batch, so checkpoint ``j`` keeps the work ``w_j = int rate batch
   dt`` since the last one and ``E[P] = sum_j Q_j w_j`` full steps (the
   checkpoints still come every ``k`` steps);
   ``samples_skipped = 1 - E[P] / (full_batch k sum_j Q_j)``.  Any live
   group writes: checkpoint ``j`` is kept iff the wipe-out comes after it
   completes, ``Q_j = Q(c_j)``, and no leader check loses it.  A checkpoint
   costs its own wall time (the stall after it included) instead of the
   handling share; stalls count as down.

A cycle table costs tens of milliseconds; an estimate for another ``k``
well under a millisecond.

The module is long (about 725 lines, half of them docstrings and Examples)
for the same reason as :mod:`spare_theory.hourly.renewal`: the estimate type,
the renewal-reward sums that fill it and what it says of itself (summary, lost
time by cause, bill) are one model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate

from .._samples import summary_text
from .._validation import as_count
from ..hourly.renewal import TrainingEstimate
from ..planning.bill import Bill, CostModel, make_bill, split_redundancy
from .clock_age import mix_over_ages
from .cycles import StepCycle
from .restarts import mean_life_at, restart_windows
from .run_ends import finite_run
from .scenario import StepScenario

__all__ = [
    "CycleBuilder",
    "StepEstimate",
    "estimate_steps",
    "estimate_with_repairs",
    "step_estimate",
]

#: A strategy's cycle-table builder: ``(scenario, r) -> StepCycle``.
CycleBuilder = Callable[[StepScenario, int], StepCycle]


@dataclass(frozen=True)
class StepEstimate:
    """Expected outcome of a step-level training run (:func:`estimate_steps`).

    The breakdown ``*_seconds`` fields add up to ``seconds``.

    Attributes
    ----------
    strategy : str
        The strategy's name (a label: ``"ckpt"``, ``"rep"``, ``"spare"``).
    r : int or None
        The strategy's ``r`` (``None`` for a strategy without one: CKPT-only,
        elastic DP).
    checkpoint_every_steps : int
        ``k``: a checkpoint after every ``k`` steps (and the last).
    seconds : float
        Expected wall time of the run, seconds.
    hours : float
        ``seconds / 3600``.
    total_over_T0 : float
        ``seconds / T0`` with ``T0 = steps * (stack + all-reduce)``.
    uptime : float
        ``1 - down / seconds``: the paper's availability (down = global
        restarts and partial recoveries).
    restarts : float
        Expected global restarts.
    failures : float
        Expected failures noticed (computing, in restart windows, and
        clocks of removed workers replayed at the restart).
    mean_restart_seconds : float
        ``E[D]``, one global restart.
    cycle_steps : float
        ``E[P]``: net steps gained per cycle (full steps of work for an elastic job).
    useful_seconds : float
        ``steps * (stack + all-reduce)`` worth of kept steps (``T0``).
    redundancy_seconds : float
        Extra time of the kept steps: stacks beyond one, Rep's ``r``-fold
        compute, jitter.
    checkpoint_seconds : float
        Checkpoint writes.
    restart_seconds : float
        Global restarts.
    handling_seconds : float
        Retries, partial recoveries, minus the shortened all-reduces.
    rework_seconds : float
        Steps lost at wipe-outs, the redone step after each resume, the
        detection delay.
    down_seconds : float
        Global restarts plus partial recoveries (and an elastic job's stalls).
    samples_skipped : float
        Share of the global batch not trained over the steps kept: 0 for the
        exact-batch plans; an elastic job's steps train ``min(A, n)`` of its
        ``A`` shards with ``n`` workers up.
    exact_batch : bool
        Whether every step of the plan trains its whole batch.
    caveats : tuple of str
        The documented biases of the model that apply to this plan
        (:meth:`Strategy.caveats <spare_theory.strategies.base.Strategy.caveats>`,
        attached by the front doors); empty when none applies.
    nodes, spare_nodes : int
        Nodes in the workers (``groups x nodes_per_group``) and in the spare
        pool, for :meth:`bill` (0: unknown, no bill).
    idle_share : float
        Share of the workers held idle as hot spares (``1 - A / N``; 0 but for
        hot spares).
    availability, breakdown_hours, feasible, reason : float, dict, bool, str
        Properties: the useful share of wall time ``useful_seconds /
        seconds`` (``1 / total_over_T0``); ``hours`` by part (``useful``,
        ``redundancy``, ``checkpoint``, ``restart``, ``handling``,
        ``rework``; they add up to ``hours``); and, as for
        :class:`~spare_theory.hourly.renewal.TrainingEstimate`, whether the
        run finishes in practice (finite ``hours``, availability at least
        :attr:`MIN_FEASIBLE_AVAILABILITY`) and, if not, why.  :meth:`summary`
        says it all as text.

    Examples
    --------
    >>> from spare_theory.steps.cycles import rep_step_cycle
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = paper_scenario(200)
    >>> est = estimate_steps(sc, rep_step_cycle(sc, 3), strategy="rep", r=3,
    ...                      checkpoint_every_steps=6)
    >>> print(round(est.total_over_T0, 2), round(est.mean_restart_seconds))
    6.1 7385
    >>> print(round(sum(est.breakdown_hours.values()) / est.hours, 9))
    1.0
    >>> print(round(est.availability, 3), est.feasible, repr(est.reason))
    0.165 True ''
    """

    strategy: str
    r: int | None
    checkpoint_every_steps: int
    seconds: float
    hours: float
    total_over_T0: float
    uptime: float
    restarts: float
    failures: float
    mean_restart_seconds: float
    cycle_steps: float
    useful_seconds: float
    redundancy_seconds: float
    checkpoint_seconds: float
    restart_seconds: float
    handling_seconds: float
    rework_seconds: float
    down_seconds: float
    samples_skipped: float = 0.0
    exact_batch: bool = True
    caveats: tuple[str, ...] = ()
    nodes: int = 0
    spare_nodes: int = 0
    idle_share: float = 0.0

    #: Smallest availability of a plan said to finish (shared with the hour-level estimate).
    MIN_FEASIBLE_AVAILABILITY = TrainingEstimate.MIN_FEASIBLE_AVAILABILITY

    @property
    def availability(self) -> float:
        """``useful_seconds / seconds``: the useful share of wall time (0 if ``seconds`` is inf)."""
        return self.useful_seconds / self.seconds if math.isfinite(self.seconds) else 0.0

    @property
    def breakdown_hours(self) -> dict[str, float]:
        """``hours`` by part: useful, redundancy, checkpoint, restart, handling, rework."""
        parts = ("useful", "redundancy", "checkpoint", "restart", "handling", "rework")
        return {name: getattr(self, f"{name}_seconds") / 3600.0 for name in parts}

    # The hour-level estimate's definitions, shared (they read hours,
    # availability, restarts and the threshold only).
    feasible = TrainingEstimate.feasible
    reason = TrainingEstimate.reason

    def summary_rows(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]:
        """The plan's variables, its figures and notes: the body of :meth:`summary`."""
        k = self.checkpoint_every_steps
        plan = [
            ("strategy", self.strategy),
            ("r", self.r),
            ("checkpoint every", f"{k} step{'s' if k > 1 else ''}"),
            ("restarts", f"{self.restarts:.4g}"),
            ("failures", f"{self.failures:.4g}"),
        ]
        figures = [
            ("hours", f"{self.hours:,.6g}"),
            ("total / T0", f"{self.total_over_T0:.4f}"),
            ("availability", f"{self.availability:.4f}"),
            ("uptime", f"{self.uptime:.4f}"),
            (
                "samples skipped",
                "none (exact batch)" if self.exact_batch else f"{self.samples_skipped:.4f}",
            ),
        ]
        # The shared properties read only fields both estimates have.
        feasible, reason = self.feasible, self.reason  # type: ignore[misc]
        return plan, figures, [] if feasible else [f"does not finish: {reason}"]

    def summary(self) -> str:
        """The estimate as text: plan, hours, time over ``T0``, the breakdown, the caveats.

        The layout of :meth:`TrainingEstimate.summary
        <spare_theory.hourly.renewal.TrainingEstimate.summary>`.

        Examples
        --------
        >>> from spare_theory import paper_scenario, time_to_train
        >>> est = time_to_train(paper_scenario(200), "rep", r=3, checkpoint_every_steps=6)
        >>> print(est.summary())
               Training estimate (step-level model of the published simulator)
        ==============================================================================
        strategy:                         rep    hours:                       1,113.49
        r:                                  3    total / T0:                    6.0736
        checkpoint every:             6 steps    availability:                  0.1646
        restarts:                       210.3    uptime:                        0.6123
        failures:                   1.341e+04    samples skipped:   none (exact batch)
        ------------------------------------------------------------------------------
        breakdown                        hours    share
          useful                       183.333    0.165
          redundancy                   427.162    0.384
          checkpoint                    16.919    0.015
          restart                      431.461    0.387
          handling                    -2.04047   -0.002
          rework                       56.6505    0.051
        ------------------------------------------------------------------------------
        caveats (model approximations and biases, then the audit's error):
          [1] audit (150 random scenarios, seed 2026; docs/audit.md): 90 % of its 8
              model answers on scenarios with step level within 2.4 % of the
              simulation (worst +3.8 %, 1 outside 3 % and 3 SE); it drew 8 to 64
              groups, this scenario has 200
        ==============================================================================
        """
        plan, figures, notes = self.summary_rows()
        return summary_text(
            "Training estimate (step-level model of the published simulator)",
            plan,
            figures,
            breakdown_hours=self.breakdown_hours,
            notes=notes,
            caveats=self.caveats,
        )

    @property
    def badput_hours(self) -> dict[str, float]:
        """Lost wall time by cause, hours; with ``useful_seconds / 3600`` they add up to ``hours``.

        Checkpoint writes and restarts are their own parts; reconfiguration is
        the down time beyond global restarts (partial recoveries, an elastic
        job's stalls: ``down_seconds - restart_seconds``); wasted progress the
        rest of the handling and rework (retried attempts, steps lost at
        wipe-outs, the redone step, detection); the redundancy time is split
        into skipped samples, idle spares and redundant compute (stack
        layers beyond one, Rep's copies, the jitter of the slowest group)
        by :func:`~spare_theory.planning.bill.split_redundancy`.

        Examples
        --------
        >>> from spare_theory.steps.cycles import rep_step_cycle
        >>> from spare_theory.steps.scenario import paper_scenario
        >>> sc = paper_scenario(200)
        >>> est = estimate_steps(sc, rep_step_cycle(sc, 3), strategy="rep", r=3,
        ...                      checkpoint_every_steps=6)
        >>> lost = est.badput_hours
        >>> round((est.useful_seconds / 3600 + sum(lost.values())) / est.hours, 12)
        1.0
        """
        hour = 3600.0
        useful = self.useful_seconds / hour
        reconfiguration = (self.down_seconds - self.restart_seconds) / hour
        skipped, idle, rest = split_redundancy(
            useful, self.redundancy_seconds / hour, self.samples_skipped, self.idle_share
        )
        return {
            "checkpoint_save": self.checkpoint_seconds / hour,
            "wasted_progress": (self.handling_seconds + self.rework_seconds) / hour
            - reconfiguration,
            "restart": self.restart_seconds / hour,
            "redundant_compute": float(rest),
            "reconfiguration": reconfiguration,
            "skipped_samples": float(skipped),
            "idle_spares": float(idle),
        }

    def bill(self, cost: CostModel, *, gpus_per_node: int = 8) -> Bill:
        """What the run costs under ``cost`` (:mod:`spare_theory.planning.bill`).

        A step-level scenario counts workers and their nodes, not GPUs:
        ``gpus_per_node`` says how many GPUs a node holds (the published
        simulator's workers are one node each unless ``nodes_per_group``
        says otherwise, so price the SPARe paper's 3,000-GPU workers with
        ``gpus_per_node=3000``).

        Parameters
        ----------
        cost : CostModel
        gpus_per_node : int
            GPUs per node, ``>= 1`` (default 8).

        Returns
        -------
        Bill

        Raises
        ------
        ValueError
            When ``hours`` is infinite or the estimate does not know its nodes.

        Examples
        --------
        >>> from spare_theory import CostModel
        >>> from spare_theory.steps.cycles import rep_step_cycle
        >>> from spare_theory.steps.scenario import paper_scenario
        >>> sc = paper_scenario(200)
        >>> est = estimate_steps(sc, rep_step_cycle(sc, 3), strategy="rep", r=3,
        ...                      checkpoint_every_steps=6)
        >>> bill = est.bill(CostModel(), gpus_per_node=3000)
        >>> bill.gpu_hours == 600_000 * est.hours
        True
        """
        if not math.isfinite(self.hours):
            raise ValueError(f"hours is {self.hours}: a run that never finishes has no bill")
        per_node = as_count(gpus_per_node, "gpus_per_node")
        return make_bill(
            cost,
            hours=self.hours,
            useful_hours=self.useful_seconds / 3600.0,
            badput_hours=self.badput_hours,
            reserved_gpus=(self.nodes + self.spare_nodes) * per_node,
            grouped_gpus=self.nodes * per_node,
        )


def estimate_steps(
    scenario: StepScenario,
    cycle: StepCycle,
    *,
    strategy: str,
    r: int,
    checkpoint_every_steps: int,
) -> StepEstimate:
    """The renewal-reward estimate of ``scenario`` from a strategy's cycle table.

    ``restarts = n / E[P]`` and ``seconds = restarts (E[D] + E[C])`` (module
    docstring, items 1-3) with ``E[D]`` the restart
    (:func:`~spare_theory.steps.restarts.expected_restart_seconds`), ``E[C]``
    the computation until the wipe-out is detected and ``E[P]`` the net
    steps kept per cycle, all from ``cycle``.

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law the cycle table was built for.
    cycle : StepCycle
        The strategy's table (e.g.
        :func:`~spare_theory.steps.spare_cycle.spare_step_cycle`).
    strategy : str
        The strategy's name, stored in the estimate (a label only).
    r : int
        Redundancy, stored in the estimate, ``>= 0`` (0: elastic DP).
    checkpoint_every_steps : int
        ``k >= 1``: a checkpoint after every ``k`` steps and after the last.

    Returns
    -------
    StepEstimate

    Raises
    ------
    ValueError
        Naming the argument; or when the table finds no progress at ``k``
        (a wipe-out at every resume, ``k`` beyond the cycle's horizon, no
        checkpoint surviving a cycle).

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> from spare_theory.steps.spare_cycle import spare_step_cycle
    >>> sc = paper_scenario(600)
    >>> est = estimate_steps(sc, spare_step_cycle(sc, 8), strategy="spare", r=8,
    ...                      checkpoint_every_steps=23)
    >>> print(round(est.total_over_T0, 2), round(est.uptime, 3), round(est.restarts, 1))
    2.54 0.934 16.5
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    if not isinstance(cycle, StepCycle):
        raise ValueError(f"cycle must be a StepCycle, got {type(cycle).__name__}")
    r = as_count(r, "r", minimum=0)
    k = as_count(checkpoint_every_steps, "checkpoint_every_steps")
    sc, cyc = scenario, cycle
    windows = restart_windows(sc)
    ED, window_failures = windows.mean_seconds, windows.failures
    t, log_q = cyc.t, cyc.log_q
    q = np.exp(log_q)
    delta, mem = cyc.ckpt, cyc.membership
    # Step rate (steps per second) and the schedule of checkpoint completions: a
    # checkpoint costs its handling share too, or (elastic) its own wall time.
    if mem is None:
        rate = (1.0 - cyc.phi) / (cyc.tau + delta / k)
    else:
        with np.errstate(divide="ignore"):
            rate = 1.0 / (cyc.tau / (1.0 - cyc.phi) + mem.ckpt_wall / k)
    q0 = float(q[0])
    if not q0 > 0:
        raise ValueError("the cycle model finds a wipe-out at every resume: no progress")
    # The redone step and its checkpoint, after handling the failures noticed at the resume.
    t0 = cyc.tau0 + delta + cyc.burst_handling / q0
    done = integrate.cumulative_trapezoid(rate, t, initial=0.0)
    done = np.maximum.accumulate(done - np.interp(t0, t, done))
    # Horizon: the grid's end, or four runs' worth of steps if a cycle may outlast
    # the run (then cycles reaching it count as renewals without a restart).
    j_cap = math.ceil(4 * sc.steps / k) + 1
    j_max = min(int(done[-1] // k), j_cap)
    if j_max < 1:
        raise ValueError(
            f"checkpoint_every_steps={k} is beyond the cycle model's horizon "
            f"(about {max(done[-1], 0.0):.0f} steps per cycle at most)"
        )
    c_j = np.interp(k * np.arange(1, j_max + 1), done, t)
    horizon = float(c_j[-1]) if j_max == j_cap else float(t[-1])
    if mem is not None:  # any live group writes: kept iff complete before the wipe-out
        kept = np.exp(np.interp(c_j, t, log_q))
    else:  # kept iff the wipe-out failure is noticed after the write
        kept = np.exp(np.interp(c_j - delta - np.interp(c_j, t, cyc.post), t, log_q))
    kept[c_j >= t[-1]] = 0.0
    q_end = float(np.exp(np.interp(horizon, t, log_q))) if j_max == j_cap else 0.0
    mean_life = mean_life_at(sc.failure_law, sc.clock_age_seconds)
    # The leader's clock is checked first: a failure since its last check loses it.
    lost = 0.0 if mem else -math.expm1(-float(np.interp(t0, t, cyc.post)) / mean_life)
    weights = (1 - lost) * kept + lost * np.append(kept[1:], q_end)
    kept_steps = k * float(weights.sum())
    kept_work = kept_steps  # in full steps
    if mem is not None:  # each checkpoint keeps the work of its steps
        work = integrate.cumulative_trapezoid(rate * mem.batch, t, initial=0.0)
        at = np.interp(np.concatenate([[t0], c_j]), t, work)
        kept_work = float(weights @ np.diff(at))
    if not kept_work > 0:
        raise ValueError(
            f"checkpoint_every_steps={k}: no checkpoint survives a cycle in expectation"
        )
    wiped = 1.0 - q_end  # cycles that end in a wipe-out (and a restart)

    def upto(y: np.ndarray) -> float:
        """``int_0^horizon y dt``."""
        return float(np.interp(horizon, t, integrate.cumulative_trapezoid(y, t, initial=0.0)))

    def q_upto(weight: str | None = None) -> float:
        """``int_0^horizon Q w dt`` (the cycle's integral, the same at every ``k``)."""
        return float(np.interp(horizon, t, cyc.q_integral(weight)))

    # Detection remainder rho, uniform phase in a checkpoint period, at the
    # wipe-out's attempt length.
    inside = t[1:] <= horizon
    dens = -np.diff(q) * inside
    if dens.sum() > 0:
        weight = dens / dens.sum()
        tau_w, b = float(weight @ cyc.tau[1:]), float(weight @ cyc.post[1:])
    else:  # no wipe-out within the horizon: rho does not count
        tau_w, b = float(cyc.tau[0]), float(cyc.post[0])
    a_half = (1 - sc.allreduce_failure_scale) * sc.allreduce_seconds
    pre = max(tau_w - b, 0.0)
    period = k * tau_w + delta
    rho_later = (
        k * pre * (pre / 2 + b - a_half)
        + (k - 1) * b * (b / 2 + tau_w - a_half)
        + b * (b / 2 + delta + tau_w - a_half)
        + delta * (delta / 2 + tau_w - a_half)
    ) / period
    # A wipe-out at the resume is detected at the end of the first attempt.
    rho = (1.0 - q0) * (cyc.tau0 - a_half) + max(q0 - q_end, 0.0) * rho_later
    compute = q_upto() + rho + cyc.burst_handling
    handling = q_upto("phi") + cyc.burst_handling
    partials = q_upto("partial") + (q0 if cyc.burst_failures else 0.0)
    noticed = q_upto("noticed") + wiped + cyc.burst_failures
    replays = q_upto("failed") / mean_life
    checkpoints = delta * (1.0 + float(kept.sum()))
    # Time of the kept steps: at the time-averaged attempt of productive time.
    steps_rate = q * rate
    step_time = upto(steps_rate * cyc.tau) / upto(steps_rate)
    cycles = sc.steps / kept_work
    useful = kept_work * cyc.useful
    # The kept steps' time beyond the useful work (with a batch share: the shrunken steps too).
    redundancy = kept_steps * (step_time - cyc.useful) + (kept_steps - kept_work) * cyc.useful
    stalls, skipped = 0.0, 0.0
    if mem is not None:  # stalls in the compute phase and after the checkpoints
        at_ckpt = np.interp(np.concatenate([[t0], c_j]), t, mem.ckpt_stall)
        stalls = q_upto("stalled") + float(np.concatenate([[q0], kept]) @ at_ckpt)
        if not mem.exact_batch:
            skipped = 1.0 - kept_work / (kept_steps * mem.full_batch)
    # The run's ends (steps.run_ends): the last cycle ends with the work, the first starts
    # fresh.  The time they save is compute beyond the kept work: rework, failures and
    # stalls in proportion to the compute left.
    until = np.interp(c_j, t, cyc.q_integral()) + cyc.burst_handling
    wipeout = ED + (rho / wiped if wiped > 0 else 0.0)
    intervals = sc.steps * float(weights.sum()) / kept_work
    seconds, restarts = finite_run(
        weights,
        until,
        wiped * ED + compute,
        wipeout,
        wiped,
        intervals,
        resume_survival=min(q0, 1.0),
    )
    seconds -= t0
    finite = math.isfinite(seconds) and math.isfinite(restarts)
    exposure = (seconds - restarts * ED) / (cycles * compute) if finite else 1.0
    handling *= exposure
    rework = (seconds - restarts * ED) / cycles - useful - redundancy - checkpoints - handling
    failures = exposure * cycles * (noticed - wiped + replays) + restarts * (1 + window_failures)
    down = restarts * ED + exposure * cycles * (sc.partial_recovery_seconds * partials + stalls)
    T0 = sc.failure_free_seconds
    return StepEstimate(
        strategy=strategy,
        r=r,
        checkpoint_every_steps=k,
        seconds=seconds,
        hours=seconds / 3600.0,
        total_over_T0=seconds / T0,
        uptime=1.0 - down / seconds,
        restarts=restarts,
        failures=failures,
        mean_restart_seconds=ED,
        cycle_steps=kept_work,
        useful_seconds=cycles * useful,
        redundancy_seconds=cycles * redundancy,
        checkpoint_seconds=cycles * checkpoints,
        restart_seconds=restarts * ED,
        handling_seconds=cycles * handling,
        rework_seconds=cycles * rework,
        down_seconds=down,
        samples_skipped=skipped,
        exact_batch=mem is None or mem.exact_batch,
        nodes=sc.groups * sc.nodes_per_group,
        spare_nodes=sc.spare_nodes or 0,
        idle_share=0.0 if mem is None else 1.0 - mem.full_batch,
    )


def estimate_with_repairs(
    scenario: StepScenario,
    repaired_cycle: StepCycle,
    plain_cycle: StepCycle,
    *,
    strategy: str,
    r: int,
    checkpoint_every_steps: int,
) -> StepEstimate:
    """The estimate of a scenario with repairs, from its repaired and its plain cycle tables.

    With a rejoin stall (``rejoin_seconds > 0``, or a table whose rejoins
    stall the job: ``membership``) the estimate from ``repaired_cycle``.
    Without one a repair only shrinks the down set (same clocks), so the run
    is never longer than without repairs: the smaller (in ``seconds``) of
    that estimate and the estimate of :meth:`StepScenario.without_repairs`
    from ``plain_cycle`` (module docstring, item 4).

    Parameters
    ----------
    scenario : StepScenario
        With ``repair_seconds`` set.
    repaired_cycle, plain_cycle : StepCycle
        The strategy's table with repairs, and without
        (for ``scenario.without_repairs()``).
    strategy, r, checkpoint_every_steps
        As in :func:`estimate_steps`.

    Returns
    -------
    StepEstimate

    Raises
    ------
    ValueError
        Naming ``scenario`` when it has no repairs; as :func:`estimate_steps`.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spare_theory.steps.cycles import rep_step_cycle
    >>> from spare_theory.steps.repairs import rep_repair_step_cycle
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> sc = replace(paper_scenario(200), repair_seconds=600.0)
    >>> est = estimate_with_repairs(sc, rep_repair_step_cycle(sc, 3), rep_step_cycle(
    ...     sc.without_repairs(), 3), strategy="rep", r=3, checkpoint_every_steps=6)
    >>> plain = estimate_steps(sc.without_repairs(), rep_step_cycle(sc.without_repairs(), 3),
    ...                        strategy="rep", r=3, checkpoint_every_steps=6)
    >>> est.seconds <= plain.seconds
    True
    """
    if not isinstance(scenario, StepScenario) or not scenario.repairs:
        raise ValueError("scenario must be a StepScenario with repairs (repair_seconds set)")
    k = checkpoint_every_steps
    repaired = estimate_steps(
        scenario, repaired_cycle, strategy=strategy, r=r, checkpoint_every_steps=k
    )
    if scenario.rejoin_seconds > 0.0 or repaired_cycle.membership is not None:
        return repaired
    plain = estimate_steps(
        scenario.without_repairs(), plain_cycle, strategy=strategy, r=r, checkpoint_every_steps=k
    )
    return repaired if repaired.seconds <= plain.seconds else plain


def step_estimate(
    scenario: StepScenario,
    step_cycle: CycleBuilder,
    repair_step_cycle: CycleBuilder,
    *,
    strategy: str,
    r: int,
    checkpoint_every_steps: int,
) -> StepEstimate:
    """The estimate of ``scenario`` from a strategy's two cycle-table builders.

    Without repairs :func:`estimate_steps` of ``step_cycle(scenario, r)``;
    with repairs :func:`estimate_with_repairs` of
    ``repair_step_cycle(scenario, r)`` and
    ``step_cycle(scenario.without_repairs(), r)``.  The builders are
    trusted with ``r`` (a strategy checks its own redundancies).  With a
    non-exponential law each is taken at the clocks' ages through the run
    and mixed (:func:`~spare_theory.steps.clock_age.mix_over_ages`).

    Parameters
    ----------
    scenario : StepScenario
        The workload and failure law.
    step_cycle, repair_step_cycle : callable
        ``(scenario, r) -> StepCycle``: e.g.
        :func:`~spare_theory.steps.spare_cycle.spare_step_cycle` and
        :func:`~spare_theory.steps.repairs.spare_repair_step_cycle`.
    strategy, r, checkpoint_every_steps
        As in :func:`estimate_steps`.

    Returns
    -------
    StepEstimate

    Examples
    --------
    >>> from spare_theory.steps.repairs import spare_repair_step_cycle
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> from spare_theory.steps.spare_cycle import spare_step_cycle

    Repairs in 10 minutes on average shorten the paper's ``N = 200`` run:

    >>> from dataclasses import replace
    >>> sc = replace(paper_scenario(200), repair_seconds=600.0)
    >>> for s in (sc, sc.without_repairs()):
    ...     est = step_estimate(s, spare_step_cycle, spare_repair_step_cycle,
    ...                         strategy="spare", r=9, checkpoint_every_steps=15)
    ...     print(round(est.total_over_T0, 2))
    2.07
    3.05
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    return mix_over_ages(
        scenario,
        lambda aged: _frozen_estimate(
            aged, step_cycle, repair_step_cycle, strategy, r, checkpoint_every_steps
        ),
    )


def _frozen_estimate(
    scenario: StepScenario,
    step_cycle: CycleBuilder,
    repair_step_cycle: CycleBuilder,
    strategy: str,
    r: int,
    k: int,
) -> StepEstimate:
    """:func:`step_estimate` with the clocks held at the scenario's ``clock_age_seconds``."""
    if scenario.repairs:
        repaired = repair_step_cycle(scenario, r)
        if repaired.membership is not None:  # its rejoins stall: the repaired table alone
            return estimate_steps(
                scenario, repaired, strategy=strategy, r=r, checkpoint_every_steps=k
            )
        plain = step_cycle(scenario.without_repairs(), r)
        return estimate_with_repairs(
            scenario, repaired, plain, strategy=strategy, r=r, checkpoint_every_steps=k
        )
    return estimate_steps(
        scenario, step_cycle(scenario, r), strategy=strategy, r=r, checkpoint_every_steps=k
    )
