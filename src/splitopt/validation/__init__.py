"""Validation: every algorithm against the exact formulation, over sets of instances.

* :mod:`~splitopt.validation.harness`: per-instance comparison (exact solve once, evaluator for
  every objective, agreement within tolerance, gaps, bounds, errors and time-outs as outcomes);
* :mod:`~splitopt.validation.runner`: :func:`run_validation` over a named set or a directory,
  sequential, on a local process pool, or on Dask;
* :mod:`~splitopt.validation.store`: the SQLite results store (WAL, commit per task, resumable);
* :mod:`~splitopt.validation.report`: summary table, plots, Markdown/HTML reports.
"""

from splitopt.validation import harness, report, store
from splitopt.validation.report import summary_table, write_report
from splitopt.validation.runner import run_validation

__all__ = ["run_validation", "summary_table", "write_report", "harness", "report", "store"]
