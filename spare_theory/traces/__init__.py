"""Layer 7: real failure logs: reading, outages and uptimes, fitted laws, lemons and bursts."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "Bursts": "patterns",
        "FailureLog": "failure_log",
        "Heterogeneity": "patterns",
        "STEPFUN_COLUMNS": "formats",
        "TIME_UNITS": "formats",
        "count_heterogeneity": "patterns",
        "failure_bursts": "patterns",
        "hours_per": "formats",
        "infinitehbd_failure_log": "failure_log",
        "infinitehbd_trace_path": "failure_log",
        "is_stepfun": "formats",
        "load_failure_log": "failure_log",
        "read_log_file": "formats",
        "show": "formats",
        "stepfun_faults": "formats",
        "times_in_hours": "formats",
    },
)
