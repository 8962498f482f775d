"""Layer 2: group lifetime laws, repair (outage) laws, fits to censored durations, spare pools."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CLOCK_STARTS": "clocks",
        "DEFAULT_WEIBULL_SHAPE": "laws",
        "EXPONENTIAL": "laws",
        "EquilibriumLifetimes": "laws",
        "ExponentialLifetimes": "laws",
        "LIFETIME_FIT_LAWS": "fitting",
        "LIFETIME_LAWS": "laws",
        "LifetimeFit": "fitting",
        "REPAIR_LAWS": "outages",
        "RenewalClocks": "clocks",
        "SparePoolSamples": "spares_sim",
        "SuperposedLifetimes": "laws",
        "check_pool_fields": "spares",
        "check_repair_fields": "outages",
        "down_probability": "outages",
        "equilibrium_law": "laws",
        "fit_lifetime_law": "fitting",
        "group_down_hours": "spares",
        "group_weibull_from_gpu": "laws",
        "group_whole_probability": "spares",
        "kaplan_meier": "fitting",
        "lifetime_law": "laws",
        "minimum_law": "laws",
        "nodes_in_repair_law": "spares",
        "repair_shape_sf": "outages",
        "shortage_probability": "spares",
        "simulate_spare_pool": "spares_sim",
        "spare_wait_hours": "spares",
        "spares_for_shortage": "spares",
        "validate_lifetime_law": "laws",
    },
)
