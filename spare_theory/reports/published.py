"""Published pre-training runs beside the toolkit's prediction (issue 27, item 6).

Each run of ``spare_theory/data/published_runs.toml`` (Llama 3 405B, OPT-175B,
BLOOM-176B, GLM-130B, MegaScale) gives what its public sources report: GPUs,
days, unexpected interruptions, checkpoint interval and costs where given and
the effective training time (ETT: useful training over elapsed time), each
figure with where it stands.  Each run becomes a
:class:`~spare_theory.jobs.job.Job` (:meth:`PublishedRun.job`: model size,
GPUs, replica and GPU type as reported, the per-GPU MTBF from the reported
interruptions, ``gpus x days x 24 / interruptions``) and a scenario through
``job.scenario()``, its restart and checkpoint costs as reported where the
source gives them, else as the job derives them.  Every run checkpointed and
restarted the whole job on a failure, so the toolkit prices it as CKPT-only
(:func:`~spare_theory.training.optimize.optimal_plan` with ``"ckpt"``; at the
reported checkpoint interval where the source gives one).  The predicted ETT
is ``work_hours / hours`` (the renewal model's ratio does not depend on
``work_hours``).

Where a source is silent on the restart or the checkpoint cost, the table
gives the cost at which the prediction equals the reported ETT, the other
cost as reported or derived: a root of the model with
:func:`scipy.optimize.brentq`, bracketed outwards from zero.  The predicted
ETT falls as either cost rises, so a reported lower bound ("more than 90 %")
holds for costs up to the root, an implied upper bound for costs from it on,
and an implied figure at the root.  MegaScale gives no run length: the root
there is the number of days over which its interruptions leave the reported
ETT at its reported recovery time.

Writes ``tables/published.csv|md`` (a few dozen closed-form evaluations:
seconds).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from scipy.optimize import brentq

from .._caching import cached
from ..hourly.scenario import Scenario
from ..jobs.job import Job
from ..lifetimes.classes import FAILURE_CLASS_PRESETS, FAILURE_KINDS
from ..training.estimate import time_to_train
from ..training.optimize import optimal_plan
from ._io import write_table
from .catalogue import ReportOptions

__all__ = [
    "COST_RANGE_MINUTES",
    "DAYS_RANGE",
    "ETT_KINDS",
    "Figure",
    "PublishedRun",
    "predicted_ett",
    "published_runs",
    "published_table",
    "write",
]

#: How a source gives its effective training time (the TOML's ``ett_kind``).
ETT_KINDS = ("lower bound", "implied", "implied upper bound")
#: Restart and checkpoint costs searched for the root, minutes (up to a week).
COST_RANGE_MINUTES: tuple[float, float] = (0.0, 7 * 24 * 60.0)
#: Run lengths searched where a source gives none, days.
DAYS_RANGE: tuple[float, float] = (0.5, 3650.0)
# Root tolerance: a hundredth of a minute (or of a day).
_XTOL = 0.01
_FIGURES = (
    "parameters",
    "gpus",
    "gpus_per_group",
    "days",
    "interruptions",
    "days_per_interruption",
    "ett",
    "restart_minutes",
    "checkpoint_minutes",
    "checkpoint_interval_hours",
    "checkpoint_terabytes",
    "storage_gbps",
    "restore_minutes",
    "init_seconds",
)
_OTHER_KEYS = ("name", "sources", "gpu", "ett_kind", "silent", "failure_classes", "counted_kinds")


@dataclasses.dataclass(frozen=True)
class Figure:
    """One reported figure: its value and where in which source it stands."""

    value: float
    where: str


@dataclasses.dataclass(frozen=True)
class PublishedRun:
    """A published run as its sources report it (``spare_theory/data/published_runs.toml``).

    Attributes
    ----------
    name : str
        The run (``"Llama 3 405B"``).
    sources : tuple of str
        Its public sources, with their addresses.
    gpu : str
        The GPU type (``"h100"``, ``"a100"``).
    figures : dict of str to Figure
        Every figure the sources give (keys as in the TOML file).
    ett_kind : str
        How the effective training time is given, one of :data:`ETT_KINDS`.
    silent : tuple of str
        Figures the sources do not give.
    failure_classes : str or None
        The preset of :data:`~spare_theory.lifetimes.classes.FAILURE_CLASS_PRESETS`
        its sources give (``None``: none).
    counted_kinds : tuple of str
        The failure kinds its interruption count includes (all, by default).
    """

    name: str
    sources: tuple[str, ...]
    gpu: str
    figures: dict[str, Figure]
    ett_kind: str
    silent: tuple[str, ...]
    failure_classes: str | None = None
    counted_kinds: tuple[str, ...] = FAILURE_KINDS

    def value(self, key: str) -> float:
        """The reported figure ``key``, or NaN where the sources give none."""
        figure = self.figures.get(key)
        return math.nan if figure is None else float(figure.value)

    @property
    def failures_per_gpu_hour(self) -> float:
        """``interruptions / (gpus x days x 24)``, or ``1 / (gpus x 24 x days_per_interruption)``.

        NaN when the sources give neither a count over a known run length nor a
        typical spacing (MegaScale: no run length).
        """
        spacing = self.value("days_per_interruption")
        if not math.isnan(spacing):
            return 1.0 / (self.value("gpus") * 24.0 * spacing)
        return self.value("interruptions") / (self.value("gpus") * 24.0 * self.value("days"))

    def job(self, days: float | None = None) -> Job:
        """The run as a :class:`~spare_theory.jobs.job.Job` at its reported failure rate.

        Model size, GPUs, the replica and the GPU type as reported; the per-GPU
        MTBF ``1 / failures_per_gpu_hour`` (the GPU preset's where the sources
        give no run length and ``days`` is not given); the reported storage
        bandwidth and initialisation time where given, else the Job's
        defaults; ``work_hours`` the run's useful time, ``days x 24 x ett``
        (``days`` overrides the reported run length, the interruptions kept).
        """
        fields: dict[str, Any] = {}
        if days is not None:
            fields["gpu_mtbf_hours"] = (
                self.value("gpus") * 24.0 * days / self.value("interruptions")
            )
        elif not math.isnan(self.failures_per_gpu_hour):
            fields["gpu_mtbf_hours"] = 1.0 / self.failures_per_gpu_hour
        length = self.value("days") if days is None else days
        if not math.isnan(self.value("storage_gbps")):
            fields["storage_write_gbps"] = fields["storage_read_gbps"] = self.value("storage_gbps")
        if not math.isnan(self.value("init_seconds")):
            fields["init_seconds"] = self.value("init_seconds")
        return Job(
            parameters=self.value("parameters"),
            gpus=int(self.value("gpus")),
            gpus_per_group=int(self.value("gpus_per_group")),
            gpu=self.gpu,
            work_hours=(30.0 if math.isnan(length) else length) * 24.0 * self.value("ett"),
            **fields,
        )


def _figure(run: str, key: str, entry: Any) -> Figure:
    if not (isinstance(entry, dict) and set(entry) == {"value", "where"}):
        raise ValueError(
            f"run {run!r}: {key} must be {{value = ..., where = '...'}}, got {entry!r}"
        )
    value = entry["value"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"run {run!r}: {key}.value must be a number > 0, got {value!r}")
    return Figure(float(value), str(entry["where"]))


def _run(entry: dict[str, Any]) -> PublishedRun:
    name = str(entry.get("name", "?"))
    unknown = sorted(set(entry) - set(_FIGURES) - set(_OTHER_KEYS))
    if unknown:
        raise ValueError(f"run {name!r}: unknown keys {unknown}")
    for key in ("name", "sources", "gpu", "ett_kind", "gpus", "gpus_per_group", "ett"):
        if key not in entry:
            raise ValueError(f"run {name!r}: {key} is missing")
    if entry["ett_kind"] not in ETT_KINDS:
        raise ValueError(
            f"run {name!r}: ett_kind must be one of {ETT_KINDS}, got {entry['ett_kind']!r}"
        )
    figures = {k: _figure(name, k, v) for k, v in entry.items() if k in _FIGURES}
    silent = tuple(entry.get("silent", ()))
    both = sorted(set(silent) & set(figures))
    if both:
        raise ValueError(f"run {name!r}: {both} both given and listed as silent")
    preset = entry.get("failure_classes")
    if preset is not None and preset not in FAILURE_CLASS_PRESETS:
        raise ValueError(
            f"run {name!r}: failure_classes must be one of {tuple(FAILURE_CLASS_PRESETS)}, "
            f"got {preset!r}"
        )
    counted = tuple(entry.get("counted_kinds", FAILURE_KINDS))
    if not counted or not set(counted) <= set(FAILURE_KINDS):
        raise ValueError(
            f"run {name!r}: counted_kinds must be kinds of {FAILURE_KINDS}, got {counted!r}"
        )
    return PublishedRun(
        name=name,
        sources=tuple(entry["sources"]),
        gpu=str(entry["gpu"]),
        figures=figures,
        ett_kind=str(entry["ett_kind"]),
        silent=silent,
        failure_classes=preset,
        counted_kinds=counted,
    )


@cached(maxsize=1)
def published_runs() -> tuple[PublishedRun, ...]:
    """The published runs of ``spare_theory/data/published_runs.toml``, in file order.

    Raises
    ------
    ValueError
        Naming the run and key of a malformed entry.

    Examples
    --------
    >>> runs = published_runs()
    >>> [r.name for r in runs]
    ['Llama 3 405B', 'OPT-175B', 'BLOOM-176B', 'GLM-130B', 'MegaScale']
    >>> llama = runs[0]
    >>> round(1 / llama.failures_per_gpu_hour, 1), llama.figures["interruptions"].where[:16]
    (50677.0, 'arXiv:2407.21783')
    """
    text = resources.files("spare_theory").joinpath("data/published_runs.toml").read_text()
    return tuple(_run(entry) for entry in tomllib.loads(text)["run"])


def predicted_ett(scenario: Scenario, interval_hours: float | None = None) -> float:
    """CKPT-only's effective training time, ``work_hours / hours``, at its best interval.

    Parameters
    ----------
    scenario : Scenario
        The run.
    interval_hours : float, optional
        Checkpoint every this many hours of compute instead of at the best
        interval (:func:`~spare_theory.training.optimize.optimal_plan`).

    Examples
    --------
    >>> sc = Scenario(gpus=16384, gpus_per_group=128, restart_minutes=5,
    ...               checkpoint_minutes=0.5, work_hours=1000)
    >>> round(predicted_ett(sc), 4), round(predicted_ett(sc, interval_hours=1.0), 4)
    (0.9037, 0.8166)
    """
    if interval_hours is None or math.isnan(interval_hours):
        estimate = optimal_plan(scenario, "ckpt").estimate
    else:
        estimate = time_to_train(
            scenario, "ckpt", checkpoint_interval_minutes=60.0 * interval_hours
        )
    return float(scenario.work_hours / estimate.hours)


def _root(gap: Callable[[float], float], start: float, steps: Iterable[float]) -> float:
    """Where ``gap`` changes sign, searched outwards from ``start`` through ``steps``; else NaN.

    The bracket grows geometrically from ``start`` (the model's cost grows with
    the restart cost, so the search evaluates it no farther out than needed),
    then :func:`scipy.optimize.brentq` closes it.
    """
    g0 = gap(start)
    if g0 == 0.0:
        return start
    previous = start
    for x in steps:
        if (gap(x) < 0) != (g0 < 0):
            return float(brentq(gap, min(previous, x), max(previous, x), xtol=_XTOL))
        previous = x
    return math.nan


def _doubling(first: float, last: float) -> list[float]:
    """``first, 2 first, 4 first, ...`` up to ``last``, ``last`` included."""
    out = [first]
    while out[-1] * 2 < last:
        out.append(out[-1] * 2)
    return [*out, last]


def _row(run: PublishedRun) -> dict[str, Any]:
    reported = {k: run.value(k) for k in ("restart_minutes", "checkpoint_minutes")}
    job = run.job()
    derived = {"restart_minutes": job.restart_minutes, "checkpoint_minutes": job.checkpoint_minutes}
    # Each cost as reported, else as the job derives it.
    costs = {k: derived[k] if math.isnan(v) else v for k, v in reported.items()}
    interval = run.value("checkpoint_interval_hours")
    ett = run.value("ett")
    days = run.value("days")

    def ett_at(length: float | None = None, **fields: float) -> float:
        return predicted_ett(run.job(length).scenario(**{**costs, **fields}), interval)

    predicted = ett_at()
    with_classes = math.nan
    if run.failure_classes is not None:
        classes = FAILURE_CLASS_PRESETS[run.failure_classes]
        # The reported count holds the counted kinds only: the other classes add to it.
        counted = math.fsum(c.share for c in classes if c.kind in run.counted_kinds)
        classed = dataclasses.replace(
            job, gpu_mtbf_hours=job.gpu_mtbf * counted, failure_classes=classes
        )
        with_classes = predicted_ett(classed.scenario(**costs), interval)
    row: dict[str, Any] = {
        "run": run.name,
        "gpus": run.value("gpus"),
        "gpus_per_group": run.value("gpus_per_group"),
        "parameters_billion": run.value("parameters") / 1e9,
        "days": days,
        "interruptions": run.value("interruptions"),
        "gpu_mtbf_hours": job.gpu_mtbf,
        "ett_reported": ett,
        "ett_kind": run.ett_kind,
        "checkpoint_interval_hours": interval,
        "restart_minutes": reported["restart_minutes"],
        "checkpoint_minutes": reported["checkpoint_minutes"],
        "job_restart_minutes": derived["restart_minutes"],
        "job_checkpoint_minutes": derived["checkpoint_minutes"],
        "ett_predicted": predicted,
        "ett_predicted_classes": with_classes,
        "days_predicted": days * ett / predicted,
        "restart_minutes_at_report": math.nan,
        "checkpoint_minutes_at_report": math.nan,
        "days_at_report": math.nan,
    }
    steps = _doubling(1.0, COST_RANGE_MINUTES[1])  # 1, 2, 4, ... minutes up to a week

    def gap_in(name: str) -> Callable[[float], float]:
        return lambda x: ett_at(**{name: x}) - ett

    for name in ("restart_minutes", "checkpoint_minutes"):
        if math.isnan(reported[name]) and not math.isnan(days):
            row[f"{name}_at_report"] = _root(gap_in(name), 0.0, steps)
    if math.isnan(days):
        low, high = DAYS_RANGE
        row["days_at_report"] = _root(
            lambda d: ett_at(d) - ett, high, [high * low / x for x in _doubling(low, high)[1:]]
        )
    return row


def published_table(runs: tuple[PublishedRun, ...] | None = None) -> pd.DataFrame:
    """One row per published run: what it reports and the toolkit's prediction (module docstring).

    Examples
    --------
    Llama 3 405B: the job's derived costs (a 2.7 min restart, 2.8 s checkpoints)
    predict 96 % against the reported "more than 90 %", which holds for restarts
    of up to 15.3 minutes at those checkpoints:

    >>> row = published_table(published_runs()[:1]).iloc[0]
    >>> round(float(row.ett_predicted), 3), round(float(row.restart_minutes_at_report), 1)
    (0.963, 15.3)
    """
    runs = published_runs() if runs is None else runs
    return pd.DataFrame([_row(run) for run in runs])


def write(options: ReportOptions) -> list[Path]:
    """Write ``tables/published.csv|md`` (a few root finds over closed forms, seconds).

    Every option but ``outdir`` is unused: the table is the same at every size.
    Declared in :data:`spare_theory.reports.catalogue.REPORTS`.
    """
    return [
        *write_table(
            published_table(),
            options.outdir / "tables",
            "published",
            title="Published pre-training runs beside the toolkit's CKPT-only prediction",
            notes=_NOTES,
        )
    ]


_NOTES = """\
Sources, figure by figure: spare_theory/data/published_runs.toml and docs/reproduction.md.
gpu_mtbf_hours: GPU-hours per reported interruption, gpus x days x 24 / interruptions (BLOOM:
about one a week; MegaScale, no run length: the job's a100 preset). restart_minutes,
checkpoint_minutes, checkpoint_interval_hours: as reported (empty: the source is silent).
job_restart_minutes, job_checkpoint_minutes: what the Job derives from the model size and its
default bandwidths and delays (docs/jobs.md). ett_predicted: the toolkit's effective training
time (CKPT-only, optimal_plan "ckpt", at the reported interval where given, else at its best)
at the reported failure rate and costs, each cost as reported or else as derived;
ett_predicted_classes: the same with the failure classes its sources give (Llama 3: Table 5's
watchdog timeouts and silent data corruptions; BLOOM: its logbook's hangs on top of the weekly
GPU deaths; the presets of docs/failure_classes.md), empty where they give none;
days_predicted: the run length it implies for the reported useful time. restart_minutes_at_report,
checkpoint_minutes_at_report: the cost at which the predicted ETT equals ett_reported
(scipy.optimize.brentq, 0.01 min), the other cost as reported or derived; the prediction falls
as a cost rises, so a lower bound holds below the root, an implied upper bound above it; empty
where the source gives the cost or no root lies within a week. days_at_report (MegaScale): the
run length at which its interruptions give the reported ETT with its reported 25 min recoveries."""
