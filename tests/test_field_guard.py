"""No front door silently ignores a field (issue 41, item 2): each plays it, refuses it or says so.

For every public function that takes a ``Scenario``, ``StepScenario`` or ``Job`` and every
field of that dataclass (``dataclasses.fields``: a field added later and forgotten by a door
fails here), the field is set to a value other than the reference's, on a tiny scenario:

- the answer changes (simulations on the same seed: common random numbers make it sharp), or
- the door raises ``ValueError`` / ``NoClosedFormError`` naming the field (or, for a field
  that needs another, e.g. ``weibull_shape`` needs ``failure_law="weibull"``, naming that
  other field when the door refuses it already), or
- the door's docstring lists the field after "Fields with no effect here:", and then the
  answer is exactly the reference's.

A field that needs another (its probe has a context) is walked alone too.  There it must be
played or refused as above, or be listed in its class's docstring after "Fields read only
with another:", and then the door's answer is exactly the reference's (unless the door's
``plays_alone`` says why it plays the field alone, and then the answer changes).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import spare_theory as st
from spare_theory.reports.job_plan import plan_scenario


@dataclasses.dataclass(frozen=True)
class Probe:
    """A field's other value, the fields it needs (``context``) and the strategy it matters to."""

    value: Any
    context: tuple[tuple[str, Any], ...] = ()
    strategy: str = "spare"


REPAIRS = (("repair_minutes", 30.0),)
DOMAINS = (("domain_size", 4), ("domain_mtbf_hours", 100.0))
POOL = (("repair_minutes", 30.0), ("spare_nodes", 2), ("swap_minutes", 5.0))
# A third of the failures hangs for 20 min before anyone notices.
CLASSES = (
    st.FailureClass("crash", 0.7, "crash", 1.0),
    st.FailureClass("hang", 0.3, "hang", 20.0),
)
# 16 groups of 8 GPUs, a group failing every 12.5 h: a few failures in 10 h of work.
HOUR_BASE = dict(
    gpus=128,
    gpus_per_group=8,
    gpu_mtbf_hours=100.0,
    restart_minutes=20.0,
    checkpoint_minutes=2.0,
    work_hours=10.0,
)
HOUR_PROBES = {
    "gpus": Probe(192),
    "gpus_per_group": Probe(16),
    "gpu_mtbf_hours": Probe(80.0),
    "restart_minutes": Probe(30.0),
    "checkpoint_minutes": Probe(3.0),
    "work_hours": Probe(12.0),
    "failure_law": Probe("weibull"),
    "weibull_shape": Probe(0.6, (("failure_law", "weibull"),)),
    "repair_minutes": Probe(30.0),
    "repair_law": Probe("fixed", REPAIRS),
    "rejoin_minutes": Probe(5.0, REPAIRS),
    "domain_size": Probe(2, DOMAINS),
    "domain_mtbf_hours": Probe(50.0, DOMAINS),
    "placement": Probe("ruler", DOMAINS),
    "lemon_fraction": Probe(0.25, (("lemon_rate_factor", 5.0),)),
    "lemon_rate_factor": Probe(5.0, (("lemon_fraction", 0.25),)),
    "planned_restart_failures": Probe(2),
    "planned_restart_cost": Probe(1.5),
    "reconfigure_minutes": Probe(10.0, (), "elastic"),
    "heal_minutes": Probe(5.0, REPAIRS, "elastic"),
    "gpus_per_node": Probe(2, (("failure_law", "weibull"), ("renewal", "node"))),
    "renewal": Probe("node", (("failure_law", "weibull"), ("gpus_per_node", 4))),
    "spare_nodes": Probe(1, POOL),
    "swap_minutes": Probe(10.0, POOL),
    "microbatches": Probe(4),
    "failure_classes": Probe(CLASSES),
    "provenance": Probe((("gpus", "a test"),)),
}
STEP_REPAIRS = (("repair_seconds", 1800.0),)
STEP_POOL = (
    ("repair_seconds", 1800.0),
    ("spare_nodes", 2),
    ("swap_seconds", 300.0),
    ("gpus_per_node", 4),
)
# A worker failing every 300 s of the cluster: its other nodes fail while it waits for a swap.
STEP_POOL_NODES = (*STEP_POOL, ("failure_law", stats.expon(scale=16 * 300.0)))
# 16 workers, 40 steps of about 64 s, a failure every 1,000 s of the cluster.
STEP_BASE = dict(
    groups=16,
    steps=40,
    allreduce_seconds=0.16,
    failure_law=stats.expon(scale=16 * 1000.0),
    restart_seconds=600.0,
)
STEP_PROBES = {
    "groups": Probe(20),
    "steps": Probe(50),
    "stack_seconds": Probe(70.0),
    "allreduce_seconds": Probe(1.0),
    "stack_jitter_cv": Probe(0.1),
    "checkpoint_seconds": Probe(30.0),
    # CKPT-only restarts at every failure: SPARe's replays of the probe's log never wipe out.
    "restart_seconds": Probe(900.0, (), "ckpt"),
    "restart_semantics": Probe("fixed", (), "ckpt"),
    "failure_law": Probe(stats.expon(scale=16 * 700.0)),
    "partial_recovery_seconds": Probe(5.0),
    "allreduce_failure_scale": Probe(1.0),
    "repair_seconds": Probe(1800.0),
    "repair_law": Probe("fixed", STEP_REPAIRS),
    "rejoin_seconds": Probe(30.0, STEP_REPAIRS),
    "microbatches": Probe(4),
    "reconfigure_seconds": Probe(600.0, (), "elastic"),
    "heal_seconds": Probe(300.0, STEP_REPAIRS, "elastic"),
    "gpus_per_group": Probe(16, STEP_POOL_NODES),
    "gpus_per_node": Probe(2, STEP_POOL_NODES),
    "spare_nodes": Probe(1, STEP_POOL),
    "swap_seconds": Probe(600.0, STEP_POOL),
    "clock_age_seconds": Probe(None, (("failure_law", stats.weibull_min(0.6, scale=16_000.0)),)),
    "provenance": Probe((("groups", "a test"),)),
}
JOB_BASE = dict(parameters=7e9, gpus=512, gpus_per_group=8, work_hours=100)
MEMORY = (("checkpoint_tier", "memory"),)
JOB_PROBES = {
    "parameters": Probe(1.4e10),
    "bytes_per_parameter": Probe(16.0),
    "gpus": Probe(1024),
    "gpus_per_group": Probe(16),
    "gpus_per_node": Probe(4),
    "gpu": Probe("a100"),
    "gpu_mtbf_hours": Probe(200.0),
    "busy_watts_per_gpu": Probe(500.0),
    "idle_watts_per_gpu": Probe(50.0),
    "work_hours": Probe(120),
    "storage_write_gbps": Probe(100.0),
    "storage_read_gbps": Probe(100.0),
    "host_copy_gbps": Probe(10.0, MEMORY),
    "network_gbps": Probe(10.0, MEMORY),
    "detect_seconds": Probe(120.0),
    "schedule_seconds": Probe(120.0),
    "init_seconds": Probe(30.0),
    "checkpoint_tier": Probe("memory"),
    "checkpoint_async": Probe(True),
    "failure_classes": Probe(CLASSES),
}
KINDS = {
    st.Scenario: (HOUR_BASE, HOUR_PROBES),
    st.StepScenario: (STEP_BASE, STEP_PROBES),
    st.Job: (JOB_BASE, JOB_PROBES),
}


def _numbers(x: Any) -> tuple:
    """The numbers of an answer, in order (strings, caveats and echoed scenarios left out)."""
    if isinstance(x, st.Scenario | st.StepScenario):
        return ()
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return tuple(v for f in dataclasses.fields(x) for v in _numbers(getattr(x, f.name)))
    if isinstance(x, np.ndarray):
        return tuple(x.ravel().tolist()) if x.dtype.kind in "biuf" else ()
    if isinstance(x, bool | int | float | np.number):
        return (float(x),)
    if isinstance(x, dict):
        return tuple(v for k in sorted(x) for v in _numbers(x[k]))
    if isinstance(x, tuple | list):
        return tuple(v for e in x for v in _numbers(e))
    return ()


def _slow_restarts(scenario: Any) -> Any:
    """The scenario with restarts three times as long (every field still as probed)."""
    return dataclasses.replace(scenario, restart_minutes=3 * scenario.restart_minutes)


def _plan(strategy: str) -> dict[str, int]:
    # Elastic DP out once 3 of the 16 groups are down: wipe-outs often enough to simulate.
    return {"spare": {"r": 3}, "elastic": {"min_groups": 14}}.get(strategy, {})


@functools.cache
def _log() -> st.FailureLog:
    # 32 nodes, each down for half an hour twice in 12 h.
    start = np.arange(64) * 0.15 + 0.1
    frame = pd.DataFrame({"node": np.arange(64) % 32, "start": start, "end": start + 0.5})
    return st.FailureLog.from_frame(frame, nodes=32, observed_from=0.0, observed_until=12.0)


@dataclasses.dataclass(frozen=True)
class Door:
    """A public function, the class it takes and how its answer is read on a probe."""

    function: Callable[..., Any]
    kind: type
    call: Callable[[Any, str], Any]
    #: Strategies the door refuses, replaced by one it takes.
    instead: tuple[tuple[str, str], ...] = ()
    #: Fields read only with another that this door plays alone anyway, with why.
    plays_alone: tuple[tuple[str, str], ...] = ()


H, S = st.Scenario, st.StepScenario
TAU, K = {"checkpoint_interval_minutes": 30.0}, {"checkpoint_every_steps": 10}
# Why a door plays a field read only with another alone.
FROM_LOG = "the log brings repairs of nodes"
NODES = "StepEstimate.nodes reports the cluster's nodes"
STEP_NODES = (("gpus_per_group", NODES), ("gpus_per_node", NODES))
SIM = {"trials": 3, "seed": 1}
DOORS = {
    "time_to_train[hour]": Door(
        st.time_to_train, H, lambda sc, s: st.time_to_train(sc, s, **_plan(s), **TAU)
    ),
    "time_to_train[step]": Door(
        st.time_to_train,
        S,
        lambda sc, s: st.time_to_train(sc, s, **_plan(s), **K),
        plays_alone=STEP_NODES,
    ),
    "optimal_plan[hour]": Door(st.optimal_plan, H, lambda sc, s: st.optimal_plan(sc, s)),
    "optimal_plan[step]": Door(
        st.optimal_plan, S, lambda sc, s: st.optimal_plan(sc, s), plays_alone=STEP_NODES
    ),
    "simulate_training[hour]": Door(
        st.simulate_training,
        H,
        lambda sc, s: st.simulate_training(sc, s, **_plan(s), **TAU, **SIM),
    ),
    "simulate_training[step]": Door(
        st.simulate_training, S, lambda sc, s: st.simulate_training(sc, s, **_plan(s), **K, **SIM)
    ),
    "replay_training[hour]": Door(
        st.replay_training,
        H,
        lambda sc, s: st.replay_training(_log(), sc, s, **_plan(s), **TAU, trials=2, seed=1),
        plays_alone=(("heal_minutes", FROM_LOG), ("gpus_per_node", FROM_LOG)),
    ),
    "replay_training[step]": Door(
        st.replay_training,
        S,
        lambda sc, s: st.replay_training(_log(), sc, s, **_plan(s), **K, trials=2, seed=1),
        plays_alone=(("heal_seconds", FROM_LOG), *STEP_NODES),
    ),
    "mean_time_to_wipeout": Door(
        st.mean_time_to_wipeout, H, lambda sc, s: st.mean_time_to_wipeout(sc, s, **_plan(s))
    ),
    "simulate_time_to_wipeout": Door(
        st.simulate_time_to_wipeout,
        H,
        lambda sc, s: st.simulate_time_to_wipeout(sc, s, **_plan(s), **SIM),
    ),
    "simulate_domain_training": Door(
        st.simulate_domain_training,
        H,
        lambda sc, s: st.simulate_domain_training(sc, 3, 30.0, 3, seed=1),
    ),
    "plan_scenario": Door(
        plan_scenario,
        H,
        lambda sc, s: plan_scenario(sc, st.CostModel(), strategies=[s])["plans"],
    ),
    # Their rows hold the best plan only: at restarts three times as long redundancy pays, so
    # the best plan reads the grouping and the placement (at r = 1 neither matters).
    "what_if": Door(
        st.what_if,
        H,
        lambda sc, s: st.what_if(_slow_restarts(sc), [f"strategy:{s}"], strategies=[s]).to_dict(
            "records"
        ),
    ),
    "sensitivity": Door(
        st.sensitivity,
        H,
        lambda sc, s: (
            st.sensitivity(_slow_restarts(sc), ["gpu_mtbf_hours"], factors=(2.0,), strategies=[s])
            .assign(base_hours=lambda t: t.attrs["base_hours"])
            .to_dict("records")
        ),
    ),
    "optimal_checkpoint_steps": Door(
        st.optimal_checkpoint_steps,
        S,
        lambda sc, s: st.optimal_checkpoint_steps(sc, s, **_plan(s)),
        plays_alone=STEP_NODES,
    ),
    "expected_restart_seconds": Door(
        st.expected_restart_seconds, S, lambda sc, s: st.expected_restart_seconds(sc)
    ),
    "expected_step_seconds": Door(
        st.expected_step_seconds, S, lambda sc, s: st.expected_step_seconds(sc, [1, 2])
    ),
    "Job.scenario": Door(st.Job.scenario, st.Job, lambda job, s: job.scenario()),
    "Job.cost_model": Door(st.Job.cost_model, st.Job, lambda job, s: job.cost_model()),
}
#: Public names that take a scenario but are no front door, with why.
NOT_DOORS = {
    "StepSimulation": "a result record: it carries the scenario it was run on",
    "Strategy": "the strategy protocol: its hooks are what the doors call",
}


def _listed(doc: str | None, heading: str) -> list[str]:
    """The ````names```` heading each bullet of the first list after ``heading`` in ``doc``."""
    doc = inspect.cleandoc(doc or "")
    if heading not in doc:
        return []
    blocks = doc.split(heading, 1)[1].split("\n\n")
    block = next((b for b in blocks if b.lstrip().startswith("- ")), "")
    bullets = re.findall(r"^- (.*?)(?=^- |\Z)", block.strip() + "\n", re.M | re.S)
    return [n for b in bullets for n in re.findall(r"``([\w.]+)``", b.split(": ", 1)[0])]


def no_effect(function: Callable[..., Any], kind: type) -> set[str]:
    """The fields of ``kind`` listed after "Fields with no effect here:" in the docstring.

    A bullet ``- ``a``, ``Scenario.b``: why`` names ``a`` for every class and ``b`` for
    ``Scenario`` only.
    """
    named = set()
    for name in _listed(function.__doc__, "Fields with no effect here:"):
        owner, _, field = name.rpartition(".")
        if owner in ("", kind.__name__):
            named.add(field)
    return named


def read_only_with_another(kind: type) -> set[str]:
    """The fields the class docstring lists after "Fields read only with another:"."""
    return set(_listed(kind.__doc__, "Fields read only with another:"))


def _instance(kind: type, fields: dict[str, Any]) -> Any:
    return kind(**fields)


@functools.cache
def _reference(door: str, context: tuple[tuple[str, Any], ...], strategy: str) -> Any:
    d = DOORS[door]
    base, _ = KINDS[d.kind]
    answer = d.call(_instance(d.kind, {**base, **dict(context)}), strategy)
    return answer if d.kind is st.Job else _numbers(answer)


#: Probes too weak for their door, not doors ignoring a field.
CASES = [
    pytest.param(door, f.name, id=f"{door}-{f.name}")
    for door, d in DOORS.items()
    for f in dataclasses.fields(d.kind)
]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_field_has_a_probe(kind):
    _, probes = KINDS[kind]
    assert list(probes) == [f.name for f in dataclasses.fields(kind)]


def test_every_public_function_that_takes_a_scenario_is_a_door():
    takes = set()
    for name in st._API:
        obj = getattr(st, name)
        if not inspect.isfunction(obj) and not inspect.isclass(obj):
            continue
        try:
            params = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(re.search(r"\b(Step)?Scenario\b|\bJob\b", str(p.annotation)) for p in params):
            takes.add(name)
    covered = {d.function.__qualname__ for d in DOORS.values()}
    assert takes - set(NOT_DOORS) <= covered
    assert {"Job.scenario", "Job.cost_model", "plan_scenario"} <= covered


@pytest.mark.parametrize("door", list(DOORS))
def test_documented_fields_exist(door):
    d = DOORS[door]
    fields = {f.name for f in dataclasses.fields(d.kind)}
    assert no_effect(d.function, d.kind) <= fields


@pytest.mark.parametrize(("door", "field"), CASES)
def test_each_field_changes_the_answer_is_refused_or_documented(door, field):
    d = DOORS[door]
    base, probes = KINDS[d.kind]
    probe = probes[field]
    strategy = dict(d.instead).get(probe.strategy, probe.strategy)
    documented = field in no_effect(d.function, d.kind)
    try:
        reference = _reference(door, probe.context, strategy)
    except ValueError as exc:
        # The field needs another one, which the door refuses by name already.
        assert any(name in str(exc) for name, _ in probe.context), exc
        return
    probed = _instance(d.kind, {**base, **dict(probe.context), field: probe.value})
    if documented:
        answer = d.call(probed, strategy)
        assert (answer if d.kind is st.Job else _numbers(answer)) == reference
        return
    try:
        answer = d.call(probed, strategy)
    except ValueError as exc:
        assert field in str(exc), f"{door} refuses {field} without naming it: {exc}"
        return
    got = answer if d.kind is st.Job else _numbers(answer)
    assert got != reference, f"{door} ignores {field}: play it, refuse it or document it"


#: Fields that need another one and are still taken alone, each a no-op there (not yet refused):
#: the placement without domains, lemons at the common rate, node clocks or node sizes without
#: node renewal or a pool, heals without repairs, the memory tier's links without that tier.
ALONE = [
    pytest.param(door, f.name, id=f"{door}-{f.name}")
    for door, d in DOORS.items()
    for f in dataclasses.fields(d.kind)
    if KINDS[d.kind][1][f.name].context
]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_field_read_only_with_another_is_probed_with_it(kind):
    # Its probe's context is what the main walk plays it with: there it must matter.
    _, probes = KINDS[kind]
    for name in read_only_with_another(kind):
        assert name in probes, f"{kind.__name__} lists an unknown field {name}"
        assert probes[name].context, (
            f"{kind.__name__}.{name} is read only with another: probe it so"
        )


@pytest.mark.parametrize(("door", "field"), ALONE)
def test_a_field_without_the_fields_it_needs_is_played_refused_or_documented(door, field):
    # The same walk without the probe's context: a repair law without repairs, a lemon rate
    # without lemons, a Weibull shape without a Weibull law were once dropped without a word.
    d = DOORS[door]
    base, probes = KINDS[d.kind]
    strategy = dict(d.instead).get(probes[field].strategy, probes[field].strategy)
    try:
        probed = _instance(d.kind, {**base, field: probes[field].value})
    except ValueError as exc:
        assert field in str(exc), exc
        return
    if field in no_effect(d.function, d.kind):
        return
    reference = _reference(door, (), strategy)
    try:
        answer = d.call(probed, strategy)
    except ValueError as exc:
        assert field in str(exc), f"{door} refuses {field} without naming it: {exc}"
        return
    got = answer if d.kind is st.Job else _numbers(answer)
    if field in read_only_with_another(d.kind) and field not in dict(d.plays_alone):
        # Documented as read only with another: alone it must leave the answer exactly.
        assert got == reference, (
            f"{door} plays {field} alone, which {d.kind.__name__} says it does not"
        )
    else:
        assert got != reference, f"{door} ignores {field} alone: play it, refuse it or document it"


SWEEP_BASE = dict(
    gpus=[1024], gpu_mtbf_hours=[2000.0], gpus_per_group=[64], work_hours=48.0, progress=False
)
SWEEP_PROBES = {
    "gpus": [2048],
    "gpu_mtbf_hours": [1000.0],
    "gpus_per_group": [32],
    "restart_model": "constant",
    "checkpoint_minutes": 3.0,
    "work_hours": 60.0,
    "restart_anchor_minutes": 30.0,
    "restart_anchor_gpus": 100_000,
    "microbatches": (4,),
}


@functools.cache
def _sweep_reference() -> tuple:
    return tuple(st.sweep(**SWEEP_BASE).select_dtypes("number").to_numpy().ravel())


@pytest.mark.parametrize("name", list(SWEEP_PROBES))
def test_each_sweep_field_changes_the_grid(name):
    # sweep takes no Scenario: it builds one per point from these keywords, so each must
    # reach the answer (a keyword it dropped would be a field silently ignored).
    answer = st.sweep(**{**SWEEP_BASE, name: SWEEP_PROBES[name]})
    assert tuple(answer.select_dtypes("number").to_numpy().ravel()) != _sweep_reference()


def test_every_sweep_keyword_has_a_probe():
    params = inspect.signature(st.sweep).parameters
    assert set(params) - {"executor", "progress"} == set(SWEEP_PROBES)
