"""Lifetime laws of one data-parallel group, in seconds.

A group's lifetime law is a frozen continuous :mod:`scipy.stats` distribution
with positive support, in seconds: ``d.mean()``, ``d.sf(t)``,
``d.rvs(size, random_state=rng)`` are all a simulation or a model needs.
After a failure the group's next lifetime is drawn afresh (a renewal process
per group), so the long-run failure rate of ``N`` groups is ``N / d.mean()``
whatever the law.

The SPARe paper's scenario (and the authors' public simulator,
tsinghua-fib-lab/AutoSOTA, ``ICML-2026/paper-3612-SPARe/best_code``) gives
each of ``N`` groups a mean lifetime of ``300 N`` seconds, so the cluster of
``N`` groups fails every 300 s on average for any ``N``; the lifetimes are
exponential, or Weibull with shape ``0.78`` and the same mean (infant
mortality: a decreasing hazard).

A little over 500 lines: the minimum, renewal-function, equilibrium and
superposed laws each carry their derivation in their docstrings, and the
clocks of both simulations and both models draw on all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, stats
from scipy.optimize import elementwise

from .._numerics import log1mexp
from .._validation import as_count, as_real

__all__ = [
    "DEFAULT_WEIBULL_SHAPE",
    "EXPONENTIAL",
    "LIFETIME_LAWS",
    "EquilibriumLifetimes",
    "ExponentialLifetimes",
    "LogsfLaw",
    "SuperposedLifetimes",
    "equilibrium_law",
    "group_weibull_from_gpu",
    "lifetime_law",
    "memoryless",
    "minimum_law",
    "renewal_function",
    "renewal_function_grid",
    "validate_lifetime_law",
]

#: Named laws accepted by :func:`lifetime_law`.
LIFETIME_LAWS = ("exponential", "weibull")

#: Weibull shape of the SPARe paper's Weibull scenario.
DEFAULT_WEIBULL_SHAPE = 0.78


class LogsfLaw:
    """A lifetime law in dimensionless time given by its ``logsf``: ``cdf``, ``logcdf``, ``ppf``.

    The cycle laws' composed group laws (lemons, domain events, clocks seen
    from a failure, superposed node clocks) are each a formula for
    ``log(1 - p(u))``; a subclass defines ``logsf`` and inherits the rest
    (and may replace :meth:`ppf` by a bracketed bisection of its own).

    Examples
    --------
    >>> class Twice(LogsfLaw):
    ...     def logsf(self, u):
    ...         return -2.0 * np.asarray(u, dtype=float)
    >>> law = Twice()
    >>> round(float(law.cdf(0.5)), 6), round(float(law.ppf(law.cdf(0.3))), 9)
    (0.632121, 0.3)
    """

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u))``."""
        raise NotImplementedError

    @staticmethod
    def log_complement(p: ArrayLike) -> np.ndarray:
        """``log(1 - p)``: a ppf's target, ``-inf`` at ``p = 1`` without a warning."""
        with np.errstate(divide="ignore"):
            return np.log1p(-np.asarray(p, dtype=float))

    def cdf(self, u: ArrayLike) -> np.ndarray:
        """``p(u)``."""
        return -np.expm1(self.logsf(u))

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        """``log p(u)``, ``-inf`` at ``u = 0``."""
        with np.errstate(divide="ignore"):
            return np.log(self.cdf(u))

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` with ``p(u) = p``: a bracket doubled until it holds it, then its root."""
        target = self.log_complement(p)
        lo = np.zeros(target.shape)
        hi = np.full(target.shape, 1.0)
        for _ in range(200):  # double hi until it brackets (bounded: logsf reaches -inf)
            short = self.logsf(hi) > target
            if not short.any():
                break
            hi = np.where(short, 2 * hi, hi)
        return self._bisect(target, lo, hi)

    def _bisect(self, target: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The ``u`` in ``[lo, hi]`` with ``logsf(u) = target``, elementwise.

        :func:`scipy.optimize.elementwise.find_root` (Chandrupatla's bracketed
        method, vectorised over the brackets); ``inf`` where ``target = -inf``
        (``p = 1``: no finite ``u``), as scipy's ``ppf(1)``, and ``0`` where
        ``target = 0`` (``p = 0``: the bracket is ``[0, 0]``, where a ``logsf(0)``
        rounded off zero shows no sign change and the search returned NaN).
        """
        target = np.broadcast_to(np.asarray(target, dtype=float), np.shape(lo))
        end = np.isneginf(target)
        with np.errstate(invalid="ignore"):  # the p = 0 and p = 1 brackets, replaced below
            found = elementwise.find_root(lambda u, t: self.logsf(u) - t, (lo, hi), args=(target,))
        x = np.where(target == 0.0, 0.0, np.asarray(found.x, dtype=float))
        return np.where(end, np.inf, x)


@dataclass(frozen=True)
class ExponentialLifetimes:
    """Exponential group lifetimes in dimensionless time ``u = lambda t`` (mean 1).

    ``p(u) = 1 - e^{-u}``: the probability that a group has failed by ``u``.
    Another lifetime law is another class with these four methods (mean
    lifetime 1, so that ``u`` keeps its meaning).

    Examples
    --------
    >>> law = ExponentialLifetimes()
    >>> round(float(law.cdf(1.0)), 6), round(float(law.ppf(law.cdf(0.25))), 12)
    (0.632121, 0.25)
    """

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        """``log p(u)``, ``-inf`` at ``u = 0``."""
        with np.errstate(divide="ignore"):
            return log1mexp(-np.asarray(u, dtype=float))

    def cdf(self, u: ArrayLike) -> np.ndarray:
        """``p(u) = 1 - e^{-u}``."""
        return -np.expm1(-np.asarray(u, dtype=float))

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` at which ``p(u) = p``: ``-log(1 - p)``."""
        return -np.log1p(-np.asarray(p, dtype=float))

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u)) = -u``."""
        return -np.asarray(u, dtype=float)


#: The lifetime law of an hour-level ``Scenario`` with ``failure_law="exponential"``.
EXPONENTIAL = ExponentialLifetimes()


def memoryless(law: Any) -> bool:
    """Whether ``law`` (a frozen scipy distribution) is the exponential: its clocks have no age.

    Examples
    --------
    >>> from scipy import stats
    >>> memoryless(stats.expon(scale=3.0)), memoryless(stats.weibull_min(0.7))
    (True, False)
    """
    return getattr(getattr(law, "dist", None), "name", None) == "expon"


def validate_lifetime_law(law: Any, name: str = "law") -> Any:
    """Check that ``law`` is a usable lifetime law and return it unchanged.

    A usable law is a frozen continuous ``scipy.stats`` distribution (its
    ``dist`` is an ``rv_continuous``) whose support starts at ``>= 0`` and
    whose mean is finite and positive.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        The candidate law, lifetimes in seconds.
    name : str
        Argument name quoted in the error message.

    Returns
    -------
    frozen scipy.stats distribution
        ``law`` itself.

    Raises
    ------
    ValueError
        Naming ``name``: not a frozen continuous distribution, support
        reaching below 0, or a mean that is not finite and positive.

    Examples
    --------
    >>> from scipy import stats
    >>> d = validate_lifetime_law(stats.gamma(2.0, scale=30.0))
    >>> round(float(d.mean()), 1)
    60.0
    >>> validate_lifetime_law(stats.norm(5.0, 1.0))
    Traceback (most recent call last):
    ...
    ValueError: law must have support in [0, inf), got lower bound -inf
    """
    dist = getattr(law, "dist", None)
    if not isinstance(dist, stats.rv_continuous) or not callable(getattr(law, "rvs", None)):
        raise ValueError(
            f"{name} must be 'exponential', 'weibull' or a frozen continuous "
            f"scipy.stats distribution, got {law!r}"
        )
    lower = float(law.support()[0])
    if not lower >= 0.0:
        raise ValueError(f"{name} must have support in [0, inf), got lower bound {lower}")
    mean = float(law.mean())
    if not (math.isfinite(mean) and mean > 0.0):
        raise ValueError(f"{name} must have a finite positive mean, got {mean}")
    return law


def lifetime_law(
    law: Any,
    *,
    mean_seconds: float | None = None,
    shape: float | None = None,
) -> Any:
    """The lifetime law of one group, a frozen ``scipy.stats`` distribution in seconds.

    - ``"exponential"``: ``expon(scale=mean_seconds)``, hazard ``1 / mean``.
    - ``"weibull"``: ``weibull_min(k, scale=mean_seconds / Gamma(1 + 1/k))``
      with shape ``k`` (default ``0.78``), so its mean is ``mean_seconds``.
    - a frozen continuous ``scipy.stats`` distribution with support in
      ``[0, inf)`` and finite positive mean: returned as is (``mean_seconds``,
      if given, must equal its mean to 1e-9 relative; ``shape`` must be None).

    Parameters
    ----------
    law : str or frozen scipy.stats distribution
        ``"exponential"``, ``"weibull"`` or a frozen distribution.
    mean_seconds : float, optional
        Mean lifetime, seconds, ``> 0``; required for the named laws.
    shape : float, optional
        Weibull shape ``k > 0`` (only for ``"weibull"``; default 0.78).

    Returns
    -------
    frozen scipy.stats distribution
        Lifetimes in seconds.

    Raises
    ------
    ValueError
        Naming ``law``, ``mean_seconds`` or ``shape``.

    Examples
    --------
    The paper's Weibull law at ``N = 200`` (mean ``300 N = 60,000`` s):

    >>> d = lifetime_law("weibull", mean_seconds=300 * 200)
    >>> round(float(d.kwds["scale"])), round(float(d.mean()))
    (51979, 60000)
    >>> round(float(lifetime_law("exponential", mean_seconds=60.0).sf(60.0)), 4)
    0.3679
    """
    if isinstance(law, str):
        if law not in LIFETIME_LAWS:
            raise ValueError(f"law must be one of {list(LIFETIME_LAWS)}, got {law!r}")
        if mean_seconds is None:
            raise ValueError(f"mean_seconds is required for law {law!r}")
        mean = as_real(mean_seconds, "mean_seconds", minimum=0.0, strict_minimum=True)
        if law == "exponential":
            if shape is not None:
                raise ValueError("shape must be None for law 'exponential'")
            return stats.expon(scale=mean)
        k = DEFAULT_WEIBULL_SHAPE if shape is None else shape
        k = as_real(k, "shape", minimum=0.0, strict_minimum=True)
        scale = mean / math.gamma(1.0 + 1.0 / k)
        if not (math.isfinite(scale) and scale > 0.0):
            raise ValueError(f"shape={k} gives no finite Weibull scale for mean {mean}")
        return stats.weibull_min(k, scale=scale)
    validate_lifetime_law(law, "law")
    if shape is not None:
        raise ValueError("shape must be None when law is a frozen distribution")
    if mean_seconds is not None:
        mean = as_real(mean_seconds, "mean_seconds", minimum=0.0, strict_minimum=True)
        if not math.isclose(float(law.mean()), mean, rel_tol=1e-9):
            raise ValueError(
                f"mean_seconds={mean} differs from the mean {float(law.mean())} of law"
            )
    return law


def group_weibull_from_gpu(shape: float, gpu_scale_seconds: float, gpus_per_group: int) -> Any:
    """Lifetime law of a group of ``n`` GPUs with iid Weibull(``k``, ``s``) lifetimes.

    The group fails at its first GPU failure.  The minimum of ``n`` iid
    Weibull(``k``, ``s``) lifetimes is Weibull(``k``, ``s n^(-1/k)``), because
    ``P(min > t) = exp(-(t/s)^k)^n = exp(-(t / (s n^(-1/k)))^k)``.

    Parameters
    ----------
    shape : float
        Weibull shape ``k > 0``.
    gpu_scale_seconds : float
        Weibull scale ``s`` of one GPU's lifetime, seconds, ``> 0``.
    gpus_per_group : int
        GPUs per group, ``n >= 1``.

    Returns
    -------
    frozen scipy.stats distribution
        ``weibull_min(k, scale=s * n**(-1/k))``, seconds.

    Examples
    --------
    >>> d = group_weibull_from_gpu(0.78, 1.0e9, 3000)
    >>> round(float(d.kwds["scale"]) / 1.0e9 * 3000 ** (1 / 0.78), 6)
    1.0
    """
    k = as_real(shape, "shape", minimum=0.0, strict_minimum=True)
    s = as_real(gpu_scale_seconds, "gpu_scale_seconds", minimum=0.0, strict_minimum=True)
    n = as_count(gpus_per_group, "gpus_per_group")
    scale = float(s * np.exp(-np.log(n) / k))
    if not (math.isfinite(scale) and scale > 0.0):
        raise ValueError(f"shape={k} and gpus_per_group={n} give no positive finite scale")
    return stats.weibull_min(k, scale=scale)


class _Minimum(stats.rv_continuous):
    """The minimum of ``n`` iid lifetimes of ``base``: ``sf = sf_base^n`` (:func:`minimum_law`)."""

    def __init__(self, base: Any = None, n: int = 1, **kwargs: Any) -> None:
        kwargs.setdefault("a", float(base.support()[0]))
        kwargs.setdefault("name", "minimum")
        super().__init__(**kwargs)
        self.base, self.n = base, n

    def _updated_ctor_param(self) -> dict[str, Any]:
        # Freezing rebuilds the instance from these parameters: keep base and n.
        return {**super()._updated_ctor_param(), "base": self.base, "n": self.n}

    def _logsf(self, x: np.ndarray) -> np.ndarray:
        return self.n * np.asarray(self.base.logsf(x), dtype=float)

    def _sf(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self._logsf(x))

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return -np.expm1(self._logsf(x))

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        base_logsf = np.asarray(self.base.logsf(x), dtype=float)
        return (
            self.n * np.asarray(self.base.pdf(x), dtype=float) * np.exp((self.n - 1) * base_logsf)
        )

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        # P(min <= x) = q  <=>  sf_base(x) = (1 - q)^(1/n).
        return np.asarray(self.base.isf(np.exp(np.log1p(-q) / self.n)), dtype=float)

    def _munp(self, n: int) -> float:
        # E[min^k] = int_0^inf k x^(k-1) sf(x) dx, split at the median (sf^n is
        # concentrated far below the base law's scale for large n).
        median = float(self._ppf(np.array(0.5)))
        lo = float(self.a)

        def f(x: float) -> float:
            return float(n * x ** (n - 1) * self._sf(np.array(x)))

        head = integrate.quad(f, lo, median, limit=200)[0]
        tail = integrate.quad(f, median, np.inf, limit=200)[0]
        return head + tail


def minimum_law(law: Any, n: int) -> Any:
    """Lifetime law of a group of ``n`` components with iid lifetimes ``law`` (the first failure).

    ``P(min > t) = sf(t)^n``, a frozen ``scipy.stats`` distribution (a
    ``rv_continuous`` subclass with ``sf``, ``cdf``, ``pdf`` and the exact
    inverse ``ppf(q) = isf((1 - q)^(1/n))``; moments by quadrature).  For a
    Weibull law use :func:`group_weibull_from_gpu` (closed form); ``n = 1``
    returns ``law`` itself.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime of one component (any unit), support in ``[0, inf)``.
    n : int
        Components, ``>= 1``.

    Returns
    -------
    frozen scipy.stats distribution
        The group's lifetime, same unit.

    Examples
    --------
    >>> from scipy import stats
    >>> d = minimum_law(stats.gamma(2.0, scale=10.0), 8)
    >>> round(float(d.sf(1.0)), 6) == round(float(stats.gamma(2.0, scale=10.0).sf(1.0) ** 8), 6)
    True
    >>> round(float(minimum_law(stats.expon(scale=80.0), 8).mean()), 6)
    10.0
    """
    validate_lifetime_law(law, "law")
    n = as_count(n, "n")
    return law if n == 1 else _Minimum(base=law, n=n)()


def renewal_function(law: Any, t: float, *, steps: int = 4000) -> float:
    """``M(t)``: expected renewals in ``[0, t]`` of a renewal process started at a renewal.

    Solves ``M(t) = F(t) + int_0^t M(t - s) dF(s)`` on a uniform grid of
    ``steps`` cells (the Stieltjes sum with ``M`` at the right end of each
    cell: exact for a step ``F``, first order otherwise; a density singular
    at 0, as Weibull's with shape ``k < 1``, is handled through the
    differences of ``F``).  Exponential of mean ``m``: ``t / m``.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, support in ``[0, inf)``.
    t : float
        Horizon, ``>= 0`` (the law's unit).
    steps : int
        Grid cells, ``>= 1``.

    Returns
    -------
    float

    Examples
    --------
    >>> from scipy import stats
    >>> round(renewal_function(stats.expon(scale=2.0), 1.0), 3)
    0.5
    >>> w = stats.weibull_min(0.5, scale=1.0)  # clustered: far more than t / m = 0.05 early
    >>> round(renewal_function(w, 0.1), 3)
    0.345
    """
    validate_lifetime_law(law, "law")
    horizon = as_real(t, "t", minimum=0.0)
    n = as_count(steps, "steps")
    if horizon == 0.0:
        return 0.0
    return float(renewal_function_grid(law, horizon, n)[1][-1])


def renewal_function_grid(law: Any, horizon: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``(u, M(u))`` on ``steps + 1`` uniform points of ``[0, horizon]`` (:func:`renewal_function`).

    No argument checks.

    Examples
    --------
    >>> from scipy import stats
    >>> u, M = renewal_function_grid(stats.expon(scale=2.0), 1.0, 4000)
    >>> u.size, float(u[-1]), round(float(M[2000]), 3), round(float(M[-1]), 3)  # t / m
    (4001, 1.0, 0.25, 0.5)
    """
    u = np.linspace(0.0, horizon, steps + 1)
    F = np.asarray(law.cdf(u), dtype=float)
    dF = np.diff(F)
    M = np.zeros(steps + 1)
    for i in range(1, steps + 1):
        # M_i = F_i + sum_{j=1..i} M_{i-j} dF_j
        M[i] = F[i] + float(np.dot(M[i - 1 :: -1][:i], dF[:i]))
    return u, M


class _Equilibrium(stats.rv_continuous):
    """Residual life of a stationary renewal process of ``base`` (tabulated, see below)."""

    def __init__(self, base: Any = None, **kwargs: Any) -> None:
        kwargs.setdefault("a", 0.0)
        kwargs.setdefault("name", "equilibrium")
        super().__init__(**kwargs)
        self.base = base
        mean = float(base.mean())
        # F_e(t) = int_0^t sf / m on a geometric grid up to sf = 1e-15 (the rest of
        # the mass is put at the end by normalising), trapezoid rule: sf is smooth.
        top = float(base.isf(1e-15))
        self._t = np.concatenate([[0.0], np.geomspace(1e-9 * mean, top, 20_001)])
        sf = np.asarray(base.sf(self._t), dtype=float)
        cum = integrate.cumulative_trapezoid(sf, self._t, initial=0.0)
        self._F = cum / cum[-1]
        self._mean = mean

    def _updated_ctor_param(self) -> dict[str, Any]:
        return {**super()._updated_ctor_param(), "base": self.base}

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return np.interp(x, self._t, self._F)

    def _sf(self, x: np.ndarray) -> np.ndarray:
        return 1.0 - self._cdf(x)

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.base.sf(x), dtype=float) / self._mean

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        return np.interp(q, self._F, self._t)


def equilibrium_law(law: Any) -> Any:
    """Residual-life (equilibrium) law of a stationary renewal process with lifetimes ``law``.

    ``F_e(t) = int_0^t sf(s) ds / m`` (``m`` the mean lifetime): the time to
    the next failure of a group whose renewal clock has run for a long time,
    seen at a random instant.  Its hazard at 0 is ``1/m`` whatever the law,
    hence the superposition of many such clocks is close to a Poisson process
    of rate ``N / m`` (Palm-Khintchine).  Exponential: ``law`` itself.
    Weibull(``k``, ``s``): ``F_e(t) = P(1/k, (t/s)^k)`` (regularised lower
    incomplete gamma), the generalised gamma ``gengamma(1/k, k, scale=s)``.
    Otherwise tabulated: ``F_e`` by the trapezoid rule on 20,001 geometric
    points up to ``isf(1e-15)``, interpolated linearly (``ppf`` likewise).

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law, support in ``[0, inf)``, finite mean.

    Returns
    -------
    frozen scipy.stats distribution
        The residual-life law, same unit.

    Examples
    --------
    >>> from scipy import stats
    >>> w = stats.weibull_min(0.78, scale=2.0)
    >>> e = equilibrium_law(w)
    >>> e.dist.name, round(float(e.cdf(1.0)), 6)
    ('gengamma', 0.316322)
    >>> from scipy import integrate
    >>> round(integrate.quad(w.sf, 0, 1.0)[0] / float(w.mean()), 6)
    0.316322
    """
    validate_lifetime_law(law, "law")
    name = law.dist.name
    loc = float(law.kwds.get("loc", 0.0))
    if name == "expon" and loc == 0.0:
        return law
    if name == "weibull_min" and loc == 0.0:
        k = float(law.args[0]) if law.args else float(law.kwds["c"])
        scale = float(law.kwds.get("scale", law.args[1] if len(law.args) > 2 else 1.0))
        return stats.gengamma(1.0 / k, k, scale=scale)
    return _Equilibrium(base=law)()


@dataclass(frozen=True)
class EquilibriumLifetimes:
    """Group lifetimes of stationary renewal clocks, in dimensionless time ``u = t / m``.

    The seam of :mod:`spare_theory.cycles.base` (the methods of
    ``ExponentialLifetimes``): ``p(u) = F_e(m u)``, the probability that a
    group whose clock is in equilibrium fails within ``u`` mean lifetimes
    (:func:`equilibrium_law`).  Its initial rate is 1 per unit ``u``, as for
    the exponential law.  Two instances are equal when their ``key`` is
    (``("weibull", k)``: the dimensionless law depends on the shape only).

    Parameters
    ----------
    law : frozen scipy.stats distribution
        The group's lifetime law (any unit).
    key : tuple
        Identity for caches (default: the distribution's name and parameters).

    Examples
    --------
    >>> from scipy import stats
    >>> a = EquilibriumLifetimes(stats.weibull_min(0.78, scale=3.0))
    >>> b = EquilibriumLifetimes(stats.weibull_min(0.78, scale=7.0))
    >>> a == b, round(float(a.cdf(0.01)), 6), round(float(a.ppf(a.cdf(0.25))), 9)
    (True, 0.009829, 0.25)
    """

    law: Any = field(compare=False, repr=False)
    key: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        validate_lifetime_law(self.law, "law")
        mean = float(self.law.mean())
        eq = equilibrium_law(self.law)
        if self.law.dist.name == "weibull_min" and float(self.law.kwds.get("loc", 0.0)) == 0.0:
            k = float(eq.args[1])
            key: tuple[Any, ...] = ("weibull", k)
            # Dimensionless: scale / mean = 1 / Gamma(1 + 1/k), whatever the scale.
            eq = stats.gengamma(1.0 / k, k, scale=1.0 / math.gamma(1.0 + 1.0 / k))
            mean = 1.0
        else:
            key = (
                self.law.dist.name,
                tuple(float(a) for a in self.law.args),
                tuple(sorted((str(k), float(v)) for k, v in self.law.kwds.items())),
            )
        object.__setattr__(self, "_eq", eq)
        object.__setattr__(self, "_mean", mean)
        if not self.key:
            object.__setattr__(self, "key", key)

    def _at(self, method: str, t: ArrayLike) -> np.ndarray:
        """``method`` of the equilibrium law at ``t`` mean lifetimes."""
        eq, mean = self.__dict__["_eq"], self.__dict__["_mean"]
        with np.errstate(divide="ignore"):
            out = getattr(eq, method)(np.asarray(t, dtype=np.float64) * mean)
        return np.asarray(out, dtype=np.float64)

    def logcdf(self, u: ArrayLike) -> np.ndarray:
        """``log p(u)``, ``-inf`` at ``u = 0``."""
        return self._at("logcdf", u)

    def cdf(self, u: ArrayLike) -> np.ndarray:
        """``p(u) = F_e(m u)``."""
        return self._at("cdf", u)

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` at which ``p(u) = p``."""
        eq, mean = self.__dict__["_eq"], self.__dict__["_mean"]
        return np.asarray(eq.ppf(np.asarray(p, dtype=np.float64)), dtype=np.float64) / mean

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u))``."""
        return self._at("logsf", u)


@dataclass(frozen=True)
class SuperposedLifetimes(LogsfLaw):
    """A group of ``units`` nodes, each its own stationary renewal clock, in dimensionless time.

    The group fails at the first failure of its nodes; each node's clock is
    in equilibrium (seen at a random instant of a cluster that has run for
    long), so from a restart the group survives ``t`` with probability
    ``S_e(t)^n`` (``S_e`` the node law's residual-life survival,
    :func:`equilibrium_law`, ``n = units``), and the group fails at rate
    ``lambda = n / m`` on average (``m`` the node's mean lifetime).  In
    ``u = lambda t``: ``p(u) = 1 - S_e(m u / n)^n``, whose initial rate is 1
    as for the exponential law; ``n = 1`` is :class:`EquilibriumLifetimes`.
    The methods of ``ExponentialLifetimes`` (the seam of
    :mod:`spare_theory.cycles.base`).  Unlike the whole group's renewal
    clock (the minimum law renewed at each failure), only the failed node's
    clock starts afresh; for Weibull nodes with ``k < 1`` the group then
    fails ``n^(1/k - 1)`` times less often.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        One node's lifetime law (any unit).
    units : int
        Nodes of the group, ``>= 1``.

    Examples
    --------
    >>> from scipy import stats
    >>> g = SuperposedLifetimes(stats.weibull_min(0.5, scale=1.0), 16)
    >>> round(float(g.cdf(1e-6)) / 1e-6, 3), round(float(g.ppf(g.cdf(0.7))), 9)
    (1.0, 0.7)
    >>> one = SuperposedLifetimes(stats.weibull_min(0.5, scale=1.0), 1)
    >>> bool(np.isclose(one.cdf(0.3), EquilibriumLifetimes(stats.weibull_min(0.5)).cdf(0.3)))
    True
    """

    law: Any = field(compare=False, repr=False)
    units: int = 1
    key: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        node = EquilibriumLifetimes(self.law)
        object.__setattr__(self, "units", as_count(self.units, "units"))
        object.__setattr__(self, "_node", node)
        if not self.key:
            object.__setattr__(self, "key", (*node.key, self.units))

    def logsf(self, u: ArrayLike) -> np.ndarray:
        """``log(1 - p(u)) = n log S_e(u / n)`` (node time in its mean lifetimes)."""
        n = self.units
        return n * self.__dict__["_node"].logsf(np.asarray(u, dtype=np.float64) / n)

    def ppf(self, p: ArrayLike) -> np.ndarray:
        """The ``u`` with ``p(u) = p``: ``n`` times the node's ``u`` at ``1 - (1 - p)^(1/n)``."""
        n = self.units
        node_p = -np.expm1(self.log_complement(p) / n)
        return n * self.__dict__["_node"].ppf(node_p)
