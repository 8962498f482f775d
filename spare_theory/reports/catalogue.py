"""The reports as data: what each writes, the function that computes it, what it costs.

Each entry of :data:`REPORTS` is a :class:`Report`; its function (``write``
of its module) takes one :class:`ReportOptions` and returns the files it
wrote.  :func:`spare_theory.reports.reproduce.reproduce` runs them, and the
command line makes one ``spare-theory table NAME`` of each.  This module
imports no report: the function is named, not held, so that the command
line lists the reports without loading the models behind them.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the command line lists the reports without numpy
    import concurrent.futures

    import numpy as np

__all__ = ["REPORTS", "Report", "ReportOptions"]


@dataclasses.dataclass(frozen=True)
class ReportOptions:
    """How a report runs: where it writes, at which size, where its cells run, its seed.

    Attributes
    ----------
    outdir : pathlib.Path
        Folder that receives ``tables/`` and ``figures/`` (created if needed).
    quick : bool
        Small grids and sample sizes (seconds per report).
    executor : concurrent.futures.Executor or None
        Where the cells run (``None``: serially).
    seed : int or numpy.random.SeedSequence
        Root seed of the report's simulations (deterministic reports ignore it).
    progress : bool
        Show progress bars.
    full : bool
        The largest size, for a report that has one (:attr:`Report.full`).

    Examples
    --------
    >>> ReportOptions("out", quick=True).outdir
    PosixPath('out')
    """

    outdir: Path
    quick: bool = False
    executor: concurrent.futures.Executor | None = None
    seed: int | np.random.SeedSequence = 0
    progress: bool = True
    full: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "outdir", Path(self.outdir))


@dataclasses.dataclass(frozen=True)
class Report:
    """One report: its tables and figures, the function that writes them, its cost.

    Attributes
    ----------
    name : str
        The report (``spare-theory table NAME``, ``reproduce --only NAME``).
    compute : str
        ``module.function`` under :mod:`spare_theory.reports` that writes the
        files: ``function(options: ReportOptions) -> list[pathlib.Path]``.
    tables : tuple of str
        Tables it writes, as ``outdir/tables/<name>.csv`` and ``.md``
        (``quick`` may leave some out).
    figures : tuple of str
        Figures it writes, as ``outdir/figures/<name>.png``.
    cost_seconds : float
        Rough CPU seconds at default sizes on the README"s 2-core machine;
        only the order matters: reports side by side start longest first.
    help : str
        One line for ``spare-theory table --help``.
    description : str
        What the files hold, for ``spare-theory table NAME --help``.
    full : str or None
        Help of ``--full`` for a report with a size beyond the default.

    Examples
    --------
    >>> REPORTS["mu"].tables, REPORTS["mu"].figures
    (('mu_error',), ('endurable_failures',))
    >>> REPORTS["mu"].files("out")[-1]
    PosixPath('out/figures/endurable_failures.png')
    """

    name: str
    compute: str
    tables: tuple[str, ...]
    figures: tuple[str, ...]
    cost_seconds: float
    help: str
    description: str
    full: str | None = None

    def files(self, outdir: str | os.PathLike[str]) -> list[Path]:
        """Every file the report may write under ``outdir``: tables (CSV, Markdown), figures."""
        outdir = Path(outdir)
        tables = [outdir / "tables" / f"{t}.{ext}" for t in self.tables for ext in ("csv", "md")]
        return [*tables, *(outdir / "figures" / f"{f}.png" for f in self.figures)]

    def function(self) -> Callable[[ReportOptions], list[Path]]:
        """The function that writes the report (its module imported now)."""
        module, name = self.compute.rsplit(".", 1)
        found: Any = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        return found

    def run(self, options: ReportOptions) -> list[Path]:
        """Write the report; the files written, each among :meth:`files`.

        Raises
        ------
        ValueError
            When ``options.full`` asks for a size the report does not have.
        RuntimeError
            When the report wrote a file it does not declare.
        """
        if options.full and self.full is None:
            raise ValueError(f"full: the {self.name} report has no full size")
        if options.full and options.quick:
            raise ValueError("full and quick exclude each other")
        written = [Path(p) for p in self.function()(options)]
        declared = self.files(options.outdir)
        undeclared = [str(p) for p in written if p not in declared]
        if undeclared:
            raise RuntimeError(f"the {self.name} report wrote undeclared files {undeclared}")
        return written


#: Every report by name, in the order ``reproduce`` lists them.
REPORTS: dict[str, Report] = {
    report.name: report
    for report in (
        Report(
            name="mu",
            compute="mu.write",
            tables=("mu_error",),
            figures=("endurable_failures",),
            cost_seconds=30.0,
            help="mu(N, r) error table: simulation against the Gamma and sharp forms",
            description="Writes OUTDIR/tables/mu_error.{csv,md} and "
            "OUTDIR/figures/endurable_failures.png.",
        ),
        Report(
            name="overhead",
            compute="overhead.write",
            tables=("overhead_error", "placement_ablation"),
            figures=("overhead", "overhead_trajectory", "placement_ablation"),
            cost_seconds=32.0,
            help="overhead closed forms versus simulation, placement ablation",
            description="Writes OUTDIR/tables/overhead_error.{csv,md}, "
            "placement_ablation.{csv,md} and the figures overhead, "
            "overhead_trajectory and placement_ablation.",
        ),
        Report(
            name="training",
            compute="training.write",
            tables=(
                "training_error",
                "r_star",
                "headline",
                "headline_economics",
                "training_sensitivity",
            ),
            figures=("time_to_train_vs_r", "headline"),
            cost_seconds=45.0,
            help="time to train: model vs simulation, r*, headline (also in dollars and MWh)",
            description="Writes OUTDIR/tables/training_error, r_star, headline, "
            "headline_economics (the headline's plans in hours, dollars and MWh) and "
            "training_sensitivity (.csv, .md) and the figures time_to_train_vs_r "
            "and headline.",
        ),
        Report(
            name="sweep",
            compute="sweep.write",
            tables=("sweep", "sweep_by_point"),
            figures=("sweep_reduction", "sweep_availability"),
            cost_seconds=35.0,
            help="best plans over GPU scale and MTBF (the sweep report's grid)",
            description="Writes OUTDIR/tables/sweep (best plan of each strategy per point of "
            "the grid: GPUs, GPU MTBF, restart model), sweep_by_point (the "
            "strategies side by side) (.csv, .md) and the figures sweep_reduction "
            "and sweep_availability.",
        ),
        Report(
            name="domains",
            compute="domains.write",
            tables=("domain_ablation", "domain_closed_form", "lemons"),
            figures=("domain_ablation",),
            cost_seconds=45.0,
            help="failure domains and lemons: placement ablation, closed form, r*",
            description="Writes OUTDIR/tables/domain_ablation (ruler, contiguous, random and "
            "domain-aware placements for domain sizes 1-64 and shares of failures "
            "from domain events 0-50 %: endured failures, wipe-out time, mean and "
            "worst S*, time to train), domain_closed_form and lemons (.csv, .md) "
            "and the figure domain_ablation.",
        ),
        Report(
            name="microbatch",
            compute="microbatch.write",
            tables=("microbatch_error", "microbatch_600k"),
            figures=("microbatch_load",),
            cost_seconds=38.0,
            help="micro-batch splitting: closed-form load against exact loads",
            description="Writes OUTDIR/tables/microbatch_error (closed-form overhead with m "
            "pieces per shard against exact-load simulation, m = 1, 2, 4, 8, 16), "
            "microbatch_600k (time to train at 600k GPUs) and the figure "
            "microbatch_load.",
        ),
        Report(
            name="simulator",
            compute="simulator.write",
            tables=("simulator", "paper_table", "paper_microbatch"),
            figures=("simulator",),
            cost_seconds=100.0,
            help="the published simulator: every published cell, and the paper's own table",
            description="Writes OUTDIR/tables/simulator (every cell of the published "
            "simulator's per-run means: published, our event simulation, our "
            "closed form, errors, pass/fail with the criterion in the header), "
            "paper_table (the SPARe paper's Weibull table at the paper's plans and "
            "at our optimiser's) and paper_microbatch (.csv, .md), and the figure "
            "simulator. Default: 11 representative cells simulated with 2 trials "
            "(a few minutes on 2 cores); --quick: model only and one Rep cell; "
            "--full: every cell, 4 trials (SPARe at N = 1000 costs 10-40 s per "
            "trial: tens of minutes).",
            full="simulate every published cell (4 trials each)",
        ),
        Report(
            name="repairs",
            compute="repairs.write",
            tables=("repairs_600k", "repairs_wipeout", "repairs_paper"),
            figures=("repairs_600k", "repairs_paper"),
            cost_seconds=60.0,
            help="repairs and planned restarts: best plans at 600k GPUs, wipe-out model check",
            description="Writes OUTDIR/tables/repairs_600k (best plan of each strategy against "
            "repair time, 1 min to never, groups of 2048 and 1024 GPUs, smallest r "
            "within 1 %, planned restarts), repairs_wipeout (mean time to "
            "wipe-out, model against simulation), repairs_paper (the paper's "
            "step-level scenario) and the figures repairs_600k and repairs_paper.",
        ),
        Report(
            name="alternatives",
            compute="alternatives.write",
            tables=(
                "alternatives",
                "alternatives_crossover",
                "alternatives_paper",
                "alternatives_economics",
            ),
            figures=("alternatives",),
            cost_seconds=140.0,
            help="SPARe beside elastic DP, hot spares and fast restarts at 600k and 100k GPUs",
            description="Writes OUTDIR/tables/alternatives (every strategy's best plan at 600k "
            "GPUs in groups of 8 to 4096 and at 100k GPUs, the fast-restart "
            "presets, verdicts), alternatives_crossover (where each alternative "
            "overtakes SPARe), alternatives_paper (the paper's step-level "
            "scenario, N = 200), alternatives_economics (the plans in hours, dollars "
            "and MWh, and where energy ranks them otherwise than time) and the figure "
            "alternatives.",
        ),
        Report(
            name="published",
            compute="published.write",
            tables=("published",),
            figures=(),
            cost_seconds=3.0,
            help="Llama 3, OPT, BLOOM, GLM-130B, MegaScale: reported failures and ETT beside "
            "the toolkit's prediction",
            description="Writes OUTDIR/tables/published (.csv, .md): each published run's "
            "GPUs, days, interruptions, checkpoint interval and costs where reported, and "
            "effective training time, beside the CKPT-only prediction at the reported failure "
            "rate (a Job per run), and the restart or checkpoint cost (MegaScale: the run "
            "length) at which the prediction equals the reported figure.",
        ),
        Report(
            name="trace",
            compute="trace.write",
            tables=("trace", "trace_spares"),
            figures=(),
            cost_seconds=40.0,
            help="the StepFun trace at 100k and 600k GPUs: fitted models against the replayed log",
            description="Writes OUTDIR/tables/trace (each strategy's plan from the full fitted "
            "model; the model with the exponential, Weibull and Weibull + lemons + "
            "bursts laws against the event simulation replaying the trace's own "
            "faults and repairs, with bursts kept and broken) and trace_spares "
            "(spare nodes for a 1 % and 0.1 % shortage: Poisson against the "
            "replayed log), and prints a verdict line.",
        ),
        Report(
            name="audit",
            compute="audit.write",
            tables=("audit", "audit_cells"),
            figures=("audit",),
            cost_seconds=70.0,
            help="the closed forms audited: every strategy's model plan simulated, random "
            "scenarios",
            description="Writes OUTDIR/tables/audit (the model's error against the event "
            "simulation at its own plan, over scenarios drawn at random from the default "
            "AuditSpace: overall, by optional field and by strategy; median, 90th percentile "
            "and worst error, share outside 3 % and 3 SE, share refused), audit_cells (every "
            "cell with the index that re-draws it) and the figure audit. spare-theory audit "
            "runs any size, seed or space.",
        ),
        Report(
            name="regret",
            compute="regret.write",
            tables=("regret", "regret_pick"),
            figures=(),
            cost_seconds=300.0,
            help="decision quality: each strategy's plan against the best of a grid, replayed "
            "on the StepFun trace and on drawn logs",
            description="Writes OUTDIR/tables/regret (for the StepFun trace and logs drawn "
            "from stated laws, at 100k and 600k GPUs: each strategy's plan, model-only and "
            "verified on the log, against the best plan of the grid around it, all replayed "
            "on common random numbers: regret with its standard error) and regret_pick (the "
            "strategy the toolkit picks against the one the replay picks).",
            full="every log at 100k and 600k GPUs (the default: the drawn logs at 100k only)",
        ),
    )
}
