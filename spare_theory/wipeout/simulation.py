"""Monte Carlo of the wipe-out count ``T`` for any placement.

Failures hit groups in a uniformly random order; ``T`` is the number of
failures up to and including the first one after which some type has lost
all its hosts.  Two exact samplers, chosen deterministically from
``(N, r, hosts)`` (never from the memory cap):

* **sparse** (``mu << N``): the distinct values of an iid uniform sequence
  of groups, in order of first appearance, are a uniformly random failure
  order.  Only a prefix of ``m`` failures (``P(T > m) ~ 1e-3``) is drawn; a
  type is wiped at the ``r``-th hit among its ``(type, failure index)``
  pairs, found by one row-wise integer sort.  A trial that survives its
  prefix continues with a uniformly random permutation of the groups not yet
  failed (exact, not truncated).
* **dense** (``mu`` a large fraction of ``N``): iid uniform failure times
  ``U_g``; type ``i`` dies at ``W_i = max_k U[hosts[i, k]]`` and
  ``T = #{g : U_g <= min_i W_i}``.  For cyclic placements the ``r`` gathers
  are contiguous slices of ``U`` (``hosts[i, k] = i + c_k mod N``).  Ties
  between doubles (probability below ``N * 2**-53``) are the only departure
  from exactness.

Reproducibility: trials are drawn in fixed-size blocks, block ``b`` from
``child_seed(seed, b)``; the block size depends only on ``(N, r)`` and the
method, and a memory chunk always holds whole blocks, so the samples do not
depend on ``memory_limit_bytes``.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._numerics import log_falling_ratio
from .._parallel import map_tasks
from .._validation import as_count, as_seed_sequence, child_seed
from ..placement.placements import group_stacks, validate_hosts

__all__ = ["SamplingPlan", "sampling_plan", "simulate_wipeout", "split_tasks"]

# Survival probability at the end of the sparse prefix: the fraction of
# trials that need the (slower, exact) continuation.
_PREFIX_TAIL = 1e-3
# Trials per block of the sparse sampler.
_SPARSE_BLOCK = 128
# Elements (trials x groups) per block of the dense sampler: small blocks keep
# the per-block generator set-up negligible without big memory.
_DENSE_BLOCK_ELEMENTS = 1 << 16
# Working set per chunk, bytes: larger chunks stop paying once arrays leave the
# cache and the allocator hands out fresh (page-faulting) memory each time.
_CHUNK_TARGET_BYTES = 1 << 22
# Tasks a simulation is spread over (at most): enough to keep a few workers
# busy, few enough that shipping the placement to each stays cheap.
_TASKS = 16
# Measured cost (this machine, numpy 2.4) of one sparse key (draw x host: sort
# and bookkeeping), per log2(keys), relative to one dense element (double x pass).
_SPARSE_KEY_COST = 3.1


@dataclass(frozen=True)
class SamplingPlan:
    """How :func:`simulate_wipeout` samples a placement (a pure function of it).

    Attributes
    ----------
    method : str
        ``"sparse"`` or ``"dense"``.
    block_trials : int
        Trials per seeded block.
    prefix_failures : int
        Sparse: distinct failures ``m`` covered by the prefix (0 for dense).
    prefix_draws : int
        Sparse: iid draws per trial to expect ``m`` distinct groups.
    block_bytes : int
        Peak working memory of one block, bytes.

    Examples
    --------
    >>> from spare_theory.wipeout.simulation import sampling_plan
    >>> plan = sampling_plan(10**6, 3)
    >>> plan.method, plan.block_trials, plan.prefix_failures
    ('sparse', 128, 19046)
    """

    method: str
    block_trials: int
    prefix_failures: int
    prefix_draws: int
    block_bytes: int


def _prefix_failures(N: int, r: int) -> int:
    """Smallest ``m`` with ``exp(-N p_r(m)) <= _PREFIX_TAIL`` (first-order survival)."""
    target = math.log(-math.log(_PREFIX_TAIL) / N)
    lo, hi = r - 1, N  # log p_r increases with f: bisect on (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(log_falling_ratio(np.array(mid), N, r)) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def sampling_plan(N: int, r: int) -> SamplingPlan:
    """The deterministic :class:`SamplingPlan` for ``N`` groups and redundancy ``r``.

    Sparse when sorting the ``D r`` keys of a prefix of ``D`` iid draws (``D``
    chosen to reach ``m`` distinct failures, ``exp(-N p_r(m)) <= 1e-3``) costs
    less than the dense sampler's ``(r + 3) N`` passes; dense otherwise and
    always for ``r = 1``.

    Parameters
    ----------
    N : int
        Number of groups, ``N >= 1``.
    r : int
        Redundancy, ``1 <= r <= N``.

    Returns
    -------
    SamplingPlan

    Examples
    --------
    >>> from spare_theory.wipeout.simulation import sampling_plan
    >>> plan = sampling_plan(1000, 3)  # mu = 90 is 9 % of N: dense
    >>> plan.method, plan.block_trials, plan.block_bytes
    ('dense', 65, 3120000)
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    m = _prefix_failures(N, r)
    if m < N:
        # Expected distinct values among D draws is N(1 - (1 - 1/N)^D) = m.
        draws: float = math.ceil(math.log1p(-m / N) / math.log1p(-1.0 / N))
        draws += math.ceil(4 * math.sqrt(draws)) + 8
    else:
        draws = math.inf
    # Sparse: draws*r keys, sorted; dense: r + 3 passes over N doubles.
    keys = draws * r
    if (
        _SPARSE_KEY_COST * keys * math.log2(max(keys, 2)) < N * (r + 3.0)
        and N * (draws + 1) < 2**62
        and r > 1
    ):
        return SamplingPlan(
            "sparse", _SPARSE_BLOCK, m, int(draws), int(_SPARSE_BLOCK * (56 + 40 * r) * draws)
        )
    block = max(1, _DENSE_BLOCK_ELEMENTS // N)
    return SamplingPlan("dense", block, 0, 0, block * 48 * N)


def split_tasks(units: int) -> list[range]:
    """Units ``0 .. units - 1`` (seeded blocks or trials) as at most 16 contiguous tasks.

    The simulations of layers 2 and 3 hand these to
    :func:`spare_theory._parallel.map_tasks`; each unit carries its own seed,
    so the split changes where units run, never what they draw.

    Parameters
    ----------
    units : int
        Number of units, ``>= 1``.

    Returns
    -------
    list of range
        ``min(units, 16)`` ranges of nearly equal length, in order.

    Examples
    --------
    >>> from spare_theory.wipeout.simulation import split_tasks
    >>> split_tasks(5), len(split_tasks(1000))
    ([range(0, 1), range(1, 2), range(2, 3), range(3, 4), range(4, 5)], 16)
    """
    units = as_count(units, "units")
    parts = np.array_split(np.arange(units), min(units, _TASKS))
    return [range(int(part[0]), int(part[-1]) + 1) for part in parts]


def _cyclic_offsets(hosts: np.ndarray) -> np.ndarray | None:
    """``c`` with ``hosts[i, k] = (i + c_k) mod N`` if ``hosts`` is cyclic, else ``None``."""
    N = hosts.shape[0]
    offsets = hosts[0]
    column = np.arange(N)
    # Column by column, so the check needs O(N) memory, not O(N r).
    for k, c in enumerate(offsets):
        if not np.array_equal(hosts[:, k], (column + c) % N):
            return None
    return offsets


def _dense_counts(
    U: np.ndarray, hosts: np.ndarray, offsets: np.ndarray | None, work: np.ndarray
) -> np.ndarray:
    """``T`` per row of failure times ``U`` (shape ``(B, N)``); ``work`` is scratch of that shape.

    No temporaries of size ``N``: the ``r`` gathers are maxima into ``work``,
    which is what bounds the speed (``bench/bench_wipeout.py`` measures it
    against the time to draw ``U`` and gather it ``r`` times).
    """
    N = hosts.shape[0]
    W = work
    if offsets is not None:
        # Column i of the shift by c is U[:, (i + c) mod N]: two contiguous slices.
        c = int(offsets[0])
        W[:, : N - c], W[:, N - c :] = U[:, c:], U[:, :c]
        for c in offsets[1:]:
            np.maximum(W[:, : N - c], U[:, c:], out=W[:, : N - c])
            np.maximum(W[:, N - c :], U[:, :c], out=W[:, N - c :])
    else:
        np.take(U, hosts[:, 0], axis=1, out=W)
        gathered = np.empty_like(W)
        for k in range(1, hosts.shape[1]):
            np.maximum(W, np.take(U, hosts[:, k], axis=1, out=gathered), out=W)
    wipe_time = W.min(axis=1)
    return np.count_nonzero(np.less_equal(U, wipe_time[:, None], out=W.view(bool)[:, :N]), axis=1)


def _order_count(order: np.ndarray, hosts: np.ndarray) -> int:
    """``T`` for one complete failure order (a permutation of the groups)."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return int(rank[hosts].max(axis=1).min()) + 1


def _key_dtype(N: int, draws: int) -> type[np.signedinteger]:
    """The smallest integer type holding the sort keys ``group * (draws + 1) + index``."""
    return np.int32 if N * (draws + 1) < 2**31 - 1 else np.int64


def _sparse_counts(draws: np.ndarray, type_keys: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """``T`` per row of iid group draws (``0`` where the prefix did not reach a wipe-out).

    ``type_keys[g, k] = stacks[g, k] * (D + 1)``: the sort key of the ``k``-th
    type hosted by group ``g``.  Also returns, per row, the distinct prefix
    (groups in failure order) of the rows that need the continuation.
    """
    B, D = draws.shape
    r = type_keys.shape[1]
    dtype = type_keys.dtype
    # First appearance of each group in each row: sort (group, position) keys.
    keyed = np.sort(draws.astype(dtype) * D + np.arange(D, dtype=dtype), axis=1)
    group = keyed // D
    first_sorted = np.ones((B, D), dtype=bool)
    first_sorted[:, 1:] = group[:, 1:] != group[:, :-1]
    flat = (keyed - group * D) + (np.arange(B, dtype=dtype) * D)[:, None]
    first = np.zeros((B, D), dtype=bool)
    first.reshape(-1)[flat[first_sorted]] = True
    index = np.cumsum(first, axis=1, dtype=dtype)  # distinct failures so far, 1-based
    # Every hit (type, failure index) of a first appearance; repeats get a
    # sentinel key that sorts last.
    sentinel = np.iinfo(dtype).max
    hits = type_keys[draws] + index[:, :, None]
    hits[~first] = sentinel
    hits = np.sort(hits.reshape(B, D * r), axis=1)
    # A type is wiped when r consecutive sorted keys share it: at the last one.
    width = D + 1
    types = hits // width
    last = hits[:, r - 1 :]
    wiped = (last != sentinel) & (types[:, : last.shape[1]] == types[:, r - 1 :])
    T = np.where(wiped, last - types[:, r - 1 :] * width, sentinel).min(axis=1).astype(np.int64)
    T[sentinel == T] = 0
    prefixes = [draws[i][first[i]] for i in np.flatnonzero(T == 0)]
    return T, prefixes


def _sample_blocks(task: tuple) -> npt.NDArray[np.int64]:
    """``T`` for the trials of the task's blocks (block ``b`` from ``child_seed(seed, b)``).

    The blocks are drawn in memory chunks of ``per_chunk`` blocks; the dense
    sampler's buffers are reused across the chunks of a task.
    """
    hosts, plan, offsets, type_keys, seed, task_blocks, sizes, per_chunk = task
    N = hosts.shape[0]
    out = []
    U_buf = work = np.empty((0, N))  # dense: reused across chunks of equal size
    for first_block in task_blocks[::per_chunk]:
        blocks = range(first_block, min(task_blocks.stop, first_block + per_chunk))
        rngs = [np.random.default_rng(child_seed(seed, b)) for b in blocks]
        if plan.method == "dense":
            rows = sum(sizes[b] for b in blocks)
            if U_buf.shape[0] != rows:
                U_buf, work = np.empty((rows, N)), np.empty((rows, N))
            filled = 0
            for rng, b in zip(rngs, blocks):
                # Filled in place: the same doubles as rng.random((sizes[b], N)).
                rng.random(out=U_buf[filled : filled + sizes[b]])
                filled += sizes[b]
            out.append(_dense_counts(U_buf, hosts, offsets, work))
            continue
        draws = np.concatenate(
            [rng.integers(0, N, size=(sizes[b], plan.prefix_draws)) for rng, b in zip(rngs, blocks)]
        )
        T, prefixes = _sparse_counts(draws, type_keys)
        # Survivors of the prefix continue, block by block in trial order, with
        # a random order of the groups not yet failed drawn from their block's stream.
        block_of = np.repeat(np.arange(len(rngs)), [sizes[b] for b in blocks])
        for row, prefix in zip(np.flatnonzero(T == 0), prefixes):
            rest = np.setdiff1d(np.arange(N), prefix, assume_unique=False)
            order = np.concatenate([prefix, rngs[block_of[row]].permutation(rest)])
            T[row] = _order_count(order, hosts)
        out.append(T)
    return np.concatenate(out).astype(np.int64)


def simulate_wipeout(
    hosts: npt.ArrayLike,
    trials: int,
    *,
    seed: int | np.random.SeedSequence,
    memory_limit_bytes: int = 2**30,
    executor: cf.Executor | None = None,
    progress: bool = False,
) -> npt.NDArray[np.int64]:
    """Monte Carlo samples of the wipe-out count ``T``.

    ``T`` is the number of failures, in a uniformly random order of the
    groups, up to and including the first that leaves a type with no host;
    exact samplers (module docstring).  For the cyclic ruler placement this
    is ``wipeout_law(N, r).rvs(trials, seed=seed)``.

    Parameters
    ----------
    hosts : array_like of int, shape (N, r)
        A valid placement (:func:`spare_theory.placement.placements.validate_hosts`).
    trials : int
        Number of independent failure orders, ``>= 1``.
    seed : int or numpy.random.SeedSequence
        Block ``b`` of trials uses ``child_seed(seed, b)``.
    memory_limit_bytes : int, optional
        Cap on the working memory of each task (default 1 GiB); must hold one
        block (:func:`sampling_plan` ``.block_bytes``).  The samples do not
        depend on it.
    executor : concurrent.futures.Executor, optional
        Runs the blocks in up to 16 tasks there (each carries the placement);
        ``None`` runs them here.  The samples do not depend on it.
    progress : bool
        Show a progress bar over the tasks.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of ``trials`` values of ``T`` (failures, ``r <= T <= N``).

    Examples
    --------
    >>> from spare_theory import cyclic_placement, simulate_wipeout
    >>> simulate_wipeout(cyclic_placement(1000, 3), 5, seed=0).tolist()
    [89, 130, 102, 88, 41]
    """
    hosts = validate_hosts(hosts)
    trials = as_count(trials, "trials", minimum=1)
    seed = as_seed_sequence(seed)
    memory_limit_bytes = as_count(memory_limit_bytes, "memory_limit_bytes", minimum=1)
    N, r = hosts.shape
    plan = sampling_plan(N, r)
    if plan.block_bytes > memory_limit_bytes:
        raise ValueError(
            f"memory_limit_bytes={memory_limit_bytes} cannot hold one block of trials for "
            f"N={N}, r={r}: it must be >= {plan.block_bytes}"
        )
    if r == 1:
        return np.ones(trials, dtype=np.int64)  # the first failure wipes its type
    per_chunk = max(
        1, min(memory_limit_bytes, max(_CHUNK_TARGET_BYTES, plan.block_bytes)) // plan.block_bytes
    )
    n_blocks = -(-trials // plan.block_trials)
    sizes = [min(plan.block_trials, trials - b * plan.block_trials) for b in range(n_blocks)]
    offsets = _cyclic_offsets(hosts)
    type_keys = None
    if plan.method == "sparse":
        dtype = _key_dtype(N, plan.prefix_draws)
        type_keys = group_stacks(hosts).astype(dtype) * dtype(plan.prefix_draws + 1)
    tasks = [
        (hosts, plan, offsets, type_keys, seed, blocks, sizes, per_chunk)
        for blocks in split_tasks(n_blocks)
    ]
    out = map_tasks(_sample_blocks, tasks, executor=executor, desc="blocks", progress=progress)
    return np.concatenate(out)
