"""Failure domains in an hour-level scenario: moving a share of the failure rate to domains.

The cycle laws under domain failures and lemon groups are in
:mod:`spare_theory.cycles.domains` (``docs/theory.md`` section 5); this module
builds the scenarios a domain study compares: the same total failure rate,
a share of it arriving as whole-domain events.
"""

from __future__ import annotations

from .._validation import as_real
from .scenario import Scenario

__all__ = ["scenario_with_domain_share"]


def scenario_with_domain_share(
    scenario: Scenario, domain_size: int, domain_failure_share: float
) -> Scenario:
    """The scenario with a share ``s`` of every group's failure rate moved to its domain.

    The total failure rate of a group stays ``lambda = M / gpu_mtbf_hours``:
    the independent part becomes ``(1 - s) lambda`` (``gpu_mtbf_hours``
    divided by ``1 - s``) and every domain fails at ``s lambda``.  ``s = 0``
    returns the scenario without domains.

    Parameters
    ----------
    scenario : Scenario
        Base run (no domains yet).
    domain_size : int
        Groups per domain.
    domain_failure_share : float
        ``0 <= s < 1``.

    Returns
    -------
    Scenario

    Examples
    --------
    >>> from spare_theory import Scenario
    >>> sc = Scenario(gpus=2048, gpus_per_group=8, gpu_mtbf_hours=2000.0,
    ...               restart_minutes=20, checkpoint_minutes=5, work_hours=48)
    >>> d = scenario_with_domain_share(sc, 16, 0.25)
    >>> d.gpu_mtbf_hours, d.domain_mtbf_hours
    (2666.6666666666665, 1000.0)
    """
    s = as_real(domain_failure_share, "domain_failure_share", minimum=0.0, maximum=1.0)
    if s >= 1:
        raise ValueError(f"domain_failure_share must be < 1, got {s}")
    fields = {
        name: getattr(scenario, name)
        for name in scenario.__dataclass_fields__
        if name not in ("gpu_mtbf_hours", "domain_size", "domain_mtbf_hours")
    }
    if s == 0:
        return Scenario(gpu_mtbf_hours=scenario.gpu_mtbf_hours, **fields)
    lam = scenario.group_failure_rate_per_hour
    return Scenario(
        gpu_mtbf_hours=scenario.gpu_mtbf_hours / (1 - s),
        domain_size=domain_size,
        domain_mtbf_hours=1.0 / (s * lam),
        **fields,
    )
