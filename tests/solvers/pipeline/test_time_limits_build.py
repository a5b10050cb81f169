"""Time limits of the ``pipeline`` algorithms whose first unit of work is long (fuzz report
``repro_4_pipeline_time_limit``): on ``generate(3, n_layers=60, n_servers=6, n_clients=3, batch=64)``
``lp_rlt``/``lp_plain`` built their first Formulation A (about 10 s) with no deadline and then
failed with "no feasible assignment found within 0.001 s (while building the model)" (the fallback's
limit, not the caller's), and ``algorithm1``/``bcd_alg1`` (Algorithm 1 as printed) built their graph,
its LP bound of line 3 (50-100 s in HiGHS) and the edge loop up to a first path without looking at
the clock (107 s and 45 s with ``time_limit=0.01``).

None of these tests reads the wall clock: a limit that has passed before the first look
(``time_limit=1e-6``) stops at that first look by construction, and deadlines that pass after ``n``
looks (:class:`Stop`) make every other stop point deterministic.
"""

from __future__ import annotations

import pytest

from splitopt.errors import InfeasibleSolution, SolverFailed
from splitopt.families import get_family, solve
from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.exact import highs
from splitopt.solvers.pipeline import milp, paper, paper_graph

FAM = get_family("pipeline")
TINY = 1e-6  # passed before the first look at the clock


@pytest.fixture(scope="module")
def fuzzed():
    """The fuzzed instance (60 layers, 6 servers, 64 micro-batch sizes)."""
    return FAM.generate(3, n_layers=60, n_servers=6, n_clients=3, batch=64)


def small_revisit():
    """Eight micro-batch sizes, where Algorithm 1 as printed finds feasible plans (revisit)."""
    return generate(0, n_layers=5, n_servers=3, n_clients=2, batch=8, placement="revisit")


class Stop(Deadline):
    """A deadline that passes after ``n`` looks at the clock; ``after`` counts the looks after it
    passed (work done past the deadline)."""

    def __init__(self, n: int, limit: float = 0.25):
        super().__init__(None)
        self.n, self.limit, self.after = n, limit, 0

    def over(self) -> bool:
        if self.hit:
            self.after += 1
        elif self.n <= 0:
            self.hit = True
        self.n -= 1
        return self.hit

    def remaining(self):
        return None


class Count(Stop):
    def __init__(self):
        super().__init__(10 ** 12)


def _time_out(exc: SolverFailed, limit, *words):
    msg = str(exc)
    assert exc.status == "time_limit", msg
    assert msg.startswith(f"time_limit: no feasible assignment found within {limit} s"), msg
    for w in words:
        assert w in msg, (w, msg)


# ------------------------------------------------------------ the fuzzed instance, tiny limit
@pytest.mark.parametrize("name", ["lp_rlt", "lp_plain"])
def test_relaxation_tiny_limit_names_the_limit_given(fuzzed, name):
    """The first ``b``'s model build stops at its first look at the clock (it had no deadline);
    the time-out names the caller's limit and where the loop stopped, not the 0.001 s of the
    fallback's own limit."""
    with pytest.raises(SolverFailed) as exc:
        solve(fuzzed, name, time_limit=TINY)
    _time_out(exc.value, TINY, "LP relaxation of Formulation A", "0 of 64 micro-batch sizes solved",
              "before b = 1")
    assert "0.001 s" not in str(exc.value)


@pytest.mark.parametrize("name, words", [
    ("algorithm1", ("Algorithm 1 as printed: 0 of 64 micro-batch sizes done", "no path held")),
    ("bcd_alg1", ("Algorithm 1 as printed at b = 20", "while building its graph", "no path held"))])
def test_paper_algorithm1_tiny_limit_stops_at_once(fuzzed, name, words, monkeypatch):
    """Algorithm 1 looks at the clock before each ``b`` and while building its graph (BCD enters
    it at once): with the limit passed, neither the LP of line 3 nor a shortest path is started."""
    monkeypatch.setattr(paper, "rlt_bound", lambda *a, **k: pytest.fail("the LP of line 3 started"))
    monkeypatch.setattr(paper.PaperGraph, "forward", lambda *a, **k: pytest.fail("a shortest path started"))
    with pytest.raises(SolverFailed) as exc:
        solve(fuzzed, name, time_limit=TINY)
    _time_out(exc.value, TINY, *words)


# ------------------------------------------------------------ Formulation A's LP loop
def test_relaxation_first_build_is_bounded(fuzzed, monkeypatch):
    """The first ``b``'s Formulation A is built under the deadline (was: ``build_deadline(None)``
    for the first ``b``, 10 s at I = 60): a deadline that passes after the loop's first look stops
    the build at its first row check, and no LP is solved."""
    dl = Stop(1)
    monkeypatch.setattr(milp, "Deadline", lambda time_limit: dl)
    monkeypatch.setattr(milp, "solve_best", lambda *a, **k: pytest.fail("the fallback started after the deadline"))
    with pytest.raises(SolverFailed) as exc:
        milp.lp_rlt(fuzzed)
    _time_out(exc.value, 0.25, "stopped while building the model at b = 1")
    assert dl.after <= 1  # one look at the clock after the stop (the fallback's guard)


def test_relaxation_no_time_to_hand_the_model_over(monkeypatch):
    """A model built with less time left than its hand-over (:data:`milp.HANDOVER_SHARE` of its
    build time) is not handed to the solver; with no assignment, the time-out says so."""
    from splitopt.solvers import exact

    inst = generate(0, n_layers=5, n_servers=3, n_clients=2, batch=8)
    monkeypatch.setattr(milp, "HANDOVER_SHARE", 1e15)
    monkeypatch.setattr(exact, "solve", lambda *a, **k: pytest.fail("the model was handed over"))
    with pytest.raises(SolverFailed) as exc:
        milp.lp_plain(inst, time_limit=600.0)
    _time_out(exc.value, 600.0, "0 of 8 micro-batch sizes solved", "no time left to hand it to the solver")


def test_relaxation_fallback_time_out_names_the_limit_given(monkeypatch):
    """Every LP solved but none rounded to a feasible assignment, and the exact Formulation of the
    fallback out of time: the time-out names the caller's limit and both steps."""
    inst = generate(0, n_layers=5, n_servers=3, n_clients=2, batch=8)

    class Never(Deadline):
        def __init__(self, time_limit):
            super().__init__(None)
            self.limit = time_limit

        def remaining(self):
            return 60.0

    def no_rounding(instance, a):
        raise InfeasibleSolution("rounded LP point (test)")

    def fallback(instance, **kw):
        assert kw["time_limit"] == 60.0
        raise SolverFailed("time_limit: no feasible assignment found within 0.001 s (while building the model)",
                           status="time_limit")

    monkeypatch.setattr(milp, "Deadline", Never)
    monkeypatch.setattr(milp, "evaluate", no_rounding)
    monkeypatch.setattr(milp, "solve_best", fallback)
    with pytest.raises(SolverFailed) as exc:
        milp.lp_rlt(inst, time_limit=7.0)
    _time_out(exc.value, 7.0, "8 of 8 micro-batch sizes solved", "the exact Formulation C found none")
    assert "0.001" not in str(exc.value)


def test_relaxation_stopped_with_a_rounding_keeps_it(monkeypatch):
    """Stopped after the first ``b`` with a feasible rounding: that assignment, status
    ``time_limit``, no bound (unchanged)."""
    inst = generate(0, n_layers=5, n_servers=3, n_clients=2, batch=8)
    monkeypatch.setattr(milp, "Deadline", lambda time_limit: Stop(1))
    res = milp.lp_rlt(inst)
    assert res.status == "time_limit" and res.bound is None and res.info["b_solved"] == 1
    assert res.info["assignment_from"] == "rounding"
    evaluate(inst, res.assignment)


# ------------------------------------------------------------ Algorithm 1 as printed
def _spy_work(monkeypatch, dl):
    """Count the graphs and LPs of line 3 started after ``dl`` passed."""
    late = {"graphs": 0, "lps": 0}
    init, bound = paper.PaperGraph.__init__, paper.rlt_bound

    def graph(self, *a, **k):
        late["graphs"] += dl.hit
        init(self, *a, **k)

    def lp(*a, **k):
        late["lps"] += dl.hit
        return bound(*a, **k)

    monkeypatch.setattr(paper.PaperGraph, "__init__", graph)
    monkeypatch.setattr(paper, "rlt_bound", lp)
    return late


@pytest.mark.parametrize("name", ["algorithm1", "bcd_alg1"])
def test_algorithm1_every_stop_point(monkeypatch, name):
    """Every look at the clock of a full run (graph build, edge listing, the LP's rows, each edge
    class; ``_CHECK_EVERY = 1`` so that the small LP is looked at too) as the stop point: the answer
    is a time-out before a first path and the best plan after it, and no graph or LP is started
    after the deadline passed."""
    inst = small_revisit()
    monkeypatch.setattr(paper_graph, "_CHECK_EVERY", 1)
    count = Count()
    monkeypatch.setattr(paper, "Deadline", lambda time_limit: count)
    full = solve(inst, name)
    looks = 10 ** 12 - count.n
    assert full.status == "ok" and looks > 50
    outcomes = set()
    for n in sorted({0, 1, 2, 5, 10, 20, 40, looks // 3, looks // 2, looks - 2, looks - 1}):
        dl = Stop(n)
        monkeypatch.setattr(paper, "Deadline", lambda time_limit, dl=dl: dl)
        late = _spy_work(monkeypatch, dl)
        try:
            sol = solve(inst, name)
        except SolverFailed as exc:
            _time_out(exc, 0.25, "Algorithm 1 as printed", "no path held")
            outcomes.add("time-out")
        else:
            assert sol.status == "time_limit" and sol.bound is None, (n, sol.status)
            outcomes.add("answer")
        assert dl.hit and late == {"graphs": 0, "lps": 0}, (n, late)
        assert dl.after <= 3, (n, dl.after)  # it stops at the first look after the deadline
        monkeypatch.undo()
        monkeypatch.setattr(paper_graph, "_CHECK_EVERY", 1)
    assert outcomes == {"time-out", "answer"}


def test_algorithm1_lp_of_line_3_gets_the_time_left(monkeypatch):
    """The LP of line 3 runs with HiGHS's limit set to the time left (after the hand-over); when
    HiGHS stops at it, Algorithm 1 holds no path: a time-out naming that step."""
    inst = small_revisit()
    limits = []
    real = highs.HighsMatrix.set_time_limit

    def spy(self, seconds):
        limits.append(seconds)
        real(self, seconds)

    def stopped(self, isolate=False):
        return highs.MatrixResult("time_limit", "Time limit reached", None, None, None)

    monkeypatch.setattr(highs.HighsMatrix, "set_time_limit", spy)
    monkeypatch.setattr(highs.HighsMatrix, "solve", stopped)
    with pytest.raises(SolverFailed) as exc:
        solve(inst, "algorithm1", time_limit=300.0)
    _time_out(exc.value, 300.0, "while solving the LP bound of line 3")
    assert len(limits) == 1 and 0 < limits[0] <= 300.0


def test_algorithm1_fixed_b_takes_an_end_time():
    """``deadline`` may be an end time on ``time.perf_counter()``'s clock (``benchmarks/pipeline.py``):
    one in the past stops before any path."""
    import time

    inst = small_revisit()
    K = paper._paper_K(inst, None)
    assert paper.algorithm1_fixed_b(inst, 4, K, deadline=time.perf_counter() + 3600)[1] is not None
    with pytest.raises(SolverFailed) as exc:
        paper.algorithm1_fixed_b(inst, 4, K, deadline=time.perf_counter() - 1.0)
    assert exc.value.status == "time_limit"


def test_bcd_alg1_stopped_in_a_later_round_keeps_the_plan(monkeypatch):
    """Algorithm 1 stopped before a path in round 2 of BCD: the plan of round 1, status
    ``time_limit`` (was: the deadline was only looked at once a path was held)."""
    inst = small_revisit()
    rounds = []
    real = paper.algorithm1_fixed_b

    def fixed_b(instance, b, K, *, deadline=None, stats=None):
        rounds.append(b)
        if len(rounds) == 2:
            deadline.hit = True
            raise paper._stopped(deadline, b, "in the edge loop")
        return real(instance, b, K, deadline=deadline, stats=stats)

    monkeypatch.setattr(paper, "algorithm1_fixed_b", fixed_b)
    res = paper.bcd(inst, msp="paper", theta=-1.0, max_iter=5, time_limit=300.0)  # theta < 0: no early end
    assert len(rounds) == 2 and res.status == "time_limit" and res.info["iterations"] == 1
