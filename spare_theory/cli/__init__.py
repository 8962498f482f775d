"""The ``spare-theory`` command line.

Every subcommand lives in a module of this package that exposes
``register(subparsers, table_subparsers)``; its handler returns a
:class:`Output` (human text plus a JSON-able payload).  ``--json`` prints the
payload instead of the text.  Bad arguments (argparse's or a ``ValueError``
from the library) become one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from ._common import Output, UsageError

__all__ = ["Output", "main"]

# Modules that contribute subcommands, in the order ``--help`` lists them.
_COMMAND_MODULES = ("mu", "overhead", "training", "sweep", "reproduce")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2."""

    def error(self, message):
        raise UsageError(f"{message} (try '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="spare-theory",
        description="Model, optimise and simulate SPARe fault tolerance for LLM training.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    table = commands.add_parser("table", help="theory-versus-simulation error tables")
    tables = table.add_subparsers(dest="table", required=True, parser_class=_Parser)
    for name in _COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(commands, tables)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``spare-theory`` console script; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        output = args.handler(args)
    except (UsageError, ValueError) as exc:
        print(f"spare-theory: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("spare-theory: interrupted", file=sys.stderr)
        return 130
    if getattr(args, "json", False):
        print(json.dumps(output.data, indent=2, default=_json_default))
    else:
        print(output.text)
    return 0


def _json_default(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
