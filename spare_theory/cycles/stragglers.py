"""A cycle law whose stragglers slow the job until each is noticed, then fail their group.

A straggler (:class:`~spare_theory.lifetimes.classes.FailureClass` of kind
``"straggler"``, a share ``sigma_c`` of the failures) starts on a group like
any failure, but the group keeps running: every synchronous step takes
``a_c`` (its ``slowdown``) times as long until it is noticed ``s_c = lambda x
detect`` later, and only then does its group fail.  Two things change in the
cycle law, in units of ``1 / lambda`` from the restart's start:

* **survival.**  A group's failure comes ``s_c`` after its start for a
  straggler, at once for the other classes, so it has failed by ``u`` with
  chance ``P(u) = 1 - (1 - sum sigma_c) e^{-u} - sum sigma_c e^{-(u - s_c)^+}``.
  A law of independent exponential groups depends on ``u`` only through
  ``1 - e^{-u}``, so ``Q(u) = Q_0(v(u))`` with

      v(u) = -log(1 - P(u)) = u - log(1 + sum_c sigma_c (e^{min(u, s_c)} - 1)),

  exact without repairs (CKPT-only, Rep, SPARe).  With repairs a group fails
  again after each repair, each time after its window, so the shift becomes
  a rate: the inner law is built at the rate of an up time lengthened by the
  mean window, ``lambda / (1 + sum sigma_c s_c)`` (its repairs and stalls in
  that unit), and ``v(u) = u / (1 + sum sigma_c s_c)`` (``time_scale``).
* **throughput.**  A group not failed by ``u`` is a straggler still unnoticed
  with chance ``pi_c(u) = sigma_c (e^{min(u, s_c)} - 1) / (1 + sum_c' sigma_c'
  (e^{min(u, s_c')} - 1))``, independently of the others; a step takes the
  largest slowdown among them.  With the slowdowns ``a_1 < ... < a_m`` and
  ``G_j = (1 - sum_{c: a_c > a_j} pi_c)^N`` (``G_0``: no straggler unnoticed,
  ``G_m = 1``),

      theta(u) = theta_0(v(u)) (G_0 + sum_j (G_j - G_{j-1}) / a_j),

  the chance that no straggler slows the job taken over all ``N`` groups (the
  groups already down are few beside ``N``; exact for CKPT-only, where no
  group is down while the cycle lasts).

A straggler that wipes the job out does so once noticed, so its restart
starts at once (:meth:`GroupProcess.restarts
<spare_theory.hourly.process.GroupProcess.restarts>`).  Measured against the
event simulation on drawn scenarios in ``tests/test_stragglers.py``.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._caching import value_key
from .base import LOG_CUTOFF, CycleLaw, WrappedLaw
from .repairs import RepairCycle

__all__ = ["StragglerWindows"]

_GRID = 1025
# Gauss-Legendre nodes per segment for the speed given survival to its end.
_GAUSS_POINTS = 8
# Beyond this many groups the groups down given survival are few beside N.
_COUNT_LAW_MAX_GROUPS = 4096


class StragglerWindows(WrappedLaw):
    """``inner`` whose stragglers slow it until noticed and fail their group then (module
    docstring).

    Parameters
    ----------
    inner : CycleLaw
        The law with every failure at once (its groups independent and
        exponential in the time ``u``).
    stragglers : tuple of (float, float, float)
        ``(s_c, sigma_c, a_c)``: each straggler class's time unnoticed in
        units of ``1 / lambda`` (``> 0``), its share of the failures and its
        slowdown (``>= 1``) (:attr:`GroupProcess.stragglers
        <spare_theory.hourly.process.GroupProcess.stragglers>`).
    time_scale : float, optional
        With repairs, ``1 / (1 + sum sigma_c s_c)``: ``inner`` is built at the
        lengthened up time's rate and read at ``u x time_scale``; ``None``
        (without repairs): the exact ``v(u)``.

    Raises
    ------
    ValueError
        Naming ``stragglers`` when a time is not positive and finite, a share
        outside ``(0, 1]`` or a slowdown below 1.

    Examples
    --------
    >>> from spare_theory.cycles.rep import CkptOnly
    >>> law = StragglerWindows(CkptOnly(10), ((0.1, 0.5, 2.0),))
    >>> u = np.array([0.0, 0.05, 1.0])
    >>> np.round(law.theta(u), 4).tolist()  # half speed while a straggler is unnoticed
    [1.0, 0.8882, 0.7995]
    >>> bool(law.logq(0.05) > CkptOnly(10).logq(0.05))  # its group fails later
    True
    """

    def __init__(
        self,
        inner: CycleLaw,
        stragglers: tuple[tuple[float, float, float], ...],
        time_scale: float | None = None,
    ) -> None:
        windows = tuple((float(s), float(share), float(a)) for s, share, a in stragglers)
        if not windows or any(
            not (0.0 < s < np.inf and 0.0 < share <= 1.0 and a >= 1.0) for s, share, a in windows
        ):
            raise ValueError(
                "stragglers must be (time > 0, share in (0, 1], slowdown >= 1) triples, "
                f"got {stragglers!r}"
            )
        if time_scale is not None and not 0.0 < time_scale <= 1.0:
            raise ValueError(f"time_scale must be in (0, 1], got {time_scale!r}")
        super().__init__(inner)
        self.stragglers = windows
        self.time_scale = time_scale
        self.constant_hazard = None  # the hazard bends at each s_c
        self._levels = np.unique([a for _, _, a in windows])

    def _weights(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sigma_c (e^{min(u, s_c)} - 1))`` per class (rows) and their sum plus one."""
        grown = np.array([share * np.expm1(np.minimum(u, s)) for s, share, _ in self.stragglers])
        return grown, 1.0 + grown.sum(axis=0)

    def _v(self, u: np.ndarray) -> np.ndarray:
        """The inner law's time at ``u``: ``-log(1 - P(u))``, or ``u`` times the time scale
        with repairs (module docstring)."""
        if self.time_scale is not None:
            return u * self.time_scale
        return u - np.log(self._weights(u)[1])

    def _speed(self, pending: np.ndarray, healthy: np.ndarray | float) -> np.ndarray:
        """``G_0 + sum_j (G_j - G_{j-1}) / a_j`` from each class's ``pi_c`` (rows) over
        ``healthy`` groups: the mean step speed."""
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
        (chance ``1 - omega``), so ``pi_c = (L_c + (1 - omega) E_c) / (1 - P(end) + (1 -
        omega)(P(end) - P(u)))``.
        """
        v_grid, down, ends = self._down
        omega = np.interp(self._v(end), v_grid, ends)
        kept = 1.0 - omega
        healthy = self.N - np.interp(self._v(u), v_grid, down)
        if self.time_scale is not None:
            # Repaired groups straggle again: a group not down is in a class's window for
            # the stationary share sigma_c s_c time_scale of its time (from a start where
            # none is, so the window is min(u, s_c) long), split as below.
            lengths = []
            for s, share, _ in self.stragglers:
                late = np.maximum(u - np.maximum(end - s, 0.0), 0.0)
                early = np.maximum(np.minimum(u, s) - late, 0.0)
                lengths.append(share * self.time_scale * (late + kept * early))
            return self._speed(np.array(lengths), healthy)
        # Masses scaled by e^u, where they are of order one (P(end) - P(u) and the
        # survivals underflow far into a cycle).
        pending = []
        for s, share, _ in self.stragglers:
            late = share * np.maximum(np.expm1(np.minimum(u - end + s, u)), 0.0)
            noticed_by_end = np.minimum(u, np.maximum(end - s, 0.0))
            early = share * np.maximum(np.exp(np.minimum(s, u)) - np.exp(u - noticed_by_end), 0.0)
            pending.append(late + kept * early)
        alive_end, alive_u = np.exp(u - end) * self._weights(end)[1], self._weights(u)[1]
        norm = alive_end + kept * (alive_u - alive_end)
        return self._speed(np.array(pending) / norm, healthy)

    def segment_theta(self, start: np.ndarray, k: np.ndarray, d: float) -> np.ndarray:
        """The throughput over the compute given survival to the segment's end ``start + k +
        d`` (:meth:`_speed_given`, averaged over the compute by Gauss-Legendre; at
        ``r = 1`` every straggler noticed before the end would have ended the cycle)."""
        start, k = np.broadcast_arrays(np.asarray(start, float), np.asarray(k, float))
        nodes, weights = np.polynomial.legendre.leggauss(_GAUSS_POINTS)
        u = start[None, :] + k[None, :] * (nodes[:, None] + 1.0) / 2.0
        speed = weights @ self._speed_given(u, (start + k + d)[None, :]) / 2.0
        return self.inner.theta(self._v(start + k / 2)) * speed

    def logq(self, u: ArrayLike) -> np.ndarray:
        return self.inner.logq(self._v(np.asarray(u, dtype=float)))

    def theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.theta(self._v(u)) * self._speed_given(u, u)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.batch_theta(self._v(u)) * self._speed_given(u, u)

    def checkpoint_loss(self, start: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray] | None:
        return self.inner.checkpoint_loss(self._v(np.asarray(start, dtype=float)), d)

    def cache_key(self) -> tuple:
        return (type(self).__qualname__, value_key(self.inner), self.stragglers, self.time_scale)

    def __repr__(self) -> str:
        scale = "" if self.time_scale is None else f", time_scale={self.time_scale:.6g}"
        return f"StragglerWindows({self.inner!r}, stragglers={self.stragglers!r}{scale})"
