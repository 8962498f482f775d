"""What a lifetime law leaves out of a log, measured: lemon nodes and bursts of failures.

**Heterogeneity.**  If every node failed at one rate ``lambda``, node
``i``'s count ``n_i`` over its exposure ``x_i`` (hours up) would be Poisson
with mean ``lambda x_i``.  :func:`count_heterogeneity` reports the
dispersion of the counts (sample variance over mean, 1 for Poisson counts of
equal exposure), Pearson's ``X^2 = sum (n_i - lambda x_i)^2 / (lambda x_i)``
over ``nodes - 1`` with its chi-square p-value, and the maximum-likelihood
*two-class* model: a share ``phi`` of lemon nodes fail at ``c lambda`` and
the others at ``lambda`` (``c >= 1``),

    L = prod_i [(1 - phi) Pois(n_i; lambda x_i) + phi Pois(n_i; c lambda x_i)],

maximised by ``scipy.optimize.minimize`` (Nelder-Mead on ``logit phi``,
``log lambda``, ``log(c - 1)`` from a grid of starts, keeping the best).  A
two-class model is what ``Scenario(lemon_fraction=phi,
lemon_rate_factor=c)`` assumes; the AICs of the two models say whether it
earns its two extra parameters.

**Bursts.**  :func:`failure_bursts` chains failures whose times are within
``window_minutes`` of the previous one (single linkage: a chain may span
more than the window) and reports the share of failures that came with
others, the burst sizes and the rate of bursts: an estimate of the share of
failures due to shared failure domains (power, switches, racks).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize, special, stats

from .._validation import as_real, as_real_array

__all__ = ["Bursts", "Heterogeneity", "count_heterogeneity", "failure_bursts"]

# Starts of the two-class fit: lemon shares and rate factors (all combinations).
_SHARES = (0.02, 0.1, 0.3)
_FACTORS = (2.0, 5.0, 20.0)


@dataclass(frozen=True)
class Heterogeneity:
    """Per-node failure counts against one common rate (:func:`count_heterogeneity`).

    Attributes
    ----------
    nodes, failures, never_failed, most_failures : int
        Nodes, failures, nodes without one, the largest count of a node.
    dispersion_index : float
        Sample variance of the counts over their mean (1: Poisson, equal exposures).
    pearson_dispersion, pearson_p_value : float
        ``X^2 / (nodes - 1)`` against rate ``failures / exposure`` and the
        chi-square p-value of ``X^2`` (small: not one rate).
    rate_per_hour : float
        The common rate, failures per node-hour.
    base_rate_per_hour, lemon_fraction, lemon_rate_factor : float
        The two-class fit: others' rate ``lambda``, share ``phi`` and factor ``c``.
    log_likelihood_poisson, log_likelihood_lemons : float
        Log-likelihoods of the counts under one rate and the two-class model.
    aic_poisson, aic_lemons : float
        Their AICs (1 and 3 parameters).

    Examples
    --------
    >>> h = count_heterogeneity([0, 0, 0, 1, 9], [100.0] * 5)
    >>> h.never_failed, round(h.dispersion_index, 2), h.aic_lemons < h.aic_poisson
    (3, 7.75, True)
    """

    nodes: int
    failures: int
    never_failed: int
    most_failures: int
    dispersion_index: float
    pearson_dispersion: float
    pearson_p_value: float
    rate_per_hour: float
    base_rate_per_hour: float
    lemon_fraction: float
    lemon_rate_factor: float
    log_likelihood_poisson: float
    log_likelihood_lemons: float
    aic_poisson: float
    aic_lemons: float

    def summary(self) -> str:
        """The measures as text."""
        return "\n".join(
            [
                f"heterogeneity of {self.nodes} nodes' failure counts ({self.failures} failures)",
                f"  never failed {self.never_failed}, most failures of one node "
                f"{self.most_failures}",
                f"  variance / mean of the counts {self.dispersion_index:.3g} (Poisson: 1)",
                f"  Pearson X^2 / (nodes - 1) {self.pearson_dispersion:.3g} against one rate "
                f"{self.rate_per_hour:.3g} /h, p = {self.pearson_p_value:.3g}",
                f"  two classes: lemon_fraction {self.lemon_fraction:.3g}, lemon_rate_factor "
                f"{self.lemon_rate_factor:.3g}, others {self.base_rate_per_hour:.3g} /h",
                f"  AIC one rate {self.aic_poisson:.6g}, two classes {self.aic_lemons:.6g}",
            ]
        )


def _lemon_log_likelihood(
    theta: np.ndarray, counts: np.ndarray, exposure: np.ndarray, log_factorial: np.ndarray
) -> float:
    share, rate, factor = special.expit(theta[0]), math.exp(theta[1]), 1.0 + math.exp(theta[2])
    mean = rate * exposure
    log_base = special.xlogy(counts, mean) - mean - log_factorial
    log_lemon = log_base + counts * math.log(factor) - (factor - 1.0) * mean
    terms = np.stack([np.log1p(-share) + log_base, math.log(share) + log_lemon])
    return float(special.logsumexp(terms, axis=0).sum())


def count_heterogeneity(counts: npt.ArrayLike, exposure_hours: npt.ArrayLike) -> Heterogeneity:
    """How far per-node failure counts are from one common Poisson rate (module docstring).

    Parameters
    ----------
    counts : array_like of int
        Failures of each node, ``>= 0`` (nodes without failures included).
    exposure_hours : array_like
        Each node's time up, hours, ``>= 0`` (same shape; not all 0).

    Returns
    -------
    Heterogeneity

    Raises
    ------
    ValueError
        Naming the argument: negative or fractional counts, shapes that
        differ, fewer than two nodes, no exposure, no failures, a failure
        without exposure.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> lemon = rng.random(4000) < 0.1
    >>> n = rng.poisson(np.where(lemon, 8.0, 1.0))
    >>> h = count_heterogeneity(n, np.ones(4000))
    >>> round(h.lemon_fraction, 2), round(h.lemon_rate_factor, 1), round(h.base_rate_per_hour, 2)
    (0.1, 8.0, 1.0)
    """
    n = as_real_array(counts, "counts", minimum=0.0)
    if np.any(n != np.floor(n)):
        raise ValueError("counts must be whole numbers of failures")
    x = as_real_array(exposure_hours, "exposure_hours", minimum=0.0)
    if n.shape != x.shape or n.ndim != 1 or n.size < 2:
        raise ValueError(
            f"counts and exposure_hours must be 1-d of one length >= 2, got {n.shape}, {x.shape}"
        )
    if n.sum() == 0 or x.sum() == 0:
        raise ValueError("count_heterogeneity needs failures and exposure: nothing failed")
    if np.any((x == 0) & (n > 0)):
        raise ValueError("exposure_hours is 0 for a node with failures")
    rate = n.sum() / x.sum()
    expected = rate * x
    used = expected > 0
    pearson = float((((n - expected) ** 2)[used] / expected[used]).sum())
    degrees = int(used.sum()) - 1
    log_factorial = special.gammaln(n + 1)
    poisson_ll = float(stats.poisson.logpmf(n, expected).sum())
    fits = []
    for share in _SHARES:
        for factor in _FACTORS:
            start = np.array(
                [
                    special.logit(share),
                    math.log(rate / (1 + share * (factor - 1))),
                    math.log(factor - 1),
                ]
            )
            fits.append(
                optimize.minimize(
                    lambda t: -_lemon_log_likelihood(t, n, x, log_factorial),
                    start,
                    method="Nelder-Mead",
                    options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000},
                )
            )
    best = min(fits, key=lambda fit: fit.fun)
    lemon_ll = -float(best.fun)
    mean = n.mean()
    return Heterogeneity(
        nodes=int(n.size),
        failures=int(n.sum()),
        never_failed=int((n == 0).sum()),
        most_failures=int(n.max()),
        dispersion_index=float(n.var(ddof=1) / mean),
        pearson_dispersion=pearson / max(degrees, 1),
        pearson_p_value=float(stats.chi2.sf(pearson, max(degrees, 1))),
        rate_per_hour=float(rate),
        base_rate_per_hour=math.exp(best.x[1]),
        lemon_fraction=float(special.expit(best.x[0])),
        lemon_rate_factor=1.0 + math.exp(best.x[2]),
        log_likelihood_poisson=poisson_ll,
        log_likelihood_lemons=lemon_ll,
        aic_poisson=2.0 - 2.0 * poisson_ll,
        aic_lemons=6.0 - 2.0 * lemon_ll,
    )


@dataclass(frozen=True)
class Bursts:
    """Failures that come together (:func:`failure_bursts`).

    Attributes
    ----------
    window_minutes : float
        Largest gap inside a burst, minutes.
    failures : int
        Failures looked at.
    bursts : int
        Runs of two or more failures.
    clustered_failures : int
        Failures in those runs.
    share : float
        ``clustered_failures / failures``: the failure-domain share estimate.
    largest : int
        Size of the largest run (1: none).
    sizes : dict of int to int
        Number of runs of each size (size 1 included).
    bursts_per_hour : float
        Runs of two or more per hour of the span.

    Examples
    --------
    >>> b = failure_bursts([0.0, 0.001, 5.0, 9.0, 9.0, 9.01], window_minutes=1.0,
    ...                    span_hours=10.0)
    >>> b.bursts, b.clustered_failures, round(b.share, 3), b.sizes
    (2, 5, 0.833, {1: 1, 2: 1, 3: 1})
    """

    window_minutes: float
    failures: int
    bursts: int
    clustered_failures: int
    share: float
    largest: int
    sizes: dict[int, int]
    bursts_per_hour: float

    @property
    def mean_burst_size(self) -> float:
        """Mean size of the runs of two or more (0 when there are none)."""
        return self.clustered_failures / self.bursts if self.bursts else 0.0

    def summary(self) -> str:
        """The bursts as text."""
        sizes = ", ".join(f"{size}: {count}" for size, count in sorted(self.sizes.items()))
        return "\n".join(
            [
                f"bursts within {self.window_minutes:g} min: {self.bursts} bursts hold "
                f"{self.clustered_failures} of {self.failures} failures "
                f"(share {self.share:.3g}), largest {self.largest}",
                f"  mean burst size {self.mean_burst_size:.3g}, "
                f"{self.bursts_per_hour:.3g} bursts per hour",
                f"  runs by size {{{sizes}}}",
            ]
        )


def failure_bursts(
    times_hours: npt.ArrayLike, *, window_minutes: float, span_hours: float
) -> Bursts:
    """Chain failures less than ``window_minutes`` apart into bursts (module docstring).

    Parameters
    ----------
    times_hours : array_like
        Failure times, hours, any order (may be empty).
    window_minutes : float
        Largest gap inside a burst, minutes, ``>= 0`` (0: the same instant).
    span_hours : float
        Length of the observation, hours, ``> 0`` (for the rate).

    Returns
    -------
    Bursts

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> failure_bursts([3.0, 1.0, 3.0], window_minutes=0.0, span_hours=4.0).sizes
    {1: 1, 2: 1}
    """
    times = np.sort(as_real_array(times_hours, "times_hours").ravel())
    window = as_real(window_minutes, "window_minutes", minimum=0.0)
    span = as_real(span_hours, "span_hours", minimum=0.0, strict_minimum=True)
    if times.size == 0:
        return Bursts(window, 0, 0, 0, 0.0, 0, {}, 0.0)
    starts = np.concatenate(([True], np.diff(times) > window / 60.0))
    sizes = np.diff(np.append(np.flatnonzero(starts), times.size))
    runs = sizes[sizes > 1]
    return Bursts(
        window_minutes=window,
        failures=int(times.size),
        bursts=int(runs.size),
        clustered_failures=int(runs.sum()),
        share=float(runs.sum() / times.size),
        largest=int(sizes.max()),
        sizes={int(k): int(v) for k, v in sorted(Counter(sizes.tolist()).items())},
        bursts_per_hour=float(runs.size / span),
    )
