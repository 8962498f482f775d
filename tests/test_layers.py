"""The package is layered and its modules talk through public names only.

Three rules, checked on the source with :mod:`ast`:

- a module never imports one of a higher layer, whether by an ``import``
  statement or by ``importlib.import_module`` / ``__import__`` with a name that
  can be resolved statically (constant strings and f-strings whose fixed prefix
  names the target package; ``__name__`` and ``__package__`` are substituted);
- a dynamic import whose target package cannot be resolved is an error (except
  in the package ``__init__``, whose lazy public-API map names every layer on
  purpose);
- a module never imports another module's private (``_``-prefixed, not dunder)
  names, nor reaches them as ``module._name``.  Private *modules* such as
  ``_validation`` are fine: their functions have public names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import spare_theory

PACKAGE = Path(spare_theory.__file__).parent

# Layer of every module (docs/architecture.md); subpackages by prefix.
LAYERS = {
    "_validation": 0,
    "_parallel": 0,
    "_numerics": 0,
    "_jit": 0,
    "_lazy": 0,
    "_caching": 0,
    "_samples": 0,
    "placement": 1,
    "wipeout": 2,
    "lifetimes": 2,
    "stacking": 3,
    "cycles": 4,
    "planning": 4,
    "hourly": 5,
    "steps": 5,
    "strategies": 6,
    "training": 7,
    "traces": 7,
    "jobs": 7,
    "sweeps": 8,
    "audits": 8,
    "reports": 8,
    "cli": 9,
}

_DYNAMIC_IMPORTERS = {("importlib", "import_module"), (None, "__import__"), (None, "import_module")}


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[0]]


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        yield ".".join(parts), path


def _package_parts(module: str, path: Path) -> list[str]:
    parts = module.split(".") if module else []
    return parts if path.name == "__init__.py" else parts[:-1]


def _resolve_from(node: ast.ImportFrom, module: str, path: Path) -> list[str]:
    """Package-relative targets of ``from X import a, b`` (empty if outside the package)."""
    if node.level == 0:
        if node.module and node.module.startswith("spare_theory."):
            base = node.module.removeprefix("spare_theory.").split(".")
        elif node.module == "spare_theory":
            base = []
        else:
            return []
    else:
        package = _package_parts(module, path)
        base = package[: len(package) - (node.level - 1)]
        base += node.module.split(".") if node.module else []
    if base:
        return [".".join(base)]
    return [alias.name for alias in node.names]


def _static_prefix(arg: ast.expr, module: str, path: Path) -> tuple[str, bool] | None:
    """The fixed leading text of an import-name argument and whether it is the whole name."""
    own = ".".join(["spare_theory", *module.split(".")]) if module else "spare_theory"
    package = ".".join(["spare_theory", *_package_parts(module, path)])
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value, True
    if isinstance(arg, ast.JoinedStr):
        text = ""
        for part in arg.values:
            if isinstance(part, ast.Constant):
                text += str(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                if part.value.id == "__name__":
                    text += own
                elif part.value.id == "__package__":
                    text += package
                else:
                    return text, False
            else:
                return text, False
        return text, True
    return None


def _dynamic_targets(tree: ast.AST, module: str, path: Path) -> Iterator[tuple[int, str | None]]:
    """``(line, package-relative target or None if unresolvable)`` of each dynamic import."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            key: tuple[str | None, str] = (func.value.id, func.attr)
        elif isinstance(func, ast.Name):
            key = (None, func.id)
        else:
            continue
        if key not in _DYNAMIC_IMPORTERS:
            continue
        prefix = _static_prefix(node.args[0], module, path)
        if prefix is None:
            yield node.lineno, None
            continue
        text, complete = prefix
        if not text.startswith("spare_theory"):
            if complete:
                continue  # a third-party module named in full
            yield node.lineno, None
            continue
        rest = text.removeprefix("spare_theory").lstrip(".")
        top = rest.split(".")[0]
        # The top-level package must be fixed text followed by a dot (or the whole name).
        if top and (complete or rest.startswith(top + ".")):
            yield node.lineno, rest
        else:
            yield node.lineno, None


def _imported(module: str, path: Path) -> Iterator[tuple[int, str | None]]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for target in _resolve_from(node, module, path):
                yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spare_theory."):
                    yield node.lineno, alias.name.removeprefix("spare_theory.")
    yield from _dynamic_targets(tree, module, path)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_uses(module: str, path: Path) -> Iterator[str]:
    """Private names this module takes from other modules of the package."""
    tree = ast.parse(path.read_text())
    module_aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            targets = _resolve_from(node, module, path)
            if not targets:
                continue
            from_module = node.module is not None or node.level == 0
            for alias in node.names:
                bound = alias.asname or alias.name
                if from_module and targets != [alias.name]:
                    source = targets[0]
                    if (PACKAGE / Path(*source.split("."), f"{alias.name}.py")).exists() or (
                        PACKAGE / Path(*source.split("."), alias.name) / "__init__.py"
                    ).exists():
                        module_aliases[bound] = f"{source}.{alias.name}"
                    elif _is_private(alias.name) and source != module:
                        yield f"line {node.lineno}: {alias.name} from {source}"
                else:  # ``from . import wipeout``: a module
                    prefix = targets[0] if targets != [alias.name] else ""
                    module_aliases[bound] = f"{prefix}.{alias.name}".lstrip(".")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spare_theory.") and alias.asname:
                    module_aliases[alias.asname] = alias.name.removeprefix("spare_theory.")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
            and _is_private(node.attr)
            and module_aliases[node.value.id] != module
        ):
            yield f"line {node.lineno}: {module_aliases[node.value.id]}.{node.attr}"


MODULES = list(_modules())
# The package __init__ is the public map and _lazy its loader: they name every layer on purpose.
LAYERED = [(m, p) for m, p in MODULES if m and m != "_lazy"]


@pytest.mark.parametrize(("module", "path"), LAYERED, ids=[m for m, _ in LAYERED])
def test_no_upward_imports(module: str, path: Path) -> None:
    own = _layer(module)
    for line, target in _imported(module, path):
        assert target is not None, f"{module} line {line}: dynamic import with no fixed package"
        assert _layer(target) <= own, (
            f"{module} (layer {own}) line {line} imports {target} (layer {_layer(target)})"
        )


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m or "spare_theory" for m, _ in MODULES])
def test_no_private_names_across_modules(module: str, path: Path) -> None:
    uses = list(_private_uses(module, path))
    assert not uses, f"{module or 'spare_theory'} takes private names of other modules: {uses}"


def test_every_module_has_a_layer() -> None:
    for module, _ in LAYERED:
        assert module.split(".")[0] in LAYERS, f"{module} has no layer in docs/architecture.md"


# The checker itself must catch what it claims to: run it on planted sources.


def _check_source(tmp_path: Path, name: str, source: str) -> tuple[list, list]:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return list(_imported(name, path)), list(_private_uses(name, path))


def test_checker_sees_hidden_upward_imports(tmp_path: Path) -> None:
    imported, _ = _check_source(
        tmp_path,
        "placement",
        "import importlib\n"
        "m = importlib.import_module('spare_theory.reports.mu')\n"
        "n = importlib.import_module(f'spare_theory.cli.{x}')\n"
        "o = importlib.import_module(f'{__package__}.sweeps')\n"
        "p = importlib.import_module(name)\n"
        "q = __import__('spare_theory.training.optimize')\n",
    )
    assert imported == [
        (2, "reports.mu"),
        (3, "cli."),
        (4, "sweeps"),
        (5, None),
        (6, "training.optimize"),
    ]


def test_checker_sees_private_imports(tmp_path: Path) -> None:
    _, private = _check_source(
        tmp_path,
        "average_overhead",
        "from .wipeout import _tail_end, endurable_failures\n"
        "from . import wipeout as w\n"
        "from spare_theory.training.estimate import _validate_plan\n"
        "x = w._smooth_sum(1)\n"
        "y = w.__name__\n",
    )
    assert private == [
        "line 1: _tail_end from wipeout",
        "line 3: _validate_plan from training.estimate",
        "line 4: wipeout._smooth_sum",
    ]


def _import_graph(modules: list[tuple[str, Path]]) -> tuple[list[str], list[tuple[int, int]]]:
    """Modules and ``(importer, imported)`` edges between them (statically resolvable imports)."""
    names = [m for m, _ in modules]
    index = {m: i for i, m in enumerate(names)}
    edges = []
    for module, path in modules:
        for _, target in _imported(module, path):
            if target is None:
                continue
            # ``from ..cycles.base import x`` targets a module; ``from .. import x`` a package.
            while target and target not in index:
                target = target.rpartition(".")[0]
            if target and target != module:
                edges.append((index[module], index[target]))
    return names, edges


def _circles(names: list[str], edges: list[tuple[int, int]]) -> list[list[str]]:
    """Groups of modules that import each other (strongly connected components)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows, cols = zip(*edges) if edges else ((), ())
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(graph, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for name, label in zip(names, labels, strict=True):
        groups.setdefault(int(label), []).append(name)
    return [sorted(g) for g in groups.values() if len(g) > 1]


def test_no_import_circles() -> None:
    # Function-level imports count: a circle hidden in a function is still a circle.
    assert _circles(*_import_graph(LAYERED)) == []


def test_circle_checker_sees_a_circle(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from spare_theory.b import f\n")
    b.write_text("def g():\n    from spare_theory.a import h\n")
    assert _circles(*_import_graph([("a", a), ("b", b)])) == [["a", "b"]]
