"""The largest chain each exact ``split`` method solves within a stated time, and how it fails
beyond (issue 13: "the largest chain each exact method solves and how the others fail").

Seeded random chains (FLOP 1e6..1e9 per layer, outputs 1e3..1e6 bytes) as training instances (1 MB/s
up and down, device 1e10 FLOP/s, server 1e12 FLOP/s, as in the 20,000-layer regression test),
saved as JSON once per size. Every (method, size) runs in its own child process so a solver crash
(signal), memory exhaustion or a hang is recorded as an outcome instead of ending the benchmark;
the child is killed ``LIMIT + 30`` seconds after it has loaded the instance, and solver-based
methods get ``time_limit=LIMIT`` (which covers the whole algorithm).
A method is not tried at larger sizes after its first failure. Reported per cell: solve time
(``Solution.seconds``: the algorithm only, the instance already loaded, imports warmed on a
5-layer chain first), the child's peak RSS, the
status, and whether the objective equals ``mincut``'s (relative 1e-9).

Usage: ``python benchmarks/split_chain_limits.py [LIMIT_SECONDS] [SIZES...]`` (default 60 s;
1,000 .. 1,000,000 layers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METHODS = ["mincut", "qdmp", "blockwise", "chain", "milp", "lp", "bruteforce"]
SOLVER_METHODS = {"milp", "lp"}

CHILD = r"""
import json, resource, sys, time
from splitopt.instances import io
from splitopt.families import solve
path, algo, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
t0 = time.perf_counter()
inst = io.load(path)
load_s = time.perf_counter() - t0
print("LOADED", flush=True)
opts = {"time_limit": limit} if algo in ("milp", "lp") else {}
from splitopt.instances import generate as gen
from splitopt.instances.split import SplitInstance
tiny = SplitInstance.from_graph(gen.generate("chain", 0, n=5), up_bytes_per_s=1e6, mode="training",
                                device_flops=1e10, server_flops=1e12, timing="flops")
solve(tiny, algo, **opts)  # imports and caches: the time below is the algorithm's own
try:
    s = solve(inst, algo, **opts)
    out = {"ok": True, "seconds": s.seconds, "objective": s.objective, "status": s.status}
except Exception as exc:
    out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["load_s"] = load_s
print("RESULT " + json.dumps(out))
"""


def make(n: int, folder: Path) -> Path:
    """A seeded random chain of ``n`` layers (built directly: the graph generators stop at 100,000)."""
    import numpy as np

    from splitopt.instances import io
    from splitopt.instances.graph import DNNGraph, Edge, Layer
    from splitopt.instances.split import SplitInstance

    p = folder / f"chain-{n}.json"
    rng = np.random.default_rng([n, 2026])
    fwd = np.round(rng.uniform(1e6, 1e9, n), 0)
    out = np.round(rng.uniform(1e3, 1e6, n), 0)
    par = np.round(rng.uniform(0, 1e6, n), 0)
    layers = [Layer(f"v{i}", fwd_flop=float(fwd[i]), bwd_flop=float(2 * fwd[i]), out_bytes=float(out[i]),
                    param_bytes=float(par[i])) for i in range(n)]
    g = DNNGraph(layers, [Edge(f"v{i}", f"v{i + 1}") for i in range(n - 1)], name=f"chain-{n}")
    inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, down_bytes_per_s=1e6, mode="training", iterations=1,
                                    device_flops=1e10, server_flops=1e12, timing="flops")
    io.save(inst, p, indent=None)
    return p


def run(path: Path, algo: str, limit: float) -> dict:
    """Run one method in a child; the wall clock for the solve starts once the child has loaded
    the instance (loading a 1,000,000-layer file takes a while and is not the method's time)."""
    import selectors

    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(path), algo, str(limit)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    lines, loaded_at = [], None
    while True:
        deadline = (loaded_at or time.perf_counter()) + (limit + 30 if loaded_at else 1800)
        if not sel.select(timeout=max(0.0, deadline - time.perf_counter())):
            p.kill()
            p.wait()
            what = f"killed {limit + 30:.0f} s after loading (no answer)" if loaded_at else "killed while loading"
            return {"ok": False, "error": what}
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith("LOADED"):
            loaded_at = time.perf_counter()
    p.wait()
    err = p.stderr.read()
    wall = time.perf_counter() - t0
    res = next((x for x in lines if x.startswith("RESULT ")), None)
    if p.returncode != 0 or res is None:
        sig = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        tail = (err.strip().splitlines() or [""])[-1][:160]
        return {"ok": False, "error": f"process died ({sig}) after {wall:.0f} s: {tail}"}
    out = json.loads(res[7:])
    out["wall"] = wall
    return out


def main(argv: list[str]) -> None:
    limit = float(argv[0]) if argv else 60.0
    sizes = [int(x) for x in argv[1:]] or [1_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000]
    print(f"time limit {limit:g} s per solve (child killed at {limit + 30:g} s wall)\n")
    alive = set(METHODS)
    best: dict[str, str] = {}
    fail: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            t0 = time.perf_counter()
            path = make(n, Path(d))
            print(f"## {n:,} layers (instance built and saved in {time.perf_counter() - t0:.1f} s)")
            ref = None
            for algo in METHODS:
                if algo not in alive:
                    continue
                r = run(path, algo, limit)
                if r["ok"] and algo == "mincut":
                    ref = r["objective"]
                agree = ("" if not r["ok"] or ref is None else
                         " = mincut" if abs(r["objective"] - ref) <= 1e-9 * abs(ref) else f" != mincut ({ref!r})")
                late = r["ok"] and r["seconds"] > limit
                if r["ok"] and r["status"] in ("optimal", "ok") and not late:
                    cell = (f"{r['seconds']:.3g} s, {r['status']}{agree}, peak RSS {r['rss_mb']:.0f} MB "
                            f"(file loaded in {r['load_s']:.1f} s)")
                    best[algo] = f"{n:,} ({r['seconds']:.3g} s)"
                else:
                    cell = (r["error"] if not r["ok"] else
                            f"status {r['status']} after {r['seconds']:.3g} s{agree}")
                    fail[algo] = f"{n:,}: {cell}"
                    alive.discard(algo)
                print(f"- {algo}: {cell}", flush=True)
            print()
    print("| method | largest chain solved (time) | first failure |")
    print("|---|---|---|")
    for algo in METHODS:
        print(f"| {algo} | {best.get(algo, '-')} | {fail.get(algo, 'none up to ' + format(sizes[-1], ','))} |")


if __name__ == "__main__":
    main(sys.argv[1:])
