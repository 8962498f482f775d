"""Layer 2: the wipe-out law of a placement, its Monte Carlo, its derivations, failure domains."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "DomainWipeoutLaw": "domains",
        "EXACT_MAX_GROUPS": "enumeration",
        "GammaDerivation": "symbolic",
        "RULER_MAX_GROUPS": "enumeration",
        "RStarDerivation": "symbolic",
        "SamplingPlan": "simulation",
        "WipeoutLaw": "law",
        "derive_gamma_form": "symbolic",
        "derive_r_star_constant": "symbolic",
        "domain_wipeout_law": "domains",
        "endurable_failures": "law",
        "endurable_failures_gamma": "expansion",
        "exact_endurable_failures": "enumeration",
        "exact_ruler_survival": "enumeration",
        "exact_wipeout_survival": "enumeration",
        "sampling_plan": "simulation",
        "simulate_wipeout": "simulation",
        "split_tasks": "simulation",
        "wipeout_law": "law",
        "wipeout_survival": "law",
    },
)
