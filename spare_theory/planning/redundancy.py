"""Which redundancies to try: the published rule ``r*`` and whether a ruler exists.

The planner walks ``r`` from a start (:func:`r_star_rule` for SPARe) over the
``r`` that are plans of the strategy (:func:`ruler_exists` for SPARe, whose
placement needs a modular Golomb ruler with ``r`` marks at ``N``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_count_array
from ..placement.rulers import modular_ruler

__all__ = ["R_STAR_CONSTANT", "r_star_rule", "ruler_exists"]

# Published constant of the rule r* = floor(log2 N + 0.833); its derivation
# (close to Euler's gamma / ln 2 = 0.8327) is symbolic.derive_r_star_constant.
R_STAR_CONSTANT = 0.833


def ruler_exists(N: int, r: int) -> bool:
    """Whether a modular Golomb ruler with ``r`` marks exists at ``N`` (SPARe can use ``r``).

    Examples
    --------
    >>> ruler_exists(13, 4), ruler_exists(12, 4)
    (True, False)
    """
    try:
        modular_ruler(N, r)
    except ValueError:
        return False
    return True


def r_star_rule(N: ArrayLike) -> int | np.ndarray:
    """The published rule ``r* = floor(log2 N + 0.833)``.

    The constant is about ``gamma / ln 2 = 0.8327`` (Euler's gamma): the
    ``r`` at which the expected wipe-out comes when about half of the groups
    have failed, the point where two stack layers stop being enough; see
    :func:`spare_theory.wipeout.symbolic.derive_r_star_constant` for the sympy
    derivation.

    Where the rule holds, measured against :func:`spare_theory.optimal_plan` (SPARe, the
    interval optimised at both ``r``; 8 GPUs per group, 720 h of work):

    - cluster MTBF 5 to 30 min, restart 20 to 60 min, checkpoints 2 to 5
      min, ``N = 256`` to ``65,536``: the rule overshoots the optimal ``r``
      by 0 to 3 and costs 0 to 1.2 % more time (1.0 to 1.2 % around
      ``N = 12,500``, e.g. ``r = 14`` against the optimal 11 or 12);
    - the SPARe paper's scenario (cluster MTBF 5 min, 60 min restart, 5 min
      checkpoints): under 0.7 % for ``N >= 256`` (``tables/r_star.md``);
    - rare failures (cluster MTBF 120 min with a 20 min restart): the
      optimum is ``r = 1`` (plain checkpointing) and the rule costs 26 to
      44 %.  It assumes failures frequent enough for redundancy to pay;
      call :func:`spare_theory.optimal_plan` outside the first case.

    Parameters
    ----------
    N : int or array_like of int
        Number of groups, ``N >= 1``.

    Returns
    -------
    int or numpy.ndarray of int
        ``floor(log2 N + 0.833)``, at least 1.

    Examples
    --------
    >>> r_star_rule(146), r_star_rule([64, 1_000_000]).tolist()
    (8, [6, 20])
    """
    N = as_count_array(N, "N", minimum=1)
    out = np.maximum(np.floor(np.log2(N) + R_STAR_CONSTANT), 1).astype(np.int64)
    return int(out) if out.ndim == 0 else out
