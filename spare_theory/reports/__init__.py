"""Sweeps, theory-versus-simulation tables and figures (the reporting layer).

Each report is data, a :class:`~spare_theory.reports.catalogue.Report` of
:data:`~spare_theory.reports.catalogue.REPORTS`: the tables and figures it
writes and the function of its module that computes them,
``write(options: ReportOptions) -> list[pathlib.Path]``, which writes CSV and
Markdown tables to ``outdir/tables`` and PNG figures to ``outdir/figures``
and returns the files it wrote.  :func:`spare_theory.reports.reproduce.reproduce`
runs them (all, or those named) and returns the same kind of list.

Names are shared by every table, function and CLI option: ``N`` is a number
of data-parallel groups and ``r`` a redundancy (grid arguments are
keyword-only and named ``N=`` and ``r=``); units are in the names
(``hours``, ``minutes``); ``mc_mean_*`` and ``mc_se_*`` are Monte Carlo
means and standard errors; ``rel_error_*`` is ``model / simulation - 1``;
per-strategy columns are ``<quantity>_<strategy>``.  Every ratio (relative
errors, reductions, availability, MAEs) is a fraction, ``0.01`` meaning 1 %;
no table column holds a percentage.
"""
