"""Layer 7: real failure logs: reading, fitted laws, lemons and bursts, plans and replays."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "Bursts": "patterns",
        "FailureLog": "failure_log",
        "Heterogeneity": "patterns",
        "LOG_LAWS": "plans",
        "LOG_REPAIR_LAWS": "plans",
        "STEPFUN_COLUMNS": "formats",
        "TIME_UNITS": "formats",
        "count_heterogeneity": "patterns",
        "failure_bursts": "patterns",
        "draw_failure_log": "draw",
        "fault_table": "pools",
        "groups_hit": "plans",
        "hours_per": "formats",
        "infinitehbd_failure_log": "failure_log",
        "infinitehbd_trace_path": "failure_log",
        "is_stepfun": "formats",
        "load_failure_log": "failure_log",
        "log_scenario": "plans",
        "log_spares": "pools",
        "log_step_scenario": "plans",
        "mean_repair_hours": "pools",
        "open_log": "inputs",
        "read_log_file": "formats",
        "replay_training": "replay",
        "replayed_shortage": "pools",
        "replayed_spares": "pools",
        "scenario_from_log": "inputs",
        "show": "formats",
        "stepfun_faults": "formats",
        "times_in_hours": "formats",
    },
)
