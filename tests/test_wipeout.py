"""Closed forms and exact enumeration of the wipe-out count (spare_theory.wipeout.law)."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from spare_theory import wipeout as wo
from spare_theory.placement import placements as pl
from spare_theory.wipeout.simulation import simulate_wipeout

# --- Gamma form ----------------------------------------------------------------


@pytest.mark.parametrize(
    "N, r", [(128, 2), (75_000, 17), (10**12, 2), (10**12, 64), (1, 1), (10**9, 33)]
)
def test_gamma_form_matches_mpmath(N, r):
    expected = mpmath.gamma(1 + mpmath.mpf(1) / r) * mpmath.mpf(N) ** (1 - mpmath.mpf(1) / r)
    assert wo.endurable_failures_gamma(N, r) == pytest.approx(float(expected), rel=1e-13)


def test_gamma_form_broadcasts_like_scipy_special():
    out = wo.endurable_failures_gamma([[128], [4096]], [2, 3, 4])
    assert out.shape == (2, 3)
    assert out[1, 2] == wo.endurable_failures_gamma(4096, 4)
    assert isinstance(wo.endurable_failures_gamma(128, 2), float)


# --- exact enumeration ----------------------------------------------------------


def test_fano_plane_by_hand():
    # Types are the 7 lines of the Fano plane.  No 1- or 2-set holds a line; of
    # the 35 triples 7 are lines; the 4-sets without a line are the 7
    # complements of lines (any two lines meet); every 5-set holds a line.
    hosts = pl.cyclic_placement(7, 3, marks=(0, 1, 3))
    expected = [1, 1, 1, 28 / 35, 7 / 35, 0, 0, 0]
    np.testing.assert_allclose(wo.exact_wipeout_survival(hosts), expected, rtol=0, atol=1e-15)
    assert wo.exact_endurable_failures(hosts) == pytest.approx(4.0, abs=1e-14)


def _mean_over_all_orders(hosts):
    """E[T] averaged over every one of the N! failure orders (independent of the subset count)."""
    N = hosts.shape[0]
    total = 0
    for order in itertools.permutations(range(N)):
        rank = np.empty(N, dtype=int)
        rank[list(order)] = np.arange(N)
        total += rank[hosts].max(axis=1).min() + 1
    return total / math.factorial(N)


@pytest.mark.parametrize(
    "hosts",
    [
        pl.contiguous_placement(6, 2),
        pl.contiguous_placement(7, 3),
        pl.random_placement(7, 2, seed=4),
    ],
    ids=["contiguous-6-2", "contiguous-7-3", "random-7-2"],
)
def test_exact_enumeration_matches_all_orders(hosts):
    assert wo.exact_endurable_failures(hosts) == pytest.approx(
        _mean_over_all_orders(hosts), rel=1e-12
    )


def test_exact_refuses_large_N():
    with pytest.raises(ValueError, match=r"N=25.*24"):
        wo.exact_wipeout_survival(pl.cyclic_placement(25, 2))


# --- sharp form -------------------------------------------------------------------


@pytest.mark.parametrize("N", [3, 11, 20, 24])
def test_r2_survival_is_exact(N):
    # r = 2: types are the edges of the cycle C_N; compare with enumeration.
    exact = wo.exact_wipeout_survival(pl.cyclic_placement(N, 2))
    np.testing.assert_allclose(
        wo.wipeout_survival(N, 2, np.arange(N + 1)), exact, rtol=1e-11, atol=1e-15
    )


def test_r1_is_first_failure():
    np.testing.assert_array_equal(wo.wipeout_survival(5, 1, np.arange(6)), [1, 0, 0, 0, 0, 0])
    assert wo.endurable_failures(5, 1) == 1.0


@settings(max_examples=40, deadline=None)
@given(r=st_.integers(2, 12), extra=st_.integers(0, 5000))
def test_survival_is_a_survival_function(r, extra):
    N = r * (r - 1) + 1 + extra
    P = wo.wipeout_survival(N, r, np.arange(N + 1))
    assert np.all((P >= 0) & (P <= 1))
    assert np.all(P[:r] == 1) and P[N] == 0
    assert np.all(np.diff(P) <= 1e-15)


def test_long_support_quadrature_matches_term_by_term_sum():
    # N = 3e5, r = 3: the support exceeds the 1e5 terms summed directly, so
    # endurable_failures uses quadrature; sum the public survival instead.
    N, r = 300_000, 3
    direct = wo.wipeout_survival(N, r, np.arange(N + 1)).sum()
    assert wo.endurable_failures(N, r) == pytest.approx(direct, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("r", [2, 3, 8, 20, 64])
def test_huge_N_is_finite_and_near_gamma(r):
    # At N = 1e12 the discreteness and pair corrections are O(N^(-1/r)).
    N = 10**12
    sharp, gamma = wo.endurable_failures(N, r), wo.endurable_failures_gamma(N, r)
    assert np.isfinite(sharp) and abs(sharp / gamma - 1) < 2e-6


# Cells of the published grid where the expansion is hardest (small N, large r)
# and a sparse-method cell.  Tolerance 4 SE + 0.1 % (acceptance is 3 SE + 0.1 %
# over the table; 4 keeps this single draw from failing by chance).
@pytest.mark.parametrize(
    "N, r, trials",
    [(128, 3, 40_000), (128, 8, 30_000), (256, 12, 20_000), (1024, 20, 15_000), (8192, 2, 8_000)],
)
def test_sharp_form_matches_simulation(N, r, trials):
    T = simulate_wipeout(pl.cyclic_placement(N, r), trials, seed=11)
    se = T.std(ddof=1) / math.sqrt(trials)
    assert abs(wo.endurable_failures(N, r) - T.mean()) <= 4 * se + 1e-3 * T.mean()


def test_sharp_beats_gamma_on_small_cells():
    exact = wo.exact_endurable_failures(pl.cyclic_placement(21, 5))
    assert abs(wo.endurable_failures(21, 5) - exact) < abs(
        wo.endurable_failures_gamma(21, 5) - exact
    )


def test_survival_broadcasts_and_validates():
    out = wo.wipeout_survival([[300], [400]], 3, [0, 10, 50])
    assert out.shape == (2, 3) and out[0, 0] == 1.0
    with pytest.raises(ValueError, match="failures"):
        wo.wipeout_survival(100, 3, 101)
    with pytest.raises(ValueError, match="N=10"):
        wo.endurable_failures(10, 4)
