"""Rep+CKPT: ``r`` replicas of every shard on disjoint groups.

The ``N`` groups form ``floor(N/r)`` replica sets (the balanced layout of
:func:`spare_theory.placement.replica_sets`); every group computes its set's
shard, so a step costs about ``r`` failure-free steps, and a global restart
happens when a whole set is down.  ``r = 1`` is CKPT-only.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ..hourly.rules import AnyFailureRules, ReplicaSetRules
from ..lifetimes.laws import EXPONENTIAL, memoryless
from ..placement.replicas import replica_set_sizes, replica_sets
from ..steps.rep_run import run_rep
from ..steps.scenario import StepScenario
from .base import Strategy, single_units

if TYPE_CHECKING:
    from ..cycles.base import CycleLaw
    from ..steps.cycles import StepCycle

# The models (cycle laws, step cycle tables, the planner's legs) are imported by the methods
# that build them: importing a strategy, as the event simulations do, loads no model.

__all__ = ["RepStrategy"]


class RepStrategy(Strategy):
    """Rep+CKPT (``"rep"``): any ``1 <= r <= N``.

    Examples
    --------
    >>> s = RepStrategy()
    >>> s.cycle_law(100, 2).throughput, s.cycle_law(100, 1)
    (0.5, CkptOnly(N=100, r=1))
    """

    name = "rep"
    label = "Rep+CKPT"

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        from ..cycles.base import cycle_law_of
        from ..cycles.rep import CkptOnly, Rep

        if r == 1:
            return cycle_law_of(CkptOnly, N, 1, lifetimes)
        return cycle_law_of(Rep, N, r, lifetimes)

    def correlated_law(
        self,
        N: int,
        r: int,
        *,
        domain_size: int | None,
        domain_rate_ratio: float,
        lifetimes: Any,
        placement: str = "ruler",
    ) -> CycleLaw:
        """Lemons: Rep's law with the lemon lifetimes (exact on the average over the lemons'
        placement, as SPARe's); failure domains have no model."""
        if domain_size is not None:
            return super().correlated_law(
                N,
                r,
                domain_size=domain_size,
                domain_rate_ratio=domain_rate_ratio,
                lifetimes=lifetimes,
            )
        return self.base_law(N, r, lifetimes)

    def failure_rules(
        self,
        N: int,
        r: int,
        *,
        microbatches: int,
        repairs: bool,
        pool: Any,
        placement: str = "ruler",
        domain_size: int | None = None,
    ) -> Any:
        return AnyFailureRules() if r == 1 else ReplicaSetRules(N, r)

    def wipeout_units(
        self,
        N: int,
        r: int,
        *,
        placement: str = "ruler",
        domain_size: int | None = None,
        **plan: Any,
    ) -> Any:
        """Each group's replica set (balanced layout)."""
        if r == 1:
            return single_units(N)
        return replica_sets(N, r)[:, None], replica_set_sizes(N, r)

    def step_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        """The published simulator's consecutive replica sets (``id // r``), ``r``-fold compute."""
        from ..steps.cycles import rep_step_cycle

        return rep_step_cycle(scenario, r)

    def step_repair_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        from ..steps.repairs import rep_repair_step_cycle

        return rep_repair_step_cycle(scenario, r)

    def step_rule(self, scenario: StepScenario, r: int, *, rep_recovery: str, **plan: Any) -> Any:
        return functools.partial(run_rep, published=rep_recovery == "published")

    def caveats(self, scenario: Any, r: int | None) -> list[str]:
        """The step-level model's measured bias at ``r = 2`` under Weibull lifetimes.

        At ``r = 2`` a paper-style run is dominated by restarts, and under
        Weibull shape 0.78 the model counts 4 % too many at ``N = 200``
        (docs/step_model.md section 8b); with exponential lifetimes it is
        within 1 %.  Measured without repairs, so given only there.

        Examples
        --------
        >>> from spare_theory import paper_scenario
        >>> rep = RepStrategy()
        >>> [c[:39] for c in rep.caveats(paper_scenario(200, failure_law="weibull"), 2)]
        ['at r = 2 the step-level model runs high']
        >>> rep.caveats(paper_scenario(200), 2), rep.caveats(paper_scenario(200), 3)
        ([], [])
        """
        if r != 2 or not isinstance(scenario, StepScenario) or scenario.repairs:
            return []
        if memoryless(scenario.failure_law):
            return []
        return [
            "at r = 2 the step-level model runs high against simulation under a "
            "non-exponential failure law at a few hundred groups: the clocks are young "
            "after the many restarts (docs/step_model.md section 8b)"
        ]
