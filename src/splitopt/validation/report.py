"""Reports over a results store: summary table, plots, Markdown or HTML.

:func:`summary_table` has one row per (family, algorithm) with

``instances``      distinct instances with a row for this algorithm
``agreements``     rows whose objective equals the exact objective within tolerance
                   (for the reference algorithm itself: instances it solved)
``disagreements``  ``worse`` + ``better`` rows (``better``: the algorithm beat the reference)
``infeasible``     assignments the evaluator rejected
``failed``         for algorithms that claim exactness (not paper variants): unexpected
                   disagreements, errors and time-outs; ``splitopt validate`` exits 1 when any
``unexpected``     disagreements (or infeasible assignments) of an algorithm flagged ``exact``
                   against a reference proven optimal: each is a bug in the algorithm, the
                   formulation or the solver
``not_applicable`` instances the algorithm declined (it raised ``InstanceError``)
``errors`` / ``timeouts`` / ``no_reference``  recorded failures
``worst_gap``      largest relative gap (positive = worse than the exact solver)
``median_seconds`` median wall time of the algorithm; ``median_speedup`` median of
                   exact-solver time / algorithm time
``median_lp_gap``  (reference row) median relaxation gap of the family's ``lp`` bound

:func:`write_report` writes the table, the worst disagreements (exact and paper algorithms apart
from baselines, heuristics and relaxation bounds; gaps in percent), the errors, and up to three
PNG figures (:mod:`splitopt.validation.report_figures`: gaps, algorithm time vs exact time, time vs
DNN graph size) into ``<stem>_figures/`` beside a Markdown report, or embedded in an HTML one.
"""

from __future__ import annotations

import html as _html
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from splitopt.instances.io import write_text_atomic
from splitopt.validation.units import fmt_gap, fmt_seconds

SUMMARY_COLUMNS = ["family", "algorithm", "kind", "exact", "paper", "reference", "instances", "agreements", "disagreements",
                   "better", "infeasible", "unexpected", "not_applicable", "errors", "timeouts", "no_reference", "numerical", "failed", "worst_gap", "median_seconds",
                   "median_speedup", "median_lp_gap"]


def _frame(source: Any) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    from splitopt.validation.store import load_dataframe

    return load_dataframe(source)


def _median(s: pd.Series) -> float:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.median()) if len(s) else math.nan


def summary_table(store_path: Any) -> pd.DataFrame:
    """One row per (family, algorithm) over a store path, a :class:`ResultStore` or a DataFrame of
    store rows (see the module docstring for the columns)."""
    df = _frame(store_path)
    if df.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    df = df.copy()
    df["family"] = df["family"].fillna("?")
    out = []
    for (fam, algo), g in df.groupby(["family", "algorithm"], sort=True, dropna=False):
        outcome = g["outcome"].fillna("")
        is_ref = bool(pd.to_numeric(g["is_reference"], errors="coerce").fillna(0).max())
        disagree = outcome.isin(["worse", "better"])
        proven = g["exact_status"].fillna("").str.lower().isin(["optimal", "ok"])
        exact_flag = bool(pd.to_numeric(g["exact_algorithm"], errors="coerce").fillna(0).max())
        gaps = pd.to_numeric(g["gap"], errors="coerce").dropna()
        paper_flag = bool(pd.to_numeric(g["paper"], errors="coerce").fillna(0).max())
        kinds = g["kind"].dropna() if "kind" in g else pd.Series([], dtype=object)
        out.append({
            "family": fam, "algorithm": algo, "kind": "reference" if is_ref else (kinds.iloc[0] if len(kinds) else ""),
            "exact": exact_flag,
            "paper": bool(pd.to_numeric(g["paper"], errors="coerce").fillna(0).max()),
            "reference": is_ref,
            "instances": int(g["instance_hash"].nunique()),
            "agreements": int((outcome == ("reference" if is_ref else "agree")).sum()),
            "disagreements": int(disagree.sum()),
            "better": int((outcome == "better").sum()),
            "infeasible": int((outcome == "infeasible").sum()),
            "unexpected": int(((disagree | (outcome == "infeasible")) & proven).sum()) if exact_flag else 0,
            "not_applicable": int((outcome == "not_applicable").sum()),
            "errors": int((outcome == "error").sum()),
            "timeouts": int((outcome == "timeout").sum()),
            "no_reference": int((outcome == "no_reference").sum()),
            "failed": _failed(outcome, disagree, proven, exact_flag, paper_flag),
            "numerical": int((g["status"].astype(str) == "numerical").sum()),
            "worst_gap": float(gaps.max()) if len(gaps) else math.nan,
            "median_seconds": _median(g["seconds"]),
            "median_speedup": _median(g["speedup"]),
            "median_lp_gap": _median(g["lp_gap"]) if is_ref else math.nan,
        })
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


def _failed(outcome, disagree, proven, exact_flag: bool, paper_flag: bool) -> int:
    """What makes ``splitopt validate`` exit 1: for an algorithm that claims exactness (not a paper
    variant as printed, not a heuristic or baseline), its disagreements with a proven-optimal
    reference, infeasible assignments, errors and time-outs (the reference's own included)."""
    if not exact_flag or paper_flag:
        return 0
    bad = ((disagree | (outcome == "infeasible")) & proven) | outcome.isin(["error", "timeout"])
    return int(bad.sum())


# ----------------------------------------------------------------------------------------------
# figures


def _png(fig) -> bytes:
    """A figure as PNG bytes (tight bounding box; the figure is closed). Used by the sweep plots."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def figures(df: pd.DataFrame) -> list[tuple[str, str, bytes]]:
    """``(caption, file name, PNG bytes)`` of the report figures (see
    :mod:`splitopt.validation.report_figures`: one panel per family, a shared legend of at most
    ten series, gaps in percent, declined algorithms not plotted)."""
    from splitopt.validation.report_figures import figures as _figures

    return _figures(df)[0]


# ----------------------------------------------------------------------------------------------
# documents


#: summary columns shown to people (terminal and HTML), with their headers
DISPLAY_COLUMNS = {"family": "family", "algorithm": "algorithm", "kind": "kind", "instances": "inst",
                   "agreements": "agree", "disagreements": "disagree", "infeasible": "infeas",
                   "not_applicable": "n/a", "errors": "errors", "timeouts": "timeouts", "numerical": "numerical",
                   "failed": "failed", "worst_gap": "worst gap", "median_seconds": "median s",
                   "median_speedup": "speed-up"}


def display_rows(summary: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The summary as text cells, formatted once for every output (``2.29%``, ``214.0 us``, ``119x``)."""
    rows = []
    for rec in summary.to_dict("records"):
        kind = "reference" if rec.get("reference") else (rec.get("kind") or (
            "paper" if rec.get("paper") else ("exact" if rec.get("exact") else "baseline")))
        row = [str(rec.get("family", "")), str(rec.get("algorithm", "")), kind]
        for col in list(DISPLAY_COLUMNS)[3:]:
            v = rec.get(col)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                row.append("-")
            elif col == "worst_gap":
                row.append(fmt_gap(v))
            elif col == "median_seconds":
                row.append(fmt_seconds(v))
            elif col == "median_speedup":
                row.append(f"{v:,.0f}x" if v >= 1000 else f"{v:.3g}x")
            else:
                row.append(str(int(v)))
        rows.append(row)
    return list(DISPLAY_COLUMNS.values()), rows


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "yes" if v else ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def markdown_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_fmt(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines)


#: kinds whose disagreements are findings (an exact method wrong, a paper variant failing); the
#: others (baselines, heuristics, relaxation bounds) are expected to be worse and are listed apart
FINDING_KINDS = ("exact", "formulation", "paper")


def _worst(df: pd.DataFrame, n: int = 20, findings: bool = True) -> pd.DataFrame:
    """The ``n`` largest disagreements, gaps in percent: of exact algorithms and paper variants
    (``findings``), or of baselines, heuristics and relaxations."""
    d = df[df["outcome"].isin(["worse", "better"])].copy()
    from splitopt.validation.report_figures import row_kinds

    d["kind"] = row_kinds(d)
    d = d[d["kind"].isin(FINDING_KINDS) == findings]
    d["absgap"] = pd.to_numeric(d["gap"], errors="coerce").abs()
    d = d.sort_values("absgap", ascending=False).head(n)
    out = pd.DataFrame({"family": d["family"], "instance": d["member_id"], "algorithm": d["algorithm"],
                        "kind": d["kind"], "objective": d["objective"],
                        "exact objective": d["exact_objective"],
                        "gap": pd.to_numeric(d["gap"], errors="coerce").map(fmt_gap),
                        "exact status": d["exact_status"]})
    return out


def _errors(df: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    d = df[df["outcome"].isin(["error", "timeout", "infeasible"])].head(n)
    return d[["family", "member_id", "algorithm", "status", "error"]]


def write_report(store_path: Any, html: str | os.PathLike | None = None,
                 markdown: str | os.PathLike | None = None, summary: pd.DataFrame | None = None) -> Path:
    """Write a Markdown report (PNG figures in a folder beside it) and/or a self-contained HTML
    report (figures embedded); returns the path written (the HTML one when both are asked for). With neither, writes ``<store stem>_report.md`` next
    to the store. ``summary``: :func:`summary_table` of the same rows, if the caller has it."""
    df = _frame(store_path)
    if html is None and markdown is None:
        if isinstance(store_path, (str, os.PathLike)):
            p = Path(store_path)
            markdown = p.with_name(p.stem + "_report.md")
        else:
            markdown = Path("validation_report.md")
    summary = summary_table(df) if summary is None else summary
    worst, others, errs = _worst(df), _worst(df, findings=False), _errors(df)
    title = f"splitopt validation report ({df['instance_hash'].nunique()} instances, {len(df)} rows)"
    written: list[Path] = []
    figs, notes = _figures(df) if len(df) else ([], [])
    header, cells = display_rows(summary)
    sections = [("Worst disagreements of exact algorithms and paper variants", worst),
                ("Worst gaps of baselines, heuristics and relaxation bounds (expected to be worse)", others),
                ("Errors, time-outs, infeasible assignments", errs)]
    for kind, target in (("markdown", markdown), ("html", html)):
        if target is None:
            continue
        target = Path(target)
        if kind == "markdown":
            figdir = target.with_name(target.stem + "_figures")
            for _cap, fn, png in figs:
                write_text_atomic(figdir / fn, png)
            shown = pd.DataFrame(cells, columns=header)
            parts = [f"# {title}", "", "## Summary per family and algorithm", "", markdown_table(shown), ""]
            for head, d in sections:
                parts += [f"## {head}", "", markdown_table(d) if len(d) else "none", ""]
            parts += ["## Figures", ""] + [f"![{cap}]({figdir.name}/{fn})\n\n*{cap}*\n" for cap, fn, _ in figs]
            parts += [f"- {n}" for n in notes]
            text = "\n".join(parts) + "\n"
        else:
            import base64

            def tab(d: pd.DataFrame) -> str:
                return d.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.6g}") if len(d) else "<p>none</p>"

            shown = pd.DataFrame(cells, columns=header).to_html(index=False, na_rep="")
            imgs = "\n".join(f'<figure><img src="data:image/png;base64,{base64.b64encode(png).decode()}" '
                             f'alt="{_html.escape(cap)}"><figcaption>{_html.escape(cap)}</figcaption></figure>'
                             for cap, _fn, png in figs)
            body = "".join(f"<h2>{_html.escape(head)}</h2>\n{tab(d)}\n" for head, d in sections)
            listed = "".join(f"<li>{_html.escape(n)}</li>" for n in notes)
            text = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{_html.escape(title)}</title>"
                    "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
                    "table{border-collapse:collapse;font-size:0.85em}"
                    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}figure{display:block;margin:1em 0}"
                    "figcaption{font-size:0.9em;color:#444}img{max-width:100%}</style></head><body>\n"
                    f"<h1>{_html.escape(title)}</h1>\n<h2>Summary per family and algorithm</h2>\n{shown}\n{body}"
                    f"<h2>Figures</h2>\n{imgs}\n" + (f"<ul>{listed}</ul>\n" if listed else "") + "</body></html>\n")
        written.append(write_text_atomic(target, text))
    return written[-1]


def _figures(df: pd.DataFrame):
    from splitopt.validation.report_figures import figures as _f

    return _f(df)


__all__ = ["summary_table", "write_report", "markdown_table", "figures", "display_rows", "fmt_seconds", "fmt_gap",
           "SUMMARY_COLUMNS", "DISPLAY_COLUMNS", "FINDING_KINDS"]
