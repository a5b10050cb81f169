"""Benchmark: the four shipped msr-fiddle/dnn-partitioning workloads (issue 11), ours vs the peer.

For every workload (max-load objective):

* contiguous (``chain``, the peer's DP model): time of the ideal branch and bound to a proven
  optimum (first call reported apart; warm = median of repeated calls), its value against the peer's
  DP value and the peer's DP time (measured on its own C++ code, from the data README: same kind of
  machine, wall time including reading the JSON) and the ratio;
* contiguous (``convex``, the peer's IP model) and non-contiguous (``none``): the device MILP through
  HiGHS with a 60 s limit: time, status, value, proven bound and gap;
* baselines scored by our evaluator, gap to the best proven value of the same contiguity: the
  linearised DP (PipeDream-style), the local search (10 restarts; non-contiguous), the expert split
  (where shipped).

Run: ``.venv/bin/python benchmarks/workloads.py [--time-limit 60] [--repeat 5]``. Never part of
the tests.
"""

from __future__ import annotations

import argparse
import statistics
import time

from splitopt.families import solve
from splitopt.instances.importers.dnn_partitioning import MS, PACKAGED, REFERENCE, load_packaged


def gap(v, ref):
    return (v - ref) / ref * 100 if ref else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-milp", action="store_true")
    args = ap.parse_args(argv)

    print("## Contiguous (chain = the peer's DP model): ideal branch and bound vs the peer's DP\n")
    print("| workload | nodes | ours: value (ms) | status | first call | warm median | peer DP value (ms) | "
          "peer DP time | speed-up (warm) |")
    print("|---|---|---|---|---|---|---|---|---|")
    best = {}
    for name in PACKAGED:
        inst = load_packaged(name, contiguity="chain")
        s = solve(inst, "device_ideals", time_limit=args.time_limit)
        warm = [solve(inst, "device_ideals", time_limit=args.time_limit).seconds for _ in range(args.repeat)]
        w = statistics.median(warm)
        ref, ref_t = REFERENCE[name]
        best[name, "chain"] = s.objective
        same = "=" if abs(s.objective / MS - ref) <= 1e-9 * ref else "!="
        print(f"| {name} | {inst.n_nodes} | {s.objective / MS:.10g} {same} | {s.status} | {s.seconds:.3f} s | "
              f"{w:.3f} s | {ref:.10g} | {'< ' if ref_t <= 0.01 else ''}{ref_t:.2f} s | "
              f"{'>= ' if ref_t <= 0.01 else ''}{ref_t / w:.1f}x |")

    if not args.skip_milp:
        print(f"\n## Device MILP through HiGHS ({args.time_limit:g} s limit), convex contiguity (the peer's IP model) "
              "and non-contiguous\n")
        print("| workload | contiguity | status | value (ms) | bound (ms) | gap | time |")
        print("|---|---|---|---|---|---|---|")
        for name in PACKAGED:
            for cont in ("convex", "none"):
                inst = load_packaged(name, contiguity=cont)
                t0 = time.perf_counter()
                s = solve(inst, "device_milp", time_limit=args.time_limit)
                t = time.perf_counter() - t0
                g = (s.objective - s.bound) / s.objective * 100 if s.bound is not None else float("nan")
                if s.status == "optimal":
                    best[name, cont] = s.objective
                print(f"| {name} | {cont} | {s.status} | {s.objective / MS:.10g} | "
                      f"{(s.bound or 0) / MS:.10g} | {g:.3f} % | {t:.1f} s |")

    print("\n## Baselines (our evaluator), gap to the proven optimum of the same contiguity\n")
    print("| workload | linearised DP (chain) | expert (chain check) | local search (none) |")
    print("|---|---|---|---|")
    for name in PACKAGED:
        inst = load_packaged(name, contiguity="chain")
        opt = best[name, "chain"]
        lin = solve(inst, "device_linearised")
        cells = [f"{lin.objective / MS:.6g} ms (+{gap(lin.objective, opt):.2f} %, {lin.seconds:.3f} s)"]
        if "expert" in inst.meta:
            e = solve(inst, "device_expert")
            cells.append(f"{e.objective / MS:.6g} ms (+{gap(e.objective, opt):.2f} %)")
        else:
            cells.append("not shipped")
        inst_n = load_packaged(name, contiguity="none")
        loc = solve(inst_n, "device_local")
        ref_n = best.get((name, "none"))
        cells.append(f"{loc.objective / MS:.6g} ms ({'+%.2f %%' % gap(loc.objective, ref_n) if ref_n else 'no proven optimum'}"
                     f", {loc.seconds:.1f} s)")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
