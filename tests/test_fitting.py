"""Censored maximum-likelihood fits: equal to scipy's, honest intervals, a calibrated GOF check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from spare_theory.lifetimes.fitting import LIFETIME_FIT_LAWS, fit_lifetime_law, kaplan_meier

FAMILIES = {"weibull": stats.weibull_min, "gamma": stats.gamma, "lognormal": stats.lognorm}


def _tight(func, x0, args=(), disp=0):
    """scipy's own default optimiser (Nelder-Mead), run to convergence."""
    return optimize.fmin(
        func, x0, args, xtol=1e-10, ftol=1e-10, maxiter=20_000, maxfun=40_000, disp=0
    )


def _censored_sample(seed: int, n: int, law=None):
    rng = np.random.default_rng(seed)
    law = law or stats.weibull_min(0.6, scale=50.0)
    lifetimes = law.rvs(n, random_state=rng)
    limits = rng.uniform(0.0, 150.0, n)
    return np.minimum(lifetimes, limits), lifetimes <= limits, limits


@pytest.mark.parametrize("law", sorted(FAMILIES))
def test_fits_equal_scipys_censored_mle(law):
    x, seen, _ = _censored_sample(3, 800)
    fit = fit_lifetime_law(x, seen, law=law)
    data = stats.CensoredData(uncensored=x[seen], right=x[~seen])
    shape, _, scale = FAMILIES[law].fit(data, floc=0, optimizer=_tight)
    ours = np.array(list(fit.parameters.values()))
    np.testing.assert_allclose(ours, [shape, scale], rtol=1e-6)
    assert fit.events == seen.sum() and fit.censored == (~seen).sum()
    # The reported log-likelihood is scipy's at the fitted law.
    frozen = FAMILIES[law](shape, scale=scale)
    expected = frozen.logpdf(x[seen]).sum() + frozen.logsf(x[~seen]).sum()
    assert fit.log_likelihood == pytest.approx(expected, rel=1e-9)
    assert fit.aic == pytest.approx(4 - 2 * fit.log_likelihood)


@pytest.mark.slow
def test_large_samples_start_from_a_thinned_fit_and_still_agree():
    # Above 20,000 durations the optimiser starts from every n // 20000-th sorted one.
    x, seen, _ = _censored_sample(4, 45_000)
    fit = fit_lifetime_law(x, seen, law="weibull")
    data = stats.CensoredData(uncensored=x[seen], right=x[~seen])
    shape, _, scale = stats.weibull_min.fit(data, floc=0, optimizer=_tight)
    np.testing.assert_allclose(list(fit.parameters.values()), [shape, scale], rtol=1e-6)


def test_exponential_rate_is_events_over_exposure_exactly():
    x, seen, _ = _censored_sample(5, 500)
    fit = fit_lifetime_law(x, seen, law="exponential")
    assert fit.parameters["rate_per_hour"] == seen.sum() / x.sum()
    assert fit.exposure_hours == x.sum()
    scipy_scale = stats.expon.fit(
        stats.CensoredData(uncensored=x[seen], right=x[~seen]), floc=0, optimizer=_tight
    )[1]
    assert 1 / fit.parameters["rate_per_hour"] == pytest.approx(scipy_scale, rel=1e-6)


def test_zero_durations_are_left_censored_at_the_resolution():
    x, seen, _ = _censored_sample(6, 600)
    x = np.where(np.arange(x.size) < 20, 0.0, x)
    seen = seen | (x == 0)
    step = x[x > 0].min() / 2  # below every positive duration
    fit = fit_lifetime_law(x, seen, law="lognormal", resolution=step)
    data = stats.CensoredData(uncensored=x[seen & (x > 0)], left=np.full(20, step), right=x[~seen])
    shape, _, scale = stats.lognorm.fit(data, floc=0, optimizer=_tight)
    np.testing.assert_allclose(list(fit.parameters.values()), [shape, scale], rtol=1e-6)
    # Kaplan-Meier puts them at the resolution: exact from there on.
    km = kaplan_meier(x, seen, resolution=step).sf
    assert km.evaluate(step / 2) == 1.0
    assert km.evaluate(step) == pytest.approx(1 - 20 / x.size)


def test_nothing_failed_gives_the_rate_bound_and_no_nan():
    fit = fit_lifetime_law([100.0, 250.0, 50.0], [False, False, False], law="weibull")
    assert not fit.failed and fit.distribution is None and fit.parameters == {}
    assert fit.rate_upper_bound_per_hour == pytest.approx(-math.log(0.05) / 400.0)
    assert "nothing failed" in fit.note and "nothing failed" in fit.summary()
    assert fit.mean_hours == math.inf
    for value in vars(fit).values():
        assert not (isinstance(value, float) and math.isnan(value))


def test_best_picks_the_smallest_aic_and_says_how():
    x, seen, _ = _censored_sample(7, 3000, law=stats.lognorm(1.2, scale=30.0))
    fit = fit_lifetime_law(x, seen, law="best")
    assert set(fit.aic_table) == set(LIFETIME_FIT_LAWS)
    assert fit.law == "lognormal" == min(fit.aic_table, key=fit.aic_table.get)
    for law, aic in fit.aic_table.items():
        assert aic == pytest.approx(fit_lifetime_law(x, seen, law=law).aic)
    assert "by AIC" in fit.note and "AIC of each law" in fit.summary()


def test_best_with_one_event_is_the_exponential():
    fit = fit_lifetime_law([3.0, 10.0, 10.0], [True, False, False], law="best")
    assert fit.law == "exponential" and list(fit.aic_table) == ["exponential"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("law", "names", "truth"),
    [
        ("weibull", ("shape", "scale_hours"), (0.6, 0.0, 50.0)),
        ("lognormal", ("sigma", "scale_hours"), (1.5, 0.0, 40.0)),
    ],
)
def test_wald_intervals_cover_about_95_percent(law, names, truth):
    # Censored samples of 150 (about 35 % censored).  The coverage of R intervals
    # has SE sqrt(0.95 * 0.05 / R); within k = 3 SE of 0.95.
    replications = 300
    se = math.sqrt(0.95 * 0.05 / replications)
    frozen = FAMILIES[law](truth[0], loc=truth[1], scale=truth[2])
    hits = np.zeros(2)
    for i in range(replications):
        x, seen, _ = _censored_sample(100 + i, 150, law=frozen)
        fit = fit_lifetime_law(x, seen, law=law)
        for j, (name, value) in enumerate(zip(names, (truth[0], truth[2]))):
            low, high = fit.confidence_intervals[name]
            hits[j] += low <= value <= high
    assert np.all(np.abs(hits / replications - 0.95) <= 3 * se), hits / replications


@pytest.mark.slow
def test_exact_rate_interval_covers_at_least_95_percent():
    # Garwood's interval is conservative: coverage >= 0.95 - 3 SE.
    replications = 1000
    se = math.sqrt(0.95 * 0.05 / replications)
    hits = 0
    for i in range(replications):
        x, seen, _ = _censored_sample(5000 + i, 30, law=stats.expon(scale=60.0))
        low, high = fit_lifetime_law(x, seen, law="exponential").confidence_intervals[
            "rate_per_hour"
        ]
        hits += low <= 1 / 60.0 <= high
    assert hits / replications >= 0.95 - 3 * se


@pytest.mark.slow
@pytest.mark.parametrize("censoring", ["given", "reverse Kaplan-Meier"])
def test_bootstrap_p_value_is_calibrated_under_the_null(censoring):
    # Exponential data fitted by the exponential law (closed-form refits keep it fast):
    # P(p <= 0.1) is 6/60 = 0.1 exactly for B = 59 if the bootstrap is right.  The
    # rejection share of R data sets has SE sqrt(0.1 * 0.9 / R); within k = 3 SE.
    replications, bootstraps = 150, 59
    rejected = 0
    for i in range(replications):
        x, seen, limits = _censored_sample(9000 + i, 80, law=stats.expon(scale=60.0))
        fit = fit_lifetime_law(
            x,
            seen,
            law="exponential",
            censor_at=limits if censoring == "given" else None,
            bootstraps=bootstraps,
            seed=i,
        )
        rejected += fit.gof_p_value <= 0.1
    se = math.sqrt(0.1 * 0.9 / replications)
    assert abs(rejected / replications - 0.1) <= 3 * se, rejected / replications


@pytest.mark.slow
def test_gof_rejects_a_wrong_law():
    x, seen, limits = _censored_sample(11, 600, law=stats.weibull_min(0.5, scale=50.0))
    fit = fit_lifetime_law(x, seen, law="exponential", censor_at=limits, bootstraps=99, seed=1)
    assert fit.gof_p_value == pytest.approx(0.01)  # no bootstrap sample is as far off
    good = fit_lifetime_law(x, seen, law="weibull", censor_at=limits, bootstraps=19, seed=1)
    assert good.gof_p_value > 0.05


def test_gof_statistic_is_the_sup_distance_to_kaplan_meier():
    x, seen, _ = _censored_sample(12, 400)
    fit = fit_lifetime_law(x, seen, law="weibull")
    km = stats.ecdf(stats.CensoredData(uncensored=x[seen], right=x[~seen])).sf
    grid = np.sort(np.concatenate([x, x - 1e-9]))
    grid = grid[(grid > 0) & (grid <= x.max())]
    brute = np.abs(km.evaluate(grid) - fit.distribution.sf(grid)).max()
    assert fit.gof_statistic == pytest.approx(brute, abs=1e-6)


def test_bootstrap_is_seeded():
    x, seen, _ = _censored_sample(13, 200)
    one = fit_lifetime_law(x, seen, law="weibull", bootstraps=9, seed=5)
    two = fit_lifetime_law(x, seen, law="weibull", bootstraps=9, seed=np.random.SeedSequence(5))
    assert one.gof_p_value == two.gof_p_value and one.gof_bootstraps == 9
    assert fit_lifetime_law(x, seen, law="weibull").gof_p_value is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"durations": [1.0, -2.0]}, "durations"),
        ({"durations": [1.0, float("nan")]}, "durations"),
        ({"durations": []}, "durations"),
        ({"durations": [1.0, 2.0], "observed": [True]}, "observed"),
        ({"durations": [1.0, 2.0], "observed": [1, 2]}, "observed"),
        ({"durations": [0.0, 2.0], "observed": [False, True]}, "censored at 0"),
        ({"durations": [0.0, 2.0]}, "resolution"),
        ({"durations": [1.0, 2.0], "law": "normal"}, "law"),
        ({"durations": [1.0, 2.0], "observed": [True, False], "law": "gamma"}, "2 observed"),
        ({"durations": [1.0, 2.0], "bootstraps": 5}, "seed"),
        ({"durations": [1.0, 2.0], "bootstraps": -1}, "bootstraps"),
        ({"durations": [1.0, 2.0], "censor_at": [0.5, 3.0]}, "censor_at"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_lifetime_law(**kwargs)
