"""A job file: a TOML file with ``[job]``, ``[cost]``, optional ``[log]`` and ``[scenario]``.

What ``spare-theory plan JOB.toml`` reads (``docs/jobs.md`` has an example):

- ``[job]``: the fields of :class:`~spare_theory.jobs.job.Job` (``init_seconds``
  a number; left out, the default function);
- ``[cost]``: the fields of :class:`~spare_theory.planning.bill.CostModel`;
  the watts default to the job's GPU preset (:meth:`Job.cost_model
  <spare_theory.jobs.job.Job.cost_model>`);
- ``[log]`` (optional): a failure log whose nodes fail as the cluster's
  will, ``path`` (relative to the file, or ``"infinitehbd"``, the shipped
  trace) and the reading keywords of
  :func:`~spare_theory.traces.inputs.open_log` (``nodes``, ``node``,
  ``start``, ``end``, ``time_unit``, ``observed_from``, ``observed_until``),
  plus the log scenario's own keywords (``law``, ``renewal``, ``lemons``,
  ``bursts``, ``burst_window_minutes``, ``repair_law``);
- ``[scenario]`` (optional): Scenario fields that replace the job's.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hourly.scenario import Scenario
from ..lifetimes.classes import FAILURE_CLASS_PRESETS, FailureClass
from ..planning.bill import CostModel
from .job import Job

__all__ = ["LOG_READ_KEYS", "LOG_SCENARIO_KEYS", "JobFile", "load_job_file"]

#: ``[log]`` keys that say how to read the log.
LOG_READ_KEYS = ("nodes", "node", "start", "end", "time_unit", "observed_from", "observed_until")
#: ``[log]`` keys passed to the log's scenario.
LOG_SCENARIO_KEYS = ("law", "renewal", "lemons", "bursts", "burst_window_minutes", "repair_law")
_SECTIONS = ("job", "cost", "log", "scenario")


@dataclass(frozen=True)
class JobFile:
    """What a job file says (module docstring).

    Attributes
    ----------
    job : Job
    cost : CostModel
    scenario : dict
        Scenario fields that replace the job's.
    log : dict or None
        The ``[log]`` table (``path`` resolved against the file's folder).
    path : pathlib.Path
        The file.
    """

    job: Job
    cost: CostModel
    scenario: dict[str, Any] = field(default_factory=dict)
    log: dict[str, Any] | None = None
    path: Path = Path()

    def failure_log(self) -> Any:
        """The ``[log]``'s :class:`~spare_theory.traces.failure_log.FailureLog` (``None``: none)."""
        if self.log is None:
            return None
        from ..traces.inputs import open_log

        read = {k: v for k, v in self.log.items() if k in LOG_READ_KEYS}
        return open_log(self.log["path"], **read)

    def log_options(self) -> dict[str, Any]:
        """The ``[log]`` keywords of the log's scenario (``law``, ``renewal``, ...)."""
        return {k: v for k, v in (self.log or {}).items() if k in LOG_SCENARIO_KEYS}


def _keys(
    table: Any, section: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``table`` checked: a table whose keys are all in ``allowed`` and hold ``required``."""
    if not isinstance(table, dict):
        raise ValueError(f"[{section}] must be a table, got {table!r}")
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ValueError(
            f"[{section}] unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})"
        )
    missing = [key for key in required if key not in table]
    if missing:
        raise ValueError(
            f"[{section}] needs the key {missing[0]!r} (required: {', '.join(required)})"
        )
    return dict(table)


def _classes(items: Any) -> tuple[FailureClass, ...]:
    """``[job] failure_classes``, an array of tables (the fields of
    :class:`~spare_theory.lifetimes.classes.FailureClass`) or the name of a preset
    (:data:`~spare_theory.lifetimes.classes.FAILURE_CLASS_PRESETS`)."""
    if isinstance(items, str):
        if items not in FAILURE_CLASS_PRESETS:
            raise ValueError(
                f"[job] failure_classes: {items!r} is not a preset "
                f"({', '.join(FAILURE_CLASS_PRESETS)})"
            )
        return FAILURE_CLASS_PRESETS[items]
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ValueError(
            "[job] failure_classes must be an array of tables, e.g. "
            '[{name = "hang", share = 0.1, kind = "hang", detect_minutes = 30}, ...]'
        )
    keys = tuple(f.name for f in dataclasses.fields(FailureClass))
    found = []
    for i, item in enumerate(items):
        table = _keys(item, f"job.failure_classes[{i}]", keys, ("name", "share"))
        found.append(FailureClass(**table))
    return tuple(found)


def load_job_file(path: str | Path) -> JobFile:
    """Read a job file (module docstring).

    Parameters
    ----------
    path : str or path-like
        The TOML file.

    Returns
    -------
    JobFile

    Raises
    ------
    ValueError
        Naming the section and key: malformed TOML, an unknown section or
        key, a missing required ``[job]`` key (``parameters``, ``gpus``,
        ``gpus_per_group``, ``work_hours``), a ``[log]`` without ``path``,
        a value the Job or CostModel refuses.

    Examples
    --------
    >>> import tempfile
    >>> text = '[job]\\nparameters = 7e9\\ngpus = 64\\ngpus_per_group = 8\\nwork_hours = 10\\n'
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "job.toml"
    ...     _ = file.write_text(text + '[cost]\\ngpu_hour_usd = 2.0\\n')
    ...     spec = load_job_file(file)
    >>> spec.job.gpus, spec.cost.gpu_hour_usd, spec.cost.busy_watts_per_gpu, spec.log
    (64, 2.0, 700.0, None)
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror}") from None
    _keys(data, "top level", _SECTIONS)
    if "job" not in data:
        raise ValueError(f"{path}: no [job] table")
    job_fields = tuple(f.name for f in dataclasses.fields(Job))
    job_required = tuple(
        f.name
        for f in dataclasses.fields(Job)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    cost_fields = tuple(f.name for f in dataclasses.fields(CostModel))
    scenario_fields = tuple(f.name for f in dataclasses.fields(Scenario) if f.name != "provenance")
    job_table = _keys(data["job"], "job", job_fields, job_required)
    if "failure_classes" in job_table:
        job_table["failure_classes"] = _classes(job_table["failure_classes"])
    job = Job(**job_table)
    cost = job.cost_model(**_keys(data.get("cost", {}), "cost", cost_fields))
    log = None
    if "log" in data:
        log = _keys(data["log"], "log", ("path", *LOG_READ_KEYS, *LOG_SCENARIO_KEYS))
        if "path" not in log:
            raise ValueError("[log] needs a path (a file, or 'infinitehbd')")
        if str(log["path"]) != "infinitehbd":
            log["path"] = str(path.parent / log["path"])
    scenario = _keys(data.get("scenario", {}), "scenario", scenario_fields)
    return JobFile(job=job, cost=cost, scenario=scenario, log=log, path=path)
