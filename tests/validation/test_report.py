"""Summary table and report files over hand-made rows (expected numbers counted by hand)."""

import math

import pandas as pd
import pytest

from splitopt.validation import report
from splitopt.validation.store import COLUMN_NAMES, ResultStore


def _r(h, algo, outcome, seconds, gap=None, exact_seconds=1.0, ref=False, exact=True, paper=False, size=10,
       status="optimal", lp_gap=None):
    return {"instance_hash": h, "algorithm": algo, "solver": "highs", "version": "v", "family": "fam",
            "outcome": outcome, "seconds": seconds, "gap": gap, "exact_seconds": exact_seconds,
            "is_reference": int(ref), "exact_algorithm": int(exact), "paper": int(paper), "size": size,
            "exact_status": status, "lp_gap": lp_gap, "member_id": h, "objective": 1.0, "exact_objective": 1.0,
            "speedup": (exact_seconds / seconds) if (seconds and not ref) else (1.0 if ref else None)}


ROWS = [
    _r("a", "milp", "reference", 1.0, 0.0, ref=True, lp_gap=0.1),
    _r("b", "milp", "reference", 3.0, 0.0, exact_seconds=3.0, ref=True, lp_gap=0.3),
    _r("c", "milp", "timeout", 9.0, None, exact_seconds=9.0, ref=True, status="time_limit"),
    _r("a", "greedy", "agree", 0.5, 0.0, paper=True),
    _r("b", "greedy", "worse", 0.1, 0.25, exact_seconds=3.0, paper=True),
    _r("c", "greedy", "better", 0.2, -0.1, exact_seconds=9.0, paper=True, status="time_limit"),
    _r("a", "heur", "error", None, None, exact=False),
    _r("b", "heur", "worse", 0.1, 0.5, exact_seconds=3.0, exact=False),
    _r("a", "exactish", "infeasible", 0.1, None),
    _r("b", "exactish", "not_applicable", 0.1, None),
]


def test_summary_table_counts_by_hand():
    df = pd.DataFrame(ROWS, columns=list(COLUMN_NAMES))
    s = report.summary_table(df).set_index("algorithm")
    g = s.loc["greedy"]
    assert (g["instances"], g["agreements"], g["disagreements"], g["better"], g["errors"]) == (3, 1, 2, 1, 0)
    # only the disagreement against a proven-optimal reference is unexpected
    assert g["unexpected"] == 1 and g["paper"] and g["exact"]
    assert g["worst_gap"] == 0.25
    assert g["median_seconds"] == pytest.approx(0.2)
    assert g["median_speedup"] == pytest.approx(30.0)  # speed-ups 2, 30, 45
    h = s.loc["heur"]
    assert (h["errors"], h["disagreements"], h["unexpected"]) == (1, 1, 0)  # heuristics never "unexpected"
    x = s.loc["exactish"]
    assert (x["infeasible"], x["unexpected"], x["not_applicable"], x["errors"]) == (1, 1, 1, 0)
    m = s.loc["milp"]
    assert m["reference"] and m["agreements"] == 2 and m["timeouts"] == 1
    assert m["median_lp_gap"] == pytest.approx(0.2)
    assert math.isnan(g["median_lp_gap"])


def test_write_report_markdown_and_html(tmp_path):
    store = tmp_path / "runs.sqlite"
    with ResultStore(store) as st:
        st.add(ROWS)
    md = report.write_report(store, markdown=tmp_path / "rep.md")
    text = md.read_text()
    assert "| fam | greedy | paper |" in text and "gap_histogram.png" in text
    for fn in ("gap_histogram.png", "time_vs_exact.png"):
        assert (tmp_path / "rep_figures" / fn).stat().st_size > 1000
    # every hand-made instance has size 10: no time-vs-size figure, and the report says so
    assert not (tmp_path / "rep_figures" / "time_vs_size.png").exists()
    assert "time vs size not drawn for fam (every instance 10 layers)" in text
    out = report.write_report(store, html=tmp_path / "rep.html")
    assert out == tmp_path / "rep.html"
    h = out.read_text()
    assert h.startswith("<!DOCTYPE html>") and "<table" in h and h.count('src="data:image/png;base64,') == 2
    assert report.summary_table(store).set_index("algorithm").loc["greedy", "disagreements"] == 2


def _kinded(rows, kinds):
    df = pd.DataFrame(rows, columns=list(COLUMN_NAMES))
    df["kind"] = df["algorithm"].map(kinds)
    return df


def test_worst_disagreements_keep_baselines_apart_with_gaps_in_percent():
    """Issue 24: the 'worst disagreements' of exact and paper algorithms are not buried under a
    baseline's huge gaps; every gap is in percent (0.25 -> 25%, 116 -> 11,600%)."""
    rows = ROWS + [_r("a", "device_only", "worse", 0.01, 116.0, exact=False)]
    df = _kinded(rows, {"milp": "formulation", "greedy": "paper", "heur": "heuristic", "exactish": "exact",
                        "device_only": "baseline"})
    findings, others = report._worst(df), report._worst(df, findings=False)
    assert list(findings["algorithm"]) == ["greedy", "greedy"]  # |gap| 25 % then 10 %
    assert list(findings["gap"]) == ["25%", "-10%"]
    assert list(others["algorithm"]) == ["device_only", "heur"] and list(others["gap"]) == ["11,600%", "50%"]


def test_figure_series_fastest_exact_worst_paper_and_declined():
    """The legend groups: the reference, the fastest exact algorithm among those that took the most
    instances (a faster one that declined some instances does not count), the paper variant with
    the largest gap; an algorithm that declined every instance is listed, not plotted."""
    from splitopt.validation import report_figures as rf

    rows = [
        _r("a", "milp", "reference", 1.0, 0.0, ref=True), _r("b", "milp", "reference", 2.0, 0.0, ref=True),
        _r("a", "slow", "agree", 0.5, 0.0), _r("b", "slow", "agree", 0.7, 0.0),
        _r("a", "fast", "agree", 0.1, 0.0), _r("b", "fast", "agree", 0.3, 0.0),
        _r("a", "partial", "agree", 0.001, 0.0), _r("b", "partial", "not_applicable", 0.0001, None),
        _r("a", "p1", "worse", 0.1, 0.2, paper=True), _r("a", "p2", "worse", 0.1, 0.9, paper=True),
        _r("a", "never", "not_applicable", 1e-6, None), _r("b", "never", "not_applicable", 1e-6, None),
    ]
    kinds = {"milp": "formulation", "slow": "exact", "fast": "exact", "partial": "exact", "p1": "paper",
             "p2": "paper", "never": "exact"}
    d = rf.prepare(_kinded(rows, kinds))
    roles = rf.series_of(d)
    assert roles["milp"] == "reference (exact formulation)" and roles["fast"] == "fastest exact algorithm"
    assert roles["slow"] == roles["partial"] == "other exact algorithms"
    assert roles["p2"] == "worst paper variant" and roles["p1"] == "other paper variants"
    assert len(rf.SERIES) <= 9  # with the 'equal time' line: at most ten legend entries
    assert rf.declined(d) == {"fam": ["never"]}
    figs, notes = rf.figures(_kinded(rows, kinds))
    assert "fam: declined every instance, not plotted: never" in notes
    assert [fn for _, fn, _ in figs] == ["gap_histogram.png", "time_vs_exact.png"]


def test_grouping_size_comes_from_the_description():
    """The harness leaves ``size`` empty for grouping instances (no layers): the report takes the
    number of parts from the instance description, so the time-vs-size panel is not empty."""
    from splitopt.validation import report_figures as rf

    rows = [dict(_r(h, "dp", "agree", 0.1, 0.0), family="grouping", size=None,
                 describe=f'{{"parts": {n}, "k": 3}}') for h, n in (("a", 10), ("b", 53))]
    d = rf.prepare(pd.DataFrame(rows, columns=list(COLUMN_NAMES)))
    assert sorted(d["size"]) == [10.0, 53.0]
