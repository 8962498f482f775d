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
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from ._validation import as_count, as_real

__all__ = [
    "DEFAULT_WEIBULL_SHAPE",
    "LIFETIME_LAWS",
    "group_weibull_from_gpu",
    "lifetime_law",
    "validate_lifetime_law",
]

#: Named laws accepted by :func:`lifetime_law`.
LIFETIME_LAWS = ("exponential", "weibull")

#: Weibull shape of the SPARe paper's Weibull scenario.
DEFAULT_WEIBULL_SHAPE = 0.78


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
