"""Writing tables (CSV and Markdown) and figures to an output folder."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: reproduce --help needs neither pandas nor matplotlib
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "CSV_FLOAT_FORMAT",
    "CSV_ROUNDING",
    "ERROR_DECIMALS",
    "PCT_DECIMALS",
    "PNG_METADATA",
    "atomic_path",
    "markdown_table",
    "save_figure",
    "with_plan_r",
    "write_table",
    "written_frame",
]


def _fmt(value: Any) -> str:
    """A table cell: NaN as an em dash, whole numbers as integers, else about four digits.

    Floats holding whole numbers (trial counts stored as float, GPU counts)
    print as integers; others below 1 (or from 1e6 up) keep four significant
    digits, those up to 100 four decimals, from 100 to 1000 four significant
    digits and from 1000 to 1e6 no decimals (``50677``, not ``5.068e+04``).
    """
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1):
            # Fractions (relative errors of 1e-3, availabilities) keep four significant digits.
            return f"{value:.4g}"
        if abs(value) >= 1000:
            return f"{value:.0f}"
        return f"{value:.4g}" if abs(value) >= 100 else f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


# The process's umask, read once (os.umask can only be read by setting it).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` once the block succeeds.

    The temporary file lives in the same folder, so the final
    :func:`os.replace` is atomic: a reader (or a run interrupted by Ctrl-C or
    a kill) sees either the previous file or the complete new one, never a
    half-written file.  When the block raises, the temporary file is removed
    and ``path`` is left as it was.

    Parameters
    ----------
    path : path
        The file to (over)write; its folder must exist.

    Yields
    ------
    pathlib.Path
        Where the block writes (same folder and suffix as ``path``).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = Path(tmp) / "demo.txt"
    ...     with atomic_path(target) as part:
    ...         _ = part.write_text("done")
    ...     try:
    ...         with atomic_path(target) as part:
    ...             _ = part.write_text("half")
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     target.read_text(), sorted(p.name for p in Path(tmp).iterdir())
    ('done', ['demo.txt'])
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(fd)
    part = Path(name)
    try:
        yield part
        os.chmod(part, 0o666 & ~_UMASK)  # mkstemp makes it private; give it a normal file's mode
        os.replace(part, path)
    except BaseException:  # Ctrl-C and kills of the block included: never leave the part behind
        part.unlink(missing_ok=True)
        raise


def markdown_table(frame: pd.DataFrame, notes: str = "") -> str:
    """A GitHub-flavoured Markdown rendering of ``frame`` (NaN and ``pd.NA`` shown as an em dash).

    Whole numbers print as integers (also when stored as floats); other
    floats below 1 keep four significant digits, those up to 100 four
    decimals, up to 1000 four significant digits, up to 1e6 no decimals;
    ``notes`` follow the table.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"N": [128, 1024], "trials": [33440.0, 2000.0],
    ...                       "hours": [50677.0024, 304.549], "rel_error": [0.0021734, None]})
    >>> print(markdown_table(frame, "rel_error is a fraction."))
    | N | trials | hours | rel_error |
    | --- | --- | --- | --- |
    | 128 | 33440 | 50677 | 0.002173 |
    | 1024 | 2000 | 304.5 | — |
    <BLANKLINE>
    rel_error is a fraction.
    <BLANKLINE>
    """
    header = "| " + " | ".join(str(c) for c in frame.columns) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    import pandas as pd

    rows = [
        "| " + " | ".join("—" if v is pd.NA else _fmt(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    text = "\n".join([header, rule, *rows]) + "\n"
    return text + ("\n" + notes.strip() + "\n" if notes else "")


#: The CSV float format of every table: 6 significant digits.
CSV_FLOAT_FORMAT = "%.6g"
#: The largest relative rounding of a CSV float (half a unit in the 6th digit).
CSV_ROUNDING = 5e-6
#: Decimals kept of a percentage column (``*_pct``) and of a relative error (a fraction).
PCT_DECIMALS, ERROR_DECIMALS = 4, 6


def with_plan_r(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``r`` column as nullable integers: ``<NA>`` where a plan has none.

    A plan's ``r`` is ``None`` for a strategy without one (CKPT-only, elastic
    DP); a float column would print the others as ``4.0``.

    Examples
    --------
    >>> import pandas as pd
    >>> with_plan_r(pd.DataFrame({"r": [None, 4]}))["r"].tolist()
    [<NA>, 4]
    """
    return frame.astype({"r": "Int64"}) if "r" in frame.columns else frame


def written_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as its table holds it (CSV and Markdown): errors to fixed decimals.

    An error is a difference of two nearly equal figures (a model's hours and
    a simulation's), so library versions that move those figures in their
    9th digit move it in its 6th: percentages (columns ending ``_pct``) keep
    :data:`PCT_DECIMALS` decimals (1e-4 points) and relative errors (a
    column named with ``error`` or starting ``err_``) :data:`ERROR_DECIMALS`
    (1e-6), far below the standard errors they are read against.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"hours": [981.35892017], "regret_pct": [0.0714682411],
    ...                       "rel_error": [-1.2345678e-7]})
    >>> written_frame(frame).to_dict("records")
    [{'hours': 981.35892017, 'regret_pct': 0.0715, 'rel_error': 0.0}]
    """
    decimals = {}
    for column in frame.columns:
        if frame[column].dtype.kind != "f":
            continue
        text = str(column)
        if text.endswith("_pct"):
            decimals[column] = PCT_DECIMALS
        elif "error" in text or text.startswith("err_"):
            decimals[column] = ERROR_DECIMALS
    if not decimals:
        return frame
    out = frame.copy()
    for column, places in decimals.items():
        # + 0.0 writes -0.0 as 0: the sign of an error rounded off is noise too.
        out[column] = out[column].round(places) + 0.0
    return out


#: PNG metadata of every figure: none that changes with the library versions.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def write_table(
    frame: pd.DataFrame,
    outdir: str | os.PathLike[str],
    name: str,
    *,
    title: str = "",
    notes: str = "",
) -> tuple[Path, Path]:
    """Write ``frame`` to ``outdir/name.csv`` and ``outdir/name.md``; return both paths.

    Each file is written to a temporary file and renamed (:func:`atomic_path`),
    so an interrupted run never leaves a half-written table.  Floats are
    written with 6 significant digits (:data:`CSV_FLOAT_FORMAT`), errors and
    percentages to fixed decimals in both files (:func:`written_frame`): every figure the docs
    quote has fewer, and the digits that differ between library versions
    (summation orders, special-function kernels, optimiser stops: measured up
    to 3e-6 relative on a difference, 1e-9 elsewhere) do not reach the file,
    so ``reproduce`` rewrites the committed tables byte for byte on another
    machine, unless a figure lies that close to a rounding boundary.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     [p.name for p in write_table(pd.DataFrame({"N": [7]}), tmp, "demo", title="Demo")]
    ['demo.csv', 'demo.md']
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = outdir / f"{name}.csv", outdir / f"{name}.md"
    written = written_frame(frame)
    with atomic_path(csv_path) as part:
        written.to_csv(part, index=False, float_format=CSV_FLOAT_FORMAT)
    heading = f"# {title}\n\n" if title else ""
    with atomic_path(md_path) as part:
        part.write_text(heading + markdown_table(written, notes))
    return csv_path, md_path


def save_figure(fig: Figure, outdir: str | os.PathLike[str], name: str) -> Path:
    """Save a matplotlib figure as ``outdir/name.png`` (150 dpi) and close it.

    Written to a temporary file and renamed (:func:`atomic_path`), so an
    interrupted run never leaves a half-written figure.

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
    try:
        with atomic_path(path) as part:
            # No "Software: Matplotlib x.y" entry: the file does not change with the version.
            fig.savefig(part, dpi=150, bbox_inches="tight", format="png", metadata=PNG_METADATA)
    finally:
        plt.close(fig)
    return path
