"""Birth-death chains of down counts: how long until too many groups are down at once.

With repairs a group alternates between *up* (exponential, rate 1 in units
``u = lambda t``) and *down* (exponential repairs, ``mu`` per mean lifetime),
independently of the others.  The number of a set's groups down at once is
then a birth-death chain (``j -> j+1`` at the rate of the up groups,
``j -> j-1`` at ``j mu``), and the set is lost when the count reaches a
level: all ``k`` members of a replica set or of a shard type's hosts, ``k``
of ``N`` groups for a planned-restart trigger or an elastic quorum.  This
module has the chain (:func:`down_count_generator`), its mean time to loss
(:func:`down_count_mean_passage`) and its survival on a grid
(:func:`chain_log_survival`), for the cycle laws of every strategy and for
the step-level model.  Derivations in ``docs/theory.md`` section 6.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh_tridiagonal, expm

from .._caching import cached

#: ``log`` of the largest factor by which :func:`surviving_count_throughput`'s similarity
#: transform may magnify its eigenvectors' rounding (``e^18``: errors below ``1e-8``).
_MAX_LOG_GAIN = 18.0

__all__ = [
    "chain_log_survival",
    "chain_states",
    "down_count_generator",
    "down_count_mean_passage",
    "fast_mixing",
    "set_mean_absorption",
    "surviving_count_generator",
    "surviving_count_throughput",
]


def set_mean_absorption(k: int, mu: float) -> float:
    """Mean time (units ``1/lambda``) until ``k`` groups are all down at once, from all up.

    The down count is a birth-death chain (``j -> j+1`` at rate ``k - j``,
    ``j -> j-1`` at ``j mu``); the mean passage time from ``j`` to ``j+1``
    is ``t_j = (1 + j mu t_{j-1}) / (k - j)`` (a sum of positive terms,
    stable for any ``mu``), and the answer is ``sum_j t_j``.  ``mu = 0`` is
    the harmonic number ``H_k``.

    Examples
    --------
    >>> round(set_mean_absorption(3, 0.0), 6), round(set_mean_absorption(2, 10.0), 4)
    (1.833333, 6.5)
    """
    return down_count_mean_passage(k, k, mu)


def down_count_generator(k: int, mu: float, groups: int | None = None) -> np.ndarray:
    """Sub-generator of the down count ``0..k-1`` of ``n`` groups (reaching ``k`` is the loss).

    ``j -> j+1`` at rate ``n - j`` (an up group fails), ``j -> j-1`` at
    ``j mu`` (a repair ends), units ``1/lambda``.  ``n = k`` (the default) is
    a set that is lost when all its members are down at once (a replica set,
    a shard type's hosts); ``n > k``: ``k`` of ``n`` groups down at once (a
    planned-restart trigger, an elastic job's quorum).

    Parameters
    ----------
    k : int
        Down count at which the chain is lost, ``>= 1``.
    mu : float
        Repairs per mean group lifetime, ``>= 0``.
    groups : int, optional
        ``n >= k`` groups counted (default ``k``).

    Returns
    -------
    numpy.ndarray
        ``(k, k)`` matrix whose row sums are ``0`` except the last
        (``-(n - k + 1)``: the loss).

    Examples
    --------
    >>> down_count_generator(2, 3.0).tolist()
    [[-2.0, 2.0], [3.0, -4.0]]
    >>> down_count_generator(2, 3.0, groups=5).tolist()
    [[-5.0, 5.0], [3.0, -7.0]]
    """
    n = k if groups is None else groups
    G = np.zeros((k, k))
    for j in range(k):
        if j + 1 < k:
            G[j, j + 1] = n - j
        if j > 0:
            G[j, j - 1] = j * mu
        G[j, j] = -((n - j) + j * mu)
    return G


def surviving_count_generator(log_s: np.ndarray, mu: float, top: int) -> np.ndarray:
    """Sub-generator of the down count ``0..top`` of ``N = len(log_s) - 1`` groups, lost at a
    wipe-out: ``f -> f+1`` at ``(N - f) s_{f+1} / s_f``, lost at ``(N - f) (1 - s_{f+1} /
    s_f)``, ``f -> f-1`` at ``f mu``, units ``1/lambda``.

    ``s_f`` (``log_s``) is the chance that ``f`` groups down in uniformly
    random order leave no wipe-out (:meth:`CycleLaw.count_law
    <spare_theory.cycles.base.CycleLaw.count_law>`), so the down set given no
    wipe-out is taken as a uniform set that does not wipe out, after repairs
    as before them.  Beyond ``top`` the chain is lost.

    Examples
    --------
    >>> surviving_count_generator(np.log([1.0, 1.0, 0.5]), 3.0, 2).tolist()  # N = 2
    [[-2.0, 2.0, 0.0], [3.0, -4.0, 0.5], [0.0, 6.0, -6.0]]
    """
    with np.errstate(invalid="ignore"):
        keep = np.exp(np.diff(np.asarray(log_s, dtype=float)[: top + 1]))  # s_{f+1} / s_f
    # The down count of N groups, each failure then kept with chance s_{f+1} / s_f.
    G = down_count_generator(top + 1, mu, groups=len(log_s) - 1)
    f = np.arange(top)
    G[f, f + 1] *= np.nan_to_num(keep, nan=0.0)
    return G


def surviving_count_throughput(
    log_s: np.ndarray, cost: np.ndarray, mu: float, u: np.ndarray
) -> np.ndarray | None:
    """``E[1 / c_F | not lost by u]`` for the chain of :func:`surviving_count_generator`
    from ``F = 0``; ``None`` where its solve would magnify rounding past ``1e-8``.

    Given that a cycle has lasted to ``u`` it has outlived every down set
    before, not only the present one, and a run with many groups down had
    more chances to lose one more: the states with few down weigh more than
    in the binomial law of the down share weighed by ``s_f`` (12 groups,
    ``r = 2`` SPARe, ``mu = 7.4``: a throughput of 0.654 against 0.628;
    ``docs/theory.md`` section 6).  Without repairs the two are the same law.
    The chain stops 12 standard deviations of the down count above its
    stationary mean.  ``G`` is tridiagonal with positive off-diagonal pairs, so
    ``D^-1 G D`` is symmetric for ``d_{f+1} / d_f = sqrt(G[f+1, f] / G[f,
    f+1])``, and the law at ``u`` is ``V_f ∝ sum_k U_0k U_fk e^{lambda_k u} /
    d_f`` (its eigenpairs, :func:`scipy.linalg.eigh_tridiagonal`); ``None``
    (slow repairs beside ``N`` failures) when ``1 / d_f`` exceeds ``e^18``.

    Examples
    --------
    >>> log_s = np.log([1.0, 1.0, 0.5])  # two groups: both down wipes out half the time
    >>> cost = np.array([1.0, 2.0, 2.0])
    >>> out = surviving_count_throughput(log_s, cost, 3.0, np.array([0.0, 9.0]))
    >>> out.round(4).tolist()
    [1.0, 0.8016]
    """
    N = len(log_s) - 1
    share = 1.0 / (1.0 + mu)
    spread = N * share + 12.0 * math.sqrt(N * share * (1.0 - share)) + 20.0
    top = int(min(np.flatnonzero(np.isfinite(log_s))[-1], math.ceil(spread), N))
    G = surviving_count_generator(log_s, mu, top)
    up, down = np.diag(G, 1), np.diag(G, -1)
    linked = int(np.argmax(up <= 0.0)) if (up <= 0.0).any() else top  # the states reached
    up, down = up[:linked], down[:linked]
    log_d = np.concatenate([[0.0], np.cumsum(0.5 * (np.log(down) - np.log(up)))])
    if -log_d.min() > _MAX_LOG_GAIN:
        return None
    values, vectors = eigh_tridiagonal(np.diag(G)[: linked + 1], np.sqrt(up * down))
    decay = np.exp(np.outer(u, values - values.max()))
    laws = np.maximum((decay * vectors[0]) @ vectors.T, 0.0) * np.exp(log_d.min() - log_d)
    return laws @ (1.0 / np.asarray(cost[: linked + 1], dtype=float)) / laws.sum(axis=1)


def down_count_mean_passage(n: int, k: int, mu: float) -> float:
    """Mean time (units ``1/lambda``) until ``k`` of ``n`` groups are down at once, from all up.

    ``t_j = (1 + j mu t_{j-1}) / (n - j)`` summed over ``j < k``
    (:func:`set_mean_absorption` is ``n = k``).

    Examples
    --------
    >>> round(down_count_mean_passage(10, 2, 0.0), 4), round(set_mean_absorption(3, 1.0), 6)
    (0.2111, 3.333333)
    """
    total, step = 0.0, 0.0
    for j in range(k):
        step = (1.0 + j * mu * step) / (n - j)
        total += step
    return total


def chain_log_survival(
    G: np.ndarray, h: float, steps: int, mean: float, start: np.ndarray | None = None
) -> np.ndarray:
    """``log P(not lost by j h | not lost at 0)``, ``j = 0..steps``, for sub-generator ``G``.

    The chain starts in state 0, or in the law ``start`` over its states
    (normalised here).  The state is renormalised after every step and the logs of the kept mass
    are summed, so the log-survival keeps its accuracy however far the chain
    has been lost.  The matrix exponential resolves a step's loss ``~ h /
    mean`` only to about ``1e-16 ||G|| h`` absolute: when that is more than
    ``1e-6`` of it (``1e-16 ||G|| mean > 1e-6``, very fast repairs) the chain
    has relaxed to its quasi-stationary law within ``1 / ||G|| <<  mean``
    and the survival is ``exp(-u / mean)`` to within ``1 / (||G|| mean) <
    1e-10`` (``mean``: the mean time to loss from the start).

    Examples
    --------
    >>> G = down_count_generator(2, 0.0)  # two groups, no repairs: lost when both fail
    >>> out = chain_log_survival(G, 0.5, 2, 1.5)
    >>> bool(np.allclose(np.exp(out), 1 - (1 - np.exp(-np.array([0, 0.5, 1.0]))) ** 2))
    True
    """
    j = np.arange(steps + 1)
    if fast_mixing(G, mean):
        return -j * h / mean
    return np.array(_states(G, h, steps, start)[0])


def fast_mixing(G: np.ndarray, mean: float) -> bool:
    """Whether the matrix exponential cannot resolve the loss: ``1e-16 ||G|| mean > 1e-6``.

    The chain then relaxes to its quasi-stationary law within ``1 / ||G||``,
    far below the mean time to loss ``mean`` (:func:`chain_log_survival`).

    Examples
    --------
    >>> fast_mixing(down_count_generator(2, 1.0), 3.0)
    False
    >>> fast_mixing(down_count_generator(2, 1e12), 1e12)
    True
    """
    return bool(np.finfo(float).eps * np.abs(G).sum(axis=1).max() * mean > 1e-6)


@cached(maxsize=4)
def _states(
    G: np.ndarray, h: float, steps: int, start: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(log S, V)`` of :func:`chain_states` (read-only, shared).

    The state is carried one step at a time (``V_i = V_{i-1} expm(G h)``,
    renormalised) and the logs of the kept mass summed; rows after the chain
    is lost stay 0.  Cached: an elastic cycle asks for its chain's survival,
    then for its states on the same grid (a matrix exponential and ``steps``
    products each time).
    """
    P = np.maximum(expm(G * h), 0.0)
    log_s = np.full(steps + 1, -np.inf)
    log_s[0] = 0.0
    V = np.zeros((steps + 1, G.shape[0]))
    if start is None:
        V[0, 0] = 1.0
    else:
        V[0] = np.asarray(start, dtype=float) / float(np.sum(start))
    total = 0.0
    for i in range(1, steps + 1):
        # Straight into the table, no temporaries: this loop runs millions of times.
        row = np.matmul(V[i - 1], P, out=V[i])
        mass = float(np.add.reduce(row))
        if mass <= 0.0:
            row[:] = 0.0
            break
        total += math.log(mass)
        row /= mass
        log_s[i] = total
    log_s.setflags(write=False)
    V.setflags(write=False)
    return log_s, V


def chain_states(
    G: np.ndarray, h: float, steps: int, lag: float = 0.0, start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The survival, the states and the lagged masses of sub-generator ``G`` from state 0.

    Or from the law ``start`` over its states (normalised here; the survival
    is then relative to its mass).  Returns ``(log S, V, L)`` on the grid
    ``j h``, ``j = 0..steps``: ``log S_j = log P(not lost by j h)`` (as :func:`chain_log_survival`
    without its fast-mixing shortcut), ``V_j`` the state law given not lost,
    and ``L_j`` the mass not lost by ``j h - lag`` in each state there,
    divided by ``S_j`` (so ``L_j @ x`` over ``S``'s ratio; rows before
    ``lag`` are 0).  ``L_j = V_{j-m} expm(G (m h - lag)) S_{j-m} / S_j`` with
    ``m = ceil(lag / h)``.  Steps after the chain is lost have ``-inf`` and
    zero rows.  Only where the matrix exponential resolves a step
    (not :func:`fast_mixing`).

    Examples
    --------
    >>> G = down_count_generator(2, 0.0)  # two groups lost when both fail
    >>> log_s, V, L = chain_states(G, 0.5, 2, lag=0.25)
    >>> bool(np.allclose(np.exp(log_s), 1 - (1 - np.exp(-np.array([0, 0.5, 1.0]))) ** 2))
    True
    >>> def S(u):
    ...     return 1 - (1 - np.exp(-u)) ** 2
    >>> V[0].tolist(), bool(np.isclose(L[2].sum(), S(0.75) / S(1.0)))
    ([1.0, 0.0], True)
    """
    k = G.shape[0]
    log_s, V = (np.array(table) for table in _states(G, h, steps, start))
    L = np.zeros((steps + 1, k))
    m = math.ceil(lag / h) if lag > 0 else 0
    if m <= steps:
        back = V[: steps + 1 - m] @ np.maximum(expm(G * (m * h - lag)), 0.0)
        with np.errstate(invalid="ignore"):
            ratio = np.exp(log_s[: steps + 1 - m] - log_s[m:])
        L[m:] = back * np.nan_to_num(ratio, nan=0.0, posinf=0.0)[:, None]
    return log_s, V, L
