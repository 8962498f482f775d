"""Layer 4: the planning core: one plan type and the searches every front door uses."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "BADPUT_CAUSES": "bill",
        "BUSY_CAUSES": "bill",
        "Bill": "bill",
        "BillSamples": "bill",
        "Bracket": "search",
        "CostModel": "bill",
        "Leg": "search",
        "Plan": "plan",
        "R_STAR_CONSTANT": "redundancy",
        "minimize_integer": "search",
        "minimize_log_interval": "search",
        "r_star_rule": "redundancy",
        "ruler_exists": "redundancy",
        "make_bill": "bill",
        "split_redundancy": "bill",
        "walk_redundancy": "search",
    },
)
