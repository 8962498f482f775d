"""Standby groups: a strategy written from scratch (the example of docs/architecture.md).

``r - 1`` of the ``N`` groups stand by idle and a failed group is replaced
by a standby at once; the ``r``-th group down in a cycle is a global restart
(``r = 1`` is CKPT-only).  The other ``N - r + 1`` groups compute the whole
global batch, so every step costs ``N / (N - r + 1)`` failure-free steps.

Modelled at the hour level, without repairs: the cycle survives ``u`` (in
mean group lifetimes) while fewer than ``r`` groups have failed,
``Q(u) = P(Binom(N, p(u)) <= r - 1)``.  The step level is refused.

``import standby`` registers it; then ``time_to_train(scenario, "standby",
r=2)``, ``optimal_plan(scenario, "standby")``, ``simulate_training(...)`` and
``spare-theory optimize --strategy standby`` (in the same process) take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from spare_theory import Strategy, register_strategy
from spare_theory.cycles.base import EXPONENTIAL, CycleLaw


class StandbyCycle(CycleLaw):
    """The restart cycle: ``log Q(u) = log P(Binom(N, p(u)) <= r - 1)``, ``theta = (N-r+1)/N``."""

    name = "standby"

    def logq(self, u: Any) -> np.ndarray:
        p = self.lifetimes.cdf(np.asarray(u, dtype=float))
        return np.asarray(stats.binom.logcdf(self.r - 1, self.N, p))

    def theta(self, u: Any) -> np.ndarray:
        return np.full(np.shape(u), (self.N - self.r + 1) / self.N)


class _StandbyRule:
    """One cycle of the event simulation: count the groups down, restart at the r-th."""

    needs_group, cost_grows, repairable, reconfigures = False, False, True, False

    def __init__(self, N: int, r: int) -> None:
        self.r, self.down = r, 0
        self.throughput = (N - r + 1) / N

    def fail(self, group: int) -> bool:
        self.down += 1
        return self.down >= self.r

    def rejoin(self, group: int) -> None:
        self.down -= 1


@dataclass(frozen=True)
class StandbyRules:
    """The picklable factory: a fresh rule at each cycle's start."""

    N: int
    r: int

    def __call__(self, rng: np.random.Generator) -> _StandbyRule:
        return _StandbyRule(self.N, self.r)


class StandbyStrategy(Strategy):
    """Standby groups (``"standby"``): ``r - 1`` idle standbys, a restart at ``r`` groups down."""

    name = "standby"
    label = "Standby groups"

    def base_law(self, N: int, r: int, lifetimes: Any = EXPONENTIAL) -> CycleLaw:
        return StandbyCycle(N, r, lifetimes)

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
    ) -> StandbyRules:
        # Standby groups are interchangeable: the placement does not matter.
        return StandbyRules(N, r)

    def check_step_plan(self, scenario: Any, r: int) -> None:
        raise ValueError(
            f"strategy {self.name!r} has no step-level model or rule: plan it on a Scenario"
        )

    def step_cycle(self, scenario: Any, r: int, **plan: Any) -> Any:
        self.check_step_plan(scenario, r)

    def step_rule(self, scenario: Any, r: int, *, rep_recovery: str, **plan: Any) -> Any:
        self.check_step_plan(scenario, r)


STANDBY = register_strategy(StandbyStrategy(), replace=True)
