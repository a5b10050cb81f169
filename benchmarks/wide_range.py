"""Wide-range agreement counts (issue 13): every cost, size and rate log-uniform over 1e-9..1e9.

split: the instances of ``tests/cases/split.py:wide_range_instance`` (seeds 0..N-1, DAGs of 3..20
layers); the reference ``milp`` against every exact split algorithm (mincut, qdmp, blockwise, chain
where the graph is a chain, brute force up to 12 layers). grouping: the instances of
``tests/models/test_grouping_numerics.py:wide_grouping``; ``milp_interval`` against ``dp``,
``bruteforce`` and the other exact grouping algorithms where they apply.

Counts printed per family: instances, reference statuses (``optimal`` / ``numerical`` / solver
failed), agreements of every exact algorithm with an ``optimal`` reference, disagreements (must be
0), the worst relative difference among ``optimal`` answers and the worst relative error of a
``numerical`` answer (what the honest status saved the user from).

Usage: ``python benchmarks/wide_range.py [N_SPLIT] [N_GROUPING]`` (defaults 10000 and 2000, the
issue's sizes; about 20 minutes on 2 cores).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cases.split import wide_range_instance  # noqa: E402
from splitopt.errors import InstanceError, SolverFailed  # noqa: E402
from splitopt.families import NUMERICAL, solve  # noqa: E402


def _rel(a: float, b: float) -> float:
    m = max(abs(a), abs(b))
    return 0.0 if m == 0 else abs(a - b) / m


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-300


def run(family: str, make, seeds, reference: str, exact: list[str], small: dict[str, int]) -> dict:
    c = {"instances": 0, "optimal": 0, NUMERICAL: 0, "solver_failed": 0, "agree": 0, "disagree": 0,
         "n/a": 0, "worst_optimal": (0.0, None), "worst_numerical": (0.0, None)}
    t0 = time.perf_counter()
    for s in seeds:
        inst = make(s)
        c["instances"] += 1
        objs = {}
        for a in exact:
            if a in small and _size(inst) > small[a]:
                c["n/a"] += 1
                continue
            try:
                objs[a] = solve(inst, a).objective
            except InstanceError:
                c["n/a"] += 1
        best = min(objs.values())
        try:
            ref = solve(inst, reference)
        except SolverFailed:
            c["solver_failed"] += 1
            continue
        c[ref.status] += 1
        r = _rel(ref.objective, best)
        key = "worst_optimal" if ref.status == "optimal" else "worst_numerical"
        if r > c[key][0]:
            c[key] = (r, s)
        if ref.status == "optimal":
            for a, o in objs.items():
                if _close(o, ref.objective):
                    c["agree"] += 1
                else:
                    c["disagree"] += 1
                    print(f"  DISAGREE {family} seed {s}: {a} {o!r} vs {reference} {ref.objective!r}")
    c["seconds"] = time.perf_counter() - t0
    return c


def _size(inst) -> int:
    g = getattr(inst, "graph", None)
    return len(g) if g is not None else len(inst.times)


def main(argv: list[str]) -> None:
    n_split = int(argv[0]) if argv else 10_000
    n_grouping = int(argv[1]) if len(argv) > 1 else 2000
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "models"))
    from test_grouping_numerics import wide_grouping

    rows = [("split", run("split", wide_range_instance, range(n_split), "milp",
                          ["mincut", "qdmp", "blockwise", "chain", "bruteforce"], {"bruteforce": 12})),
            ("grouping", run("grouping", wide_grouping, range(n_grouping), "milp_interval",
                             ["dp", "linear_partition", "parametric", "bruteforce"], {}))]
    print("| family | instances | reference optimal | numerical | solver failed | exact-algorithm agreements "
          "| disagreements | declined (n/a) | worst rel. diff (optimal) | worst rel. error (numerical) | time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for fam, c in rows:
        wo, wn = c["worst_optimal"], c["worst_numerical"]
        print(f"| {fam} | {c['instances']} | {c['optimal']} | {c[NUMERICAL]} | {c['solver_failed']} | {c['agree']} "
              f"| {c['disagree']} | {c['n/a']} | {wo[0]:.3g} (seed {wo[1]}) | {wn[0]:.3g} (seed {wn[1]}) "
              f"| {c['seconds']:.0f} s |")


if __name__ == "__main__":
    main(sys.argv[1:])
