"""The changes :func:`~spare_theory.reports.what_if.what_if` plans: named features, a
strategy alone, or fields of the job or its scenario.

A :class:`Change` sets :class:`~spare_theory.jobs.job.Job` fields,
:class:`~spare_theory.hourly.scenario.Scenario` fields, the strategies to plan
and caps on the hangs' and stragglers' detection (a watchdog, a straggler
detector); :data:`WHAT_IF_CHANGES` holds
the named ones (``docs/jobs.md`` gives each figure's source) and
:func:`parse_change` reads the command line's forms.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from typing import Any

from ..hourly.scenario import Scenario
from ..jobs.job import Job
from ..lifetimes.classes import FailureClass
from ..strategies.registry import registered_strategies, strategy

__all__ = ["WHAT_IF_CHANGES", "Change", "changes_for", "parse_change"]


@dataclass(frozen=True)
class Change:
    """A named change to a job: the fields it sets and the strategies it plans.

    Attributes
    ----------
    name : str
        What tables call it.
    description : str
        What it is, in words, with where its figure comes from.
    job : tuple of (str, value) pairs
        :class:`~spare_theory.jobs.job.Job` fields it sets (a scenario has
        none: such a change needs a job).
    scenario : tuple of (str, value) pairs
        :class:`~spare_theory.hourly.scenario.Scenario` fields it sets (on a
        job, on the scenario the job implies).
    strategies : tuple of str or None
        The strategies it plans (``None``: those of the job as given).
    watchdog_minutes : float or None
        Every ``"hang"`` failure class noticed within this many minutes (its
        ``detect_minutes`` capped; :class:`~spare_theory.lifetimes.classes.FailureClass`);
        ``None``: the classes as given.
    straggler_detect_minutes : float or None
        Every ``"straggler"`` class noticed within this many minutes (a
        straggler detector); ``None``: as given.
    misdiagnosis : float or None
        Every class's ``misdiagnosis`` capped at this chance (a better
        diagnosis); ``None``: as given.
    """

    name: str
    description: str
    job: tuple[tuple[str, Any], ...] = ()
    scenario: tuple[tuple[str, Any], ...] = ()
    strategies: tuple[str, ...] | None = None
    watchdog_minutes: float | None = None
    straggler_detect_minutes: float | None = None
    misdiagnosis: float | None = None

    def classes(self, given: tuple[FailureClass, ...]) -> tuple[FailureClass, ...]:
        """The failure classes under this change (hangs capped at :attr:`watchdog_minutes`,
        stragglers at :attr:`straggler_detect_minutes`, every class's misdiagnosis at
        :attr:`misdiagnosis`).

        Examples
        --------
        >>> hang = FailureClass("hang", 1.0, "hang", 30.0)
        >>> WHAT_IF_CHANGES["watchdog"].classes((hang,))[0].detect_minutes
        1.0
        >>> slow = FailureClass("slow", 1.0, "straggler", 120.0, slowdown=2.0)
        >>> WHAT_IF_CHANGES["straggler_detection"].classes((slow,))[0].detect_minutes
        5.0
        >>> wrong = FailureClass("hang", 1.0, "hang", 30.0, misdiagnosis=0.1)
        >>> WHAT_IF_CHANGES["better_diagnosis"].classes((wrong,))[0].misdiagnosis
        0.0
        """
        caps = {"hang": self.watchdog_minutes, "straggler": self.straggler_detect_minutes}
        found = []
        for c in given:
            cap = caps.get(c.kind)
            if cap is not None:
                c = dataclasses.replace(c, detect_minutes=min(c.detect_minutes, cap))
            if self.misdiagnosis is not None:
                c = dataclasses.replace(c, misdiagnosis=min(c.misdiagnosis, self.misdiagnosis))
            found.append(c)
        return tuple(found)


#: The named features (``spare-theory plan --what-if NAME``); ``docs/jobs.md`` gives each
#: figure's source.  A strategy is the change ``strategy:NAME``, a field ``FIELD=VALUE``.
WHAT_IF_CHANGES: dict[str, Change] = {
    change.name: change
    for change in (
        Change(
            "async_checkpoints",
            "checkpoints written in the background after a copy to host memory "
            "(Job.checkpoint_async)",
            job=(("checkpoint_async", True),),
        ),
        Change(
            "memory_checkpoints",
            "checkpoints kept in peer groups' host memory and restored from a live peer "
            "(Job.checkpoint_tier = 'memory', as torchft and Gemini do)",
            job=(("checkpoint_tier", "memory"),),
        ),
        Change(
            "fast_detection",
            "a watchdog that notices a failure in 5 s instead of the job's detect_seconds "
            "(this package's assumption of a heartbeat watchdog)",
            job=(("detect_seconds", 5.0),),
        ),
        Change(
            "warm_standby",
            "replacement nodes waiting in the job, so a restart does not wait for the "
            "scheduler (Job.schedule_seconds = 0)",
            job=(("schedule_seconds", 0.0),),
        ),
        Change(
            "watchdog",
            "a watchdog that notices a hang within 1 min instead of its timeout (the "
            "failure classes of kind 'hang'; no change without one)",
            watchdog_minutes=1.0,
        ),
        Change(
            "straggler_detection",
            "a straggler detector that notices a slow node within 5 min (this package's "
            "assumption; the failure classes of kind 'straggler'; no change without one)",
            straggler_detect_minutes=5.0,
        ),
        Change(
            "better_diagnosis",
            "a diagnosis that always evicts the faulty node (every failure class's "
            "misdiagnosis 0, against Minder's precision of 0.90, NSDI 2025; no change "
            "without a misdiagnosis)",
            misdiagnosis=0.0,
        ),
        Change(
            "hot_spares",
            "hot spare groups that take a failed group's place without a restart "
            "(strategy 'hot_spares')",
            strategies=("hot_spares",),
        ),
    )
}

#: The scenario fields :func:`sensitivity` scales by default (``repair_minutes`` when set).


def parse_change(text: str) -> Change:
    """A change from its name: a feature of :data:`WHAT_IF_CHANGES`, ``strategy:NAME``, or
    ``FIELD=VALUE[,FIELD=VALUE...]`` (values as TOML reads them; a Job field where the
    Job has it, else a Scenario field).

    Raises
    ------
    ValueError
        Naming the change: an unknown feature, strategy or field, or a value
        TOML cannot read.

    Examples
    --------
    >>> parse_change("async_checkpoints").job
    (('checkpoint_async', True),)
    >>> parse_change("strategy:spare").strategies
    ('spare',)
    >>> change = parse_change("gpu_mtbf_hours=100000,repair_minutes=30")
    >>> change.job, change.scenario
    ((('gpu_mtbf_hours', 100000),), (('repair_minutes', 30),))
    >>> parse_change("gpu_mtbf=1")
    Traceback (most recent call last):
    ...
    ValueError: change 'gpu_mtbf=1': 'gpu_mtbf' is neither a Job nor a Scenario field
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a change must be a non-empty string, got {text!r}")
    text = text.strip()
    if text in WHAT_IF_CHANGES:
        return WHAT_IF_CHANGES[text]
    if text.startswith("strategy:"):
        name = strategy(text.removeprefix("strategy:")).name  # names an unknown strategy
        return Change(text, f"the best plan of strategy {name!r} alone", strategies=(name,))
    if "=" not in text:
        known = ", ".join([*WHAT_IF_CHANGES, "strategy:NAME", "FIELD=VALUE"])
        raise ValueError(f"unknown change {text!r} (known: {known})")
    job_fields = {f.name for f in dataclasses.fields(Job)}
    scenario_fields = {f.name for f in dataclasses.fields(Scenario)} - {"provenance"}
    on_job, on_scenario = [], []
    for item in text.split(","):
        field, _, value = (part.strip() for part in item.partition("="))
        try:
            parsed = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            raise ValueError(f"change {text!r}: {field} = {value!r} is not a TOML value") from None
        if field in job_fields:
            on_job.append((field, parsed))
        elif field in scenario_fields:
            on_scenario.append((field, parsed))
        else:
            raise ValueError(f"change {text!r}: {field!r} is neither a Job nor a Scenario field")
    said = ", ".join(item.strip() for item in text.split(","))
    return Change(text, f"set {said}", job=tuple(on_job), scenario=tuple(on_scenario))


def changes_for(subject: Job | Scenario, changes: Any) -> list[Change]:
    """The changes asked for, checked against ``subject`` (a Job field needs a Job).

    Default (``changes=None``): every feature of :data:`WHAT_IF_CHANGES` that
    applies to ``subject``, then every registered strategy no feature plans
    alone.  Otherwise each item is a :class:`Change` or a text for
    :func:`parse_change`.

    Raises
    ------
    ValueError
        Naming the change: as :func:`parse_change`, or one that sets Job
        fields asked of a scenario.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=64, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=1,
    ...               work_hours=10)
    >>> [c.name for c in changes_for(sc, None)][:4]
    ['watchdog', 'straggler_detection', 'better_diagnosis', 'hot_spares']
    """
    if changes is None:
        features = [c for c in WHAT_IF_CHANGES.values() if isinstance(subject, Job) or not c.job]
        alone = {c.strategies[0] for c in features if c.strategies and len(c.strategies) == 1}
        strategies = [name for name in registered_strategies() if name not in alone]
        return features + [parse_change(f"strategy:{name}") for name in strategies]
    out = []
    for item in [changes] if isinstance(changes, str) else changes:
        change = item if isinstance(item, Change) else parse_change(item)
        if change.job and not isinstance(subject, Job):
            fields = ", ".join(name for name, _ in change.job)
            raise ValueError(f"change {change.name!r} sets Job fields ({fields}): give a Job")
        out.append(change)
    return out
