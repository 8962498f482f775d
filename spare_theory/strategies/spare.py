"""SPARe+CKPT: stacked shards on a cyclic modular Golomb ruler, adaptive reordering.

Every type of the global batch is hosted by ``r`` groups along a modular
Golomb ruler with ``r`` marks (it must exist at ``N``); after failures the
controller computes each type on one survivor with as few stack layers
``S*`` as possible, and a global restart happens only at a wipe-out (a type
with no surviving host).  With ``microbatches = m > 1`` a failed group's
shard is cut into ``m`` pieces shared by the surviving hosts of its type.
``r = 1`` is CKPT-only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import NoClosedFormError, as_count
from ..hourly.rules import (
    AnyFailureRules,
    ControllerRules,
    PoolRules,
    RecomputeRules,
    trajectory_pool,
)
from ..lifetimes.laws import EXPONENTIAL, memoryless
from ..placement.domains import placement_hosts
from ..placement.rulers import modular_ruler
from ..planning.redundancy import r_star_rule, ruler_exists
from ..steps.scenario import StepScenario
from ..steps.spare_run import check_spare_run, run_spare
from .base import PATIENCE, Strategy, single_units

if TYPE_CHECKING:
    from ..cycles.base import CycleLaw
    from ..planning.search import Leg
    from ..steps.cycles import StepCycle

# The models (cycle laws, step cycle tables, the planner's legs) are imported by the methods
# that build them: importing a strategy, as the event simulations do, loads no model.

__all__ = ["SpareStrategy"]


class SpareStrategy(Strategy):
    """SPARe+CKPT (``"spare"``): the ``r`` with a modular ruler at ``N``; splits micro-batches.

    The planner evaluates ``r = 1`` (no redundancy) and walks both ways from
    the published rule ``r* = floor(log2 N + 0.833)`` (the largest ``r <= r*``
    with a ruler); with repairs (hours nearly flat in ``r``) the walk down
    goes on to ``r = 2``.

    Examples
    --------
    >>> s = SpareStrategy()
    >>> s.accepts(13, 4), s.accepts(12, 4), [leg.start for leg in s.redundancy_legs(146)]
    (True, False, [1, 8, 7])
    """

    name = "spare"
    label = "SPARe+CKPT"

    def accepts(self, N: int, r: int) -> bool:
        return 1 <= r <= N and (r == 1 or ruler_exists(N, r))

    def require(self, N: int, r: int) -> None:
        if r > 1:
            modular_ruler(N, r)  # raises ValueError naming N and r if no ruler exists

    def redundancy_legs(self, N: int, *, flat: bool = False) -> list[Leg]:
        # r = 1 (CKPT-only) is always a candidate: from r = 2 on, S* >= 2 after the
        # first failure, so the curve jumps there.  The r far below r* are never
        # evaluated unless hours are flat in r.
        from ..planning.search import Leg

        start = max(r for r in range(1, int(r_star_rule(N)) + 1) if self.accepts(N, r))
        legs = [Leg(1, 1)]
        if start > 1:
            legs += [Leg(start, N, PATIENCE), Leg(start - 1, 2, math.inf if flat else PATIENCE)]
        return legs

    def check_microbatches(self, microbatches: int) -> int:
        return as_count(microbatches, "microbatches", minimum=1)

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        from ..cycles.base import cycle_law_of
        from ..cycles.rep import CkptOnly
        from ..cycles.spare import Spare

        if r == 1:
            return cycle_law_of(CkptOnly, N, 1, lifetimes)
        return cycle_law_of(Spare, N, r, lifetimes)

    def split_law(
        self, N: int, r: int, microbatches: int, lifetimes: Any = EXPONENTIAL
    ) -> CycleLaw:
        from ..cycles.base import cycle_law_of
        from ..cycles.spare import SpareSplit

        m = self.check_microbatches(microbatches)
        if m == 1 or r == 1:
            return self.base_law(N, r, lifetimes)
        if lifetimes is EXPONENTIAL:
            return cycle_law_of(SpareSplit, N, r, microbatches=m)
        return cycle_law_of(SpareSplit, N, r, lifetimes, microbatches=m)

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
        from ..cycles.base import cycle_law_of
        from ..cycles.domains import DomainSpare
        from ..cycles.spare import Spare

        if domain_size is not None:
            return cycle_law_of(DomainSpare, N, r, domain_size, domain_rate_ratio, placement)
        return cycle_law_of(Spare, N, r, lifetimes)

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
        if r == 1:
            return AnyFailureRules()
        if pool is not None:
            return PoolRules(pool)
        hosts = placement_hosts(placement, N, r, domain_size)
        return (
            RecomputeRules(hosts, microbatches) if repairs else ControllerRules(hosts, microbatches)
        )

    def trajectory_pool(
        self,
        N: int,
        r: int,
        *,
        size: int,
        seed: Any,
        microbatches: int,
        placement: str = "ruler",
        domain_size: int | None = None,
    ) -> Any:
        if r == 1:
            return None
        return trajectory_pool(
            placement_hosts(placement, N, r, domain_size), size, seed, microbatches
        )

    def wipeout_units(
        self,
        N: int,
        r: int,
        *,
        placement: str = "ruler",
        domain_size: int | None = None,
        **plan: Any,
    ) -> Any:
        """The shard types a group hosts: group ``g`` holds type ``i`` where ``hosts[i, k] = g``."""
        if r == 1:
            return single_units(N)
        hosts = placement_hosts(placement, N, r, domain_size)
        units = np.empty((N, r), dtype=np.int64)
        units[hosts, np.arange(r)[None, :]] = np.arange(N)[:, None]
        return units, np.full(N, r, dtype=np.int64)

    def step_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        from ..steps.spare_cycle import spare_step_cycle

        return spare_step_cycle(scenario, r)

    def step_repair_cycle(self, scenario: StepScenario, r: int, **plan: Any) -> StepCycle:
        from ..steps.repairs import spare_repair_step_cycle

        return spare_repair_step_cycle(scenario, r)

    def check_step_plan(self, scenario: StepScenario, r: int) -> None:
        if scenario.microbatches > 1 and scenario.repairs:
            raise NoClosedFormError(
                "microbatches > 1 with repairs is not modelled; set microbatches=1 or "
                "repair_seconds=None"
            )

    def step_rule(self, scenario: StepScenario, r: int, *, rep_recovery: str, **plan: Any) -> Any:
        check_spare_run(scenario, r)  # before any trial runs
        return run_spare

    def caveats(self, scenario: Any, r: int | None) -> list[str]:
        """The model's measured biases where they apply (docs/theory.md, docs/step_model.md).

        Each was measured on SPARe with redundancy (``r >= 2``); at ``r = 1``
        the plan is CKPT-only, whose model shows none of them.

        Examples
        --------
        >>> from spare_theory import Scenario
        >>> sc = Scenario(gpus=4096, gpus_per_group=16, restart_minutes=30,
        ...               checkpoint_minutes=3, work_hours=100, failure_law="weibull")
        >>> [c[:39] for c in SpareStrategy().caveats(sc, 6)], SpareStrategy().caveats(sc, 1)
        (['under non-exponential GPU lifetimes the'], [])
        """
        if r is None or r < 2:
            return []
        if isinstance(scenario, StepScenario):
            out = []
            if scenario.microbatches > 1:
                out.append(
                    "with micro-batches the step-level model runs high, the more so at small r "
                    "and few pieces (docs/step_model.md section 10)"
                )
            if scenario.repairs and not memoryless(scenario.failure_law):
                out.append(
                    "with repairs under non-exponential lifetimes the step-level model runs low: "
                    "fresh clocks after each rejoin fail early (docs/step_model.md section 11)"
                )
            return out
        out = []
        if scenario.microbatches > 1 and (r <= 3 or (r == 4 and scenario.groups < 128)):
            out.append(
                "with micro-batches at small r the window-scan overhead runs high against "
                "exact loads, and the hours with it (docs/theory.md section 7)"
            )
        if not scenario.exponential:
            out.append(
                "under non-exponential GPU lifetimes the model runs high against simulation: "
                "groups that just failed restart with young clocks, which the stationary "
                "clocks miss (docs/theory.md section 4, non-exponential failure laws)"
            )
        if scenario.domain_size is not None and scenario.repair_minutes is not None:
            out.append(
                "with repairs the model prices failure domains as independent failures of "
                "their groups, but the event of a domain that holds a whole type as a "
                "wipe-out; it runs high where most failures come in bursts on a "
                "domain-aware placement (docs/theory.md section 9)"
            )
        elif scenario.domain_size is not None:
            out.append(
                "with failure domains the model prices the domains' events on the scenario's "
                "placement; it parts from simulation the more as domains take more of the "
                "failures (docs/theory.md section 5, time to train)"
            )
        elif scenario.lemon_fraction > 0:
            out.append(
                "with lemons the model averages over the lemons' placement and runs a "
                "little above simulation (docs/theory.md section 5, time to train)"
            )
        if scenario.repair_minutes is not None and scenario.repair_minutes > 360:
            out.append(
                "with repairs slower than 6 h the model runs high, the more so the slower "
                "(docs/theory.md section 6)"
            )
        return out
