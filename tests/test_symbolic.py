"""sympy derivations of the Gamma form and of the r* constant (spare_theory.wipeout.symbolic)."""

import math

import numpy as np
import pytest
import sympy as sp

from spare_theory.wipeout.symbolic import derive_gamma_form, derive_r_star_constant


@pytest.fixture(scope="module")
def gamma_form():
    return derive_gamma_form()


def test_gamma_form_is_verified_symbolically_and_for_concrete_r(gamma_form):
    assert gamma_form.symbolic_check
    assert gamma_form.concrete_checks == {1: True, 2: True, 3: True, 4: True, 8: True}
    assert gamma_form.verified


def test_gamma_form_result_evaluates_to_published_form(gamma_form):
    N, r = sp.symbols("N r", positive=True)
    value = float(gamma_form.result.subs({N: 75_000, r: 17}))
    assert value == pytest.approx(math.gamma(1 + 1 / 17) * 75_000 ** (1 - 1 / 17), rel=1e-12)


@pytest.mark.parametrize("N, r", [(10_000, 3), (4096, 8)])
def test_poisson_sum_is_the_integral_plus_one_half(N, r):
    # Euler-Maclaurin: sum_{f>=0} g(f) = int g + g(0)/2 + ..., g'(0) = 0 for r > 1.
    f = np.arange(4 * N, dtype=np.float64)  # terms beyond f = 4N are below exp(-4^r N)
    total = math.fsum(np.exp(-N * (f / N) ** r))
    assert total == pytest.approx(math.gamma(1 + 1 / r) * N ** (1 - 1 / r) + 0.5, rel=1e-9)


def test_r_star_constant_is_euler_gamma_over_ln2():
    d = derive_r_star_constant()
    assert sp.simplify(d.constant - sp.EulerGamma / sp.log(2)) == 0
    assert d.constant_value == pytest.approx(0.5772156649015329 / math.log(2), rel=1e-15)
    assert abs(d.constant_value - 0.833) < 1e-3  # the published constant
    assert d.verified


def test_r_star_exact_root_converges_to_the_asymptote():
    d = derive_r_star_constant(check_N=(2**10, 2**20, 2**40, 2**80))
    gaps = [abs(exact - approx) for exact, approx in d.numeric_checks.values()]
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 0.02
    # The exact root satisfies the original condition Gamma(1+1/r) N^(-1/r) = 1/2.
    for n, (exact, _) in d.numeric_checks.items():
        assert math.gamma(1 + 1 / exact) * n ** (-1 / exact) == pytest.approx(0.5, rel=1e-9)
