"""Renewal failure clocks of ``N`` groups, lifetimes drawn from one law in batches.

Both event simulations keep, per group, the time at which its current
lifetime runs out; when the failure is dealt with, the clock is renewed by a
fresh draw of the lifetime law (a renewal process per group).  They differ
only in how they start and in how they are driven, so one class serves both:

- the step-level simulator (:mod:`spare_theory.steps`): every clock starts
  fresh at time 0 (``start="fresh"``; or as old as
  ``StepScenario.clock_age_seconds`` says, or in equilibrium), draws come in batches of 4096 and a
  lifetime is floored at ``1e-9`` s as the published simulator does (a zero
  lifetime would fail again at the same check); clocks are read through
  :attr:`RenewalClocks.next` and renewed by :meth:`RenewalClocks.renew`;
- the hour-level event simulation (:mod:`spare_theory.hourly`): clocks are
  in equilibrium when the run starts (``start="equilibrium"``: first draws
  from :func:`~spare_theory.lifetimes.laws.equilibrium_law`), batches of
  1024, and it asks for the earliest expiry through a heap of ``(expiry,
  group)`` (:meth:`RenewalClocks.next_healthy`, :meth:`RenewalClocks.fire`).

Draws are taken from the batch in order; a batch is drawn when the current
one cannot serve a request, with the rest of the current one kept in front,
so the stream consumed from ``rng`` is a function of the requests only.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from .._validation import as_choice, as_count, as_real
from .laws import equilibrium_law

__all__ = ["CLOCK_STARTS", "RenewalClocks"]

#: Accepted values of ``start``: fresh clocks at 0, or clocks in equilibrium.
CLOCK_STARTS = ("fresh", "equilibrium")


class RenewalClocks:
    """Renewal failure clocks of ``groups`` groups with lifetimes drawn from ``law``.

    ``next[g]`` is the time at which group ``g``'s current lifetime runs out.
    At creation it is a lifetime drawn from ``law`` (``start="fresh"``),
    from its residual-life law ``F_e(t) = int_0^t sf / m``
    (``start="equilibrium"``: the group has been running for long), or what
    is left of the lifetime running at age ``start`` (a number: fresh that
    long ago, renewed from the batch stream at each expiry since); a renewal
    at time ``at`` sets ``next[g] = at + L`` with ``L`` the next lifetime of
    the batch stream.  Times are in the unit of ``law``.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Lifetime law of one group (support in ``[0, inf)``).
    groups : int
        Number of clocks ``N >= 1``.
    rng : numpy.random.Generator
        Source of every draw (shared with the caller's other draws).
    batch : int
        Lifetimes drawn at once, ``>= 1`` (a request for more draws that many).
    start : {"fresh", "equilibrium"} or float
        Law of the first lifetimes (fresh ones come from the batch stream;
        equilibrium ones are drawn directly, before any batch), or the
        clocks' age when the run starts (``>= 0``, the law's unit).
    floor : float
        Every lifetime (the first ones included) is at least ``floor``, ``>= 0``.

    Raises
    ------
    ValueError
        Naming the argument.

    Examples
    --------
    >>> from scipy import stats
    >>> law = stats.expon(scale=10.0)
    >>> clocks = RenewalClocks(law, 3, np.random.default_rng(1), batch=8)
    >>> first = law.rvs(size=8, random_state=np.random.default_rng(1))
    >>> bool(np.array_equal(clocks.next, first[:3]))
    True
    >>> clocks.renew(1, 5.0)
    >>> bool(clocks.next[1] == 5.0 + first[3])
    True
    >>> t, g = clocks.next_healthy(np.zeros(3, dtype=bool))
    >>> g == int(np.argmin(clocks.next)) and clocks.fire() == g
    True
    """

    def __init__(
        self,
        law: Any,
        groups: int,
        rng: np.random.Generator,
        *,
        batch: int = 4096,
        start: str | float = "fresh",
        floor: float = 0.0,
    ) -> None:
        groups = as_count(groups, "groups")
        self._law, self._rng = law, rng
        self._batch = as_count(batch, "batch")
        self._floor = as_real(floor, "floor", minimum=0.0)
        self._buffer = np.empty(0)
        self._used = 0
        self._heap: list[tuple[float, int]] | None = None
        if not isinstance(start, str):
            # Fresh `age` ago and renewed at each expiry since; the run starts at 0.
            age = as_real(start, "start", minimum=0.0)
            self.next = self.draw(groups).copy()
            while (late := np.flatnonzero(self.next <= age)).size and age > 0.0:
                self.next[late] += self.draw(late.size)
            self.next -= age
        elif as_choice(start, "start", CLOCK_STARTS) == "fresh":
            self.next = self.draw(groups).copy()
        else:
            first = equilibrium_law(law).rvs(size=groups, random_state=rng)
            self.next = np.maximum(np.atleast_1d(np.asarray(first, dtype=float)), self._floor)

    def _refill(self, n: int) -> None:
        fresh = np.asarray(self._law.rvs(size=max(self._batch, n), random_state=self._rng))
        self._buffer = np.concatenate(
            [self._buffer[self._used :], np.maximum(fresh.astype(float), self._floor)]
        )
        self._used = 0

    def draw(self, n: int) -> np.ndarray:
        """The next ``n`` lifetimes of the batch stream (a view into the batch: copy to keep)."""
        if self._used + n > self._buffer.size:
            self._refill(n)
        out = self._buffer[self._used : self._used + n]
        self._used += n
        return out

    def renew(self, idx: np.ndarray | int, at: np.ndarray | float) -> None:
        """Renew the clocks ``idx`` at times ``at``: ``next[idx] = at + next lifetimes``."""
        if np.ndim(idx):
            self.next[idx] = at + self.draw(np.size(idx))
        else:
            self.next[idx] = at + self.draw(1)[0]
        self._heap = None  # rebuilt from `next` if the heap is asked for again

    def _expiries(self) -> list[tuple[float, int]]:
        if self._heap is None:
            self._heap = [(float(x), g) for g, x in enumerate(self.next)]
            heapq.heapify(self._heap)
        return self._heap

    def _replace_top(self, heap: list[tuple[float, int]]) -> int:
        t, g = heap[0]
        # draw(1)[0] without its slice: this runs once per event of the hour simulation.
        if self._used == self._buffer.size:
            self._refill(1)
        self._used += 1
        t_next = t + float(self._buffer[self._used - 1])
        heapq.heapreplace(heap, (t_next, g))
        self.next[g] = t_next
        return g

    def next_healthy(self, down: np.ndarray) -> tuple[float, int]:
        """``(expiry, group)`` of the earliest clock of a healthy group.

        Clocks of down groups (``down[g]`` true) that expire first are
        renewed from their expiry silently, in order of expiry.  At least
        one group must be healthy (the caller counts them; checking here
        would cost ``O(N)`` per event).
        """
        heap = self._heap or self._expiries()
        while True:
            t, g = heap[0]
            if not down[g]:
                return t, g
            self._replace_top(heap)

    def fire(self) -> int:
        """Renew the earliest clock from its expiry; return its group."""
        return self._replace_top(self._heap or self._expiries())
