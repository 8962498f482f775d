"""A cycle law with bursts that end it: domain events that alone take down more than it survives.

With repairs the hour-level model folds a failure domain's events into the
groups' independent rate (``spare_theory.hourly.compose``, step 2): a burst
over ``s`` groups counts as ``s`` independent failures.  That prices the
down share, but not the overlap: the groups of one burst are down together
by definition.  When one event alone takes down more groups than the plan
survives (a burst over two groups against one hot spare, a domain that
holds a whole replica set on a ruler placement), every such event ends the
cycle, while independent outages almost never overlap when repairs are
short.  :class:`BurstWipeouts` prices those events as what they are: a
Poisson process of wipe-outs at ``beta`` per unit ``u``, independent of
the groups' own failures (the events that do not wipe out stay folded into
the rate),

    Q(u) = Q_0(u) e^{-beta u},    theta(u) = theta_0(u),

the throughput given no wipe-out unchanged because the killing events do
not depend on the state.  What is dropped: an event over fewer groups that
ends the cycle only with groups already down (its groups stay in the
folded rate).  Measured against the event simulation in
``docs/theory.md`` section 9.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._caching import value_key
from .base import CycleLaw, WrappedLaw

__all__ = ["BurstWipeouts"]


class BurstWipeouts(WrappedLaw):
    """``inner`` with independent wipe-outs at ``burst_ratio`` per unit ``u`` (module docstring).

    Everything but the survival is ``inner``'s (:class:`~spare_theory.cycles.base.WrappedLaw`):
    its throughput, checkpoint losses, repairs (the bursts shorten the cycle
    they are averaged over, a small bias) and the attributes the renewal sums
    read.

    Parameters
    ----------
    inner : CycleLaw
        The law with the killing events left out.
    burst_ratio : float
        Rate of the events that alone end the cycle, per unit ``u`` of the
        priced group rate (``> 0``).

    Raises
    ------
    ValueError
        Naming ``burst_ratio`` when it is not a positive finite rate.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> law = BurstWipeouts(Rep(100, 2), 0.5)
    >>> u = 0.01
    >>> bool(np.isclose(law.logq(u), Rep(100, 2).logq(u) - 0.5 * u)), float(law.theta(u))
    (True, 0.5)
    """

    def __init__(self, inner: CycleLaw, burst_ratio: float) -> None:
        if not burst_ratio > 0.0 or not np.isfinite(burst_ratio):
            raise ValueError(f"burst_ratio must be a positive finite rate, got {burst_ratio!r}")
        super().__init__(inner)
        self.burst_ratio = float(burst_ratio)
        hazard = inner.constant_hazard
        self.constant_hazard = None if hazard is None else hazard + self.burst_ratio

    def logq(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.logq(u) - self.burst_ratio * u

    def cache_key(self) -> tuple:
        return (type(self).__qualname__, value_key(self.inner), self.burst_ratio)

    def __repr__(self) -> str:
        return f"BurstWipeouts({self.inner!r}, burst_ratio={self.burst_ratio:.6g})"
