"""Throughput of the validation runner: tasks per second on N small generated instances.

Compares, on the same instances (``FAMILY.generate(seed, n=SIZE)``, seeds ``0..N-1``):

* ``loop``: a plain sequential loop doing the same solver work as the harness (generate,
  ``families.solve`` the reference formulation, the ``lp`` relaxation when the family has one, and
  each algorithm; no hashing, no comparison, no store);
* ``runner jobs=1``: :func:`splitopt.validation.run_validation` in this process (harness +
  SQLite store with one commit per task);
* ``runner jobs=2``: the same on a local process pool of two workers.

Usage: ``python benchmarks/runner.py [--n 1000] [--family split] [--size 6] [--algorithms mincut]``.
Prints one line per variant and the ratios. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def plain_loop(family: str, n: int, size: int, algorithms: list[str]) -> float:
    from splitopt import families

    fam = families.get_family(family)
    t0 = time.perf_counter()
    for seed in range(n):
        inst = fam.generate(seed, n=size)
        families.solve(inst, fam.reference_algorithm, solver="highs", time_limit=None)
        if "lp" in fam.algorithms:
            families.solve(inst, "lp", solver="highs", time_limit=None)
        for a in algorithms:
            families.solve(inst, a)
    return time.perf_counter() - t0


def runner(family: str, n: int, size: int, algorithms: list[str], jobs: int, store: Path) -> float:
    from splitopt.instances.sets import recipe_set
    from splitopt.validation import run_validation

    t0 = time.perf_counter()
    summary = run_validation(recipe_set(f"bench-{family}", family, range(n), n=size), algorithms=algorithms,
                             jobs=jobs, store=store, progress=False)
    dt = time.perf_counter() - t0
    assert summary.attrs["tasks"] == n, summary.attrs
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--family", default="split")
    ap.add_argument("--size", type=int, default=6)
    ap.add_argument("--algorithms", default="mincut")
    args = ap.parse_args()
    algos = [a for a in args.algorithms.split(",") if a]

    # warm imports (pyomo, highspy) so that no variant pays them
    plain_loop(args.family, 2, args.size, algos)
    results = {}
    results["loop"] = plain_loop(args.family, args.n, args.size, algos)
    with tempfile.TemporaryDirectory() as tmp:
        results["runner jobs=1"] = runner(args.family, args.n, args.size, algos, 1, Path(tmp) / "j1.sqlite")
        results["runner jobs=2"] = runner(args.family, args.n, args.size, algos, 2, Path(tmp) / "j2.sqlite")
    print(f"{args.n} instances of {args.family} (n={args.size}), reference + {', '.join(algos)}")
    for k, dt in results.items():
        print(f"  {k:15s} {dt:8.2f} s  {args.n / dt:8.1f} tasks/s")
    base = results["loop"]
    for k in ("runner jobs=1", "runner jobs=2"):
        print(f"  speed-up of {k} over the plain loop: {base / results[k]:.2f}x")


if __name__ == "__main__":
    main()
