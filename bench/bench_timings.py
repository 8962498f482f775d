"""Wall-clock timings the README and CONTRIBUTING quote, with the machine they ran on.

    python bench/bench_timings.py                # everything below
    python bench/bench_timings.py tests          # the everyday tier and the full suite
    python bench/bench_timings.py reproduce      # spare-theory reproduce, default and --quick

Each command runs in a fresh process from the repository root; the script
prints its wall time, the CPU time of it and its children, the CPU share
(CPU / wall: 200 % keeps both cores of a 2-core machine busy), and the machine:
cores, processor, and the load average before and after (an idle machine has a
1-minute load near 0 before a run; timings taken under load say so).
``reproduce`` writes to a temporary folder, not over the committed files.
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}"


def _run(label: str, command: list[str]) -> None:
    before = os.getloadavg()[0]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    tail = (done.stdout.strip().splitlines() or [""])[-1]
    print(
        f"{label:<32} {wall / 60:5.0f} min {wall % 60:4.1f} s wall   CPU {cpu:7.1f} s "
        f"({100 * cpu / wall:3.0f} %)   load {before:.2f} -> {os.getloadavg()[0]:.2f}   "
        f"exit {done.returncode}   {tail[:60]}",
        flush=True,
    )


def main(argv: list[str]) -> None:
    what = set(argv) or {"tests", "reproduce"}
    print(_machine(), flush=True)
    env = [sys.executable]
    if "tests" in what:
        _run(
            'pytest -m "not slow"',
            [*env, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"],
        )
        _run("pytest (the whole suite)", [*env, "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    if "reproduce" in what:
        with tempfile.TemporaryDirectory() as out:
            cli = [*env, "-m", "spare_theory.cli", "reproduce", "--no-progress", "--outdir", out]
            _run("spare-theory reproduce", cli)
            _run("spare-theory reproduce --quick", [*cli, "--quick"])


if __name__ == "__main__":
    main(sys.argv[1:])
