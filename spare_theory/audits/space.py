"""The scenario space the audit draws from: a range or a choice per field a planner sets.

An :class:`AuditSpace` says, for every field of a training scenario that a
planner sets, the range (:class:`Span`) or the values (:class:`Choice`) it is
drawn from, and for every optional field (a non-exponential law, repairs and
their law, a spare pool, failure domains, lemons, the step level) the share of
scenarios that carry it.  :meth:`AuditSpace.draw` turns one seed into one
scenario, an hour-level :class:`~spare_theory.hourly.scenario.Scenario` or a
step-level :class:`~spare_theory.steps.scenario.StepScenario`, and names the
optional fields it carries (:data:`FIELDS`); the same seed always gives the
same scenario.

The default space covers 8 to 64 groups of 8 to 32 GPUs, a group MTBF of 3 to
60 h, restarts of 2 to 40 min, checkpoints of 0.2 to 5 min and 20 to 80 h of
work; Weibull shapes 0.5 to 1.3 on group or node clocks (the fitted-log
case); exponential, fixed and lognormal repairs of 10 to 600 min; pools of 1
to 32 spare nodes; domains of 2 to 8 groups taking 5 to 50 % of the failures;
lemons (5 to 30 % of the groups at 2 to 10 times the rate); and a fifth of
the scenarios at the step level (200 to 1,000 steps of 30 to 120 s).
:meth:`AuditSpace.from_toml` reads another from a TOML file.

The module is a little over 500 lines: the space states every field's range
and meaning in its docstring, and draws both scenario levels.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .._validation import as_real
from ..hourly.domains import scenario_with_domain_share
from ..hourly.scenario import Scenario
from ..lifetimes.classes import FailureClass
from ..steps.scenario import StepScenario

__all__ = ["FIELDS", "AuditSpace", "Choice", "DrawnScenario", "Span"]

#: The optional fields a drawn scenario may carry, as the audit's tables name them.
FIELDS = (
    "weibull",
    "node clocks",
    "repairs",
    "lognormal repairs",
    "spare pool",
    "failure domains",
    "lemons",
    "step level",
    "detection",
    "misdiagnosis",
)


@dataclass(frozen=True)
class Span:
    """A range ``[low, high]`` to draw from, uniformly in the value or in its log.

    Attributes
    ----------
    low, high : float
        The bounds, ``low <= high`` (both ``> 0`` when ``log``).
    log : bool
        Uniform in ``log(value)`` (a scale parameter: MTBFs, costs) rather than in the value.
    integer : bool
        Round the draw to the nearest integer (counts).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = Span(8, 64, log=True, integer=True).draw(rng)
    >>> isinstance(x, int), 8 <= x <= 64
    (True, True)
    """

    low: float
    high: float
    log: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        low = as_real(self.low, "low", minimum=0.0, strict_minimum=self.log)
        high = as_real(self.high, "high", minimum=low)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def draw(self, rng: np.random.Generator) -> Any:
        """One value (an ``int`` when :attr:`integer`)."""
        if self.log:
            x = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            x = rng.uniform(self.low, self.high)
        return round(x) if self.integer else float(x)


@dataclass(frozen=True)
class Choice:
    """Values to draw from, each equally likely.

    Examples
    --------
    >>> Choice((8, 16, 32)).draw(np.random.default_rng(0)) in (8, 16, 32)
    True
    """

    values: tuple[Any, ...]

    def __post_init__(self) -> None:
        values = tuple(self.values)
        if not values:
            raise ValueError("values: a choice needs at least one value")
        object.__setattr__(self, "values", values)

    def draw(self, rng: np.random.Generator) -> Any:
        """One of :attr:`values`."""
        return self.values[int(rng.integers(len(self.values)))]


@dataclass(frozen=True)
class DrawnScenario:
    """One scenario of the audit: where it came from and the optional fields it carries.

    Attributes
    ----------
    index : int
        Its index under the audit's seed (``AuditSpace.draw(seed, index)`` gives it again).
    scenario : Scenario or StepScenario
        The scenario.
    fields : tuple of str
        The optional fields it carries, among :data:`FIELDS` (empty: none).
    """

    index: int
    scenario: Scenario | StepScenario
    fields: tuple[str, ...]

    @property
    def description(self) -> str:
        """The scenario's fields that differ from their defaults, ``name=value``, in its units.

        A frozen ``scipy.stats`` law reads ``name(parameters)``; numbers keep 6
        significant digits.  Unlike ``repr`` it holds no memory address, so
        it is the same in every run.
        """
        sc = self.scenario
        parts = []
        for f in dataclasses.fields(sc):
            value = getattr(sc, f.name)
            if f.name == "provenance" or (
                f.default is not dataclasses.MISSING and _same(value, f.default)
            ):
                continue
            parts.append(f"{f.name}={_text(value)}")
        return f"{type(sc).__name__}({', '.join(parts)})"

    @property
    def level(self) -> str:
        """``"step"`` for a :class:`~spare_theory.steps.scenario.StepScenario`, else ``"hour"``."""
        return "step" if isinstance(self.scenario, StepScenario) else "hour"


_SHARES = (
    "step_share",
    "weibull_share",
    "node_clock_share",
    "repairs_share",
    "pool_share",
    "domains_share",
    "lemons_share",
    "detection_share",
    "late_share",
    "misdiagnosis_share",
)


@dataclass(frozen=True, kw_only=True)
class AuditSpace:
    """The space of scenarios the audit draws from.

    Each ``*_share`` is the probability that a drawn scenario carries that
    optional field (``0 <= share <= 1``); the other attributes are the
    :class:`Span` or :class:`Choice` a field is drawn from.  Times are in the
    unit their name ends with.

    Attributes
    ----------
    groups : Span
        Data-parallel groups ``N`` (default 8 to 64, log-uniform).
    gpus_per_group : Choice
        GPUs per group ``M`` (default 8, 16 or 32; nodes of 8 GPUs).
    group_mtbf_hours : Span
        Mean lifetime of one (ordinary) group, hours (default 3 to 60): the
        GPU MTBF is set so that the group law's mean is this, whatever the
        law.
    restart_minutes, checkpoint_minutes : Span
        Global restart cost ``R`` (2 to 40) and checkpoint cost ``delta`` (0.2 to 5), minutes.
    work_hours : Span
        Failure-free work, hours (20 to 80); at the step level it sets the
        step count with :attr:`steps`.
    step_share : float
        Share of step-level scenarios (default 0.2).
    steps : Span
        Steps of a step-level scenario (200 to 1,000).
    stack_seconds : Span
        Compute time of one stack layer at the step level, seconds (30 to 120).
    weibull_share, weibull_shape : float, Span
        Share with Weibull lifetimes (0.3), and their shape (0.5 to 1.3).
    node_clock_share : float
        Among hour-level Weibull scenarios, the share on node clocks
        (``renewal="node"``, as a fitted failure log gives; 0.5).
    repairs_share, repair_minutes, repair_law, lognormal_sigma : float, Span, Choice, Span
        Share with repairs (0.5); the mean repair time, minutes (10 to
        600); the law (exponential, fixed, lognormal); a lognormal's
        ``sigma`` (0.5 to 1.5).
    pool_share, spare_nodes, swap_minutes : float, Span, Span
        Among scenarios with repairs, the share through a pool of spare
        nodes (0.5): spare nodes (1 to 32), swap time, minutes (5 to 30).
    domains_share, domain_size, domain_failure_share : float, Choice, Span
        Hour level: share with failure domains (0.25); groups per domain (2,
        4 or 8, at most ``N / 2``); the share of a group's failures that come
        from its domain (0.05 to 0.5).
    lemons_share, lemon_fraction, lemon_rate_factor : float, Span, Span
        Hour level: share with lemon groups (0.25); their fraction (0.05 to
        0.3) and rate factor (2 to 10).
    detection_share, hang_share, hang_detect_minutes : float, Span, Span
        Hour level: share with failures that go unnoticed (0 by default: the
        shipped audit draws none, and its draws are as before); then a
        ``hang`` class of that share of the failures (0.05 to 0.5) noticed
        after that many minutes (5 to 60), the others crashes noticed at once
        (:class:`~spare_theory.lifetimes.classes.FailureClass`).
    late_share, straggler_share, straggler_detect_minutes, slowdown : float, Span, Span, Span
        Of those, the share that also has failures that reach their group late
        (0 by default: drawn after the hang, so the detection draws are as
        before): a ``straggler`` class (0.05 to 0.3 of the failures, noticed
        after 5 to 120 min, slowing steps 1.2 to 5 times) and
    corruption_share, corruption_detect_minutes, rollback_checkpoints : Span, Span, Span
        a ``corruption`` class (0.01 to 0.1, found after 0 to 180 min,
        sending the job 1 to 3 checkpoints back).
    misdiagnosis_share, misdiagnosis : float, Span
        Of the scenarios with classes, the share whose classes each get a
        ``misdiagnosis`` (0 by default: drawn last, so the draws before are
        as before), drawn for each class over its span (0 to 0.5).

    Examples
    --------
    >>> space = AuditSpace()
    >>> drawn = space.draw(0, 3)
    >>> drawn.index, drawn == space.draw(0, 3)
    (3, True)
    >>> AuditSpace(step_share=0.0).draw(0, 3).level
    'hour'
    """

    groups: Span = Span(8, 64, log=True, integer=True)
    gpus_per_group: Choice = Choice((8, 16, 32))
    group_mtbf_hours: Span = Span(3.0, 60.0, log=True)
    restart_minutes: Span = Span(2.0, 40.0, log=True)
    checkpoint_minutes: Span = Span(0.2, 5.0, log=True)
    work_hours: Span = Span(20.0, 80.0)
    step_share: float = 0.2
    steps: Span = Span(200, 1000, log=True, integer=True)
    stack_seconds: Span = Span(30.0, 120.0, log=True)
    weibull_share: float = 0.3
    weibull_shape: Span = Span(0.5, 1.3)
    node_clock_share: float = 0.5
    repairs_share: float = 0.5
    repair_minutes: Span = Span(10.0, 600.0, log=True)
    repair_law: Choice = Choice(("exponential", "fixed", "lognormal"))
    lognormal_sigma: Span = Span(0.5, 1.5)
    pool_share: float = 0.5
    spare_nodes: Span = Span(1, 32, log=True, integer=True)
    swap_minutes: Span = Span(5.0, 30.0)
    domains_share: float = 0.25
    domain_size: Choice = Choice((2, 4, 8))
    domain_failure_share: Span = Span(0.05, 0.5)
    lemons_share: float = 0.25
    lemon_fraction: Span = Span(0.05, 0.3)
    lemon_rate_factor: Span = Span(2.0, 10.0)
    detection_share: float = 0.0
    hang_share: Span = Span(0.05, 0.5)
    hang_detect_minutes: Span = Span(5.0, 60.0)
    late_share: float = 0.0
    straggler_share: Span = Span(0.05, 0.3)
    straggler_detect_minutes: Span = Span(5.0, 120.0)
    slowdown: Span = Span(1.2, 5.0, log=True)
    corruption_share: Span = Span(0.01, 0.1)
    corruption_detect_minutes: Span = Span(0.0, 180.0)
    rollback_checkpoints: Span = Span(1, 3, integer=True)
    misdiagnosis_share: float = 0.0
    misdiagnosis: Span = Span(0.0, 0.5)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in _SHARES:
                object.__setattr__(self, f.name, as_real(value, f.name, minimum=0.0, maximum=1.0))
            elif not isinstance(value, Span | Choice):
                raise ValueError(f"{f.name} must be a Span or a Choice, got {value!r}")
        if self.groups.low < 2:
            raise ValueError(
                f"groups: the audit's scenarios need at least 2 groups, got {self.groups}"
            )
        if self.repair_law.values and not set(self.repair_law.values) <= {
            "exponential",
            "fixed",
            "lognormal",
        }:
            raise ValueError(
                "repair_law: choose among 'exponential', 'fixed' and 'lognormal', got "
                f"{self.repair_law.values}"
            )
        sizes = self.gpus_per_group.values
        if any(not isinstance(m, int) or m < 8 or m % 8 for m in sizes):
            raise ValueError(f"gpus_per_group: whole nodes of 8 GPUs, got {sizes}")

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> AuditSpace:
        """The default space with the fields a TOML file sets.

        The file's ``[space]`` table (or its top level) sets any attribute:
        a share as a number, a range as ``[low, high]`` (keeping the
        default's ``log`` and ``integer``) or ``{low = ..., high = ..., log
        = true}``, a choice as ``{choice = [...]}``.

        Raises
        ------
        ValueError
            Naming the file and the key: an unknown key, a malformed value.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = pathlib.Path(tmp) / "space.toml"
        ...     _ = path.write_text("[space]\\ngroups = [16, 128]\\nstep_share = 0\\n"
        ...                         "repair_law = {choice = ['lognormal']}\\n")
        ...     space = AuditSpace.from_toml(path)
        >>> space.groups, space.step_share, space.repair_law.values
        (Span(low=16.0, high=128.0, log=True, integer=True), 0.0, ('lognormal',))
        """
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not a TOML file: {exc}") from None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the audit space: {exc.strerror}") from None
        table = data.get("space", data)
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [space] must be a table")
        default = cls()
        fields = {f.name for f in dataclasses.fields(cls)}
        changes: dict[str, Any] = {}
        for key, value in table.items():
            if key not in fields:
                raise ValueError(f"{path}: unknown key {key!r}; known: {', '.join(sorted(fields))}")
            try:
                changes[key] = _parse(getattr(default, key), value)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}: key {key!r}: {exc}") from None
        return dataclasses.replace(default, **changes)

    def draw(self, seed: int | np.random.SeedSequence, index: int) -> DrawnScenario:
        """Scenario ``index`` of ``seed``: the same arguments always give the same scenario.

        Its stream is ``SeedSequence(seed).spawn`` key ``(index, 0)``
        (:func:`~spare_theory._validation.child_seed`), independent of every
        other index, so a cell is re-drawn alone from its seed and index.
        """
        from .._validation import as_seed_sequence, child_seed

        rng = np.random.default_rng(child_seed(as_seed_sequence(seed), index, 0))
        scenario: Scenario | StepScenario
        if rng.random() < self.step_share:
            scenario, fields = self._step(rng)
        else:
            scenario, fields = self._hour(rng)
        return DrawnScenario(index, scenario, tuple(f for f in FIELDS if f in fields))

    def _lifetime(self, rng: np.random.Generator, fields: set[str]) -> float | None:
        """A Weibull shape when the scenario has one (``None``: exponential)."""
        if rng.random() < self.weibull_share:
            fields.add("weibull")
            return float(self.weibull_shape.draw(rng))
        return None

    def _repairs(self, rng: np.random.Generator, fields: set[str]) -> tuple[float, Any] | None:
        """``(mean, law)`` of the repairs, both in seconds; ``None``: no repairs."""
        if rng.random() >= self.repairs_share:
            return None
        fields.add("repairs")
        mean = 60.0 * float(self.repair_minutes.draw(rng))
        law = self.repair_law.draw(rng)
        if law == "lognormal":
            fields.add("lognormal repairs")
            sigma = float(self.lognormal_sigma.draw(rng))
            return mean, stats.lognorm(sigma, scale=mean * math.exp(-sigma * sigma / 2))
        return mean, law

    def _pool(self, rng: np.random.Generator, fields: set[str]) -> tuple[int, float] | None:
        if "repairs" not in fields or rng.random() >= self.pool_share:
            return None
        fields.add("spare pool")
        return int(max(1, self.spare_nodes.draw(rng))), float(self.swap_minutes.draw(rng))

    def _common(self, rng: np.random.Generator) -> dict[str, Any]:
        return {
            "N": int(max(2, self.groups.draw(rng))),
            "M": int(self.gpus_per_group.draw(rng)),
            "mtbf_hours": float(self.group_mtbf_hours.draw(rng)),
            "restart_minutes": float(self.restart_minutes.draw(rng)),
            "checkpoint_minutes": float(self.checkpoint_minutes.draw(rng)),
        }

    def _hour(self, rng: np.random.Generator) -> tuple[Scenario, set[str]]:
        c = self._common(rng)
        fields: set[str] = set()
        N, M = c["N"], c["M"]
        kw: dict[str, Any] = {
            "gpus": N * M,
            "gpus_per_group": M,
            "restart_minutes": c["restart_minutes"],
            "checkpoint_minutes": c["checkpoint_minutes"],
            "work_hours": float(self.work_hours.draw(rng)),
            "gpu_mtbf_hours": c["mtbf_hours"] * M,
        }
        shape = self._lifetime(rng, fields)
        if shape is not None:
            nodes = M // 8
            node_clocks = rng.random() < self.node_clock_share
            # The group's mean is mtbf_hours: a group is the first of M Weibull GPUs (group
            # clocks) or, on node clocks, fails at rate nodes / E[node], a node the first of 8.
            if node_clocks:
                fields.add("node clocks")
                gpu_mtbf = c["mtbf_hours"] * nodes * 8 ** (1.0 / shape)
            else:
                gpu_mtbf = c["mtbf_hours"] * M ** (1.0 / shape)
            kw.update(
                failure_law="weibull",
                weibull_shape=shape,
                gpu_mtbf_hours=gpu_mtbf,
                renewal="node" if node_clocks else "group",
            )
        repairs = self._repairs(rng, fields)
        if repairs is not None:
            mean, law = repairs
            kw["repair_minutes"] = mean / 60.0
            kw["repair_law"] = law if isinstance(law, str) else _in_minutes(law)
        pool = self._pool(rng, fields)
        if pool is not None:
            kw["spare_nodes"], kw["swap_minutes"] = pool
        if rng.random() < self.lemons_share:
            fields.add("lemons")
            kw["lemon_fraction"] = float(self.lemon_fraction.draw(rng))
            kw["lemon_rate_factor"] = float(self.lemon_rate_factor.draw(rng))
        sc = Scenario(**kw)
        if rng.random() < self.domains_share:
            sizes = [m for m in self.domain_size.values if 2 * m <= N]
            if sizes:
                fields.add("failure domains")
                m = int(Choice(tuple(sizes)).draw(rng))
                sc = scenario_with_domain_share(sc, m, float(self.domain_failure_share.draw(rng)))
        # Drawn last, and only with a share: the default space's streams are as before.
        if self.detection_share > 0 and rng.random() < self.detection_share:
            fields.add("detection")
            hang = float(self.hang_share.draw(rng))
            classes: tuple[FailureClass, ...] = (
                FailureClass("crash", 1.0 - hang),
                FailureClass("hang", hang, "hang", float(self.hang_detect_minutes.draw(rng))),
            )
            if self.late_share > 0 and rng.random() < self.late_share:
                classes += self._late_classes(rng)
                late = math.fsum(c.share for c in classes[2:])
                classes = (dataclasses.replace(classes[0], share=1.0 - hang - late), *classes[1:])
            if self.misdiagnosis_share > 0 and rng.random() < self.misdiagnosis_share:
                fields.add("misdiagnosis")
                classes = tuple(
                    dataclasses.replace(c, misdiagnosis=float(self.misdiagnosis.draw(rng)))
                    for c in classes
                )
            sc = dataclasses.replace(sc, failure_classes=classes)
        return sc, fields

    def _late_classes(self, rng: np.random.Generator) -> tuple[FailureClass, ...]:
        """A straggler and a corruption class, drawn over their spans (class docstring)."""
        return (
            FailureClass(
                "straggler",
                float(self.straggler_share.draw(rng)),
                "straggler",
                float(self.straggler_detect_minutes.draw(rng)),
                slowdown=float(self.slowdown.draw(rng)),
            ),
            FailureClass(
                "corruption",
                float(self.corruption_share.draw(rng)),
                "corruption",
                float(self.corruption_detect_minutes.draw(rng)),
                rollback_checkpoints=int(self.rollback_checkpoints.draw(rng)),
            ),
        )

    def _step(self, rng: np.random.Generator) -> tuple[StepScenario, set[str]]:
        c = self._common(rng)
        fields = {"step level"}
        N, M = c["N"], c["M"]
        mean_seconds = c["mtbf_hours"] * 3600.0
        shape = self._lifetime(rng, fields)
        law = (
            stats.expon(scale=mean_seconds)
            if shape is None
            else stats.weibull_min(shape, scale=mean_seconds / math.gamma(1.0 + 1.0 / shape))
        )
        kw: dict[str, Any] = {
            "groups": N,
            "steps": int(self.steps.draw(rng)),
            "stack_seconds": float(self.stack_seconds.draw(rng)),
            "allreduce_seconds": N / 100.0,
            "checkpoint_seconds": 60.0 * c["checkpoint_minutes"],
            "restart_seconds": 60.0 * c["restart_minutes"],
            "failure_law": law,
            "gpus_per_group": M,
        }
        repairs = self._repairs(rng, fields)
        if repairs is not None:
            kw["repair_seconds"], kw["repair_law"] = repairs
        pool = self._pool(rng, fields)
        if pool is not None:
            kw["spare_nodes"], swap = pool
            kw["swap_seconds"] = 60.0 * swap
        return StepScenario(**kw), fields


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if hasattr(value, "dist") and hasattr(value, "kwds"):  # a frozen scipy.stats law
        params = [f"{a:.6g}" for a in value.args]
        params += [f"{k}={v:.6g}" for k, v in sorted(value.kwds.items())]
        return f"{value.dist.name}({', '.join(params)})"
    return repr(value)


def _in_minutes(law: Any) -> Any:
    """A lognormal law of seconds as the same law of minutes."""
    (sigma,) = law.args
    return stats.lognorm(sigma, scale=float(law.kwds["scale"]) / 60.0)


def _parse(default: Any, value: Any) -> Any:
    """A TOML value as the type of ``default`` (a share, a :class:`Span`, a :class:`Choice`)."""
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"a share is a number in [0, 1], got {value!r}")
        return float(value)
    if isinstance(default, Choice):
        if (
            isinstance(value, dict)
            and set(value) == {"choice"}
            and isinstance(value["choice"], list)
        ):
            return Choice(tuple(value["choice"]))
        raise ValueError(f"a choice is {{choice = [...]}}, got {value!r}")
    if isinstance(value, list) and len(value) == 2:
        return Span(value[0], value[1], log=default.log, integer=default.integer)
    if isinstance(value, dict) and {"low", "high"} <= set(value) <= {
        "low",
        "high",
        "log",
        "integer",
    }:
        return Span(
            value["low"],
            value["high"],
            log=bool(value.get("log", default.log)),
            integer=bool(value.get("integer", default.integer)),
        )
    raise ValueError(f"a range is [low, high] or {{low = ..., high = ...}}, got {value!r}")
