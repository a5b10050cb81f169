"""``auto``, the throughput family's default (issue 21 §2): its written rule, its answers against brute
force, the hand-over of bnb's incumbent to the RLT MILP, and ``splitopt solve FILE`` with no ``-a``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from splitopt.families import get_family, solve
from splitopt.instances import io
from splitopt.instances.throughput import generate
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import auto, bnb, bruteforce

from .test_bnb import variants
from .test_limits import _After

DATA = Path(__file__).parent / "data"
SRC = str(Path(__file__).resolve().parents[3] / "src")


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def test_auto_is_the_default():
    assert get_family("throughput").default_algorithm == "auto"


def test_rule_by_shape():
    small = generate(0, n_layers=6, n_nodes=3)
    assert small.n_layers * small.n_nodes ** 2 <= auto.MILP_MAX_SIZE
    assert auto.rule(small) == ["bnb", "rlt"]
    big = io.load(DATA / "throughput_16_nodes_recursion.json")  # 60 layers, 16 nodes
    assert big.n_layers * big.n_nodes ** 2 > auto.MILP_MAX_SIZE
    assert auto.rule(big) == ["bnb"]


@pytest.mark.parametrize("seed", range(24))
def test_auto_equals_brute_force(seed):
    inst = generate(seed, n_layers=6, n_nodes=3, **variants(seed))
    best = evaluate(inst, bruteforce.bruteforce(inst))[0]
    sol = solve(inst)
    assert sol.algorithm == "auto"
    assert sol.status == "optimal" and close(sol.objective, best) and close(sol.bound, best)


@pytest.mark.parametrize("seed", range(8))
def test_bnb_incumbent_handed_to_the_milp(seed, monkeypatch):
    """bnb stopped at once (a deadline that has passed at its first look): the RLT MILP starts from
    bnb's incumbent and must close the gap to the brute-force optimum."""
    inst = generate(seed, n_layers=7, n_nodes=3, max_splits=(None, 2)[seed % 2])
    best = evaluate(inst, bruteforce.bruteforce(inst))[0]
    monkeypatch.setattr(bnb, "Deadline", _After)
    _After.n = 0
    alone = bnb.solve(inst, time_limit=100.0)
    sol = solve(inst, "auto", time_limit=60.0)
    assert sol.info["rule"].startswith("bnb+rlt")
    assert sol.status == "optimal" and close(sol.objective, best), (seed, sol.objective, best)
    assert sol.bound <= best * (1 + 1e-9)
    assert evaluate(inst, alone.assignment)[0] >= sol.objective * (1 - 1e-12)


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": SRC, "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "splitopt.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_solve_without_algorithm_on_every_data_file():
    """``splitopt solve FILE`` with no ``-a`` answers on every throughput file here, within the limit."""
    for path in sorted(DATA.glob("*.json")):
        out = _cli("solve", str(path), "--time-limit", "2", "--json")
        assert out.returncode == 0, (path.name, out.stderr)
        sol = json.loads(out.stdout)
        assert sol["algorithm"] == "auto"
        assert sol["objective"] == evaluate(io.load(path), sol["assignment"])[0]
        assert sol["bound"] is None or sol["bound"] <= sol["objective"] * (1 + 1e-9)



def test_bnb_ends_before_the_limit(monkeypatch):
    # bnb checks its deadline between phases (300 layers on 12 nodes: up to 65 ms past it): auto
    # gives it the limit less a wrap-up margin, so the call ends within the limit
    seen = []
    real = bnb.solve

    def spy(instance, time_limit=None, **kw):
        seen.append(time_limit)
        return real(instance, time_limit=time_limit, **kw)

    monkeypatch.setattr(bnb, "solve", spy)
    big = generate(1, n_layers=300, n_nodes=12)  # L N^2 above MILP_MAX_SIZE: bnb alone
    assert auto.rule(big) == ["bnb"]
    solve(big, "auto", time_limit=2.0)
    assert seen and 2.0 - auto.WRAP_S <= seen[0] <= 2.0 * (1 - auto.WRAP_SHARE) + 1e-9
