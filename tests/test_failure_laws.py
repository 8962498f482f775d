"""Group lifetime laws: named laws, pass-through, the minimum of Weibull GPUs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from spare_theory.lifetimes.laws import group_weibull_from_gpu, lifetime_law


@pytest.mark.parametrize("mean", [1.0, 60_000.0, 3.0e5])
def test_exponential_has_the_requested_mean(mean):
    law = lifetime_law("exponential", mean_seconds=mean)
    assert law.dist.name == "expon"
    assert law.mean() == pytest.approx(mean, rel=1e-12)


@pytest.mark.parametrize("shape", [0.5, 0.78, 1.0, 2.5])
def test_weibull_has_the_requested_mean_and_shape(shape):
    law = lifetime_law("weibull", mean_seconds=1234.5, shape=shape)
    assert law.dist.name == "weibull_min"
    assert law.args == (shape,)
    assert law.mean() == pytest.approx(1234.5, rel=1e-12)


def test_weibull_default_shape_is_the_papers():
    assert lifetime_law("weibull", mean_seconds=10.0).args == (0.78,)


@pytest.mark.parametrize("N,published_scale", [(200, 51_979), (600, 155_937), (1000, 259_894)])
def test_weibull_scale_reproduces_the_published_simulator_inputs(N, published_scale):
    # The authors' run.sh passes these scales for a group mean lifetime of 300 N s.
    law = lifetime_law("weibull", mean_seconds=300.0 * N, shape=0.78)
    assert round(law.kwds["scale"]) == published_scale


def test_frozen_distribution_passes_through():
    law = stats.gamma(2.0, scale=50.0)
    assert lifetime_law(law) is law
    assert lifetime_law(law, mean_seconds=100.0) is law


@pytest.mark.parametrize(
    "law,kwargs,name",
    [
        ("lognormal", {"mean_seconds": 1.0}, "law"),
        ("exponential", {}, "mean_seconds"),
        ("exponential", {"mean_seconds": 0.0}, "mean_seconds"),
        ("exponential", {"mean_seconds": -1.0}, "mean_seconds"),
        ("exponential", {"mean_seconds": math.nan}, "mean_seconds"),
        ("exponential", {"mean_seconds": 1.0, "shape": 2.0}, "shape"),
        ("weibull", {"mean_seconds": 1.0, "shape": 0.0}, "shape"),
        ("weibull", {"mean_seconds": 1.0, "shape": math.inf}, "shape"),
        (stats.norm(5.0, 1.0), {}, "law"),  # support reaches below 0
        (stats.poisson(3.0), {}, "law"),  # discrete
        (stats.cauchy, {}, "law"),  # not frozen
        (stats.pareto(0.5), {}, "law"),  # infinite mean
        (42.0, {}, "law"),
        (stats.gamma(2.0, scale=50.0), {"mean_seconds": 99.0}, "mean_seconds"),
        (stats.gamma(2.0, scale=50.0), {"shape": 1.0}, "shape"),
    ],
)
def test_bad_input_names_the_argument(law, kwargs, name):
    with pytest.raises(ValueError, match=name):
        lifetime_law(law, **kwargs)


@pytest.mark.parametrize("shape,n", [(0.78, 7), (1.5, 30), (1.0, 3)])
def test_group_weibull_is_the_minimum_of_its_gpus(shape, n):
    gpu_scale = 1000.0
    law = group_weibull_from_gpu(shape, gpu_scale, n)
    rng = np.random.default_rng([round(shape * 100), n])
    M = 20_000
    minima = stats.weibull_min(shape, scale=gpu_scale).rvs((M, n), random_state=rng).min(axis=1)
    # Mean within 4 standard errors.
    se = minima.std(ddof=1) / math.sqrt(M)
    assert abs(minima.mean() - law.mean()) <= 4 * se
    # The empirical CDF at three quantiles within 4 binomial standard errors.
    for q in (0.1, 0.5, 0.9):
        frac = float(np.mean(minima <= law.ppf(q)))
        assert abs(frac - q) <= 4 * math.sqrt(q * (1 - q) / M)


def test_group_weibull_bad_input():
    with pytest.raises(ValueError, match="gpus_per_group"):
        group_weibull_from_gpu(0.78, 1.0, 0)
    with pytest.raises(ValueError, match="shape"):
        group_weibull_from_gpu(-1.0, 1.0, 2)
    with pytest.raises(ValueError, match="gpu_scale_seconds"):
        group_weibull_from_gpu(0.78, 0.0, 2)
