"""draw_failure_log: logs drawn from stated laws give those laws back when fitted.

Each check compares the log's fit with the law it was drawn from, within a
few standard errors of the estimate (Poisson counts for rates, the mean of
exponential repairs, the fit's own confidence interval for a shape).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import spare_theory as st


def _draw(**fields):
    base = dict(
        nodes=300,
        window_hours=5000.0,
        lifetime=stats.expon(scale=800.0),
        repair=stats.expon(scale=20.0),
        seed=3,
    )
    return st.draw_failure_log(**{**base, **fields})


def test_rate_and_repairs_of_exponential_laws():
    log = _draw()
    # The failure rate per up-hour: failures / exposure, Poisson standard error.
    se = log.failure_rate / math.sqrt(log.failures)
    assert abs(log.failure_rate - 1 / 800.0) <= 4 * se
    _, observed = log.repairs()
    assert observed.mean() > 0.99  # only repairs cut by the window's end are censored
    mean = log.fit_repair("exponential").mean_hours
    assert abs(mean - 20.0) <= 4 * 20.0 / math.sqrt(observed.sum())
    assert log.node_count == 300 and log.window_hours == 5000.0


def test_weibull_shape_is_recovered_within_its_confidence_interval():
    log = _draw(lifetime=stats.weibull_min(0.6, scale=600.0), nodes=400)
    fit = log.fit_lifetime("weibull")
    low, high = fit.confidence_intervals["shape"]
    half = (high - low) / 2  # 1.96 standard errors
    assert abs(fit.parameters["shape"] - 0.6) <= 2 * half


def test_lemons_fail_as_much_more_often_as_stated():
    phi, factor = 0.25, 5.0
    log = _draw(lemon_fraction=phi, lemon_rate_factor=factor, nodes=400)
    table = log.node_table()
    # The drawn lemons are the first nodes (labels 0 .. 99); a node that never failed
    # has no label, and is an ordinary one (a lemon fails about 30 times here).
    lemon = pd.to_numeric(table["node"]).fillna(400) < round(phi * 400)
    rates = [
        table.loc[mask, "failures"].sum() / table.loc[mask, "exposure_hours"].sum()
        for mask in (lemon, ~lemon)
    ]
    counts = [table.loc[mask, "failures"].sum() for mask in (lemon, ~lemon)]
    # The log of a ratio of Poisson rates has variance 1/n1 + 1/n2.
    se = math.sqrt(1 / counts[0] + 1 / counts[1])
    assert abs(math.log(rates[0] / rates[1]) - math.log(factor)) <= 4 * se


def test_a_seed_gives_one_log_and_another_seed_another():
    one, again, other = _draw(), _draw(), _draw(seed=4)
    assert one.outages().equals(again.outages())
    assert not one.outages().equals(other.outages())


def test_repairs_still_going_at_the_end_are_censored():
    log = _draw(repair=stats.expon(scale=2000.0), window_hours=3000.0)
    outages = log.outages()
    assert (~outages["repaired"]).any()
    assert np.allclose(outages.loc[~outages["repaired"], "end_hours"], 3000.0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nodes", 0),
        ("window_hours", -1.0),
        ("window_hours", math.nan),
        ("lifetime", "weibull"),
        ("repair", stats.norm(0, 1)),
        ("lemon_fraction", 1.5),
        ("lemon_rate_factor", 0.5),
    ],
)
def test_bad_input_names_the_argument(field, value):
    with pytest.raises(ValueError, match=field):
        _draw(**{field: value})
