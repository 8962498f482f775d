"""Failure classes: a failure is not always a clean crash noticed at once.

A scenario's failures come in classes (:class:`FailureClass`), each a share of
them with its kind and its detection time.  The kinds so far:

- ``"crash"``: noticed ``detect_minutes`` after it happens; until then the
  whole synchronous job makes no progress; then the strategy recovers as it
  does from a crash (the default class, :data:`CRASH`, is noticed at once:
  every failure as the package priced it before classes);
- ``"hang"``: the same, its detection set by a timeout (tens of minutes
  without a watchdog: BLOOM-176B's logbook lists hangs that cost hours);
- ``"straggler"``: the node keeps running, but every synchronous step takes
  ``slowdown`` times as long until it is detected, ``detect_minutes`` after
  it starts; then it is handled as a failure of its group (a strategy that
  survives a failure drops the group; one that does not restarts).  A global
  restart in between finds it (every group is healthy after a restart).
- ``"corruption"``: silent data corruption; the node computes on at full
  speed, on corrupted state, until it is detected ``detect_minutes`` later;
  then the whole job restarts from the checkpoint ``rollback_checkpoints``
  back (1: the last one), whatever the strategy's redundancy.  The restart
  retires the device (AEGIS, OSDI 2026, found every corruption permanent and
  recurring on its device, so a kept one would strike again).

Any class may set ``misdiagnosis``, the chance that a detection blames a
healthy group: that group is evicted (as a failure of its own, noticed at
once) and the faulty one stays in place, to be noticed again
``detect_minutes`` later, with the same chance of another wrong call.  The
detections until the right one are geometric, ``1 / (1 - misdiagnosis)`` on
average, so a crash or a hang stops the job ``detect_minutes / (1 -
misdiagnosis)`` on average and a straggler slows it that long.  A global
restart waits until the faulty group is found: after a corruption each wrong
call adds ``detect_minutes`` to the restart.  (Minder, NSDI 2025, finds
faulty machines at a precision of 0.90: about one eviction in ten hits a
healthy machine.)

The failure process itself is unchanged: the classes split the scenario's
failures by ``share``, so what enters a plan's hours is what each failure
does before it is noticed, the healthy groups its wrong calls evict and how
far back it sends the job.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._validation import as_choice, as_count, as_real

__all__ = [
    "CRASH",
    "FAILURE_CLASS_PRESETS",
    "FAILURE_KINDS",
    "FailureClass",
    "check_failure_classes",
    "failure_class_preset",
    "mean_detect_minutes",
    "parse_failure_classes",
]

#: The kinds a class may have (``docs/failure_classes.md``).
FAILURE_KINDS = ("crash", "hang", "straggler", "corruption")


@dataclass(frozen=True)
class FailureClass:
    """One class of a scenario's failures: its share, its kind and how long it goes unnoticed.

    Parameters
    ----------
    name : str
        What tables call it (unique within a scenario).
    share : float
        Its fraction of the scenario's failures, ``0 < share <= 1``; the
        shares of a scenario's classes sum to 1.
    kind : {"crash", "hang", "straggler", "corruption"}
        What it does (module docstring); default ``"crash"``.
    detect_minutes : float
        Minutes from the failure to its detection, ``>= 0`` (default 0: at
        once).  Until then a crash or a hang stops the whole synchronous job;
        a straggler slows it by ``slowdown``.
    slowdown : float
        How many times as long each synchronous step takes while a straggler
        goes unnoticed, ``>= 1`` (a straggler's; 1, the default, for the
        other kinds).
    rollback_checkpoints : int
        How many checkpoints back the job restarts once a corruption is
        detected, ``>= 1`` (a corruption's; 1, the default: the last one, as
        after any wipe-out).
    misdiagnosis : float
        Chance that a detection of this class evicts a healthy group and
        leaves the faulty one in place, ``0 <= misdiagnosis < 1`` (default 0:
        always right; module docstring).

    Raises
    ------
    ValueError
        Naming the field: an empty name, a share outside ``(0, 1]``, an
        unknown kind, a negative or non-finite detection time, a slowdown
        below 1 or set on a kind that is not ``"straggler"``, a rollback
        below 1 or set on a kind that is not ``"corruption"``, a
        misdiagnosis outside ``[0, 1)``.

    Examples
    --------
    >>> FailureClass("hang", 0.1, "hang", detect_minutes=30)  # doctest: +NORMALIZE_WHITESPACE
    FailureClass(name='hang', share=0.1, kind='hang', detect_minutes=30.0, slowdown=1.0,
                 rollback_checkpoints=1, misdiagnosis=0.0)
    >>> FailureClass("hang", 1.0, "hang", 30, misdiagnosis=0.1).mean_detect_minutes
    33.333333333333336
    >>> FailureClass("slow", 0.05, "straggler", detect_minutes=60, slowdown=3).slowdown
    3.0
    >>> FailureClass("sdc", 0.01, "corruption", 120, rollback_checkpoints=2).rollback_checkpoints
    2
    >>> FailureClass("sdc", 0.01, "hang", rollback_checkpoints=2)
    Traceback (most recent call last):
    ...
    ValueError: rollback_checkpoints=2 is a corruption's, not kind='hang'
    """

    name: str
    share: float
    kind: str = "crash"
    detect_minutes: float = 0.0
    slowdown: float = 1.0
    rollback_checkpoints: int = 1
    misdiagnosis: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        share = as_real(self.share, "share", minimum=0.0, maximum=1.0, strict_minimum=True)
        kind = as_choice(self.kind, "kind", FAILURE_KINDS)
        detect = as_real(self.detect_minutes, "detect_minutes", minimum=0.0)
        slowdown = as_real(self.slowdown, "slowdown", minimum=1.0)
        if kind != "straggler" and slowdown != 1.0:
            raise ValueError(f"slowdown={slowdown:g} is a straggler's, not kind={kind!r}")
        rollback = as_count(self.rollback_checkpoints, "rollback_checkpoints")
        if kind != "corruption" and rollback != 1:
            raise ValueError(
                f"rollback_checkpoints={rollback} is a corruption's, not kind={kind!r}"
            )
        wrong = as_real(self.misdiagnosis, "misdiagnosis", minimum=0.0)
        if wrong >= 1.0:
            raise ValueError(f"misdiagnosis must be < 1 (1: never found), got {wrong:g}")
        object.__setattr__(self, "misdiagnosis", wrong)
        object.__setattr__(self, "share", share)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "detect_minutes", detect)
        object.__setattr__(self, "slowdown", slowdown)
        object.__setattr__(self, "rollback_checkpoints", rollback)

    @property
    def stops_job(self) -> bool:
        """Whether the job makes no progress until it is noticed (a crash, a hang); a
        straggler slows it instead, a corruption goes on at full speed."""
        return self.kind in ("crash", "hang")

    @property
    def mean_detect_minutes(self) -> float:
        """``detect_minutes / (1 - misdiagnosis)``: mean minutes until the faulty group is
        found (for a corruption: its first detection, then the restart's wait)."""
        return self.detect_minutes / (1.0 - self.misdiagnosis)

    def calls(self, tail: float = 1e-12) -> tuple[tuple[int, float], ...]:
        """``(g, P(G = g))``: how many detections it takes to find the faulty group, a
        geometric law ``(1 - m) m^(g - 1)``, ``m`` the misdiagnosis, cut where less than
        ``tail`` is left (added to the last).

        Examples
        --------
        >>> FailureClass("hang", 1.0, "hang", 30).calls()
        ((1, 1.0),)
        >>> [(g, round(p, 3)) for g, p in FailureClass("h", 1.0, misdiagnosis=0.5).calls(0.2)]
        [(1, 0.5), (2, 0.25), (3, 0.25)]
        """
        m = self.misdiagnosis
        found, left, g = [], 1.0, 1
        while m > 0.0 and left * m > tail:
            found.append((g, left * (1.0 - m)))
            left *= m
            g += 1
        found.append((g, left))
        return tuple(found)


#: The default: every failure a crash noticed at once.
CRASH = FailureClass("crash", 1.0)


#: Class mixes from published runs, by name (``docs/failure_classes.md`` gives each
#: figure's source; a detection time a source does not give is this package's assumption).
FAILURE_CLASS_PRESETS: dict[str, tuple[FailureClass, ...]] = {
    # Llama 3 405B on 16,384 H100s: 419 unexpected interruptions in a 54-day snapshot
    # (Dubey et al. 2024, arXiv:2407.21783, Table 5), 6 of them silent data corruption and 7
    # NCCL watchdog timeouts (noticed at PyTorch's 10 min NCCL default timeout); the rest
    # crashes noticed by the job's own detection.  The corruption's detection time and
    # rollback are this package's assumption (one 60 min interval, two checkpoints back).
    "llama3": (
        FailureClass("crash", 406 / 419),
        FailureClass("watchdog timeout", 7 / 419, "hang", detect_minutes=10.0),
        FailureClass(
            "silent data corruption",
            6 / 419,
            "corruption",
            detect_minutes=60.0,
            rollback_checkpoints=2,
        ),
    ),
    # BLOOM-176B on 384 A100s (bigscience-workshop/bigscience, train/tr11-176B-ml/
    # chronicles.md): about one GPU failure a week over some 16 weeks of training; three
    # hangs no timeout caught, which cost 18, 6 and 11 hours (their mean, 700 min, taken as
    # the time unnoticed); a slow GPU from iteration 42,783 (2022-04-28: 105.2 s an
    # iteration before, 111.0 s after) still in at iteration 45,000: 2,217 iterations of
    # 111 s, 4,100 min, taken as its time unnoticed (a lower bound: the logbook does not
    # date its exclusion).
    "bloom": (
        FailureClass("crash", 16 / 20),
        FailureClass("hang", 3 / 20, "hang", detect_minutes=700.0),
        FailureClass("slow gpu", 1 / 20, "straggler", detect_minutes=4100.0, slowdown=1.055),
    ),
}


def failure_class_preset(name: str) -> tuple[FailureClass, ...]:
    """The class mix of a published run, by name (:data:`FAILURE_CLASS_PRESETS`;
    ``docs/failure_classes.md`` gives each share's and detection time's source).

    Raises
    ------
    ValueError
        Naming ``name`` and the presets when it is not one of them.

    Examples
    --------
    >>> [(c.kind, round(c.share, 4)) for c in failure_class_preset("llama3")]
    [('crash', 0.969), ('hang', 0.0167), ('corruption', 0.0143)]
    >>> failure_class_preset("gpt4")
    Traceback (most recent call last):
    ...
    ValueError: name='gpt4' is not a failure-class preset (llama3, bloom)
    """
    if name not in FAILURE_CLASS_PRESETS:
        raise ValueError(
            f"name={name!r} is not a failure-class preset ({', '.join(FAILURE_CLASS_PRESETS)})"
        )
    return FAILURE_CLASS_PRESETS[name]


def check_failure_classes(classes: Any, name: str = "failure_classes") -> tuple[FailureClass, ...]:
    """``classes`` checked: a non-empty tuple of :class:`FailureClass` with unique names and
    shares that sum to 1 (within ``1e-9``).

    Raises
    ------
    ValueError
        Naming ``name``: not a sequence of FailureClass, empty, a repeated
        class name, shares that do not sum to 1.

    Examples
    --------
    >>> check_failure_classes([CRASH])  # doctest: +NORMALIZE_WHITESPACE
    (FailureClass(name='crash', share=1.0, kind='crash', detect_minutes=0.0, slowdown=1.0,
                  rollback_checkpoints=1, misdiagnosis=0.0),)
    >>> check_failure_classes((FailureClass("a", 0.5), FailureClass("b", 0.4)))
    Traceback (most recent call last):
    ...
    ValueError: failure_classes: the shares must sum to 1, got 0.9
    """
    if isinstance(classes, FailureClass) or not isinstance(classes, Iterable):
        raise ValueError(f"{name} must be a tuple of FailureClass, got {classes!r}")
    found = tuple(classes)
    if not found or not all(isinstance(c, FailureClass) for c in found):
        raise ValueError(f"{name} must be a non-empty tuple of FailureClass, got {classes!r}")
    names = [c.name for c in found]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{name}: the class {repeated[0]!r} is given twice")
    total = math.fsum(c.share for c in found)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"{name}: the shares must sum to 1, got {total:.6g}")
    return found


def mean_detect_minutes(classes: Iterable[FailureClass]) -> float:
    """``sum share x detect_minutes / (1 - misdiagnosis)``: a failure's mean minutes until
    its faulty group is found.

    Examples
    --------
    >>> mean_detect_minutes([FailureClass("crash", 0.9, detect_minutes=1),
    ...                      FailureClass("hang", 0.1, "hang", detect_minutes=31)])
    4.0
    """
    return math.fsum(c.share * c.mean_detect_minutes for c in classes)


def parse_failure_classes(text: str) -> tuple[FailureClass, ...]:
    """Classes from ``NAME:SHARE:KIND:DETECT_MINUTES[:EXTRA][:misdiagnosis=M][,...]`` (the
    command line's form; ``EXTRA`` a straggler's slowdown or a corruption's
    rollback_checkpoints), or the name of a preset (:data:`FAILURE_CLASS_PRESETS`).

    Raises
    ------
    ValueError
        Naming the item that is malformed, or as :func:`check_failure_classes`.

    Examples
    --------
    >>> [c.name for c in parse_failure_classes("crash:0.8:crash:1,hang:0.2:hang:30")]
    ['crash', 'hang']
    >>> slow, sdc = parse_failure_classes("crash:0.8:crash:0,slow:0.1:straggler:60:3,"
    ...                                   "sdc:0.1:corruption:120:2")[1:]
    >>> slow.slowdown, sdc.rollback_checkpoints
    (3.0, 2)
    >>> parse_failure_classes("hang:1:hang:30:misdiagnosis=0.1")[0].misdiagnosis
    0.1
    >>> [c.kind for c in parse_failure_classes("llama3")]
    ['crash', 'hang', 'corruption']
    """
    if str(text).strip() in FAILURE_CLASS_PRESETS:
        return FAILURE_CLASS_PRESETS[str(text).strip()]
    found = []
    for item in str(text).split(","):
        parts = [p.strip() for p in item.split(":")]
        keyed = [p for p in parts[4:] if p.startswith("misdiagnosis=")]
        plain = [p for p in parts if p not in keyed]
        if len(plain) not in (4, 5) or len(keyed) > 1:
            raise ValueError(
                f"failure_classes: {item.strip()!r} is not NAME:SHARE:KIND:DETECT_MINUTES"
                "[:SLOWDOWN or :ROLLBACK_CHECKPOINTS][:misdiagnosis=M] or a preset "
                f"({', '.join(FAILURE_CLASS_PRESETS)})"
            )
        name, share, kind, detect = plain[:4]
        try:
            extra: dict[str, Any] = {}
            if len(plain) == 5:
                key = "rollback_checkpoints" if kind == "corruption" else "slowdown"
                extra[key] = float(plain[4])
            if keyed:
                extra["misdiagnosis"] = float(keyed[0].removeprefix("misdiagnosis="))
            found.append(FailureClass(name, float(share), kind, float(detect), **extra))
        except ValueError as exc:
            raise ValueError(f"failure_classes: {item.strip()!r}: {exc}") from None
    return check_failure_classes(found)
