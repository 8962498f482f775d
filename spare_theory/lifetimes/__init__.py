"""Layer 2: group lifetime laws and repair (outage) laws."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CLOCK_STARTS": "clocks",
        "DEFAULT_WEIBULL_SHAPE": "laws",
        "EquilibriumLifetimes": "laws",
        "LIFETIME_LAWS": "laws",
        "REPAIR_LAWS": "outages",
        "RenewalClocks": "clocks",
        "check_repair_fields": "outages",
        "down_probability": "outages",
        "equilibrium_law": "laws",
        "group_weibull_from_gpu": "laws",
        "lifetime_law": "laws",
        "minimum_law": "laws",
        "repair_shape_sf": "outages",
        "validate_lifetime_law": "laws",
    },
)
