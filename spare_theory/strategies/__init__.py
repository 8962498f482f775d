"""Layer 6: fault-tolerance strategies as objects, in a registry."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "CkptStrategy": "ckpt",
        "ElasticStrategy": "elastic",
        "HotSparesStrategy": "elastic",
        "PATIENCE": "base",
        "PUBLISHED_STRATEGIES": "registry",
        "RepStrategy": "rep",
        "SpareStrategy": "spare",
        "check_strategy": "registry",
        "Strategy": "base",
        "register_strategy": "registry",
        "registered_strategies": "registry",
        "strategy": "registry",
    },
)
