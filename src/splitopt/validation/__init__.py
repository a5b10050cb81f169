"""Validation: every algorithm against the exact formulation, over sets of instances.

* :mod:`~splitopt.validation.harness`: per-instance comparison (exact solve once, evaluator for
  every objective, agreement within tolerance, gaps, bounds, errors and time-outs as outcomes);
* :mod:`~splitopt.validation.runner`: :func:`run_validation` over a named set or a directory,
  sequential, on a local process pool, or on Dask;
* :mod:`~splitopt.validation.store`: the SQLite results store (WAL, commit per task, resumable);
* :mod:`~splitopt.validation.report`: summary table, plots, Markdown/HTML reports.

Names are imported on first use (PEP 562): importing this package does not import pandas.
"""

_LAZY = {"run_validation": "splitopt.validation.runner", "summary_table": "splitopt.validation.report",
         "write_report": "splitopt.validation.report"}
_SUBMODULES = ("harness", "report", "store")


def __getattr__(name: str):
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"splitopt.validation.{name}")
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'splitopt.validation' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


__all__ = ["run_validation", "summary_table", "write_report", "harness", "report", "store"]
