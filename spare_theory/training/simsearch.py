"""Plans searched by the event simulation, where no closed form covers the scenario.

:func:`simulated_plan` is the planner's second method (``Plan.method ==
"simulation"``): the same walk over ``r`` as the model's
(:func:`~spare_theory.planning.search.walk_redundancy` along the strategy's
legs), the same integer search over a strategy's own plan variable
(:func:`~spare_theory.planning.search.minimize_integer` on its grid), and at
each point a search over the checkpoint interval, each candidate plan
measured by the event simulation (:func:`~spare_theory.training.simulate.simulate_hourly`
or :func:`~spare_theory.training.simulate.simulate_steps_job`).

- **Common random numbers.**  Every candidate is played on the same trials
  (trial ``i`` on the stream ``child_seed(seed, i)``), so two candidates
  differ by their plans, not by their luck.
- **Precision.**  A candidate starts with 16 trials; trials are added (later
  indices, the first ones kept) until its mean hours have a relative standard
  error below ``rel_se``, or ``max_trials`` are played.
- **The interval** (hour level): a walk on ``log tau`` by steps of ``sqrt 2``
  (its stride doubling after two) from the Young-Daly interval of a pilot
  run's measured wipe-out rate, or from the best interval of the nearest
  plan variable searched, until the hours rise; the bracket halved back to
  one step, then the vertex of the parabola through it; (step level) the
  integer ``k`` by :func:`~spare_theory.planning.search.minimize_integer`
  on a geometric grid.
- **Hopeless plans** cost a bounded time: an hour-level run still unfinished
  at a restart after ``20 x`` the work (or ``10 x`` the best mean found so
  far, once one is) stops, and its plan does not finish (``hours = inf``).

:class:`SimulatedEstimate` is the estimate of such a plan: the means of its
samples, with their standard error, in the fields the model's estimates have.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._samples import summary_text
from .._validation import as_count, as_real, as_seed_sequence
from ..hourly.scenario import Scenario
from ..hourly.simulation import BREAKDOWN
from ..planning.bill import Bill, CostModel
from ..planning.plan import Plan
from ..planning.resolved import Resolved
from ..planning.search import REFUSED, minimize_integer, walk_redundancy
from ..steps.runs import BREAKDOWN_FIELDS
from .resolve import reported_r
from .simulate import simulate_hourly, simulate_steps_job

__all__ = [
    "DEFAULT_MAX_TRIALS",
    "DEFAULT_REL_SE",
    "HORIZON_BEST",
    "HORIZON_WORK",
    "Sampler",
    "SimulatedEstimate",
    "play_probed",
    "simulated_plan",
    "simulation_player",
]

#: Relative standard error of a candidate's mean hours the search plays trials for.
DEFAULT_REL_SE = 0.005
#: Trials a candidate starts with (enough for a first standard error).
FIRST_TRIALS = 16
#: Trials played first: a candidate with one of these runs unfinished is played no further.
PROBE_TRIALS = 2
#: Most trials played for one candidate.
DEFAULT_MAX_TRIALS = 512
#: Runs stop (hours = inf) at a restart after this many times the work ...
HORIZON_WORK = 20.0
#: ... or this many times the best mean hours found so far.
HORIZON_BEST = 10.0
# Ratio between neighbouring intervals of the walk, and its most steps.
_INTERVAL_RATIO = math.sqrt(2.0)
_INTERVAL_STEPS = 16
# Shortest interval searched, minutes; the longest is the whole run.
_SHORTEST_INTERVAL_MINUTES = 0.5


@dataclass(frozen=True)
class SimulatedEstimate:
    """The estimate of a plan measured by the event simulation (a plan of ``method="simulation"``).

    Attributes
    ----------
    strategy : str
        The strategy's registered name.
    r : int or None
        The plan's ``r`` (``None`` for a strategy without one).
    samples : TrainingSamples or StepSimulation
        The simulated runs (common random numbers: trial ``i`` of every
        candidate on the stream ``child_seed(seed, i)``).
    work_hours : float
        Failure-free hours of the work (an hour-level scenario's
        ``work_hours``; a step-level one's ``failure_free_hours``).
    checkpoint_interval_minutes : float or None
        Compute minutes between checkpoints (hour level; ``None``: step level).
    checkpoint_every_steps : int or None
        Steps between checkpoints (step level).
    interval_limit : {None, "upper", "lower"}
        Whether the interval search ended at the top or bottom of its range.
    caveats : tuple of str
        What the reader should know of these figures (the simulation's
        precision and why no closed form answered).
    horizon_hours : float
        Runs still unfinished at a restart after this many hours were
        stopped (``inf``: none was).

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory.hourly.simulation import TrainingSamples
    >>> runs = TrainingSamples(hours=np.array([20.0, 22.0]), restarts=np.array([1, 3]))
    >>> est = SimulatedEstimate("ckpt", None, runs, 10.0, checkpoint_interval_minutes=30.0)
    >>> est.hours, est.standard_error_hours, est.availability, est.restarts
    (21.0, 1.0, 0.47619047619047616, 2.0)
    """

    strategy: str
    r: int | None
    samples: Any
    work_hours: float
    checkpoint_interval_minutes: float | None = None
    checkpoint_every_steps: int | None = None
    interval_limit: str | None = None
    caveats: tuple[str, ...] = ()
    horizon_hours: float = math.inf

    @property
    def hours(self) -> float:
        """Mean wall-clock hours of the runs (``inf`` if one did not finish)."""
        hours = np.asarray(self.samples.hours, dtype=np.float64)
        return math.inf if not np.isfinite(hours).all() else float(hours.mean())

    @property
    def standard_error_hours(self) -> float:
        """Standard error of :attr:`hours`, hours (``inf`` if a run did not finish)."""
        return self.samples.standard_error("hours") if math.isfinite(self.hours) else math.inf

    @property
    def trials(self) -> int:
        """Runs simulated."""
        return int(self.samples.trials)

    @property
    def restarts(self) -> float:
        """Mean global restarts per run."""
        return self.samples.mean("restarts")

    @property
    def repairs(self) -> float:
        """Mean repairs per run (0 at the step level, which does not count them)."""
        found = getattr(self.samples, "repairs", None)
        return 0.0 if found is None else float(np.mean(found))

    @property
    def planned_restarts(self) -> float:
        """Mean planned restarts per run (0 when none is counted)."""
        found = getattr(self.samples, "planned_restarts", None)
        return 0.0 if found is None else float(np.mean(found))

    @property
    def availability(self) -> float:
        """``work_hours / hours``: the share of wall time that trains."""
        return self.work_hours / self.hours

    @property
    def uptime(self) -> float:
        """Share of wall time outside restarts (hour level) or recoveries (step level)."""
        if self.checkpoint_every_steps is not None:
            return self.samples.mean("uptime")
        return 1.0 - self.breakdown_hours["restart"] / self.hours

    @property
    def total_over_T0(self) -> float:
        """Step level: mean time to train over the failure-free time."""
        return self.samples.mean("total_over_T0")

    @property
    def seconds(self) -> float:
        """Mean wall-clock seconds (``3600 hours``)."""
        return 3600.0 * self.hours

    @property
    def exact_batch(self) -> bool:
        """Whether every step trains the whole global batch."""
        return bool(self.samples.exact_batch)

    @property
    def samples_skipped(self) -> float:
        """Mean share of the global batch not trained."""
        found = self.samples.samples_skipped
        return 0.0 if found is None else float(np.mean(found))

    @property
    def feasible(self) -> bool:
        """Whether every run finished (within :attr:`horizon_hours`)."""
        return math.isfinite(self.hours)

    @property
    def reason(self) -> str:
        """Why the plan does not finish, in words (empty when it does)."""
        if self.feasible:
            return ""
        return f"a simulated run did not finish within {self.horizon_hours:,.0f} h"

    @property
    def breakdown_hours(self) -> dict[str, float]:
        """Mean hours by part: the useful work, then the badput causes (they add up to hours).

        The measured breakdown of the runs (``useful`` and
        :data:`~spare_theory.planning.bill.BADPUT_CAUSES`), not the model's
        five parts.
        """
        if self.checkpoint_every_steps is not None:
            parts = np.asarray(self.samples.breakdown_seconds) / 3600.0
            names = [name.removesuffix("_seconds") for name in BREAKDOWN_FIELDS]
        else:
            parts, names = np.asarray(self.samples.breakdown_hours), list(BREAKDOWN)
        return {name: float(value) for name, value in zip(names, parts.mean(axis=0))}

    def bill(self, cost: CostModel) -> Bill:
        """The bill of the mean run: ``samples.bill(cost).mean_bill()``."""
        return self.samples.bill(cost).mean_bill()

    def summary_rows(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]], list[str]]:
        """The plan's variables, its figures and notes: the body of :meth:`summary`."""
        limit = {"upper": " (top of the search)", "lower": " (bottom of the search)"}
        where = limit.get(self.interval_limit or "", "")
        every = (
            f"{self.checkpoint_every_steps} steps{where}"
            if self.checkpoint_every_steps is not None
            else f"{self.checkpoint_interval_minutes:.4g} min{where}"
        )
        plan = [
            ("strategy", self.strategy),
            ("r", self.r),
            ("checkpoint every", every),
            ("restarts", f"{self.restarts:.4g}"),
            ("method", "simulation"),
        ]
        figures = [
            ("hours", f"{self.hours:,.6g}"),
            ("standard error", f"{self.standard_error_hours:.3g}"),
            ("trials", self.trials),
            ("availability", f"{self.availability:.4f}"),
        ]
        notes = [] if self.feasible else [f"does not finish: {self.reason}"]
        return plan, figures, notes

    def summary(self) -> str:
        """The estimate as text (the layout of the model's estimates)."""
        plan, figures, notes = self.summary_rows()
        return summary_text(
            "Simulated plan",
            plan,
            figures,
            breakdown_hours=self.breakdown_hours if self.feasible else None,
            notes=notes,
            caveats=self.caveats,
        )


#: ``play(resolved, first_trial, trials, max_hours)``: samples of trials ``first_trial, ...``.
Player = Callable[[Resolved, int, int, float], Any]


def play_probed(play: Player, resolved: Resolved, trials: int, horizon_hours: float) -> Any:
    """Trials ``0 .. trials - 1`` of ``resolved``; the ``PROBE_TRIALS`` if one is unfinished.

    A candidate whose first runs stop unfinished at the horizon is no plan
    (its mean is infinite whatever follows), and its runs are the longest:
    the rest are not played.  Trial ``i`` is on its own stream, so the runs
    played are those of one call.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> resolved = resolve(sc, "rep", r=2, checkpoint_interval_minutes=60)
    >>> play_probed(simulation_player(seed=1), resolved, 8, 200.0).trials
    8
    """
    runs = play(resolved, 0, min(PROBE_TRIALS, trials), horizon_hours)
    if runs.trials < trials and np.isfinite(np.asarray(runs.hours, dtype=np.float64)).all():
        runs = runs.joined(play(resolved, runs.trials, trials - runs.trials, horizon_hours))
    return runs


def simulation_player(
    *, seed: Any, executor: cf.Executor | None = None, progress: bool = False
) -> Player:
    """The event simulation of a resolved plan, trial ``i`` on ``child_seed(seed, i)``.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> play = simulation_player(seed=1)
    >>> resolved = resolve(sc, "rep", r=2, checkpoint_interval_minutes=60)
    >>> two, four = play(resolved, 2, 2, math.inf), play(resolved, 0, 4, math.inf)
    >>> bool((two.hours == four.hours[2:]).all())
    True
    """
    root = as_seed_sequence(seed)

    def play(resolved: Resolved, first_trial: int, trials: int, max_hours: float) -> Any:
        if isinstance(resolved.scenario, Scenario):
            return simulate_hourly(
                resolved,
                trials=trials,
                seed=root,
                executor=executor,
                progress=progress,
                first_trial=first_trial,
                max_hours=max_hours,
            )
        return simulate_steps_job(
            resolved,
            trials=trials,
            seed=root,
            executor=executor,
            progress=progress,
            first_trial=first_trial,
            max_hours=max_hours,
        )

    return play


class Sampler:
    """Candidate plans measured on common random numbers, each to a relative standard error.

    Parameters
    ----------
    play : callable
        ``play(resolved, first_trial, trials, max_hours)`` (:func:`simulation_player`,
        or a replay of a log).
    rel_se : float
        Target relative standard error of each candidate's mean hours, ``> 0``.
    max_trials : int
        Most trials per candidate.
    work_hours : float
        The failure-free hours of the work (sets the horizon).
    horizon_hours : float, optional
        Where runs stop unfinished (default ``HORIZON_WORK x work_hours``).

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=10)
    >>> sampler = Sampler(simulation_player(seed=1), rel_se=0.02, max_trials=64, work_hours=10)
    >>> runs = sampler.measure(resolve(sc, "rep", r=2, checkpoint_interval_minutes=60))
    >>> bool(runs.standard_error("hours") < 0.02 * runs.mean_hours), runs.trials >= 8
    (True, True)
    """

    def __init__(
        self,
        play: Player,
        *,
        rel_se: float,
        max_trials: int,
        work_hours: float,
        horizon_hours: float | None = None,
    ):
        self.play = play
        self.rel_se = as_real(rel_se, "rel_se", minimum=0.0, strict_minimum=True)
        self.max_trials = as_count(max_trials, "max_trials", minimum=2)
        self.horizon_hours = HORIZON_WORK * work_hours if horizon_hours is None else horizon_hours
        self._samples: dict[tuple, Any] = {}

    def measure(self, resolved: Resolved, *, look: bool = False) -> Any:
        """The samples of ``resolved``, grown until their relative standard error is < ``rel_se``.

        Once a finite mean is known the horizon shrinks to ``10 x`` it: a
        worse candidate is no plan anyway.  ``look=True``: only the first
        ``FIRST_TRIALS`` (a first look; a later call grows the same samples).
        """

        def own_mean(hours: np.ndarray) -> tuple[float, float]:
            return float(hours.std(ddof=1)) / math.sqrt(hours.size), self.rel_se * hours.mean()

        runs = self._grow(
            resolved, min(FIRST_TRIALS, self.max_trials) if look else self.max_trials, own_mean
        )
        hours = np.asarray(runs.hours, dtype=np.float64)
        if np.isfinite(hours).all() and not look:
            self.horizon_hours = min(self.horizon_hours, HORIZON_BEST * float(hours.mean()))
        return runs

    def measure_paired(self, resolved: Resolved, reference: Any) -> Any:
        """The samples of ``resolved``, grown until its difference from ``reference`` is known.

        On common random numbers a neighbour's hours move with the
        reference's, so the paired difference ``reference - resolved`` over their
        common trials has a far smaller spread than either; trials are added
        (within the reference's) until the difference's standard error is
        below ``rel_se`` times the reference's mean, not until the plan's own
        mean is.  :meth:`measure` later grows the same samples further.

        Parameters
        ----------
        resolved : Resolved
            The candidate.
        reference : samples
            The reference plan's samples (of :meth:`measure`), finite.
        """
        base = np.asarray(reference.hours, dtype=np.float64)
        target = self.rel_se * float(base.mean())

        def difference(hours: np.ndarray) -> tuple[float, float]:
            gap = base[: hours.size] - hours
            return float(gap.std(ddof=1)) / math.sqrt(hours.size), target

        return self._grow(resolved, min(self.max_trials, base.size), difference)

    def _grow(
        self,
        resolved: Resolved,
        cap: int,
        precision: Callable[[np.ndarray], tuple[float, float]],
    ) -> Any:
        """The samples, grown until ``precision(hours)`` gives ``se <= target`` or ``cap``.

        Trials grow as ``(se / target)^2`` predicts, at least half again each
        time; samples stay with the sampler, so a later call continues them.
        """
        key = (
            resolved.r,
            resolved.plan,
            resolved.checkpoint_interval_minutes,
            resolved.checkpoint_every_steps,
        )
        runs = self._samples.get(key)
        if runs is None:
            runs = play_probed(self.play, resolved, min(FIRST_TRIALS, cap), self.horizon_hours)
        while runs.trials < cap:
            hours = np.asarray(runs.hours, dtype=np.float64)
            if not np.isfinite(hours).all():
                break
            se, target = precision(hours)
            if se <= target:
                break
            wanted = math.ceil(1.1 * hours.size * (se / target) ** 2)
            total = min(cap, max(wanted, hours.size + hours.size // 2))
            runs = runs.joined(
                self.play(resolved, runs.trials, total - runs.trials, self.horizon_hours)
            )
        self._samples[key] = runs
        return runs


def simulated_plan(
    resolved: Resolved,
    *,
    r_values: list[int] | None,
    search_variables: bool,
    play: Player,
    confirm: Player,
    rel_se: float = DEFAULT_REL_SE,
    max_trials: int = DEFAULT_MAX_TRIALS,
    reason: str = "",
) -> Plan:
    """The best plan of ``resolved``'s strategy searched with the event simulation.

    Parameters
    ----------
    resolved : Resolved
        The resolved front-door inputs (:func:`~spare_theory.training.resolve.resolve`
        with ``walk=True``): what it fixes (``r``, the interval, the plan
        variables) stays fixed.
    r_values : list of int or None
        The ``r`` to try (``None``: walk the strategy's legs).
    search_variables : bool
        Search the strategy's own plan variable (elastic DP's quorum).
    play : callable
        The simulation of a resolved plan (:func:`simulation_player`).
    confirm : callable
        The same simulation on other streams: the best plan is played again
        there, since the search's own mean of its winner is biased low (the
        least of noisy means, all on the same trials).
    rel_se : float
        Relative standard error each candidate's mean is played to.
    max_trials : int
        Most trials per candidate.
    reason : str
        Why no closed form answered (said in the plan's caveats).

    Returns
    -------
    Plan
        ``method="simulation"``, its estimate a :class:`SimulatedEstimate`
        of the best plan played afresh on ``confirm``'s streams;
        ``hours_by_r`` are the search's own means (on common streams).

    Raises
    ------
    ValueError
        If no candidate finishes.

    Examples
    --------
    Elastic DP under Weibull lifetimes, which no closed form covers:

    >>> from spare_theory import Scenario
    >>> from spare_theory.training.resolve import resolve
    >>> sc = Scenario(gpus=256, gpus_per_group=8, gpu_mtbf_hours=2000.0, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=10, failure_law="weibull")
    >>> resolved = resolve(sc, "elastic", min_groups=16, walk=True)
    >>> plan = simulated_plan(resolved, r_values=None, search_variables=False,
    ...                       play=simulation_player(seed=0),
    ...                       confirm=simulation_player(seed=1), rel_se=0.01)
    >>> plan.method, plan.min_groups, bool(plan.estimate.standard_error_hours < 0.01 * plan.hours)
    ('simulation', 16, True)
    """
    chosen, scenario = resolved.strategy, resolved.scenario
    N = scenario.groups
    hourly = isinstance(scenario, Scenario)
    work = scenario.work_hours if hourly else scenario.failure_free_hours
    sampler = Sampler(play, rel_se=rel_se, max_trials=max_trials, work_hours=work)
    note = (
        f"planned by the event simulation ({reason.rstrip('.')}): each candidate's mean played "
        f"to a relative standard error of {rel_se:g} on common random numbers"
    )

    def estimate(
        candidate: Resolved, limit: str | None = None, *, look: bool = False
    ) -> SimulatedEstimate:
        return SimulatedEstimate(
            strategy=chosen.name,
            r=reported_r(candidate),
            samples=sampler.measure(candidate, look=look),
            work_hours=work,
            checkpoint_interval_minutes=candidate.checkpoint_interval_minutes,
            checkpoint_every_steps=candidate.checkpoint_every_steps,
            interval_limit=limit,
            caveats=(note,),
            horizon_hours=sampler.horizon_hours,
        )

    def best_interval(candidate: Resolved, near: float | None = None) -> SimulatedEstimate:
        if (
            resolved.checkpoint_interval_minutes is not None
            or resolved.checkpoint_every_steps is not None
        ):
            return estimate(candidate)
        if hourly:
            return _interval_walk(candidate, estimate, work, start_minutes=near)
        return _steps_search(candidate, estimate)

    fixed = resolved.variables

    def at_r(r: int) -> Any:
        plan = chosen.check_plan(N, r, fixed)
        found = chosen.plan_search(N, r) if search_variables else None
        try:
            if found is None:
                best = best_interval(resolved.with_plan(r=r, **plan))
                variables[r] = plan
            else:
                name, grid = found
                tried: dict[int, SimulatedEstimate] = {}

                def hours_at(value: int) -> float:
                    # The walk starts at the best interval of the nearest value searched:
                    # neighbouring quorums have neighbouring intervals.
                    found = [v for v in tried if tried[v].feasible]
                    near = min(found, key=lambda v: (abs(v - value), v), default=None)
                    start = None if near is None else tried[near].checkpoint_interval_minutes
                    candidate = resolved.with_plan(r=r, **{**plan, name: value})
                    tried[value] = best_interval(candidate, start)
                    return tried[value].hours

                value, _ = minimize_integer(hours_at, grid.tolist(), exhaustive=2)
                best, variables[r] = tried[value], {**plan, name: value}
        except ValueError:
            # A placement the simulation cannot build at this r (domain-aware SPARe with
            # too many hosts per type): no plan there, and none above; at the first r
            # tried the refusal is about the scenario and is raised.
            if not variables:
                raise
            return REFUSED
        return best if best.feasible else None

    variables: dict[int, dict[str, Any]] = {}
    if r_values is None:
        curve = walk_redundancy(
            at_r, _hours, chosen.redundancy_legs(N), lambda r: chosen.accepts(N, r)
        )
    else:
        found = {r: at_r(r) for r in r_values}
        curve = {r: e for r, e in found.items() if e is not None and e is not REFUSED}
    if not curve:
        raise ValueError(
            f"no plan of strategy {chosen.name!r} finishes in the simulation within "
            f"{HORIZON_WORK:g} x the work ({reason})"
        )
    r_scanned = np.array(sorted(curve), dtype=np.int64)
    best_r = min(curve, key=lambda r: (curve[r].hours, r))
    won = curve[best_r]
    winner = dataclasses.replace(
        resolved.with_plan(r=best_r, **variables[best_r]),
        checkpoint_interval_minutes=won.checkpoint_interval_minutes,
        checkpoint_every_steps=won.checkpoint_every_steps,
    )
    fresh = Sampler(confirm, rel_se=rel_se, max_trials=max_trials, work_hours=work)
    return Plan(
        estimate=dataclasses.replace(won, samples=fresh.measure(winner)),
        r_values=r_scanned,
        hours_by_r=np.array([curve[int(r)].hours for r in r_scanned]),
        microbatches=scenario.microbatches,
        method="simulation",
        variables=variables[best_r],
    )


def _hours(estimate: SimulatedEstimate) -> float:
    return estimate.hours


def _interval_walk(
    resolved: Resolved,
    estimate: Callable[..., SimulatedEstimate],
    work_hours: float,
    *,
    start_minutes: float | None = None,
) -> SimulatedEstimate:
    """The best interval on ``log tau``: a walk from a start, a bracket, then a parabola.

    The walk starts at ``start_minutes`` (the best interval of a
    neighbouring plan) where a first look (``estimate(..., look=True)``)
    finds the plan finishing and either never restarting or restarting as
    often as Young-Daly there suggests (within two steps), else at Young-Daly
    on the wipe-outs that look (or a pilot run) measures.  It moves by
    ``sqrt 2`` while the hours fall, doubling its stride after the second
    move, so a walk across the whole range (a plan that never restarts saves
    most by not checkpointing) takes a few candidates, not one per
    ``sqrt 2``; the bracket it leaves is halved back onto the same ``sqrt 2``
    lattice, and the vertex of the parabola through the best point and its
    neighbours is tried last.  A walk of one or two moves tries what a plain
    ``sqrt 2`` walk tries.
    """
    scenario = resolved.scenario
    low, high = math.log(_SHORTEST_INTERVAL_MINUTES), math.log(60.0 * work_hours)
    step = math.log(_INTERVAL_RATIO)
    tried: dict[float, SimulatedEstimate] = {}

    def at(x: float) -> float:
        x = min(max(x, low), high)
        if x not in tried:
            tau = math.exp(x)
            tried[x] = estimate(
                dataclasses.replace(resolved, checkpoint_interval_minutes=tau), None
            )
        return tried[x].hours

    delta = max(scenario.checkpoint_minutes, 1e-3)
    start = None
    if start_minutes is not None:
        # A first look at the neighbour's interval (its trials are kept): where this
        # plan restarts, Young-Daly on the wipe-outs it shows says whether the
        # neighbour's interval is near (a neighbour that never restarts saves most
        # by never checkpointing; this one may not).
        x = min(max(math.log(start_minutes), low), high)
        tau = math.exp(x)
        first = estimate(
            dataclasses.replace(resolved, checkpoint_interval_minutes=tau), None, look=True
        )
        if first.feasible and first.restarts == 0:
            start = x
        elif first.feasible:
            own = _young_daly(delta, 60.0 * first.hours / first.restarts)
            start = x if abs(own - x) <= 2 * step else min(max(own, low), high)
    if start is None:
        start = _young_daly_start(scenario, at, tried, low, high, step)
    x = start
    if at(x + step) < at(x):
        direction = 1.0
    elif at(x - step) < at(x):
        direction = -1.0
    else:
        direction = 0.0
    stride = step
    for move in range(_INTERVAL_STEPS if direction else 0):
        nxt = min(max(x + direction * stride, low), high)
        if nxt == x or not at(nxt) < at(x):
            break
        x = nxt
        stride *= 2.0 if move else 1.0
    # Halve the wider side of the best point's bracket until both are one step wide.
    while True:
        best = min(tried, key=lambda key: (tried[key].hours, key))
        if not tried[best].feasible:
            break  # no interval tried finishes: nothing to bracket
        below = max((k for k in tried if k < best), default=best)
        above = min((k for k in tried if k > best), default=best)
        side = below if best - below >= above - best else above
        if abs(best - side) <= step * (1.0 + 1e-9):
            break
        at(best + (side - best) / 2.0)
    # The vertex of the parabola through the best point and its neighbours (all tried
    # or cheap to try).
    x = best
    left, right = max(x - step, low), min(x + step, high)
    values = [at(left), at(x), at(right)] if tried[x].feasible else []
    if values and all(math.isfinite(v) for v in values) and left < x < right:
        denominator = values[0] - 2 * values[1] + values[2]
        if denominator > 0:
            at(x + 0.5 * step * (values[0] - values[2]) / denominator)
    best = min(tried, key=lambda key: (tried[key].hours, key))
    limit = "upper" if best >= high else "lower" if best <= low else None
    return dataclasses.replace(tried[best], interval_limit=limit)


def _young_daly_start(
    scenario: Any,
    at: Callable[[float], float],
    tried: dict[float, SimulatedEstimate],
    low: float,
    high: float,
    step: float,
) -> float:
    """Young-Daly on the cluster's failures (a pilot), then on the wipe-outs the pilot measures."""
    delta = max(scenario.checkpoint_minutes, 1e-3)
    pilot = min(max(_young_daly(delta, scenario.cluster_mtbf_minutes), low), high)
    at(pilot)
    first = tried[pilot]
    if first.feasible and first.restarts > 0:
        start = _young_daly(delta, 60.0 * first.hours / first.restarts)
    else:  # no wipe-out in the pilot: checkpoints are cheap to space out
        start = pilot + 3 * step
    return pilot if abs(start - pilot) < step / 2 else min(max(start, low), high)


def _young_daly(delta_minutes: float, mtbf_minutes: float) -> float:
    """``log sqrt(2 delta M)``: Young's interval on ``log tau`` (minutes)."""
    return 0.5 * math.log(2.0 * delta_minutes * mtbf_minutes)


def _steps_search(
    resolved: Resolved, estimate: Callable[[Resolved, str | None], SimulatedEstimate]
) -> SimulatedEstimate:
    """The best checkpoint interval in steps: a geometric grid, then its bracket."""
    steps = resolved.scenario.steps
    tried: dict[int, SimulatedEstimate] = {}

    def at(k: int) -> float:
        tried[k] = estimate(dataclasses.replace(resolved, checkpoint_every_steps=int(k)), None)
        return tried[k].hours

    grid = np.unique(np.round(np.geomspace(1, steps, max(int(math.log2(steps)), 1) + 1)))
    best, _ = minimize_integer(at, grid.astype(int).tolist(), exhaustive=2)
    limit = "upper" if best >= steps else "lower" if best <= 1 else None
    return dataclasses.replace(tried[best], interval_limit=limit)
