"""The largest chain each exact ``split`` method solves within a stated time, and how it fails
beyond (issue 13: "the largest chain each exact method solves and how the others fail").

Chains from ``instances.generate.chain`` (seed 0) turned into training instances (1 MB/s up and
down, device 1e10 FLOP/s, server 1e12 FLOP/s, as in the 20,000-layer regression test), saved as
JSON once per size. Every (method, size) runs in its own child process so a solver crash (signal),
memory exhaustion or a hang is recorded as an outcome instead of ending the benchmark; the child
is killed at ``LIMIT + 30`` seconds of wall time, and solver-based methods get ``time_limit=LIMIT``.
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
inst = io.load(path)
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
print("RESULT " + json.dumps(out))
"""


def make(n: int, folder: Path) -> Path:
    from splitopt.instances import generate as gen
    from splitopt.instances import io
    from splitopt.instances.split import SplitInstance

    p = folder / f"chain-{n}.json"
    g = gen.generate("chain", 0, n=n)
    inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, down_bytes_per_s=1e6, mode="training", iterations=1,
                                    device_flops=1e10, server_flops=1e12, timing="flops")
    io.save(inst, p, indent=None)
    return p


def run(path: Path, algo: str, limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, str(path), algo, str(limit)], capture_output=True,
                           text=True, timeout=limit + 30)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"killed after {limit + 30:.0f} s wall (no answer)"}
    wall = time.perf_counter() - t0
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    if p.returncode != 0 or line is None:
        sig = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        tail = (p.stderr.strip().splitlines() or [""])[-1][:160]
        return {"ok": False, "error": f"process died ({sig}) after {wall:.0f} s: {tail}"}
    out = json.loads(line[7:])
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
                    cell = f"{r['seconds']:.3g} s, {r['status']}{agree}, peak RSS {r['rss_mb']:.0f} MB"
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
