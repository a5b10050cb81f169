"""Cross-check of the ``placement`` default (``auto``) against a second method on mid-size
instances wider than the tests' (issue 22): layer graphs of 2-3 branches of 6-21 layers (training on
half, 3-6 accelerators, 0-1 CPU core) and BERT-/Inception-like operator graphs of 30-120 forward
nodes, convex or non-contiguous, ``max-load`` or ``fwd+bwd``, every time scaled by 1e-6..1e4 and the
tensors by a further 0.1..10 (log-uniform).

Per seed: ``auto`` with ``--auto-limit`` seconds (default 30) and the device MILP alone (no
configuration LP, so none of the branch and price that certifies ``auto``'s answers) with
``--milp-limit`` (default 90). A seed fails when both say ``optimal`` and their values differ by more
than 1e-8 (relative), when one says ``optimal`` and the other found a better placement, or when one's
bound passes the other's value. Each value is the evaluator's.

Run: ``.venv/bin/python benchmarks/placement_crosscheck.py [--seeds 0 40]`` (about 1-2 minutes a
seed; progress on stderr; exits 1 on a failure). Never part of the tests.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from splitopt.families import solve
from splitopt.instances.placement_gen import layer_graph, operator_graph
from splitopt.models.placement import evaluate
from splitopt.solvers.placement import milp


def instance(seed: int):
    rng = np.random.default_rng([seed, 777])
    contiguity = str(rng.choice(["convex", "none"]))
    objective = "max-load" if rng.random() < 0.8 else "fwd+bwd"
    if rng.random() < 0.85:
        inst = layer_graph(seed, int(rng.integers(2, 4)), int(rng.integers(6, 22)), training=bool(rng.random() < 0.5),
                           n_accelerators=int(rng.integers(3, 7)), n_cpus=int(rng.integers(0, 2)),
                           contiguity=contiguity, objective=objective)
    else:
        inst = operator_graph(seed, str(rng.choice(["bert", "inception"])), int(rng.integers(30, 120)),
                              training=bool(rng.random() < 0.3), contiguity=contiguity).with_(objective=objective)
    f = 10 ** rng.uniform(-6, 4)
    g = f * 10 ** rng.uniform(-1, 1)
    return inst.with_(cpu_seconds=tuple(x * f for x in inst.cpu_seconds),
                      acc_seconds=tuple(x * f for x in inst.acc_seconds),
                      tensors=tuple((p, c, s * g) for p, c, s in inst.tensors))


def verdict(a, m, va: float, vm: float) -> str:
    if a.status == "optimal" and m.status == "optimal" and abs(va - vm) > 1e-8 * vm:
        return "values differ"
    if a.status == "optimal" and vm < va * (1 - 1e-8):
        return "auto optimal, the MILP better"
    if m.status == "optimal" and va < vm * (1 - 1e-8):
        return "the MILP optimal, auto better"
    if a.bound is not None and a.bound > vm * (1 + 1e-9):
        return "auto's bound above the MILP's value"
    if m.bound is not None and m.bound > va * (1 + 1e-9):
        return "the MILP's bound above auto's value"
    return "ok"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs=2, default=(0, 40), metavar=("FIRST", "END"))
    ap.add_argument("--auto-limit", type=float, default=30.0)
    ap.add_argument("--milp-limit", type=float, default=90.0)
    args = ap.parse_args(argv)
    print("| seed | nodes | contiguity | objective | auto | auto time | MILP alone | auto value | MILP value | check |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    counts = {"runs": 0, "failures": 0, "auto optimal": 0, "MILP optimal": 0}
    first, end = args.seeds
    for seed in range(first, end):
        print(f"seed {seed} ({seed - first + 1} of {end - first})", file=sys.stderr, flush=True)
        inst = instance(seed)
        t0 = time.perf_counter()
        a = solve(inst, "auto", time_limit=args.auto_limit)
        ta = time.perf_counter() - t0
        saved = milp.COLGEN_FROM
        milp.COLGEN_FROM = math.inf  # the MILP alone: no configuration LP, no branch and price
        try:
            m = solve(inst, "milp", time_limit=args.milp_limit)
        finally:
            milp.COLGEN_FROM = saved
        va, vm = evaluate(inst, a.assignment)[0], evaluate(inst, m.assignment)[0]
        check = verdict(a, m, va, vm)
        counts["runs"] += 1
        counts["failures"] += check != "ok"
        counts["auto optimal"] += a.status == "optimal"
        counts["MILP optimal"] += m.status == "optimal"
        print(f"| {seed} | {inst.n_nodes} | {inst.contiguity} | {inst.objective} | {a.status} | {ta:.1f} s | "
              f"{m.status} | {va:.9g} | {vm:.9g} | {check} |", flush=True)
    print()
    print("| runs | failures | auto optimal | MILP alone optimal |")
    print("|---|---|---|---|")
    print(f"| {counts['runs']} | {counts['failures']} | {counts['auto optimal']} | {counts['MILP optimal']} |")
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
