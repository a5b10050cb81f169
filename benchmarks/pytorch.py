"""Issue 23 side by side: import, profile and plan two PyTorch models on this CPU.

For each model: `from_torch` time, layers, parameters, forward GFLOP; `profile_torch` time and the
sum of its per-layer medians beside the whole model's eager forward (median); the exact 3-stage
grouping over the measured seconds, its stages' predicted seconds (sums of layer medians) beside
the stage modules that `torch.distributed.pipelining` builds from the exported plan, timed one by
one (median). Ratios, not absolute targets: the machine is shared.

Run: ``python benchmarks/record.py pytorch benchmarks/pytorch.py``.
"""

from __future__ import annotations

import copy
import statistics
import time

import torch
from torch.distributed.pipelining import SplitPoint, pipeline

from splitopt.export import export, plan_of
from splitopt.families import solve
from splitopt.instances.grouping import GroupingInstance
from splitopt.instances.importers.torch import from_torch
from splitopt.instances.importers.torch_examples import residual_cnn, tiny_gpt
from splitopt.instances.profile import profile_torch

REPEAT = 15


def median_time(fn, repeat=REPEAT, warmup=3) -> float:
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    torch.set_num_threads(1)
    models = [("residual_cnn", residual_cnn, lambda: torch.randn(8, 3, 32, 32)),
              ("tiny_gpt", tiny_gpt, lambda: torch.randint(0, 256, (4, 64)))]
    print("| model | layers | params | fwd GFLOP | from_torch s | profile s | sum of layer medians ms "
          "| eager forward ms | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    plans = []
    for name, make, inp in models:
        torch.manual_seed(0)
        m, x = make().eval(), inp()
        t0 = time.perf_counter()
        g = from_torch(m, (x,))
        t_imp = time.perf_counter() - t0
        t0 = time.perf_counter()
        g = profile_torch(g, m, (x,), repeat=REPEAT, warmup=3)
        t_prof = time.perf_counter() - t0
        with torch.no_grad():
            eager = median_time(lambda: m(x))
        tot = g.meta["profile"]["fwd_total_s"]
        print(f"| {name} | {len(g)} | {g.meta['params']:,} | {g.totals()['fwd_flop'] / 1e9:.3f} | {t_imp:.2f} "
              f"| {t_prof:.2f} | {tot * 1e3:.3f} | {eager * 1e3:.3f} | {tot / eager:.2f} |")
        plans.append((name, m, x, g))
    print()
    print("Exact 3-stage grouping (bottleneck, transfers off) over the measured seconds; predicted stage = sum "
          "of its layers' medians; measured = the pipelining stage module run alone (median). The stage modules "
          "that torch.distributed.pipelining builds run their submodules through torch.fx interpreters, so "
          "small stages pay a per-operator Python overhead that the eager layer timings do not have.")
    print()
    print("| model | stages (first module) | predicted ms | measured ms | measured / predicted |")
    print("|---|---|---|---|---|")
    for name, m, x, g in plans:
        inst = GroupingInstance.from_graph(g, 3, machine="cpu", objective="bottleneck", transfers=False)
        sol = solve(inst, "dp")
        plan = plan_of(inst, sol.assignment)
        spec = export(plan, "pipelining")["split_spec"]
        pipe = pipeline(copy.deepcopy(m), (x,), split_spec={k: SplitPoint.BEGINNING for k in spec})
        inputs, y = [], x
        with torch.no_grad():
            for i in range(pipe.num_stages):
                inputs.append(y if isinstance(y, tuple) else (y,))
                y = pipe.get_stage_module(i)(*inputs[-1])
            for i, st in enumerate(plan["stages"]):
                pred = sum(g.layer(n).fwd_seconds["cpu"] for n in st["layers"])
                sm = pipe.get_stage_module(i)
                meas = median_time(lambda sm=sm, a=inputs[i]: sm(*a))
                print(f"| {name} | {i}: {st['fqns'][0]} .. {st['fqns'][-1]} | {pred * 1e3:.3f} | {meas * 1e3:.3f} "
                      f"| {meas / pred:.2f} |")


if __name__ == "__main__":
    main()
