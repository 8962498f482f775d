"""Monte Carlo of wipe-out and overhead under domain failures and lemon groups.

The failure model is the one of :mod:`spare_theory.wipeout.domains` (time ``u`` in
units of ``1/lambda``, ``lambda`` the total failure rate of an ordinary
group; a share ``s`` of it from domain events), with optional per-group rate
multipliers (*lemon* groups, :func:`lemon_rates`).  Every group's failure
time in a cycle is drawn directly:

    X_g = min(E_g / ((1 - s) w_g), V_{d(g)} / s),

``E_g`` and ``V_d`` independent standard exponentials, ``w_g`` the group's
rate multiplier, ``d(g)`` its domain (only the first event of a domain
matters: its groups stay failed until the next restart).  Type ``i`` is
wiped at ``max_k X[hosts[i, k]]``, the cycle at the first such time
``U*``; the wipe-out count is ``T = #{g : X_g <= U*}`` (all groups of the
wiping domain event count).

Why not ``simulate_wipeout(..., domains=...)``: that sampler draws a failure
*order* with no clock (uniformly random, which domain events break: several
groups fail at one instant) and is tuned for it; here the clock is needed
anyway (lemons change the order, and the time to train needs the time), so
a separate function keeps the optimised sampler, its numbers and its speed
untouched.  With ``s = 0`` and no lemons the two agree in law
(``tests/test_domains_sim.py``).

Seeds: trials come in blocks of ``max(1, 2**16 // N)``, block ``b`` drawn
from ``child_seed(seed, b)`` (the overhead: trial ``i`` from
``child_seed(seed, i)``), so results do not depend on chunking.
"""

from __future__ import annotations

import concurrent.futures as cf
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._parallel import map_tasks
from .._samples import TrialSamples
from .._validation import as_count, as_real, as_seed_sequence, child_seed
from ..placement.domains import failure_domains
from ..placement.placements import validate_hosts
from ..wipeout.simulation import split_tasks
from .overhead import stacks_trajectory

__all__ = [
    "DomainOverheadSamples",
    "DomainWipeoutSamples",
    "cycle_trajectory",
    "failure_times",
    "lemon_count",
    "lemon_rates",
    "simulate_domain_overhead",
    "simulate_domain_wipeout",
]

_BLOCK_ELEMENTS = 1 << 16


def lemon_rates(
    N: int, lemon_fraction: float, lemon_rate_factor: float, *, seed: int | np.random.SeedSequence
) -> npt.NDArray[np.float64]:
    """Per-group failure-rate multipliers: ``round(phi N)`` lemons at ``lemon_rate_factor``.

    The lemons are a uniformly random subset (seeded); the other groups have
    multiplier 1.

    Parameters
    ----------
    N : int
        Number of groups.
    lemon_fraction : float
        Share of lemon groups, ``0 <= phi <= 1``.
    lemon_rate_factor : float
        Failure rate of a lemon relative to an ordinary group, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Seed of the choice of lemons.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of length ``N``.

    Examples
    --------
    >>> from spare_theory.stacking.domains_sim import lemon_rates
    >>> lemon_rates(8, 0.25, 10.0, seed=0).tolist()
    [1.0, 1.0, 10.0, 1.0, 10.0, 1.0, 1.0, 1.0]
    """
    N = as_count(N, "N")
    phi = as_real(lemon_fraction, "lemon_fraction", minimum=0.0, maximum=1.0)
    factor = as_real(lemon_rate_factor, "lemon_rate_factor", minimum=1.0)
    rng = np.random.default_rng(as_seed_sequence(seed))
    rates = np.ones(N)
    rates[rng.permutation(N)[: lemon_count(N, phi)]] = factor
    return rates


def lemon_count(N: int, lemon_fraction: float) -> int:
    """Lemon groups among ``N``: ``round(phi N)``, the whole count every simulation plays.

    The model prices the same count (:attr:`Scenario.lemon_share
    <spare_theory.hourly.scenario.Scenario.lemon_share>`), not the share ``phi``
    itself, which ``N`` groups cannot hold unless ``phi N`` is whole.

    Examples
    --------
    >>> from spare_theory.stacking.domains_sim import lemon_count
    >>> lemon_count(12, 0.281), lemon_count(1000, 0.281)
    (3, 281)
    """
    return round(lemon_fraction * N)


def _check_simulation(
    hosts: npt.ArrayLike,
    trials: int,
    seed: int | np.random.SeedSequence,
    domains: int | npt.ArrayLike,
    share: float,
    rates: npt.ArrayLike | None,
) -> tuple[np.ndarray, int, np.random.SeedSequence, tuple[np.ndarray, float, np.ndarray]]:
    """Both simulations' checked arguments: placement, trials, seed, ``(domains, s, rates)``."""
    hosts = validate_hosts(hosts)
    N = hosts.shape[0]
    trials = as_count(trials, "trials")
    seed = as_seed_sequence(seed)
    dom = failure_domains(N, domains)
    s = as_real(share, "domain_failure_share", minimum=0.0, maximum=1.0)
    if rates is None:
        w = np.ones(N)
    else:
        w = np.asarray(rates, dtype=float)
        if w.shape != (N,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"group_rates must be {N} finite positive numbers")
    return hosts, trials, seed, (dom, s, w)


def failure_times(
    rng: np.random.Generator,
    trials: int,
    domains: npt.NDArray[np.int64],
    domain_failure_share: float,
    group_rates: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Failure times ``X[t, g]`` of every group in ``trials`` fresh cycles (units ``1/lambda``).

    ``X_g = min(E_g / ((1 - s) w_g), V_{d(g)} / s)`` (module docstring); no
    argument checks (callers validate).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the draws: ``trials x N`` then ``trials x D`` exponentials.
    trials : int
        Rows.
    domains : numpy.ndarray
        Domain id of each group, ``0 .. D-1``.
    domain_failure_share : float
        ``s`` in ``[0, 1]``.
    group_rates : numpy.ndarray
        Rate multiplier ``w_g`` of each group.

    Returns
    -------
    numpy.ndarray
        Shape ``(trials, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory.stacking.domains_sim import failure_times
    >>> X = failure_times(np.random.default_rng(0), 1, np.array([0, 0, 1]), 0.5, np.ones(3))
    >>> np.round(X, 3).tolist()
    [[0.005, 0.005, 0.04]]
    """
    N = domains.size
    s = domain_failure_share
    D = int(domains.max()) + 1
    with np.errstate(divide="ignore"):
        own = rng.standard_exponential((trials, N)) / ((1.0 - s) * group_rates)
        dom = rng.standard_exponential((trials, D)) / s
    return np.minimum(own, dom[:, domains])


@dataclass(frozen=True)
class DomainWipeoutSamples(TrialSamples):
    """Samples of :func:`simulate_domain_wipeout`, one per trial.

    ``mean(name)``, ``standard_error(name)`` and ``to_frame()`` summarise
    them (:class:`spare_theory._samples.TrialSamples`).

    Attributes
    ----------
    failures : numpy.ndarray
        ``int64``: groups failed at the wipe-out, the wiping event included.
    time : numpy.ndarray
        Wipe-out time ``U*`` in units of ``1/lambda``.

    Examples
    --------
    >>> import numpy as np
    >>> samples = DomainWipeoutSamples(np.array([3, 5]), np.array([0.5, 0.7]))
    >>> round(samples.mean("time"), 3), round(samples.standard_error("failures"), 3)
    (0.6, 1.0)
    """

    failures: npt.NDArray[np.int64]
    time: npt.NDArray[np.float64]


def simulate_domain_wipeout(
    hosts: npt.ArrayLike,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    domains: int | npt.ArrayLike = 1,
    domain_failure_share: float = 0.0,
    group_rates: npt.ArrayLike | None = None,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> DomainWipeoutSamples:
    """Monte Carlo of the wipe-out count and time under domain failures and lemons.

    Exact sampler of the model in the module docstring (vectorised over
    blocks of trials: ``O(N r)`` per trial).

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement.
    trials : int
        Independent cycles, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Block ``b`` of ``max(1, 2**16 // N)`` trials uses ``child_seed(seed, b)``.
    domains : int or array_like of int
        Domain block size or labels (:func:`spare_theory.placement.domains.failure_domains`);
        default 1 (every group its own domain).
    domain_failure_share : float
        Share ``s`` of an ordinary group's failure rate from domain events,
        ``0 <= s <= 1``.
    group_rates : array_like of float, optional
        Rate multiplier of each group (lemons, :func:`lemon_rates`); default 1.
    executor : concurrent.futures.Executor, optional
        Runs the blocks in up to 16 tasks there; ``None`` runs them here.
        The samples do not depend on it.
    progress : bool
        Show a progress bar over the tasks.

    Returns
    -------
    DomainWipeoutSamples

    Examples
    --------
    >>> from spare_theory.placement.domains import domain_aware_placement
    >>> from spare_theory.stacking.domains_sim import simulate_domain_wipeout
    >>> out = simulate_domain_wipeout(domain_aware_placement(64, 4, 8), 4, seed=0,
    ...                               domains=8, domain_failure_share=0.3)
    >>> out.failures.tolist(), np.round(out.time, 3).tolist()
    ([25, 24, 25, 24], [0.337, 0.928, 0.513, 0.313])
    """
    hosts, trials, seed, model = _check_simulation(
        hosts, trials, seed, domains, domain_failure_share, group_rates
    )
    block = max(1, _BLOCK_ELEMENTS // hosts.shape[0])
    tasks = [(hosts, model, seed, block, trials, part) for part in split_tasks(-(-trials // block))]
    parts = map_tasks(_wipeout_blocks, tasks, executor=executor, desc="blocks", progress=progress)
    return DomainWipeoutSamples(*(np.concatenate(column) for column in zip(*parts)))


def _wipeout_blocks(task: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Wipe-out counts and times of the task's blocks (block ``b`` from ``child_seed(seed, b)``)."""
    hosts, (dom, s, w), seed, block, trials, blocks = task
    r = hosts.shape[1]
    counts, times = [], []
    for b in blocks:
        size = min(block, trials - b * block)
        X = failure_times(np.random.default_rng(child_seed(seed, b)), size, dom, s, w)
        W = X[:, hosts[:, 0]]
        for k in range(1, r):
            np.maximum(W, X[:, hosts[:, k]], out=W)
        wipe = W.min(axis=1)
        times.append(wipe)
        counts.append(np.count_nonzero(wipe[:, None] >= X, axis=1))
    return np.concatenate(counts).astype(np.int64), np.concatenate(times).astype(float)


@dataclass(frozen=True)
class DomainOverheadSamples(TrialSamples):
    """Samples of :func:`simulate_domain_overhead`, one per trial.

    ``mean(name)``, ``standard_error(name)`` and ``to_frame()`` summarise
    them (:class:`spare_theory._samples.TrialSamples`).

    Attributes
    ----------
    failures : numpy.ndarray
        Groups failed at the wipe-out (the wiping event included).
    time : numpy.ndarray
        Wipe-out time ``U*`` (units ``1/lambda``).
    time_weighted : numpy.ndarray
        ``(1/U*) int_0^U* S*(u) du``: the stack depth averaged over the cycle's
        real clock (``S* = 1`` before the first failure).
    worst : numpy.ndarray
        ``S*`` of the last state before the wipe-out (the largest).
    inverse_time_weighted : numpy.ndarray
        ``(1/U*) int_0^U* du / S*(u)``: the mean throughput over the cycle.

    Examples
    --------
    >>> import numpy as np
    >>> one = np.array([1.0])
    >>> samples = DomainOverheadSamples(np.array([3]), one, 2 * one, 3 * one, one / 2)
    >>> samples.worst.tolist(), samples.to_frame().iloc[0].tolist()
    ([3.0], [0.0, 3.0, 1.0, 2.0, 3.0, 0.5])
    """

    failures: npt.NDArray[np.int64]
    time: npt.NDArray[np.float64]
    time_weighted: npt.NDArray[np.float64]
    worst: npt.NDArray[np.float64]
    inverse_time_weighted: npt.NDArray[np.float64]


def cycle_trajectory(
    hosts: npt.NDArray[np.int64], X: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], int]:
    """Event times and ``S*`` after each event of one cycle, until the wipe-out.

    Groups fail at ``X`` (equal times are one event, e.g. a domain event);
    ``S*`` after each event is exact: the one
    :class:`~spare_theory.stacking.reordering.ReorderingController` keeps,
    found by the compiled kernel of
    :func:`~spare_theory.stacking.overhead.stacks_trajectory` (about 8x
    faster at ``N = 1024``, ``r = 10``, ``bench/bench_controller.py``).

    Parameters
    ----------
    hosts : numpy.ndarray
        A valid placement.
    X : numpy.ndarray
        Failure time of every group in the cycle.

    Returns
    -------
    tuple
        ``(times, stacks, failures)``: ``times[0] = 0`` and ``times[k]`` the
        ``k``-th event, the last one the wipe-out; ``stacks[k]`` is ``S*`` on
        ``[times[k], times[k+1])`` (``stacks[0] = 1``; one entry fewer than
        ``times``); ``failures`` the groups failed at the wipe-out.

    Examples
    --------
    >>> import numpy as np
    >>> from spare_theory import cyclic_placement
    >>> from spare_theory.stacking.domains_sim import cycle_trajectory
    >>> times, stacks, f = cycle_trajectory(cyclic_placement(7, 3), np.arange(1.0, 8.0))
    >>> times.tolist(), stacks.tolist(), f
    ([0.0, 1.0, 2.0, 3.0, 4.0], [1, 2, 2, 2], 4)
    """
    order = np.argsort(X, kind="stable")
    xs = X[order]
    # S* after each failure of the order (f = 0..T-1; failure T - 1 wipes out): the
    # exact S* is unique, so these are the controller's values, found by the compiled
    # kernel.  An event ends where the sorted times change.
    per_failure = stacks_trajectory(hosts, order)
    T = per_failure.size
    ends = np.append(np.flatnonzero(xs[1:] != xs[:-1]) + 1, xs.size)
    cut = int(np.searchsorted(ends, T))  # the wiping event: the first ending at or after T
    before = ends[:cut]
    times = np.concatenate(([0.0], xs[before - 1], xs[T - 1 : T]))
    stacks = np.concatenate(([1], per_failure[before])).astype(np.int64)
    return times, stacks, int(ends[cut])


def simulate_domain_overhead(
    hosts: npt.ArrayLike,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    domains: int | npt.ArrayLike = 1,
    domain_failure_share: float = 0.0,
    group_rates: npt.ArrayLike | None = None,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> DomainOverheadSamples:
    """Monte Carlo of the stack depth ``S*`` over a cycle under domain failures.

    Each trial draws the failure times of the module docstring and runs the
    exact reordering controller through them (:func:`cycle_trajectory`);
    about 15 ms per trial at ``N = 1024``, ``r = 10``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement.
    trials : int
        Independent cycles, ``>= 1``; trial ``i`` uses ``child_seed(seed, i)``.
    seed : int or numpy.random.SeedSequence
        Seed.
    domains, domain_failure_share, group_rates, executor, progress
        As in :func:`simulate_domain_wipeout` (the executor runs trials).

    Returns
    -------
    DomainOverheadSamples

    Examples
    --------
    >>> from spare_theory import contiguous_placement
    >>> from spare_theory.stacking.domains_sim import simulate_domain_overhead
    >>> out = simulate_domain_overhead(contiguous_placement(32, 3), 3, seed=0,
    ...                                domains=4, domain_failure_share=0.5)
    >>> out.failures.tolist(), out.worst.tolist()
    ([6, 4, 6], [2.0, 1.0, 2.0])
    """
    hosts, trials, seed, model = _check_simulation(
        hosts, trials, seed, domains, domain_failure_share, group_rates
    )
    tasks = [(hosts, model, seed, part) for part in split_tasks(trials)]
    parts = map_tasks(_overhead_trials, tasks, executor=executor, desc="trials", progress=progress)
    out = np.concatenate(parts, axis=1)
    return DomainOverheadSamples(out[0].astype(np.int64), out[1], out[2], out[3], out[4])


def _overhead_trials(task: tuple) -> np.ndarray:
    """The five per-trial quantities (rows) of the task's trials (``child_seed(seed, i)``)."""
    hosts, (dom, s, w), seed, trials = task
    out = np.empty((5, len(trials)))
    for row, i in enumerate(trials):
        X = failure_times(np.random.default_rng(child_seed(seed, i)), 1, dom, s, w)[0]
        times, stacks, f = cycle_trajectory(hosts, X)
        span = np.diff(times)
        total = times[-1]
        out[:, row] = (
            f,
            total,
            float(span @ stacks) / total,
            stacks[-1],
            float(span @ (1.0 / stacks)) / total,
        )
    return out
