"""Layer 7: the front doors: time_to_train, optimal_plan, simulate_training."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "best_plan_variable": "optimize",
        "best_steps": "estimate",
        "best_trigger": "optimize",
        "check_scenario": "resolve",
        "estimate_job": "estimate",
        "mean_time_to_wipeout": "estimate",
        "optimal_checkpoint_steps": "estimate",
        "optimal_plan": "optimize",
        "reported_r": "resolve",
        "resolve": "resolve",
        "simulate_hourly": "simulate",
        "simulate_steps_job": "simulate",
        "simulate_time_to_wipeout": "simulate",
        "simulate_training": "simulate",
        "step_estimate": "estimate",
        "time_to_train": "estimate",
    },
)
