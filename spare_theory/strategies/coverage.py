"""What the audit measured for a model answer: its error on scenarios with the same fields.

The audit (:func:`spare_theory.audit`, ``docs/audit.md``) drew
:data:`AUDIT_SCENARIOS` scenarios at random (seed :data:`AUDIT_SEED`, the
default space: 8 to 64 groups of 8 to 32 GPUs, a fifth at the step level),
planned every strategy by the closed forms and simulated each model answer at
that very plan.  Its cells ship as ``spare_theory/data/audit_cells.csv``
(:data:`AUDIT_COMMAND` writes them); a model answer's caveats end with what
those cells say about answers like it (:func:`audit_caveat`, attached by
:meth:`Strategy.with_caveats <spare_theory.strategies.base.Strategy.with_caveats>`),
and a strategy refuses the model where they say it cannot be trusted
(:func:`audit_refusal`: at least :data:`REFUSE_MIN_CELLS` such answers,
their 90th percentile of ``|error|`` above :data:`REFUSE_P90_PCT` %).

"Answers like it" are the strategy's model answers on scenarios with the
same optional fields (:func:`scenario_fields`): Weibull lifetimes, node
clocks, repairs, lognormal repairs, a spare pool, failure domains, lemons,
the step level.  A scenario with a field the audit does not draw
(micro-batches, planned restarts, another lifetime law) has no such answers,
and its caveat says so.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from .._caching import cached

__all__ = [
    "AUDIT_COMMAND",
    "AUDIT_GROUPS",
    "AUDIT_SCENARIOS",
    "AUDIT_SEED",
    "REFUSE_MIN_CELLS",
    "REFUSE_P90_PCT",
    "AuditedError",
    "audit_caveat",
    "audit_refusal",
    "audited_error",
    "closed_forms_only",
    "scenario_fields",
]

#: The audit the shipped cells come from.
AUDIT_SEED, AUDIT_SCENARIOS = 2026, 150
#: The groups the audit's default space draws (its scenarios' ``N``), smallest and largest.
AUDIT_GROUPS = (8, 64)
#: The command that writes ``data/audit_cells.csv`` (as ``tables/audit_cells.csv``).
AUDIT_COMMAND = f"spare-theory audit --scenarios {AUDIT_SCENARIOS} --seed {AUDIT_SEED} --out DIR"
#: The model is refused where at least this many audited answers like it ...
REFUSE_MIN_CELLS = 5
#: ... have a 90th percentile of |error| above this many percent (docs/audit.md: on the
#: shipped cells none since the step-level clocks age; the largest, 8.2 %, hot spares
#: with repairs and lemons).
REFUSE_P90_PCT = 15.0


def _law_name(law: Any) -> str:
    """A law's name: ``"exponential"``, ``"weibull"``, ``"lognormal"`` or its own."""
    if isinstance(law, str):
        return law
    name = str(getattr(getattr(law, "dist", None), "name", type(law).__name__))
    return {"expon": "exponential", "weibull_min": "weibull", "lognorm": "lognormal"}.get(
        name, name
    )


def scenario_fields(scenario: Any) -> tuple[str, ...]:
    """The optional fields ``scenario`` sets, as the audit's tables name them.

    The audit's own (``audits.space.FIELDS``): ``"weibull"`` (a Weibull
    lifetime law; another non-exponential law is named as it is),
    ``"node clocks"``, ``"repairs"``, ``"lognormal repairs"``, ``"spare
    pool"``, ``"failure domains"``, ``"lemons"``, ``"step level"``; and
    those it does not draw: ``"micro-batches"``, ``"planned restarts"``,
    ``"detection"`` (failure classes noticed late).

    Examples
    --------
    >>> from scipy import stats
    >>> from spare_theory import Scenario
    >>> repairs = stats.lognorm(0.8, scale=25.0)  # minutes
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10, failure_law="weibull", repair_minutes=repairs.mean(),
    ...               repair_law=repairs, lemon_fraction=0.1, lemon_rate_factor=4)
    >>> scenario_fields(sc)
    ('weibull', 'repairs', 'lognormal repairs', 'lemons')
    >>> scenario_fields(Scenario(gpus=512, gpus_per_group=8, restart_minutes=20,
    ...                          checkpoint_minutes=5, work_hours=10))
    ()
    """
    step = not hasattr(scenario, "gpus")
    law = _law_name(scenario.failure_law)
    repair = scenario.repair_seconds if step else scenario.repair_minutes
    found = {
        law: law != "exponential",
        "node clocks": not step and scenario.renewal == "node",
        "repairs": repair is not None,
        "lognormal repairs": repair is not None and _law_name(scenario.repair_law) == "lognormal",
        "spare pool": bool(scenario.spare_nodes),
        "failure domains": not step and scenario.domain_size is not None,
        "lemons": not step and scenario.lemon_fraction > 0,
        "step level": step,
        "micro-batches": scenario.microbatches > 1,
        "planned restarts": not step
        and (
            scenario.planned_restart_failures is not None
            or scenario.planned_restart_cost is not None
        ),
        "detection": not step and scenario.detect_minutes > 0,
        "misdiagnosis": not step and any(c.misdiagnosis > 0 for c in scenario.failure_classes),
    }
    return tuple(name for name, on in found.items() if on)


@cached(maxsize=None)
def _cells() -> Any:
    """The shipped audit's model answers: strategy, fields (a frozenset), error (%)."""
    import pandas as pd

    with resources.files("spare_theory").joinpath("data/audit_cells.csv").open() as handle:
        cells = pd.read_csv(handle)
    cells = cells[cells["status"] == "model"].copy()
    # "none" names a scenario without optional fields.
    cells["field_set"] = [
        frozenset(f for f in text.split(", ") if f != "none") for text in cells["fields"]
    ]
    return cells


@dataclass(frozen=True)
class AuditedError:
    """The audit's errors of one strategy's model answers on scenarios with given fields.

    Attributes
    ----------
    strategy : str
        The strategy.
    fields : tuple of str
        The optional fields (:func:`scenario_fields`; empty: none).
    cells : int
        Its model answers the audit simulated on scenarios with exactly these fields.
    p90_abs_error_pct : float
        The 90th percentile of their ``|model / simulated - 1|``, percent (NaN without cells).
    worst_error_pct : float
        The error of largest magnitude, percent, signed (NaN without cells).
    outside : int
        How many were outside 3 % and 3 standard errors.
    """

    strategy: str
    fields: tuple[str, ...]
    cells: int
    p90_abs_error_pct: float
    worst_error_pct: float
    outside: int


def audited_error(strategy_name: str, scenario: Any) -> AuditedError:
    """What the shipped audit measured for ``strategy_name``'s model answers like this one.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10)
    >>> got = audited_error("spare", sc)
    >>> got.fields, got.cells > 0, got.p90_abs_error_pct < 5
    ((), True, True)
    """
    return _audited(strategy_name, scenario_fields(scenario))


@cached(maxsize=None)
def _audited(strategy_name: str, fields: tuple[str, ...]) -> AuditedError:
    cells = _cells()
    same = np.array([found == frozenset(fields) for found in cells["field_set"]], dtype=bool)
    like = cells[(cells["strategy"] == strategy_name).to_numpy() & same]
    errors = like["error_pct"].to_numpy(dtype=np.float64)
    if errors.size == 0:
        return AuditedError(strategy_name, fields, 0, math.nan, math.nan, 0)
    return AuditedError(
        strategy_name,
        fields,
        int(errors.size),
        float(np.percentile(np.abs(errors), 90)),
        float(errors[np.argmax(np.abs(errors))]),
        int((~like["within"].astype(bool)).sum()),
    )


def _fields_text(fields: tuple[str, ...]) -> str:
    return "no optional field" if not fields else ", ".join(fields)


def audit_caveat(strategy_name: str, scenario: Any) -> str:
    """The caveat a model answer carries: the audit's error on answers like it.

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10, microbatches=1)
    >>> audit_caveat("rep", sc).startswith("audit (150 random scenarios, seed 2026")
    True
    """
    got = audited_error(strategy_name, scenario)
    where = f"audit ({AUDIT_SCENARIOS} random scenarios, seed {AUDIT_SEED}; docs/audit.md)"
    if got.cells == 0:
        text = (
            f"{where}: no model answer of this strategy on a scenario with "
            f"{_fields_text(got.fields)}: its error here is not measured"
        )
    else:
        text = (
            f"{where}: 90 % of its {got.cells} model answers on scenarios with "
            f"{_fields_text(got.fields)} within {got.p90_abs_error_pct:.1f} % of the "
            f"simulation (worst {got.worst_error_pct:+.1f} %, {got.outside} outside 3 % and 3 SE)"
        )
    low, high = AUDIT_GROUPS
    N = int(scenario.groups)
    if not low <= N <= high:
        text += f"; it drew {low} to {high} groups, this scenario has {N:,}"
    return text


_refusing = [True]  # False within closed_forms_only()


@contextlib.contextmanager
def closed_forms_only() -> Iterator[None]:
    """Within the block :func:`audit_refusal` refuses nothing.

    The audit measures the closed forms themselves, also where the shipped
    audit rules them out (it records that as ``audit_refused``).
    """
    _refusing.append(False)
    try:
        yield
    finally:
        _refusing.pop()


def audit_refusal(strategy_name: str, scenario: Any) -> str | None:
    """Why the audit rules the model out here (``None``: it does not).

    The model is refused where at least :data:`REFUSE_MIN_CELLS` of the
    strategy's audited answers with the scenario's fields have a 90th
    percentile of ``|error|`` above :data:`REFUSE_P90_PCT` %, on scenarios
    within the audit's :data:`AUDIT_GROUPS` (outside them it is not measured,
    and the caveat says so).

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=512, gpus_per_group=8, restart_minutes=20, checkpoint_minutes=5,
    ...               work_hours=10)
    >>> audit_refusal("spare", sc) is None
    True
    """
    low, high = AUDIT_GROUPS
    if not _refusing[-1] or not low <= scenario.groups <= high:
        return None  # refused only where measured
    got = audited_error(strategy_name, scenario)
    if got.cells < REFUSE_MIN_CELLS or not got.p90_abs_error_pct > REFUSE_P90_PCT:
        return None
    return (
        f"the audit measured strategy {strategy_name!r}'s closed form off on scenarios with "
        f"{_fields_text(got.fields)}: 90 % of {got.cells} answers within only "
        f"{got.p90_abs_error_pct:.1f} % (worst {got.worst_error_pct:+.1f} %; {AUDIT_SCENARIOS} "
        f"random scenarios, seed {AUDIT_SEED}, docs/audit.md)"
    )
