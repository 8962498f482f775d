"""``spare-theory reproduce``: regenerate every table and figure.

Runs each report module of :data:`REPORTS` in turn, writing tables to
``outdir/tables`` and figures to ``outdir/figures``.  ``quick=True`` uses
small sample sizes (seconds per report, about 70 s in all); the default
takes about 10 minutes on two cores (the README's Benchmarks section says
how that was measured).

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
import hashlib
import importlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import as_count, as_seed_sequence
from ._io import atomic_path

__all__ = ["MANIFEST_DIR", "REPORTS", "read_manifest", "reproduce"]

#: Folder (under ``outdir``) holding one manifest JSON per report written by :func:`reproduce`.
MANIFEST_DIR = ".reproduce"

#: Report modules in the order they run; each exposes ``reproduce(outdir, ...) -> list[Path]``.
REPORTS = (
    "mu",
    "overhead",
    "training",
    "sweep",
    "domains",
    "microbatch",
    "simulator",
    "repairs",
    "alternatives",
    "trace",
)


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

    Every ``spare_theory.reports.<name>.reproduce`` has this signature (without
    ``only``) and the same return type: the list of files it wrote.

    Parameters
    ----------
    outdir : path
        Folder that receives ``tables/`` and ``figures/`` (created if needed).
    quick : bool
        Small grids and sample sizes.
    executor : concurrent.futures.Executor, optional
        Where the cells of each report run (``None``: a process pool of
        ``workers`` processes shared by all reports).
    seed : int or numpy.random.SeedSequence
        Seed passed to every report.
    progress : bool
        Show progress bars.
    only : iterable of str, optional
        Reports to run, among :data:`REPORTS` (default: all, in that order).
    resume : bool
        Skip a report whose manifest (see :func:`read_manifest`) matches this
        run's seed, ``quick`` flag and package version and whose files are
        unchanged; its files are returned as if written.
    workers : int, optional
        Without ``executor``: processes of the pool (default: every core,
        ``os.cpu_count()``); ``1`` runs serially in this process.  Every cell
        has its own seed, so the files are identical either way.

    Returns
    -------
    list of pathlib.Path
        The files written (or, with ``resume``, kept), report after report.

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

    Skipped: even ``quick=True`` takes seconds per report and writes files.

    >>> [p.name for p in reproduce("out", quick=True, only=["sweep"])]  # doctest: +SKIP
    ['sweep.csv', 'sweep.md', 'sweep_by_point.csv', 'sweep_by_point.md',
     'sweep_reduction.png', 'sweep_availability.png']
    """
    outdir = Path(outdir)
    names = REPORTS if only is None else tuple(only)
    unknown = sorted(set(names) - set(REPORTS))
    if unknown:
        raise ValueError(f"only must name reports among {list(REPORTS)}, got {unknown}")
    run = _run_key(seed, quick)
    _remove_partial_files(outdir)
    count = (os.cpu_count() or 1) if workers is None else as_count(workers, "workers")
    if executor is None and count > 1:
        pool = concurrent.futures.ProcessPoolExecutor(count)
        try:
            return reproduce(
                outdir,
                quick=quick,
                executor=pool,
                seed=seed,
                progress=progress,
                only=names,
                resume=resume,
            )
        finally:  # on an interrupt, cancel the queued cells instead of running them
            pool.shutdown(wait=True, cancel_futures=True)
    paths: list[Path] = []
    for name in names:
        kept = _unchanged_files(outdir, name, run) if resume else None
        if kept is not None:
            paths.extend(kept)
            continue
        manifest = outdir / MANIFEST_DIR / f"{name}.json"
        manifest.unlink(missing_ok=True)  # an interrupted report leaves no stale manifest
        module = importlib.import_module(f"{__package__}.{name}")
        written = [
            Path(p)
            for p in module.reproduce(
                outdir, quick=quick, executor=executor, seed=seed, progress=progress
            )
        ]
        _write_manifest(manifest, name, run, outdir, written)
        paths.extend(written)
    return paths


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
        A name among :data:`REPORTS`.

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
