"""Wipe-out and the endurable failure count ``mu(N, r)``.

Failures hit the ``N`` groups in a uniformly random order; ``T`` counts the
failures up to and including the first one after which some shard type has
lost all ``r`` hosts (a *wipe-out*), and ``mu(N, r) = E[T]``
(``docs/theory.md`` section 2).  ``E[T] = sum_{f >= 0} P(T > f)`` where
``P(T > f)`` is the probability that a uniformly random set of ``f`` failed
groups contains no full row of ``hosts``.

The law of ``T`` on the cyclic modular-ruler placement is one frozen object,
:func:`wipeout_law` ``(N, r)`` (a :class:`WipeoutLaw`), in the style of a
frozen ``scipy.stats`` distribution: ``sf``, ``logsf``, ``cdf``, ``pmf``,
``mean``, ``var``, ``ppf``, ``support`` and ``rvs``.
:func:`wipeout_survival` and :func:`endurable_failures` are ``sf`` and
``mean`` broadcast over ``N`` and ``r`` too.  The law is the sharp form: the
factorial-cumulant expansion of ``log P(T > f)`` to second order with exact
hypergeometric moments and the pair overlaps the ruler allows (exact for
``r <= 2``), whose kernels live in :mod:`spare_theory.wipeout.expansion`
with the first-order (published) form :func:`endurable_failures_gamma`.
Exact enumeration for any placement with ``N <= 24`` is
:mod:`spare_theory.wipeout.enumeration`.

The module is a little over 500 lines because of its docstrings: every
method of the law states its formula and runs an example.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._validation import as_count, as_count_array, as_real, as_real_array, as_seed_sequence
from ..placement.placements import cyclic_placement
from .expansion import LOG_TAIL, check_ruler_size, log_survival, survival_sum, tail_end
from .simulation import simulate_wipeout

__all__ = ["WipeoutLaw", "endurable_failures", "wipeout_law", "wipeout_survival"]


def _scalar_or_array(out: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
    arr = np.asarray(out, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


def _as_size(size: int | tuple[int, ...]) -> tuple[int, ...]:
    """``size`` of :meth:`WipeoutLaw.rvs` as a shape of positive integers."""
    if isinstance(size, tuple) and size:
        return tuple(as_count(s, "size") for s in size)
    if isinstance(size, tuple):
        raise ValueError("size must be a positive integer or a non-empty tuple of them, got ()")
    return (as_count(size, "size"),)


@dataclass(frozen=True)
class WipeoutLaw:
    """Law of the wipe-out count ``T`` on the cyclic modular-ruler placement (frozen).

    ``T`` is the number of group failures, in uniformly random order, up to
    and including the first one that leaves some shard type with none of its
    ``r`` hosts.  The law is the sharp form of ``docs/theory.md`` section 2:
    with ``p_k(f) = (f)_k / (N)_k`` (falling factorials: the probability that
    ``k`` given groups are all among ``f`` failed ones),

    ``log P(T > f) ~ -S1 + S2 - S1^2 / 2``,
    ``S1 = N p_r(f)``,
    ``S2 = n1 p_{2r-1}(f) + n0 p_{2r}(f)``,

    where ``n1 = N r(r-1)/2`` pairs of types share one host and
    ``n0 = C(N, 2) - n1`` share none (a modular ruler allows no more): the
    first two factorial cumulants of the number of wiped types.  Past the
    point where this truncation stops decreasing in ``f`` (only in the far
    tail) it continues as ``exp(-S1)``.  Exact for ``r = 1`` (``T = 1``) and
    ``r = 2`` (types are the edges of the cycle ``C_N``; ``f`` failures wipe
    nothing iff they form an independent set, of which there are
    ``N/(N-f) C(N-f, f)``).  For ``r >= 3`` it is an approximation (errors
    of ``mu`` below 1 % against simulation on ``tables/mu_error``).

    Methods follow a frozen ``scipy.stats`` discrete distribution and
    broadcast over their argument: a scalar gives a Python scalar, an array
    an array of its shape.  The first-order (Weibull) form has no object: its
    mean is :func:`endurable_failures_gamma`.

    Parameters
    ----------
    N : int
        Number of data-parallel groups, ``N >= r(r-1) + 1`` (a modular ruler
        must exist).
    r : int
        Redundancy, ``1 <= r <= N``.

    Examples
    --------
    >>> from spare_theory import wipeout_law
    >>> law = wipeout_law(1000, 3)
    >>> law
    WipeoutLaw(N=1000, r=3)
    >>> print(round(law.mean(), 3), round(law.std(), 3))
    90.261 32.022
    >>> law.sf([2, 50, 100]).round(4).tolist(), law.support()
    ([1.0, 0.8884, 0.3728], (3, 1000))
    >>> law.ppf(0.5), law.rvs(4, seed=0).tolist()
    (90, [89, 130, 102, 88])
    """

    N: int
    r: int

    def __post_init__(self) -> None:
        N = as_count(self.N, "N")
        r = as_count(self.r, "r")
        check_ruler_size(np.array([N]), np.array([r]))
        object.__setattr__(self, "N", N)
        object.__setattr__(self, "r", r)

    def support(self) -> tuple[int, int]:
        """Smallest and largest value of ``T`` with positive probability.

        ``(1, 1)`` for ``r = 1``; ``(2, floor(N/2) + 1)`` for ``r = 2`` (the
        largest independent set of ``C_N`` has ``floor(N/2)`` groups);
        ``(r, N)`` for ``r >= 3`` (the approximation's support).

        Returns
        -------
        tuple of int
            ``(a, b)``; ``sf(f) = 1`` for ``f < a`` and ``0`` for ``f >= b``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(100, 2).support(), wipeout_law(100, 5).support()
        ((2, 51), (5, 100))
        """
        if self.r == 1:
            return (1, 1)
        if self.r == 2:
            return (2, self.N // 2 + 1)
        return (self.r, self.N)

    def _logsf(self, f: np.ndarray) -> np.ndarray:
        """``log P(T > f)`` for an ``int64`` array of any integers (not validated)."""
        # P(T > f) = 1 for f < 0 and 0 for f >= N, as at f = 0 and f = N.
        return log_survival(np.clip(f, 0, self.N).astype(np.float64), self.N, self.r)

    def logsf(self, f: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
        """``log P(T > f)``: natural log of the survival function (see the class formula).

        Accurate where ``P(T > f)`` underflows (down to ``-inf`` at
        ``f >= N``); vectorised over ``f`` with one pass of ``O(r)`` array
        operations, for tables of millions of ``f``.

        Parameters
        ----------
        f : int or array_like of int
            Failed groups; any integers (``0`` for ``f < r``, ``-inf`` for
            ``f >= N``).

        Returns
        -------
        float or numpy.ndarray
            ``<= 0``, the shape of ``f``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(10**6, 3).logsf([2, 10**4, 10**5]).round(3).tolist()
        [0.0, -1.0, -1013.973]
        """
        return _scalar_or_array(self._logsf(as_count_array(f, "f", minimum=None)))

    def logsf_smooth(self, x: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
        """The smooth continuation of :meth:`logsf` to real ``x``.

        The falling factorials ``(x)_k`` are taken as products of real
        factors (``r = 2``: ``lgamma``), so the sharp form is smooth in ``x``
        between the integers, where it equals :meth:`logsf`; ``0`` for
        ``x <= 0`` and ``-inf`` for ``x >= N``, as there.  Sums over long
        supports use it for quadrature with Euler-Maclaurin end terms (whose
        difference quotients may step outside ``[0, N]``).  Not the
        ``floor`` that ``scipy.stats`` applies to a discrete law.

        Parameters
        ----------
        x : float or array_like of float
            Finite reals.

        Returns
        -------
        float or numpy.ndarray
            ``<= 0``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> law = wipeout_law(10**6, 3)
        >>> print(round(law.logsf_smooth(10**4 + 0.5), 6))
        -1.000002
        >>> law.logsf_smooth(10**4) == law.logsf(10**4)
        True
        """
        x_arr = np.clip(as_real_array(x, "x"), 0.0, float(self.N))
        return _scalar_or_array(log_survival(x_arr, self.N, self.r))

    def sf(self, f: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
        """``P(T > f)``, the survival function: no type wiped out after ``f`` failures.

        ``exp(logsf(f))``; ``1`` for ``f < r``, ``0`` for ``f >= N``.

        Parameters
        ----------
        f : int or array_like of int
            Failed groups (any integers).

        Returns
        -------
        float or numpy.ndarray
            Probability in ``[0, 1]``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(7, 2).sf([1, 2, 3, 4]).round(4).tolist()  # independent sets of C_7
        [1.0, 0.6667, 0.2, 0.0]
        """
        return _scalar_or_array(np.exp(self._logsf(as_count_array(f, "f", minimum=None))))

    def cdf(self, f: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
        """``P(T <= f) = 1 - P(T > f)``, as ``-expm1(logsf(f))`` (exact digits near 0).

        Parameters
        ----------
        f : int or array_like of int
            Failed groups (any integers).

        Returns
        -------
        float or numpy.ndarray
            Probability in ``[0, 1]``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(1000, 3).cdf([2, 3, 89]).round(6).tolist()
        [0.0, 6e-06, 0.498926]
        """
        # 0.0 - expm1: P(T <= f) = +0.0, not -0.0, where logsf = 0.
        return _scalar_or_array(0.0 - np.expm1(self._logsf(as_count_array(f, "f", minimum=None))))

    def pmf(self, f: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
        """``P(T = f) = P(T > f - 1) - P(T > f)``.

        Taken as ``P(T > f-1) * (-expm1(logsf(f) - logsf(f-1)))``, without
        the cancellation of the plain difference where both are near 1.

        Parameters
        ----------
        f : int or array_like of int
            Failed groups (any integers).

        Returns
        -------
        float or numpy.ndarray
            Probability in ``[0, 1]``; ``0`` outside :meth:`support`.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(7, 2).pmf([2, 3, 4, 5]).round(4).tolist()
        [0.3333, 0.4667, 0.2, 0.0]
        """
        f_arr = as_count_array(f, "f", minimum=None)
        before, after = self._logsf(f_arr - 1), self._logsf(f_arr)
        with np.errstate(invalid="ignore"):
            out = np.exp(before) * -np.expm1(after - before)
        return _scalar_or_array(np.where(np.isneginf(before), 0.0, out))

    def mean(self) -> float:
        """``mu(N, r) = E[T] = sum_{f >= 0} P(T > f)`` (failures).

        Summed term by term when the support is at most 1e5 failures long and
        otherwise by quadrature of :meth:`logsf_smooth` with Euler-Maclaurin
        end terms; accurate to ``N = 1e12``.  Terms beyond ``log P < -60``
        are dropped.  Cached per ``(N, r)``.

        Returns
        -------
        float
            Expected failures up to and including the wipe-out.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> print(round(wipeout_law(1000, 3).mean(), 4), round(wipeout_law(7, 2).mean(), 4))
        90.2612 2.8667
        """
        return survival_sum(self.N, self.r, 1)

    def var(self) -> float:
        """``Var T = E[T^2] - E[T]^2`` with ``E[T^2] = sum_{f >= 0} (2f + 1) P(T > f)``.

        The second moment is summed like :meth:`mean`; the difference loses
        about ``log10(mu^2 / Var T) ~ 2 log10(r)`` digits, so it is good to
        ~1e-10 relative (clipped at 0 against rounding).  Units: failures
        squared.

        Returns
        -------
        float
            ``>= 0``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> print(round(wipeout_law(1000, 3).var(), 3))
        1025.408
        """
        mean = survival_sum(self.N, self.r, 1)
        return max(survival_sum(self.N, self.r, 2) - mean * mean, 0.0)

    def std(self) -> float:
        """``sqrt(var())`` (failures).

        Returns
        -------
        float

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> print(round(wipeout_law(1000, 3).std(), 4))
        32.022
        """
        return math.sqrt(self.var())

    def ppf(self, q: npt.ArrayLike) -> int | npt.NDArray[np.int64]:
        """Quantile: the smallest ``f`` with ``cdf(f) >= q``.

        As in ``scipy.stats``, ``ppf(0) = a - 1`` and ``ppf(1) = b`` for the
        support ``(a, b)``.

        A vectorised integer bisection on :meth:`cdf` over the support
        ``(a, b)``, ``~log2(N)`` passes, so ``cdf(ppf(q)) >= q > cdf(ppf(q) - 1)``.

        Parameters
        ----------
        q : float or array_like of float
            Probabilities in ``[0, 1]``.

        Returns
        -------
        int or numpy.ndarray
            Failures (``int64`` array for array input).

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(1000, 3).ppf([0.0, 0.05, 0.5, 0.95, 1.0]).tolist()
        [2, 39, 90, 144, 1000]
        """
        q_arr = as_real_array(q, "q", minimum=0.0, maximum=1.0)
        a, b = self.support()
        lo = np.full(q_arr.shape, a - 1, dtype=np.int64)  # cdf(a - 1) = 0 < q
        hi = np.full(q_arr.shape, b, dtype=np.int64)  # cdf(b) = 1 >= q
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            reached = 0.0 - np.expm1(self._logsf(mid)) >= q_arr
            hi, lo = np.where(reached, mid, hi), np.where(reached, lo, mid)
        out = np.where(q_arr == 0.0, a - 1, np.where(q_arr == 1.0, b, hi))
        return int(out) if out.ndim == 0 else out

    def tail_end(self, log_level: float = LOG_TAIL) -> int:
        """Smallest ``f`` with ``logsf(f) < log_level``: where the sums over the support stop.

        Parameters
        ----------
        log_level : float
            Natural log of the negligible survival, ``<= 0`` (default
            ``-60``: the tail beyond adds less than 1e-20 of ``mu``).

        Returns
        -------
        int
            Failures, in ``[r, N]``.

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(1000, 3).tail_end(), wipeout_law(1000, 3).tail_end(-5.0)
        (374, 170)
        """
        level = as_real(log_level, "log_level", maximum=0.0)
        return tail_end(self.N, self.r, level)

    def rvs(
        self, size: int | tuple[int, ...] = 1, *, seed: int | np.random.SeedSequence
    ) -> npt.NDArray[np.int64]:
        """Monte Carlo samples of ``T`` on the placement ``cyclic_placement(N, r)``.

        Runs :func:`spare_theory.wipeout.simulation.simulate_wipeout` (exact samplers
        of the failure process, not of the approximation) for
        ``prod(size)`` trials and reshapes them; block ``b`` of trials uses
        ``child_seed(seed, b)``, so the samples depend only on ``seed`` and
        the number of trials.  Memory ``O(N r)`` for the placement.

        Parameters
        ----------
        size : int or tuple of int
            Shape of the result, positive entries.
        seed : int or numpy.random.SeedSequence
            Non-negative integer or seed sequence (required: results are
            reproducible).

        Returns
        -------
        numpy.ndarray
            ``int64`` array of shape ``size`` (failures, ``r <= T <= N``).

        Examples
        --------
        >>> from spare_theory import wipeout_law
        >>> wipeout_law(1000, 3).rvs((2, 3), seed=1).tolist()
        [[129, 103, 61], [35, 89, 72]]
        """
        shape = _as_size(size)
        seed = as_seed_sequence(seed)
        hosts = cyclic_placement(self.N, self.r)
        return simulate_wipeout(hosts, math.prod(shape), seed=seed).reshape(shape)


def wipeout_law(N: int, r: int) -> WipeoutLaw:
    """The law of the wipe-out count ``T`` for ``N`` groups and redundancy ``r``.

    Same as ``WipeoutLaw(N, r)``; see :class:`WipeoutLaw` for the formula.

    Parameters
    ----------
    N : int
        Number of groups, ``N >= r(r-1) + 1``.
    r : int
        Redundancy, ``1 <= r <= N``.

    Returns
    -------
    WipeoutLaw
        Frozen; methods ``sf``, ``logsf``, ``cdf``, ``pmf``, ``mean``,
        ``var``, ``std``, ``ppf``, ``support``, ``rvs``.

    Raises
    ------
    ValueError
        Naming ``N`` or ``r`` if they are not integers in range or no modular
        ruler with ``r`` marks exists modulo ``N``.

    Examples
    --------
    >>> from spare_theory import wipeout_law
    >>> law = wipeout_law(4096, 4)
    >>> print(round(law.mean(), 2), round(law.sf(465), 3))
    465.46 0.509
    """
    return WipeoutLaw(N, r)


def wipeout_survival(
    N: npt.ArrayLike, r: npt.ArrayLike, failures: npt.ArrayLike
) -> float | npt.NDArray[np.float64]:
    """``P(T > f)``: no type is wiped out after ``f`` failures (sharp form).

    ``wipeout_law(N, r).sf(f)`` broadcast over ``N`` and ``r`` as well: for
    the cyclic placement on a modular Golomb ruler, with
    ``p_k(f) = (f)_k / (N)_k``,

    ``log P(T > f) ~ -S1 + S2 - S1^2 / 2``,
    ``S1 = N p_r(f)``,
    ``S2 = n1 p_{2r-1}(f) + n0 p_{2r}(f)``,

    ``n1 = N r(r-1)/2``, ``n0 = C(N, 2) - n1`` (see :class:`WipeoutLaw`).
    Exact for ``r = 1`` and ``r = 2``.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= r(r-1) + 1`` (a modular ruler must exist).
    r : int or array_like of int
        Redundancy, ``1 <= r <= N``.
    failures : int or array_like of int
        Failed groups ``f``, ``0 <= f <= N``.  All three broadcast.

    Returns
    -------
    float or numpy.ndarray
        Probability in ``[0, 1]``; ``1`` for ``f < r``, ``0`` for ``f = N``.

    Examples
    --------
    >>> from spare_theory import wipeout_survival
    >>> wipeout_survival([7, 1000], [2, 3], 3).round(4).tolist()
    [0.2, 1.0]
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    f = as_count_array(failures, "failures", minimum=0)
    N, r, f = np.broadcast_arrays(N, r, f)
    if np.any(f > N):
        raise ValueError(
            f"failures must be <= N, got failures={int(f[f > N][0])} > N={int(N[f > N][0])}"
        )
    check_ruler_size(N, r)
    out = np.empty(N.shape, dtype=np.float64)
    pairs = np.stack([N.ravel(), r.ravel()], axis=1)
    flat_out, flat_f = out.reshape(-1), f.ravel()
    for n, k in np.unique(pairs, axis=0):
        sel = (pairs[:, 0] == n) & (pairs[:, 1] == k)
        flat_out[sel] = wipeout_law(int(n), int(k)).sf(flat_f[sel])
    return _scalar_or_array(out)


def endurable_failures(N: npt.ArrayLike, r: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
    """Sharp endurable failure count ``mu(N, r) = sum_{f=0}^{N} P(T > f)``.

    ``wipeout_law(N, r).mean()`` broadcast over ``N`` and ``r``: sums
    :func:`wipeout_survival` (cyclic modular-ruler placement) term by term
    when the support is at most 1e5 failures long and otherwise by
    quadrature of its smooth interpolant with Euler-Maclaurin end terms;
    accurate to ``N = 1e12``.  Terms beyond ``log P < -60`` are dropped.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= r(r-1) + 1``.
    r : int or array_like of int
        Redundancy, ``1 <= r <= N``; broadcasts with ``N``.

    Returns
    -------
    float or numpy.ndarray
        Expected failures up to and including the wipe-out.

    Examples
    --------
    >>> from spare_theory import endurable_failures
    >>> print(round(endurable_failures(1000, 3), 4))
    90.2612
    >>> endurable_failures([128, 10**12], 2).round(1).tolist()
    [10.5, 886227.4]
    """
    N = as_count_array(N, "N", minimum=1)
    r = as_count_array(r, "r", minimum=1)
    N, r = np.broadcast_arrays(N, r)
    check_ruler_size(N, r)
    out = np.array([wipeout_law(int(n), int(k)).mean() for n, k in zip(N.ravel(), r.ravel())])
    return _scalar_or_array(out.reshape(N.shape))
