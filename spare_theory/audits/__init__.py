"""Layer 8: the random audit of the closed forms against the event simulation."""

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "FIELDS": "space",
        "AuditResult": "run",
        "AuditSpace": "space",
        "Choice": "space",
        "DrawnScenario": "space",
        "Span": "space",
        "WITHIN_REL": "run",
        "WITHIN_SE": "run",
        "HORIZON": "run",
        "HOPELESS": "run",
        "audit": "run",
        "audit_scenario": "run",
    },
)
