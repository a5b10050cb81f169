"""``splitopt solve`` status line (issue 21 §1, the CLI half): status, objective, bound and
relative gap on every run, ``no bound`` where no trusted bound exists, and ``gap`` in ``--json``;
a result that is not optimal is never printed as if it were."""

import json
import math

import pytest

from splitopt.cli import main
from splitopt.instances import io
from splitopt.instances.split import generate
from splitopt.models.split import evaluate
from splitopt.solution import Solution, format_gap, relative_gap


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def split_file(tmp_path):
    p = tmp_path / "s.json"
    io.save(generate(4, n=12), p)
    return p


def test_relative_gap_hand_values():
    assert relative_gap(10.0, 9.0) == pytest.approx(0.1)
    assert relative_gap(10.0, 10.0) == 0.0
    assert relative_gap(0.0, -1.0) == math.inf
    assert relative_gap(1e-300, 0.5e-300) == pytest.approx(0.5)  # no floor at tiny costs
    assert relative_gap(1.0, None) is None and relative_gap(1.0, math.inf) is None
    assert format_gap(None) == "no bound" and format_gap(0.0) == "gap 0 %" and format_gap(0.0123) == "gap 1.23 %"
    s = Solution("split", "x", [], 10.0, status="time_limit", bound=8.0)
    assert s.status_line() == "status time_limit: objective 10, bound 8, gap 20 %"
    assert s.to_dict()["gap"] == pytest.approx(0.2)
    s = Solution("split", "x", [], 10.0, status="ok", bound=math.inf)  # an infinite bound is no bound
    assert s.status_line() == "status ok: objective 10, no bound" and s.to_dict()["bound"] is None


def test_optimal_milp_prints_status_bound_and_gap(split_file, capsys):
    code, out, err = _run(capsys, "solve", str(split_file), "-a", "milp")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("split / milp: status optimal: objective ") and ", bound " in first and "gap " in first
    code, out, err = _run(capsys, "solve", str(split_file), "-a", "milp", "--json")
    d = json.loads(out)
    obj = evaluate(io.load(split_file), d["assignment"])[0]
    assert d["objective"] == obj and d["status"] == "optimal"
    assert d["gap"] == pytest.approx(abs(obj - d["bound"]) / obj, abs=1e-15) and d["gap"] <= 1e-9


def test_algorithm_without_bound_says_no_bound(split_file, capsys):
    code, out, err = _run(capsys, "solve", str(split_file), "-a", "server_only")
    assert code == 0, err
    assert out.splitlines()[0].endswith(", no bound") and "status ok" in out.splitlines()[0]
    d = json.loads(_run(capsys, "solve", str(split_file), "-a", "server_only", "--json")[1])
    assert d["bound"] is None and d["gap"] is None


def test_time_limit_is_never_printed_as_optimal(split_file, capsys, monkeypatch):
    """HiGHS stopped by its limit with an incumbent: the line says time_limit and the gap to the
    certified bound, whatever the incumbent's quality."""
    from dataclasses import replace

    from splitopt.solvers.exact import highs
    from splitopt.solvers.split import milp

    real = highs.HighsMatrix.solve

    def stopped(self, isolate=False):
        r = real(self, isolate)
        return replace(r, status="time_limit", termination="maxTimeLimit", bound=None) if self.is_mip else r

    monkeypatch.setattr(highs.HighsMatrix, "solve", stopped)
    monkeypatch.setattr(milp, "certified_bound", lambda model, target=None, **kw: 0.5 * target)
    code, out, err = _run(capsys, "solve", str(split_file), "-a", "milp", "--time-limit", "5")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("split / milp: status time_limit: objective ") and "gap 50 %" in first, first
    assert "optimal" not in first
