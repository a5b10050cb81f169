"""Benchmark (issue 21 §3): the throughput family at scale, ``auto`` beside the RLT MILP with the same
time limit in one run.

Graph: zoo ResNet-152 at operator granularity (515 layers, 514 tensors, 23.1 GFLOP per frame, skip
connections in every bottleneck block). Platforms: 8 and 10 heterogeneous nodes, rates drawn
log-uniformly over 1-31.6 GFLOP/s from the seed ``N`` (listed in the output), every pair linked at
Gigabit Ethernet (125 MB/s), full-duplex, a tensor sent once per destination node. Caps S = 3, 5, 7.

For each instance: ``auto`` (the family default; on these sizes its rule runs ``bnb`` with the whole
limit) and ``rlt`` (the RLT-1 MILP through HiGHS, model build included in the limit), both through
``splitopt.families.solve`` so that every period is scored by the family evaluator and every status
passes ``honest_status``. Columns: period, bound, gap = (period - bound) / period, wall time
(limit kept: <= limit + max(1 s, 10 %)). Target: gap <= 1 % within 60 s.

Run: ``.venv/bin/python benchmarks/record.py throughput_scale benchmarks/throughput_scale.py``
(``--limit SECONDS``, default 60; about 2 x 6 x limit in all).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from splitopt.errors import SplitoptError
from splitopt.families import solve
from splitopt.instances.throughput import ThroughputInstance
from splitopt.instances.zoo import get

LINK = 125e6  # bytes/s, Gigabit Ethernet
CAPS = (3, 5, 7)
NODES = (8, 10)


def platform(n: int) -> list[float]:
    rng = np.random.default_rng(n)
    return sorted((float(x) for x in 10 ** rng.uniform(9, 10.5, n)), reverse=True)


def instance(n: int, cap: int) -> ThroughputInstance:
    g = get("resnet152")
    flops = platform(n)
    return ThroughputInstance.from_graph(g, flops, [[LINK] * n for _ in range(n)], max_splits=cap,
                                         name=f"resnet152-{n}n-S{cap}")


def run(inst, algo: str, limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        s = solve(inst, algo, time_limit=limit)
    except SplitoptError as exc:
        return {"seconds": time.perf_counter() - t0, "error": str(exc).splitlines()[0][:80]}
    sec = time.perf_counter() - t0
    gap = (s.objective - s.bound) / s.objective if s.bound is not None and s.objective > 0 else None
    return {"seconds": sec, "period": s.objective, "bound": s.bound, "gap": gap, "status": s.status}


def cell(r: dict) -> list[str]:
    if "error" in r:
        return ["-", "-", "-", f"{r['seconds']:.1f} s", r["error"]]
    gap = "-" if r["gap"] is None else f"{100 * r['gap']:.3f} %"
    bound = "-" if r["bound"] is None else f"{r['bound']:.6f}"
    return [f"{r['period']:.6f}", bound, gap, f"{r['seconds']:.1f} s", r["status"]]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--nodes", default=",".join(map(str, NODES)))
    ap.add_argument("--caps", default=",".join(map(str, CAPS)))
    args = ap.parse_args(argv)
    limit = args.limit
    allowed = limit + max(1.0, 0.1 * limit)
    nodes = [int(x) for x in args.nodes.split(",")]
    caps = [int(x) for x in args.caps.split(",")]
    print(f"# throughput at scale: ResNet-152 (515 layers), auto vs RLT MILP, time limit {limit:g} s\n")
    for n in nodes:
        print(f"- {n} nodes: " + ", ".join(f"{f / 1e9:.2f}" for f in platform(n)) + " GFLOP/s; every link 125 MB/s")
    print()
    head = ["instance", "S", "auto period (s)", "auto bound", "auto gap", "auto time", "auto status",
            "RLT period (s)", "RLT bound", "RLT gap", "RLT time", "RLT status"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    rows = []
    for n in nodes:
        for cap in caps:
            inst = instance(n, cap)
            ours = run(inst, "auto", limit)
            milp = run(inst, "rlt", limit)
            rows.append((n, cap, ours, milp))
            print(f"| resnet152-{n}n | {cap} | " + " | ".join(cell(ours) + cell(milp)) + " |", flush=True)
    print()
    met = [(n, c) for n, c, o, _m in rows if o.get("gap") is not None and o["gap"] <= 0.01 and o["seconds"] <= allowed]
    print(f"- target gap <= 1 % within {limit:g} s (limit kept: <= {allowed:g} s): auto meets it on "
          f"{len(met)} of {len(rows)}")
    for n, c, o, m in rows:
        if (n, c) not in met:
            what = o.get("error") or f"gap {100 * o['gap']:.3f} % in {o['seconds']:.1f} s" if o.get("gap") is not None \
                else o.get("error", "no bound")
            print(f"  - miss: {n} nodes, S = {c}: {what}")
    kept = [o["seconds"] <= allowed for _n, _c, o, _m in rows] + [m["seconds"] <= allowed for _n, _c, _o, m in rows]
    print(f"- limit kept (<= {allowed:g} s): auto {sum(kept[:len(rows)])} of {len(rows)}, "
          f"RLT {sum(kept[len(rows):])} of {len(rows)}")
    worst = max((m["seconds"] for *_x, m in rows), default=0.0)
    print(f"- longest RLT run: {worst:.1f} s (model build included)")


if __name__ == "__main__":
    main()
