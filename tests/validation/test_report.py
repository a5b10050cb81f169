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
    for fn in ("gap_histogram.png", "time_vs_exact.png", "time_vs_size.png"):
        assert (tmp_path / "rep_figures" / fn).stat().st_size > 1000
    out = report.write_report(store, html=tmp_path / "rep.html")
    assert out == tmp_path / "rep.html"
    h = out.read_text()
    assert h.startswith("<!DOCTYPE html>") and "<table" in h and h.count('src="data:image/png;base64,') == 3
    assert report.summary_table(store).set_index("algorithm").loc["greedy", "disagreements"] == 2
