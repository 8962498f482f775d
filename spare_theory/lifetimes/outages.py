"""A group that fails and is repaired: the probability that it is down, for any repair law.

A group is up for an ``Exp(lambda)`` time, then down for a repair time
``D`` drawn from the repair law, then up again, independently of the other
groups.  In dimensionless time ``u = lambda t`` the mean repair is ``1 / mu``
(``mu = 1 / (lambda m)``, repairs per mean group lifetime) and
``Gbar(x) = P(lambda D > x)``.  From a healthy start the probability that
the group is down at ``u`` solves the renewal (Volterra) equation

    p(u) = int_0^u (1 - p(s)) Gbar(u - s) ds,

exact for any repair law: a failure happens at ``s`` at rate ``1 - p(s)``
(up times are memoryless) and the group is still down at ``u`` with
probability ``Gbar(u - s)``.  For exponential repairs
``p(u) = pi (1 - e^{-(1 + mu) u})``, ``pi = 1 / (1 + mu)``; for any law
``p -> pi`` (the stationary law of an alternating renewal process depends on
the means alone), but the way there does: fixed repairs keep every failed
group out for exactly ``1 / mu``, so ``p(u) = 1 - e^{-u}`` (no repairs at
all) until ``u = 1 / mu``.  ``docs/theory.md`` section 6 uses ``p`` to carry
the repair law into the wipe-out model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validation import as_choice, as_real

__all__ = ["REPAIR_LAWS", "check_repair_fields", "down_probability", "repair_shape_sf"]

#: Named repair-time laws (any frozen ``scipy.stats`` distribution on ``[0, inf)`` also works).
REPAIR_LAWS = ("exponential", "fixed")

# Volterra solve: steps of 1/100 of the shorter of the mean up time and the
# mean repair, over 25 times (the relaxation time 1/(1 + mu) + the mean
# repair 1/mu), then p(u) = pi; at least and at most these many steps.
_RESOLUTION = 100
_SPAN = 25.0
_MIN_STEPS, _MAX_STEPS = 2000, 20000
# Points per Volterra step in the tabulated integral of Gbar (scipy laws).
_FINE = 8


def check_repair_fields(mean: Any, law: Any, rejoin: Any, *, unit: str) -> dict[str, Any]:
    """Checked repair fields of a scenario whose durations are in ``unit``.

    ``law`` is one of :data:`REPAIR_LAWS` (then ``mean`` is its mean, or
    ``None``: no repairs) or a frozen ``scipy.stats`` distribution on
    ``[0, inf)`` with a finite mean, in ``unit`` (then ``mean`` defaults to
    its mean and, if given, must equal it).  A ``rejoin`` stall needs repairs.

    Parameters
    ----------
    mean : float or None
        Mean repair time, ``> 0`` (``repair_<unit>``).
    law : str or frozen scipy.stats distribution
        Repair-time law (``repair_law``).
    rejoin : float
        Stall of the job per rejoin, ``>= 0`` (``rejoin_<unit>``).
    unit : {"minutes", "seconds"}
        Unit of the durations, used in the field names.

    Returns
    -------
    dict
        ``{"repair_<unit>": mean or None, "repair_law": law, "rejoin_<unit>": rejoin}``.

    Raises
    ------
    ValueError
        Naming the field.

    Examples
    --------
    >>> from scipy import stats
    >>> check_repair_fields(None, stats.uniform(0, 120), 5, unit="seconds")["repair_seconds"]
    60.0
    >>> check_repair_fields(30, "fixed", 0, unit="minutes")
    {'repair_minutes': 30.0, 'repair_law': 'fixed', 'rejoin_minutes': 0.0}
    """
    repair, stall = f"repair_{unit}", f"rejoin_{unit}"
    if isinstance(law, str) or law is None:
        law = as_choice(law, "repair_law", REPAIR_LAWS)
    elif not (hasattr(law, "ppf") and hasattr(law, "mean") and hasattr(law, "support")):
        raise ValueError(
            f"repair_law must be one of {REPAIR_LAWS} or a frozen scipy.stats distribution "
            f"({unit}), got {type(law).__name__}"
        )
    else:
        lo, _ = law.support()
        law_mean = float(law.mean())
        if not (math.isfinite(law_mean) and law_mean > 0 and lo >= 0):
            raise ValueError(
                f"repair_law must be a distribution on [0, inf) with a finite mean > 0 "
                f"({unit}), got support from {lo} and mean {law_mean}"
            )
        if mean is None:
            mean = law_mean
        elif not math.isclose(as_real(mean, repair), law_mean, rel_tol=1e-9):
            raise ValueError(f"{repair} = {mean} differs from the mean {law_mean:g} of repair_law")
    if mean is not None:
        mean = as_real(mean, repair, minimum=0.0, strict_minimum=True)
    rejoin = as_real(rejoin, stall, minimum=0.0)
    if mean is None and rejoin > 0:
        raise ValueError(f"{stall} > 0 needs repairs (set {repair})")
    if mean is None and law != "exponential":
        # A named law without its mean would be dropped without a word.
        raise ValueError(f"repair_law={law!r} needs repairs (set {repair})")
    return {repair: mean, "repair_law": law, stall: rejoin}


def repair_shape_sf(repair_law: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``y -> P(D / E[D] > y)``: the survival of a repair time in units of its mean.

    Parameters
    ----------
    repair_law : {"exponential", "fixed"} or frozen scipy.stats distribution
        As ``Scenario.repair_law``.

    Returns
    -------
    callable
        Vectorised survival function of ``D / E[D]`` (a unit-mean law).

    Examples
    --------
    >>> from scipy import stats
    >>> sf = repair_shape_sf(stats.uniform(0, 20))  # mean 10: D/E[D] uniform on [0, 2]
    >>> sf(np.array([0.0, 0.5, 1.0, 2.5])).tolist()
    [1.0, 0.75, 0.5, 0.0]
    >>> repair_shape_sf("fixed")(np.array([0.5, 1.0])).tolist()
    [1.0, 0.0]
    """
    if isinstance(repair_law, str):
        if repair_law == "exponential":
            return lambda y: np.exp(-np.asarray(y, dtype=float))
        if repair_law == "fixed":
            return lambda y: (np.asarray(y, dtype=float) < 1.0).astype(float)
        raise ValueError(
            f"repair_law must be 'exponential', 'fixed' or a frozen law, got {repair_law!r}"
        )
    mean = float(repair_law.mean())
    return lambda y: np.asarray(repair_law.sf(np.asarray(y, dtype=float) * mean), dtype=float)


def down_probability(u: npt.ArrayLike, mu: float, repair_law: Any = "exponential") -> np.ndarray:
    """``p(u)``: probability that a group healthy at ``u = 0`` is down at ``u``.

    Exponential repairs: ``p(u) = pi (1 - e^{-(1 + mu) u})``,
    ``pi = 1 / (1 + mu)``.  Other laws: the Volterra equation of the module
    docstring, solved by product integration (``1 - p`` linear over each
    step, ``int Gbar`` exact for fixed repairs and tabulated finely
    otherwise) in steps of a hundredth of the shorter of the mean up and
    down times (2,000 to 20,000 steps), up to ``25 (1/(1 + mu) + 1/mu)``,
    interpolated linearly; ``pi`` beyond.  A constant ``p = pi`` solves the
    discrete equation exactly, so the stationary value is exact.  (Repairs
    nearly fixed and much longer than a lifetime keep ``p`` oscillating
    beyond that span; wipe-outs come long before it then.)

    Parameters
    ----------
    u : array_like
        Times ``lambda t >= 0`` (units of the mean group lifetime).
    mu : float
        Repairs per mean group lifetime, ``1 / (lambda m) >= 0`` (0: no
        repairs, ``p(u) = 1 - e^{-u}`` whatever the law).
    repair_law : {"exponential", "fixed"} or frozen scipy.stats distribution
        Law of the repair time (its scale does not matter: ``mu`` sets the mean).

    Returns
    -------
    numpy.ndarray
        Probabilities, the shape of ``u``.

    Examples
    --------
    >>> from scipy import stats
    >>> u = np.array([0.05, 0.5, 5.0])
    >>> down_probability(u, 4.0).round(4).tolist()  # pi = 0.2
    [0.0442, 0.1836, 0.2]
    >>> down_probability(u, 4.0, "fixed").round(4).tolist()  # nobody is back before u = 1/mu
    [0.0488, 0.1988, 0.2]
    >>> bool(abs(down_probability(u, 4.0, "exponential")
    ...          - down_probability(u, 4.0, stats.expon())).max() < 1e-4)
    True
    """
    mu = as_real(mu, "mu", minimum=0.0)
    u = np.asarray(u, dtype=float)
    pi = 1.0 / (1.0 + mu)
    if mu == 0.0 or (isinstance(repair_law, str) and repair_law == "exponential"):
        return -np.expm1(-(1.0 + mu) * u) * pi
    shape = repair_shape_sf(repair_law)
    end = _SPAN * (1.0 / (1.0 + mu) + 1.0 / mu)
    steps = int(np.clip(np.ceil(end * _RESOLUTION * max(1.0, mu)), _MIN_STEPS, _MAX_STEPS))
    grid = np.linspace(0.0, end, steps + 1)
    # I(x) = int_0^x Gbar = E[min(lambda D, x)]: exact for "fixed", else a fine trapezoid.
    if isinstance(repair_law, str) and repair_law == "fixed":
        integral = np.minimum(grid, 1.0 / mu)
    else:
        fine = np.linspace(0.0, end, _FINE * steps + 1)
        sf = shape(fine * mu)
        cumulative = np.concatenate(([0.0], np.cumsum(0.5 * (sf[1:] + sf[:-1]) * fine[1])))
        integral = cumulative[::_FINE]
    # Product integration, 1 - p linear over each step: with w_k = I(k h) - I((k-1) h),
    # p_i = sum_{k=1..i} w_k (1 - (p_{i-k} + p_{i-k+1}) / 2), solved for p_i (in the k = 1
    # term).  A constant p = pi solves it exactly once sum w_k = 1/mu, so the
    # stationary value carries no discretisation error.
    w = np.diff(integral)
    p = np.zeros(grid.size)
    for i in range(1, grid.size):
        older = p[i - 1 :: -1]  # p_{i-1}, ..., p_0: paired with w_1..w_i
        newer = p[i - 1 : 0 : -1]  # p_{i-1}, ..., p_1: the later end of steps k = 2..i
        rhs = w[:i].sum() - 0.5 * (w[:i] @ older) - 0.5 * (w[1:i] @ newer)
        p[i] = rhs / (1.0 + 0.5 * w[0])
    return np.where(u <= end, np.interp(u, grid, p), pi)
