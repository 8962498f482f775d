"""``spare-theory reproduce``: regenerate every table and figure.

Runs each report of :data:`~spare_theory.reports.catalogue.REPORTS`, writing tables to
``outdir/tables`` and figures to ``outdir/figures``.  ``quick=True`` uses
small sample sizes (seconds per report); the README's Benchmarks section
gives the measured times of both sizes on two cores and how they were taken.

Where the work runs
-------------------
By default (no ``executor``, more than one core) the reports run side by
side: a pool of one process per core takes them longest first (by their
``cost_seconds``), and each report spreads its cells over its own pool of
one process per core.  The cores are thus shared by up to two reports'
cells; a report's serial parts (model tables, figures) overlap another's
cells instead of leaving a core idle, and the last report still uses every
core.  Every report and every cell has its own seed, so the files are the
same as a serial run's (``workers=1``) or a run on ``executor``, where the
reports run in turn.

Within a run, the reports' processes and cells share the planner's results
(:func:`spare_theory._caching.shared_cache`): a plan, load scan or cycle law
one report computes is read by the others, not computed again.

Interrupted runs and ``resume``
-------------------------------
Every table and figure is written to a temporary file and renamed
(:func:`spare_theory.reports._io.atomic_path`), so Ctrl-C or a kill leaves
either the previous file or the new one, never half of one.  After a report
has written all its files, a manifest ``outdir/.reproduce/<report>.json``
records the seed, the ``quick`` flag, the package version and the name,
size and SHA-256 of every file.  With ``resume=True`` a report whose
manifest matches the run (same seed, ``quick`` and version) and whose files
are all still there, unchanged, is not recomputed.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._caching import shared_cache
from .._parallel import progress_bar
from .._validation import as_count, as_seed_sequence
from ._io import atomic_path
from .catalogue import REPORTS, ReportOptions

__all__ = [
    "MANIFEST_DIR",
    "ReportRun",
    "read_manifest",
    "reproduce",
    "run_reports",
]

#: Folder (under ``outdir``) holding one manifest JSON per report written by :func:`reproduce`.
MANIFEST_DIR = ".reproduce"


@dataclasses.dataclass(frozen=True)
class ReportRun:
    """One report of a :func:`run_reports` call.

    Attributes
    ----------
    name : str
        The report, a key of :data:`~spare_theory.reports.catalogue.REPORTS`.
    files : tuple of pathlib.Path
        The files it wrote (or kept).
    seconds : float
        Wall-clock seconds from its start to its end (reports side by side
        overlap, so these add up to more than the run).
    kept : bool
        ``True`` when ``resume`` kept its files from a previous run.
    """

    name: str
    files: tuple[Path, ...]
    seconds: float
    kept: bool


def reproduce(
    outdir: str | os.PathLike[str] = ".",
    *,
    quick: bool = False,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
    only: Iterable[str] | None = None,
    resume: bool = False,
    workers: int | None = None,
) -> list[Path]:
    """Run every report (or those named in ``only``) and return the files written.

    :func:`run_reports` does the same and also returns each report's time.

    Parameters
    ----------
    outdir : path
        Folder that receives ``tables/`` and ``figures/`` (created if needed).
    quick : bool
        Small grids and sample sizes.
    executor : concurrent.futures.Executor, optional
        Where the cells of each report run, the reports in turn (``None``:
        the reports side by side on ``workers`` cores, see the module
        docstring).
    seed : int or numpy.random.SeedSequence
        Seed passed to every report.
    progress : bool
        Show progress bars (side by side: one bar over the reports).
    only : iterable of str, optional
        Reports to run, keys of :data:`~spare_theory.reports.catalogue.REPORTS`
        (default: all, in that order).
    resume : bool
        Skip a report whose manifest (see :func:`read_manifest`) matches this
        run's seed, ``quick`` flag and package version and whose files are
        unchanged; its files are returned as if written.
    workers : int, optional
        Without ``executor``: processes per pool (default: every core,
        ``os.cpu_count()``); ``1`` runs everything serially in this process.
        Every cell has its own seed, so the files are identical either way.

    Returns
    -------
    list of pathlib.Path
        The files written (or, with ``resume``, kept), report after report
        in the order of ``only`` (or of ``REPORTS``).

    Raises
    ------
    ValueError
        When ``only`` names an unknown report.

    Examples
    --------
    >>> reproduce("out", only=["plots"])
    Traceback (most recent call last):
    ...
    ValueError: only must name reports among ['mu', 'overhead', ...], got ['plots']

    Even ``quick=True`` takes seconds per report (a slow doctest):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:  # doctest: +NORMALIZE_WHITESPACE
    ...     [p.name for p in reproduce(out, quick=True, only=["sweep"], progress=False)]
    ['sweep.csv', 'sweep.md', 'sweep_by_point.csv', 'sweep_by_point.md',
     'sweep_reduction.png', 'sweep_availability.png']
    """
    runs = run_reports(
        outdir,
        quick=quick,
        executor=executor,
        seed=seed,
        progress=progress,
        only=only,
        resume=resume,
        workers=workers,
    )
    return [path for run in runs for path in run.files]


def run_reports(
    outdir: str | os.PathLike[str] = ".",
    *,
    quick: bool = False,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
    only: Iterable[str] | None = None,
    resume: bool = False,
    workers: int | None = None,
) -> list[ReportRun]:
    """:func:`reproduce`, returning what each report wrote and how long it took.

    Parameters
    ----------
    outdir, quick, executor, seed, progress, only, resume, workers
        As in :func:`reproduce`.

    Returns
    -------
    list of ReportRun
        One per report, in the order of ``only`` (or of ``REPORTS``),
        whatever order they ran in.

    Raises
    ------
    ValueError
        When ``only`` names an unknown report or ``workers < 1``.

    Examples
    --------
    >>> run_reports("out", workers=0)
    Traceback (most recent call last):
    ...
    ValueError: workers must be >= 1, got 0

    A second run with ``resume`` keeps the files of the first (a slow doctest):

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     for resume in (False, True):
    ...         print([(r.name, r.kept) for r in run_reports(
    ...             out, quick=True, only=["sweep"], progress=False, resume=resume)])
    [('sweep', False)]
    [('sweep', True)]
    """
    outdir = Path(outdir)
    names = tuple(REPORTS) if only is None else tuple(only)
    unknown = sorted(set(names) - set(REPORTS))
    if unknown:
        raise ValueError(f"only must name reports among {list(REPORTS)}, got {unknown}")
    count = (os.cpu_count() or 1) if workers is None else as_count(workers, "workers")
    run = _run_key(seed, quick)
    _remove_partial_files(outdir)
    job = _Job(outdir, run, quick, seed, resume, count)
    # The reports' processes and their cells share the planner's results (a plan one
    # report computes is read, not computed again, by another).
    with shared_cache():
        if executor is not None or count == 1 or len(names) == 1:
            return [job(name, executor, progress) for name in names]
        return _side_by_side(job, names, count, progress)


def _side_by_side(job: _Job, names: tuple[str, ...], count: int, progress: bool) -> list[ReportRun]:
    """Run the reports on a pool of ``count`` processes, longest first."""
    # Side by side, longest first; each report process makes its own cell pool.  The
    # report modules are imported here, once: the forked processes inherit them.
    for name in names:
        REPORTS[name].function()
    pool = concurrent.futures.ProcessPoolExecutor(min(count, len(names)))
    try:
        futures = [
            pool.submit(job, name, None, False)
            for name in sorted(names, key=lambda n: -REPORTS[n].cost_seconds)
        ]
        done: dict[str, ReportRun] = {}
        with progress_bar(len(names), "reports", progress) as bar:
            for future in concurrent.futures.as_completed(futures):
                report = future.result()
                done[report.name] = report
                bar.set_postfix_str(report.name)
                bar.update(1)
    finally:  # on an interrupt, cancel the reports not started
        pool.shutdown(wait=True, cancel_futures=True)
    return [done[name] for name in names]


@dataclasses.dataclass(frozen=True)
class _Job:
    """One report of a run, picklable so that a report process can run it."""

    outdir: Path
    run: dict[str, Any]
    quick: bool
    seed: int | np.random.SeedSequence
    resume: bool
    workers: int

    def __call__(
        self, name: str, executor: concurrent.futures.Executor | None, progress: bool
    ) -> ReportRun:
        start = time.perf_counter()
        kept = _unchanged_files(self.outdir, name, self.run) if self.resume else None
        if kept is not None:
            return ReportRun(name, tuple(kept), time.perf_counter() - start, True)
        manifest = self.outdir / MANIFEST_DIR / f"{name}.json"
        manifest.unlink(missing_ok=True)  # an interrupted report leaves no stale manifest
        pool = None
        if executor is None and self.workers > 1:
            pool = executor = concurrent.futures.ProcessPoolExecutor(self.workers)
        try:
            options = ReportOptions(self.outdir, self.quick, executor, self.seed, progress)
            written = REPORTS[name].run(options)
        finally:  # on an interrupt, cancel the queued cells instead of running them
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        _write_manifest(manifest, name, self.run, self.outdir, written)
        return ReportRun(name, tuple(written), time.perf_counter() - start, False)


def _remove_partial_files(outdir: Path) -> None:
    """Delete temporary files a killed run left (hidden ``.name.XXXX.csv|md|png`` files).

    :func:`~spare_theory.reports._io.atomic_path` removes its temporary file
    on any exception, but a SIGKILL leaves no chance to; the next run does it.
    """
    for folder in (outdir / "tables", outdir / "figures", outdir / MANIFEST_DIR):
        if folder.is_dir():
            for path in folder.glob(".*"):
                if path.is_file() and path.suffix in (".csv", ".md", ".png", ".json"):
                    path.unlink(missing_ok=True)


def _run_key(seed: int | np.random.SeedSequence, quick: bool) -> dict[str, Any]:
    """What a report's files depend on besides the code: seed, sizes (quick) and version."""
    import spare_theory

    sequence = as_seed_sequence(seed)
    return {
        "seed": {"entropy": str(sequence.entropy), "spawn_key": list(sequence.spawn_key)},
        "quick": bool(quick),
        "version": spare_theory.__version__,
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_manifest(
    manifest: Path, name: str, run: dict[str, Any], outdir: Path, files: list[Path]
) -> None:
    manifest.parent.mkdir(parents=True, exist_ok=True)
    entries = [
        {
            "path": os.path.relpath(f, outdir),
            "bytes": f.stat().st_size,
            "sha256": _sha256(f),
        }
        for f in files
    ]
    with atomic_path(manifest) as part:
        part.write_text(json.dumps({"report": name, **run, "files": entries}, indent=2) + "\n")


def read_manifest(outdir: str | os.PathLike[str], report: str) -> dict[str, Any] | None:
    """The manifest :func:`reproduce` wrote for ``report`` under ``outdir``, or ``None``.

    Parameters
    ----------
    outdir : path
        The ``outdir`` of the run.
    report : str
        A key of :data:`~spare_theory.reports.catalogue.REPORTS`.

    Returns
    -------
    dict or None
        ``report``, ``seed`` (``entropy`` and ``spawn_key`` of the seed
        sequence), ``quick``, ``version`` and ``files`` (each with ``path``
        relative to ``outdir``, ``bytes`` and ``sha256``); ``None`` when the
        report has not completed there (or its manifest is unreadable).

    Examples
    --------
    >>> read_manifest("no-such-folder", "sweep") is None
    True
    """
    path = Path(outdir) / MANIFEST_DIR / f"{report}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _unchanged_files(outdir: Path, name: str, run: dict[str, Any]) -> list[Path] | None:
    """The report's files if its manifest matches ``run`` and every file is unchanged."""
    manifest = read_manifest(outdir, name)
    if manifest is None or any(manifest.get(k) != v for k, v in run.items()):
        return None
    files = []
    for entry in manifest.get("files", []):
        path = outdir / entry["path"]
        if not path.is_file() or path.stat().st_size != entry["bytes"]:
            return None
        if _sha256(path) != entry["sha256"]:
            return None
        files.append(path)
    return files or None
