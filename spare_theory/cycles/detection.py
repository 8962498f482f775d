"""A cycle law whose failures go unnoticed for a while: the job stalls until each is detected.

A failure of a class with a detection time (a hang behind a timeout,
:class:`~spare_theory.lifetimes.classes.FailureClass`) is noticed ``s =
lambda x detect`` after it happens, and until then the whole synchronous job
makes no progress; then the strategy goes on as after any failure.  A failure
that wipes the job out is priced by the restart, which starts once it is
noticed (:attr:`GroupProcess.restart_minutes
<spare_theory.hourly.process.GroupProcess.restart_minutes>`).  One that does
not stalls the job: it computes at ``u`` only if every failure of a class
``c`` in ``(u - s_c, u]`` has been noticed (the simulation's: the job waits for
the last failure unnoticed), so

    theta(u) = theta_0(u) x ratio(u),    Q(u) = Q_0(u),

``ratio`` the chance that every failure is noticed, weighed by the throughput
(:func:`noticed_rate`), each failure's class drawn by share.  The survival is
unchanged (the groups fail as before, noticed or not).  Without
repairs the factor is exact through the law's count law (a recent failure also
leaves more groups down, so it is not the chance of no failure alone:
:func:`noticed_rate`); with exponential repairs the same from the groups'
independent up and down times.  Other laws are refused by name.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .._caching import value_key
from .._validation import NoClosedFormError
from ..lifetimes.laws import EXPONENTIAL
from .base import LOG_CUTOFF, CycleLaw, WrappedLaw
from .repairs import RepairCycle

__all__ = ["DetectionStall", "noticed_rate"]

_GRID = 1025


def noticed_rate(
    law: CycleLaw, detections: tuple[tuple[float, float], ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(u, ratio(u), chance(u))``: a grid, the throughput's factor for failures unnoticed
    for a while, and the chance given survival that every failure is noticed (the share of
    the time the job computes).

    ``detections``: ``(s_c, share_c)``, each class's time unnoticed (units
    ``1 / lambda``) and its share of the failures.  Without repairs (a law
    with a count law on exponential lifetimes) the factor is exact: a group
    has failed by ``u`` and been noticed with chance
    ``P(u) = sum_c share_c (1 - e^{-(u - s_c)^+})`` (its class drawn alone),
    so with ``s_f`` the chance that ``f`` failed groups leave no wipe-out and
    ``c_f`` the step cost

        ratio(u) = sum_f C(N, f) P(u)^f e^{-(N - f) u} s_f / c_f
                   / sum_f C(N, f) (1 - e^{-u})^f e^{-(N - f) u} s_f / c_f,

    the throughput given survival and every failure noticed over the
    throughput given survival (a recent failure also means a group more
    down); ``chance`` is the same without the ``1 / c_f``.  The two differ
    where the throughput falls with the groups down (SPARe): the job computes
    ``chance`` of the time, at a throughput above the mean.  With exponential
    repairs, the same from the groups' independent up and down times
    (:func:`_repaired`).

    Raises
    ------
    NoClosedFormError
        For a law with neither (domains, lemons, renewal clocks, a repair law
        other than exponential), naming ``failure_classes``.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> u, ratio, chance = noticed_rate(Rep(16, 2), ((0.01, 1.0),))
    >>> round(float(ratio[0]), 6), bool(ratio[-1] > ratio[1])  # none at the start
    (1.0, True)
    >>> bool(np.allclose(ratio, chance))  # Rep's throughput: the same with a group down
    True
    """
    N = law.N
    if isinstance(law, RepairCycle):
        return _repaired(law, detections)
    if law.lifetimes is not EXPONENTIAL:
        raise _refusal(law)
    try:
        log_s, cost = law.count_law()
    except ValueError:
        raise _refusal(law) from None
    end = law.u_at(-LOG_CUTOFF)
    u = np.linspace(0.0, end if np.isfinite(end) and end > 0 else 1.0, _GRID)
    f = np.arange(N + 1)[None, :]
    log_alive = (
        special.gammaln(N + 1)
        - special.gammaln(f + 1)
        - special.gammaln(N - f + 1)
        + np.asarray(log_s)[None, :]
        - (N - f) * u[:, None]
    )
    log_cost = np.log(np.asarray(cost, dtype=float))[None, :]

    def log_mass(failed: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``log sum_f C(N, f) failed^f e^{-(N - f) u} s_f x weight_f``."""
        with np.errstate(divide="ignore"):
            log_failed = np.log(failed)[:, None]
        terms = f * np.maximum(log_failed, -1e300)  # f = 0 at failed = 0: the term is 0
        return special.logsumexp(weights + terms, axis=1)

    noticed = np.zeros(u.size)
    for s, share in detections:
        noticed += share * -np.expm1(-np.maximum(u - s, 0.0))
    failed = -np.expm1(-u)
    found = []
    for weights in (log_alive - log_cost, log_alive):
        log_ratio = log_mass(noticed, weights) - log_mass(failed, weights)
        found.append(np.exp(np.minimum(np.nan_to_num(log_ratio, nan=0.0), 0.0)))
    return u, found[0], found[1]


def _repaired(
    law: RepairCycle, detections: tuple[tuple[float, float], ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`noticed_rate` of a repair cycle: groups independent, each up ``Exp(1)`` and
    down ``Exp(mu)``.  A group has no failure in a window of ``s`` with chance
    ``quiet(s) = (1 - p) e^{-s} + p (e^{-mu s} + mu e^{-s} (1 - e^{-(mu - 1) s}) / (mu - 1))``
    (``p`` its down share at the window's start), and is down at ``u`` with its
    failure noticed with chance ``p(u - s) e^{-mu s}``; each mixed over the
    classes by share (one failure a group within a window: a repair and a
    second failure inside a detection time are dropped).  The factor is
    ``quiet^N e^{s h(u)}`` (``h``: the wipe-out hazard, failures survival
    rules out; ``s`` the mean), the chance, times the throughput at the noticed
    groups' down share ``p'`` over that at ``p(u)``."""
    if not law._exponential:
        raise NoClosedFormError(
            "failure_classes with a detection time are modelled with exponential repairs "
            f"(repair_law {law.repair_law!r}): drop one (simulate_training runs the combination)"
        )
    u, mu = law.u, law.mu
    quiet = np.zeros(u.size)
    down = np.zeros(u.size)
    for s, share in detections:
        window = np.minimum(u, s)
        p = law.down_probability(u - window)
        if abs(mu - 1.0) > 1e-9:
            back = mu * np.exp(-window) * -np.expm1(-(mu - 1.0) * window) / (mu - 1.0)
        else:
            back = window * np.exp(-window)
        quiet += share * ((1.0 - p) * np.exp(-window) + p * (np.exp(-mu * window) + back))
        down += share * p * np.exp(-mu * window)
    mean = sum(s * share for s, share in detections)
    hazard = np.maximum(-np.gradient(law.log_q, u), 0.0)
    base = law.base.throughput_at_down_share(law.down_probability(u))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(base > 0, law.base.throughput_at_down_share(down / quiet) / base, 1.0)
    log_chance = np.minimum(law.N * np.log(quiet) + np.minimum(u, mean) * hazard, 0.0)
    log_ratio = np.minimum(log_chance + np.log(shift), 0.0)
    return u, np.exp(log_ratio), np.exp(log_chance)


def _refusal(law: CycleLaw) -> NoClosedFormError:
    return NoClosedFormError(
        f"failure_classes with a detection time have no model for {type(law).__name__} "
        "(failure domains, lemons or renewal clocks beside redundancy): drop them or the "
        "detection time (simulate_training runs the combination)"
    )


class DetectionStall(WrappedLaw):
    """``inner`` whose throughput waits for every failure to be noticed (module docstring).

    Parameters
    ----------
    inner : CycleLaw
        The law with failures noticed at once (``r >= 2``: one that outlives
        a failure).
    detections : tuple of (float, float)
        ``(s_c, share_c)``: each class's time unnoticed in units of
        ``1 / lambda`` (``>= 0``) and its share of the failures
        (:attr:`GroupProcess.detections
        <spare_theory.hourly.process.GroupProcess.detections>`).

    Raises
    ------
    ValueError
        Naming ``detections`` when a time is negative or not finite.
    NoClosedFormError
        As :func:`noticed_rate`.

    Examples
    --------
    >>> from spare_theory.cycles.rep import Rep
    >>> law = DetectionStall(Rep(16, 2), ((0.01, 1.0),))
    >>> u = np.array([0.0, 0.5])
    >>> (law.theta(u) / Rep(16, 2).theta(u)).round(3).tolist()  # none pending at the start
    [1.0, 0.932]
    """

    def __init__(self, inner: CycleLaw, detections: tuple[tuple[float, float], ...]) -> None:
        windows = tuple((float(s), float(share)) for s, share in detections)
        if not windows or any(not (s >= 0.0 and np.isfinite(s)) for s, _ in windows):
            raise ValueError(
                f"detections must be (time, share) pairs, times >= 0, got {detections!r}"
            )
        super().__init__(inner)
        self.detections = windows
        self._u, self._ratio, self._chance = noticed_rate(inner, windows)

    def _computing(self, u: np.ndarray) -> np.ndarray:
        """The throughput's factor at ``u`` (:func:`noticed_rate`; held beyond its grid)."""
        return np.interp(u, self._u, self._ratio)

    def theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.theta(u) * self._computing(u)

    def batch_theta(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        return self.inner.batch_theta(u) * self._computing(u)

    def theta_losses(self, u: ArrayLike) -> dict[str, np.ndarray]:
        """The stall, ``1 - chance`` of the time (:func:`noticed_rate`: not the throughput's
        factor, which also counts that the job computes with fewer groups down), and
        ``inner``'s losses in the rest."""
        u = np.asarray(u, dtype=float)
        computing = np.interp(u, self._u, self._chance)
        losses = {cause: loss * computing for cause, loss in self.inner.theta_losses(u).items()}
        losses["detection"] = losses.get("detection", 0.0) + (1.0 - computing)
        return losses

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        return self.inner.mean_time_to_wipeout(mu)

    def u_at(self, level: float) -> float:
        return self.inner.u_at(level)

    def cache_key(self) -> tuple:
        return (type(self).__qualname__, value_key(self.inner), self.detections)

    def __repr__(self) -> str:
        return f"DetectionStall({self.inner!r}, detections={self.detections!r})"
