"""Every public name is typed and documented with an Examples section.

The examples themselves run as doctests (``--doctest-modules`` in
``pyproject.toml``); this test makes sure there is one to run.
"""

from __future__ import annotations

import inspect

import pytest

import spare_theory

PUBLIC = sorted(spare_theory._API)


def _examples(obj: object) -> bool:
    doc = inspect.getdoc(obj) or ""
    return "Examples\n--------" in doc and ">>> " in doc


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_has_examples(name: str) -> None:
    obj = getattr(spare_theory, name)
    if isinstance(obj, type) and issubclass(obj, Exception):
        pytest.skip("exceptions are documented where they are raised")
    assert _examples(obj), f"spare_theory.{name} has no numpydoc Examples section"


@pytest.mark.parametrize("name", PUBLIC)
def test_public_function_is_typed(name: str) -> None:
    obj = getattr(spare_theory, name)
    if not inspect.isfunction(obj):
        pytest.skip("classes are typed by their fields")
    signature = inspect.signature(obj)
    untyped = [
        p.name
        for p in signature.parameters.values()
        if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL,)
    ]
    assert not untyped, f"spare_theory.{name}: parameters without a type: {untyped}"
    assert signature.return_annotation is not inspect.Signature.empty, (
        f"spare_theory.{name} has no return type"
    )
