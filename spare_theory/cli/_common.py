"""Pieces shared by the subcommands: output, common options, executors."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import decimal
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Output",
    "UsageError",
    "add_design_options",
    "add_executor_options",
    "add_json",
    "add_report_options",
    "add_seed",
    "executor_from_args",
    "integral",
    "real",
    "report_output",
]


class UsageError(Exception):
    """A command-line usage error: printed as one line, exit code 2."""


@dataclass(frozen=True)
class Output:
    """What a subcommand produced: ``text`` for people, ``data`` for ``--json``.

    ``warnings`` go to stderr, one ``spare-theory: warning: ...`` line each,
    with or without ``--json``; ``exit_code`` is the command's (3: a
    requirement missed, ``spare-theory plan --require``).

    Examples
    --------
    >>> Output("N=13 r=3", {"N": 13, "r": 3}).data["N"]
    13
    """

    text: str
    data: Any = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    exit_code: int = 0


def integral(text: str) -> int:
    """An integer option's value: ``4096``, or an integral number such as ``1e12`` or ``6.0e5``.

    Parsed exactly (``decimal``), so ``1e12`` is 10**12; ranges are the
    library's to check.

    Raises
    ------
    argparse.ArgumentTypeError
        For a fraction, NaN, an infinity, text that is no number, or an
        exponent form beyond 1e18.

    Examples
    --------
    >>> integral("1e12"), integral("6.0e5"), integral("-3")
    (1000000000000, 600000, -3)
    >>> integral("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not an integer: '1.5'
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value.adjusted() > 18:  # int() of 1e999999999 would not return
        raise argparse.ArgumentTypeError(f"too large: {text!r}")
    return int(value)


def real(text: str) -> float:
    """A real option's value (``float``; ranges are the library's to check).

    Examples
    --------
    >>> real("2.5e3")
    2500.0
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: print the machine-readable payload instead of the text."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def add_seed(parser: argparse.ArgumentParser, default: int = 0) -> None:
    """``--seed``: the random seed (an int; checked by the library)."""
    parser.add_argument(
        "--seed", type=integral, default=default, help=f"random seed (default {default})"
    )


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """``--workers K`` (local Dask cluster) or ``--scheduler ADDR`` (a running one)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=integral,
        default=None,
        help="run on a local Dask cluster with K worker processes",
    )
    group.add_argument(
        "--scheduler", default=None, help="address of a running Dask scheduler (tcp://host:port)"
    )


@contextlib.contextmanager
def executor_from_args(args: argparse.Namespace) -> Iterator[concurrent.futures.Executor | None]:
    """Yield ``None`` (serial) or a Dask executor built from ``--workers`` / ``--scheduler``."""
    workers = getattr(args, "workers", None)
    scheduler = getattr(args, "scheduler", None)
    if workers is None and scheduler is None:
        yield None
        return
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ValueError(
            "--workers/--scheduler need Dask: pip install 'spare-theory[dask]'"
        ) from exc
    if scheduler is not None:
        with Client(scheduler) as client:
            yield client.get_executor()
    else:
        with (
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True) as cluster,
            Client(cluster) as client,
        ):
            yield client.get_executor()


def add_design_options(parser: argparse.ArgumentParser, *, trials: int, what: str) -> None:
    """Options ``--N``, ``--r`` (a placement), ``--trials`` (0: none), ``--seed``, ``--json``."""
    parser.add_argument(
        "--N", type=integral, required=True, help="number of data-parallel groups (1e12 accepted)"
    )
    parser.add_argument(
        "--r", type=integral, required=True, help="redundancy (hosts per shard type)"
    )
    parser.add_argument(
        "--trials",
        type=integral,
        default=trials,
        help=f"simulated {what} (default {trials}; 0 skips the simulation)",
    )
    add_seed(parser)
    add_json(parser)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """Options of every report: --quick, --outdir, --no-progress, --seed, executors, --json."""
    parser.add_argument(
        "--quick", action="store_true", help="small grids and sample sizes (seconds)"
    )
    parser.add_argument(
        "--outdir", default=".", help="folder that receives tables/ and figures/ (default .)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    add_seed(parser)
    add_executor_options(parser)
    add_json(parser)


def report_output(paths: list[Path], data: dict[str, Any] | None = None) -> Output:
    """What a ``table`` command prints: each Markdown table's verdict, then the files written.

    The verdict of a table is the prose of its Markdown file (title and
    notes: criteria, errors, pass or fail), the table itself left to the
    files and ``--json``; each paragraph is wrapped to 100 columns.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     md = Path(tmp) / "demo.md"
    ...     _ = md.write_text("# Demo table\\n\\n| a |\\n| --- |\\n| 1 |\\n\\nMAE 0.1 %: PASS.\\n")
    ...     print(report_output([md]).text.replace(tmp, "DIR"))
    demo: Demo table
      MAE 0.1 %: PASS.
    wrote DIR/demo.md
    """
    lines: list[str] = []
    verdicts: dict[str, str] = {}
    for path in map(Path, paths):
        if path.suffix != ".md":
            continue
        paragraphs = [
            " ".join(p.split())
            for p in re.split(r"\n\s*\n", path.read_text())
            if p.strip() and not p.lstrip().startswith("|")
        ]
        title = paragraphs.pop(0).lstrip("# ") if paragraphs and paragraphs[0][0] == "#" else ""
        verdicts[path.stem] = "\n\n".join(paragraphs)
        lines += textwrap.wrap(f"{path.stem}: {title}", 100, subsequent_indent="  ")
        for paragraph in paragraphs:
            lines += textwrap.wrap(paragraph, 100, initial_indent="  ", subsequent_indent="  ")
    lines += [f"wrote {p}" for p in paths]
    payload = (data or {}) | {"verdicts": verdicts, "files": [str(p) for p in paths]}
    return Output("\n".join(lines), payload)
