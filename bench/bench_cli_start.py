"""How fast the command line starts: ``spare-theory --help`` against ``import numpy``.

    python bench/bench_cli_start.py             # spare-theory --help
    python bench/bench_cli_start.py --commands  # and each command's own --help
    python bench/bench_cli_start.py --repeats 9

Every figure is a fresh Python process from the repository root (so the
checkout's package is the one imported), timed from start to exit, best of
``--repeats``; the baseline is a process that only runs ``import numpy``,
measured the same way in between.  The target of ``--help`` is at most 3
times the baseline: the parser lists the commands without importing numpy
or the models.  A command's own ``--help`` configures that command only
(``optimize`` reads the scenario classes for its options, so it imports
them).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("mu", "overhead", "optimize", "headline", "sweep", "fit", "compare", "reproduce")


def _seconds(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _best(argv: list[str], baseline: list[str], repeats: int) -> tuple[float, float]:
    """Best of ``repeats`` for ``argv`` and for ``baseline``, runs interleaved (same load)."""
    runs, base = [], []
    for _ in range(repeats):
        runs.append(_seconds(argv))
        base.append(_seconds(baseline))
    return min(runs), min(base)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--commands", action="store_true", help="also each command's --help")
    args = parser.parse_args(argv)
    numpy = ["-c", "import numpy"]
    cli = ["-m", "spare_theory.cli"]
    print(f"best of {args.repeats}, each against `python -c 'import numpy'` run alongside")
    help_s, numpy_s = _best([*cli, "--help"], numpy, args.repeats)
    print(f"spare-theory --help        {help_s / numpy_s:5.2f} x import numpy (target <= 3)")
    for command in COMMANDS if args.commands else ():
        seconds, numpy_s = _best([*cli, command, "--help"], numpy, args.repeats)
        print(f"spare-theory {command + ' --help':<14}{seconds / numpy_s:5.2f} x import numpy")


if __name__ == "__main__":
    main(sys.argv[1:])
