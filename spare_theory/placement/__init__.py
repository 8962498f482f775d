"""Layer 1: Golomb and modular rulers and the stacked placements built on them."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "MAX_PLACEMENT_BYTES": "placements",
        "OPTIMAL_GOLOMB_RULERS": "rulers",
        "PLACEMENTS": "domains",
        "REPLICA_LAYOUTS": "replicas",
        "contiguous_placement": "placements",
        "cyclic_placement": "placements",
        "domain_aware_placement": "domains",
        "domain_pair_counts": "domains",
        "domains_holding_a_unit": "domains",
        "failure_domains": "domains",
        "golomb_ruler": "rulers",
        "group_stacks": "placements",
        "is_modular_ruler": "rulers",
        "max_hosts_per_domain": "domains",
        "min_groups_for_ruler": "rulers",
        "modular_ruler": "rulers",
        "pair_overlap_counts": "placements",
        "placement_hosts": "domains",
        "random_placement": "placements",
        "replica_set_sizes": "replicas",
        "replica_sets": "replicas",
        "validate_hosts": "placements",
    },
)
