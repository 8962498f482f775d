"""Symbolic derivations (sympy) behind the closed forms of :mod:`spare_theory.wipeout.law`.

* :func:`derive_gamma_form`: ``sum_f exp(-N (f/N)^r) ~ Gamma(1 + 1/r) N^(1 - 1/r)``
  via the integral and the substitution ``u = N x^r``.
* :func:`derive_r_star_constant`: the ``r`` at which ``mu(N, r) / N``
  (the share of groups that may fail before a wipe-out) is one half,
  ``Gamma(1 + 1/r) N^(-1/r) = 1/2``, solved asymptotically:
  ``r = log2 N + gamma / ln 2 + O(1/r)`` with Euler's ``gamma``;
  ``gamma / ln 2 = 0.8327``, the published ``0.833``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import mpmath
import sympy as sp

__all__ = ["GammaDerivation", "RStarDerivation", "derive_gamma_form", "derive_r_star_constant"]


@dataclass(frozen=True)
class GammaDerivation:
    """Steps from the Poisson sum to the Gamma form (sympy expressions).

    Attributes
    ----------
    series : sympy.Sum
        ``sum_{f>=0} exp(-N (f/N)^r)``: ``E[T] = sum_f P(T > f)`` with the
        Poisson survival ``P(T > f) ~ exp(-N x^r)``, ``x = f/N``.
    integral : sympy.Integral
        Its Euler-Maclaurin leading term ``N int_0^oo exp(-N x^r) dx``
        (the next terms add ``1/2`` and ``O(N^(-1/r))``).
    substituted : sympy.Integral
        After ``u = N x^r``: ``N^(1-1/r) / r * int_0^oo u^(1/r - 1) e^(-u) du``.
    result : sympy.Expr
        The evaluated integral.
    target : sympy.Expr
        ``Gamma(1 + 1/r) N^(1 - 1/r)``.
    symbolic_check : bool
        ``simplify(result - target) == 0`` for symbolic positive ``r`` and ``N``.
    concrete_checks : dict of int to bool
        ``{r: bool}``: ``N int_0^oo exp(-N x^r) dx`` integrated afresh for
        concrete ``r`` equals the target.

    Examples
    --------
    >>> from spare_theory.wipeout.symbolic import derive_gamma_form
    >>> derivation = derive_gamma_form(concrete_r=())
    >>> derivation.target, derivation.verified
    (N**(1 - 1/r)*gamma(1 + 1/r), True)
    """

    series: sp.Expr
    integral: sp.Expr
    substituted: sp.Expr
    result: sp.Expr
    target: sp.Expr
    symbolic_check: bool
    concrete_checks: dict[int, bool] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """All checks passed."""
        return self.symbolic_check and all(self.concrete_checks.values())


def derive_gamma_form(concrete_r: Sequence[int] = (1, 2, 3, 4, 8)) -> GammaDerivation:
    """Turn ``sum_f exp(-N (f/N)^r)`` into ``Gamma(1 + 1/r) N^(1 - 1/r)`` and check it.

    Parameters
    ----------
    concrete_r : sequence of int
        Redundancies for which the integral is also evaluated directly.

    Returns
    -------
    GammaDerivation

    Examples
    --------
    >>> from spare_theory.wipeout.symbolic import derive_gamma_form
    >>> derivation = derive_gamma_form(concrete_r=(2,))
    >>> derivation.result, derivation.concrete_checks
    (N**((r - 1)/r)*gamma(1 + 1/r), {2: True})
    """
    f, N, r, x, u = sp.symbols("f N r x u", positive=True)
    series = sp.Sum(sp.exp(-N * (f / N) ** r), (f, 0, sp.oo))
    # f = N x turns the sum into N times an integral over x (step 1/N).
    integral = N * sp.Integral(sp.exp(-N * x**r), (x, 0, sp.oo))
    # u = N x^r: x = (u/N)^(1/r), dx = (1/r) N^(-1/r) u^(1/r - 1) du.
    jacobian = sp.diff((u / N) ** (1 / r), u)
    substituted = N * sp.Integral(
        sp.exp(-u) * sp.powsimp(sp.expand_power_base(jacobian, force=True)), (u, 0, sp.oo)
    )
    result = sp.simplify(substituted.doit())
    target = sp.gamma(1 + 1 / r) * N ** (1 - 1 / r)
    symbolic_check = sp.simplify(sp.gammasimp(result - target)) == 0
    concrete = {}
    for k in concrete_r:
        direct = N * sp.integrate(sp.exp(-N * x**k), (x, 0, sp.oo))
        concrete[int(k)] = sp.simplify(sp.gammasimp(direct - target.subs(r, k))) == 0
    return GammaDerivation(
        series, integral, substituted, result, target, bool(symbolic_check), concrete
    )


@dataclass(frozen=True)
class RStarDerivation:
    """Asymptotic solution of ``Gamma(1 + 1/r) N^(-1/r) = 1/2`` for ``r``.

    Attributes
    ----------
    equation : sympy.Eq
        ``r ln 2 = ln N - r lnGamma(1 + 1/r)`` (logarithm of the condition, times ``r``).
    log_gamma_series : sympy.Expr
        ``r lnGamma(1 + 1/r) = -gamma + pi^2 / (12 r) + O(1/r^2)``.
    asymptotic_r : sympy.Expr
        ``log2 N + gamma / ln 2 - pi^2 / (12 r ln 2)``.
    constant : sympy.Expr
        ``EulerGamma / log(2)``.
    constant_value : float
        ``0.8327...``.
    numeric_checks : dict of int to (float, float)
        ``{N: (r_exact, log2 N + gamma/ln 2)}`` with ``r_exact`` the root of
        the exact condition (mpmath).

    Examples
    --------
    >>> from spare_theory.wipeout.symbolic import derive_r_star_constant
    >>> derivation = derive_r_star_constant(check_N=(2**20,))
    >>> derivation.constant, round(derivation.constant_value, 4), derivation.verified
    (EulerGamma/log(2), 0.8327, True)
    """

    equation: sp.Expr
    log_gamma_series: sp.Expr
    asymptotic_r: sp.Expr
    constant: sp.Expr
    constant_value: float
    numeric_checks: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """The exact root approaches ``log2 N + gamma/ln 2`` with an error below ``1.2 / r``.

        ``pi^2 / (12 ln 2) = 1.187`` bounds the ``O(1/r)`` term.
        """
        return all(
            abs(exact - approx) * exact <= 1.2 for exact, approx in self.numeric_checks.values()
        )


def derive_r_star_constant(
    check_N: Sequence[int] = (2**10, 2**20, 2**40, 2**80),
) -> RStarDerivation:
    """Solve ``Gamma(1 + 1/r) N^(-1/r) = 1/2``: ``r = log2 N + gamma/ln 2 + O(1/r)``.

    Taking logarithms and multiplying by ``r``:
    ``r ln 2 = ln N - r lnGamma(1 + 1/r)``.  With ``eps = 1/r``,
    ``lnGamma(1 + eps) = -gamma eps + pi^2 eps^2 / 12 + O(eps^3)``, so
    ``r lnGamma(1 + 1/r) = -gamma + pi^2 / (12 r) + O(1/r^2)`` and
    ``r = log2 N + gamma / ln 2 - pi^2 / (12 r ln 2) + O(1/r^2)``.

    Parameters
    ----------
    check_N : sequence of int
        Group counts at which the exact root is computed with mpmath.

    Returns
    -------
    RStarDerivation

    Examples
    --------
    >>> from spare_theory.wipeout.symbolic import derive_r_star_constant
    >>> derivation = derive_r_star_constant(check_N=(2**20,))
    >>> derivation.asymptotic_r
    log(N)/log(2) + EulerGamma/log(2) - pi**2/(12*r*log(2))
    >>> r_exact, r_approx = derivation.numeric_checks[2**20]
    >>> print(round(r_exact, 3), round(r_approx, 3))
    20.777 20.833
    """
    r, N, eps = sp.symbols("r N epsilon", positive=True)
    equation = sp.Eq(r * sp.log(2), sp.log(N) - r * sp.loggamma(1 + 1 / r))
    series = sp.series(sp.loggamma(1 + eps), eps, 0, 3).removeO()
    log_gamma_series = sp.expand(r * series.subs(eps, 1 / r))
    asymptotic_r = sp.expand((sp.log(N) - log_gamma_series) / sp.log(2))
    # The r-independent part beyond log2 N is the constant.
    constant = sp.simplify(asymptotic_r.subs(sp.log(N), 0).as_independent(r)[0])
    checks = {}
    for n in check_N:
        ln_n = mpmath.log(n)
        exact = mpmath.findroot(
            lambda s, ln_n=ln_n: s * mpmath.log(2) - ln_n + s * mpmath.loggamma(1 + 1 / s),
            ln_n / mpmath.log(2) + 1,
        )
        checks[int(n)] = (float(exact), float(ln_n / mpmath.log(2) + mpmath.euler / mpmath.log(2)))
    return RStarDerivation(
        equation, log_gamma_series, asymptotic_r, constant, float(constant), checks
    )
