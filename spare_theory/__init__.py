"""spare-theory: model, optimise and simulate SPARe fault tolerance.

SPARe (Stacked Parallelism with Adaptive Reordering) keeps LLM pre-training
running through group failures by stacking ``r`` shards of the global batch on
every data-parallel group along a cyclic Golomb ruler.  This package computes
how many failures a placement endures, what the stacks cost, how long a run
takes and which redundancy and checkpoint interval to choose, for SPARe and
the alternatives (checkpoint-only, replication, elastic data parallelism, hot
spares).

The public API is flat, in the style of ``scipy.stats``: every name of
``_API`` below is importable from ``spare_theory`` and is loaded from its
module on first use.  The modules live in layer subpackages, lowest first (a
lower layer never imports a higher one; docs/architecture.md):

0. ``_validation``, ``_parallel``, ``_numerics``, ``_jit``, ``_lazy``, ``_caching``,
   ``_samples``                           shared helpers
1. ``placement``                          rulers and placements
2. ``wipeout``, ``lifetimes``             wipe-out laws, failure laws, fits, spare pools
3. ``stacking``                           exact ``S*``, the reordering controller, overhead
4. ``cycles``, ``planning``               restart-cycle laws, plans and their searches
5. ``hourly``, ``steps``                  hour-level and step-level models and simulations
6. ``strategies``                         one class per strategy, and their registry
7. ``training``, ``traces``               the front doors; real failure logs and replays
8. ``sweeps``, ``audits``, ``reports``    sweeps, the random audit, error tables, figures
9. ``cli``                                the ``spare-theory`` command
"""

from __future__ import annotations

from ._lazy import attach

__version__ = "0.1.0"

# Public name -> module that defines it.
_API = {
    # placement
    "golomb_ruler": "placement.rulers",
    "modular_ruler": "placement.rulers",
    "cyclic_placement": "placement.placements",
    "contiguous_placement": "placement.placements",
    "random_placement": "placement.placements",
    "validate_hosts": "placement.placements",
    "min_groups_for_ruler": "placement.rulers",
    # wipe-out
    "endurable_failures_gamma": "wipeout.expansion",
    "endurable_failures": "wipeout.law",
    "wipeout_survival": "wipeout.law",
    "exact_endurable_failures": "wipeout.enumeration",
    "exact_wipeout_survival": "wipeout.enumeration",
    "simulate_wipeout": "wipeout.simulation",
    "wipeout_law": "wipeout.law",
    # failure domains and lemons
    "domain_aware_placement": "placement.domains",
    "domain_wipeout_law": "wipeout.domains",
    "failure_domains": "placement.domains",
    "simulate_domain_wipeout": "stacking.domains_sim",
    "simulate_domain_overhead": "stacking.domains_sim",
    "WipeoutLaw": "wipeout.law",
    # overhead and reordering
    "WipedOut": "stacking.stacks",
    "min_stacks": "stacking.stacks",
    "stacks_lower_bound": "stacking.stacks",
    "min_load": "stacking.stacks",
    "MicrobatchPlan": "stacking.reordering",
    "ReorderPlan": "stacking.reordering",
    "reorder": "stacking.reordering",
    "ReorderingController": "stacking.reordering",
    "simulate_overhead": "stacking.overhead",
    "OverheadSamples": "stacking.overhead",
    "overhead": "stacking.overhead",
    "expected_stacks": "stacking.overhead",
    "expected_load": "stacking.load",
    # time to train
    "Scenario": "hourly.scenario",
    "time_to_train": "training.estimate",
    "TrainingEstimate": "hourly.renewal",
    "optimal_plan": "training.optimize",
    "NoClosedFormError": "_validation",
    "Plan": "planning.plan",
    "CostModel": "planning.bill",
    "Job": "jobs.job",
    "Bill": "planning.bill",
    "BillSamples": "planning.bill",
    "clear_caches": "_caching",
    "r_star_rule": "planning.redundancy",
    "simulate_training": "training.simulate",
    "simulate_domain_training": "hourly.domains_sim",
    "mean_time_to_wipeout": "training.estimate",
    "simulate_time_to_wipeout": "training.simulate",
    "lifetime_law": "lifetimes.laws",
    "FailureClass": "lifetimes.classes",
    "failure_class_preset": "lifetimes.classes",
    "group_weibull_from_gpu": "lifetimes.laws",
    "StepScenario": "steps.scenario",
    "paper_scenario": "steps.scenario",
    "StepSimulation": "steps.trials",
    "StepEstimate": "steps.estimate",
    "expected_restart_seconds": "steps.restarts",
    "expected_step_seconds": "steps.extremes",
    "optimal_checkpoint_steps": "training.estimate",
    # strategies
    "Strategy": "strategies.base",
    "strategy": "strategies.registry",
    "register_strategy": "strategies.registry",
    "check_strategy": "strategies.registry",
    "registered_strategies": "strategies.registry",
    # fits to censored durations and spare-node pools
    "LifetimeFit": "lifetimes.fitting",
    "fit_lifetime_law": "lifetimes.fitting",
    "kaplan_meier": "lifetimes.fitting",
    "nodes_in_repair_law": "lifetimes.spares",
    "shortage_probability": "lifetimes.spares",
    "spares_for_shortage": "lifetimes.spares",
    "spare_wait_hours": "lifetimes.spares",
    "group_down_hours": "lifetimes.spares",
    "group_whole_probability": "lifetimes.spares",
    "simulate_spare_pool": "lifetimes.spares_sim",
    "SparePoolSamples": "lifetimes.spares_sim",
    # real failure logs
    "FailureLog": "traces.failure_log",
    "load_failure_log": "traces.failure_log",
    "draw_failure_log": "traces.draw",
    "infinitehbd_failure_log": "traces.failure_log",
    "replay_training": "traces.replay",
    "Heterogeneity": "traces.patterns",
    "Bursts": "traces.patterns",
    # sweeps
    "sweep": "sweeps",
    # the random audit of the closed forms
    "audit": "audits.run",
    "AuditSpace": "audits.space",
    "AuditResult": "audits.run",
    # what each resilience feature is worth
    "what_if": "reports.what_if",
    "sensitivity": "reports.what_if",
}

__getattr__, __dir__, _names = attach(__name__, _API)
__all__ = [*_names, "__version__"]
