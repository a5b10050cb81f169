"""The report's figures: one panel per family, a shared legend of at most ten series.

Algorithms are grouped into :data:`SERIES` (the reference, the fastest exact algorithm, the other
exact ones, formulations, relaxations, the worst paper variant, the other paper variants,
heuristics, baselines), so a family with 25 algorithms still has a legend that can be read; the
gap figure names every algorithm that was ever worse on its own row. Algorithms that declined
every instance are not plotted (:func:`declined` lists them for the report's text); ``n/a`` rows
never enter a time plot (a decline takes microseconds and says nothing about speed). Gaps are in
percent, times in seconds, sizes in layers (parts for ``grouping``).

Figures are drawn with matplotlib's Agg backend in a constrained layout (no second ``tight``
pass), which keeps a 1,000-row report well under a second per figure.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

#: series label -> (colour, marker); the legend order
SERIES: dict[str, tuple[str, str]] = {
    "reference (exact formulation)": ("black", "s"),
    "fastest exact algorithm": ("tab:blue", "o"),
    "other exact algorithms": ("#9ecae1", "o"),
    "other formulations": ("tab:purple", "D"),
    "relaxations (bound)": ("tab:olive", "v"),
    "worst paper variant": ("tab:red", "X"),
    "other paper variants": ("#fc9272", "x"),
    "heuristics": ("tab:orange", "^"),
    "baselines": ("tab:gray", "P"),
}
_BY_KIND = {"exact": "other exact algorithms", "formulation": "other formulations",
            "relaxation": "relaxations (bound)", "paper": "other paper variants", "heuristic": "heuristics",
            "baseline": "baselines"}
#: unit of the size column per family (default: layers)
SIZE_UNITS = {"grouping": "parts"}
_COMPARED = ("agree", "worse", "better")


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with ``family``, numeric ``seconds``/``exact_seconds``/``gap``, ``size`` filled from the
    instance description where the harness left it empty (grouping: ``parts``), and ``series``."""
    d = df.copy()
    d["family"] = d["family"].fillna("?")
    for c in ("seconds", "exact_seconds", "gap", "size"):
        d[c] = pd.to_numeric(d[c], errors="coerce") if c in d else math.nan
    if "describe" in d and d["size"].isna().any():
        d.loc[d["size"].isna(), "size"] = d.loc[d["size"].isna(), "describe"].map(_size_of)
    d["is_reference"] = pd.to_numeric(d["is_reference"], errors="coerce").fillna(0).astype(bool)
    d["kind"] = row_kinds(d)
    d["series"] = ""
    for fam, g in d.groupby("family"):
        roles = series_of(g)
        d.loc[g.index, "series"] = g["algorithm"].map(roles)
    return d


def row_kinds(d: pd.DataFrame) -> pd.Series:
    """Each row's algorithm kind; rows of stores written before kinds were recorded get one from
    their flags (paper -> ``paper``, exact -> ``exact``, else ``baseline``)."""
    def flag(c):
        return pd.to_numeric(d[c], errors="coerce").fillna(0).astype(bool) if c in d else pd.Series(False, index=d.index)

    guess = pd.Series("baseline", index=d.index).mask(flag("exact_algorithm"), "exact").mask(flag("paper"), "paper")
    kind = d["kind"] if "kind" in d else pd.Series(None, index=d.index, dtype=object)
    return kind.where(kind.notna() & (kind.astype(str) != ""), guess).astype(str)


def _size_of(text: Any) -> float:
    try:
        desc = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return math.nan
    for k in ("layers", "parts", "nodes"):
        v = desc.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return math.nan


def series_of(g: pd.DataFrame) -> dict[str, str]:
    """``algorithm -> series`` for one family's rows: the reference; the fastest exact algorithm
    (lowest median time among the exact ones that took the most instances); the paper variant with
    the largest gap; every other algorithm by kind."""
    out: dict[str, str] = {}
    ran = g[g["outcome"].isin(_COMPARED)]
    exact = ran[(ran["kind"] == "exact") & ~ran["is_reference"]]
    fastest = None
    if len(exact):
        cover = exact.groupby("algorithm")["instance_hash"].nunique()
        best = exact[exact["algorithm"].isin(cover[cover == cover.max()].index)]
        fastest = best.groupby("algorithm")["seconds"].median().idxmin()
    paper = ran[ran["kind"] == "paper"]
    worst = None
    if len(paper) and paper["gap"].notna().any():
        worst = paper.groupby("algorithm")["gap"].max().idxmax()
    for algo, a in g.groupby("algorithm"):
        if a["is_reference"].any():
            out[algo] = "reference (exact formulation)"
        elif algo == fastest:
            out[algo] = "fastest exact algorithm"
        elif algo == worst:
            out[algo] = "worst paper variant"
        else:
            out[algo] = _BY_KIND.get(a["kind"].iloc[0], "baselines")
    return out


def declined(df: pd.DataFrame) -> dict[str, list[str]]:
    """``family -> algorithms`` that declined every instance they were given (all ``n/a``)."""
    out: dict[str, list[str]] = {}
    for (fam, algo), g in df.groupby(["family", "algorithm"]):
        if len(g) and (g["outcome"] == "not_applicable").all():
            out.setdefault(fam, []).append(algo)
    return out


def _grid(plt, n: int, w: float = 5.4, h: float = 3.5):
    cols = 1 if n == 1 else 2
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(max(w * cols, 7.0), h * rows + 0.7), squeeze=False,
                             layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _legend(fig, used: list[str], extra: list = ()) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker=SERIES[s][1], color=SERIES[s][0], label=s) for s in SERIES if s in used]
    handles += list(extra)
    if handles:
        wide = sum(ax.get_visible() for ax in fig.axes) > 1
        fig.legend(handles=handles, loc="outside lower center", ncol=min(5 if wide else 3, len(handles)),
                   fontsize=8, frameon=False)


def _percent(v, _pos=None) -> str:
    return f"{v:g}%"


def _log_ticks(axis, values, formatter) -> None:
    """Labelled ticks at 1-2-5 steps when the data span under two decades (else every decade), so
    a log axis always has several labels, without minor ticks (a third of the drawing time)."""
    from matplotlib.ticker import LogLocator

    v = values[values > 0]
    span = math.log10(v.max() / v.min()) if len(v) else 0.0
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if span < 2 else (1.0,)))
    axis.set_major_formatter(formatter)


def _seconds(v, _pos=None) -> str:
    """Tick labels in readable units (``10 us``, ``1 ms``, ``2 s``): no mathtext to parse."""
    if v >= 1:
        return f"{v:g} s"
    if v >= 1e-3:
        return f"{v * 1e3:g} ms"
    return f"{v * 1e6:g} us"


def _png(fig) -> bytes:
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def gap_figure(plt, d: pd.DataFrame) -> bytes | None:
    """Per family: one row per algorithm that was worse than the exact optimum at least once, one
    dot per such instance at its gap in percent (log scale); the row label says how often."""
    algos = d[~d["is_reference"] & d["outcome"].isin(_COMPARED)]
    fams = sorted(algos["family"].unique())
    if not fams:
        return None
    worse_rows = {f: algos[(algos["family"] == f) & (algos["outcome"] == "worse") & (algos["gap"] > 0)] for f in fams}
    tallest = max((w["algorithm"].nunique() for w in worse_rows.values()), default=1)
    fig, axes = _grid(plt, len(fams), 5.4, max(2.2, 0.32 * tallest + 1.0))
    used: list[str] = []
    for ax, fam in zip(axes, fams):
        comp = algos[algos["family"] == fam]
        worse = worse_rows[fam]
        never = comp["algorithm"].nunique() - worse["algorithm"].nunique()
        ax.set_title(f"{fam}: {worse['algorithm'].nunique()} of {never + worse['algorithm'].nunique()} "
                     "algorithms worse at least once", fontsize=9)
        if not len(worse):
            ax.text(0.5, 0.5, "no algorithm worse than the exact optimum", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
            ax.set_yticks([])
            continue
        order = worse.groupby("algorithm")["gap"].max().sort_values().index
        labels = []
        for y, algo in enumerate(order):
            w = worse[worse["algorithm"] == algo]
            s = w["series"].iloc[0]
            used.append(s)
            ax.scatter(100 * w["gap"], [y] * len(w), s=18, color=SERIES[s][0], marker=SERIES[s][1], alpha=0.8,
                       zorder=3)
            bad = int(((d["family"] == fam) & (d["algorithm"] == algo) & (d["outcome"] == "infeasible")).sum())
            labels.append(f"{algo} ({len(w)}/{comp[comp['algorithm'] == algo]['instance_hash'].nunique()}"
                          + (f"; {bad} infeasible)" if bad else ")"))
        ax.set_yticks(range(len(order)), labels, fontsize=8)
        ax.set_ylim(-0.7, len(order) - 0.3)
        ax.set_xscale("log")
        _log_ticks(ax.xaxis, 100 * worse["gap"], _percent)
        ax.minorticks_off()
        ax.grid(axis="x", lw=0.3, alpha=0.5)
        ax.set_xlabel("gap to the exact optimum [%] (log scale)", fontsize=8)
    _legend(fig, used)
    return _png(fig)


def _time_panels(plt, d: pd.DataFrame, fams: list[str], x: str, xlabel, diagonal: bool) -> bytes:
    from matplotlib.lines import Line2D

    fig, axes = _grid(plt, len(fams), 5.4, 3.6)
    used: list[str] = []
    for ax, fam in zip(axes, fams):
        g = d[(d["family"] == fam) & (d["seconds"] > 0) & (d[x] > 0)]
        for s in SERIES:
            p = g[g["series"] == s]
            if len(p):
                used.append(s)
                ax.scatter(p[x], p["seconds"], s=12, color=SERIES[s][0], marker=SERIES[s][1], alpha=0.75,
                           zorder=3 if s in ("fastest exact algorithm", "reference (exact formulation)") else 2)
        if len(g) and diagonal:  # over the x range only: the axes keep to the data
            lo, hi = g[x].min(), g[x].max()
            ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_yscale("log")
        _log_ticks(ax.yaxis, g["seconds"], _seconds)
        if diagonal:
            ax.set_xscale("log")
            _log_ticks(ax.xaxis, g[x], _seconds)
        ax.minorticks_off()  # log minor ticks: a third of the drawing time, nothing to read
        ax.set_title(_title(fam, d), fontsize=9)
        ax.set_xlabel(xlabel(fam), fontsize=8)
        ax.set_ylabel("algorithm time (log scale)", fontsize=8)
        ax.grid(lw=0.3, alpha=0.5)
    _legend(fig, used, [Line2D([], [], ls="--", color="k", lw=0.8, label="equal time")] if diagonal else [])
    return _png(fig)


def _title(fam: str, d: pd.DataFrame) -> str:
    g = d[d["family"] == fam]
    names = {s: g.loc[g["series"] == s, "algorithm"].iloc[0] for s in ("fastest exact algorithm", "worst paper variant")
             if (g["series"] == s).any()}
    bits = [f"fastest exact: {names['fastest exact algorithm']}"] if "fastest exact algorithm" in names else []
    bits += [f"worst paper: {names['worst paper variant']}"] if "worst paper variant" in names else []
    return f"{fam}" + (f" ({'; '.join(bits)})" if bits else "")


def figures(df: pd.DataFrame) -> tuple[list[tuple[str, str, bytes]], list[str]]:
    """``([(caption, file name, PNG bytes)], notes)``: gaps of the runs worse than the exact optimum,
    algorithm time against the exact solver's, and time against DNN graph size (only for families
    whose instances have at least two sizes); ``notes`` say what was left out and why."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    d = prepare(df)
    notes = [f"{fam}: declined every instance, not plotted: {', '.join(a)}" for fam, a in sorted(declined(d).items())]
    out: list[tuple[str, str, bytes]] = []
    png = gap_figure(plt, d)
    if png is not None:
        out.append(("gap to the exact optimum of every run worse than it, per algorithm (percent; "
                    "the count is worse runs / instances compared)", "gap_histogram.png", png))
    ran = d[~d["is_reference"] & d["outcome"].isin(_COMPARED)]
    fams = sorted(f for f in ran["family"].unique() if ((ran["family"] == f) & (ran["exact_seconds"] > 0)).any())
    if fams:
        out.append(("algorithm time against the exact solver's time on the same instance (log-log)",
                    "time_vs_exact.png",
                    _time_panels(plt, ran, fams, "exact_seconds", lambda f: "exact solver time (log scale)", True)))
    timed = d[d["outcome"].isin(_COMPARED + ("reference",))]
    sizes = timed.groupby("family")["size"].nunique()
    many = sorted(sizes[sizes >= 2].index)
    few = sorted(set(timed["family"]) - set(many))
    if few:
        notes.append("time vs size not drawn for " + ", ".join(
            f"{f} (every instance {_one_size(timed, f)})" for f in few))
    if many:
        out.append(("algorithm time against the DNN graph's size (the reference formulation included)",
                    "time_vs_size.png",
                    _time_panels(plt, timed, many, "size",
                                 lambda f: f"DNN graph size [{SIZE_UNITS.get(f, 'layers')}]", False)))
    return out, notes


def _one_size(d: pd.DataFrame, fam: str) -> str:
    s = d.loc[d["family"] == fam, "size"].dropna()
    return f"{s.iloc[0]:.0f} {SIZE_UNITS.get(fam, 'layers')}" if len(s) else "of unknown size"


__all__ = ["figures", "prepare", "series_of", "declined", "SERIES"]
