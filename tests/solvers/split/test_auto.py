"""``auto``, the split family's default (issue 21 §2): the rule of its docstring, checked against
brute force (tiny graphs) and the certified MILP (wide-range costs), its steps per shape, its time
limit, and ``splitopt solve FILE`` without ``-a`` on every kind of split file."""

import math
import time

import pytest

from cases.split import KINDS, random_instance, wide_range_instance
from splitopt.families import get_family, solve
from splitopt.solvers.split import auto, bruteforce


def test_auto_is_the_default_and_takes_a_time_limit():
    fam = get_family("split")
    assert fam.default_algorithm == "auto" and fam.algorithms["auto"].option("time_limit") is not None


def test_auto_is_optimal_with_a_proof_on_random_dags():
    steps_seen = set()
    for seed in range(150):
        inst = random_instance(seed)
        best = bruteforce.solve_detailed(inst)[0]
        s = solve(inst, "auto")
        assert s.status == "optimal", (seed, s.info)
        assert math.isclose(s.objective, best, rel_tol=1e-12, abs_tol=1e-300), seed
        assert s.bound <= best * (1 + 1e-12) and s.objective - s.bound <= 1e-9 * s.objective
        steps_seen.add(tuple(s.info["steps"]))
    # the chain step on chains, the cut elsewhere (the LP fallback is never needed here)
    assert ("start", "chain") in steps_seen and ("start", "mincut") in steps_seen
    assert not any("lp" in st for st in steps_seen)


@pytest.mark.parametrize("seed", range(12))
def test_auto_equals_the_certified_milp_on_wide_ranges(seed):
    inst = wide_range_instance(seed)
    a, m = solve(inst, "auto"), solve(inst, "milp")
    assert a.status == "optimal" and m.status == "optimal"
    assert math.isclose(a.objective, m.objective, rel_tol=1e-9)


def test_chain_bound_is_below_the_optimum_of_long_chains():
    """The chain step's rounding bound against the min cut's certificate on chains of 2,000 layers."""
    from splitopt.instances.split import generate
    from splitopt.solvers.split import mincut

    for seed in range(4):
        inst = generate(seed, kind="chain", n=2000, mode=None)
        p, val, lb = auto.chain_certified(inst)
        cut = mincut.solve_detailed(inst)
        opt_lo = cut.lower_bound
        assert lb <= cut.value * (1 + 1e-15)
        assert math.isclose(val, cut.value, rel_tol=1e-12) and val >= opt_lo * (1 - 1e-15)
        assert val - lb <= 1e-9 * val  # the proof closes the gap


def test_run_killable_returns_raises_and_kills():
    assert auto.run_killable(sum, ([1, 2, 3],), 60) == 6
    with pytest.raises(ZeroDivisionError):
        auto.run_killable(lambda: 1 / 0, (), 60)
    t0 = time.perf_counter()
    assert auto.run_killable(time.sleep, (120,), 0.3) is None
    assert time.perf_counter() - t0 < 60  # killed (loose: not a speed assertion; the sleep was 120 s)


def test_time_limit_returns_the_start_and_the_trivial_bound(monkeypatch):
    """A cut that does not finish within the limit: the answer is the start (the better trivial
    split) with the trivial bound, status time_limit (never optimal unless they agree)."""
    from splitopt.solvers.split import milp

    monkeypatch.setattr(auto, "ISOLATE_ABOVE", 0)  # every graph counts as large: the cut runs killable
    monkeypatch.setattr(auto, "_cut", lambda inst: time.sleep(120))
    for seed in range(3):
        inst = random_instance(seed, kind="layered", n=15)
        s = solve(inst, "auto", time_limit=0.3)
        names, val = milp.start_split(inst)
        assert s.objective == val and s.bound == min(milp.trivial_bound(inst), val)
        assert s.status == ("optimal" if val - s.bound <= 1e-9 * val else "time_limit")


def test_cli_solve_without_algorithm_on_every_kind(tmp_path, capsys):
    """``splitopt solve FILE`` (no ``-a``) on every split file kind: exit 0, ``auto``, optimal."""
    import json
    from pathlib import Path

    from splitopt.cli import main
    from splitopt.instances import io
    from splitopt.instances.split import generate

    files = [Path(__file__).parent / "data" / "split_all_tiny.json"]
    for i, kind in enumerate(KINDS):
        f = tmp_path / f"{kind}.json"
        io.save(random_instance(i, kind=kind), f)
        files.append(f)
    for kind in ("chain", "layered_dag", "series_parallel", "residual_stack", "inception_stack", "dense_stack"):
        f = tmp_path / f"gen-{kind}.json"
        io.save(generate(1, kind=kind, n=6, mode=None), f)
        files.append(f)
    for f in files:
        assert main(["solve", str(f), "--json"]) == 0, f
        d = json.loads(capsys.readouterr().out)
        assert d["algorithm"] == "auto" and d["status"] == "optimal", (f, d["status"], d["info"])
        ref = solve(io.load(f), "milp")
        assert math.isclose(d["objective"], ref.objective, rel_tol=1e-9), f
