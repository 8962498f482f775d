"""The cycle law of an hour-level scenario: one place that chooses it.

A restart cycle's law (:class:`~spare_theory.cycles.laws.CycleLaw`: how long
the cycle survives and its throughput in each state) depends on the strategy
and on which of the scenario's optional mechanisms are on.  Every front door
(:func:`~spare_theory.training.estimate.time_to_train`,
:func:`~spare_theory.training.optimize.optimal_plan`) asks :func:`scenario_cycle`, so a
scenario field is either modelled or refused here, never silently ignored:

- nothing optional: today's law (:func:`~spare_theory.cycles.laws.cycle_law`);
- a non-exponential ``failure_law``: today's law with stationary renewal
  clocks (:class:`~spare_theory.lifetimes.laws.EquilibriumLifetimes`);
- ``repair_minutes``: :func:`~spare_theory.hourly.repairs.repair_cycle`;
- ``planned_restart_failures``: :func:`~spare_theory.hourly.repairs.planned_cycle`;
  ``planned_restart_cost = c``: the same law at the down count ``k(c)`` where
  the model's step cost reaches ``c``
  (:func:`~spare_theory.hourly.repairs.cost_trigger_failures`; SPARe only, since
  Rep's and CKPT-only's steps do not grow with failures);
- failure domains or lemon groups: :func:`~spare_theory.hourly.domains.domain_cycle_law`
  (SPARe on the domain-aware placement, and CKPT-only);
- ``microbatches = m > 1`` (SPARe splitting a failed group's shard):
  :func:`~spare_theory.hourly.split.split_law`.

Combinations no model covers raise ``ValueError`` naming the fields.
"""

from __future__ import annotations

from ..cycles.laws import CycleLaw, cycle_law
from ..lifetimes.laws import EquilibriumLifetimes
from .domains import domain_cycle_law
from .repairs import cost_trigger_failures, planned_cycle, repair_cycle, repair_rate
from .scenario import Scenario
from .split import check_microbatches, split_law

__all__ = ["check_split", "planned_trigger", "scenario_cycle"]


def _correlated(scenario: Scenario) -> bool:
    """Failure domains or lemon groups are on."""
    domains = scenario.domain_size is not None and scenario.domain_mtbf_hours is not None
    lemons = scenario.lemon_fraction > 0 and scenario.lemon_rate_factor > 1
    return domains or lemons


def check_split(scenario: Scenario, strategy: str, microbatches: int) -> int:
    """``microbatches`` checked against a checked ``strategy`` and the scenario's fields.

    Splitting is modelled for SPARe with exponential lifetimes and none of
    repairs, failure domains or lemons (planned restarts, by count or by
    cost, are modelled with it).

    Parameters
    ----------
    scenario : Scenario
        The run.
    strategy : str
        A checked strategy name.
    microbatches : int
        Pieces per shard, ``>= 1``.

    Returns
    -------
    int
        ``microbatches`` as an int.

    Raises
    ------
    ValueError
        Naming ``microbatches`` and the field it cannot be combined with.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, restart_minutes=20,
    ...               checkpoint_minutes=5, work_hours=48)
    >>> check_split(sc, "spare", 8)
    8
    """
    m = check_microbatches(strategy, microbatches)
    if m == 1:
        return m
    fields = {
        "failure_law": not scenario.exponential,
        "repair_minutes": scenario.repair_minutes is not None,
        "domain_size": scenario.domain_size is not None,
        "lemon_fraction": scenario.lemon_fraction > 0,
    }
    clashes = [name for name, on in fields.items() if on]
    if clashes:
        raise ValueError(
            f"microbatches must be 1 with {', '.join(clashes)} set: splitting is modelled "
            "for exponential lifetimes without repairs, domains or lemons"
        )
    return m


def scenario_cycle(scenario: Scenario, strategy: str, r: int, microbatches: int = 1) -> CycleLaw:
    """The cycle law of a checked plan ``(strategy, r)`` on ``scenario``.

    CKPT-only (``r = 1``) ends its cycle at every failure, so repairs and
    planned restarts leave it unchanged.

    Parameters
    ----------
    scenario : Scenario
        The run.
    strategy : str
        ``"ckpt"``, ``"rep"`` or ``"spare"`` (checked with ``r`` by
        :func:`~spare_theory.hourly.scenario.check_plan`).
    r : int
        Redundancy.
    microbatches : int, default 1
        Pieces per shard for SPARe (:func:`check_split`).

    Returns
    -------
    CycleLaw

    Raises
    ------
    ValueError
        Naming the fields, for combinations no model covers: Rep under
        failure domains or lemons, domains or lemons with repairs or planned
        restarts, planned restarts with a non-exponential failure law.

    Examples
    --------
    >>> sc = Scenario(gpus=1024, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48,
    ...               repair_minutes=30, rejoin_minutes=1)
    >>> scenario_cycle(sc, "spare", 1), type(scenario_cycle(sc, "rep", 2)).__name__
    (CkptOnly(N=128, r=1), 'RepairCycle')
    >>> racks = Scenario(gpus=256 * 8, gpus_per_group=8, restart_minutes=20,
    ...                  checkpoint_minutes=5, work_hours=48, domain_size=16,
    ...                  domain_mtbf_hours=20000.0)
    >>> type(scenario_cycle(racks, "spare", 6)).__name__
    'DomainSpare'
    """
    m = check_split(scenario, strategy, microbatches)
    k = planned_trigger(scenario, strategy, m)
    if m != 1 and r > 1:
        if k is None:
            return split_law(scenario.groups, r, m)
        return planned_cycle(strategy, scenario.groups, r, k, microbatches=m)
    planned = k is not None or scenario.planned_restart_cost is not None
    if _correlated(scenario):
        if scenario.repair_minutes is not None or planned:
            raise ValueError(
                "failure domains or lemons (domain_size, lemon_fraction) are modelled without "
                "repair_minutes, planned_restart_failures and planned_restart_cost; simulate "
                "the combination with simulate_domain_training"
            )
        if strategy == "rep":
            raise ValueError(
                "strategy 'rep' is not modelled under failure domains or lemons "
                "(domain_size, lemon_fraction): use 'spare' or 'ckpt'"
            )
        return domain_cycle_law(scenario, r)
    if not scenario.exponential:
        if planned:
            raise ValueError(
                "planned_restart_failures and planned_restart_cost are modelled with "
                "failure_law='exponential' only"
            )
        lifetimes = EquilibriumLifetimes(scenario.group_lifetime_law)
        return cycle_law(strategy, scenario.groups, r, lifetimes)
    if r == 1 or (scenario.repair_minutes is None and k is None):
        return cycle_law(strategy, scenario.groups, r)
    stall = scenario.group_failure_rate_per_hour * scenario.rejoin_minutes / 60.0
    if k is not None:
        return planned_cycle(strategy, scenario.groups, r, k, repair_rate(scenario), stall)
    return repair_cycle(
        strategy, scenario.groups, r, repair_rate(scenario), stall, scenario.repair_law
    )


def planned_trigger(scenario: Scenario, strategy: str, microbatches: int = 1) -> int | None:
    """The planned-restart trigger of a checked plan as a down count ``k`` (``None``: none).

    ``planned_restart_failures`` as it is; ``planned_restart_cost = c``
    becomes ``k(c)``, the least down count whose closed-form step cost
    ``ceil(m N/(N-d))/m`` reaches ``c``
    (:func:`~spare_theory.hourly.repairs.cost_trigger_failures`), for SPARe; Rep's
    and CKPT-only's steps cost the same in every state, so a cost trigger
    never fires for them (``None``).

    Parameters
    ----------
    scenario : Scenario
        The run.
    strategy : str
        A checked strategy name.
    microbatches : int, default 1
        Pieces per shard ``m`` (the cost is then the load in shard units).

    Returns
    -------
    int or None

    Examples
    --------
    >>> sc = Scenario.published_600k(2048)
    >>> import dataclasses
    >>> planned_trigger(dataclasses.replace(sc, planned_restart_cost=3.0), "spare")
    147
    >>> planned_trigger(dataclasses.replace(sc, planned_restart_cost=3.0), "rep") is None
    True
    """
    if scenario.planned_restart_failures is not None:
        return scenario.planned_restart_failures
    c = scenario.planned_restart_cost
    if c is None or strategy != "spare":
        return None
    return int(cost_trigger_failures(scenario.groups, c, microbatches=microbatches))
