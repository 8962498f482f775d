"""``spare-theory fit LOG``: lifetime and repair laws fitted to a failure log, lemons, bursts."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from ._common import Output, add_json, add_seed, integral

_LAWS = ("exponential", "weibull", "gamma", "lognormal")

_DESCRIPTION = """\
Reads a failure log (one row per fault: node, start, end; CSV, JSON lines, JSON,
Parquet, or the StepFun event format) and fits the law of a node's uptime (time
between failures) and of repair times by censored maximum likelihood: each law's
parameters with 95 % confidence intervals, log-likelihood, AIC and a
goodness-of-fit check (sup distance between Kaplan-Meier and the fitted
survival, with a bootstrap p-value that re-censors simulated samples at each
duration's censoring time).  Then the heterogeneity of per-node failure counts
(dispersion, and a two-class lemon fit), bursts of failures, and a survival plot.
LOG may be 'infinitehbd': the StepFun trace shipped with the package (400 GPU
servers, 348 days; nodes 400, times in days, window from day 0 unless given)."""

_EPILOG = """\
output (--json keys):
  log            nodes, faults, outages, failures, window_hours, exposure_hours,
                 failure_rate_per_node_hour, node_mtbf_hours
  uptimes        per law: parameters, confidence_intervals (95 %), log_likelihood,
                 aic, events, censored, gof_statistic (sup |KM - fit|),
                 gof_p_value (null unless bootstrapped), note
  repairs        the same for repair times
  best           the law of smallest AIC for uptimes and for repairs
  heterogeneity  dispersion_index (variance / mean of per-node counts),
                 pearson_dispersion and pearson_p_value (against one rate),
                 lemon_fraction, lemon_rate_factor, base_rate_per_hour, AICs
  bursts         failures within --burst-minutes of each other: share, bursts,
                 largest, sizes
  plot           the survival figure written (Kaplan-Meier with its 95 % band
                 against the fitted laws, log time axis)
Hours throughout; rates per node-hour."""


def configure_fit(parser: argparse.ArgumentParser) -> None:
    """``spare-theory fit``: its description and options."""
    parser.description = _DESCRIPTION
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("log", metavar="LOG", help="the log file, or 'infinitehbd'")
    parser.add_argument("--node", default="node", help="column of the node (default node)")
    parser.add_argument("--start", default="start", help="column of the fault start")
    parser.add_argument("--end", default="end", help="column of the fault end (empty: still down)")
    parser.add_argument(
        "--nodes",
        type=integral,
        default=None,
        help="nodes observed, those that never failed included (default: the log's)",
    )
    parser.add_argument(
        "--observed-from", default=None, help="start of the window (default the first time)"
    )
    parser.add_argument(
        "--observed-until", default=None, help="end of the window (default the last time)"
    )
    parser.add_argument(
        "--time-unit",
        default=None,
        choices=("seconds", "minutes", "hours", "days", "weeks"),
        help="unit of numeric times (default hours; days for infinitehbd)",
    )
    parser.add_argument(
        "--law",
        default="all",
        choices=("all", *_LAWS, "best"),
        help="the laws to fit (default all four, the AIC best marked)",
    )
    parser.add_argument(
        "--bootstraps",
        type=integral,
        default=50,
        help="bootstrap samples of the goodness-of-fit p-value, for the AIC-best law of "
        "uptimes and of repairs (or the one --law); 0: none (default 50)",
    )
    parser.add_argument(
        "--burst-minutes",
        type=float,
        default=5.0,
        help="failures closer than this are one burst (default 5)",
    )
    parser.add_argument(
        "--plot",
        default=None,
        help="survival figure to write (default ./<LOG name>_survival.png; 'none': no plot)",
    )
    add_seed(parser)
    add_json(parser)
    parser.set_defaults(handler=_run_fit)


def _window_bound(text: str | None) -> Any:
    """A number if the text is one, else the text (a date)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _load(args: argparse.Namespace) -> tuple[Any, str]:
    from ..traces.failure_log import INFINITEHBD_NODES, infinitehbd_trace_path, load_failure_log

    options: dict[str, Any] = {
        "node": args.node,
        "start": args.start,
        "end": args.end,
        "nodes": args.nodes,
        "observed_from": _window_bound(args.observed_from),
        "observed_until": _window_bound(args.observed_until),
        "time_unit": args.time_unit or "hours",
    }
    if args.log != "infinitehbd":
        return load_failure_log(args.log, **options), Path(args.log).name.split(".")[0]
    options["nodes"] = INFINITEHBD_NODES if args.nodes is None else args.nodes
    options["observed_from"] = 0.0 if args.observed_from is None else options["observed_from"]
    options["time_unit"] = args.time_unit or "days"
    return load_failure_log(infinitehbd_trace_path(), **options), "infinitehbd"


def _fit_data(fit: Any) -> dict[str, Any]:
    return {
        "law": fit.law,
        "parameters": fit.parameters,
        "confidence_intervals": {k: list(v) for k, v in fit.confidence_intervals.items()},
        "log_likelihood": fit.log_likelihood,
        "aic": fit.aic,
        "events": fit.events,
        "censored": fit.censored,
        "exposure_hours": fit.exposure_hours,
        "rate_upper_bound_per_hour": fit.rate_upper_bound_per_hour,
        "gof_statistic": fit.gof_statistic,
        "gof_p_value": fit.gof_p_value,
        "gof_bootstraps": fit.gof_bootstraps,
        "note": fit.note,
    }


def _fits(fit_one: Any, events: int, args: argparse.Namespace, bootstraps: int) -> list[Any]:
    """The laws fitted (those with enough events); the bootstrap for one law or the AIC best."""
    if args.law != "all":
        return [fit_one(args.law, bootstraps=bootstraps, seed=args.seed)]
    if events == 0:
        return [fit_one("exponential")]  # says that nothing failed, with the rate's bound
    fits = [fit_one(law) for law in _LAWS if events >= (1 if law == "exponential" else 2)]
    if bootstraps:
        index = min(range(len(fits)), key=lambda i: fits[i].aic)
        fits[index] = fit_one(fits[index].law, bootstraps=bootstraps, seed=args.seed)
    return fits


def _section(title: str, fits: list[Any]) -> tuple[list[str], str | None]:
    lines = ["", title, *(fit.summary() for fit in fits)]
    fitted = [fit for fit in fits if fit.failed]
    if len(fitted) < 2:
        return lines, fitted[0].law if fitted else None
    best = min(fitted, key=lambda fit: fit.aic)
    table = "  ".join(f"{fit.law} {fit.aic:.6g}" for fit in fitted)
    return [*lines, f"AIC: {table}  -> best {best.law}"], best.law


def _run_fit(args: argparse.Namespace) -> Output:
    from .._validation import as_count, as_seed_sequence

    as_seed_sequence(args.seed, "--seed")
    bootstraps = as_count(args.bootstraps, "--bootstraps", minimum=0)
    log, stem = _load(args)
    repair_durations, repaired = log.repairs()
    uptime_fits = _fits(log.fit_lifetime, log.failures, args, bootstraps)
    repair_fits = (
        _fits(log.fit_repair, int(repaired.sum()), args, bootstraps)
        if repair_durations.size
        else []
    )
    # The summary is one long sentence per line: wrapped to the terminal's 100 columns.
    lines = [
        wrapped
        for line in log.summary().splitlines()
        for wrapped in textwrap.wrap(line, 100, subsequent_indent="  ") or [""]
    ]
    best: dict[str, str | None] = {}
    part, best["uptimes"] = _section("uptimes (time between a node's failures)", uptime_fits)
    lines += part
    if repair_fits:
        part, best["repairs"] = _section("repair times", repair_fits)
        lines += part
    data: dict[str, Any] = {
        "log": {
            "nodes": log.node_count,
            "faults": log.faults,
            "outages": log.outage_count,
            "failures": log.failures,
            "window_hours": log.window_hours,
            "exposure_hours": log.exposure_hours,
            "failure_rate_per_node_hour": log.failure_rate,
            "node_mtbf_hours": log.node_mtbf_hours if log.failures else None,
        },
        "uptimes": {fit.law: _fit_data(fit) for fit in uptime_fits},
        "repairs": {fit.law: _fit_data(fit) for fit in repair_fits},
        "best": best,
    }
    if log.failures and log.node_count > 1:
        heterogeneity = log.heterogeneity()
        lines += ["", heterogeneity.summary()]
        data["heterogeneity"] = vars(heterogeneity)
    bursts = log.bursts(window_minutes=args.burst_minutes)
    lines += ["", bursts.summary()]
    data["bursts"] = {**vars(bursts), "sizes": {str(k): v for k, v in bursts.sizes.items()}}
    if args.plot != "none":
        from ..reports.failure_log import survival_figure

        target = Path(args.plot) if args.plot else Path(f"{stem}_survival.png")
        name = target.name.removesuffix(".png")
        path = survival_figure(log, uptime_fits, repair_fits, target.parent, name)
        data["plot"] = str(path)
        lines += ["", f"wrote {path}"]
    return Output("\n".join(lines), data)
