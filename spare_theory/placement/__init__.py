"""Layer 1: Golomb and modular rulers and the stacked placements built on them."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "MAX_PLACEMENT_BYTES": "placements",
        "OPTIMAL_GOLOMB_RULERS": "rulers",
        "contiguous_placement": "placements",
        "cyclic_placement": "placements",
        "golomb_ruler": "rulers",
        "group_stacks": "placements",
        "is_golomb_ruler": "rulers",
        "is_modular_ruler": "rulers",
        "min_groups_for_ruler": "rulers",
        "modular_ruler": "rulers",
        "pair_overlap_counts": "placements",
        "random_placement": "placements",
        "validate_hosts": "placements",
    },
)
