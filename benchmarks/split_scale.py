"""Every exact ``split`` method on a 100,000-layer chain and a 100,000-layer DAG (issue 21: "an
answer or a clean error naming the limit; no crash; time limits kept").

Instances: a seeded random chain (``benchmarks/split_chain_limits.py``'s generator: FLOP 1e6..1e9
per layer, outputs 1e3..1e6 bytes, training at 1 MB/s) and ``splitopt.instances.split.generate(0,
kind="layered_dag", n=N, mode="training")`` (about 2.2 edges per layer). Each (method, limit) runs in
its own child process (a crash or a hang is an outcome; the child is killed LIMIT + 120 s after it
loaded the instance, 600 s for methods without a limit). Methods that declare a ``time_limit``
(``auto``, ``milp``, ``lp``) run at every limit given; the others once. Per cell: the solve's wall
time (``Solution.seconds``, the instance already loaded, imports warmed on a 5-layer chain), the
status, the relative gap to its own bound, whether the objective equals the best one found
(relative 1e-9), whether the limit was kept (``seconds <= limit + max(1 s, 10 %)``), peak RSS.

Usage: ``python benchmarks/split_scale.py [N] [LIMIT ...]`` (default 100,000 layers; limits 10 60).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

METHODS = ["auto", "mincut", "qdmp", "blockwise", "chain", "bruteforce", "milp", "lp"]
LIMITED = {"auto", "milp", "lp"}

CHILD = r"""
import json, resource, sys, time
from splitopt.instances import io
from splitopt.families import solve
path, algo, limit = sys.argv[1], sys.argv[2], sys.argv[3]
inst = io.load(path)
print("LOADED", flush=True)
opts = {} if limit == "-" else {"time_limit": float(limit)}
from splitopt.instances import generate as gen
from splitopt.instances.split import SplitInstance
tiny = SplitInstance.from_graph(gen.generate("chain", 0, n=5), up_bytes_per_s=1e6, mode="training",
                                device_flops=1e10, server_flops=1e12, timing="flops")
solve(tiny, algo, **opts)  # imports and caches: the time below is the algorithm's own
t0 = time.perf_counter()
try:
    s = solve(inst, algo, **opts)
    out = {"ok": True, "seconds": s.seconds, "objective": s.objective, "status": s.status, "gap": s.gap}
except Exception as exc:
    out = {"ok": False, "seconds": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"[:160]}
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("RESULT " + json.dumps(out), flush=True)
"""


def make(n: int, folder: Path) -> dict[str, Path]:
    from split_chain_limits import make as make_chain

    from splitopt.instances import io
    from splitopt.instances.split import generate

    dag = folder / f"dag-{n}.json"
    io.save(generate(0, kind="layered_dag", n=n, mode="training"), dag, indent=None)
    return {"chain": make_chain(n, folder), "DAG": dag}


def run(path: Path, algo: str, limit: float | None) -> dict:
    import selectors

    p = subprocess.Popen([sys.executable, "-c", CHILD, str(path), algo, "-" if limit is None else str(limit)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    lines, loaded_at = [], None
    kill_after = 600.0 if limit is None else limit + 120.0
    while True:
        deadline = (loaded_at or time.perf_counter()) + (kill_after if loaded_at else 1800)
        if not sel.select(timeout=max(0.0, deadline - time.perf_counter())):
            p.kill()
            p.wait()
            return {"ok": False, "error": f"killed {kill_after:.0f} s after loading (no answer)"}
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith("LOADED"):
            loaded_at = time.perf_counter()
    p.wait()
    err = p.stderr.read()
    res = next((x for x in lines if x.startswith("RESULT ")), None)
    if p.returncode != 0 or res is None:
        sig = f"signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        tail = (err.strip().splitlines() or [""])[-1][:160]
        return {"ok": False, "error": f"process died ({sig}): {tail}"}
    return json.loads(res[7:])


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 100_000
    limits = [float(x) for x in argv[1:]] or [10.0, 60.0]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        paths = make(n, Path(d))
        print(f"{n:,} layers, chain and layered DAG (built and saved in {time.perf_counter() - t0:.1f} s); "
              f"limits {', '.join(f'{x:g}' for x in limits)} s\n")
        for shape, path in paths.items():
            runs = []
            for algo in METHODS:
                for limit in (limits if algo in LIMITED else [None]):
                    r = run(path, algo, limit)
                    runs.append((algo, limit, r))
                    print(f"  {shape} {algo} limit={limit}: {r}", file=sys.stderr, flush=True)
            objs = [r["objective"] for _a, _l, r in runs if r["ok"]]
            best = min(objs) if objs else None
            for algo, limit, r in runs:
                rows.append((shape, algo, limit, r, best))
    print("| graph | method | limit (s) | time (s) | status | gap | = best | limit kept | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for shape, algo, limit, r, best in rows:
        lim = "-" if limit is None else f"{limit:g}"
        if not r["ok"]:
            err = r["error"]
            kept = "-" if limit is None or "seconds" not in r else (
                "yes" if r["seconds"] <= limit + max(1.0, 0.1 * limit) else "**no**")
            secs = f"{r['seconds']:.3g}" if "seconds" in r else "-"
            rss = f"{r['rss_mb']:.0f}" if "rss_mb" in r else "-"
            print(f"| {shape} | {algo} | {lim} | {secs} | error: {err} | - | - | {kept} | {rss} |")
            continue
        same = "yes" if best is not None and abs(r["objective"] - best) <= 1e-9 * abs(best) else "no"
        gap = "no bound" if r["gap"] is None else f"{100 * r['gap']:.2g} %"
        kept = "-" if limit is None else ("yes" if r["seconds"] <= limit + max(1.0, 0.1 * limit) else "**no**")
        print(f"| {shape} | {algo} | {lim} | {r['seconds']:.3g} | {r['status']} | {gap} | {same} | {kept} "
              f"| {r['rss_mb']:.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
