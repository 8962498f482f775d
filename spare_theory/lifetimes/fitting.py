"""Lifetime laws fitted to right-censored durations: scipy's censored maximum likelihood.

A failure log gives durations, some *observed* (the node failed, the repair
ended) and some *right-censored* (still up, still in repair when the log
ends: the duration is at least the recorded one).  Censored maximum
likelihood maximises

    log L(theta) = sum_observed log f(t_i; theta) + sum_censored log S(t_i; theta)

over the parameters of a law (``S = 1 - F``, location fixed at 0), which is
what ``dist.fit(scipy.stats.CensoredData(...), floc=0)`` does; this module
calls it and adds what a plan needs:

- **Laws**: ``"exponential"`` (closed form: the rate is exactly
  ``events / exposure``, exposure the sum of all durations), ``"weibull"``,
  ``"lognormal"`` and ``"gamma"`` (``scipy.stats.weibull_min``, ``lognorm``,
  ``gamma``); ``"best"`` fits each and keeps the smallest AIC
  ``2 k - 2 log L``.
- **Optimiser**: scipy's ``fit`` with its ``optimizer`` hook set to BFGS on
  the *logarithms* of the parameters (scale-free, so shape ``0.39`` and scale
  ``8000 h`` converge alike) from scipy's default start; above 20,000
  durations it first fits every ``k``-th sorted one (at most 20,000) and
  polishes on all from there, BFGS seeded with that fit's curvature, which
  keeps a million durations to seconds.  Results equal ``dist.fit`` with
  scipy's default Nelder-Mead run to convergence to about 1e-8 relative.
- **Confidence intervals** (95 %): Wald intervals on the log of each
  parameter, ``theta exp(+-1.96 se)``, with ``se`` from the observed
  information (minus the Hessian of ``log L`` in the log parameters, by
  ``scipy.differentiate.hessian``); the exponential rate's interval is the
  exact chi-square (Garwood) one, ``chi2(0.025; 2d) / 2T`` to
  ``chi2(0.975; 2d + 2) / 2T`` for ``d`` events in exposure ``T``.
- **Goodness of fit** respecting censoring: the sup distance ``D`` between
  the Kaplan-Meier estimate (``scipy.stats.ecdf``) and the fitted survival
  up to the largest duration, with a parametric-bootstrap p-value: ``B``
  samples drawn from the fitted law, each duration censored at its own
  censoring time (``censor_at``; by default a censored duration's own value
  and, for an observed one, a draw from the reverse Kaplan-Meier law of the
  censoring times given that it exceeds the duration), refitted, and
  ``p = (1 + #{D* >= D}) / (B + 1)``.
- **Nothing failed** (no observed duration): no law is fitted; the result
  says so and gives the rate's exact one-sided 95 % upper bound
  ``chi2(0.95; 2) / 2T = -ln(0.05) / T ~ 3 / T`` ("rule of three").
- **Zero durations**: a duration recorded as 0 (a repair shorter than the
  log's time resolution) is left-censored at ``resolution`` (it lasted at
  most that long); laws on ``(0, inf)`` cannot fit an exact 0.

The module is long (about 680 lines) because it is one idea: the fit, its
intervals, its goodness of fit and its bootstrap share the checked
durations, the optimiser hook and the observed information (the bootstrap
refits with the MLE's internals, so a Kaplan-Meier / goodness-of-fit module
would have to import them, or make them public, across modules); about 40 %
is docstrings.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import differentiate, optimize, stats

from .._validation import as_choice, as_count, as_real, as_real_array, as_seed_sequence, child_seed

__all__ = ["LIFETIME_FIT_LAWS", "LifetimeFit", "fit_lifetime_law", "kaplan_meier"]

#: Laws :func:`fit_lifetime_law` fits (and ``"best"``), fewest parameters first.
LIFETIME_FIT_LAWS = ("exponential", "weibull", "gamma", "lognormal")

# scipy family and parameter names (shape, scale) of each two-parameter law.
_FAMILIES: dict[str, tuple[Any, tuple[str, ...]]] = {
    "weibull": (stats.weibull_min, ("shape", "scale_hours")),
    "gamma": (stats.gamma, ("shape", "scale_hours")),
    "lognormal": (stats.lognorm, ("sigma", "scale_hours")),
}
_LEVEL = 0.95
_Z = float(stats.norm.ppf(0.5 + _LEVEL / 2))
# Above this many durations the start comes from a fit to every k-th sorted one (<= _THIN).
_THIN = 20_000
# Step of the numerical Hessian in the log parameters (central differences, error ~ step^2).
_HESSIAN_STEP = 1e-3

CI_METHOD = (
    "95 % Wald intervals on the log of each parameter from the observed information "
    "(scipy.differentiate.hessian of the censored log-likelihood); exponential: exact "
    "chi-square (Garwood) interval of the rate"
)
GOF_METHOD = (
    "D = sup |Kaplan-Meier - fitted survival| up to the largest duration; p-value by "
    "parametric bootstrap (samples from the fitted law re-censored at each duration's "
    "censoring time, refitted)"
)


@dataclass(frozen=True)
class LifetimeFit:
    """A lifetime law fitted to censored durations (:func:`fit_lifetime_law`), in hours.

    Attributes
    ----------
    law : str
        ``"exponential"``, ``"weibull"``, ``"gamma"`` or ``"lognormal"``.
    distribution : frozen scipy.stats distribution or None
        The fitted law, durations in hours (``None`` when nothing failed).
    parameters : dict of str to float
        ``{"rate_per_hour"}`` (exponential), ``{"shape", "scale_hours"}``
        (Weibull, gamma), ``{"sigma", "scale_hours"}`` (lognormal: the median
        is ``scale_hours``); empty when nothing failed.
    confidence_intervals : dict of str to (float, float)
        95 % interval of each parameter (:data:`CI_METHOD`); ``(0, inf)``
        when the observed information is singular (see ``note``).
    log_likelihood, aic : float or None
        Censored log-likelihood at the fit and ``2 k - 2 log L``.
    events, censored : int
        Observed and right-censored durations.
    exposure_hours : float
        Sum of all durations, hours.
    rate_upper_bound_per_hour : float
        Exact one-sided 95 % upper bound of an exponential rate,
        ``chi2(0.95; 2 events + 2) / (2 exposure)``.
    gof_statistic : float or None
        Sup distance between Kaplan-Meier and the fitted survival.
    gof_p_value : float or None
        Its bootstrap p-value (``None`` without bootstraps).
    gof_bootstraps : int
        Bootstrap samples behind ``gof_p_value``.
    aic_table : dict of str to float
        AIC of every law tried (``law="best"``; else this law only).
    note : str
        How the law was chosen, or why nothing was fitted.

    Examples
    --------
    >>> fit = fit_lifetime_law([2.0, 3.0, 5.0, 10.0], [True, True, True, False],
    ...                        law="exponential")
    >>> fit.parameters["rate_per_hour"] == 3 / 20.0, fit.events, fit.censored
    (True, 3, 1)
    >>> [round(x, 4) for x in fit.confidence_intervals["rate_per_hour"]]
    [0.0309, 0.4383]
    """

    law: str
    distribution: Any
    parameters: dict[str, float]
    confidence_intervals: dict[str, tuple[float, float]]
    log_likelihood: float | None
    aic: float | None
    events: int
    censored: int
    exposure_hours: float
    rate_upper_bound_per_hour: float
    gof_statistic: float | None
    gof_p_value: float | None
    gof_bootstraps: int
    aic_table: dict[str, float]
    note: str

    @property
    def failed(self) -> bool:
        """Whether anything failed (else no law was fitted)."""
        return self.events > 0

    @property
    def mean_hours(self) -> float:
        """Mean of the fitted law, hours (``inf`` when nothing failed)."""
        return float(self.distribution.mean()) if self.failed else math.inf

    def summary(self) -> str:
        """The fit as text: parameters with intervals, likelihood, AIC, goodness of fit."""
        head = f"{self.law} fit: {self.events} events, {self.censored} censored, "
        head += f"exposure {self.exposure_hours:.6g} h"
        if not self.failed:
            return f"{head}\n  {self.note}"
        lines = [head]
        for name, value in self.parameters.items():
            low, high = self.confidence_intervals[name]
            lines.append(f"  {name:<14} {value:.6g}   95 % CI [{low:.6g}, {high:.6g}]")
        lines.append(f"  mean {self.mean_hours:.6g} h, log-likelihood {self.log_likelihood:.6g}")
        lines.append(f"  AIC {self.aic:.6g}")
        if len(self.aic_table) > 1:
            table = ", ".join(f"{law} {aic:.6g}" for law, aic in self.aic_table.items())
            lines.append(f"  AIC of each law: {table}")
        gof = f"  sup |KM - fit| = {self.gof_statistic:.4g}"
        if self.gof_p_value is None:
            gof += " (p-value not computed: bootstraps=0)"
        else:
            gof += f", bootstrap p = {self.gof_p_value:.3g} ({self.gof_bootstraps} samples)"
        lines.append(gof)
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)

    def print_summary(self) -> None:
        """Print :meth:`summary`."""
        print(self.summary())


@dataclass(frozen=True)
class _Durations:
    """Checked durations: values, observed flags, left-censored zeros, censoring times."""

    x: np.ndarray
    observed: np.ndarray
    left: np.ndarray  # observed zeros, left-censored at `resolution`
    resolution: float
    censor_at: np.ndarray | None

    @property
    def events(self) -> int:
        return int(self.observed.sum())

    @functools.cached_property
    def exact(self) -> np.ndarray:
        return self.x[self.observed & ~self.left]

    @functools.cached_property
    def right(self) -> np.ndarray:
        return self.x[~self.observed]

    def censored_data(self) -> Any:
        left = np.full(int(self.left.sum()), self.resolution)
        return stats.CensoredData(uncensored=self.exact, left=left, right=self.right)

    def log_likelihood(self, law: Any) -> float:
        total = law.logpdf(self.exact).sum() + law.logsf(self.right).sum()
        if self.left.any():
            total += self.left.sum() * law.logcdf(self.resolution)
        return float(total)


def _durations(
    durations: npt.ArrayLike,
    observed: npt.ArrayLike | None,
    censor_at: npt.ArrayLike | None,
    resolution: float | None,
) -> _Durations:
    x = as_real_array(durations, "durations", minimum=0.0)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"durations must be a non-empty 1-d array, got shape {x.shape}")
    if observed is None:
        seen = np.ones(x.size, dtype=bool)
    else:
        flags = np.asarray(observed)
        if flags.shape != x.shape or not (
            flags.dtype == bool or (flags.dtype.kind in "iu" and np.isin(flags, (0, 1)).all())
        ):
            raise ValueError(
                f"observed must be booleans of the shape of durations {x.shape}, "
                f"got {flags.dtype} of shape {flags.shape}"
            )
        seen = flags.astype(bool)
    zeros = x == 0.0
    if (zeros & ~seen).any():
        i = int(np.flatnonzero(zeros & ~seen)[0])
        raise ValueError(f"durations[{i}] is censored at 0: it says nothing; leave it out")
    res = 0.0
    if zeros.any():
        if resolution is None:
            i = int(np.flatnonzero(zeros)[0])
            raise ValueError(
                f"durations[{i}] is 0: give resolution (the log's time step, hours) so that "
                "zero durations count as shorter than it"
            )
        res = as_real(resolution, "resolution", minimum=0.0, strict_minimum=True)
    cens = None
    if censor_at is not None:
        cens = as_real_array(censor_at, "censor_at", minimum=0.0)
        if cens.shape != x.shape:
            raise ValueError(f"censor_at must have the shape of durations {x.shape}")
        bad = (cens < x) | (~seen & (cens != x))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"censor_at[{i}] = {cens[i]} must be >= durations[{i}] = {x[i]} "
                "(and equal to it for a censored duration)"
            )
    return _Durations(x, seen, zeros, res, cens)


def kaplan_meier(
    durations: npt.ArrayLike,
    observed: npt.ArrayLike | None = None,
    *,
    resolution: float | None = None,
) -> Any:
    """The Kaplan-Meier estimate of the survival of right-censored durations.

    ``scipy.stats.ecdf`` on ``CensoredData``: ``S(t) = prod_{t_j <= t} (1 -
    d_j / n_j)`` over the event times ``t_j`` (``d_j`` events among the
    ``n_j`` durations still at risk).  Zero durations are placed at
    ``resolution`` (they ended before it), so the estimate is exact from
    ``resolution`` on.

    Parameters
    ----------
    durations : array_like
        Durations, hours, ``>= 0``.
    observed : array_like of bool, optional
        ``False`` where right-censored (default: all observed).
    resolution : float, optional
        Time step of the record, hours; required when a duration is 0.

    Returns
    -------
    scipy.stats._survival.ECDFResult
        ``.sf.quantiles``, ``.sf.probabilities``, ``.sf.evaluate(t)`` and
        ``.sf.confidence_interval(0.95)`` (Greenwood).

    Raises
    ------
    ValueError
        Naming ``durations``, ``observed`` or ``resolution``.

    Examples
    --------
    >>> km = kaplan_meier([1.0, 2.0, 2.0, 5.0, 3.0], [True, True, True, True, False])
    >>> km.sf.evaluate([1.5, 2.5, 6.0]).round(3).tolist()
    [0.8, 0.4, 0.0]
    """
    data = _durations(durations, observed, None, resolution)
    return _kaplan_meier(data)


def _kaplan_meier(data: _Durations) -> Any:
    events = np.where(data.left, data.resolution, data.x)[data.observed]
    return stats.ecdf(stats.CensoredData(uncensored=events, right=data.right))


def _sup_distance(km: Any, law: Any) -> float:
    times, after = km.sf.quantiles, km.sf.probabilities
    before = np.concatenate(([1.0], after[:-1]))
    fitted = law.sf(times)
    return float(max(np.abs(before - fitted).max(), np.abs(after - fitted).max()))


def _log_space_bfgs(curvature: np.ndarray | None) -> Any:
    """``dist.fit``'s optimizer hook: BFGS on the log parameters of the per-duration objective.

    ``curvature`` (the per-duration observed information in the log
    parameters, from a nearby fit) seeds BFGS's inverse Hessian, which saves
    most iterations when the start is close.
    """

    def optimizer(func: Any, x0: Any, args: tuple = (), disp: int = 0) -> np.ndarray:
        size = max(len(args[0]), 1)

        def objective(phi: np.ndarray) -> float:
            return float(func(np.exp(phi), *args)) / size

        options: dict[str, Any] = {"gtol": 1e-9}
        if curvature is not None:
            inverse = np.linalg.inv(curvature)
            options["hess_inv0"] = (inverse + inverse.T) / 2  # scipy wants it exactly symmetric
        result = optimize.minimize(
            objective, np.log(x0), method="BFGS", jac="3-point", options=options
        )
        return np.exp(result.x)

    return optimizer


def _mle(
    law: str,
    data: _Durations,
    start: tuple[float, ...] | None,
    curvature: np.ndarray | None = None,
) -> tuple[float, ...]:
    """``(shape, scale)`` (or ``(scale,)``) of scipy's censored MLE of ``law``.

    Without ``start``: from scipy's default start, on every ``k``-th sorted
    duration first when there are more than ``_THIN`` (then polished on all,
    BFGS seeded with the thinned sample's curvature).
    """
    family = _FAMILIES[law][0] if law in _FAMILIES else stats.expon
    with np.errstate(all="ignore"):
        if start is None and data.x.size > _THIN:
            order = np.argsort(data.x, kind="stable")[:: math.ceil(data.x.size / _THIN)]
            sample = _Durations(
                data.x[order], data.observed[order], data.left[order], data.resolution, None
            )
            first = family.fit(sample.censored_data(), floc=0, optimizer=_log_space_bfgs(None))
            start = (*first[:-2], float(first[-1]))
            information = _information(law, start, sample)
            curvature = None if information is None else information / sample.x.size
        if start is None:
            fitted = family.fit(data.censored_data(), floc=0, optimizer=_log_space_bfgs(None))
        else:
            fitted = family.fit(
                data.censored_data(),
                *start[:-1],
                floc=0,
                scale=start[-1],
                optimizer=_log_space_bfgs(curvature),
            )
    return (*fitted[:-2], float(fitted[-1]))


def _frozen(law: str, params: tuple[float, ...]) -> Any:
    if law == "exponential":
        return stats.expon(scale=params[-1])
    return _FAMILIES[law][0](*params[:-1], scale=params[-1])


def _information(law: str, params: tuple[float, ...], data: _Durations) -> np.ndarray | None:
    """Observed information in the log parameters (``None`` unless positive definite)."""
    seen: dict[tuple[float, ...], float] = {}

    def log_likelihood(phi: np.ndarray) -> np.ndarray:
        out = np.empty(phi.shape[1:])
        for index in np.ndindex(out.shape):
            point = tuple(float(v) for v in phi[(slice(None), *index)])
            if point not in seen:  # the stencils of the Hessian's entries share points
                seen[point] = data.log_likelihood(_frozen(law, tuple(np.exp(point))))
            out[index] = seen[point]
        return out

    with np.errstate(all="ignore"):
        hess = differentiate.hessian(
            log_likelihood, np.log(params), order=2, maxiter=1, initial_step=_HESSIAN_STEP
        ).ddf
    hess = np.asarray(hess, dtype=float).reshape(len(params), len(params))
    information = -(hess + hess.T) / 2  # the two mixed differences differ by rounding
    if np.all(np.isfinite(information)) and np.all(np.linalg.eigvalsh(information) > 0):
        return information
    return None


def _intervals(
    law: str, params: tuple[float, ...], data: _Durations
) -> tuple[list[tuple[float, float]], str]:
    """Wald intervals on the log parameters from the observed information."""
    information = _information(law, params, data)
    if information is None:
        note = "observed information not positive definite: parameters not identified"
        return [(0.0, math.inf)] * len(params), note
    se = np.sqrt(np.diag(np.linalg.inv(information)))
    return [(p * math.exp(-_Z * s), p * math.exp(_Z * s)) for p, s in zip(params, se)], ""


def _fit_one(
    law: str,
    data: _Durations,
    start: tuple[float, ...] | None = None,
    curvature: np.ndarray | None = None,
) -> Any:
    """``(params, frozen law, log L)``: the closed form or scipy's censored MLE."""
    if law == "exponential" and not data.left.any():
        exposure = float(data.x.sum())
        frozen = stats.expon(scale=exposure / data.events)
        loglik = data.events * math.log(data.events / exposure) - data.events
        return (exposure / data.events,), frozen, loglik
    params = _mle(law, data, start, curvature)
    frozen = _frozen(law, params)
    return params, frozen, data.log_likelihood(frozen)


def _censoring_times(data: _Durations, rng: np.random.Generator) -> np.ndarray:
    """Each duration's censoring time: given, its own (censored), or a reverse-KM draw."""
    if data.censor_at is not None:
        return data.censor_at
    out = np.where(data.observed, np.inf, data.x)
    if data.observed.all():
        return out
    # Reverse Kaplan-Meier: the censoring times are the events, the failures censor them.
    reverse = stats.ecdf(
        stats.CensoredData(uncensored=data.x[~data.observed], right=data.x[data.observed])
    ).sf
    times, probs = reverse.quantiles, reverse.probabilities
    target = rng.random(data.events) * reverse.evaluate(data.x[data.observed])
    # The first time whose survival is <= target (inf where the estimate never gets there).
    index = np.searchsorted(-probs, -target, side="left")
    drawn = np.append(times, np.inf)[index]
    out[data.observed] = drawn
    return out


def _bootstrap_p(
    law: str,
    params: tuple[float, ...],
    data: _Durations,
    statistic: float,
    bootstraps: int,
    seed: np.random.SeedSequence,
) -> float:
    frozen = _frozen(law, params)
    information = None if law == "exponential" else _information(law, params, data)
    curvature = None if information is None else information / data.x.size
    exceed = 0
    for b in range(bootstraps):
        rng = np.random.default_rng(child_seed(seed, b))
        lifetimes = frozen.rvs(size=data.x.size, random_state=rng)
        limit = _censoring_times(data, rng)
        seen = lifetimes <= limit
        x = np.where(seen, lifetimes, limit)
        left = seen & (x < data.resolution)
        sample = _Durations(np.where(left, 0.0, x), seen, left, data.resolution, None)
        if sample.events < len(params):
            exceed += 1  # cannot refit: counted as a worse fit (conservative)
            continue
        _, refit, _ = _fit_one(law, sample, params, curvature)
        exceed += _sup_distance(_kaplan_meier(sample), refit) >= statistic
    return (1 + exceed) / (bootstraps + 1)


def _rate_upper_bound(events: int, exposure: float, *, sides: int) -> float:
    """Exact upper bound of a Poisson rate: ``chi2(q; 2 d + 2) / 2T``, one- or two-sided 95 %."""
    q = _LEVEL if sides == 1 else (1 + _LEVEL) / 2
    return float(stats.chi2.ppf(q, 2 * events + 2) / (2 * exposure))


def _fit_law(law: str, data: _Durations) -> tuple[LifetimeFit, tuple[float, ...]]:
    """The fit of ``law`` and its scipy parameters (shapes, scale)."""
    exposure = float(data.x.sum())
    events, censored = data.events, int(data.x.size - data.events)
    params, frozen, loglik = _fit_one(law, data)
    if law == "exponential" and not data.left.any():
        # Exact: the event count is Poisson given the exposure (Garwood interval).
        parameters = {"rate_per_hour": events / exposure}
        low = stats.chi2.ppf((1 - _LEVEL) / 2, 2 * events) / (2 * exposure)
        intervals = {"rate_per_hour": (float(low), _rate_upper_bound(events, exposure, sides=2))}
        note = ""
    elif law == "exponential":
        bounds, note = _intervals(law, params, data)
        scale_low, scale_high = bounds[0]
        parameters = {"rate_per_hour": 1.0 / params[0]}
        intervals = {"rate_per_hour": (1.0 / scale_high, 1.0 / scale_low)}
    else:
        names = _FAMILIES[law][1]
        parameters = dict(zip(names, (float(p) for p in params)))
        bounds, note = _intervals(law, params, data)
        intervals = dict(zip(names, bounds))
    aic = 2 * len(params) - 2 * loglik
    fit = LifetimeFit(
        law=law,
        distribution=frozen,
        parameters=parameters,
        confidence_intervals=intervals,
        log_likelihood=loglik,
        aic=aic,
        events=events,
        censored=censored,
        exposure_hours=exposure,
        rate_upper_bound_per_hour=_rate_upper_bound(events, exposure, sides=1),
        gof_statistic=_sup_distance(_kaplan_meier(data), frozen),
        gof_p_value=None,
        gof_bootstraps=0,
        aic_table={law: aic},
        note=note,
    )
    return fit, params


def _best(data: _Durations) -> tuple[LifetimeFit, tuple[float, ...]]:
    fits = [
        _fit_law(law, data)
        for law in LIFETIME_FIT_LAWS
        if data.events >= (1 if law == "exponential" else 2)
    ]
    table = {fit.law: fit.aic_table[fit.law] for fit, _ in fits}
    best, params = min(fits, key=lambda pair: table[pair[0].law])  # first of equals: fewer params
    close = [law for law, aic in table.items() if law != best.law and aic - table[best.law] < 2]
    note = f"best of {', '.join(table)} by AIC (smallest wins; exact ties go to fewer parameters)"
    if close:
        note += f"; {', '.join(close)} within 2 AIC units: about as well supported"
    note = "; ".join(filter(None, [note, best.note]))
    return dataclasses.replace(best, aic_table=table, note=note), params


def fit_lifetime_law(
    durations: npt.ArrayLike,
    observed: npt.ArrayLike | None = None,
    *,
    law: str = "weibull",
    censor_at: npt.ArrayLike | None = None,
    resolution: float | None = None,
    bootstraps: int = 0,
    seed: int | np.random.SeedSequence | None = None,
) -> LifetimeFit:
    """Fit a lifetime law to right-censored durations by scipy's censored maximum likelihood.

    Maximises ``sum_observed log f(t_i) + sum_censored log S(t_i)`` with
    ``scipy.stats.<law>.fit(CensoredData(...), floc=0)`` (the exponential
    in closed form: rate ``= events / sum of durations``, exactly); see the
    module docstring for the optimiser, the confidence intervals, the
    goodness of fit, zero durations and the outcome when nothing failed.

    Parameters
    ----------
    durations : array_like
        Durations, hours, ``>= 0`` (1-d, not empty).
    observed : array_like of bool, optional
        ``False`` where the duration is right-censored (default: all observed).
    law : {"weibull", "exponential", "gamma", "lognormal", "best"}
        The law; ``"best"``: the smallest AIC among those with enough events
        (two-parameter laws need two), ties explained in ``note``.
    censor_at : array_like, optional
        Each duration's censoring time (``>=`` it; equal for censored ones),
        hours, for the bootstrap; default in the module docstring.
    resolution : float, optional
        Time step of the record, hours; zero durations are left-censored at
        it (required when there are some).
    bootstraps : int
        Bootstrap samples for the goodness-of-fit p-value, ``>= 0``
        (default 0: statistic only).
    seed : int or numpy.random.SeedSequence, optional
        Required with ``bootstraps > 0``; sample ``b`` uses
        ``child_seed(seed, b)``.

    Returns
    -------
    LifetimeFit

    Raises
    ------
    ValueError
        Naming the argument: negative, non-finite or empty durations,
        ``observed`` of another shape, a censored zero, a zero without
        ``resolution``, an unknown law, a two-parameter law with fewer than
        two events, ``bootstraps > 0`` without a seed.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> rng = np.random.default_rng(1)
    >>> t = stats.weibull_min(0.5, scale=100.0).rvs(2000, random_state=rng)
    >>> fit = fit_lifetime_law(np.minimum(t, 400.0), t < 400.0)
    >>> {k: round(v, 2) for k, v in fit.parameters.items()}
    {'shape': 0.51, 'scale_hours': 100.49}

    Nothing failed: no law, the rate's upper bound instead.

    >>> empty = fit_lifetime_law([5.0, 7.0], [False, False])
    >>> empty.distribution, round(empty.rate_upper_bound_per_hour, 4)
    (None, 0.2496)
    >>> empty.note[:58]
    'nothing failed in 12 hours of exposure: the failure rate i'
    """
    law = as_choice(law, "law", (*LIFETIME_FIT_LAWS, "best"))
    data = _durations(durations, observed, censor_at, resolution)
    bootstraps = as_count(bootstraps, "bootstraps", minimum=0)
    if bootstraps and seed is None:
        raise ValueError("seed is required when bootstraps > 0 (every random result is seeded)")
    exposure = float(data.x.sum())
    if data.events == 0:
        bound = _rate_upper_bound(0, exposure, sides=1)
        return LifetimeFit(
            law=law,
            distribution=None,
            parameters={},
            confidence_intervals={},
            log_likelihood=None,
            aic=None,
            events=0,
            censored=int(data.x.size),
            exposure_hours=exposure,
            rate_upper_bound_per_hour=bound,
            gof_statistic=None,
            gof_p_value=None,
            gof_bootstraps=0,
            aic_table={},
            note=f"nothing failed in {exposure:.6g} hours of exposure: the failure rate is "
            f"below {bound:.3g} per hour (exact one-sided 95 % bound -ln(0.05) / exposure)",
        )
    if law == "best":
        fit, params = _best(data)
    else:
        if law != "exponential" and data.events < 2:
            raise ValueError(
                f"law={law!r} needs at least 2 observed durations for its 2 parameters, "
                f"got {data.events}; law='exponential' needs one"
            )
        fit, params = _fit_law(law, data)
    if not bootstraps:
        return fit
    statistic = _sup_distance(_kaplan_meier(data), fit.distribution)
    p = _bootstrap_p(fit.law, params, data, statistic, bootstraps, as_seed_sequence(seed))
    return dataclasses.replace(fit, gof_p_value=p, gof_bootstraps=bootstraps)
