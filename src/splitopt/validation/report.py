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


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def algorithm_styles(labels) -> dict[str, tuple[Any, str]]:
    """One (colour, marker) per ``family/algorithm`` label, assigned in sorted label order, so an
    algorithm looks the same in every figure of a report (20 colours x 10 markers)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    out = {}
    for i, lab in enumerate(sorted(set(labels))):
        out[lab] = (cmap(i % 20), MARKERS[(i // 20 + i) % len(MARKERS)])
    return out


def _png(fig) -> bytes:
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _facets(plt, families: list[str], width: float = 4.6, height: float = 3.6):
    fig, axes = plt.subplots(1, max(1, len(families)), figsize=(width * max(1, len(families)), height), squeeze=False)
    return fig, list(axes[0])


def _legend_outside(fig, axes) -> None:
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7, frameon=False)


def figures(df: pd.DataFrame) -> list[tuple[str, str, bytes]]:
    """``(title, file name, PNG bytes)`` of the report figures: gap histogram (stacked, integer
    counts), algorithm time vs exact time, time vs DNN graph size; one panel per family, one colour
    and marker per algorithm in every figure, legends outside the data."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    out: list[tuple[str, str, bytes]] = []
    df = df.copy()
    df["family"] = df["family"].fillna("?")
    df["label"] = df["family"] + "/" + df["algorithm"]
    styles = algorithm_styles(df["label"])
    fams = sorted(df["family"].unique())
    algos = df[df["is_reference"].fillna(0) == 0]

    # 1. gap histogram of disagreeing runs, stacked per algorithm
    fig, axes = _facets(plt, fams)
    for ax, fam in zip(axes, fams):
        comp = algos[(algos["family"] == fam) & algos["outcome"].isin(["agree", "worse", "better"])]
        worse = comp[comp["outcome"] == "worse"]
        if len(worse):
            vals = pd.to_numeric(worse["gap"], errors="coerce").clip(lower=1e-12)
            lo, hi = math.log10(vals.min()), math.log10(vals.max())
            bins = [10 ** (lo + (hi - lo + 1e-9) * i / 20) for i in range(21)] if hi > lo else \
                [10 ** (lo - 0.5), 10 ** (lo + 0.5)]
            groups = [(lab, g) for lab, g in vals.groupby(worse["label"])]
            ax.hist([g for _, g in groups], bins=bins, stacked=True, label=[lab for lab, _ in groups],
                    color=[styles[lab][0] for lab, _ in groups], edgecolor="white", linewidth=0.4)
            ax.set_xscale("log")
        else:
            ax.text(0.5, 0.5, "no algorithm worse than the exact solver", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("relative gap to the exact objective")
        ax.set_ylabel("instances")
        ax.set_title(f"{fam}: {int((comp['outcome'] == 'agree').sum())} agreements, "
                     f"{len(worse)} worse, {int((comp['outcome'] == 'better').sum())} better", fontsize=9)
    _legend_outside(fig, axes)
    out.append(("gaps of disagreeing runs", "gap_histogram.png", _png(fig)))

    # 2. algorithm time vs exact time
    fig, axes = _facets(plt, fams, 4.4, 4.0)
    for ax, fam in zip(axes, fams):
        both = algos[(algos["family"] == fam) & (pd.to_numeric(algos["seconds"], errors="coerce") > 0)
                     & (pd.to_numeric(algos["exact_seconds"], errors="coerce") > 0)]
        for lab, g in both.groupby("label"):
            ax.scatter(g["exact_seconds"], g["seconds"], s=14, alpha=0.8, color=styles[lab][0],
                       marker=styles[lab][1], label=lab)
        if len(both):
            lo = min(both["exact_seconds"].min(), both["seconds"].min())
            hi = max(both["exact_seconds"].max(), both["seconds"].max())
            ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="equal time")
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_title(fam, fontsize=9)
        ax.set_xlabel("exact solver time [s]")
        ax.set_ylabel("algorithm time [s]")
    _legend_outside(fig, axes)
    out.append(("algorithm time vs exact solver time", "time_vs_exact.png", _png(fig)))

    # 3. time vs DNN graph size (the exact formulation included)
    fig, axes = _facets(plt, fams, 4.4, 4.0)
    for ax, fam in zip(axes, fams):
        sized = df[(df["family"] == fam) & (pd.to_numeric(df["size"], errors="coerce") > 0)
                   & (pd.to_numeric(df["seconds"], errors="coerce") > 0)]
        for lab, g in sized.groupby("label"):
            ax.scatter(g["size"], g["seconds"], s=14, alpha=0.8, color=styles[lab][0], marker=styles[lab][1],
                       label=lab)
        if len(sized):
            ax.set_yscale("log")
        ax.set_title(fam, fontsize=9)
        ax.set_xlabel("DNN graph size [layers]")
        ax.set_ylabel("time [s]")
    _legend_outside(fig, axes)
    out.append(("time vs DNN graph size", "time_vs_size.png", _png(fig)))
    return out


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
    """Write a Markdown report (PNG figures in a folder beside it) and/or a self-contained HTML
    report (figures embedded); returns the path written (the HTML one when both are asked for). With neither, writes ``<store stem>_report.md`` next
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
    figs = figures(df) if len(df) else []
    header, cells = display_rows(summary)
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
            parts += ["## Worst disagreements", "", markdown_table(worst) if len(worst) else "none", ""]
            parts += ["## Errors, time-outs, infeasible assignments", "", markdown_table(errs) if len(errs) else "none", ""]
            parts += ["## Figures", ""] + [f"![{cap}]({figdir.name}/{fn})" for cap, fn, _ in figs]
            text = "\n".join(parts) + "\n"
        else:
            import base64

            def tab(d: pd.DataFrame) -> str:
                return d.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}") if len(d) else "<p>none</p>"

            shown = pd.DataFrame(cells, columns=header).to_html(index=False, na_rep="")
            imgs = "\n".join(f'<figure><img src="data:image/png;base64,{base64.b64encode(png).decode()}" '
                             f'alt="{_html.escape(cap)}"><figcaption>{_html.escape(cap)}</figcaption></figure>'
                             for cap, _fn, png in figs)
            text = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{_html.escape(title)}</title>"
                    "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:0.85em}"
                    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}figure{display:block}"
                    "img{max-width:100%}</style></head><body>\n"
                    f"<h1>{_html.escape(title)}</h1>\n<h2>Summary per family and algorithm</h2>\n{shown}\n"
                    f"<h2>Worst disagreements</h2>\n{tab(worst)}\n<h2>Errors, time-outs, infeasible assignments</h2>\n{tab(errs)}\n"
                    f"<h2>Figures</h2>\n{imgs}\n</body></html>\n")
        written.append(write_text_atomic(target, text))
    return written[-1]


__all__ = ["summary_table", "write_report", "markdown_table", "figures", "display_rows", "algorithm_styles",
           "fmt_seconds", "SUMMARY_COLUMNS", "DISPLAY_COLUMNS"]
