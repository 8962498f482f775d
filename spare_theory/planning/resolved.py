"""A front door's inputs checked once: the plan that every layer below it trusts.

Each front door (:func:`spare_theory.time_to_train`,
:func:`spare_theory.optimal_plan`, :func:`spare_theory.simulate_training`,
:func:`spare_theory.replay_training`) validates the scenario, looks the
strategy up, checks ``r``, the plan variables and the checkpoint interval
once, and passes one :class:`Resolved` down; the models and simulations
below do not check them again.  It lives in this low layer so that the
hour-level and step-level modules (layer 5) can take it; what they ask of
its strategy is :class:`ModelStrategy`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ModelStrategy", "Resolved"]


class ModelStrategy(Protocol):
    """What the hour-level model asks of a strategy (:class:`~spare_theory.strategies.base.Strategy`
    has it): whether its law waits for failed groups, its law on a priced process
    (the one way, ``cycle_law``), and the parts that law is built from (its own law on
    the process, or its bare laws for the mechanisms to extend)."""

    @property
    def name(self) -> str: ...

    def check_microbatches(self, microbatches: int) -> int: ...

    def cycle_law(self, N: int, r: int, process: Any = ..., **plan: Any) -> Any: ...

    def prices_repairs(self, r: int) -> bool: ...

    def own_law(self, process: Any, r: int, **plan: Any) -> Any: ...

    def wipeout_units(
        self, N: int, r: int, *, placement: str = ..., domain_size: int | None = ...
    ) -> Any: ...

    def burst_wipeouts(
        self, N: int, r: int, *, domain_size: int, placement: str = ..., **plan: Any
    ) -> Any: ...

    def base_law(self, N: int, r: int, lifetimes: Any = ...) -> Any: ...

    def split_law(self, N: int, r: int, microbatches: int, lifetimes: Any = ...) -> Any: ...

    def correlated_law(
        self,
        N: int,
        r: int,
        *,
        domain_size: int | None,
        domain_rate_ratio: float,
        lifetimes: Any,
        placement: str = ...,
    ) -> Any: ...


@dataclass(frozen=True)
class Resolved:
    """A checked plan of one strategy on one scenario.

    Attributes
    ----------
    scenario : Scenario or StepScenario
        The run, the front door's ``microbatches`` and a plan's
        planned-restart fields folded into its fields.
    strategy : Strategy
        The strategy object (looked up once).
    r : int or None
        The strategy's ``r`` as its methods take it (1 for CKPT-only, 0 for
        elastic DP, whose plans report ``r = None``); ``None`` only before
        the planner's walk over ``r`` (:func:`spare_theory.optimal_plan`).
    plan : tuple of (str, int) pairs
        The strategy's plan variables, checked, defaults filled in
        (:meth:`Strategy.check_plan
        <spare_theory.strategies.base.Strategy.check_plan>`).
    checkpoint_interval_minutes : float or None
        Compute minutes between checkpoints (``None``: the best one).
    checkpoint_every_steps : int or None
        Steps between checkpoints of a step-level plan (``None``: the best one).

    Examples
    --------
    >>> resolved = Resolved(scenario=None, strategy=None, r=0, plan=(("min_groups", 32),))
    >>> resolved.variables, resolved.with_plan(r=1, min_groups=40).variables, resolved.chosen_r
    ({'min_groups': 32}, {'min_groups': 40}, 0)
    """

    scenario: Any
    strategy: Any
    r: int | None
    plan: tuple[tuple[str, Any], ...] = ()
    checkpoint_interval_minutes: float | None = None
    checkpoint_every_steps: int | None = None

    @property
    def chosen_r(self) -> int:
        """:attr:`r` once chosen: what every estimate and simulation takes.

        Raises
        ------
        ValueError
            Before the planner's walk has chosen it.
        """
        if self.r is None:
            raise ValueError("r is not chosen yet (optimal_plan walks it)")
        return self.r

    @property
    def variables(self) -> dict[str, Any]:
        """The plan variables as keywords of the strategy's methods."""
        return dict(self.plan)

    def with_plan(self, *, r: int, **plan: Any) -> Resolved:
        """The same plan at another ``r`` and plan variables (already checked by the caller)."""
        return dataclasses.replace(self, r=r, plan=tuple(plan.items()))
