"""The ``spare-theory`` command line.

The commands are data: :data:`COMMANDS` names each subcommand, its one-line
help and the function of this package that adds its description and options
(``configure_<name>(parser)``, which sets ``handler``), and each report of
:data:`spare_theory.reports.catalogue.REPORTS` is a ``spare-theory table
NAME``.  Only the command on the command line is configured, so ``--help``
and each command import no more than they need.  A handler returns an
:class:`Output` (human text plus a JSON-able payload); ``--json`` prints the
payload instead of the text.  Bad arguments (argparse's or a ``ValueError``
from the library) become one line on stderr and exit code 2; ``--help`` and
``--version`` exit 0.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..reports.catalogue import REPORTS, Report, ReportOptions
from ._common import Output, UsageError, add_report_options, executor_from_args, report_output

__all__ = ["COMMANDS", "Command", "Output", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its line in ``--help``, the module that configures it.

    Examples
    --------
    >>> COMMANDS[0].name, COMMANDS[0].module
    ('mu', 'mu')
    """

    name: str
    help: str
    module: str

    def configure(self, parser: argparse.ArgumentParser) -> None:
        """Add the description and options (``configure_<name>`` of :attr:`module`)."""
        module = importlib.import_module(f"{__name__}.{self.module}")
        getattr(module, f"configure_{self.name}")(parser)


#: The subcommands in the order ``--help`` lists them, after ``table``.
COMMANDS = (
    Command("mu", "endurable failures mu(N, r): Gamma form, sharp form and Monte Carlo", "mu"),
    Command("overhead", "average stack overhead S(N, r): closed forms and simulation", "overhead"),
    Command("optimize", "best (r, checkpoint interval) and hours for each strategy", "training"),
    Command("headline", "the published 600k-GPU comparison over group sizes", "training"),
    Command(
        "sweep",
        "best plan of each strategy over a grid of scenarios (any field, several values)",
        "sweep",
    ),
    Command(
        "fit", "fit lifetime and repair laws to a failure log; lemons, bursts, survival plot", "fit"
    ),
    Command(
        "compare",
        "SPARe beside elastic DP, hot spares and fast restarts on one scenario",
        "compare",
    ),
    Command("reproduce", "regenerate every table and figure", "reproduce"),
    Command(
        "audit",
        "the closed forms against the simulation, every strategy, scenarios drawn at random",
        "audit",
    ),
    Command(
        "plan",
        "a job's best plan per strategy, with dollars, MWh, CO2 and lost time by cause",
        "plan",
    ),
)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (try '{self.prog} --help')")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``spare-theory`` parser: every subcommand listed, configured as ``argv`` needs.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments to be parsed: only the subcommand they name (its first
        word not starting with ``-``, and the table after ``table``) gets its
        description and options.  ``None``: every subcommand gets them.

    Examples
    --------
    >>> parser = build_parser()
    >>> parser.parse_args(["mu", "--N", "13", "--r", "3"]).trials
    2000
    """
    import spare_theory  # the package itself, for its version

    words = None if argv is None else [a for a in argv if not a.startswith("-")][:2]
    parser = _Parser(
        prog="spare-theory",
        description="Model, optimise and simulate SPARe fault tolerance for LLM training.",
    )
    parser.add_argument(
        "--version", action="version", version=f"spare-theory {spare_theory.__version__}"
    )
    parser.add_argument(
        "--import",
        metavar="FILE",
        help="import the Python file FILE before anything else, once per option: a file that "
        "registers a strategy (spare_theory.register_strategy) makes it a choice of "
        "--strategy, e.g. --import examples/rebalance.py",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    table = commands.add_parser("table", help="theory-versus-simulation error tables")
    tables = table.add_subparsers(dest="table", required=True, parser_class=_Parser)
    for report in REPORTS.values():
        sub = tables.add_parser(report.name, help=report.help)
        if words is None or words == ["table", report.name]:
            _configure_table(sub, report)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help)
        if words is None or words[:1] == [command.name]:
            command.configure(sub)
    return parser


def _configure_table(parser: argparse.ArgumentParser, report: Report) -> None:
    """``spare-theory table NAME``: the report's description, the report options."""
    parser.description = report.description
    add_report_options(parser)
    if report.full is not None:
        parser.add_argument("--full", action="store_true", help=report.full)
    parser.set_defaults(handler=_run_table(report))


def _run_table(report: Report) -> Callable[[argparse.Namespace], Output]:
    def run(args: argparse.Namespace) -> Output:
        if getattr(args, "full", False) and args.quick:
            raise ValueError("--full and --quick exclude each other")
        with executor_from_args(args) as executor:
            paths = report.run(
                ReportOptions(
                    args.outdir,
                    quick=args.quick,
                    executor=executor,
                    seed=args.seed,
                    progress=not args.no_progress,
                    full=getattr(args, "full", False),
                )
            )
        return report_output(paths)

    return run


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
        argv = _imported(sys.argv[1:] if argv is None else list(argv))
        args = build_parser(argv).parse_args(argv)
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


def _imported(argv: list[str]) -> list[str]:
    """Import the file of each ``--import FILE`` (before the parser lists the strategies).

    Returns the other arguments.  A file is imported as a module named by its
    stem (its rule factories then pickle by that name); ``ValueError`` names
    one that does not import or registers a malformed strategy.
    """
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--import", dest="modules", action="append", default=[])
    known, rest = pre.parse_known_args(argv)
    for name in known.modules:
        spec = importlib.util.spec_from_file_location(Path(name).stem, name)
        try:
            if spec is None or spec.loader is None:
                raise ImportError("not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        except (ImportError, OSError, TypeError) as exc:  # TypeError: a malformed strategy
            raise ValueError(f"--import {name}: {exc}") from exc
    return rest


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
