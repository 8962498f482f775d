"""The public API: every advertised name resolves, and no submodule shadows a function."""

import importlib
import importlib.util
import subprocess
import sys

import pytest

import spare_theory as st


@pytest.mark.parametrize("name", sorted(st._API))
def test_every_public_name_resolves(name):
    value = getattr(st, name)
    assert getattr(importlib.import_module(f"spare_theory.{st._API[name]}"), name) is value


def test_no_module_is_named_like_a_public_name():
    # Importing spare_theory.X binds X on the package: a module named like a public
    # function would replace it (st.overhead would become a module).
    assert not {name for name in st._API if importlib.util.find_spec(f"spare_theory.{name}")}


def test_functions_survive_importing_every_submodule():
    code = (
        "import pkgutil, importlib, spare_theory as st\n"
        "for m in pkgutil.walk_packages(st.__path__, 'spare_theory.'):\n"
        "    importlib.import_module(m.name)\n"
        "assert callable(st.overhead) and callable(st.reorder) and callable(st.sweep)\n"
        "assert st.overhead(1000, 3) > 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dir_lists_the_api():
    assert set(st._API) <= set(dir(st))


def _modules_with_all():
    import pkgutil

    names = ["spare_theory"]
    names += [m.name for m in pkgutil.walk_packages(st.__path__, "spare_theory.")]
    return [n for n in names if not n.endswith("__main__")]


@pytest.mark.parametrize("module", _modules_with_all())
def test_every_name_in_every_all_resolves(module):
    found = importlib.import_module(module)
    missing = [name for name in getattr(found, "__all__", ()) if not hasattr(found, name)]
    assert not missing, f"{module}.__all__ names what it does not have: {missing}"
