"""Writing tables (CSV and Markdown) and figures to an output folder."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # matplotlib is imported only when a figure is saved
    from matplotlib.figure import Figure

__all__ = ["markdown_table", "save_figure", "write_table"]


def _fmt(value: Any) -> str:
    """A table cell: NaN as an em dash, four significant digits below 1, four decimals up to 100."""
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1):
            # Fractions (relative errors of 1e-3, availabilities) keep four significant digits.
            return f"{value:.4g}"
        return f"{value:.4g}" if abs(value) >= 100 else f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


def markdown_table(frame: pd.DataFrame, notes: str = "") -> str:
    """A GitHub-flavoured Markdown rendering of ``frame`` (NaN shown as an em dash).

    Floats below 1 keep four significant digits, those up to 100 four
    decimals, larger ones four significant digits; ``notes`` follow the table.

    Examples
    --------
    >>> frame = pd.DataFrame({"N": [128, 1024], "rel_error": [0.0021734, float("nan")]})
    >>> print(markdown_table(frame, "rel_error is a fraction."))
    | N | rel_error |
    | --- | --- |
    | 128 | 0.002173 |
    | 1024 | — |
    <BLANKLINE>
    rel_error is a fraction.
    <BLANKLINE>
    """
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    text = "\n".join([header, rule, *rows]) + "\n"
    return text + ("\n" + notes.strip() + "\n" if notes else "")


def write_table(
    frame: pd.DataFrame,
    outdir: str | os.PathLike[str],
    name: str,
    *,
    title: str = "",
    notes: str = "",
) -> tuple[Path, Path]:
    """Write ``frame`` to ``outdir/name.csv`` and ``outdir/name.md``; return both paths.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in write_table(pd.DataFrame({"N": [7]}), tmp, "demo", title="Demo")]
    ['demo.csv', 'demo.md']
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / f"{name}.csv", outdir / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    heading = f"# {title}\n\n" if title else ""
    md_path.write_text(heading + markdown_table(frame, notes))
    return csv_path, md_path


def save_figure(fig: Figure, outdir: str | os.PathLike[str], name: str) -> Path:
    """Save a matplotlib figure as ``outdir/name.png`` (150 dpi) and close it.

    Examples
    --------
    >>> import tempfile
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     save_figure(fig, tmp, "demo").name
    'demo.png'
    """
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{name}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path
