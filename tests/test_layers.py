"""The package is layered: a module never imports one of a higher layer."""

import ast
from pathlib import Path

import pytest

import spare_theory

PACKAGE = Path(spare_theory.__file__).parent

# Layer of every module (docs/architecture.md); subpackages by prefix.
LAYERS = {
    "_validation": 0,
    "_parallel": 0,
    "placement": 1,
    "wipeout": 2,
    "wipeout_sim": 2,
    "symbolic": 2,
    "stacks": 3,
    "reordering": 3,
    "average_overhead": 3,
    "scenario": 4,
    "training": 4,
    "optimize": 4,
    "training_sim": 4,
    "sweeps": 5,
    "reports": 5,
    "cli": 6,
}


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[0]]


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        if rel.name == "__init__" and rel.parent == Path("."):
            continue  # the lazy public-API map names every layer on purpose
        parts = [p for p in rel.parts if p != "__init__"]
        yield ".".join(parts), path


def _imported(module: str, path: Path):
    tree = ast.parse(path.read_text())
    package_parts = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("spare_theory."):
                    yield node.module.removeprefix("spare_theory.")
                continue
            base = package_parts[: len(package_parts) - (node.level - 1)]
            target = base + (node.module.split(".") if node.module else [])
            if target:
                yield ".".join(target)
            else:
                yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spare_theory."):
                    yield alias.name.removeprefix("spare_theory.")


@pytest.mark.parametrize("module,path", list(_modules()), ids=lambda v: str(v))
def test_no_upward_imports(module, path):
    own = _layer(module)
    for target in _imported(module, path):
        assert _layer(target) <= own, (
            f"{module} (layer {own}) imports {target} (layer {_layer(target)})"
        )


def test_every_module_has_a_layer():
    for module, _ in _modules():
        assert module.split(".")[0] in LAYERS, f"{module} has no layer in docs/architecture.md"
