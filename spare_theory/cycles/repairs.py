"""Failed groups that come back: the restart cycle when repairs rejoin a running job.

With repairs a failed group is replaced after a repair time ``D`` (mean
``m``) and rejoins the running job without a global restart; the job stalls
while it loads the model state.  A group then alternates between *up*
(``Exp(lambda)``) and *down* (``D``), independently of the others, until the
next global restart makes every group healthy again.  In dimensionless time
``u = lambda t`` with ``mu = 1 / (lambda m)`` (repairs per mean group
lifetime) a group is down at ``u`` with probability
``p(u) = pi (1 - e^{-(1 + mu) u})``, ``pi = 1 / (1 + mu)``, for exponential
repairs.  Derivation in ``docs/theory.md`` section 6.

:class:`RepairCycle` extends any strategy's cycle law without repairs (its
*base*): the wipe-out survival with repairs comes from the base law's
:meth:`~spare_theory.cycles.base.CycleLaw.repair_log_q` (CKPT-only: ``-N u``;
Rep: the exact chains of its replica sets; SPARe: the cluster expansion over
types and pairs of types), the throughput from its
:meth:`~spare_theory.cycles.base.CycleLaw.throughput_at_down_share` times
``1 - N mu p(u) s`` (rejoins at rate ``N mu p(u)``, each stalling the job for
``s = lambda * rejoin``; capped at 1).

Other repair laws (``"fixed"``, a scipy distribution): the stationary down
probability and the rate of ``r`` overlapping outages depend on the mean
alone, the transient from a healthy start does not.  The law enters through
the exact down probability ``p(u)`` of
:func:`spare_theory.lifetimes.outages.down_probability`: the wipe-out hazard of
exponential repairs of the same mean is scaled by ``(p / p_e)^{r-1}`` (a
wipe-out is the last of ``r`` hosts failing while ``r - 1`` are down), and
the throughput and repair rate use ``p``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._caching import cached, value_key
from ..lifetimes.outages import down_probability
from .base import BLOCK_SEGMENTS, CycleLaw, TabulatedCycle, cycle_time_average, survival_integral

__all__ = ["EARLY_POINTS", "GRID_STEPS", "LOG_END", "RepairCycle", "repair_cycle"]

# Points of the grid in u on which log Q is tabulated, the level of log Q at which
# the grid ends (later segments weigh below e^-40), and geometric points below
# its first step (also the grid of planned cycles).
GRID_STEPS = 2048
LOG_END = -40.0
_SPAN_PASSES = 8
EARLY_POINTS = 256


class RepairCycle(TabulatedCycle):
    """The restart cycle of a strategy when failed groups are repaired and rejoin.

    ``log Q`` and ``theta`` are tabulated on a uniform grid of 2049 points
    in ``u`` up to where ``log Q`` reaches ``-40`` (found in a few passes),
    plus 256 geometric points below its first step (where the throughput
    settles),
    interpolated linearly and extrapolated with the last slope (as
    :class:`~spare_theory.cycles.spare.Spare`).  See the module docstring for
    the formulas.

    Parameters
    ----------
    base : CycleLaw
        The strategy's cycle law without repairs (its ``N`` and ``r``; at
        ``r = 1`` CKPT-only's): it supplies the wipe-out survival with
        repairs (:meth:`~spare_theory.cycles.base.CycleLaw.repair_log_q`) and
        the throughput at a down share.
    mu : float
        Repair rate ``1 / (lambda m)``, ``>= 0`` (0: no repairs).
    stall : float
        Rejoin stall ``lambda * rejoin_hours``, ``>= 0``.

    Attributes
    ----------
    u, log_q, theta_grid, repairs_rate : numpy.ndarray
        The grid, ``log Q``, the throughput and the expected repairs per
        unit ``u`` (``N mu p(u)``) on it.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> law = RepairCycle(Rep(64, 2), mu=100.0)
    >>> round(law.mean_time, 1), round(RepairCycle(Rep(64, 2), mu=0.0).mean_time, 4)
    (1.6, 0.1729)
    """

    name = "repair"
    # Fast repairs make cycles of millions of segments: sum them in blocks.
    max_segments = BLOCK_SEGMENTS

    def __init__(
        self, base: CycleLaw, mu: float, stall: float = 0.0, repair_law: Any = "exponential"
    ) -> None:
        N, r = base.N, base.r
        super().__init__(N, r)
        #: The law without repairs whose wipe-out rule and throughput the cycle uses.
        self.base = base
        self.mu, self.stall = float(mu), float(stall)
        #: Law of the repair time (``Scenario.repair_law``); only its shape matters here.
        self.repair_law = repair_law
        base_rate = base.repair_wipeout_rate(self.mu)
        # First guess of where log Q reaches LOG_END, then passes until it does.
        span = -LOG_END / base_rate
        for _ in range(_SPAN_PASSES):
            u = np.linspace(0.0, span, GRID_STEPS + 1)
            log_q = base.repair_log_q(u, self.mu)
            if log_q[-1] > LOG_END:
                span *= min(max(1.5 * LOG_END / min(log_q[-1], -1e-300), 1.5), 1e6)
                continue
            end = int(np.argmax(log_q <= LOG_END))
            if end >= GRID_STEPS // 2:
                break
            span = u[end] * 1.05
        self.slope = (log_q[-1] - log_q[-2]) / (u[-1] - u[-2])
        # Geometric points below the first step: the throughput settles within
        # u ~ 1 / (N (1 + mu)) (first failures, then repairs), far below the
        # step when cycles are long; log Q is linear there.
        early = np.geomspace(1e-3 / (N * (1.0 + self.mu)), u[1], EARLY_POINTS)
        self.u = np.union1d(u, early)
        self.log_q = np.interp(self.u, u, log_q)
        u = self.u
        p = self.down_probability(u)
        if self._exponential:
            self.repairs_rate = N * self.mu * p if r > 1 else np.zeros(u.size)
        else:
            self._carry_repair_law(p)
            # Repairs end at the failure rate less the growth of the down share.
            self.repairs_rate = N * np.maximum(1.0 - p - np.gradient(p, u), 0.0)
        share = np.minimum(self.repairs_rate * self.stall, 1.0)
        throughput = (
            base.repair_throughput(u, self.mu, p)
            if self._exponential
            else base.throughput_at_down_share(p)
        )
        self.theta_grid = throughput * (1.0 - share)

    def cache_key(self) -> tuple:
        law = self.repair_law
        return (
            value_key(self.base),
            self.mu,
            self.stall,
            law if isinstance(law, str) else value_key(law),
        )

    @property
    def _exponential(self) -> bool:
        law = self.repair_law
        return self.r == 1 or self.mu == 0.0 or (isinstance(law, str) and law == "exponential")

    def down_probability(self, u: ArrayLike) -> np.ndarray:
        """``p(u)``: a group down at ``u`` (:func:`~spare_theory.lifetimes.down_probability`).

        ``pi (1 - e^{-(1 + mu) u})``, ``pi = 1/(1 + mu)``, for exponential repairs.
        """
        return down_probability(u, self.mu, "exponential" if self._exponential else self.repair_law)

    def _carry_repair_law(self, p: np.ndarray) -> None:
        """Rescale the exponential-repair wipe-out hazard to the repair law's down share.

        A wipe-out needs the last of ``r`` hosts to fail while the other
        ``r - 1`` are down, so the hazard scales as ``p(u)^{r-1}``; with ``p``
        of the law and ``p_e`` of exponential repairs of the same mean,
        ``-d log Q/du = -d log Q_e/du (p / p_e)^{r-1}``.  Both ``p`` tend to
        ``pi`` (insensitivity), so the law only moves the transient.
        """
        u = self.u
        p_exp = down_probability(u, self.mu)
        ratio = np.ones(u.size)
        ratio[1:] = (p[1:] / p_exp[1:]) ** (self.r - 1)
        hazard = -np.diff(self.log_q) * 0.5 * (ratio[1:] + ratio[:-1])
        self.log_q = -np.concatenate(([0.0], np.cumsum(hazard)))
        self.slope *= ratio[-1]

    @functools.cached_property
    def mean_time(self) -> float:
        """``int_0^inf Q du``: mean time to wipe-out from a healthy start, units ``1/lambda``."""
        pieces = survival_integral(self.log_q[:-1], self.log_q[1:], np.diff(self.u))
        tail = math.exp(self.log_q[-1]) / -self.slope if self.slope < 0 else math.inf
        return float(np.sum(pieces) + tail)

    def repairs_per_cycle_time(self) -> float:
        """``int Q N mu p du / int Q du``: expected repairs per unit ``u`` over a cycle."""
        return cycle_time_average(self.u, self.log_q, self.repairs_rate)


@cached(maxsize=256, shared=True)
def repair_cycle(
    base: CycleLaw, mu: float, stall: float = 0.0, repair_law: Any = "exponential"
) -> RepairCycle:
    """The :class:`RepairCycle` extending ``base``, built once per set of argument values.

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly
    >>> repair_cycle(CkptOnly(64), 10.0).base
    CkptOnly(N=64, r=1)
    """
    return RepairCycle(base, mu, stall, repair_law)
