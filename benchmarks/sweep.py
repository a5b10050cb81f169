"""Benchmark: an exact split sweep (every breakpoint) vs 100 sampled solves, side by side.

Graphs: zoo ResNet-50 (175 layers) and a generated 1,000-layer layered DAG; inference (seed 002) and
training (seed 000), uplink swept from 1 kbit/s to 10 Gbit/s (``up_mbps`` 0.001 .. 10,000).

* ``sweep``: :func:`splitopt.solvers.split.sweep.sweep` (Eisner-Severance with the certified min-cut),
  ``check=False`` (pieces only) and ``check=True`` (each piece's ends recomputed by the evaluator on
  the rebuilt instance, what ``splitopt sweep`` does);
* ``100 samples, fast``: the same flow structure refilled at 100 log-spaced rates (the cheapest way to
  sample; :func:`splitopt.solvers.split.sweep.sampled`);
* ``100 samples, solve``: 100 rebuilt instances through ``families.solve(.., "mincut")`` (what a
  user's loop does).

Warm calls timed (median of ``--reps``); the first call of the sweep (which builds the flow
structure of the graph) is reported apart. The sweep's pieces are checked against the samples (each
sample's optimal cost equals the cost of the piece containing it). Never part of the tests.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from splitopt.instances import zoo
from splitopt.instances.generate import generate as gen_graph
from splitopt.instances.split import SplitInstance
from splitopt.models.split import evaluate
from splitopt.solvers.split.sweep import at, sampled, sweep


def fmt(sec):
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.0f} us"


def warm(fn, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--samples", type=int, default=100)
    args = ap.parse_args(argv)
    lo, hi = 1e-3, 1e4
    graphs = [("zoo ResNet-50", zoo.get("resnet50"), 2e10, 2e13),
              ("layered DAG 1,000", gen_graph("layered_dag", 7, n=1000), 1e10, 1e12)]
    print(f"# split sweep over up_mbps {lo:g} .. {hi:g} Mbit/s (1 kbit/s .. 10 Gbit/s): exact sweep vs "
          f"{args.samples} sampled solves; warm medians of {args.reps}")
    print()
    print("| graph | mode | layers | pieces | solves | sweep first call | sweep | sweep + evaluator | "
          f"{args.samples} samples, fast | {args.samples} samples, solve | speed-up vs fast | speed-up vs solve |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    values = list(np.geomspace(lo, hi, args.samples))
    for label, g, df, sf in graphs:
        for mode in ("inference", "training"):
            inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, mode=mode, iterations=1, device_flops=df,
                                            server_flops=sf)
            t0 = time.perf_counter()
            res = sweep(inst, "up_mbps", lo, hi, check=False)
            first = time.perf_counter() - t0
            t_sweep = warm(lambda: sweep(inst, "up_mbps", lo, hi, check=False), args.reps)
            t_check = warm(lambda: sweep(inst, "up_mbps", lo, hi, check=True), args.reps)
            samples = sampled(inst, "up_mbps", values, fast=True)
            t_fast = warm(lambda: sampled(inst, "up_mbps", values, fast=True), args.reps)
            t_slow = warm(lambda: sampled(inst, "up_mbps", values, fast=False), max(1, args.reps // 2))
            # every sample's optimum equals the cost of the sweep piece containing it
            for p, names in samples:
                pc = next(pc for pc in res.pieces if pc.lo <= p <= pc.hi)
                i2 = at(inst, "up_mbps", p)
                a, b = evaluate(i2, pc.solution)[0], evaluate(i2, names)[0]
                assert abs(a - b) <= 1e-9 * max(a, b), (label, mode, p, a, b)
            print(f"| {label} | {mode} | {len(g)} | {len(res.pieces)} | {res.solves} | {fmt(first)} | {fmt(t_sweep)} "
                  f"| {fmt(t_check)} | {fmt(t_fast)} | {fmt(t_slow)} | {t_fast / t_sweep:.1f}x | "
                  f"{t_slow / t_check:.1f}x |")
    print()
    print("speed-up vs fast = (100 samples, fast) / sweep; speed-up vs solve = (100 samples, solve) / "
          "(sweep + evaluator). Every sample's optimum matched the sweep piece containing it.")


if __name__ == "__main__":
    main()
