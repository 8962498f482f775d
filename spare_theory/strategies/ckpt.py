"""CKPT-only: every failure is a global restart (today's practice).

Any failure stops all groups for a global restart and a rollback to the last
checkpoint; there is no redundancy (``r = 1``), the throughput is 1, and
repairs change nothing (no failed group is ever waited for).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .._validation import as_count
from ..hourly.rules import AnyFailureRules
from ..lifetimes.laws import EXPONENTIAL
from ..steps.rep_run import run_rep
from ..steps.scenario import StepScenario
from .base import Strategy, single_units

if TYPE_CHECKING:
    from ..cycles.base import CycleLaw
    from ..planning.search import Leg
    from ..steps.cycles import StepCycle

# The models (cycle laws, step cycle tables, the planner's legs) are imported by the methods
# that build them: importing a strategy, as the event simulations do, loads no model.

__all__ = ["CkptStrategy"]


class CkptStrategy(Strategy):
    """CKPT-only (``"ckpt"``): ``r`` is 1, every failure is a wipe-out.

    Examples
    --------
    >>> s = CkptStrategy()
    >>> s.check_r(128, None), s.cycle_law(128, 1)
    (1, CkptOnly(N=128, r=1))
    """

    name = "ckpt"
    label = "CKPT-only"
    r_variable = None  # r is always 1: one copy of every shard
    waits_for_groups = False

    def check_r(self, N: int, r: Any) -> int:
        """``r`` must be ``None`` or 1 (no redundancy)."""
        if r is not None and as_count(r, "r") != 1:
            raise ValueError(f"r must be 1 (or None) for strategy {self.name!r}, got {r}")
        return 1

    def accepts(self, N: int, r: int) -> bool:
        return r == 1

    def redundancy_legs(self, N: int, *, flat: bool = False) -> list[Leg]:
        from ..planning.search import Leg

        return [Leg(1, 1)]

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        from ..cycles.base import cycle_law_of
        from ..cycles.rep import CkptOnly

        return cycle_law_of(CkptOnly, N, 1, lifetimes)

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
        return AnyFailureRules()

    def wipeout_units(
        self,
        N: int,
        r: int,
        *,
        placement: str = "ruler",
        domain_size: int | None = None,
        **plan: Any,
    ) -> Any:
        return single_units(N)

    def step_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        from ..steps.cycles import rep_step_cycle

        return rep_step_cycle(scenario, 1)

    def step_repair_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        from ..steps.repairs import rep_repair_step_cycle

        return rep_repair_step_cycle(scenario, 1)

    def step_rule(self, scenario: StepScenario, r: int, *, rep_recovery: str, **plan: Any) -> Any:
        """Rep with one replica (every failure restarts), with the published controller's quirks."""
        return functools.partial(run_rep, published=rep_recovery == "published")
