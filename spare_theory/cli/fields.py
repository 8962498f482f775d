"""Command-line options generated from the fields of the two scenario dataclasses.

Every field of :class:`~spare_theory.hourly.scenario.Scenario` (hour level)
and :class:`~spare_theory.steps.scenario.StepScenario` (step level) is an
option ``--field-name``: its type from the annotation (``int``: an integer,
``1e12`` accepted; ``float``; ``str`` with the choices of its numpydoc type;
``Any`` documented as a distribution: a law, see :func:`parse_law`; failure
classes as ``NAME:SHARE:KIND:DETECT_MINUTES[:EXTRA][,...]``), its help
from the field's entry in the class's numpydoc ``Parameters`` section, and
its ``--help`` group from its name (:data:`TOPICS`).  A field added to either
class is an option, with its own documentation, without a CLI edit
(``tests/test_cli_fields.py`` walks both classes).

A scenario is hour-level unless ``--paper N`` or a field only the step-level
class has (``--groups``, ``--steps``, ...) is given.  The hour-level fields
without a default take those of ``Scenario.published_600k()`` (600,000 GPUs
in groups of 2048, 60 min restarts, 5 min checkpoints, 720 h of work).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._caching import cached
from ..lifetimes.classes import FailureClass, parse_failure_classes
from ._common import integral, real
from .laws import parse_law

__all__ = [
    "TOPICS",
    "FieldOption",
    "add_scenario_options",
    "field_options",
    "hour_defaults",
    "scenario_classes",
]

#: ``--help`` groups of the scenario fields: the first pattern found in a field's name wins.
TOPICS = (
    ("failure domains and lemon groups", r"domain|lemon|placement"),
    ("repairs and spares", r"repair|rejoin|heal|spare|swap"),
    ("planned restarts", r"planned_restart"),
    ("micro-batches", r"microbatch"),
    ("failures", r"mtbf|failure_law|weibull"),
    ("restarts and checkpoints", r"restart|checkpoint|recovery|reconfigure"),
    ("cluster and work", r"gpu|group|step|stack|allreduce|work"),
)
_OTHER_TOPIC = "other scenario fields"


@dataclass(frozen=True)
class FieldOption:
    """One scenario field as a command-line option.

    Attributes
    ----------
    name : str
        The field (``repair_minutes``); the option is ``--repair-minutes``.
    levels : tuple of str
        ``"hour"`` (a :class:`Scenario` field), ``"step"`` (a :class:`StepScenario`
        field) or both.
    convert : callable
        ``str -> value`` (raises ``argparse.ArgumentTypeError``).
    help : str
        The first sentence of each class's entry, the default and, for
        choices, the values.
    topic : str
        The ``--help`` group (:data:`TOPICS`).
    law : bool
        Whether the value is a law (:func:`parse_law`).
    choices : str
        ``{a,b}`` for a field with choices, else empty.

    Examples
    --------
    >>> opt = next(o for o in field_options() if o.name == "gpus")
    >>> opt.flag, opt.levels, opt.topic, opt.convert("1e5")
    ('--gpus', ('hour',), 'cluster and work', 100000)
    """

    name: str
    levels: tuple[str, ...]
    convert: Callable[[str], Any]
    help: str
    topic: str
    law: bool = False
    choices: str = ""

    @property
    def flag(self) -> str:
        """The option string, ``--`` and the field name with dashes."""
        return "--" + self.name.replace("_", "-")

    @property
    def metavar(self) -> str:
        """``LAW``, ``INT``, ``REAL`` or the choices, for ``--help``."""
        if self.law:
            return "LAW"
        names: dict[Callable[[str], Any], str] = {integral: "INT", real: "REAL"}
        return names.get(self.convert, self.choices or "TEXT")


def scenario_classes() -> dict[str, Any]:
    """``{"hour": Scenario, "step": StepScenario}``."""
    from ..hourly.scenario import Scenario
    from ..steps.scenario import StepScenario

    return {"hour": Scenario, "step": StepScenario}


def _parameters(cls: type) -> dict[str, tuple[str, str]]:
    """``{name: (type, description)}`` from the numpydoc ``Parameters`` sections of ``cls``.

    The classes of its MRO are read base first, so a subclass documents only
    the fields it adds.
    """
    entries: dict[str, tuple[str, str]] = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        section = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
        if section is None:
            continue
        body_lines = r"^(\S[^\n]*)\n((?:^(?:[ \t]+[^\n]*)?\n?)*)"
        for head, body in re.findall(body_lines, section[1], re.M):
            names, _, kind = head.partition(" : ")
            for name in names.split(","):
                entries[name.strip()] = (kind.strip(), " ".join(body.split()))
    return entries


def _plain(text: str) -> str:
    """Docstring markup as plain text: ``x`` -> x, :role:`~a.b` -> b, :role:`t <a.b>` -> t."""
    text = re.sub(r":\w+:`([^`<]*?)\s*<[^`>]*>`", r"\1", text)
    text = re.sub(r":\w+:`~?([^`]*)`", lambda m: m[1].rsplit(".", 1)[-1], text)
    return text.replace("``", "")


def _first_sentence(text: str) -> str:
    """Up to the first full stop followed by a capitalised word (``et al. 2024`` stays)."""
    return re.split(r"(?<=\.)\s+(?=[A-Z])", text, maxsplit=1)[0]


def _choices(kind: str) -> tuple[str, ...]:
    """The values of a numpydoc type ``{"window", "fixed"}`` (empty when none)."""
    found = re.fullmatch(r"\{(.*)\}", kind.strip())
    return tuple(re.findall(r"[\"']([^\"']+)[\"']", found[1])) if found else ()


def _converter(cls: type, name: str, kind: str) -> tuple[Callable[[str], Any], bool]:
    """The parser of one field's value and whether it is a law."""
    hint = typing.get_type_hints(cls)[name]
    if typing.get_origin(hint) is tuple and FailureClass in typing.get_args(hint):
        return _failure_classes, False
    base = {a for a in typing.get_args(hint) if a is not type(None)} or {hint}
    if base == {int}:
        return integral, False
    if base == {float}:
        return (_real_or_none if type(None) in typing.get_args(hint) else real), False
    if base == {str}:
        choices = _choices(kind)
        if not choices:
            return str, False

        def choice(text: str) -> str:
            if text not in choices:
                raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
            return text

        return choice, False
    if base == {Any} and "distribution" in kind:
        return parse_law, True
    raise TypeError(
        f"{cls.__name__}.{name}: no command-line type for annotation {hint!r} "
        "(spare_theory/cli/fields.py knows int, float, str and laws)"
    )


def _real_or_none(text: str) -> float | None:
    """A real number, or ``none`` for a field that may be ``None``."""
    return None if text.strip().lower() == "none" else real(text)


def _failure_classes(text: str) -> tuple[FailureClass, ...]:
    """``NAME:SHARE:KIND:DETECT_MINUTES[:EXTRA][,...]`` (:func:`parse_failure_classes`)."""
    try:
        return parse_failure_classes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _topic(name: str) -> str:
    return next((topic for topic, pattern in TOPICS if re.search(pattern, name)), _OTHER_TOPIC)


def hour_defaults() -> dict[str, Any]:
    """Values of the hour-level fields without a default: ``Scenario.published_600k()``'s.

    Examples
    --------
    >>> hour_defaults()["gpus"], hour_defaults()["work_hours"]
    (600000, 720.0)
    """
    scenario = scenario_classes()["hour"].published_600k()
    return {
        f.name: getattr(scenario, f.name)
        for f in dataclasses.fields(scenario)
        if f.default is dataclasses.MISSING
    }


def _default_text(field: dataclasses.Field[Any], level: str) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
        return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
    if level == "hour":
        return f"{hour_defaults()[field.name]:g}, as Scenario.published_600k"
    return "from --paper N; required without it"


@cached(maxsize=1)
def field_options() -> tuple[FieldOption, ...]:
    """Every field of both scenario classes as a :class:`FieldOption`, in field order.

    A field both classes have (``failure_law``, ``microbatches``, ...) is
    one option whose help gives both entries.

    Returns
    -------
    tuple of FieldOption

    Raises
    ------
    TypeError
        For a field whose annotation has no command-line type.

    Examples
    --------
    >>> [o.name for o in field_options() if o.levels == ("hour", "step")]
    ['gpus_per_group', 'failure_law', 'repair_law', 'gpus_per_node', 'spare_nodes', 'microbatches']
    """
    found: dict[str, dict[str, Any]] = {}
    for level, cls in scenario_classes().items():
        docs = _parameters(cls)
        for field in dataclasses.fields(cls):
            if not field.compare:
                continue  # not a value of the scenario (the provenance a log leaves)
            kind, text = docs.get(field.name, ("", ""))
            convert, law = _converter(cls, field.name, kind)
            choices = _choices(kind)
            entry = found.setdefault(
                field.name,
                {"levels": [], "convert": convert, "law": law, "help": [], "choices": choices},
            )
            entry["levels"].append(level)
            help_text = _first_sentence(_plain(text)) or "(undocumented)"
            if choices:
                help_text += f" One of: {', '.join(choices)}."
            if "default" not in help_text:
                help_text += f" (default {_default_text(field, level)})"
            entry["help"].append(f"{cls.__name__}: {help_text}")
    return tuple(
        FieldOption(
            name=name,
            levels=tuple(entry["levels"]),
            convert=entry["convert"],
            help=" | ".join(entry["help"]).replace("%", "%%"),
            topic=_topic(name),
            law=entry["law"],
            choices="{" + ",".join(entry["choices"]) + "}" if entry["choices"] else "",
        )
        for name, entry in found.items()
    )


def add_scenario_options(parser: argparse.ArgumentParser, *, several: bool = False) -> None:
    """Add ``--scenario``, ``--paper``, ``--domain-share`` and every field option to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A subcommand's parser.
    several : bool
        Each option takes one or more values (a grid axis, ``sweep``).

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_scenario_options(p)
    >>> args = p.parse_args(["--gpus", "1e5", "--failure-law", "weibull"])
    >>> args.field_gpus, args.field_failure_law
    (100000, 'weibull')
    """
    nargs = "+" if several else None
    what = "values (a grid axis)" if several else "value"
    files = parser.add_argument_group("scenario file and presets")
    files.add_argument(
        "--scenario",
        metavar="FILE",
        default=None,
        help="a TOML file of scenario fields (field = value; names as in Scenario and "
        "StepScenario, laws as strings"
        + (", lists as grid axes" if several else "")
        + "); the options below override it",
    )
    files.add_argument(
        "--paper",
        type=integral,
        nargs=nargs,
        metavar="N",
        default=None,
        help="the SPARe paper's step-level scenario for N groups (paper_scenario: 10,000 "
        "steps, 64 s stacks, cluster MTBF 300 s, 1 h restart windows); the step-level "
        "options below change it",
    )
    files.add_argument(
        "--domain-share",
        type=real,
        nargs=nargs,
        metavar="S",
        default=None,
        help="with --domain-size: move a share 0 <= S < 1 of every group's failure rate to "
        "its domain (scenario_with_domain_share; sets domain_mtbf_hours and gpu_mtbf_hours "
        "so the group's total rate stays)",
    )
    _add_log_options(parser)
    groups: dict[str, argparse._ArgumentGroup] = {}
    for option in field_options():
        if option.topic not in groups:
            groups[option.topic] = parser.add_argument_group(f"scenario: {option.topic}")
        groups[option.topic].add_argument(
            option.flag,
            dest=f"field_{option.name}",
            type=option.convert,
            nargs=nargs,
            default=None,
            metavar=option.metavar,
            help=option.help + (f"; one or more {what}" if several else ""),
        )


def _add_log_options(parser: argparse.ArgumentParser) -> None:
    """``--failure-log LOG`` and how to read it and turn it into a scenario (traces.plans)."""
    log = parser.add_argument_group(
        "scenario from a failure log",
        "the failure law, repair law, lemons and bursts (as failure domains) are fitted to "
        "the log (log_scenario); the other options set the rest of the scenario (a row of "
        "the log is a node of --gpus-per-node GPUs, default 8)",
    )
    log.add_argument(
        "--failure-log",
        metavar="LOG",
        default=None,
        help="a failure log (CSV, JSON lines, Parquet, StepFun JSON) or 'infinitehbd', "
        "the shipped trace of 400 servers",
    )
    log.add_argument(
        "--log-law",
        choices=("weibull", "exponential"),
        default="weibull",
        help="lifetime law fitted to the log: Weibull of the fitted shape or exponential, "
        "both at the log's failure rate (default weibull)",
    )
    log.add_argument(
        "--log-repair-law",
        choices=("lognormal", "exponential"),
        default="lognormal",
        help="shape of the repair law, its mean the log's (default lognormal)",
    )
    log.add_argument(
        "--no-log-lemons",
        dest="log_lemons",
        action="store_false",
        help="leave out the lemons the log shows (two-class fit)",
    )
    log.add_argument(
        "--no-log-bursts",
        dest="log_bursts",
        action="store_false",
        help="leave out the bursts the log shows (failures within 5 min as a domain share)",
    )
    log.add_argument(
        "--log-nodes",
        type=integral,
        default=None,
        metavar="INT",
        help="nodes observed, including those that never failed (default: the log's own)",
    )
    log.add_argument(
        "--log-time-unit",
        default=None,
        metavar="UNIT",
        help="unit of the log's times when they are numbers (default hours; days for "
        "'infinitehbd')",
    )
