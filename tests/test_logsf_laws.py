"""The composed group laws given by their logsf (LogsfLaw): cdf, logcdf and ppf from it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from spare_theory.cycles.domains import (
    FromFailure,
    LemonLifetimes,
    PooledLemons,
    ScaledExponential,
)
from spare_theory.lifetimes.laws import EquilibriumLifetimes, LogsfLaw, SuperposedLifetimes

WEIBULL = stats.weibull_min(0.78, scale=3.0)
LAWS = [
    LemonLifetimes(0.1, 10.0),
    LemonLifetimes(0.2, 3.0, EquilibriumLifetimes(WEIBULL)),
    PooledLemons(0.1, 10.0),
    PooledLemons(0.1, 4.0, EquilibriumLifetimes(WEIBULL)),
    ScaledExponential(0.5),
    ScaledExponential(0.5, LemonLifetimes(0.1, 4.0)),
    FromFailure(EquilibriumLifetimes(WEIBULL), 16),
    SuperposedLifetimes(stats.weibull_min(0.5, scale=1.0), 16),
]


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_ppf_inverts_cdf_and_ends_at_infinity(law):
    assert isinstance(law, LogsfLaw)
    u = np.array([1e-6, 0.01, 0.3, 2.0, 5.0])
    p = law.cdf(u)
    assert np.allclose(law.ppf(p), u, rtol=1e-9, atol=0)
    assert law.ppf(np.array([0.0, 1.0])).tolist() == [0.0, np.inf]
    assert np.allclose(law.logcdf(u), np.log(p))


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_cdf_is_one_minus_the_survival_the_law_states(law):
    # The mean from the survival (int S du) against the mean of ppf at uniform quantiles.
    mean_from_survival = integrate.quad(lambda v: float(np.exp(law.logsf(v))), 0, np.inf)[0]
    q = (np.arange(200_000) + 0.5) / 200_000
    assert np.mean(law.ppf(q)) == pytest.approx(mean_from_survival, rel=2e-3)
