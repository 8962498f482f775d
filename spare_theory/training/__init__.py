"""Layer 7: the front doors: time_to_train, optimal_plan, simulate_training."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "DomainPlan": "aliases",
        "best_plan_variable": "optimize",
        "best_trigger": "optimize",
        "check_scenario": "optimize",
        "domain_optimal_plan": "aliases",
        "domain_time_to_train": "aliases",
        "mean_time_to_wipeout": "estimate",
        "optimal_checkpoint_steps": "optimize",
        "optimal_interval": "optimize",
        "optimal_plan": "optimize",
        "refuse_step_plan": "optimize",
        "simulate_hourly": "simulate",
        "simulate_steps": "simulate",
        "simulate_time_to_wipeout": "simulate",
        "simulate_training": "simulate",
        "split_optimal_plan": "aliases",
        "split_time_to_train": "aliases",
        "step_estimate": "optimize",
        "step_time_to_train": "estimate",
        "time_to_train": "estimate",
    },
)
