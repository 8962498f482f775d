"""The scenarios a command's options describe: TOML file, presets, fields, grid axes.

:func:`scenario_points` turns the options of :func:`~spare_theory.cli.fields.add_scenario_options`
(and a ``--scenario`` TOML file, which they override) into scenarios:
:func:`build_scenario` makes one, hour level unless ``--paper N`` or a
step-level field is given; with several values per option (``sweep``) the
points are the product of the axes.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import itertools
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ._common import UsageError
from .fields import FieldOption, field_options, hour_defaults, scenario_classes
from .laws import law_text

__all__ = [
    "ScenarioPoint",
    "build_scenario",
    "iter_fields",
    "scenario_points",
    "scenario_record",
]


def _from_file(path: str, options: Mapping[str, FieldOption], several: bool) -> dict[str, Any]:
    """The fields of a TOML file, each value parsed as its option's would be."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise UsageError(f"--scenario {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--scenario {path}: not TOML: {exc}") from None
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name not in options:
            raise UsageError(
                f"--scenario {path}: {name!r} is not a scenario field (fields: "
                f"{', '.join(options)})"
            )
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not several:
            raise UsageError(f"--scenario {path}: {name} = a list is a grid axis (sweep)")
        try:
            parsed = [
                v if options[name].law and not isinstance(v, str) else options[name].convert(str(v))
                for v in values
            ]
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--scenario {path}: {name}: {exc}") from None
        out[name] = parsed if several else parsed[0]
    return out


def _given(args: argparse.Namespace, several: bool) -> dict[str, Any]:
    """Field values from ``--scenario`` and the options (options win), unset fields left out."""
    options = {o.name: o for o in field_options()}
    values = _from_file(args.scenario, options, several) if args.scenario else {}
    for name in options:
        given = getattr(args, f"field_{name}", None)
        if given is not None:
            values[name] = given
    return values


def build_scenario(
    values: Mapping[str, Any], *, paper: int | None = None, domain_share: float | None = None
) -> Any:
    """The scenario of the given field values: a Scenario, or a StepScenario at step level.

    Parameters
    ----------
    values : mapping
        Field name to value (the fields left out keep their defaults; the
        hour-level fields without one take ``Scenario.published_600k()``'s).
    paper : int, optional
        Start from ``paper_scenario(paper)`` (step level).
    domain_share : float, optional
        With ``domain_size``: :func:`~spare_theory.hourly.domains.scenario_with_domain_share`.

    Returns
    -------
    Scenario or StepScenario

    Raises
    ------
    UsageError
        Fields of both levels mixed, or ``domain_share`` without
        ``domain_size`` (or with ``domain_mtbf_hours``, or at step level).
    ValueError
        From the scenario class, naming the field.

    Examples
    --------
    >>> build_scenario({"gpus": 4096, "gpus_per_group": 16}).groups
    256
    >>> build_scenario({"microbatches": 16}, paper=200).microbatches
    16
    """
    options = {o.name: o for o in field_options()}
    step_only = [n for n in values if options[n].levels == ("step",)]
    hour_only = [n for n in values if options[n].levels == ("hour",)]
    if paper is not None or step_only:
        if hour_only:
            why = "--paper" if paper is not None else _flags(options, step_only)
            raise UsageError(
                f"{_flags(options, hour_only)} (hour level, Scenario) cannot be combined with "
                f"{why} (step level, StepScenario)"
            )
        if domain_share is not None:
            raise UsageError("--domain-share is an hour-level option (Scenario)")
        return _step_scenario(dict(values), paper)
    from ..hourly.domains import scenario_with_domain_share
    from ..hourly.scenario import Scenario

    fields = hour_defaults() | dict(values)
    if domain_share is None:
        return Scenario(**fields)
    if "domain_size" not in fields or "domain_mtbf_hours" in fields:
        raise UsageError(
            "--domain-share S needs --domain-size and sets domain_mtbf_hours itself "
            "(drop --domain-mtbf-hours)"
        )
    size = fields.pop("domain_size")
    return scenario_with_domain_share(Scenario(**fields), size, domain_share)


def _flags(options: Mapping[str, FieldOption], names: list[str]) -> str:
    return ", ".join(options[n].flag for n in names)


def _step_scenario(values: dict[str, Any], paper: int | None) -> Any:
    from ..steps.scenario import StepScenario, paper_scenario

    if paper is None:
        missing = [
            f.name
            for f in dataclasses.fields(StepScenario)
            if f.default is dataclasses.MISSING and f.name not in values
        ]
        if missing:
            raise UsageError(
                "a step-level scenario needs "
                + ", ".join("--" + n.replace("_", "-") for n in missing)
                + " (or --paper N for the paper's)"
            )
        return StepScenario(**values)
    # paper_scenario takes some fields itself (a named failure law gets the paper's mean).
    own = set(inspect.signature(paper_scenario).parameters) - {"N"}
    base = paper_scenario(paper, **{k: values.pop(k) for k in list(values) if k in own})
    return dataclasses.replace(base, **values) if values else base


@dataclass(frozen=True)
class ScenarioPoint:
    """One scenario of a command: the values that vary across the grid, and the scenario.

    Examples
    --------
    >>> ScenarioPoint({"gpus": 4096}, None).axes
    {'gpus': 4096}
    """

    axes: dict[str, Any]
    scenario: Any


def scenario_points(args: argparse.Namespace, *, several: bool = False) -> list[ScenarioPoint]:
    """The scenarios the options and ``--scenario`` describe (one unless ``several``).

    With ``several`` every option (and TOML list) is a grid axis; the points
    are their product, in the order of the options, the last varying fastest.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of a parser built with :func:`add_scenario_options`.
    several : bool
        As given to :func:`add_scenario_options`.

    Returns
    -------
    list of ScenarioPoint
        ``axes`` names the values of the axes with more than one value.

    Examples
    --------
    >>> from spare_theory.cli.fields import add_scenario_options
    >>> p = argparse.ArgumentParser()
    >>> add_scenario_options(p, several=True)
    >>> points = scenario_points(p.parse_args(["--gpus", "4096", "8192",
    ...                                        "--gpus-per-group", "16"]), several=True)
    >>> [(pt.axes, pt.scenario.groups) for pt in points]
    [({'gpus': 4096}, 256), ({'gpus': 8192}, 512)]
    """
    values = _given(args, several)
    presets = {"paper": args.paper, "domain_share": args.domain_share}
    axes: dict[str, list[Any]] = {
        name: (value if several else [value]) for name, value in values.items()
    }
    axes |= {k: (v if several else [v]) for k, v in presets.items() if v is not None}
    names = list(axes)
    points = []
    for combo in itertools.product(*(axes[n] for n in names)):
        chosen = dict(zip(names, combo))
        paper, share = chosen.pop("paper", None), chosen.pop("domain_share", None)
        varying = {n: v for n, v in zip(names, combo) if len(axes[n]) > 1}
        if getattr(args, "failure_log", None) is not None:
            scenario = _log_scenario(args, chosen, paper, share)
        else:
            scenario = build_scenario(chosen, paper=paper, domain_share=share)
        points.append(ScenarioPoint(varying, scenario))
    return points


def _log_scenario(args: argparse.Namespace, values: dict[str, Any], paper: Any, share: Any) -> Any:
    """The hour-level scenario of ``--failure-log`` with the given field values."""
    from ..traces.inputs import scenario_from_log

    if paper is not None or share is not None:
        flag = "--paper" if paper is not None else "--domain-share"
        raise UsageError(f"--failure-log sets the failure fields itself: drop {flag}")
    options = {o.name: o for o in field_options()}
    step_only = [n for n in values if options[n].levels == ("step",)]
    if step_only:
        raise UsageError(
            f"--failure-log builds an hour-level scenario: drop {_flags(options, step_only)}"
        )
    read = {"nodes": args.log_nodes, "time_unit": args.log_time_unit}
    fields = hour_defaults() | values
    return scenario_from_log(
        args.failure_log,
        read=read,
        gpus_per_node=fields.pop("gpus_per_node", 8),
        law=args.log_law,
        repair_law=args.log_repair_law,
        lemons=args.log_lemons,
        bursts=args.log_bursts,
        **fields,
    )


def scenario_record(scenario: Any) -> dict[str, Any]:
    """Every field of ``scenario`` (laws as :func:`law_text`) plus ``N`` and ``level``.

    Examples
    --------
    >>> rec = scenario_record(build_scenario({}, paper=200))
    >>> rec["level"], rec["N"], rec["failure_law"]
    ('step', 200, 'expon:scale=60000')
    """
    fields = dataclasses.fields(scenario)
    record = {f.name: _shown(f.name, getattr(scenario, f.name)) for f in fields}
    level = "step" if type(scenario) is scenario_classes()["step"] else "hour"
    return record | {"N": scenario.groups, "level": level}


def _shown(name: str, value: Any) -> Any:
    """A field's value in a record: laws as text, the rest as they are."""
    laws = {o.name for o in field_options() if o.law}
    return law_text(value) if name in laws and value is not None else value


def iter_fields(scenario: Any) -> Iterator[tuple[str, Any]]:
    """``(name, value)`` of the fields without a default or set to another value (laws as text).

    Examples
    --------
    >>> dict(iter_fields(build_scenario({"repair_minutes": 60})))["repair_minutes"]
    60.0
    """
    for f in dataclasses.fields(scenario):
        if not f.compare:
            continue  # the provenance a log leaves: not a value of the scenario
        value = _shown(f.name, getattr(scenario, f.name))
        if f.default is dataclasses.MISSING or value != _shown(f.name, f.default):
            yield f.name, value
