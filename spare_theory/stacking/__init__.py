"""Layer 3: exact S* and micro-batch loads, the reordering controller, average overhead."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "DomainOverheadSamples": "domains_sim",
        "DomainWipeoutSamples": "domains_sim",
        "MicrobatchPlan": "reordering",
        "OverheadSamples": "overhead",
        "ReorderPlan": "reordering",
        "ReorderingController": "reordering",
        "StackReorderer": "reordering",
        "WipedOut": "stacks",
        "cycle_trajectory": "domains_sim",
        "expected_load": "load",
        "expected_stacks": "overhead",
        "failure_times": "domains_sim",
        "lemon_count": "domains_sim",
        "lemon_rates": "domains_sim",
        "load_lower_bound": "stacks",
        "min_load": "stacks",
        "min_stacks": "stacks",
        "overhead": "overhead",
        "overhead_from_survival": "overhead",
        "reorder": "reordering",
        "simulate_domain_overhead": "domains_sim",
        "simulate_domain_wipeout": "domains_sim",
        "simulate_overhead": "overhead",
        "stacks_lower_bound": "stacks",
        "stacks_trajectory": "overhead",
        "validate_failed": "stacks",
    },
)
