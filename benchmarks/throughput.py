"""Benchmark: the corrected throughput B&B vs the paper's B&B, the RLT MILP and the MINLP (seed 004).

Graph: zoo YOLOv2 at operator granularity, **75 layers** (input, 23 convolutions each followed by its
batch-norm and leaky-ReLU layer, 5 max-pools, reorg, route; 74 tensors, one skip route: the
passthrough from layer 43 to the route at 70), 29.5 GFLOP per frame. The paper's count is 49 layers
(its granularity is not stated, digest §4.1).

Platforms:

* the paper's Table 2 set-ups 1-4 (two identical nodes; TX2 / A57 / Maxwell / A57, Wi-Fi 10 MB/s or
  Ethernet 1.4 GB/s);
* ``hetN``: N = 3..6 heterogeneous nodes with the paper's device rates (30.7, 14.7, 5, 1.57, 1.0,
  0.5 GFLOP/s: TX2 GPU, Maxwell GPU, Raspberry Pi 4, A57 CPU, two Snapdragon-class) on one link rate
  for every pair: Gigabit Ethernet (125 MB/s) or Wi-Fi (10 MB/s).

Each with the paper's cap S = 3 and without a cap. Columns: the corrected B&B (``bnb``: median of
warm calls, the first call apart as "cold"; nodes explored in the main search + in the incumbent
searches), the paper's Algorithm 1 made runnable (``bnb_paper``, breadth-first, cap 3 only: one call;
evaluations of padded leaves), the RLT-1 MILP through HiGHS and the MINLP through SCIP (one call after
a warm-up solve, with a time limit; ``status`` says whether the optimum was proved). Ratios are
times of the other method / warm time of ``bnb`` in the same run. Every period is scored by the
family evaluator.

Run: ``.venv/bin/python benchmarks/record.py throughput benchmarks/throughput.py [--quick]`` (the recorded
run: ``--quick --milp-limit 30``, about 20 minutes, most of it in the paper's B&B and the MILPs).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from splitopt.errors import InstanceError
from splitopt.instances.throughput import ThroughputInstance, table2_platform
from splitopt.instances.zoo import get
from splitopt.models.throughput import evaluate
from splitopt.solvers.throughput import bnb, bnb_paper, milp

DEVICES = [30.7e9, 14.7e9, 5e9, 1.57e9, 1.0e9, 0.5e9]
LINKS = {"gbe": 125e6, "wifi": 10e6}


def fmt(sec):
    if sec is None:
        return "-"
    if sec >= 1:
        return f"{sec:.2f} s"
    return f"{sec * 1e3:.1f} ms"


def ratio(other, ours):
    if other is None or ours is None or ours <= 0:
        return "-"
    return f"{other / ours:,.0f}x" if other / ours >= 10 else f"{other / ours:.1f}x"


def eq8(L, N, S):
    return sum(math.comb(L - 1, k) * N * (N - 1) ** k for k in range(S + 1))


def instances(quick: bool):
    g = get("yolov2")
    out = []
    for setup in (1, 2, 3, 4):
        flops, rates = table2_platform(setup)
        for cap in (3, None):
            out.append((f"table2-{setup}", cap, ThroughputInstance.from_graph(g, flops, rates, max_splits=cap)))
    for link in ("gbe", "wifi"):
        for n in ((4, 6) if quick else (3, 4, 5, 6)):
            for cap in (3, None):
                out.append((f"het{n}-{link}", cap,
                            ThroughputInstance.from_graph(g, DEVICES[:n], LINKS[link], max_splits=cap)))
    return out


def run_bnb(inst, reps):
    t0 = time.perf_counter()
    r = bnb.solve(inst)
    cold = time.perf_counter() - t0
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        bnb.solve(inst)
        ts.append(time.perf_counter() - t0)
    return r, cold, statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="heterogeneous platforms with 4 and 6 nodes only")
    ap.add_argument("--reps", type=int, default=3, help="warm calls of bnb (median)")
    ap.add_argument("--milp-limit", type=float, default=60.0, help="time limit of the RLT MILP (s)")
    ap.add_argument("--minlp-limit", type=float, default=30.0, help="time limit of the MINLP (SCIP, s)")
    ap.add_argument("--paper-max", type=int, default=280_000, help="evaluations after which the paper B&B is stopped")
    args = ap.parse_args(argv)

    g = get("yolov2")
    print(f"# throughput: YOLOv2 ({len(g)} layers, {len(g.tensors)} tensors, "
          f"{sum(l.fwd_flop for l in g.layers) / 1e9:.1f} GFLOP); corrected B&B vs paper B&B vs RLT MILP vs MINLP\n")
    # warm-up: import Pyomo/HiGHS/SCIP once so that no MILP time below includes it
    small = ThroughputInstance.from_graph(g, DEVICES[:2], 125e6, max_splits=1)
    milp.solve(small, "rlt", time_limit=30)

    print("| instance | S | bnb warm | bnb cold | nodes (+incumbent) | bnb period (s) | status | "
          "paper B&B | evaluations | paper period | RLT MILP | RLT status | MINLP (SCIP) | MINLP status | "
          "RLT / bnb | paper / bnb |")
    print("|" + "---|" * 16)
    worst = {"rlt": math.inf, "paper": math.inf}
    summary = []
    for name, cap, inst in instances(args.quick):
        r, cold, warm = run_bnb(inst, args.reps)
        period = evaluate(inst, r.assignment)[0]
        nodes = f"{r.info['nodes']:,} (+{r.info['incumbent_nodes']:,})"
        # the paper's B&B (cap 3 only: without a cap it enumerates N^L)
        p_time = p_eval = p_period = None
        p_note = "-"
        if cap is not None:
            t0 = time.perf_counter()
            try:
                pr = bnb_paper.solve(inst, max_evaluations=args.paper_max)
                p_time = time.perf_counter() - t0
                p_eval = f"{pr.info['evaluations']:,}"
                p_period = evaluate(inst, pr.assignment)[0]
                p_note = f"{p_period:.6g}" + ("" if abs(p_period - period) <= 1e-9 * period else " (worse)")
            except InstanceError:
                p_time = time.perf_counter() - t0
                p_eval = f"> {args.paper_max:,} (stopped; eq. 8: {eq8(inst.n_layers, inst.n_nodes, 3):,} leaves)"
                p_note = "-"
        # RLT MILP
        t0 = time.perf_counter()
        m = milp.solve(inst, "rlt", time_limit=args.milp_limit)
        m_time = time.perf_counter() - t0
        m_period = evaluate(inst, m.assignment)[0]
        m_status = m.status + ("" if abs(m_period - period) <= 1e-7 * period else f" ({m_period:.6g})")
        # MINLP (SCIP): the Table 2 set-ups and the smallest heterogeneous platforms only
        n_time, n_status = None, "not run"
        if name.startswith("table2") or name.startswith("het3"):
            t0 = time.perf_counter()
            try:
                n = milp.solve(inst, "minlp", time_limit=args.minlp_limit)
                n_time = time.perf_counter() - t0
                n_period = evaluate(inst, n.assignment)[0]
                n_status = n.status + ("" if abs(n_period - period) <= 1e-6 * period else f" ({n_period:.6g})")
            except Exception as exc:  # SCIP may return no solution within the limit
                n_time = time.perf_counter() - t0
                n_status = f"no solution ({type(exc).__name__})"
        p_ratio = ratio(p_time, warm)
        if p_time is not None and p_eval and p_eval.startswith(">"):
            p_ratio = "> " + p_ratio
        print(f"| {name} | {cap if cap is not None else '-'} | {fmt(warm)} | {fmt(cold)} | {nodes} | {period:.9g} | "
              f"{r.status} | {fmt(p_time)} | {p_eval or '-'} | {p_note} | {fmt(m_time)} | {m_status} | "
              f"{fmt(n_time)} | {n_status} | {ratio(m_time, warm)} | {p_ratio} |")
        if cap == 3:
            if m.status == "optimal":
                worst["rlt"] = min(worst["rlt"], m_time / warm)
            if p_time is not None:
                worst["paper"] = min(worst["paper"], p_time / warm)
        summary.append((name, cap, warm, r.status))
    print()
    for n in ("het4-gbe", "het4-wifi", "het6-gbe", "het6-wifi"):
        for name, cap, warm, status in summary:
            if name == n and cap is None:
                print(f"- {n}, no cap: {status} in {fmt(warm)} (target: < 1 s on 4 nodes, < 10 s on 6)")
    print(f"- cap 3: smallest RLT / bnb ratio {worst['rlt']:.1f}x (target >= 10x; RLT runs that hit the time limit "
          f"are left out, they only make the ratio larger); smallest paper / bnb ratio {worst['paper']:.0f}x "
          f"(target >= 100x; stopped paper runs count with their time at the stop)")


if __name__ == "__main__":
    main()
