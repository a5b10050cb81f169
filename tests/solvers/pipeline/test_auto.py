"""``auto`` (the pipeline family's default, :mod:`splitopt.solvers.pipeline.auto`): equal to the
brute-force optimum on small instances of every placement; when the exact search cannot finish,
the MILP runs with the time left and the answer keeps the better plan and the stronger bound."""

from __future__ import annotations

import pytest

from splitopt.families import AlgoResult, get_family, solve
from splitopt.solvers.pipeline import auto, bruteforce, shortest_path

from .helpers import close, small, value


@pytest.mark.parametrize("placement", ["distinct", "revisit", "aggregate"])
def test_auto_equals_bruteforce(placement):
    for seed in range(12):
        inst = small(seed, placement, b=None)
        opt = value(inst, bruteforce.bruteforce(inst))
        sol = solve(inst)
        assert sol.algorithm == "auto" and sol.status == "optimal"
        assert close(sol.objective, opt) and close(sol.bound, opt)


def test_default_algorithm():
    assert get_family("pipeline").default_algorithm == "auto"


def test_unfinished_search_hands_over_to_the_milp(monkeypatch):
    """The search is made to stop with a poor plan and a weak bound (status feasible): the MILP
    then proves the brute-force optimum, and the answer takes its plan and bound."""
    for seed in range(20):  # an instance where the best plan at some fixed b is not optimal
        inst = small(seed, "distinct", b=None)
        opt = value(inst, bruteforce.bruteforce(inst))
        poor = max((shortest_path.solve(inst, b=b) for b in shortest_path.candidate_bs(inst)),
                   key=lambda r: value(inst, r.assignment))
        if value(inst, poor.assignment) > opt * (1 + 1e-6):
            break
    else:
        pytest.fail("every b optimal on 20 seeds")

    def stub(instance, **kw):
        return AlgoResult(poor.assignment, status="feasible", bound=0.5 * opt, info={})

    monkeypatch.setattr(auto.shortest_path, "solve", stub)
    res = auto.solve(inst)
    assert [m["method"] for m in res.info["methods"]] == ["shortest_path", "milp"]
    assert close(value(inst, res.assignment), opt) and res.status == "optimal" and close(res.bound, opt)


def test_bound_is_never_weakened(monkeypatch):
    """A MILP that ends without a bound leaves the search's bound (and plan) in place."""
    inst = small(1, "distinct", b=None)
    opt = value(inst, bruteforce.bruteforce(inst))
    sp = shortest_path.solve(inst)
    monkeypatch.setattr(auto.shortest_path, "solve",
                        lambda instance, **kw: AlgoResult(sp.assignment, status="feasible", bound=0.9 * opt))
    monkeypatch.setattr(auto.milp, "solve_best",
                        lambda instance, **kw: AlgoResult(sp.assignment, status="numerical", bound=None))
    res = auto.solve(inst)
    assert res.status == "feasible" and close(res.bound, 0.9 * opt)


def test_large_instances_skip_the_milp(monkeypatch):
    """Rule 2: above MILP_MAX_SIZE the search gets the whole limit and the MILP is not run."""
    inst = small(0, "distinct", b=None)
    monkeypatch.setattr(auto, "MILP_MAX_SIZE", 0)
    seen = {}
    real = shortest_path.solve

    def stub(instance, **kw):
        seen.update(kw)
        sp = real(instance, b=instance.allowed_b()[0])
        return AlgoResult(sp.assignment, status="feasible", bound=0.0)

    monkeypatch.setattr(auto.shortest_path, "solve", stub)
    monkeypatch.setattr(auto.milp, "solve_best", lambda *a, **k: pytest.fail("the MILP ran"))
    res = auto.solve(inst, time_limit=5.0)
    assert seen["time_limit"] == 5.0 and [m["method"] for m in res.info["methods"]] == ["shortest_path"]
