"""Benchmark (issue 21, pipeline rows): the default ``auto`` beside the exact MILP (``milp``, the
family's reference formulation) at scale, the same time limit for both, in one run.

Instances (the family's generator, :func:`splitopt.instances.pipeline.generate`, seed 0):

* ``I=100 N=50``: 100 layers, 50 edge servers, 2 clients, B = 512 (every b allowed; 45
  non-dominated), for each placement (distinct, revisit, aggregate) and memory model (paper,
  resident);
* ``I=2000 N=6``: 2,000 layers, 6 servers, 3 clients (B drawn: 62), distinct.

Each run is a child process killed at ``2 x limit + 30 s``. Columns: wall time of the call, whether
it kept ``limit + max(1 s, 10 %)``, status, objective (evaluator), bound, gap ``(objective -
bound) / objective``, and for ``auto`` the ``revisit`` bound. Run: ``python
benchmarks/pipeline_scale.py [--limit S] [--only distinct|revisit|aggregate|big]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
from splitopt.families import solve
from splitopt.instances.pipeline_generate import generate
algo, extra, limit = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
inst = generate(0, **extra)
t0 = time.perf_counter()
try:
    s = solve(inst, algo, time_limit=limit)
    out = {"ok": True, "seconds": time.perf_counter() - t0, "status": s.status, "objective": s.objective,
           "bound": s.bound, "revisit": s.info.get("revisit_bound")}
except Exception as exc:
    out = {"ok": False, "seconds": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"[:120]}
print("RESULT " + json.dumps(out))
"""


def run(algo, extra, limit):
    kill = 2 * limit + 30
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, algo, json.dumps(extra), str(limit)], capture_output=True,
                           text=True, timeout=kill)
    except subprocess.TimeoutExpired:
        return {"ok": False, "killed": kill}
    for ln in p.stdout.splitlines():
        if ln.startswith("RESULT "):
            return json.loads(ln[7:])
    return {"ok": False, "seconds": float("nan"), "error": p.stderr.strip().splitlines()[-1][:120] if p.stderr else "?"}


def row(name, algo, limit, r):
    if r.get("killed"):
        return f"| {name} | {algo} | > {r['killed']:.0f} s (killed) | no | - | - | - | - | - |"
    kept = "yes" if r["seconds"] <= limit + max(1.0, 0.1 * limit) else "NO"
    if not r["ok"]:
        return f"| {name} | {algo} | {r['seconds']:.1f} s | {kept} | {r['error']} | - | - | - | - |"
    b = r["bound"]
    gap = "-" if b is None else f"{100 * (r['objective'] - b) / r['objective']:.2f} %"
    rev = "-" if r.get("revisit") is None else f"{r['revisit']:.6g}"
    bs = "-" if b is None else f"{b:.6g}"
    return (f"| {name} | {algo} | {r['seconds']:.1f} s | {kept} | {r['status']} | {r['objective']:.6g} | {bs} | "
            f"{gap} | {rev} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--only", default=None)
    args = ap.parse_args(argv)
    cases = []
    for pl in ("distinct", "revisit", "aggregate"):
        for mem in ("paper", "resident"):
            cases.append((pl, f"I=100 N=50 {pl} {mem}",
                          {"n_layers": 100, "n_servers": 50, "batch": 512, "placement": pl, "memory": mem},
                          args.limit))
    cases.append(("big", "I=2000 N=6 distinct", {"n_layers": 2000, "n_servers": 6, "n_clients": 3}, 30.0))
    print("| instance | algorithm | time | kept limit + max(1 s, 10 %) | status | objective | bound | gap | "
          "revisit bound |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, name, extra, limit in cases:
        if args.only is not None and key != args.only:
            continue
        for algo in ("auto", "milp"):
            print(row(f"{name}, limit {limit:.0f} s", algo, limit, run(algo, extra, limit)), flush=True)


if __name__ == "__main__":
    main()
