"""Benchmark: every exact and baseline algorithm of the ``split`` family side by side.

For every zoo architecture and every packaged PipeDream profile (training, N = 10 local
iterations, uplink 20 Mbit/s, downlink 100 Mbit/s; zoo graphs at 0.2 TFLOP/s on the device and
20 TFLOP/s on the server, PipeDream profiles with their measured GPU seconds, 8x slower on the
device), each algorithm is run through :func:`splitopt.families.solve` (so every objective comes
from the evaluator) and its median solve time is reported, with the ratio to ``dads`` (networkx
float max-flow, the DADS-style baseline) and to ``lp`` (the LP relaxation solved by HiGHS through
Pyomo), all measured in this one run. Then a 10,000-layer generated DAG
(``generate("layered", seed, n=10000)``).

Algorithms: every registered algorithm that is exact (``blockwise`` included: it is exact, see
:mod:`splitopt.solvers.split.blockwise`) or a baseline (``dads``, ``device_only``, ``server_only``);
``bruteforce`` and the ``*_paper`` variants are skipped. ``chain`` refuses non-chains (``n/a``).
All exact algorithms must agree on the objective (relative 1e-9 plus absolute 1e-9 s, the harness's
:func:`~splitopt.validation.harness.objectives_agree`): a mismatch is flagged ``MISMATCH``
and counted.

Targets checked and printed at the end: fastest exact >= 10x faster than dads on graphs with more
than 150 layers; ResNet-50 (175 vertices) under 2 ms; the 10,000-layer DAG under 1 s.

Run: ``.venv/bin/python benchmarks/split.py [--repeats 7] [--quick]``; writes
``benchmarks/results/split.md``. Never part of the tests.
"""

from __future__ import annotations

import argparse
import platform as _platform
import statistics
import sys
import time
from pathlib import Path

from splitopt.errors import InstanceError
from splitopt.families import get_family, solve
from splitopt.instances import zoo
from splitopt.instances.generate import generate
from splitopt.instances.importers import pipedream
from splitopt.instances.platform import mbps
from splitopt.instances.split import SplitInstance
from splitopt.validation.harness import objectives_agree  # rel 1e-9 + abs 1e-9, as the harness

BASELINES = ("dads", "device_only", "server_only")


def algorithms():
    fam = get_family("split")
    names = [a.name for a in fam.algorithms.values()
             if a.name != "bruteforce" and not a.paper and (a.exact or a.name in BASELINES)]
    exact = {a.name for a in fam.algorithms.values() if a.exact}
    return names, exact


def instances(quick: bool):
    out = []
    models = zoo.list_models() if not quick else ["resnet18", "resnet50", "googlenet"]
    for nm in models:
        g = zoo.get(nm)
        out.append((f"zoo:{nm}", SplitInstance.from_graph(
            g, up_bytes_per_s=mbps(20), down_bytes_per_s=mbps(100), iterations=10,
            device_flops=2e11, server_flops=2e13)))
    for nm in (pipedream.packaged_profiles() if not quick else ["resnet18"]):
        g = pipedream.load_packaged(nm)
        out.append((f"pipedream:{nm}", SplitInstance.from_graph(
            g, up_bytes_per_s=mbps(20), down_bytes_per_s=mbps(100), iterations=10, timing="measured",
            device_slowdown=8.0)))
    return out


def run_one(inst, algo, repeats):
    """(median seconds, objective) or (None, reason)."""
    try:
        sol = solve(inst, algo)
    except InstanceError as exc:
        return None, str(exc).split(":")[0]
    ts = [sol.seconds]
    for _ in range(repeats - 1):
        ts.append(solve(inst, algo).seconds)
    return statistics.median(ts), sol.objective


def fmt_t(s):
    if s is None:
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.0f} us"


def fmt_r(a, b):
    if a is None or b is None or a <= 0:
        return "-"
    return f"{b / a:.1f}x"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="three zoo models, one profile, no 10k DAG")
    ap.add_argument("--seed", type=int, default=0, help="seed of the 10,000-layer DAG")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "split.md"))
    args = ap.parse_args(argv)
    names, exact = algorithms()
    lines = []

    def emit(s=""):
        print(s)
        lines.append(s)

    emit("# split family: solve times (median of %d runs, `splitopt.families.solve`)" % args.repeats)
    emit()
    emit(f"Python {sys.version.split()[0]}, {_platform.machine()}, {_platform.system()}; "
         f"measured {time.strftime('%Y-%m-%d %H:%M')}. Ratio columns: time of dads (resp. lp) / time of "
         "the algorithm (> 1 = faster).")
    emit()
    mismatches = 0
    summary = []
    cases = [(label, inst, "", args.repeats) for label, inst in instances(args.quick)]
    if not args.quick:
        g = generate("layered", args.seed, n=10000)
        cases.append((f"layered-10000-s{args.seed}",
                      SplitInstance.from_graph(g, up_bytes_per_s=mbps(20), down_bytes_per_s=mbps(100), iterations=10,
                                               device_flops=2e11, server_flops=2e13), ", one run each", 1))
    for label, inst, note, repeats in cases:
        res = {}
        for a in names:
            reps = repeats if a not in ("milp", "lp") else max(1, min(3, repeats), repeats // 2)
            res[a] = run_one(inst, a, reps)
        t_dads = res["dads"][0]
        t_lp = res["lp"][0]
        ref = min(res[a][1] for a in names if a in exact and res[a][0] is not None)
        emit(f"## {label} ({len(inst.graph)} layers, {len(inst.graph.edges)} edges{note})")
        emit()
        emit(f"| algorithm | exact | {'median time' if repeats > 1 else 'time'} | vs dads | vs lp | objective (s) | check |")
        emit("|---|---|---|---|---|---|---|")
        for a in names:
            t, obj = res[a]
            if t is None:
                emit(f"| {a} | {'yes' if a in exact else 'no'} | n/a ({obj}) | - | - | - | |")
                continue
            flag = ""
            if a in exact and not objectives_agree(obj, ref):
                flag = "MISMATCH"
                mismatches += 1
            elif a not in exact:
                flag = f"+{100 * (obj - ref) / ref:.2f}%" if ref > 0 else ""
            emit(f"| {a} | {'yes' if a in exact else 'no'} | {fmt_t(t)} | {fmt_r(t, t_dads)} | {fmt_r(t, t_lp)} "
                 f"| {obj:.9g} | {flag} |")
        fastest = min((res[a][0], a) for a in names if a in exact and res[a][0] is not None)
        summary.append((label, len(inst.graph), fastest[1], fastest[0], t_dads, t_lp))
        emit()

    emit("## Summary: fastest exact algorithm per graph")
    emit()
    emit("| graph | layers | fastest exact | time | vs dads | vs lp |")
    emit("|---|---|---|---|---|---|")
    for label, n, a, t, td, tl in summary:
        emit(f"| {label} | {n} | {a} | {fmt_t(t)} | {fmt_r(t, td)} | {fmt_r(t, tl)} |")
    emit()
    big = [s for s in summary if s[1] > 150]
    ok10 = all(s[4] is not None and s[4] / s[3] >= 10 for s in big)
    emit(f"- Target fastest exact >= 10x faster than dads on graphs with > 150 layers: "
         f"{'MET' if ok10 else 'NOT MET'} (min ratio "
         f"{min((s[4] / s[3] for s in big), default=float('nan')):.1f}x over {len(big)} graphs)")
    r50 = [s for s in summary if s[0] == "zoo:resnet50"]
    if r50:
        emit(f"- Target ResNet-50 under 2 ms: {'MET' if r50[0][3] < 2e-3 else 'NOT MET'} ({fmt_t(r50[0][3])}, "
             f"{r50[0][2]})")
    big10k = [s for s in summary if s[1] >= 10000]
    if big10k:
        emit(f"- Target 10,000-layer DAG under 1 s: {'MET' if big10k[0][3] < 1.0 else 'NOT MET'} "
             f"({fmt_t(big10k[0][3])}, {big10k[0][2]})")
    emit(f"- Exact algorithms disagreeing: {mismatches}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"\nwritten {out}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
