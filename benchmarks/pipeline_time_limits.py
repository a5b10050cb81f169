"""Every ``pipeline`` algorithm on instances with ``B = 10,000`` micro-batch sizes, with and without
an overall time limit (issue 13, "Not done": loops over every ``b`` in ``1..B`` that a user's
``--time-limit`` did not stop).

Instances (the family's generator, :func:`splitopt.instances.pipeline.generate`, ``batch=10000``,
every ``b`` allowed): ``small`` = seed 0 with its defaults (I = 5, N = 3, M = 2, ``distinct``,
balanced client split: 199 non-dominated ``b``); ``larger`` = seed 0 with I = 12, N = 8, M = 5 and
the paper's Eq. 1 client split (remainder on the last client: 235 non-dominated ``b``);
``aggregate`` = seed 0 with I = 14, N = 8 and the paper's P4 placement (branch and bound), run only
with the exact search and the baselines built on it.

Each (algorithm, instance, limit) runs in its own child process, killed ``KILL`` seconds after the
instance is built, so a run that ignores its limit is recorded as ``> KILL s`` instead of blocking
the benchmark. Time = ``Solution.seconds`` of the call (the algorithm only; imports warmed first on
a B = 8 instance); status as :func:`splitopt.families.solve` reports it; ``b done`` from the
algorithm's ``info`` where it says. The limit is passed only to algorithms that declare the
``time_limit`` option (``-`` in that column: it does not).

Usage: ``python benchmarks/pipeline_time_limits.py [--only INSTANCE] [LIMIT ...]`` (limits in seconds or
``none``; default: none and 1). ``results/pipeline_time_limits_before.md`` is this script with limit 1
run on the tree before the change (main at 81ed1e8, ``PYTHONPATH`` pointing to its ``src``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

KILL = 60.0

INSTANCES = {"small": {}, "larger": {"n_layers": 12, "n_servers": 8, "n_clients": 5, "client_split": "paper"},
             "aggregate": {"placement": "aggregate", "n_layers": 14, "n_servers": 8}}
#: the algorithms run on an instance (default: all)
ONLY = {"aggregate": ("shortest_path", "shortest_path_ascending", "rc_op", "rp_oc", "no_pipeline")}

CHILD = r"""
import json, sys, time
from splitopt.families import get_family, solve
from splitopt.instances.pipeline_generate import generate
algo, extra, limit = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
a = get_family("pipeline").algorithm(algo)
opts = {"time_limit": float(limit)} if limit != "none" and a.option("time_limit") else {}
try:
    solve(generate(0, batch=8, **extra), algo, **opts)
except Exception:
    pass
inst = generate(0, batch=10000, **extra)
print("READY", flush=True)
try:
    s = solve(inst, algo, **opts)
    info = s.info
    done = next((info[k] for k in ("b_done", "b_searched", "b_solved", "iterations") if k in info), None)
    out = {"ok": True, "seconds": s.seconds, "status": s.status, "objective": s.objective,
           "bound": s.bound, "done": done, "limited": bool(opts)}
except Exception as exc:
    out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:160], "limited": bool(opts)}
print("RESULT " + json.dumps(out), flush=True)
"""


def run(algo: str, extra: dict, limit: str) -> dict:
    p = subprocess.Popen([sys.executable, "-c", CHILD, algo, json.dumps(extra), limit], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if not p.stdout.readline().startswith("READY"):
        p.wait()
        return {"ok": False, "error": "child failed before the instance was built"}
    fired = []
    timer = threading.Timer(KILL, lambda: (fired.append(True), p.kill()))
    timer.start()
    try:
        out = p.stdout.read()  # through the same buffer as the READY line
        p.wait()
    finally:
        timer.cancel()
    for ln in out.splitlines():
        if ln.startswith("RESULT "):
            return json.loads(ln[7:])
    if fired:
        return {"ok": False, "killed": True}
    return {"ok": False, "error": f"child exited with {p.returncode} and no result"}


def cell(r: dict) -> str:
    if r.get("killed"):
        return f"> {KILL:.0f} s (killed) | - | - | -"
    if not r["ok"]:
        return f"error: {r['error']} | - | - | -"
    obj = f"{r['objective']:.6g}"
    return f"{r['seconds']:.2f} s | {r['status']} | {obj} | {r['done'] if r['done'] is not None else '-'}"


def main(argv):
    from splitopt.families import get_family

    only = None
    if argv[:1] == ["--only"]:
        only, argv = argv[1], argv[2:]
    limits = argv or ["none", "1"]
    fam = get_family("pipeline")
    for iname, extra in INSTANCES.items():
        if only is not None and iname != only:
            continue
        print(f"\n## Instance `{iname}` (generate(0, batch=10000{''.join(f', {k}={v!r}' for k, v in extra.items())}))\n")
        for limit in limits:
            lab = "no limit" if limit == "none" else f"time_limit = {limit} s"
            print(f"\n### {lab}\n")
            print("| algorithm | declares time_limit | time | status | objective | b done / iterations |")
            print("|---|---|---|---|---|---|")
            for name, a in fam.algorithms.items():
                if name not in ONLY.get(iname, (name,)):
                    continue
                r = run(name, extra, limit)
                print(f"| {name} | {'yes' if a.option('time_limit') else 'no'} | {cell(r)} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
