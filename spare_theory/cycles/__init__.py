"""Layer 4: restart-cycle laws in dimensionless time, shared by both scenario levels."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CYCLE_LAWS": "laws",
        "CkptOnly": "laws",
        "CycleLaw": "laws",
        "EXPONENTIAL": "laws",
        "ExponentialLifetimes": "laws",
        "MAX_SPARE_GROUPS": "laws",
        "Rep": "laws",
        "Spare": "laws",
        "TabulatedCycle": "laws",
        "cycle_law": "laws",
        "log1mexp": "laws",
        "rep_survival_log": "laws",
        "rep_throughput": "laws",
        "survival_integral": "laws",
    },
)
