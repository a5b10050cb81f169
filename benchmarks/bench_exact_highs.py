"""Time the HiGHS paths of splitopt.solvers.exact on a random sparse LP (not part of the tests).

    .venv/bin/python benchmarks/bench_exact_highs.py [n_vars] [n_rows] [repeats]

Prints, for each path, the median wall time of build-free solve calls (model building is timed
separately): splitopt's direct highspy path ("highs"), Pyomo's appsi_highs, and Pyomo's new
persistent "highs" interface. All three must report the same objective.
"""

from __future__ import annotations

import random
import statistics
import sys
import time

import pyomo.environ as pyo


def build(n: int, m: int, seed: int):
    rng = random.Random(seed)
    mdl = pyo.ConcreteModel()
    mdl.I = pyo.RangeSet(0, n - 1)
    mdl.x = pyo.Var(mdl.I, bounds=(0, 10))
    mdl.obj = pyo.Objective(expr=sum(rng.uniform(-1, 1) * mdl.x[i] for i in mdl.I))
    rows = [(rng.sample(range(n), 8), rng.uniform(1, 5)) for _ in range(m)]
    coef = [[rng.uniform(0, 1) for _ in range(8)] for _ in range(m)]
    mdl.c = pyo.Constraint(range(m), rule=lambda b, j: sum(
        a * mdl.x[i] for i, a in zip(rows[j][0], coef[j])) <= rows[j][1])
    return mdl


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    m = int(sys.argv[2]) if len(sys.argv) > 2 else n // 2
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory

    from splitopt.solvers.exact import solve

    def run(path, mdl):
        if path == "splitopt highs (highspy direct)":
            return solve(mdl, "highs").objective
        if path == "pyomo appsi_highs":
            return solve(mdl, "appsi_highs").objective
        return NewFactory("highs").solve(mdl).incumbent_objective

    paths = ["splitopt highs (highspy direct)", "pyomo appsi_highs", "pyomo highs (new)"]
    build_times, times, objs = [], {p: [] for p in paths}, {p: [] for p in paths}
    run(paths[0], build(50, 25, 99))  # warm imports
    run(paths[1], build(50, 25, 99))
    for rep in range(reps):
        for p in paths:
            t = time.perf_counter()
            mdl = build(n, m, rep)
            build_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            objs[p].append(run(p, mdl))
            times[p].append(time.perf_counter() - t)
    print(f"LP with {n} variables, {m} rows, 8 nonzeros a row; median of {reps}")
    print(f"  build Pyomo model: {statistics.median(build_times):.3f} s")
    for p in paths:
        print(f"  {p:34s} {statistics.median(times[p]):.3f} s")
    for rep in range(reps):
        vals = [objs[p][rep] for p in paths]
        assert max(vals) - min(vals) <= 1e-6 * max(1.0, abs(vals[0])), vals


if __name__ == "__main__":
    main()
