"""Reports over a results store: summary table, plots, Markdown or HTML.

:func:`summary_table` has one row per (family, algorithm) with

``instances``      distinct instances with a row for this algorithm
``agreements``     rows whose objective equals the exact objective within tolerance
                   (for the reference algorithm itself: instances it solved)
``disagreements``  ``worse`` + ``better`` rows (``better``: the algorithm beat the reference)
``infeasible``     assignments the evaluator rejected
``unexpected``     disagreements (or infeasible assignments) of an algorithm flagged ``exact``
                   against a reference proven optimal: each is a bug in the algorithm, the
                   formulation or the solver
``not_applicable`` instances the algorithm declined (it raised ``InstanceError``)
``errors`` / ``timeouts`` / ``no_reference``  recorded failures
``worst_gap``      largest relative gap (positive = worse than the exact solver)
``median_seconds`` median wall time of the algorithm; ``median_speedup`` median of
                   exact-solver time / algorithm time
``median_lp_gap``  (reference row) median relaxation gap of the family's ``lp`` bound

:func:`write_report` writes the table, the worst disagreements, the errors, and three PNG figures
(gap histogram, algorithm time vs exact time, time vs DNN graph size; matplotlib's Agg backend)
into ``<stem>_figures/`` beside the report.
"""

from __future__ import annotations

import html as _html
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

SUMMARY_COLUMNS = ["family", "algorithm", "kind", "exact", "paper", "reference", "instances", "agreements", "disagreements",
                   "better", "infeasible", "unexpected", "not_applicable", "errors", "timeouts", "no_reference", "numerical", "worst_gap", "median_seconds",
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
            "numerical": int((g["status"].astype(str) == "numerical").sum()),
            "worst_gap": float(gaps.max()) if len(gaps) else math.nan,
            "median_seconds": _median(g["seconds"]),
            "median_speedup": _median(g["speedup"]),
            "median_lp_gap": _median(g["lp_gap"]) if is_ref else math.nan,
        })
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


# ----------------------------------------------------------------------------------------------
# figures


def _save(fig, outdir: Path, filename: str, title: str) -> tuple[str, str]:
    """Write ``fig`` as a PNG beside the report, close it, and return ``(title, filename)``."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(outdir / filename, dpi=110)
    plt.close(fig)
    return title, filename


def _figures(df: pd.DataFrame, outdir: Path) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    figs: list[tuple[str, str]] = []
    algos = df[df["is_reference"].fillna(0) == 0]
    label = algos["family"].fillna("?") + "/" + algos["algorithm"]

    # 1. gap histogram (disagreements; agreements counted in the title)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    comp = algos[algos["outcome"].isin(["agree", "worse", "better"])]
    n_agree = int((comp["outcome"] == "agree").sum())
    worse = comp[comp["outcome"] == "worse"]
    if len(worse):
        vals = pd.to_numeric(worse["gap"], errors="coerce").clip(lower=1e-12)
        lo, hi = math.log10(vals.min()), math.log10(vals.max())
        bins = [10 ** (lo + (hi - lo + 1e-9) * i / 30) for i in range(31)] if hi > lo else 10
        for name, g in vals.groupby(label.loc[worse.index]):
            ax.hist(g, bins=bins, alpha=0.6, label=name)
        ax.set_xscale("log")
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no algorithm worse than the exact solver", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("relative gap to exact objective")
    ax.set_ylabel("instances")
    ax.set_title(f"gaps of disagreeing runs ({n_agree} agreements, {int((comp['outcome'] == 'better').sum())} better)",
                 fontsize=9)
    figs.append(_save(fig, outdir, "gap_histogram.png", "gap histogram"))

    # 2. algorithm time vs exact time
    fig, ax = plt.subplots(figsize=(5, 4.2))
    both = algos[(pd.to_numeric(algos["seconds"], errors="coerce") > 0)
                 & (pd.to_numeric(algos["exact_seconds"], errors="coerce") > 0)]
    for name, g in both.groupby(label.loc[both.index]):
        ax.scatter(g["exact_seconds"], g["seconds"], s=10, alpha=0.7, label=name)
    if len(both):
        lo = min(both["exact_seconds"].min(), both["seconds"].min())
        hi = max(both["exact_seconds"].max(), both["seconds"].max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="equal time")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    ax.set_xlabel("exact solver time [s]")
    ax.set_ylabel("algorithm time [s]")
    figs.append(_save(fig, outdir, "time_vs_exact.png", "algorithm time vs exact solver time"))

    # 3. time vs DNN graph size (all algorithms incl. the exact formulation)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    sized = df[(pd.to_numeric(df["size"], errors="coerce") > 0) & (pd.to_numeric(df["seconds"], errors="coerce") > 0)]
    lab = sized["family"].fillna("?") + "/" + sized["algorithm"]
    for name, g in sized.groupby(lab):
        ax.scatter(g["size"], g["seconds"], s=10, alpha=0.7, label=name)
    if len(sized):
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    ax.set_xlabel("DNN graph size [layers]")
    ax.set_ylabel("time [s]")
    figs.append(_save(fig, outdir, "time_vs_size.png", "time vs DNN graph size"))
    return figs


# ----------------------------------------------------------------------------------------------
# documents


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


def _worst(df: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    d = df[df["outcome"].isin(["worse", "better"])].copy()
    d["absgap"] = pd.to_numeric(d["gap"], errors="coerce").abs()
    d = d.sort_values("absgap", ascending=False).head(n)
    return d[["family", "member_id", "algorithm", "objective", "exact_objective", "gap", "exact_status"]]


def _errors(df: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    d = df[df["outcome"].isin(["error", "timeout", "infeasible"])].head(n)
    return d[["family", "member_id", "algorithm", "status", "error"]]


def write_report(store_path: Any, html: str | os.PathLike | None = None,
                 markdown: str | os.PathLike | None = None) -> Path:
    """Write a Markdown and/or HTML report with PNG figures beside it; returns the path written
    (the HTML one when both are asked for). With neither, writes ``<store stem>_report.md`` next
    to the store."""
    df = _frame(store_path)
    if html is None and markdown is None:
        if isinstance(store_path, (str, os.PathLike)):
            p = Path(store_path)
            markdown = p.with_name(p.stem + "_report.md")
        else:
            markdown = Path("validation_report.md")
    summary = summary_table(df)
    worst, errs = _worst(df), _errors(df)
    title = f"splitopt validation report ({df['instance_hash'].nunique()} instances, {len(df)} rows)"
    written: list[Path] = []
    for kind, target in (("markdown", markdown), ("html", html)):
        if target is None:
            continue
        target = Path(target)
        figdir = target.with_name(target.stem + "_figures")
        figs = _figures(df, figdir) if len(df) else []
        rel = figdir.name
        if kind == "markdown":
            parts = [f"# {title}", "", "## Summary per family and algorithm", "", markdown_table(summary), ""]
            parts += ["## Worst disagreements", "", markdown_table(worst) if len(worst) else "none", ""]
            parts += ["## Errors, time-outs, infeasible assignments", "", markdown_table(errs) if len(errs) else "none", ""]
            parts += ["## Figures", ""] + [f"![{cap}]({rel}/{fn})" for cap, fn in figs]
            text = "\n".join(parts) + "\n"
        else:
            def tab(d: pd.DataFrame) -> str:
                return d.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}") if len(d) else "<p>none</p>"
            imgs = "\n".join(f'<figure><img src="{rel}/{fn}" alt="{_html.escape(cap)}">'
                             f"<figcaption>{_html.escape(cap)}</figcaption></figure>" for cap, fn in figs)
            text = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{_html.escape(title)}</title>"
                    "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:0.85em}"
                    "td,th{border:1px solid #ccc;padding:2px 6px}figure{display:inline-block}</style></head><body>\n"
                    f"<h1>{_html.escape(title)}</h1>\n<h2>Summary per family and algorithm</h2>\n{tab(summary)}\n"
                    f"<h2>Worst disagreements</h2>\n{tab(worst)}\n<h2>Errors, time-outs, infeasible assignments</h2>\n{tab(errs)}\n"
                    f"<h2>Figures</h2>\n{imgs}\n</body></html>\n")
        from splitopt.instances.io import write_text_atomic

        written.append(write_text_atomic(target, text))
    return written[-1]


__all__ = ["summary_table", "write_report", "markdown_table", "SUMMARY_COLUMNS"]
