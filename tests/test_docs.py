"""The docs cite what exists: every ``module.name`` resolves, the module table is current."""

from __future__ import annotations

import ast
import importlib
import re
import runpy
from pathlib import Path

import pytest

import spare_theory

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(spare_theory.__file__).parent
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]

# The dotted name an inline code span starts with: `hourly.model.priced_law`,
# `Scenario.preset("fast_restarts")`, `training.MAX_SPARE_GROUPS = 2**25`.
_SPAN = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)[^`\n]*`")
# A span naming a file (`conftest.py`, `run.sh`), not a Python name.
_FILE_SUFFIXES = {"py", "sh", "md", "toml", "csv", "png", "json", "txt", "ipynb", "yml", "cfg"}
# Libraries the docs cite, which this test does not resolve.
_FOREIGN = {
    "numpy", "np", "scipy", "pandas", "pd", "matplotlib", "concurrent", "os", "sys", "math",
    "dask", "numba", "sympy", "tomllib", "importlib", "typing", "pytest", "tqdm", "argparse",
    "json", "pathlib", "functools", "itertools", "dataclasses", "hypothesis",
    "torch",  # torch.distributed, whose initialisation a job's restart pays
    "WorldSizeMode",  # torchft's, cited beside the hot spares' quorum
}  # fmt: skip
# Variables the docs name after the value they hold (a FailureLog is `log` in the README,
# a Job is `job` in docs/jobs.md, a Plan is `plan`).
_VARIABLES = {"log": "FailureLog", "job": "Job", "plan": "Plan"}


def _modules() -> dict[str, list[str]]:
    """Every module and subpackage of the package by its last name (``model`` -> two paths)."""
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            names.setdefault(parts[-1], []).append(".".join(parts))
    return names


def _public_names() -> dict[str, set[str]]:
    """Every name in a module's ``__all__`` -> the modules that define it (read, not imported)."""
    names: dict[str, set[str]] = {}
    for module in (m for paths in MODULES.values() for m in paths):
        path = PACKAGE.joinpath(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.parse(path.read_text()).body:
            if (
                path.name != "__init__.py"  # a subpackage re-exports its modules' names
                and isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))
            ):
                for item in node.value.elts:
                    if isinstance(item, ast.Constant):
                        names.setdefault(item.value, set()).add(module)
    return names


MODULES = _modules()
PUBLIC = _public_names()


def _has(obj: object, attr: str) -> bool:
    """``obj.attr`` exists, or ``attr`` is a field of the dataclass ``obj`` (no default)."""
    fields = getattr(obj, "__dataclass_fields__", {})
    return hasattr(obj, attr) or attr in fields


def _resolve(reference: str) -> str | None:
    """``None`` if ``reference`` resolves (or names a file or a library), else what fails."""
    head, *rest = reference.split(".")
    head = _VARIABLES.get(head, head)
    if rest[-1] in _FILE_SUFFIXES or head in _FOREIGN:
        return None
    if head == "spare_theory":
        path = []
    elif head in MODULES:
        if head in MODULES[head]:
            path = [head]  # a path from the package's root (`cycles.rep`) is never ambiguous
        elif len(MODULES[head]) > 1:
            return f"{reference}: '{head}' is ambiguous ({', '.join(sorted(MODULES[head]))})"
        else:
            path = MODULES[head][0].split(".")
    elif head in PUBLIC:
        if len(PUBLIC[head]) > 1:
            return f"{reference}: '{head}' is ambiguous ({', '.join(sorted(PUBLIC[head]))})"
        path = [*next(iter(PUBLIC[head])).split("."), head]
    else:
        return f"{reference}: '{head}' is no module, public name or library the docs may cite"
    # The longest prefix that is a module, then attributes.
    parts = [*path, *rest]
    for split in range(len(parts), -1, -1):
        name = ".".join(["spare_theory", *parts[:split]])
        try:
            obj = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        for attr in parts[split:]:
            if not _has(obj, attr):
                return f"{reference}: {name} has no {'.'.join(parts[split:])}"
            obj = getattr(obj, attr, None)
        return None
    return f"{reference}: no such module"


CITED = sorted(
    {
        (path.relative_to(ROOT).as_posix(), match)
        for path in DOCS
        for match in _SPAN.findall(path.read_text())
    }
)


@pytest.mark.parametrize(("doc", "reference"), CITED, ids=[f"{d}:{r}" for d, r in CITED])
def test_every_cited_name_resolves(doc, reference):
    assert _resolve(reference) is None, f"{doc}: {_resolve(reference)}"


def test_the_resolver_catches_what_is_missing():
    assert _resolve("hourly.model.priced_law") is None
    assert _resolve("spare_theory.time_to_train") is None
    assert _resolve("np.log") is None and _resolve("conftest.py") is None
    assert _resolve("Scenario.preset") is None  # a public class, found by its __all__
    assert _resolve("TrainingEstimate.hours") is None  # a dataclass field without default
    assert _resolve("log.scenario") is None  # a FailureLog, as the README names it
    assert _resolve("hourly.model.no_such_function") is not None
    assert "ambiguous" in (_resolve("simulation.simulate_runs") or "")
    assert _resolve("cycles.rep.rep_survival_log") is None  # the subpackage, not steps.cycles
    assert _resolve("cycles.no_such_module") is not None
    assert _resolve("training.MAX_SPARE_GROUPS") is not None  # it is cycles.spare's
    assert _resolve("step_sim.simulate_steps") is not None  # a module of the flat layout
    assert _resolve("Scenario.no_such_field") is not None
    assert _SPAN.findall("`training.MAX_SPARE_GROUPS = 2**25`") == ["training.MAX_SPARE_GROUPS"]


def test_the_module_table_is_current():
    # docs/architecture.md's table of modules and line counts is generated by
    # docs/module_table.py; a stale count or a missing module fails here.
    table = runpy.run_path(str(ROOT / "docs" / "module_table.py"))
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert table["current_table"]() in text, "run: python docs/module_table.py --write"


def test_the_api_table_is_current():
    # README.md's API table lists spare_theory's _API map, generated likewise.
    table = runpy.run_path(str(ROOT / "docs" / "module_table.py"))
    text = (ROOT / "README.md").read_text()
    assert table["api_table"]() in text, "run: python docs/module_table.py --write"
