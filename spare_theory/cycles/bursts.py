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
from .base import CycleLaw

__all__ = ["BurstWipeouts"]


class BurstWipeouts(CycleLaw):
    """``inner`` with independent wipe-outs at ``burst_ratio`` per unit ``u`` (module docstring).

    Everything but the survival is ``inner``'s: its throughput, checkpoint
    losses, repairs and the attributes the renewal sums read.

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
        super().__init__(inner.N, inner.r, inner.lifetimes)
        self.inner, self.burst_ratio = inner, float(burst_ratio)
        self.name = inner.name  # type: ignore[misc]
        for attribute in (
            "max_segments",
            "planned",
            "cost_grows",
            "exact_batch",
            "idle_share",
            "redundancy_cause",
            "mu",
            "planned_share",
            "split_pieces",
            "finite_run",
        ):
            setattr(self, attribute, getattr(inner, attribute))
        hazard = inner.constant_hazard
        self.constant_hazard = None if hazard is None else hazard + self.burst_ratio

    def logq(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.logq(u) - self.burst_ratio * u

    def theta(self, u: ArrayLike) -> np.ndarray:
        return self.inner.theta(u)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        return self.inner.batch_theta(u)

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        return self.inner.checkpoint_loss(start, d)

    def planned_hazard(self, u: ArrayLike) -> np.ndarray:
        return self.inner.planned_hazard(u)

    def repairs_per_cycle_time(self) -> float:
        """``inner``'s: the repair rate over its cycle (the bursts shorten it, a small bias)."""
        return self.inner.repairs_per_cycle_time()

    def cache_key(self) -> tuple:
        return (type(self).__qualname__, value_key(self.inner), self.burst_ratio)

    def __repr__(self) -> str:
        return f"BurstWipeouts({self.inner!r}, burst_ratio={self.burst_ratio:.6g})"
