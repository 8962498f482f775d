"""spare-theory: model, optimise and simulate SPARe fault tolerance.

SPARe (Stacked Parallelism with Adaptive Reordering) keeps LLM pre-training
running through group failures by stacking ``r`` shards of the global batch on
every data-parallel group along a cyclic Golomb ruler.  This package computes
how many failures a placement endures, what the stacks cost, how long a run
takes and which redundancy and checkpoint interval to choose.

The public API is flat, in the style of ``scipy.stats``: every name below is
importable from ``spare_theory`` and lives in one plain module, loaded on first
use.  Layers, lowest first (a lower layer never imports a higher one):

1. ``placement``                     rulers and placements
2. ``wipeout``, ``wipeout_sim``, ``symbolic``
                                     failure process, wipe-out, endurable failures
3. ``stacks``, ``reordering``, ``average_overhead``
                                     exact ``S*``, the reordering controller, average overhead
4. ``scenario``, ``strategies``, ``renewal``, ``optimize``, ``training``, ``training_sim``
                                     time to train and the optimiser
5. ``sweeps``, ``reports.*``          sweeps, error tables, figures
6. ``cli``, notebooks
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Public name -> module that defines it.
_API = {
    # placement
    "golomb_ruler": "placement",
    "modular_ruler": "placement",
    "cyclic_placement": "placement",
    "contiguous_placement": "placement",
    "random_placement": "placement",
    "validate_hosts": "placement",
    "min_groups_for_ruler": "placement",
    # wipe-out
    "endurable_failures_gamma": "wipeout",
    "endurable_failures": "wipeout",
    "wipeout_survival": "wipeout",
    "exact_endurable_failures": "wipeout",
    "exact_wipeout_survival": "wipeout",
    "simulate_wipeout": "wipeout_sim",
    "wipeout_law": "wipeout",
    # failure domains and lemons
    "domain_aware_placement": "domains",
    "domain_wipeout_law": "domains",
    "failure_domains": "domains",
    "simulate_domain_wipeout": "domains_sim",
    "simulate_domain_overhead": "domains_sim",
    "WipeoutLaw": "wipeout",
    # overhead and reordering
    "WipedOut": "stacks",
    "min_stacks": "stacks",
    "stacks_lower_bound": "stacks",
    "min_load": "stacks",
    "MicrobatchPlan": "reordering",
    "ReorderPlan": "reordering",
    "reorder": "reordering",
    "ReorderingController": "reordering",
    "simulate_overhead": "average_overhead",
    "OverheadSamples": "average_overhead",
    "overhead": "average_overhead",
    "expected_stacks": "average_overhead",
    "expected_load": "average_overhead",
    # time to train
    "Scenario": "scenario",
    "time_to_train": "training",
    "TrainingEstimate": "renewal",
    "optimal_plan": "optimize",
    "Plan": "optimize",
    "clear_caches": "optimize",
    "r_star_rule": "optimize",
    "simulate_training": "training_sim",
    "domain_time_to_train": "domains_training",
    "simulate_domain_training": "domains_training_sim",
    "mean_time_to_wipeout": "repairs",
    "simulate_time_to_wipeout": "repairs_sim",
    "lifetime_law": "failure_laws",
    "group_weibull_from_gpu": "failure_laws",
    "StepScenario": "step_scenario",
    "paper_scenario": "step_scenario",
    "simulate_steps": "step_sim",
    "StepSimulation": "step_sim",
    "step_time_to_train": "step_model",
    "StepEstimate": "step_model",
    "expected_restart_seconds": "step_model",
    "expected_step_seconds": "step_model",
    "optimal_checkpoint_steps": "step_optimize",
    # sweeps
    "sweep": "sweeps",
}

__all__ = [*sorted(_API), "__version__"]


def __getattr__(name):
    try:
        module = _API[name]
    except KeyError:
        raise AttributeError(f"module 'spare_theory' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
