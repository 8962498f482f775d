"""Closed forms at the extremes (N up to 1e12, r up to 64) against high-precision references.

References are evaluated independently: mpmath at 50 digits for the defining
expressions, exact Python integers for the ceilings, and a plain O(N) float
implementation of the overhead sums (written here from the definitions in
``docs/theory.md`` section 3) on the grid where the O(N) sum is feasible.
"""

import mpmath as mp
import numpy as np
import pytest

import spare_theory.stacking.overhead as overhead_module
from spare_theory.planning.redundancy import r_star_rule
from spare_theory.stacking.overhead import expected_stacks, overhead
from spare_theory.stacking.stacks import stacks_lower_bound
from spare_theory.wipeout.expansion import _turning_point, endurable_failures_gamma
from spare_theory.wipeout.law import endurable_failures, wipeout_survival

mp.mp.dps = 50
GRID = [
    (N, r)
    for N in (10**3, 10**6, 10**9, 10**12)
    for r in (1, 2, 3, 5, 8, 20, 64)
    if r * (r - 1) + 1 <= N
]


def _rel(a, b):
    return abs(mp.mpf(a) - b) / abs(b)


@pytest.mark.parametrize("N, r", GRID)
def test_gamma_form_against_mpmath(N, r):
    # Computed in log space: |log mu| <= 28 at N = 1e12, so float error <= ~30 eps.
    exact = mp.gamma(1 + mp.mpf(1) / r) * mp.mpf(N) ** (1 - mp.mpf(1) / r)
    assert _rel(endurable_failures_gamma(N, r), exact) < 1e-12


def _p(f, N, k):
    """``(f)_k / (N)_k`` exactly (mpmath)."""
    return mp.fprod((mp.mpf(f) - j) / (N - j) for j in range(k)) if f >= k else mp.mpf(0)


def _mp_log_expansion(f, N, r):
    """``-S1 + S2 - S1^2/2`` (docs/theory.md, section 2) at 50 digits."""
    n1 = mp.mpf(N) * r * (r - 1) / 2
    n0 = mp.mpf(N) * (N - 1) / 2 - n1
    S1 = N * _p(f, N, r)
    return -S1 + n1 * _p(f, N, 2 * r - 1) + n0 * _p(f, N, 2 * r) - S1**2 / 2


def _mp_log_survival(f, N, r):
    """The sharp form's defining expression.

    Exact cycle law for r = 2, first-order continuation past the turning point.
    """
    if r == 1:
        return mp.mpf(0) if f < 1 else mp.ninf
    if f >= N:
        return mp.ninf
    if r == 2:
        if 2 * f > N:
            return mp.ninf
        return (
            mp.log(mp.mpf(N) / (N - f)) + mp.log(mp.binomial(N - f, f)) - mp.log(mp.binomial(N, f))
        )
    turn = _turning_point(N, r)
    if f <= turn:
        return min(_mp_log_expansion(f, N, r), mp.mpf(0))
    return _mp_log_expansion(turn, N, r) - N * (_p(f, N, r) - _p(turn, N, r))


@pytest.mark.parametrize("N, r", GRID)
def test_survival_against_mpmath(N, r):
    mu = float(endurable_failures_gamma(N, r))
    fs = sorted({min(N, max(0, int(q * mu))) for q in (0.0, 0.05, 0.3, 1.0, 1.5, 2.5)} | {r - 1, r})
    got = np.atleast_1d(wipeout_survival(N, r, fs))
    for f, value in zip(fs, got):
        exact = mp.exp(_mp_log_survival(f, N, r))
        assert np.isfinite(value) and 0.0 <= value <= 1.0
        if exact > mp.mpf(1e-300):
            assert _rel(value, exact) < 1e-9, (f, value, exact)
        else:
            assert value < 1e-290


@pytest.mark.slow
@pytest.mark.parametrize("N, r", [(3001, 2), (2000, 3), (1000, 5), (993, 32), (1561, 40)])
def test_endurable_failures_is_its_defining_sum(N, r):
    exact = mp.fsum(mp.exp(_mp_log_survival(f, N, r)) for f in range(N + 1))
    assert _rel(endurable_failures(N, r), exact) < 1e-9


@pytest.mark.parametrize("r", [2, 3, 5, 8, 20, 64])
def test_endurable_failures_at_1e12_against_gamma_form(r):
    # sum_f P(T > f) = int_0^inf exp(-N x^r) N dx + 1/2 (Euler-Maclaurin end term) + a shift:
    # (f)_r ~ (f - (r-1)/2)^r moves the law by at most (r-1)/2 failures
    # (pair terms pull it back for large r).  So |mu - Gamma form - 1/2| <= (r-1)/2.
    N = 10**12
    mu, gamma_form = endurable_failures(N, r), endurable_failures_gamma(N, r)
    assert np.isfinite(mu)
    assert abs(mu - gamma_form - 0.5) <= (r - 1) / 2


def test_ceilings_exact_to_1e12():
    N = np.array([10**12, 10**12, 10**12, 10**12 - 1, 999_999_999_989])
    f = np.array([0, 1, 10**12 - 3, 5 * 10**11, 10**11 + 7])
    exact = [-(-int(n) // (int(n) - int(k))) for n, k in zip(N, f)]
    assert stacks_lower_bound(N, f).tolist() == exact
    assert np.asarray(expected_stacks(N[:2], 64, f[:2])).tolist() == exact[:2]
    assert expected_stacks(10**12, 3, 6 * 10**11) == 3.0


def test_r_star_rule_against_mpmath_at_the_jumps():
    # N just below and at each jump of floor(log2 N + 0.833), up to 1e12.
    Ns = sorted(
        {int(mp.floor(2 ** (k - mp.mpf("0.833")))) + d for k in range(2, 41) for d in (0, 1)}
    )
    expected = [max(1, int(mp.floor(mp.log(n, 2) + mp.mpf("0.833")))) for n in Ns]
    assert r_star_rule(Ns).tolist() == expected


def _reference_overhead(N, r, weighting):
    """``sum_t P(T=t) avg_{f<t} e_f`` straight from the definition, O(N) memory."""
    survival = np.asarray(wipeout_survival(N, r, np.arange(N + 1)))
    f = np.arange(N)
    e = np.minimum(-(-N // (N - f)), r).astype(float)
    w = np.ones(N) if weighting == "failure" else 1.0 / (N - f)
    return float((survival[:-1] - survival[1:]) @ (np.cumsum(e * w) / np.cumsum(w)))


@pytest.mark.parametrize("weighting", ["failure", "time"])
def test_overhead_equals_its_o_n_definition(weighting):
    grid = [
        (1, 1),
        (7, 3),
        (13, 4),
        (100, 2),
        (128, 8),
        (1000, 20),
        (4096, 64),
        (30_000, 5),
        (100_000, 3),
    ]
    for N, r in grid:
        ref = _reference_overhead(N, r, weighting)
        assert abs(overhead(N, r, weighting) - ref) <= 1e-12 * ref, (N, r)


@pytest.mark.slow
@pytest.mark.parametrize("N, r", [(10**6, 2), (10**6, 3), (300_000, 20), (200_000, 64)])
def test_overhead_quadrature_matches_term_by_term_sum(N, r, monkeypatch):
    # The long-support path (used for every large N) against the direct sum on the same law.
    direct = overhead(N, r, "failure"), overhead(N, r, "time")
    monkeypatch.setattr(overhead_module, "_DIRECT_TERMS", 2000)
    quad = overhead(N, r, "failure"), overhead(N, r, "time")
    for a, b in zip(direct, quad):
        assert abs(a - b) <= 1e-9 * a


@pytest.mark.slow
@pytest.mark.parametrize("r", [2, 3, 20, 64])
def test_overhead_at_1e12_finite_and_bounded(r):
    N = 10**12
    weightings = ["failure", "time"] if r < 64 else ["failure"]  # r = 64 costs seconds per call
    values = [overhead(N, r, w) for w in weightings]
    assert all(np.isfinite(v) and 1.0 <= v <= r for v in values)
    assert values == sorted(values)  # time weighting favours the later, costlier states
    if r <= 20:
        # mu/N -> 0, so almost every state before the wipe-out has e_f = 2 (f < N/2) and
        # avg_{f<T} e_f = 2 - 1/T; T/N^(1-1/r) tends to a Weibull law (P(T>t) ~ exp(-N (t/N)^r)),
        # so 2 - S -> E[1/T] = Gamma(1 - 1/r) N^(-(1-1/r)), corrections O(r/mu) relative.
        # The 1e-14 absolute term is the float resolution of S near 2.
        limit = float(mp.gamma(1 - mp.mpf(1) / r) * mp.mpf(N) ** (-(1 - mp.mpf(1) / r)))
        assert abs((2.0 - values[0]) - limit) <= 1e-3 * limit + 1e-14
