"""Rebalanced data parallelism: a strategy with a plan variable of its own, ``max_down``.

When a group fails, its shard of the global batch is spread over the
surviving groups: the batch stays exact and, with ``f`` groups down, a step
costs ``N / (N - f)`` failure-free steps.  The ``max_down``-th group down in
a cycle is a global restart with a rollback (``max_down = 1`` is
CKPT-only).  A small ``max_down`` restarts often; a large one trains slowly
on few groups: the planner searches it (:meth:`RebalanceStrategy.plan_search`).
There is no ``r``.

Modelled at the hour level, without repairs, on exponential group lifetimes:
with ``F ~ Binom(N, p(u))`` groups down by ``u`` (in mean group lifetimes),
``Q(u) = P(F <= k - 1)`` and ``theta(u) = E[(N - F) / N | F <= k - 1]
= 1 - p P(Binom(N - 1, p) <= k - 2) / P(F <= k - 1)`` at ``k = max_down``.
The step level is refused.

``import rebalance`` registers it; then ``time_to_train(scenario,
"rebalance", max_down=4)``, ``optimal_plan(scenario, "rebalance")`` (whose
``Plan.variables`` holds the best ``max_down``), ``simulate_training(...,
max_down=4)`` and ``spare-theory --import examples/rebalance.py optimize
--strategy rebalance`` take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from spare_theory import Strategy, register_strategy
from spare_theory.cycles.base import EXPONENTIAL, CycleLaw
from spare_theory.planning.search import Leg


class RebalanceCycle(CycleLaw):
    """The restart cycle at ``max_down = k``: ``log Q(u) = log P(Binom(N, p(u)) <= k - 1)``."""

    name = "rebalance"
    cost_grows = True  # a step costs N / (N - f)

    def __init__(self, N: int, k: int, lifetimes: Any = EXPONENTIAL) -> None:
        super().__init__(N, 1, lifetimes)
        self.max_down = k

    def cache_key(self) -> tuple:
        return (*super().cache_key(), self.max_down)  # the plan variable defines the law

    def logq(self, u: Any) -> np.ndarray:
        p = self.lifetimes.cdf(np.asarray(u, dtype=float))
        return np.asarray(stats.binom.logcdf(self.max_down - 1, self.N, p))

    def theta(self, u: Any) -> np.ndarray:
        p = self.lifetimes.cdf(np.asarray(u, dtype=float))
        k, N = self.max_down, self.N
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.exp(stats.binom.logcdf(k - 2, N - 1, p) - stats.binom.logcdf(k - 1, N, p))
            theta = 1.0 - p * ratio
        # Where no cycle survives, the limit p -> 1: k - 1 groups down.
        return np.where(np.isfinite(theta), theta, (N - k + 1) / N)

    def mean_time_to_wipeout(self, mu: float) -> float | None:
        """Without repairs, the ``k``-th failure of ``N`` exponential lifetimes: ``sum 1/(N-i)``."""
        if mu or self.lifetimes is not EXPONENTIAL:
            return None
        return float(np.sum(1.0 / (self.N - np.arange(self.max_down))))


class _RebalanceRule:
    """One cycle of the event simulation: ``N - f`` groups train, a restart at ``k`` down."""

    needs_group, cost_grows, repairable, reconfigures = False, True, True, False

    def __init__(self, N: int, k: int) -> None:
        self.N, self.k, self.down = N, k, 0
        self.throughput = 1.0

    def fail(self, group: int) -> bool:
        self.down += 1
        self.throughput = (self.N - self.down) / self.N
        return self.down >= self.k

    def rejoin(self, group: int) -> None:
        self.down -= 1
        self.throughput = (self.N - self.down) / self.N


@dataclass(frozen=True)
class RebalanceRules:
    """The picklable factory: a fresh rule at each cycle's start."""

    N: int
    k: int

    def __call__(self, rng: np.random.Generator) -> _RebalanceRule:
        return _RebalanceRule(self.N, self.k)


class RebalanceStrategy(Strategy):
    """Rebalanced DP (``"rebalance"``): survivors share the batch, a restart at ``max_down``."""

    name = "rebalance"
    label = "Rebalanced DP"
    r_variable = None  # no r: its methods take r = 1
    plan_variables = ("max_down",)

    def check_r(self, N: int, r: Any) -> int:
        if r is not None and r != 1:
            raise ValueError(f"r must be None for strategy {self.name!r}, got {r}")
        return 1

    def accepts(self, N: int, r: int) -> bool:
        return r == 1

    def redundancy_legs(self, N: int, *, flat: bool = False) -> list[Leg]:
        return [Leg(1, 1)]

    def check_plan(self, N: int, r: int, plan: Mapping[str, Any]) -> dict[str, Any]:
        """``max_down``: an integer ``1 <= k <= N``, by default ``ceil(N / 16)``."""
        k = plan.get("max_down")
        if k is None:
            return {"max_down": -(-N // 16)}
        if int(k) != k or not 1 <= k <= N:
            raise ValueError(f"max_down must be an integer in [1, N = {N}], got {k}")
        return {"max_down": int(k)}

    def plan_search(self, N: int, r: int) -> tuple[str, np.ndarray]:
        return "max_down", np.unique(np.round(np.geomspace(1, N, 12)).astype(int))

    def check_process(self, process: Any) -> None:
        # What the hour-level model keeps of the scenario (spare_theory.hourly.compose).
        given = {
            "repair_minutes": process.repair_minutes is not None,
            "failure_law": process.clocks,
            "domain_size": process.domains,
            "lemon_fraction": process.lemons,
            "planned_restart_failures": process.scenario.planned_restart_failures is not None,
            "planned_restart_cost": process.scenario.planned_restart_cost is not None,
        }
        named = [name for name, on in given.items() if on]
        if named:
            raise ValueError(f"strategy {self.name!r} is not modelled with {', '.join(named)}")

    def prices_repairs(self, r: int) -> bool:
        # Its own law reads the process whole, so that check_process sees any repairs.
        return True

    def own_law(self, process: Any, r: int, **plan: Any) -> RebalanceCycle:
        # The plan variable reaches the hour-level model here (base_law takes no plan).
        self.check_process(process)
        k = self.check_plan(process.groups, r, plan)["max_down"]
        return RebalanceCycle(process.groups, k)

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        return RebalanceCycle(N, self.check_plan(N, r, {})["max_down"], lifetimes)

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
        **plan: Any,
    ) -> RebalanceRules:
        return RebalanceRules(N, self.check_plan(N, r, plan)["max_down"])

    def check_step_plan(self, scenario: Any, r: int) -> None:
        raise ValueError(
            f"strategy {self.name!r} has no step-level model or rule: plan it on a Scenario"
        )

    def step_cycle(self, scenario: Any, r: int, **plan: Any) -> Any:
        self.check_step_plan(scenario, r)

    def step_rule(self, scenario: Any, r: int, *, rep_recovery: str, **plan: Any) -> Any:
        self.check_step_plan(scenario, r)


REBALANCE = register_strategy(RebalanceStrategy(), replace=True)
