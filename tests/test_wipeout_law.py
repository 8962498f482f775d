"""The wipe-out law as one object (spare_theory.wipeout.law.WipeoutLaw).

Consistency between its methods, agreement with the exact law (enumeration,
r = 2 where the sharp form is exact) and with Monte Carlo (tolerances k
standard errors of the sample, k stated), broadcasting, reproducibility and
argument checks; and that the functions it replaced give the numbers of the
committed tables, bit for bit.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import spare_theory as st
from spare_theory.placement.placements import cyclic_placement
from spare_theory.reports._io import CSV_ROUNDING
from spare_theory.wipeout import expansion

TABLES = Path(__file__).resolve().parent.parent / "tables"
# r = 1 and 2 exact; r >= 3 the sharp approximation; small and large supports.
LAWS = [(5, 1), (7, 2), (101, 2), (1000, 3), (500, 5), (4096, 8)]


def _all_f(N: int) -> np.ndarray:
    return np.arange(-2, N + 3)


# --- consistency of the methods --------------------------------------------------


@pytest.mark.parametrize("N, r", LAWS)
def test_pmf_sums_to_one(N, r):
    assert abs(st.wipeout_law(N, r).pmf(_all_f(N)).sum() - 1.0) <= 1e-12


@pytest.mark.parametrize("N, r", LAWS)
def test_cdf_is_one_minus_sf(N, r):
    law, f = st.wipeout_law(N, r), _all_f(N)
    # -expm1(x) against 1 - exp(x): equal up to the rounding of 1 - exp(x) (2**-53).
    np.testing.assert_allclose(law.cdf(f), 1.0 - law.sf(f), rtol=0, atol=2**-52)


@pytest.mark.parametrize("N, r", LAWS)
def test_pmf_is_the_difference_of_sf(N, r):
    law, f = st.wipeout_law(N, r), _all_f(N)
    np.testing.assert_allclose(law.pmf(f), law.sf(f - 1) - law.sf(f), rtol=0, atol=2**-51)


@pytest.mark.parametrize("N, r", LAWS)
def test_sf_logsf_and_support(N, r):
    law, f = st.wipeout_law(N, r), _all_f(N)
    sf = law.sf(f)
    assert np.array_equal(sf, np.exp(law.logsf(f)))
    assert np.all(np.diff(sf) <= 0)
    a, b = law.support()
    assert np.all(sf[f < a] == 1.0) and np.all(sf[f >= b] == 0.0)
    assert law.pmf(a) > 0 and np.all(law.pmf(f[(f < a) | (f > b)]) == 0.0)
    if r <= 2:  # exact: the largest T has positive probability
        assert law.pmf(b) > 0


@pytest.mark.parametrize("N, r", LAWS)
def test_mean_is_the_sum_of_sf_and_endurable_failures(N, r):
    law = st.wipeout_law(N, r)
    assert abs(law.mean() - law.sf(np.arange(N + 1)).sum()) <= 1e-12 * law.mean()
    assert law.mean() == st.endurable_failures(N, r)


@pytest.mark.parametrize("N, r", LAWS)
def test_var_is_the_centred_second_moment_of_pmf(N, r):
    law, f = st.wipeout_law(N, r), _all_f(N)
    central = float(law.pmf(f) @ (f - law.mean()) ** 2)
    assert law.var() >= 0.0
    assert abs(law.var() - central) <= 1e-9 * max(central, 1e-300) + 1e-12
    assert law.std() == math.sqrt(law.var())


def test_r_one_is_a_point_mass():
    law = st.wipeout_law(5, 1)
    assert (law.mean(), law.var(), law.support()) == (1.0, 0.0, (1, 1))
    assert law.rvs(7, seed=0).tolist() == [1] * 7


@pytest.mark.parametrize("N", [7, 13, 20])
def test_r_two_equals_exact_enumeration(N):
    # For r = 2 the sharp form is the exact law (independent sets of the cycle).
    law = st.wipeout_law(N, 2)
    exact = st.exact_wipeout_survival(cyclic_placement(N, 2))
    np.testing.assert_allclose(law.sf(np.arange(N + 1)), exact, rtol=1e-12, atol=1e-15)
    f = np.arange(N + 1)
    exact_var = float(((2 * f + 1) * exact).sum() - exact.sum() ** 2)
    assert abs(law.var() - exact_var) <= 1e-12 * exact_var


@pytest.mark.parametrize("N, r", [(10**6, 3), (300_000, 8)])
def test_long_support_moments_match_term_by_term_sums(N, r, monkeypatch):
    # Quadrature path (supports beyond _DIRECT_TERMS) against the direct sum of the same law.
    law = st.wipeout_law(N, r)
    direct = law.mean(), law.var()
    monkeypatch.setattr(expansion, "_DIRECT_TERMS", 2000)
    expansion.survival_sum.cache_clear()
    try:
        quad = law.mean(), law.var()
    finally:
        expansion.survival_sum.cache_clear()
    assert abs(quad[0] - direct[0]) <= 1e-9 * direct[0]
    # E[T^2] to ~1e-10 relative; Var = E[T^2] - mu^2 loses log10(mu^2/Var) digits.
    assert abs(quad[1] - direct[1]) <= 1e-9 * (direct[0] ** 2 + direct[1])


# --- quantiles --------------------------------------------------------------------


@pytest.mark.parametrize("N, r", LAWS)
def test_ppf_inverts_cdf(N, r):
    law = st.wipeout_law(N, r)
    q = np.concatenate([np.random.default_rng(N * 100 + r).random(200), [1e-12, 0.5, 1 - 1e-9]])
    f = law.ppf(q)
    assert np.all(law.cdf(f) >= q) and np.all(law.cdf(f - 1) < q)
    a, b = law.support()
    assert law.ppf(0.0) == a - 1 and law.ppf(1.0) == b
    support = np.arange(a, b + 1)
    # Where cdf steps up and stays below 1 in floating point (ppf(1.0) is b by convention).
    cdf = law.cdf(support)
    inside = support[(cdf > law.cdf(support - 1)) & (cdf < 1.0)]
    assert inside.size >= min(b - a, 10)
    assert np.array_equal(law.ppf(law.cdf(inside)), inside)


# --- broadcasting -------------------------------------------------------------------


def test_methods_broadcast_over_their_argument():
    law = st.wipeout_law(1000, 3)
    f = np.arange(24).reshape(2, 3, 4) * 10
    for method in (law.sf, law.logsf, law.cdf, law.pmf):
        out = method(f)
        assert isinstance(out, np.ndarray) and out.shape == (2, 3, 4)
        assert out[1, 2, 3] == method(int(f[1, 2, 3]))
        assert isinstance(method(90), float)
    assert law.logsf_smooth(np.full((3, 1), 90.5)).shape == (3, 1)
    q = np.linspace(0.1, 0.9, 6).reshape(3, 2)
    assert law.ppf(q).shape == (3, 2) and law.ppf(q).dtype == np.int64
    assert isinstance(law.ppf(0.5), int)
    assert law.rvs((2, 3), seed=0).shape == (2, 3) and law.rvs(5, seed=0).shape == (5,)


def test_wrappers_equal_the_law():
    N, r = 4096, 4
    law = st.wipeout_law(N, r)
    f = np.arange(0, N + 1, 7)
    assert np.array_equal(st.wipeout_survival(N, r, f), law.sf(f))
    other = st.wipeout_law(1000, 3)
    assert np.array_equal(
        st.wipeout_survival([[N], [1000]], [[4], [3]], [[5, 400]]),
        [[law.sf(5), law.sf(400)], [other.sf(5), other.sf(400)]],
    )
    assert st.wipeout_law(N, r) == st.WipeoutLaw(N, r) and hash(law) == hash(st.WipeoutLaw(N, r))


# --- sampling -------------------------------------------------------------------------


def test_rvs_is_reproducible_and_seed_dependent():
    law = st.wipeout_law(1000, 3)
    a = law.rvs(300, seed=5)
    assert a.dtype == np.int64
    assert np.array_equal(a, law.rvs(300, seed=5))
    assert np.array_equal(a, law.rvs(300, seed=np.random.SeedSequence(5)))
    assert not np.array_equal(a, law.rvs(300, seed=6))
    assert np.array_equal(law.rvs((3, 100), seed=5).ravel(), a)
    assert np.array_equal(a, st.simulate_wipeout(cyclic_placement(1000, 3), 300, seed=5))


@pytest.mark.parametrize("N, r", [(2000, 2), (1000, 3), (4096, 4), (500, 5)])
def test_rvs_moments_match_the_law(N, r):
    # k = 3 SE for the mean, k = 4 SE for the variance.  r = 2 is exact; for
    # r >= 3 the sharp form is within 0.7 % of the simulated mean (tables/mu_error),
    # far below 3 SE here (~0.3 % of the mean with 20,000 trials: z < 3 by a wide margin).
    n = 20_000
    law = st.wipeout_law(N, r)
    x = law.rvs(n, seed=11).astype(np.float64)
    assert np.all((x >= law.support()[0]) & (x <= law.support()[1]))
    assert abs(x.mean() - law.mean()) <= 3 * x.std(ddof=1) / math.sqrt(n)
    s2 = x.var(ddof=1)
    m4 = float(((x - x.mean()) ** 4).mean())
    se_var = math.sqrt((m4 - (n - 3) / (n - 1) * s2**2) / n)
    assert abs(s2 - law.var()) <= 4 * se_var


# --- argument checks ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, pattern",
    [
        (lambda: st.wipeout_law(0, 1), r"\bN\b"),
        (lambda: st.wipeout_law(2.5, 1), r"\bN\b"),
        (lambda: st.wipeout_law(True, 1), r"\bN\b"),
        (lambda: st.wipeout_law(100, 0), r"\br\b"),
        (lambda: st.wipeout_law(100, "3"), r"\br\b"),
        (lambda: st.wipeout_law(3, 5), r"r must be <= N"),
        (lambda: st.wipeout_law(10, 4), r"N=10 admits no modular ruler with r=4"),
        (lambda: st.WipeoutLaw(10, 4), r"N=10 .* r=4"),
        (lambda: st.wipeout_law(100, 3).ppf(-0.1), r"\bq\b"),
        (lambda: st.wipeout_law(100, 3).ppf([0.5, 1.5]), r"\bq\b"),
        (lambda: st.wipeout_law(100, 3).ppf(float("nan")), r"\bq\b"),
        (lambda: st.wipeout_law(100, 3).sf(2.5), r"\bf\b"),
        (lambda: st.wipeout_law(100, 3).pmf("a"), r"\bf\b"),
        (lambda: st.wipeout_law(100, 3).logsf_smooth(float("inf")), r"\bx\b"),
        (lambda: st.wipeout_law(100, 3).tail_end(1.0), r"log_level"),
        (lambda: st.wipeout_law(100, 3).rvs(0, seed=1), r"\bsize\b"),
        (lambda: st.wipeout_law(100, 3).rvs((2, 0), seed=1), r"\bsize\b"),
        (lambda: st.wipeout_law(100, 3).rvs((), seed=1), r"\bsize\b"),
        (lambda: st.wipeout_law(100, 3).rvs(2.5, seed=1), r"\bsize\b"),
        (lambda: st.wipeout_law(100, 3).rvs(3, seed=-1), r"\bseed\b"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


# --- nothing numeric changed ---------------------------------------------------------------


# The tables keep 6 significant digits (reports._io): at most 5e-6 relative, plus a margin.
WRITTEN = 1.2 * CSV_ROUNDING


def _column(table: pd.DataFrame, *names: str) -> str:
    return next(name for name in names if name in table.columns)


def test_committed_mu_table_is_reproduced():
    # tables/mu_error.csv holds the closed forms written before the law became an object,
    # to 6 significant digits: a relative rounding of at most 5e-6.
    table = pd.read_csv(TABLES / "mu_error.csv")
    cells = table[table["status"] == "ok"].iloc[::8]
    assert len(cells) >= 8
    for N, r, sharp in zip(cells["N"], cells["r"], cells["sharp"]):
        assert st.endurable_failures(int(N), int(r)) == pytest.approx(sharp, rel=WRITTEN), (N, r)
        assert st.wipeout_law(int(N), int(r)).mean() == pytest.approx(sharp, rel=WRITTEN), (N, r)


def test_committed_overhead_table_is_reproduced():
    table = pd.read_csv(TABLES / "overhead_error.csv")
    columns = {w: _column(table, f"closed_form_{w}", f"cf_{w}") for w in ("failure", "time")}
    cells = table[table[columns["failure"]].notna()].iloc[::8]
    assert len(cells) >= 8
    for _, row in cells.iterrows():
        for weighting, column in columns.items():
            got = st.overhead(int(row["N"]), int(row["r"]), weighting)
            assert got == pytest.approx(row[column], rel=WRITTEN), (row["N"], row["r"], weighting)
