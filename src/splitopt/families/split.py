"""Registry entry of the ``split`` family (seeds 000 and 002): algorithms, options, sets, CLI.

Instance: :mod:`splitopt.instances.split`; evaluator and MILP: :mod:`splitopt.models.split`;
algorithms: :mod:`splitopt.solvers.split` (one module each).
"""

from __future__ import annotations

import math
import textwrap

from splitopt.families import SOLVER_OPTIONS, TIME_LIMIT, Algorithm, Family, SetRecipes, arg
from splitopt.instances.split import SplitInstance, generate
from splitopt.models.split import BREAKDOWN_KEYS, evaluate

S = "splitopt.solvers.split."


def describe(instance: SplitInstance) -> dict:
    """Summary for ``splitopt inspect``."""
    g = instance.graph
    c = instance.costs
    return {
        "family": "split",
        "name": instance.name,
        "mode": instance.mode,
        "layers": len(g),
        "edges": len(g.edges),
        "tensors": len(c.tensors),
        "chain": g.is_chain(),
        "articulation_layers": len(g.articulation_layers),
        "iterations": instance.iterations,
        "up_bytes_per_s": instance.up_bytes_per_s,
        "down_bytes_per_s": instance.down_bytes_per_s,
        "device_seconds_total": math.fsum(instance.device_s),
        "server_seconds_total": math.fsum(instance.server_s),
        "input_policy": instance.input_policy,
        "input_bytes": instance.input_bytes,
        "pin_device": list(instance.pin_device),
        "pin_server": list(instance.pin_server),
    }


def render(instance: SplitInstance, solution) -> str:
    """Readable text: device layers, cut tensors, cost breakdown."""
    g = instance.graph
    mask = instance.mask_of(solution.assignment)
    lines = [f"split of {instance.name!r} ({instance.mode}, {len(g)} layers, N={instance.iterations}) "
             f"by {solution.algorithm}: objective {solution.objective:.9g} s"]
    dev = [g.layers[i].name for i in range(len(g)) if mask[i]]
    shown = dev if len(dev) <= 24 else dev[:16] + [f"... ({len(dev) - 20} more) ..."] + dev[-4:]
    text = ", ".join(shown) if dev else "(none)"
    lines.append(textwrap.fill(f"device ({len(dev)} layers): {text}", width=100, subsequent_indent="  "))
    lines.append(f"server ({len(g) - len(dev)} layers)")
    cut = []
    for p, port, b, cons in g.tensors:
        if mask[p] and any(not mask[j] for j in cons):
            tgt = [g.layers[j].name for j in cons if not mask[j]]
            label = g.layers[p].name + (f"[{port}]" if port else "")
            cut.append(f"  {label} -> {', '.join(tgt)}: {b:.6g} bytes")
    lines.append(f"cut tensors ({len(cut)}):")
    lines.extend(cut or ["  (none)"])
    lines.append("cost breakdown (s):")
    for k in BREAKDOWN_KEYS:
        lines.append(f"  {k:15s} {solution.breakdown.get(k, 0.0):.9g}")
    return "\n".join(lines)


MAKE_ARGUMENTS = (
    arg("--device-flops", type=float, default=None,
        help="device FLOP/s (default for graphs without measured seconds: 2e10, a phone-class CPU)"),
    arg("--server-flops", type=float, default=None,
        help="server FLOP/s (default for graphs without measured seconds: 2e13, a data-centre GPU)"),
    arg("--machine-class", default=None, help="machine class of measured seconds"),
    arg("--slowdown", type=float, default=1.0, help="device slow-down factor applied to measured seconds"),
    arg("--speedup", type=float, default=1.0, help="server speed-up factor applied to measured seconds"),
    arg("--up-mbps", type=float, required=True, help="uplink device -> server, Mbit/s"),
    arg("--down-mbps", type=float, default=None, help="downlink server -> device, Mbit/s"),
    arg("--mode", choices=("training", "inference"), default="training",
        help="split learning (seed 000, forward + backward) or inference (seed 002)"),
    arg("--iterations", type=int, default=1, help="N: local iterations (training) or frames"),
    arg("--input-bytes", type=float, default=None, help="raw input size in bytes"),
    arg("--input-policy", choices=("pin", "upload"), default=None,
        help="raw input: pinned to the device, or uploaded when an input layer runs on the server "
             "(default: pin in training, upload in inference)"),
    arg("--pin-device", action="append", default=[], metavar="LAYER", help="keep LAYER on the device (repeatable)"),
    arg("--pin-server", action="append", default=[], metavar="LAYER", help="keep LAYER on the server (repeatable)"),
)


def make(source, args) -> SplitInstance:
    """Instance from ``splitopt make split`` arguments (``source``: a :class:`GraphSource`)."""
    from splitopt.errors import check_number
    from splitopt.instances.platform import mbps

    graph = source.graph

    up = mbps(check_number("--up-mbps", args.up_mbps, minimum=0.0, strict=True))
    down = None if args.down_mbps is None else mbps(check_number("--down-mbps", args.down_mbps, minimum=0.0,
                                                                 strict=True))
    dflops, sflops = args.device_flops, args.server_flops
    if not any(lay.fwd_seconds for lay in graph.layers):  # an analytic graph: default rates (issue 24)
        dflops = DEFAULT_DEVICE_FLOPS if dflops is None else dflops
        sflops = DEFAULT_SERVER_FLOPS if sflops is None else sflops
    timing = "flops" if (dflops is not None or sflops is not None) else "auto"
    return SplitInstance.from_graph(graph, up_bytes_per_s=up, down_bytes_per_s=down, mode=args.mode,
                                    iterations=args.iterations, device_flops=dflops,
                                    server_flops=sflops, machine_class=args.machine_class,
                                    device_slowdown=args.slowdown, server_speedup=args.speedup, timing=timing,
                                    pin_device=args.pin_device, pin_server=args.pin_server,
                                    input_bytes=args.input_bytes, input_policy=args.input_policy)


#: ``splitopt make split`` rates for graphs without measured seconds (zoo, ONNX, generated)
DEFAULT_DEVICE_FLOPS = 2e10
DEFAULT_SERVER_FLOPS = 2e13

ALGORITHMS = {a.name: a for a in (
    Algorithm("auto", S + "auto:solve", "exact",
              "the default: chain -> prefix scan with a proven bound, DAG -> certified min cut, LP fallback; "
              "incumbent and bound passed on, status optimal only when they agree (solvers/split/auto.py)",
              options=(TIME_LIMIT,)),
    Algorithm("mincut", S + "mincut:solve", "exact",
              "one max-flow on the auxiliary-vertex graph with closure arcs and pins (seed 000 Alg. 2 / seed 002 "
              "Steps 1-5, corrected); certified exact"),
    Algorithm("qdmp", S + "qdmp:solve", "exact",
              "QDMP (seed 002 Algs. 1-2) corrected: articulation layers (>= test), exact segment boundaries, "
              "a min-cut per segment"),
    Algorithm("blockwise", S + "blockwise:solve", "exact",
              "seed 000 Alg. 3 corrected: abstract a SESE block only if its transmit-once min cut equals its "
              "input and Assumption 1 holds on it, then one min cut"),
    Algorithm("chain", S + "chain:solve", "exact", "O(L) prefix scan for chains (Neurosurgeon style); refuses non-chains"),
    Algorithm("bruteforce", S + "bruteforce:solve", "exact",
              "enumeration of predecessor-closed device sets (<= ~22 layers)"),
    Algorithm("milp", S + "milp:solve_milp", "formulation", "digest 002 §8.2 MILP through solvers.exact (default HiGHS)",
              options=SOLVER_OPTIONS),
    Algorithm("lp", S + "milp:solve_lp", "relaxation", "LP relaxation of the MILP (integral: TU, digest 002 §8.3)",
              options=SOLVER_OPTIONS, exact=True),
    Algorithm("mincut_paper", S + "mincut:solve", "paper",
              "seed 000 Alg. 1-2 as printed: Eq. 9/10 weights, no closure arcs, no pins", fixed={"variant": "paper"}),
    Algorithm("plain_mincut", S + "mincut:plain_mincut", "paper",
              "min-cut without the auxiliary vertex (counts a fan-out tensor once per consumer)"),
    Algorithm("qdmp_paper", S + "qdmp:solve", "paper",
              "QDMP as printed: no closure arcs, bridge test '>', Alg. 2 boundaries", fixed={"variant": "paper"}),
    Algorithm("blockwise_paper", S + "blockwise:solve", "paper",
              "seed 000 Alg. 3 as printed: plain min cut test, one decision for all blocks",
              fixed={"variant": "paper"}),
    Algorithm("dads", S + "dads:solve", "baseline",
              "one-shot networkx minimum_cut on the auxiliary-vertex graph with float capacities (DADS "
              "reimplementation baseline)"),
    Algorithm("device_only", S + "baselines:device_only", "baseline", "every layer on the device (server pins respected)"),
    Algorithm("server_only", S + "baselines:server_only", "baseline",
              "every layer on the server (device pins and their ancestors kept)"),
)}

_RANDOM = {"kind": None, "mode": None, "up_mbps": None, "device_flops": None, "server_flops": None, "costs": None}

FAMILY = Family(
    name="split",
    instance_type=SplitInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="auto",
    reference_algorithm="milp",
    relaxations=("lp",),
    describe=describe,
    render=render,
    sense="min",
    description="two-tier device/server split of a DNN graph (seeds 000 training, 002 inference)",
    generate=generate,
    sets=SetRecipes(quick={"n": 10, **_RANDOM}, random={"n": 14, **_RANDOM},
                    graph={"mode": None, "up_mbps": None}),
    make_arguments=MAKE_ARGUMENTS,
    make=make,
    sweep="splitopt.solvers.split.sweep:sweep",
    claims="splitopt.solvers.split.claims:claims",
)
