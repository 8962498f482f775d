"""Writing tables (CSV and Markdown) and figures to an output folder."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

__all__ = ["markdown_table", "save_figure", "write_table"]


def _fmt(value) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.4g}"
        return f"{value:.4g}" if abs(value) >= 100 else f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


def markdown_table(frame: pd.DataFrame, notes: str = "") -> str:
    """A GitHub-flavoured Markdown rendering of ``frame`` (NaN shown as an em dash)."""
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    text = "\n".join([header, rule, *rows]) + "\n"
    return text + ("\n" + notes.strip() + "\n" if notes else "")


def write_table(
    frame: pd.DataFrame, outdir, name: str, *, title: str = "", notes: str = ""
) -> tuple[Path, Path]:
    """Write ``frame`` to ``outdir/name.csv`` and ``outdir/name.md``; return both paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / f"{name}.csv", outdir / f"{name}.md"
    frame.to_csv(csv_path, index=False)
    heading = f"# {title}\n\n" if title else ""
    md_path.write_text(heading + markdown_table(frame, notes))
    return csv_path, md_path


def save_figure(fig, outdir, name: str) -> Path:
    """Save a matplotlib figure as ``outdir/name.png`` (150 dpi) and close it."""
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{name}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path
