"""``spare-theory reproduce``: regenerate every table and figure.

Runs each report module in turn (mu, overhead, training and headline,
sweeps), writing tables to ``outdir/tables`` and figures to
``outdir/figures``.  ``quick=True`` uses small sample sizes (seconds per
report); the default reproduces the published comparisons in about three
minutes on two cores.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

__all__ = ["REPORTS", "reproduce"]

#: Report modules in the order they run; each exposes ``reproduce(outdir, ...) -> list[Path]``.
REPORTS = ("mu", "overhead", "training", "sweep")


def reproduce(
    outdir: str | os.PathLike[str] = ".",
    *,
    quick: bool = False,
    executor: concurrent.futures.Executor | None = None,
    seed: int | np.random.SeedSequence = 0,
    progress: bool = True,
    only: Iterable[str] | None = None,
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
        Where the cells of each report run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Seed passed to every report.
    progress : bool
        Show progress bars.
    only : iterable of str, optional
        Reports to run, among :data:`REPORTS` (default: all, in that order).

    Returns
    -------
    list of pathlib.Path
        The files written, report after report.

    Raises
    ------
    ValueError
        When ``only`` names an unknown report.

    Examples
    --------
    >>> reproduce("out", only=["plots"])
    Traceback (most recent call last):
    ...
    ValueError: only must name reports among ['mu', 'overhead', 'training', 'sweep'], got ['plots']

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
    paths: list[Path] = []
    for name in names:
        module = importlib.import_module(f"{__package__}.{name}")
        written = module.reproduce(
            outdir, quick=quick, executor=executor, seed=seed, progress=progress
        )
        paths.extend(Path(p) for p in written)
    return paths
