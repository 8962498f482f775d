"""Layer 6: fault-tolerance strategies as objects, in a registry."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CkptStrategy": "ckpt",
        "ElasticStrategy": "elastic",
        "FailureRule": "protocols",
        "FailureRuleFactory": "protocols",
        "HourlyCycleLaw": "protocols",
        "HotSparesStrategy": "elastic",
        "PARTS": "parts",
        "PATIENCE": "base",
        "PUBLISHED_STRATEGIES": "registry",
        "RepStrategy": "rep",
        "SpareStrategy": "spare",
        "StepCycleTable": "protocols",
        "StepTrialRule": "protocols",
        "Strategy": "base",
        "TrajectoryPool": "protocols",
        "check_strategy": "registry",
        "register_strategy": "registry",
        "registered_strategies": "registry",
        "strategy": "registry",
    },
)
