"""Benchmark (issue 21): exact grouping at 1,000 parts, k = 8, 16, 64, every objective -- the new
default (``auto``: :mod:`splitopt.solvers.grouping.threshold`, or the greedy-probe bisection for a
bottleneck without transfers) beside the previous default (``dp``, the threshold-scan DP of
:mod:`splitopt.solvers.grouping.dp`) and the min-max DP (``linear_partition``, bottleneck), in one
run, with the ratio of their times and a check that the optima agree (relative 1e-9).

Instances: ``generate(0, n=1000, k=k, objective=...)`` (random chain, R = 4 requests, 1e8 B/s).
Times: median of 3 warm calls for ``auto``; one call for the reference methods, each in a child
process killed after ``--kill`` seconds (default 60; recorded as ``> KILL s``).

Run: ``python benchmarks/grouping_scale.py [--kill S] [--n N]``. Never part of the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
from splitopt.families import solve
from splitopt.instances.grouping import generate
n, k, obj, algo = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
inst = generate(0, n=n, k=k, objective=obj)
t0 = time.perf_counter()
s = solve(inst, algo)
print(json.dumps({"seconds": time.perf_counter() - t0, "objective": s.objective}))
"""


def reference(n, k, obj, algo, kill):
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(k), obj, algo], capture_output=True,
                             text=True, timeout=kill)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kill", type=float, default=60.0)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args(argv)
    from splitopt.families import solve
    from splitopt.instances.grouping import generate

    print(f"n = {args.n} parts; auto = the new default; reference killed after {args.kill:.0f} s\n")
    print("| objective | k | auto method | auto time | reference | reference time | ratio | same optimum |")
    print("|---|---|---|---|---|---|---|---|")
    for obj in ("perf", "thesis_cost", "bottleneck"):
        for k in (8, 16, 64):
            inst = generate(0, n=args.n, k=k, objective=obj)
            sol = solve(inst, "auto")
            ts = []
            for _ in range(3):
                t0 = time.perf_counter()
                solve(inst, "auto")
                ts.append(time.perf_counter() - t0)
            t = statistics.median(ts)
            refs = ("dp", "linear_partition") if obj == "bottleneck" else ("dp",)
            for ref in refs:
                r = reference(args.n, k, obj, ref, args.kill)
                if r is None:
                    rt, ratio, same = f"> {args.kill:.0f} s", f"> {args.kill / t:.0f}x", "-"
                else:
                    rt = f"{r['seconds']:.2f} s"
                    ratio = f"{r['seconds'] / t:.1f}x"
                    same = "yes" if abs(r["objective"] - sol.objective) <= 1e-9 * max(1, abs(sol.objective)) else \
                        f"NO ({r['objective']!r} vs {sol.objective!r})"
                print(f"| {obj} | {k} | {sol.info['method']} | {t * 1e3:.0f} ms | {ref} | {rt} | {ratio} | {same} |",
                      flush=True)


if __name__ == "__main__":
    main()
