"""One table of parts: ``PARTS`` names every public member of ``Strategy``, and the
``HourlyCycleLaw`` protocol every member the renewal sums, the hour-level model and the
fresh-start term read off a law (collected with :mod:`ast` from those modules)."""

from __future__ import annotations

import ast
from pathlib import Path

import spare_theory
from spare_theory.strategies.base import Strategy
from spare_theory.strategies.parts import PARTS
from spare_theory.strategies.protocols import HourlyCycleLaw, members

PACKAGE = Path(spare_theory.__file__).parent
#: The modules that price a cycle law, and the name they give it.
READERS = ("hourly/renewal.py", "hourly/model.py", "hourly/fresh_start.py")


def _public(cls: type) -> set[str]:
    names = {n for n in dir(cls) if not n.startswith("_")}
    return names | {n for n in getattr(cls, "__annotations__", {}) if not n.startswith("_")}


def read_off(source: str, variable: str = "law") -> set[str]:
    """The attributes read off a variable called ``variable`` in ``source``."""
    return {
        node.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == variable
    }


def test_parts_name_every_public_member_of_strategy_once():
    names = [part.name for part in PARTS]
    assert len(names) == len(set(names))
    assert set(names) == _public(Strategy)


def test_the_collector_sees_what_a_source_reads():
    assert read_off("def f(law, other):\n    return law.mu + other.nu + law.logq(1)") == {
        "mu",
        "logq",
    }


def test_the_cycle_law_protocol_covers_what_the_model_reads():
    declared = set(members(HourlyCycleLaw))
    for module in READERS:
        read = read_off((PACKAGE / module).read_text())
        assert read, f"{module} reads nothing off a law: the collector is stale"
        assert read <= declared, f"{module} reads {sorted(read - declared)} off a law"
