"""Figures of a failure log: Kaplan-Meier survival of uptimes and repairs against fitted laws."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..lifetimes.fitting import LifetimeFit, kaplan_meier
from ..traces.failure_log import FailureLog
from ._io import save_figure

__all__ = ["survival_figure"]


def _panel(ax: Any, title: str, durations: Any, fits: Sequence[LifetimeFit], **km: Any) -> None:
    durations, observed = durations
    estimate = kaplan_meier(durations, observed, **km).sf
    with warnings.catch_warnings():  # undefined where the estimate reaches 0: a gap
        warnings.simplefilter("ignore", RuntimeWarning)
        band = estimate.confidence_interval(0.95)
    times = estimate.quantiles
    ax.step(times, estimate.probabilities, where="post", color="black", label="Kaplan-Meier")
    ax.fill_between(
        times,
        band.low.probabilities,
        band.high.probabilities,
        step="post",
        color="grey",
        alpha=0.3,
        label="95 % band (Greenwood)",
    )
    grid = np.geomspace(times[0], times[-1], 400)
    for fit in fits:
        if fit.failed:
            ax.plot(grid, fit.distribution.sf(grid), label=f"{fit.law} (AIC {fit.aic:.5g})")
    ax.set_xscale("log")
    ax.set_xlabel("hours")
    ax.set_ylabel("survival P(T > t)")
    ax.set_title(title)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)


def survival_figure(
    log: FailureLog,
    uptime_fits: Sequence[LifetimeFit],
    repair_fits: Sequence[LifetimeFit],
    outdir: str | os.PathLike[str],
    name: str,
) -> Path:
    """Write ``outdir/name.png``: uptimes and repairs, Kaplan-Meier and band against the fits.

    Two panels on a log time axis: the Kaplan-Meier estimate of the
    survival of the log's uptimes (left) and repair times (right) with its
    95 % Greenwood band, and the survival of each fitted law.

    Parameters
    ----------
    log : FailureLog
        The log.
    uptime_fits, repair_fits : sequence of LifetimeFit
        Laws fitted to ``log.uptimes()`` and ``log.repairs()``.
    outdir : path-like
        Folder (created if needed).
    name : str
        File name without ``.png``.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile
    >>> from spare_theory.traces.failure_log import infinitehbd_failure_log
    >>> log = infinitehbd_failure_log()
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     survival_figure(log, [log.fit_lifetime("exponential")], [], tmp, "km").name
    'km.png'
    """
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    _panel(left, f"uptimes ({log.failures} failures)", log.uptimes(), uptime_fits)
    repairs = log.repairs()
    if repairs[0].size:
        zero = (repairs[0] == 0).any()
        resolution = log.time_resolution_hours if zero else None
        _panel(right, "repair times", repairs, repair_fits, resolution=resolution)
    else:
        right.set_axis_off()
    return save_figure(fig, outdir, name)
