"""The cycle laws of CKPT-only and Rep+CKPT: disjoint replica sets, exact survival.

Rep with redundancy ``r`` keeps ``r`` replicas of every shard on disjoint
groups (the balanced replica sets of :func:`spare_theory.placement.replica_sets`:
``floor(N/r)`` sets, the left-over groups as extra replicas); the cycle ends
when a whole set is down.  With each group failed by ``u`` with probability
``p(u)``, independently, ``Q = prod_sets (1 - p^{|set|})`` exactly and the
throughput is ``floor(N/r) / N``.  CKPT-only is Rep with one replica: every
failure ends the cycle, ``Q = (1 - p)^N``, throughput 1.  With repairs the
sets stay independent and each set's down count is a birth-death chain
(:mod:`spare_theory.cycles.chains`): exact again.  Derivations in
``docs/theory.md`` sections 4 and 6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

from .._numerics import log1mexp
from .._validation import as_count
from ..lifetimes.laws import EXPONENTIAL, ExponentialLifetimes
from ..placement.replicas import replica_set_sizes
from .base import CycleLaw
from .chains import chain_log_survival, down_count_generator, set_mean_absorption

__all__ = ["CkptOnly", "Rep", "rep_survival_log", "set_size_counts"]


def set_size_counts(N: int, r: int) -> tuple[tuple[int, int], ...]:
    """``((count, size), ...)``: replica sets of each size, smallest size first.

    From the balanced layout of :func:`~spare_theory.placement.replica_sets`.

    Examples
    --------
    >>> set_size_counts(7, 2), set_size_counts(6, 3)
    (((2, 2), (1, 3)), ((2, 3),))
    """
    sizes, counts = np.unique(replica_set_sizes(N, r), return_counts=True)
    return tuple((int(c), int(s)) for s, c in zip(sizes, counts))


def rep_survival_log(N: int, r: int, u: ArrayLike) -> np.ndarray:
    """``log P(no replica set dead at dimensionless time u)`` for Rep with ``r`` replicas.

    With ``s = floor(N/r)`` disjoint sets sharing the ``N`` groups as
    evenly as possible (``N mod s`` of size ``q + 1``, the rest of size
    ``q = floor(N/s)``; ``q = r`` and ``N mod r`` sets of ``r + 1`` unless
    the ``N mod r`` left-over groups outnumber the sets), and each group
    failed by ``u`` with probability ``p = 1 - e^{-u}`` independently:
    ``log Q = (sets_q) log(1 - p^q) + (sets_{q+1}) log(1 - p^{q+1})``.
    ``r = 1`` is CKPT-only: ``-N u``.  Broadcasts over ``u >= 0``.

    Examples
    --------
    >>> print(np.round(rep_survival_log(7, 2, [0.0, 0.5]), 6))
    [ 0.       -0.399257]
    """
    N = as_count(N, "N")
    r = as_count(r, "r", maximum=N)
    return Rep.survival_log(set_size_counts(N, r), u)


class Rep(CycleLaw):
    """Rep+CKPT: ``r`` replicas of every shard on disjoint groups; exact survival.

    ``Q = prod_sets (1 - p^{|set|})`` (see :func:`rep_survival_log`) and the
    constant throughput ``floor(N/r) / N``.

    Examples
    --------
    >>> law = Rep(1000, 3)
    >>> law.throughput, round(float(law.logq(0.01)), 6)
    (0.333, -0.000327)
    """

    name = "rep"

    def __init__(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> None:
        super().__init__(N, r, lifetimes)
        self.throughput = (N // r) / N
        #: ``((count, size), ...)``: how many replica sets have each size.
        self.set_counts = set_size_counts(N, r)

    @staticmethod
    def survival_log(
        set_counts: tuple[tuple[int, int], ...], u: ArrayLike, lifetimes: Any = EXPONENTIAL
    ) -> np.ndarray:
        """:func:`rep_survival_log` for sets of the given sizes, without checks (the inner loop)."""
        log_p = lifetimes.logcdf(u)
        out = np.zeros(np.shape(log_p))
        with np.errstate(divide="ignore"):
            for count, size in set_counts:
                out = out + count * log1mexp(size * log_p)
        return out

    def logq(self, u: ArrayLike) -> np.ndarray:
        return self.survival_log(self.set_counts, u, self.lifetimes)

    def theta(self, u: ArrayLike) -> np.ndarray:
        return np.full(np.shape(u), self.throughput)

    def repair_wipeout_rate(self, mu: float) -> float:
        """``floor(N/r) / E[time to a set of r all down]`` (:func:`set_mean_absorption`)."""
        return (self.N // self.r) / set_mean_absorption(self.r, mu)

    def repair_log_q(self, u: np.ndarray, mu: float) -> np.ndarray:
        """Exact: the replica sets are disjoint, ``log Q = sum_sets log S_{|set|}(u)``.

        ``S_k`` is the survival of a set's down-count chain absorbed at ``k``
        (:func:`~spare_theory.cycles.chains.chain_log_survival`).
        """
        h, steps = float(u[1] - u[0]), u.size - 1
        out = np.zeros(u.size)
        for count, size in self.set_counts:
            mean = set_mean_absorption(size, mu)
            out = out + count * chain_log_survival(down_count_generator(size, mu), h, steps, mean)
        return out

    def throughput_at_down_share(self, p: np.ndarray) -> np.ndarray:
        """``floor(N/r) / N`` whatever is down (one replica of each shard computes)."""
        return np.full(np.shape(p), float(self.throughput))

    def count_law(self) -> tuple[np.ndarray, np.ndarray]:
        """``s_f``: no replica set complete among ``f`` random groups; ``c_f = N / floor(N/r)``.

        The number of ways to pick ``f`` groups with no set complete is the
        coefficient of ``x^f`` in ``prod_sets ((1 + x)^s - x^s)``; divided by
        ``C(N, f)``.  Built in logs, one set at a time.
        """
        N = self.N
        log_ways = np.full(N + 1, -np.inf)
        log_ways[0] = 0.0
        for s in replica_set_sizes(N, self.r):
            j = np.arange(s)  # a set contributes j < s of its members
            log_c = gammaln(s + 1) - gammaln(j + 1) - gammaln(s - j + 1)
            shifted = np.full((s, N + 1), -np.inf)
            for i in range(s):
                shifted[i, i:] = log_ways[: N + 1 - i] + log_c[i]
            log_ways = logsumexp(shifted, axis=0)
        f = np.arange(N + 1)
        log_binom = gammaln(N + 1) - gammaln(f + 1) - gammaln(N - f + 1)
        return np.minimum(log_ways - log_binom, 0.0), np.full(N + 1, N / (N // self.r))


class CkptOnly(Rep):
    """CKPT-only: every failure is a wipe-out; ``Q = (1 - p)^N``, throughput 1.

    Rep with one replica (``r = 1``), with the exact inverse of
    ``log Q = -N u`` for exponential lifetimes.

    Examples
    --------
    >>> law = CkptOnly(100)
    >>> law.throughput, law.u_at(-1.0)
    (1.0, 0.01)
    """

    name = "ckpt"

    def __init__(self, N: int, r: int = 1, lifetimes: Any = EXPONENTIAL) -> None:
        if r != 1:
            raise ValueError(f"r must be 1 for strategy 'ckpt', got {r}")
        super().__init__(N, 1, lifetimes)

    def u_at(self, level: float) -> float:
        if isinstance(self.lifetimes, ExponentialLifetimes):
            return -level / self.N
        return super().u_at(level)

    def repair_log_q(self, u: np.ndarray, mu: float) -> np.ndarray:
        """``-N u``: any failure ends the cycle, repairs change nothing."""
        return -self.N * u

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        """``1 / N`` with or without repairs (exponential lifetimes)."""
        return 1.0 / self.N if isinstance(self.lifetimes, ExponentialLifetimes) else None

    @property
    def constant_hazard(self) -> float | None:  # type: ignore[override]
        """``N`` under exponential lifetimes (``log Q = -N u``)."""
        return float(self.N) if isinstance(self.lifetimes, ExponentialLifetimes) else None
