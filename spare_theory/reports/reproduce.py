"""``spare-theory reproduce``: regenerate every table and figure.

Runs each report module in turn (mu, overhead, training and headline,
sweeps), writing tables to ``outdir/tables`` and figures to
``outdir/figures``.  ``quick=True`` uses small sample sizes (about a minute in
all); the default reproduces the published comparisons in about ten minutes
on two cores.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path

__all__ = ["REPORTS", "reproduce"]

# Report modules in the order they run; each exposes ``reproduce(outdir, ...)``.
REPORTS = ("mu", "overhead", "training", "sweep")


def reproduce(outdir=".", *, quick=False, executor=None, seed=0, progress=True, only=None):
    """Run every report (or those named in ``only``); return ``{report: (seconds, paths)}``."""
    outdir = Path(outdir)
    names = REPORTS if only is None else tuple(only)
    unknown = sorted(set(names) - set(REPORTS))
    if unknown:
        raise ValueError(f"only must name reports among {list(REPORTS)}, got {unknown}")
    done = {}
    for name in names:
        module = importlib.import_module(f"{__package__}.{name}")
        start = time.perf_counter()
        paths = module.reproduce(
            outdir, quick=quick, executor=executor, seed=seed, progress=progress
        )
        done[name] = (time.perf_counter() - start, [Path(p) for p in paths])
    return done
