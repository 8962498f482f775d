"""Layer 5: the published simulator's step-level scenario, its closed form and its simulation."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "REP_RECOVERIES": "simulation",
        "RESTART_SEMANTICS": "scenario",
        "STEP_MODEL_STRATEGIES": "model",
        "STEP_REPAIR_LAWS": "scenario",
        "STEP_STRATEGIES": "simulation",
        "StepEstimate": "model",
        "StepScenario": "scenario",
        "StepSimulation": "simulation",
        "check_step_repairs": "scenario",
        "expected_max_normal": "model",
        "expected_restart_seconds": "model",
        "expected_step_seconds": "model",
        "merge_microbatches": "scenario",
        "paper_scenario": "scenario",
        "simulate_steps": "simulation",
        "step_time_to_train": "model",
    },
)
