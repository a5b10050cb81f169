"""HiGHS 1.16 prints a banner on the first ``Highs()`` of a process; splitopt's output stays clean."""

import subprocess
import sys


def test_first_highs_solve_prints_nothing():
    code = ("import pyomo.environ as pyo\n"
            "from splitopt.solvers.exact import solve\n"
            "m = pyo.ConcreteModel(); m.x = pyo.Var(domain=pyo.Binary)\n"
            "m.o = pyo.Objective(expr=m.x); m.c = pyo.Constraint(expr=m.x >= 0)\n"
            "r = solve(m, solver='highs'); print('status', r.status)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "status optimal", out.stdout
