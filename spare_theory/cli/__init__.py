"""The ``spare-theory`` command line.

Every subcommand lives in a module of this package that exposes
``register(subparsers, table_subparsers)``; its handler returns a
:class:`Output` (human text plus a JSON-able payload).  ``--json`` prints the
payload instead of the text.  Bad arguments (argparse's or a ``ValueError``
from the library) become one line on stderr and exit code 2; ``--help`` and
``--version`` exit 0.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ._common import Output, UsageError

__all__ = ["Output", "main"]

# Modules that contribute subcommands, in the order ``--help`` lists them.
_COMMAND_MODULES = (
    "mu",
    "overhead",
    "training",
    "sweep",
    "domains",
    "microbatch",
    "repairs",
    "fit",
    "compare",
    "trace",
    "simulator",
    "published",
    "reproduce",
    "plan",
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (try '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    """The ``spare-theory`` parser with every subcommand registered.

    Examples
    --------
    >>> parser = build_parser()
    >>> parser.parse_args(["mu", "--N", "13", "--r", "3"]).trials
    2000
    """
    import spare_theory  # the package itself, for its version

    parser = _Parser(
        prog="spare-theory",
        description="Model, optimise and simulate SPARe fault tolerance for LLM training.",
    )
    parser.add_argument(
        "--version", action="version", version=f"spare-theory {spare_theory.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    table = commands.add_parser("table", help="theory-versus-simulation error tables")
    tables = table.add_subparsers(dest="table", required=True, parser_class=_Parser)
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(commands, tables)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``spare-theory`` console script; returns the exit code.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success (and for ``--help``, ``--version``), 2 for bad arguments
        (one line on stderr), 3 when a requirement is missed (``plan
        --require``), 130 when interrupted.

    Examples
    --------
    >>> main(["--version"])
    spare-theory 0.1.0
    0
    >>> main(["mu", "--N", "13", "--r", "3", "--trials", "0"])
    mu(N=13, r=3), cyclic placement on marks 0 1 3
      Gamma form  Gamma(1+1/r) N^(1-1/r) = 4.93708
      sharp form  sum_f P(T > f)         = 5.85573
    0
    """
    try:
        args = build_parser().parse_args(argv)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")  # once per place, as Python shows them
            output = args.handler(args)
    except SystemExit as exc:  # --help and --version print, then exit 0
        return exc.code if isinstance(exc.code, int) else 0
    except (UsageError, ValueError) as exc:
        print(f"spare-theory: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spare-theory: interrupted", file=sys.stderr)
        return 130
    for warning in [*output.warnings, *_said(caught)]:
        print(f"spare-theory: warning: {warning}", file=sys.stderr)
    try:
        if getattr(args, "json", False):
            print(json.dumps(output.data, indent=2, default=_json_default))
        else:
            print(output.text)
        sys.stdout.flush()
    except BrokenPipeError:  # piped into head: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return output.exit_code


def _said(caught: list[warnings.WarningMessage]) -> list[str]:
    """Library warnings the command raised, one line per place, instead of their raw form.

    The library's own code is fixed where a warning is understood (the
    quadrature at N = 1e12); any other one is said, with where it came from,
    since the numbers printed may depend on it.
    """
    lines = []
    for w in caught:
        where = f"{Path(w.filename).name}:{w.lineno}"
        line = f"{w.category.__name__} at {where}: {w.message} (the results may be affected)"
        if line not in lines:
            lines.append(line)
    return lines


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
