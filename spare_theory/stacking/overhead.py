"""Average stack overhead ``S(N, r)`` over the failure process, simulated and in closed form.

A trial fails groups in uniformly random order from a fresh start until the
wipe-out; ``T`` is the number of failures up to and including the wiping one,
so the states visited without wipe-out are ``f = 0, 1, ..., T - 1`` with
``S*_f = S*(first f failed groups)``.  Two averages (see ``docs/theory.md`` section 3):

* **per failure**: ``(1/T) sum_{f<T} S*_f``, every state counted once;
* **time weighted**: ``sum_{f<T} S*_f / (N - f)  /  sum_{f<T} 1 / (N - f)``:
  with ``N - f`` groups left, each failing at rate ``lambda``, state ``f``
  lasts ``1 / ((N - f) lambda)`` on average, so later (costlier) states weigh
  more.

With micro-batches (``m`` pieces per shard) states cost the load instead of
``S*``: simulated exactly, and in closed form from the load model of
:mod:`spare_theory.stacking.load`.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special

from .._numerics import DIRECT_SUM_TERMS, smooth_sum
from .._parallel import map_tasks
from .._samples import TrialSamples
from .._validation import (
    as_choice,
    as_count,
    as_count_array,
    as_real_array,
    as_seed_sequence,
    child_seed,
)
from ..placement.placements import group_stacks, validate_hosts
from ..wipeout.law import wipeout_law
from ..wipeout.simulation import split_tasks
from ._trajectory import trajectory_from_arrays
from .load import expected_load, load_table

__all__ = [
    "OverheadSamples",
    "expected_stacks",
    "overhead",
    "overhead_from_survival",
    "simulate_overhead",
    "stacks_trajectory",
]

WEIGHTINGS = ("failure", "time")
# Segments of at most this many terms are summed term by term, longer ones by
# quadrature (a module attribute so that tests can lower it and compare both paths).
_DIRECT_TERMS = DIRECT_SUM_TERMS
# Above this argument psi(x + d) - psi(x) is differenced from the asymptotic series.
_ASYMPTOTIC_FROM = 100.0


@dataclass(frozen=True)
class OverheadSamples(TrialSamples):
    """Per-trial results of :func:`simulate_overhead` (arrays of length ``trials``).

    ``mean(name)``, ``standard_error(name)`` and ``to_frame()`` summarise
    them (:class:`spare_theory._samples.TrialSamples`).

    Attributes
    ----------
    T : numpy.ndarray
        Wipe-out count: failures up to and including the wiping one.
    per_failure : numpy.ndarray
        ``(1/T) sum_{f<T} S*_f`` (stack layers, i.e. step cost relative to a
        failure-free step).
    time_weighted : numpy.ndarray
        ``sum_{f<T} S*_f/(N-f) / sum_{f<T} 1/(N-f)`` (same unit).
    max_stacks : numpy.ndarray
        Largest ``S*`` seen before the wipe-out (``S*_{T-1}``).

    Examples
    --------
    >>> from spare_theory import cyclic_placement, simulate_overhead
    >>> s = simulate_overhead(cyclic_placement(100, 3), 4, seed=0)
    >>> s.T.tolist(), s.per_failure.round(4).tolist(), s.max_stacks.tolist()
    ([22, 22, 20, 24], [1.9545, 1.9545, 1.95, 1.9583], [2, 2, 2, 2])
    >>> s.mean("T"), round(s.standard_error("T"), 4), s.to_frame().columns.tolist()
    (22.0, 0.8165, ['trial', 'T', 'per_failure', 'time_weighted', 'max_stacks'])
    """

    T: np.ndarray
    per_failure: np.ndarray
    time_weighted: np.ndarray
    max_stacks: np.ndarray


def stacks_trajectory(
    hosts: npt.ArrayLike, order: Iterable[int], *, microbatches: int = 1
) -> npt.NDArray[np.int64] | npt.NDArray[np.float64]:
    """``S*_f`` for ``f = 0, ..., T-1`` when groups fail in ``order`` (until the wipe-out).

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement.
    order : sequence of int
        Failure order: a permutation of ``range(N)`` (or a prefix of one that
        reaches the wipe-out).
    microbatches : int, default 1
        Pieces per shard ``m``: the exact load ``min_load`` instead of ``S*``.

    Returns
    -------
    numpy.ndarray
        Array of length ``T`` (``T`` = index of the wiping failure + 1):
        ``int64`` for ``m = 1``, ``float64`` loads (multiples of ``1/m``) otherwise.

    Examples
    --------
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.stacking.overhead import stacks_trajectory
    >>> stacks_trajectory(cyclic_placement(7, 3), range(7)).tolist()  # 4th failure wipes type 0
    [1, 2, 2, 2]
    >>> stacks_trajectory(cyclic_placement(7, 3), range(7), microbatches=4).tolist()
    [1.0, 1.25, 1.5, 1.75]
    """
    m = as_count(microbatches, "microbatches", minimum=1)
    # Compiled augmenting-path repair (spare_theory.stacking._trajectory): the same S*
    # and loads as ReorderingController.fail, about 23x faster at N = 75,000, r = 17.
    placement = validate_hosts(hosts)
    return trajectory_from_arrays(placement, group_stacks(placement), order, m)


def _averages(trajectory: np.ndarray, N: int) -> tuple[float, float]:
    weights = 1.0 / (N - np.arange(trajectory.size))
    return float(trajectory.mean()), float(weights @ trajectory / weights.sum())


def _overhead_trials(task: tuple) -> tuple[np.ndarray, ...]:
    """``T``, both averages and the last state of the task's trials (``child_seed(seed, i)``)."""
    hosts, stacks, m, seed, trials = task
    N = hosts.shape[0]
    T = np.empty(len(trials), dtype=np.int64)
    per_failure = np.empty(len(trials))
    time_weighted = np.empty(len(trials))
    max_stacks = np.empty(len(trials), dtype=np.int64 if m == 1 else np.float64)
    for row, i in enumerate(trials):
        order = np.random.default_rng(child_seed(seed, i)).permutation(N)
        trajectory = trajectory_from_arrays(hosts, stacks, order, m)
        T[row] = trajectory.size
        per_failure[row], time_weighted[row] = _averages(trajectory, N)
        max_stacks[row] = trajectory[-1]
    return T, per_failure, time_weighted, max_stacks


def simulate_overhead(
    hosts: npt.ArrayLike,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    microbatches: int = 1,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> OverheadSamples:
    """Monte Carlo of the overhead: one failure trajectory to wipe-out per trial.

    Parameters
    ----------
    hosts : array_like, shape (N, r)
        Placement.
    trials : int
        Number of independent trajectories, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Trial ``i`` draws its failure order from ``child_seed(seed, i)``, so
        results are identical however the trials are split or spread.
    microbatches : int, default 1
        Pieces per shard ``m``: states cost the exact load
        (:func:`spare_theory.stacking.stacks.min_load`, the controller's repair compiled) instead of
        ``S*``; ``max_stacks`` then holds the last load (a float).
    executor : concurrent.futures.Executor, optional
        Runs the trials in up to 16 tasks there; ``None`` runs them here.
    progress : bool
        Show a progress bar over the tasks.

    Returns
    -------
    OverheadSamples

    Examples
    --------
    >>> from spare_theory import cyclic_placement, simulate_overhead
    >>> s = simulate_overhead(cyclic_placement(100, 3), 200, seed=1)
    >>> print(round(s.mean("per_failure"), 3), round(s.mean("time_weighted"), 3))
    1.945 1.951
    """
    hosts = validate_hosts(hosts)
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    m = as_count(microbatches, "microbatches", minimum=1)
    stacks = group_stacks(hosts)  # validated once, not per trial
    tasks = [(hosts, stacks, m, seed, part) for part in split_tasks(trials)]
    parts = map_tasks(_overhead_trials, tasks, executor=executor, desc="trials", progress=progress)
    return OverheadSamples(*(np.concatenate(column) for column in zip(*parts)))


def expected_stacks(
    N: npt.ArrayLike, r: npt.ArrayLike, failures: npt.ArrayLike
) -> float | npt.NDArray[np.float64]:
    """Model of ``E[S* | f failures, no wipe-out yet]`` for the cyclic ruler placement.

    ``E[S*_f] = ceil(N / (N - f))`` (the lower bound ``stacks_lower_bound``; the
    micro-batch model :func:`~spare_theory.stacking.load.expected_load` at ``m = 1``).
    Measured with the exact controller (``docs/theory.md`` section 3), ``S*`` exceeds
    the bound only in rare states -- a few failures before the thresholds
    ``f = N(1 - 1/k)`` and just before a wipe-out, where types left with one
    or two survivors crowd a few hosts -- and this moves the trajectory
    averages by at most 0.14 % (0.03 % typical) on the table grid, well
    inside the error of the wipe-out law itself.

    Parameters
    ----------
    N : int or array_like
        Number of groups, ``N >= 1``.
    r : int or array_like
        Redundancy, ``1 <= r <= N``.
    failures : int or array_like
        ``f >= 0`` with ``ceil(N/(N-f)) <= r`` (beyond that a wipe-out is
        certain: ``N`` types do not fit in ``r`` slots of ``N - f`` groups).

    Returns
    -------
    float or numpy.ndarray
        Stack layers (step cost relative to a failure-free step).

    Examples
    --------
    >>> from spare_theory import expected_stacks
    >>> expected_stacks(100, 3, [0, 49, 50, 60]).tolist()
    [1.0, 2.0, 2.0, 3.0]
    """
    return expected_load(N, r, failures)  # m = 1: the counting bound, with its checks


def _digamma_shift(x: npt.ArrayLike, d: npt.ArrayLike) -> np.ndarray:
    """``psi(x + d) - psi(x)`` for ``x >= 1``, ``d >= 0`` (``sum_{j<d} 1/(x+j)`` for integer ``d``).

    The plain difference of two digammas loses ``~eps x / d`` relative
    accuracy for large ``x``; above ``_ASYMPTOTIC_FROM`` the asymptotic series
    ``psi(z) = ln z - 1/(2z) - sum_k B_2k / (2k z^2k)`` is differenced term by
    term, the leading term as ``log1p(d/x)`` (truncation error below
    ``1e-22 d/x``).
    """
    x = np.asarray(x, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    direct = special.digamma(x + d) - special.digamma(x)
    xs = np.maximum(x, _ASYMPTOTIC_FROM)
    y = xs + d

    def tail(z: np.ndarray) -> np.ndarray:
        z2 = 1.0 / (z * z)
        return z2 * (-1.0 / 12 + z2 * (1.0 / 120 + z2 * (-1.0 / 252 + z2 / 240)))

    series = np.log1p(d / xs) + d / (2.0 * xs * y) + (tail(y) - tail(xs))
    return np.where(x >= _ASYMPTOTIC_FROM, series, direct)


class _StateModel:
    """Closed forms of the running averages of ``e_f = min(ceil(N/(N-f)), r)``.

    ``e_f`` is piecewise constant: ``e_f = k`` on the segment
    ``lo_k <= f <= hi_k`` with ``hi_k = N - ceil(N/k)`` (``hi_r = N - 1``:
    states past the pigeonhole limit are capped at ``r``; there
    ``P(T > f) = 0``).  With weights ``w_f = 1`` (per failure) or
    ``1/(N-f)`` (time), ``W(t) = sum_{f<t} w_f`` (``t``, or
    ``psi(N+1) - psi(N-t+1)``) and the running average
    ``g(t) = sum_{f<t} w_f e_f / W(t)``, for ``t`` in segment ``k``

    ``k - g(t) = D_k / W(t)``,  ``D_k = sum_{f<lo_k} (k - e_f) w_f``,

    a constant over the segment (a sum of positive terms, one per earlier
    segment): ``O(r)`` numbers give ``g`` at any ``t``, smooth in real ``t``
    inside a segment and with no cancellation between nearly equal numbers.
    """

    def __init__(self, N: int, r: int, weighting: str, microbatches: int = 1):
        self.N, self.weighting = N, weighting
        m = microbatches
        # Level j/m (j pieces of 1/m) holds on f <= N - ceil(m N / j); m = 1: k = 1..r.
        k = np.arange(m, m * r + 1)
        hi = N - (-(-(m * N) // k))
        hi[-1] = N - 1
        lo = np.concatenate([[0], hi[:-1] + 1])
        keep = hi >= lo
        k, self.lo, self.hi = k[keep], lo[keep], hi[keep]
        self.k = k / m if m > 1 else k.astype(float)
        seg_weight = self.weight_sum(self.hi + 1.0) - self.weight_sum(self.lo.astype(float))
        if weighting == "failure":
            seg_weight = (self.hi - self.lo + 1).astype(float)
        gap = np.tril(k[:, None] - k[None, :], -1).astype(float)  # k - e_f on earlier segments
        if m > 1:
            gap /= m
        self.deficit = gap @ seg_weight

    def weight_sum(self, t: npt.ArrayLike) -> np.ndarray:
        """``W(t) = sum_{f<t} w_f`` (real ``t`` in ``[0, N]``)."""
        t = np.asarray(t, dtype=np.float64)
        if self.weighting == "failure":
            return t
        return _digamma_shift(self.N - t + 1.0, t)

    def segment(self, t: npt.ArrayLike) -> np.ndarray:
        """Index of the segment holding state ``f = t`` (integer ``t`` in ``[0, N)``)."""
        return np.searchsorted(self.hi, t, side="left")

    def average(self, t: npt.ArrayLike, seg: int | np.ndarray) -> np.ndarray:
        """``g(t)``, ``t >= 1``; ``seg`` holds ``t - 1`` or ``t`` (the forms agree at the ends)."""
        return self.k[seg] - self.deficit[seg] / self.weight_sum(t)

    def increment(self, t: npt.ArrayLike, seg: int | np.ndarray) -> np.ndarray:
        """``g(t+1) - g(t) = D_k w_t / (W(t) W(t+1))`` (``seg`` holds ``t``).

        From ``g(t+1) - g(t) = (e_t - g(t)) w_t / W(t+1)`` and ``e_t - g(t) = D_k / W(t)``.
        """
        t = np.asarray(t, dtype=np.float64)
        W = self.weight_sum(t)
        w = 1.0 if self.weighting == "failure" else 1.0 / (self.N - t)
        return self.deficit[seg] * w / (W * (W + w))


def _overhead_sum(
    model: _StateModel, survival: Callable[[np.ndarray], npt.ArrayLike], t_max: int
) -> float:
    """``sum_{t=1}^{t_max} P(T>t) [g(t+1) - g(t)]`` term by term (``survival(t) = P(T > t)``)."""
    t = np.arange(1, t_max + 1)
    return float(survival(t) @ model.increment(t, model.segment(t)))


def overhead_from_survival(
    N: int, r: int, survival: npt.ArrayLike, weighting: str = "failure"
) -> float:
    """Average overhead for a given wipe-out law ``survival[f] = P(T > f)``, ``f = 0..N``.

    ``P(T = t) = P(T > t-1) - P(T > t)`` and, with ``e_f`` from
    :func:`expected_stacks` (``f`` where a wipe-out is certain never counts),

    * ``failure``: ``sum_t P(T=t) g(t)``, ``g(t) = (1/t) sum_{f<t} e_f``;
    * ``time``: the same with ``g(t) = [sum_{f<t} e_f/(N-f)] / [sum_{f<t} 1/(N-f)]``.

    Summed by parts, ``P(T>0) g(1) - P(T>N) g(N) + sum_{t=1}^{N-1} P(T>t) [g(t+1) - g(t)]``
    (``g(1) = 1``), with the increments in closed form
    (:class:`_StateModel`).

    Parameters
    ----------
    N, r : int
        Groups and redundancy (``1 <= r <= N``).
    survival : array_like of float, length ``N + 1``
        ``P(T > f)`` for ``f = 0..N``, non-increasing.
    weighting : {"failure", "time"}

    Returns
    -------
    float
        Stack layers.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory import wipeout_law
    >>> from spare_theory.stacking.overhead import overhead_from_survival
    >>> law = wipeout_law(1000, 3)
    >>> print(round(overhead_from_survival(1000, 3, law.sf(np.arange(1001))), 4))
    1.9868
    """
    weighting = as_choice(weighting, "weighting", WEIGHTINGS)
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    table = as_real_array(survival, "survival", minimum=0.0, maximum=1.0)
    if table.shape != (N + 1,):
        raise ValueError(f"survival must have length N + 1 = {N + 1}, got shape {table.shape}")
    model = _StateModel(N, r, weighting)
    inner = _overhead_sum(model, lambda t: table[t], N - 1)
    return float(table[0] + inner - table[N] * model.average(float(N), model.segment(N - 1)))


def _overhead_one(N: int, r: int, weighting: str, microbatches: int = 1) -> float:
    """``S(N, r)`` for one pair: the by-parts sum over the support of the wipe-out law.

    Terms with ``log P(T > t) < -60`` are dropped (``WipeoutLaw.tail_end``);
    up to ``_DIRECT_TERMS`` of them are summed term by term, and the rest
    segment by segment (``e_f`` is constant on a segment, so the summand is
    smooth there) by Euler-Maclaurin
    (:func:`spare_theory._numerics.smooth_sum` over
    ``WipeoutLaw.logsf_smooth``), short segments term by term.
    """
    if r == 1:
        return 1.0
    if microbatches > 1:
        return _overhead_loads(N, r, weighting, microbatches)
    model = _StateModel(N, r, weighting, microbatches)
    law = wipeout_law(N, r)
    end = min(law.tail_end(), N - 1)

    def summand(x: float, seg: int) -> float:
        return float(np.exp(law.logsf_smooth(x)) * model.increment(x, seg))

    head_end = min(end, _DIRECT_TERMS - 1)
    total = 1.0 + _overhead_sum(model, law.sf, head_end)
    for seg in range(model.k.size):
        a, b = max(int(model.lo[seg]), head_end + 1), min(int(model.hi[seg]), end)
        if a > b:
            continue
        if b - a < _DIRECT_TERMS:
            t = np.arange(a, b + 1)
            total += float(law.sf(t) @ model.increment(t, seg))
        else:
            total += smooth_sum(functools.partial(summand, seg=seg), a, b)
    return total


def _overhead_loads(N: int, r: int, weighting: str, m: int) -> float:
    """``sum_t P(T=t) g(t)`` term by term with ``e_f`` = :func:`expected_load` (``O(N)``).

    ``g(t) = sum_{f<t} w_f e_f / sum_{f<t} w_f`` (``w_f = 1`` or ``1/(N-f)``);
    states past the pigeonhole limit have ``P(T > f) = 0`` and never count.
    """
    e = load_table(N, r, m)
    law = wipeout_law(N, r)
    t = np.arange(e.size + 1)
    sf = np.asarray(law.sf(t), dtype=float)
    p_t = sf[:-1] - sf[1:]  # P(T = t), t = 1..f_max + 1
    w = np.ones(e.size) if weighting == "failure" else 1.0 / (N - np.arange(e.size))
    g = np.cumsum(w * e) / np.cumsum(w)
    return float(p_t @ g)


def overhead(
    N: npt.ArrayLike, r: npt.ArrayLike, weighting: str = "failure", *, microbatches: int = 1
) -> float | npt.NDArray[np.float64]:
    """Closed-form average overhead ``S(N, r)`` from a fresh start to wipe-out.

    With ``microbatches = m > 1`` (each shard cut into ``m`` pieces that any
    surviving host of its type may compute, :func:`spare_theory.stacking.stacks.min_load`)
    the state cost is :func:`expected_load` (the window-scan model) instead of
    :func:`expected_stacks`, summed term by term over ``f`` (``O(N)``, the load
    table cached per ``(N, r, m)``); ``m = 1`` gives the same numbers as before.

    Parameters
    ----------
    N : int or array_like
        Number of groups, ``N >= r(r-1)+1`` (a modular ruler exists).
    r : int or array_like
        Redundancy, ``r >= 1``; broadcasts against ``N``.
    weighting : {"failure", "time"}
        ``"failure"``: every state ``f = 0..T-1`` counts once;
        ``"time"``: state ``f`` weighs its expected holding time ``1/(N-f)``.
    microbatches : int, default 1
        Pieces per shard ``m``.

    Returns
    -------
    float or numpy.ndarray
        ``sum_t P(T=t) * avg_{f<t} E[S*_f]`` with ``P(T > f)`` from
        :func:`spare_theory.wipeout.law.wipeout_survival` and ``E[S*_f]`` from
        :func:`expected_stacks` (derivation in ``docs/theory.md`` section 3).
        Memory and time do not grow with ``N`` (``O(r)`` closed forms for
        the running averages, quadrature over long supports): accurate for
        ``N`` up to 1e12 and ``r`` up to 64.

    Examples
    --------
    >>> from spare_theory import overhead
    >>> print(round(overhead(1000, 3), 4), round(overhead(1000, 3, "time"), 4))
    1.9868 1.9873
    >>> overhead([1000, 10**6], 2).round(4).tolist()
    [1.9501, 1.9982]
    >>> [round(overhead(1000, 10, microbatches=m), 4) for m in (1, 4, 16)]
    [2.0204, 1.5014, 1.3967]
    """
    weighting = as_choice(weighting, "weighting", WEIGHTINGS)
    m = as_count(microbatches, "microbatches", minimum=1)
    N_arr, r_arr = np.broadcast_arrays(as_count_array(N, "N"), as_count_array(r, "r"))
    if np.any(N_arr < r_arr * (r_arr - 1) + 1):
        raise ValueError("N must be >= r(r-1)+1 (no modular ruler with r marks otherwise)")
    out = np.empty(N_arr.shape)
    for idx in np.ndindex(N_arr.shape):
        out[idx] = _overhead_one(int(N_arr[idx]), int(r_arr[idx]), weighting, m)
    return float(out) if out.ndim == 0 else out
