"""Layer 7: the front doors: time_to_train, optimal_plan, simulate_training."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "MAX_SPARE_GROUPS": "estimate",
        "Plan": "optimize",
        "R_STAR_CONSTANT": "optimize",
        "STRATEGIES": "estimate",
        "TrainingEstimate": "estimate",
        "best_trigger": "optimize",
        "clear_caches": "optimize",
        "optimal_checkpoint_steps": "step_optimize",
        "optimal_interval": "optimize",
        "optimal_plan": "optimize",
        "optimal_step_plan": "step_optimize",
        "r_star_rule": "optimize",
        "rep_survival_log": "estimate",
        "rep_throughput": "estimate",
        "ruler_exists": "optimize",
        "time_to_train": "estimate",
    },
)
