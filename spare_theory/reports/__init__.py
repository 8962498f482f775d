"""Sweeps, theory-versus-simulation tables and figures (the reporting layer).

Each module builds one family of tables and figures from the model layers
below; :mod:`spare_theory.reports.reproduce` runs them all.
"""
