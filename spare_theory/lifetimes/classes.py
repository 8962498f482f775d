"""Failure classes: a failure is not always a clean crash noticed at once.

A scenario's failures come in classes (:class:`FailureClass`), each a share of
them with its kind and its detection time.  Until a failure is noticed the
whole synchronous job makes no progress; then the strategy recovers as it does
from a crash.  The kinds so far:

- ``"crash"``: noticed ``detect_minutes`` after it happens (the default class,
  :data:`CRASH`, is noticed at once: every failure as the package priced it
  before classes);
- ``"hang"``: the same, its detection set by a timeout (tens of minutes
  without a watchdog: BLOOM-176B's logbook lists hangs that cost hours).

The failure process itself is unchanged: the classes split the scenario's
failures by ``share``, so what enters a plan's hours is the detection time of
each failure.  Stragglers (a slow node that keeps running), silent corruption
(a rollback several checkpoints back) and misdiagnosis are not modelled yet:
their kinds are refused by name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .._validation import as_choice, as_real

__all__ = [
    "CRASH",
    "FAILURE_KINDS",
    "FailureClass",
    "check_failure_classes",
    "mean_detect_minutes",
    "parse_failure_classes",
]

#: The kinds a class may have (``docs/failure_classes.md``).
FAILURE_KINDS = ("crash", "hang")
#: Kinds of the published failure taxonomies this package does not model yet.
_NOT_YET = ("straggler", "corruption")


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
    kind : {"crash", "hang"}
        What it does (module docstring); default ``"crash"``.
    detect_minutes : float
        Minutes from the failure to its detection, ``>= 0`` (default 0: at
        once).  Until then the whole synchronous job makes no progress.

    Raises
    ------
    ValueError
        Naming the field: an empty name, a share outside ``(0, 1]``, an
        unknown kind (``"straggler"`` and ``"corruption"``: not modelled
        yet), a negative or non-finite detection time.

    Examples
    --------
    >>> FailureClass("hang", 0.1, "hang", detect_minutes=30)
    FailureClass(name='hang', share=0.1, kind='hang', detect_minutes=30.0)
    >>> FailureClass("slow", 0.1, "straggler")
    Traceback (most recent call last):
    ...
    ValueError: kind='straggler' is not modelled yet (kinds: crash, hang)
    """

    name: str
    share: float
    kind: str = "crash"
    detect_minutes: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        share = as_real(self.share, "share", minimum=0.0, maximum=1.0, strict_minimum=True)
        if self.kind in _NOT_YET:
            raise ValueError(
                f"kind={self.kind!r} is not modelled yet (kinds: {', '.join(FAILURE_KINDS)})"
            )
        kind = as_choice(self.kind, "kind", FAILURE_KINDS)
        detect = as_real(self.detect_minutes, "detect_minutes", minimum=0.0)
        object.__setattr__(self, "share", share)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "detect_minutes", detect)


#: The default: every failure a crash noticed at once.
CRASH = FailureClass("crash", 1.0)


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
    >>> check_failure_classes([CRASH])
    (FailureClass(name='crash', share=1.0, kind='crash', detect_minutes=0.0),)
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
    """``sum share x detect_minutes``: a failure's mean minutes unnoticed.

    Examples
    --------
    >>> mean_detect_minutes([FailureClass("crash", 0.9, detect_minutes=1),
    ...                      FailureClass("hang", 0.1, "hang", detect_minutes=31)])
    4.0
    """
    return math.fsum(c.share * c.detect_minutes for c in classes)


def parse_failure_classes(text: str) -> tuple[FailureClass, ...]:
    """Classes from ``NAME:SHARE:KIND:DETECT_MINUTES[,...]`` (the command line's form).

    Raises
    ------
    ValueError
        Naming the item that is malformed, or as :func:`check_failure_classes`.

    Examples
    --------
    >>> [c.name for c in parse_failure_classes("crash:0.8:crash:1,hang:0.2:hang:30")]
    ['crash', 'hang']
    """
    found = []
    for item in str(text).split(","):
        parts = [p.strip() for p in item.split(":")]
        if len(parts) != 4:
            raise ValueError(
                f"failure_classes: {item.strip()!r} is not NAME:SHARE:KIND:DETECT_MINUTES"
            )
        name, share, kind, detect = parts
        try:
            found.append(FailureClass(name, float(share), kind, float(detect)))
        except ValueError as exc:
            raise ValueError(f"failure_classes: {item.strip()!r}: {exc}") from None
    return check_failure_classes(found)
