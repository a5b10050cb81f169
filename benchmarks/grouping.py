"""Benchmark: exact grouping algorithms vs the thesis's exhaustive search vs the interval MILP.

ResNet-152 at block granularity (n = 53 parts; digest 003 §3.2), k = 2..8, batch 16, 100 GMAC/s,
thesis bandwidth 25 x 1024 B/ms, R = 11 requests. For each k and objective (perf, bottleneck):

* exact: ``grouping_dp`` (perf) / ``linear_partition`` DP and parametric search (bottleneck),
  median of repeated runs;
* exhaustive: the thesis Alg. 3 enumeration (scored with the instance objective) -- *run* where the
  cut-set count is at most ``--max-run`` (default 300,000), otherwise *extrapolated* from the
  measured seconds per cut set times ``C(n-1, k-1)`` (labelled ``est``);
* the interval MILP (digest §5.3 MILP B) through HiGHS.

Then the worst observed BNP (thesis Alg. 1, as printed) gap to the exact Perf optimum over the five
ResNets and k = 1..8. Run: ``.venv/bin/python benchmarks/grouping.py [--quick]``. Never part of the
tests.
"""

from __future__ import annotations

import argparse
import statistics
import time

from splitopt.families import solve
from splitopt.instances.grouping import GroupingInstance
from splitopt.models.grouping import evaluate
from splitopt.solvers.grouping import dp as grouping_dp
from splitopt.solvers.grouping import linear_partition
from splitopt.solvers.grouping.bnp import bnp
from splitopt.solvers.grouping.exhaustive import count_cut_sets, exhaustive


def timed(fn, *a, reps=5, **kw):
    out = fn(*a, **kw)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*a, **kw)
        ts.append(time.perf_counter() - t0)
    return out, statistics.median(ts)


def fmt(sec):
    if sec >= 1:
        return f"{sec:9.2f} s "
    if sec >= 1e-3:
        return f"{sec * 1e3:9.2f} ms"
    return f"{sec * 1e6:9.1f} us"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="resnet152")
    ap.add_argument("--max-run", type=int, default=300_000, help="largest cut-set count to actually enumerate")
    ap.add_argument("--quick", action="store_true", help="skip the MILP for k > 4")
    ap.add_argument("--requests", type=int, default=11)
    args = ap.parse_args(argv)

    rate = None  # seconds per cut set, measured
    print(f"# {args.arch}: exact vs exhaustive (Alg. 3) vs interval MILP (HiGHS); R = {args.requests}")
    for obj in ("perf", "bottleneck"):
        print(f"\n## objective = {obj}")
        print(f"{'k':>2} {'cut sets':>12} {'exact':>12} {'param':>12} {'exhaustive':>16} {'MILP B':>12} "
              f"{'exh/exact':>11} {'MILP/exact':>11} {'objective':>12}")
        for k in range(2, 9):
            inst = GroupingInstance.from_zoo(args.arch, k, objective=obj, requests=args.requests)
            if obj == "perf":
                sizes, t_exact = timed(grouping_dp.solve, inst)
                t_par = None
            else:
                sizes, t_exact = timed(linear_partition.solve_dp, inst)
                _, t_par = timed(linear_partition.parametric_search, inst)
            val = evaluate(inst, sizes)[0]
            cnt = count_cut_sets(inst.n, k)
            if cnt <= args.max_run:
                ex_sizes, t_ex = timed(exhaustive, inst, score="instance", max_cut_sets=None, reps=1)
                assert abs(evaluate(inst, ex_sizes)[0] - val) <= 1e-9 * abs(val)
                rate = t_ex / cnt if cnt >= 1000 else rate
                ex_label = fmt(t_ex) + "    "
            else:
                t_ex = cnt * rate
                ex_label = fmt(t_ex) + " est"
            if args.quick and k > 4:
                t_milp, milp_label = None, "       -    "
            else:
                t0 = time.perf_counter()
                ref = solve(inst, "milp_interval", time_limit=300)
                t_milp = time.perf_counter() - t0
                assert ref.status == "optimal" and abs(ref.objective - val) <= 1e-9 * abs(val) + 1e-12
                milp_label = fmt(t_milp)
            par = fmt(t_par) if t_par is not None else "       -    "
            print(f"{k:>2} {cnt:>12,} {fmt(t_exact)} {par} {ex_label:>16} {milp_label} "
                  f"{t_ex / t_exact:>11.3g} {(t_milp / t_exact if t_milp else float('nan')):>11.3g} {val:>12.6g}")
    print(f"\n(exhaustive: {rate * 1e6:.2f} us per cut set measured; 'est' = extrapolated from C(n-1,k-1))"
          if rate else "")

    print("\n# BNP (thesis Alg. 1 as printed) vs exact: Perf gap (BNP / exact - 1), R = "
          f"{args.requests}; per-image bytes (s/16) in the second table")
    for per_image in (False, True):
        print(f"\n## s_j = {'bytes per image' if per_image else 'bytes per batch of 16'}")
        print(f"{'arch':>10} " + " ".join(f"{'k=' + str(k):>7}" for k in range(1, 9)) + f" {'worst':>7}")
        worst_all = 0.0
        for arch in ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152"):
            row = []
            for k in range(1, 9):
                inst = GroupingInstance.from_zoo(arch, k, objective="perf", requests=args.requests)
                if per_image:
                    inst = inst.with_(s=tuple(x / 16 for x in inst.s))
                opt = evaluate(inst, grouping_dp.solve(inst))[0]
                row.append(evaluate(inst, bnp(inst))[0] / opt - 1.0)
            worst_all = max(worst_all, max(row))
            print(f"{arch:>10} " + " ".join(f"{100 * g:6.1f}%" for g in row) + f" {100 * max(row):6.1f}%")
        print(f"worst observed BNP gap: {100 * worst_all:.1f}%")


if __name__ == "__main__":
    main()
