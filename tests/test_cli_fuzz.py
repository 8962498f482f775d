"""Random argument lists thrown at the command line (in process): never a traceback.

Every generated list either carries at least one *poison* -- a value or token
that is invalid whatever the rest says (a count that is not a non-negative
integer, NaN, infinities, negative costs, an unknown option or subcommand, a
missing required option) -- and must then exit 2 with one error line, or is a
fast command with small values (``mu`` with a few trials, ``overhead`` with
0-2 trials), which must exit 0 or 2.  Long jobs (reproduce, tables, sweep,
headline, optimize) are only ever generated poisoned, so the test stays fast;
each option appears at most once, so a later valid copy cannot override the
poison.
"""

import contextlib
import io

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from spare_theory.cli import main

COUNT, REAL, FLAG = "count", "real", "flag"
REPORTS = ("mu", "overhead", "training", "sweep")

# Option specs per subcommand: option -> kind, or a tuple of allowed choices.
_REPORT_OPTIONS = {
    "--quick": FLAG,
    "--no-progress": FLAG,
    "--seed": COUNT,
    "--workers": COUNT,
    "--json": FLAG,
}
COMMANDS = {
    ("mu",): {"--N": COUNT, "--r": COUNT, "--trials": COUNT, "--seed": COUNT, "--json": FLAG},
    ("overhead",): {"--N": COUNT, "--r": COUNT, "--trials": COUNT, "--seed": COUNT, "--json": FLAG},
    ("optimize",): {
        "--gpus": COUNT,
        "--gpus-per-group": COUNT,
        "--gpu-mtbf-hours": REAL,
        "--restart-minutes": REAL,
        "--checkpoint-minutes": REAL,
        "--work-hours": REAL,
        "--weibull-shape": REAL,
        "--repair-minutes": REAL,
        "--microbatches": COUNT,
        "--paper": COUNT,
        "--strategy": ("ckpt", "rep", "spare"),
        "--planned-restarts": FLAG,
        "--json": FLAG,
    },
    ("headline",): {"--json": FLAG},
    ("sweep",): {
        "--gpus": COUNT,
        "--gpu-mtbf-hours": REAL,
        "--gpus-per-group": COUNT,
        "--restart-model": ("constant", "linear"),
        "--grid": ("quick", "full"),
        "--checkpoint-minutes": REAL,
        "--work-hours": REAL,
        "--repair-minutes": REAL,
        "--no-progress": FLAG,
        "--workers": COUNT,
        "--json": FLAG,
    },
    ("reproduce",): {"--only": REPORTS, **_REPORT_OPTIONS},
    **{("table", name): dict(_REPORT_OPTIONS) for name in ("mu", "overhead", "training")},
}
REQUIRED = {("mu",): ("--N", "--r"), ("overhead",): ("--N", "--r")}
# Commands whose output goes to files: always pointed at a scratch folder.
WRITES = {("sweep",), ("reproduce",), ("table", "mu"), ("table", "overhead"), ("table", "training")}

# Values that are invalid for every option of the kind, whatever the other options say.
BAD = {
    COUNT: [
        "abc",
        "1.5",
        "nan",
        "inf",
        "",
        "-1",
        "-7",
        "1.5e3x",
        "1e400",
        "0x10",
        "2**3",
        "9223372036854775808x",
    ],
    REAL: ["nan", "inf", "-inf", "abc", "", "-1", "-0.5", "1,5"],
    "choice": ["bogus", "", "MU"],
}
# Harmless values for the other options (they never make a poisoned list valid).
SOME = {
    COUNT: ["0", "1", "2", "3", "7", "64", "1000", "1e3", "600000"],
    REAL: ["0", "0.5", "1", "60", "50000", "1e9"],
}
# Workers are never drawn valid: a valid value starts a Dask cluster.
NEVER_VALID = {"--workers"}


def _values(kind, option):
    if isinstance(kind, tuple):
        return st.lists(st.sampled_from(list(kind) + BAD["choice"]), min_size=1, max_size=3)
    pool = BAD[kind] if option in NEVER_VALID else BAD[kind] + SOME[kind]
    return st.lists(
        st.sampled_from(pool),
        min_size=1,
        max_size=2 if option in ("--gpus", "--gpus-per-group", "--gpu-mtbf-hours") else 1,
    )


@st.composite
def poisoned(draw):
    """A random argument list with at least one poison; returns ``(argv, True)``."""
    command = draw(st.sampled_from(sorted(COMMANDS)))
    spec = COMMANDS[command]
    options = draw(st.lists(st.sampled_from(sorted(spec)), unique=True, max_size=5))
    groups = {}
    for option in options:
        kind = spec[option]
        groups[option] = [option] if kind == FLAG else [option, *draw(_values(kind, option))]
    valued = [o for o in sorted(spec) if spec[o] != FLAG]
    poisons = ["unknown option", "extra token", "bad command"]
    if valued:
        poisons.append("bad value")
    if command in REQUIRED:
        poisons.append("missing required")
    poison = draw(st.sampled_from(poisons))
    if poison == "bad value":
        option = draw(st.sampled_from(valued))
        kind = spec[option]
        bad = BAD["choice"][:2] if isinstance(kind, tuple) else BAD[kind]
        groups[option] = [option, draw(st.sampled_from(bad))]
    elif poison == "unknown option":
        # None is a prefix of a real option: argparse would expand an abbreviation.
        groups["--bogus"] = [
            draw(st.sampled_from(["--bogus", "--R", "--seeds", "-x", "--trial-count"]))
        ]
    elif poison == "extra token":
        # Never a token some option could take as a valid value
        # ("1" after --gpus, "mu" after --only).
        groups["extra"] = [draw(st.sampled_from(["extra", "stray.csv"]))]
    if command in REQUIRED and poison != "missing required":
        for option in REQUIRED[command]:
            groups.setdefault(option, [option, draw(st.sampled_from(SOME[COUNT]))])
    if poison == "missing required":
        for option in REQUIRED[command]:
            groups.pop(option, None)
        keep = draw(st.sampled_from([None, *REQUIRED[command]]))
        if keep:
            groups[keep] = [keep, "7"]
    order = draw(st.permutations(sorted(groups)))
    head = ["bogus"] if poison == "bad command" else list(command)
    return [*head, *(tok for key in order for tok in groups[key])], True


@st.composite
def fast_commands(draw):
    """``mu`` or ``overhead`` with small values (some invalid); returns ``(argv, False)``."""
    command = draw(st.sampled_from(["mu", "overhead"]))
    trials = ["1", "2", "5", "20"] if command == "mu" else ["0", "1", "2"]
    groups = [
        ["--N", draw(st.sampled_from(["1", "2", "3", "7", "13", "31", "64"]))],
        ["--r", draw(st.sampled_from(["1", "2", "3", "4"]))],
    ]
    if draw(st.booleans()):
        groups.append(["--trials", draw(st.sampled_from(trials))])
    if draw(st.booleans()):
        groups.append(["--seed", draw(st.sampled_from(["0", "1", "12345", "-1"]))])
    if draw(st.booleans()):
        groups.append(["--json"])
    order = draw(st.permutations(groups))
    return [command, *(tok for group in order for tok in group)], False


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except BaseException as exc:
            raise AssertionError(f"{argv!r} raised {type(exc).__name__}: {exc}") from exc
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=st.one_of(poisoned(), fast_commands()))
# Regressions found by this test: MemoryError, OverflowError, a bad seed accepted with --trials 0.
@example(case=(["mu", "--N", "1000000000000", "--r", "2", "--trials", "1"], True))
@example(case=(["mu", "--N", "9223372036854775808", "--r", "2"], True))
@example(case=(["overhead", "--N", "10000000000000000000", "--r", "2", "--trials", "0"], True))
@example(case=(["overhead", "--N", "7", "--r", "3", "--trials", "0", "--seed", "-1"], True))
def test_cli_never_shows_a_traceback(case, tmp_path, monkeypatch):
    argv, must_fail = case
    monkeypatch.chdir(tmp_path)  # anything written lands in a scratch folder
    if tuple(argv[:2]) in WRITES or tuple(argv[:1]) in WRITES:
        argv = [*argv, "--outdir", str(tmp_path)]
    code, out, err = _run(argv)
    assert "Traceback" not in out + err, argv
    assert code in (0, 2), (argv, code, err)
    if must_fail:
        assert code == 2, (argv, out[:300])
    if code == 2:
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("spare-theory: error:"), (argv, err)
