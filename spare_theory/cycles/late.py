"""A cycle law whose failures reach it late: stragglers and silent corruption.

Two kinds of :class:`~spare_theory.lifetimes.classes.FailureClass` start on a
group like any failure, but the group keeps running until the failure is
noticed ``s_c = lambda x detect`` later (``sigma_c`` the class's share of the
failures):

- a **straggler** slows every synchronous step ``a_c`` (its ``slowdown``)
  times until then, and only then fails its group;
- a **corruption** computes on at full speed and then ends the cycle,
  whatever the redundancy, sending the job ``k_c`` checkpoints back
  (:meth:`LateFailures.rollback_segments`).

In units of ``1 / lambda`` from the restart's start:

* **survival.**  A group has failed by ``u`` (a failure at once, or a
  straggler noticed) with chance ``F(u)``, and been found corrupted with
  chance ``K(u) = sum_corr sigma_c (1 - e^{-(u - s_c)^+})``; it is neither
  with chance ``A(u) = e^{-u} D(u)``, ``D(u) = 1 + sum_late sigma_c
  (e^{min(u, s_c)} - 1)``.  A law of independent exponential groups depends on
  ``u`` only through the chance that a group has failed, so given no
  corruption found, ``Q(u) = (1 - K(u))^N Q_0(v(u))`` with

      v(u) = -log(A(u) / (1 - K(u))) = u - log D(u) + log(1 - K(u)),

  exact without repairs (CKPT-only, Rep, SPARe).  With repairs a group fails
  again after each repair, each time after its window, so the shift becomes
  a rate: the inner law is built at the failures' rate of an up time
  lengthened by the mean straggler window, ``lambda (1 - sum_corr sigma_c) /
  (1 + sum_strag sigma_c s_c)``, read at ``v = u x time_scale`` (that ratio),
  and the corruptions end the cycle at ``N sigma_c / (1 + sum_strag sigma s)``
  per unit ``u`` once ``s_c`` has passed.
* **throughput.**  A group not failed at ``u`` is a straggler still unnoticed
  with chance ``pi_c(u) = sigma_c (e^{min(u, s_c)} - 1) / D(u)``,
  independently of the others; a step takes the largest slowdown among them.
  With the slowdowns ``a_1 < ... < a_m`` and ``G_j = (1 - sum_{c: a_c > a_j}
  pi_c)^{N - f}`` (``G_0``: none unnoticed, ``G_m = 1``; ``f`` the groups
  down given survival, from the count law or a repair cycle's down share),

      theta(u) = theta_0(v(u)) (G_0 + sum_j (G_j - G_{j-1}) / a_j).

  The work a segment keeps is that of the runs that outlive its checkpoint,
  which rules out the stragglers noticed before then whose failure would have
  ended the cycle: :meth:`LateFailures.segment_theta`.

A straggler or a corruption that ends the cycle does so once noticed, so its
restart starts at once (:meth:`GroupProcess.restarts
<spare_theory.hourly.process.GroupProcess.restarts>`).  Measured against the
event simulation on drawn scenarios in ``tests/test_stragglers.py`` and
``tests/test_corruption.py``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, special

from .._caching import value_key
from .base import LOG_CUTOFF, CycleLaw, WrappedLaw
from .repairs import RepairCycle

__all__ = ["LateFailures"]

_GRID = 1025
# Gauss-Legendre nodes per segment for the speed given survival to its end.
_GAUSS_POINTS = 8
# Beyond this many groups the groups down given survival are few beside N.
_COUNT_LAW_MAX_GROUPS = 4096


class LateFailures(WrappedLaw):
    """``inner`` whose stragglers slow it until noticed and whose corruptions end it when
    found (module docstring).

    Parameters
    ----------
    inner : CycleLaw
        The law with every failure at once (its groups independent and
        exponential in the time ``u``).
    stragglers : tuple of (float, float, float)
        ``(s_c, sigma_c, a_c)``: each straggler class's time unnoticed in
        units of ``1 / lambda`` (``> 0``), its share and its slowdown
        (``>= 1``) (:attr:`GroupProcess.stragglers
        <spare_theory.hourly.process.GroupProcess.stragglers>`).
    corruptions : tuple of (float, float, int)
        ``(s_c, sigma_c, k_c)``: each corruption class's time undetected
        (``>= 0``), its share and the checkpoints it sends the job back
        (``>= 1``) (:attr:`GroupProcess.corruptions
        <spare_theory.hourly.process.GroupProcess.corruptions>`).
    time_scale : float, optional
        With repairs, the failures' rate over ``lambda`` (module docstring):
        ``inner`` is built at it and read at ``u x time_scale``; ``None``
        (without repairs): the exact ``v(u)``.

    Raises
    ------
    ValueError
        Naming ``stragglers`` or ``corruptions`` when a time is negative (or
        a straggler's not positive) or not finite, a share outside
        ``(0, 1]``, a slowdown below 1 or a rollback below 1; naming
        ``time_scale`` outside ``(0, 1]``.

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly
    >>> law = LateFailures(CkptOnly(10), stragglers=((0.1, 0.5, 2.0),))
    >>> u = np.array([0.0, 0.05, 1.0])
    >>> np.round(law.theta(u), 4).tolist()  # half speed while a straggler is unnoticed
    [1.0, 0.8882, 0.7995]
    >>> bool(law.logq(0.05) > CkptOnly(10).logq(0.05))  # its group fails later
    True
    >>> sdc = LateFailures(CkptOnly(10), corruptions=((0.1, 0.5, 3),))
    >>> round(sdc.rollback_segments(), 3)  # two segments more, in a third of the cycles
    0.645
    """

    def __init__(
        self,
        inner: CycleLaw,
        stragglers: tuple[tuple[float, float, float], ...] = (),
        corruptions: tuple[tuple[float, float, int], ...] = (),
        time_scale: float | None = None,
    ) -> None:
        slow = tuple((float(s), float(share), float(a)) for s, share, a in stragglers)
        if any(not (0.0 < s < np.inf and 0.0 < share <= 1.0 and a >= 1.0) for s, share, a in slow):
            raise ValueError(
                "stragglers must be (time > 0, share in (0, 1], slowdown >= 1) triples, "
                f"got {stragglers!r}"
            )
        found = tuple((float(s), float(share), int(k)) for s, share, k in corruptions)
        if any(not (0.0 <= s < np.inf and 0.0 < share <= 1.0 and k >= 1) for s, share, k in found):
            raise ValueError(
                "corruptions must be (time >= 0, share in (0, 1], checkpoints back >= 1) "
                f"triples, got {corruptions!r}"
            )
        if not slow and not found:
            raise ValueError("LateFailures needs stragglers or corruptions")
        if time_scale is not None and not 0.0 < time_scale <= 1.0:
            raise ValueError(f"time_scale must be in (0, 1], got {time_scale!r}")
        super().__init__(inner)
        self.stragglers, self.corruptions, self.time_scale = slow, found, time_scale
        self.constant_hazard = None  # the hazard bends at each s_c
        #: The last :meth:`_segment_speed` asked: ``(start, k, d, speed)``.
        self._last_speed: tuple | None = None
        self._levels = np.unique([a for _, _, a in slow])
        #: ``(s_c, sigma_c)`` of every class that reaches its group late.
        self._late = tuple((s, share) for s, share, _ in (*slow, *found))
        #: With repairs, the share of a group's time up that its failure clock runs (the
        #: rest in straggler windows): ``1 / (1 + sum_strag sigma_c s_c)``.
        self._up_share = 1.0 / (1.0 + sum(s * share for s, share, _ in slow))

    def _d(self, u: np.ndarray) -> np.ndarray:
        """``D(u) = 1 + sum_late sigma_c (e^{min(u, s_c)} - 1)``: ``A(u) e^u``."""
        return 1.0 + sum(share * np.expm1(np.minimum(u, s)) for s, share in self._late)

    def _log_clean(self, u: np.ndarray) -> np.ndarray:
        """``log(1 - K(u))`` per group: no corruption found by ``u`` (with repairs, the
        rate of the module docstring)."""
        clean = np.zeros(np.shape(u))
        for s, share, _ in self.corruptions:
            if self.time_scale is not None:
                clean -= share * self._up_share * np.maximum(u - s, 0.0)
            else:
                clean -= share * -np.expm1(-np.maximum(u - s, 0.0))  # K(u), for now
        return clean if self.time_scale is not None else np.log1p(clean)

    def _v(self, u: np.ndarray) -> np.ndarray:
        """The inner law's time at ``u`` (module docstring)."""
        if self.time_scale is not None:
            return u * self.time_scale
        return u - np.log(self._d(u)) + self._log_clean(u)

    def _speed(self, pending: np.ndarray, healthy: np.ndarray | float) -> np.ndarray:
        """``G_0 + sum_j (G_j - G_{j-1}) / a_j`` from each straggler class's ``pi_c`` (rows)
        over ``healthy`` groups: the mean step speed."""
        slowdowns = np.array([a for _, _, a in self.stragglers])
        below = (1.0 - pending.sum(axis=0)) ** healthy  # G_0: none unnoticed
        speed = below.copy()
        for a in self._levels:
            at_most = (1.0 - pending[slowdowns > a].sum(axis=0)) ** healthy
            speed += (at_most - below) / a
            below = at_most
        return speed

    @functools.cached_property
    def _down(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(v, f(v), omega(v))`` on a grid of the inner law's time: the groups down given
        survival (its count law; a repair cycle's down share; none when neither is known
        or ``N`` is large, where they are few beside ``N``) and the chance that a failure
        then ends the cycle, ``-d log Q_0 / dv / (N - f)`` (1 when ``r = 1``)."""
        law = self.inner
        while isinstance(law, WrappedLaw):
            law = law.inner
        v = np.linspace(0.0, max(float(law.u_at(-LOG_CUTOFF)), 1e-9), _GRID)
        down = np.zeros(v.size)
        if isinstance(law, RepairCycle):
            down = self.N * law.down_probability(v)
        elif self.r > 1 and self.N <= _COUNT_LAW_MAX_GROUPS:
            try:
                log_s, cost = law.count_law()
            except ValueError:
                pass
            else:
                f = np.arange(self.N + 1)
                failed = -np.expm1(-np.maximum(v, 1e-300))[:, None]
                log_w = (
                    special.gammaln(self.N + 1)
                    - special.gammaln(f + 1)
                    - special.gammaln(self.N - f + 1)
                    + f * np.log(failed)
                    - (self.N - f) * v[:, None]
                    + np.asarray(log_s)
                    - np.log(np.asarray(cost, dtype=float))
                )
                down = np.exp(log_w - special.logsumexp(log_w, axis=1, keepdims=True)) @ f
        hazard = -np.gradient(self.inner.logq(v), v)
        ends = 1.0 if self.r == 1 else np.clip(hazard / (self.N - down), 0.0, 1.0)
        return v, down, np.broadcast_to(ends, v.shape)

    def _speed_given(self, u: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The mean step speed at ``u`` given survival to ``end >= u`` (module docstring).

        A group not down at ``u`` is a straggler unnoticed then with arrival
        mass ``L`` noticed after ``end`` and ``E`` before it; the latter is
        consistent with survival only if its failure did not end the cycle
        (chance ``1 - omega``), and a corruption found before ``end`` never
        is, so ``pi_c = (L_c + (1 - omega) E_c) / (A(end) + (1 - omega)(A(u) -
        A(end) - K(end) + K(u)))``.
        """
        if not self.stragglers:
            return np.ones(np.broadcast_shapes(np.shape(u), np.shape(end)))
        v_grid, down, ends = self._down
        kept = 1.0 - np.interp(self._v(end), v_grid, ends)
        healthy = self.N - np.interp(self._v(u), v_grid, down)
        if self.time_scale is not None:
            # Repaired groups straggle again: a group not down is in a class's window for
            # the stationary share sigma_c s_c / (1 + sum sigma s) of its time (from a start where
            # none is, so the window is min(u, s_c) long), split as below.
            lengths = []
            for s, share, _ in self.stragglers:
                late = np.maximum(u - np.maximum(end - s, 0.0), 0.0)
                early = np.maximum(np.minimum(u, s) - late, 0.0)
                lengths.append(share * self._up_share * (late + kept * early))
            return self._speed(np.array(lengths), healthy)
        # Masses scaled by e^u, where they are of order one (the survivals underflow far
        # into a cycle).
        pending = []
        for s, share, _ in self.stragglers:
            late = share * np.maximum(np.expm1(np.minimum(u - end + s, u)), 0.0)
            noticed_by_end = np.minimum(u, np.maximum(end - s, 0.0))
            early = share * np.maximum(np.exp(np.minimum(s, u)) - np.exp(u - noticed_by_end), 0.0)
            pending.append(late + kept * early)
        alive_end, alive_u = np.exp(u - end) * self._d(end), self._d(u)
        found = sum(
            share * np.maximum(np.exp(np.minimum(s, u)) - np.exp(u - np.maximum(end - s, 0.0)), 0)
            for s, share, _ in self.corruptions
        )
        norm = alive_end + kept * (alive_u - alive_end - found)
        return self._speed(np.array(pending) / norm, healthy)

    def segment_theta(self, start: np.ndarray, k: np.ndarray, d: float) -> np.ndarray:
        """The throughput over the compute given survival to the segment's end ``start + k +
        d`` (:meth:`_speed_given`, averaged over the compute by Gauss-Legendre; at
        ``r = 1`` every straggler noticed before the end would have ended the cycle)."""
        middle = np.asarray(start, float) + np.asarray(k, float) / 2
        return self.inner.theta(self._v(middle)) * self._segment_speed(start, k, d)

    def _segment_speed(self, start: np.ndarray, k: np.ndarray, d: float) -> np.ndarray:
        """:meth:`_speed_given` averaged over each segment's compute given survival to its
        end (Gauss-Legendre); the last segments' kept, as the renewal sums ask for the
        throughput and then the losses of the same segments."""
        last = self._last_speed
        if last is not None and last[0] is start and last[1] is k and last[2] == d:
            return last[3]
        s, w = np.broadcast_arrays(np.asarray(start, float), np.asarray(k, float))
        nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_POINTS)
        u = s[None, :] + w[None, :] * (nodes[:, None] + 1.0) / 2.0
        speed = weights @ self._speed_given(u, (s + w + d)[None, :]) / 2.0
        self._last_speed = (start, k, d, speed)
        return speed

    def _losses(self, v: np.ndarray, speed: np.ndarray) -> dict[str, np.ndarray]:
        """``inner``'s losses at its time ``v``, and the slowed steps': ``1 - speed`` of the
        time ``inner`` computes (a step at ``1 / a`` of its speed takes ``1 - 1 / a`` of
        its time beyond its work)."""
        losses = self.inner.theta_losses(v)
        if self.stragglers:
            busy = 1.0 - sum(losses.values(), np.zeros(np.shape(v)))
            losses["slowdown"] = busy * (1.0 - speed)
        return losses

    def theta_losses(self, u: ArrayLike) -> dict[str, np.ndarray]:
        u = np.asarray(u, dtype=float)
        return self._losses(self._v(u), self._speed_given(u, u))

    def segment_losses(self, start: np.ndarray, k: np.ndarray, d: float) -> dict[str, np.ndarray]:
        middle = np.asarray(start, float) + np.asarray(k, float) / 2
        if not self.stragglers:  # no slowed steps: the inner law's own losses
            return self.inner.theta_losses(self._v(middle))
        return self._losses(self._v(middle), self._segment_speed(start, k, d))

    def rollback_segments(self) -> float:
        """Expected checkpoint segments a cycle's end sends the job back beyond the last
        checkpoint: ``sum_c (k_c - 1) P_c``, ``P_c`` the chance that corruption class ``c``
        ends the cycle (:meth:`late_endings`)."""
        endings = self.late_endings()[len(self.stragglers) :]
        return math.fsum((k - 1) * p for (_, _, k), p in zip(self.corruptions, endings))

    def late_endings(self) -> tuple[float, ...]:
        """The chance that each late class ends the cycle, stragglers then corruptions in
        their order: ``P_c = int_0^inf h_c(u) Q(u) du``.

        A corruption ends it at the rate it is found given survival (the
        groups up, ``N - f``, times ``sigma_c e^{-(u - s_c)} / A(u)``, or the
        repairs' rate); a straggler when its group's failure, once noticed,
        ends it: the rest of the hazard ``-d log Q / du``, shared among the
        classes that fail a group by their density of failing at ``u``
        (``sigma_c e^{-(u - s_c)}`` past its window against ``(1 - sum_late
        sigma) e^{-u}`` at once; with repairs their shares).  The trapezoid
        rule on the cycle's span, piecewise between the windows' ends, once per law.

        Examples
        --------
        >>> from spare_theory.cycles.rep import CkptOnly
        >>> law = LateFailures(CkptOnly(10), corruptions=((0.1, 0.5, 3),))
        >>> [round(p, 4) for p in law.late_endings()]  # half the failures, found late
        [0.3224]
        """
        return self._late_endings

    @functools.cached_property
    def _late_endings(self) -> tuple[float, ...]:
        # Piecewise between the windows' ends, where the rates jump (the trapezoid rule
        # across a jump is off by half of it times a step: 0.2 % on 27 groups).
        end = max(self.u_at(-LOG_CUTOFF), 1e-9)
        edges = np.unique([0.0, end, *(s for s, _ in self._late if s < end)])
        points = max(64, 4 * _GRID // (edges.size - 1))
        totals = np.zeros(len(self.stragglers) + len(self.corruptions))
        v_grid, down, _ = self._down
        for lo, hi in itertools.pairwise(edges):
            u = np.linspace(lo, hi, points)
            started = (lo + hi) / 2 > np.array([s for s, _ in self._late])
            log_q = self.logq(u)
            up = self.N - np.interp(self._v(u), v_grid, down)
            found = []
            for on, (s, share, _) in zip(started[len(self.stragglers) :], self.corruptions):
                if not on:
                    found.append(np.zeros(u.size))
                elif self.time_scale is not None:
                    found.append(share * self._up_share * up)
                else:
                    # Given survival, a group up at u (chance A(u) = e^{-u} D(u)) is found
                    # corrupted at the density sigma_c e^{-(u - s_c)} / A(u).
                    found.append(up * share * np.exp(s) / self._d(u))
            failing = np.maximum(-np.gradient(log_q, u) - sum(found, np.zeros(u.size)), 0.0)
            if self.time_scale is not None:
                clean = 1.0 - sum(share for _, share, _ in self.corruptions)
                weights = [
                    on * share / clean for on, (_, share, _) in zip(started, self.stragglers)
                ]
                at_once = 1.0
            else:
                # Per group, in units of e^{-u}: at once, and each straggler past its window.
                weights = [
                    on * share * math.exp(s) for on, (s, share, _) in zip(started, self.stragglers)
                ]
                at_once = 1.0 - sum(share for _, share in self._late) + sum(weights)
            q = np.exp(log_q)
            rates = (*(failing * (w / at_once) for w in weights), *found)
            totals += [integrate.trapezoid(rate * q, u) for rate in rates]
        return tuple(float(x) for x in totals)

    def logq(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.N * self._log_clean(u) + self.inner.logq(self._v(u))

    def theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.theta(self._v(u)) * self._speed_given(u, u)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.batch_theta(self._v(u)) * self._speed_given(u, u)

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        return self.inner.checkpoint_loss(self._v(np.asarray(start, dtype=float)), d)

    def cache_key(self) -> tuple:
        return (
            type(self).__qualname__,
            value_key(self.inner),
            self.stragglers,
            self.corruptions,
            self.time_scale,
        )

    def __repr__(self) -> str:
        scale = "" if self.time_scale is None else f", time_scale={self.time_scale:.6g}"
        return (
            f"LateFailures({self.inner!r}, stragglers={self.stragglers!r}, "
            f"corruptions={self.corruptions!r}{scale})"
        )
