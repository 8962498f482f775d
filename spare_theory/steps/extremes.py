"""Extreme values of the stack jitter: the expected step of the published simulator.

A step ends when the slowest worker has finished (``docs/step_model.md``).
With ``e_n = E[max of n iid Normal(0, 1)]``, computed by quadrature as
``e_n = int_0^inf (1 - Phi^n) dz - int_-inf^0 Phi^n dz``:

- SPARe, ``S`` stacks on each of ``n`` active workers, every stack
  ``c max(0.1, Normal(1, v))`` drawn per stack and worker: the sum of ``S``
  is ``Normal(c S, (c v)^2 S)``, so ``tau_S = c (S + v sqrt(S) e_n) + a``;
- Rep draws one jitter for its ``r``-fold compute: ``tau = c r (1 + v e_n) + a``.

The truncation at 0.1 is 18 standard deviations away and ignored.  Times in
seconds; ``c`` the stack, ``v`` its jitter cv, ``a`` the all-reduce.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import integrate, special

from .._caching import cached
from .scenario import StepScenario

__all__ = [
    "expected_max_normal",
    "expected_max_shifted",
    "expected_max_two_classes",
    "expected_step_seconds",
    "tabulated_max_normal",
]

# Quadrature grid of the standard normal maxima (z in [-10, 12 + shift]).
_Z_STEP = 0.005


def expected_max_shifted(m: npt.ArrayLike, shift: float = 0.0) -> np.ndarray:
    """``E[max(shift + Z_0, Z_1, ..., Z_m)]`` for iid standard normals (``m >= 0`` real).

    The CDF of the maximum is ``F(z) = Phi(z - shift) Phi(z)^m``; its mean is
    ``int_0^inf (1 - F) dz - int_-inf^0 F dz``, each piece by Simpson's rule
    with step 0.005 on a grid that has a node at 0 (``F`` in logs, so that
    ``Phi^m`` stays accurate for ``m`` up to ``1e9``).  No argument checks.

    Parameters
    ----------
    m : float or array_like
        Other normals beside the shifted one, ``>= 0``.
    shift : float
        Mean of the shifted normal ``Z_0`` (standard deviations).

    Returns
    -------
    numpy.ndarray
        One expected maximum per ``m`` (at least 1-d).

    Examples
    --------
    >>> print(round(float(expected_max_shifted(1)[0]), 6))
    0.56419
    >>> print(round(float(expected_max_shifted(0, shift=3.0)[0]), 6))
    3.0
    """
    m = np.atleast_1d(np.asarray(m, dtype=float))
    below = np.linspace(-10.0 + min(shift, 0.0), 0.0, 2001 + int(max(-shift, 0.0) / _Z_STEP))
    top = 12.0 + max(shift, 0.0)
    above = np.linspace(0.0, top, 1 + 2 * math.ceil(top / (2 * _Z_STEP)))

    def log_cdf(z: np.ndarray) -> np.ndarray:
        return special.log_ndtr(z - shift)[None, :] + m[:, None] * special.log_ndtr(z)[None, :]

    lower = integrate.simpson(np.exp(log_cdf(below)), x=below, axis=1)
    upper = integrate.simpson(-np.expm1(log_cdf(above)), x=above, axis=1)
    return upper - lower


def expected_max_normal(n: npt.ArrayLike) -> float | npt.NDArray[np.float64]:
    """``e_n = E[max(Z_1, ..., Z_n)]`` for ``n`` iid standard normals (real ``n >= 1``).

    ``e_n = int_0^inf (1 - Phi(z)^n) dz - int_-inf^0 Phi(z)^n dz``, by
    Simpson's rule on ``[-10, 12]`` with step 0.005 (``Phi^n`` in logs);
    absolute error below ``1e-8`` for ``n`` up to ``1e9``.  Non-integer
    ``n`` interpolates smoothly (the formula holds for real ``n``).

    Parameters
    ----------
    n : float or array_like
        Number of normals, ``>= 1``.

    Returns
    -------
    float or numpy.ndarray
        Expected maximum (standard deviations above the mean).

    Examples
    --------
    >>> print(round(expected_max_normal(2), 6), round(expected_max_normal(200), 4))
    0.56419 2.7460
    """
    arr = np.asarray(n, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError(f"n must be finite and >= 1, got {n!r}")
    out = expected_max_shifted(arr.ravel() - 1.0, 0.0).reshape(arr.shape)
    return float(out) if out.ndim == 0 else out


@cached(maxsize=256)
def _max_normal_table(N: int) -> tuple[np.ndarray, np.ndarray]:
    """``(log n, e_n)`` on a grid over ``[1, N]`` for interpolation in ``log n``.

    ``e_n`` is smooth in ``log n``; 400 geometric points plus every integer up
    to 64 interpolate it to about ``1e-5``.
    """
    n = np.unique(np.concatenate([np.arange(1.0, min(N, 64) + 1), np.geomspace(1.0, N, 400)]))
    return np.log(n), expected_max_shifted(n - 1.0)


def tabulated_max_normal(N: int, n: npt.ArrayLike) -> np.ndarray:
    """``e_n`` for real ``n``, clipped to ``[1, N]``, interpolated in ``log n`` from a table.

    The table (cached per ``N``) holds ``e_n`` at every integer up to 64 and
    at 400 geometric points of ``[1, N]``; the interpolation error is about
    ``1e-5``.  No argument checks: the cycle tables call it in inner loops.

    Parameters
    ----------
    N : int
        Largest ``n`` (the scenario's groups), ``>= 1``.
    n : float or array_like
        Numbers of normals.

    Returns
    -------
    numpy.ndarray
        ``e_n`` (standard deviations), the shape of ``n``.

    Examples
    --------
    >>> print(round(float(tabulated_max_normal(1000, 200)), 4))
    2.746
    """
    log_n, e = _max_normal_table(N)
    return np.interp(np.log(np.clip(np.asarray(n, dtype=float), 1.0, N)), log_n, e)


def expected_max_two_classes(
    n_hi: npt.ArrayLike, n_lo: npt.ArrayLike, delta: npt.ArrayLike, ratio: npt.ArrayLike
) -> np.ndarray:
    """``E[max]`` of ``n_hi`` standard normals and ``n_lo`` normals ``ratio Z - delta``.

    The CDF of the maximum is ``Phi(z)^n_hi Phi((z + delta)/ratio)^n_lo`` (in
    logs); its mean ``int_0^inf (1 - F) - int_-inf^0 F`` by Simpson's rule,
    step 0.01 on ``[-10, 12]`` (the four arguments broadcast as rows).  No
    argument checks.

    Parameters
    ----------
    n_hi, n_lo : array_like
        Counts of the two classes (real, ``n_hi >= 1``, ``n_lo >= 0``).
    delta : array_like
        Shift of the lower class below the upper one, standard deviations.
    ratio : array_like
        Standard deviation of the lower class relative to the upper, ``> 0``.

    Returns
    -------
    numpy.ndarray
        One expected maximum per row (standard deviations of the upper class).

    Examples
    --------
    >>> print(round(float(expected_max_two_classes([2], [0], [0.0], [1.0])[0]), 4))
    0.5642
    """
    below = np.linspace(-10.0, 0.0, 1001)
    above = np.linspace(0.0, 12.0, 1201)
    hi_n, lo_n, shift, scale = (
        np.asarray(x, dtype=float)[:, None] for x in (n_hi, n_lo, delta, ratio)
    )

    def log_cdf(z: np.ndarray) -> np.ndarray:
        hi = hi_n * special.log_ndtr(z)[None, :]
        lo = np.where(lo_n > 0, lo_n * special.log_ndtr((z[None, :] + shift) / scale), 0.0)
        return hi + lo

    lower = integrate.simpson(np.exp(log_cdf(below)), x=below, axis=1)
    upper = integrate.simpson(-np.expm1(log_cdf(above)), x=above, axis=1)
    return upper - lower


def expected_step_seconds(
    scenario: StepScenario, stacks: npt.ArrayLike, *, workers: npt.ArrayLike | None = None
) -> float | npt.NDArray[np.float64]:
    """Expected failure-free attempt with ``stacks`` jittered stacks per worker, seconds.

    ``tau_S = c (S + v sqrt(S) e_n) + a``: the slowest of ``n`` workers, each
    summing ``S`` stacks of ``c max(0.1, Normal(1, v))`` (the sum is normal
    with mean ``c S`` and sd ``c v sqrt(S)``; the truncation at 0.1 is 18
    standard deviations away), then the all-reduce ``a``.  SPARe's step at
    level ``S``; Rep's single-jitter ``r``-fold compute is ``c r (1 + v e_n) + a``
    (not this function).

    Parameters
    ----------
    scenario : StepScenario
        Supplies ``c = stack_seconds``, ``v = stack_jitter_cv``,
        ``a = allreduce_seconds`` and the default ``n = groups``.
    stacks : int or array_like
        Stacks per worker, ``S >= 1``.
    workers : int or array_like, optional
        Active workers ``n`` (``1 <= n``); default ``scenario.groups``.

    Returns
    -------
    float or numpy.ndarray
        Seconds.

    Notes
    -----
    Fields with no effect here:

    - ``steps``, ``checkpoint_seconds``, ``restart_seconds``,
      ``restart_semantics``, ``failure_law``, ``partial_recovery_seconds``,
      ``allreduce_failure_scale``, ``repair_seconds``, ``repair_law``,
      ``rejoin_seconds``, ``reconfigure_seconds``, ``heal_seconds``,
      ``gpus_per_group``, ``gpus_per_node``, ``spare_nodes``, ``swap_seconds``,
      ``clock_age_seconds``: one failure-free attempt has no failure,
      checkpoint, restart or repair in it;
    - ``microbatches``: the stacks per worker are the argument ``stacks``,
      whatever split gave them;
    - ``provenance``: where the fields came from, not what they are.

    Examples
    --------
    >>> from spare_theory.steps.scenario import paper_scenario
    >>> print(round(expected_step_seconds(paper_scenario(200), 2), 2))
    142.43
    """
    if not isinstance(scenario, StepScenario):
        raise ValueError(f"scenario must be a StepScenario, got {type(scenario).__name__}")
    S = np.asarray(stacks, dtype=float)
    if not np.all(np.isfinite(S)) or np.any(S < 1):
        raise ValueError(f"stacks must be >= 1, got {stacks!r}")
    n = np.asarray(scenario.groups if workers is None else workers, dtype=float)
    if not np.all(np.isfinite(n)) or np.any(n < 1):
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    e = expected_max_normal(np.maximum(n, 1.0))
    c, v = scenario.stack_seconds, scenario.stack_jitter_cv
    out = c * (S + v * np.sqrt(S) * e) + scenario.allreduce_seconds
    return float(out) if np.ndim(out) == 0 else out
