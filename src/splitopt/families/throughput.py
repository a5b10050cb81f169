"""Registry entry of the ``throughput`` family (seed 004): algorithms, options, sets, CLI.

Instance: :mod:`splitopt.instances.throughput`; evaluator and formulations:
:mod:`splitopt.models.throughput`; algorithms: :mod:`splitopt.solvers.throughput` (one module each).
"""

from __future__ import annotations

from splitopt.errors import InstanceError, check_number
from splitopt.families import (
    MIP_GAP,
    NODE_LIMIT,
    SOLVER_OPTIONS,
    TIME_LIMIT,
    Algorithm,
    Family,
    Option,
    SetRecipes,
    arg,
    field_overrides,
)
from splitopt.instances.throughput import LINK_MODELS, TRANSFERS, ThroughputInstance, generate, table2_platform
from splitopt.models.throughput import evaluate, node_indices

T = "splitopt.solvers.throughput."


def describe(instance: ThroughputInstance) -> dict:
    return {"family": "throughput", "name": instance.name, "layers": instance.n_layers,
            "tensors": len(instance.tensors), "nodes": instance.n_nodes,
            "node_gflops": [f / 1e9 for f in instance.node_flops], "max_splits": instance.max_splits,
            "link_model": instance.link_model, "transfer": instance.transfer, "contiguous": instance.contiguous,
            "pins": dict(instance.pins), "total_gflop": sum(instance.flop) / 1e9}


def render(instance: ThroughputInstance, solution) -> str:
    p = node_indices(instance, solution.assignment)
    b = solution.breakdown
    lines = [f"{instance.name}: period {solution.objective:.6g} s, throughput {b.get('throughput', 0):.6g} /s "
             f"({solution.algorithm}; compute {b.get('compute_max', 0):.6g} s, links {b.get('link_max', 0):.6g} s, "
             f"{int(b.get('splits', 0))} split points)"]
    runs, start = [], 0
    for i in range(1, len(p) + 1):
        if i == len(p) or p[i] != p[start]:
            runs.append((start, i - 1, p[start]))
            start = i
    for lo, hi, a in runs:
        first, last = instance.layers[lo], instance.layers[hi]
        lines.append(f"  {instance.nodes[a]:>8}: layers {lo}..{hi} ({first} .. {last})")
    return "\n".join(lines)


MAKE_ARGUMENTS = (
    arg("--setup", type=int, choices=(1, 2, 3, 4), default=None,
        help="seed 004 Table 2 set-up (two identical nodes): 1 TX2+Wi-Fi, 2 A57+Wi-Fi, 3 Maxwell+Ethernet, 4 A57+Ethernet"),
    arg("--node-gflops", default=None, help="comma-separated node rates in GFLOP/s (e.g. 14.7,5,5)"),
    arg("--rate-mbytes", type=float, default=None, help="link rate of every pair in MB/s (1e6 bytes/s)"),
    arg("--max-splits", type=int, default=None, help="cap S on split points in the layer order (default: none)"),
    arg("--link-model", choices=LINK_MODELS, default="full-duplex", help="link semantics"),
    arg("--transfer", choices=TRANSFERS, default="once",
        help="a tensor crosses a link once per destination node, or once per consuming edge (paper eq. 5)"),
    arg("--contiguous", action="store_true", help="each node runs one contiguous run of layers"),
    arg("--pin", action="append", default=[], metavar="LAYER=NODE", help="pin a layer to a node (n0, n1, ...)"),
)


def make(source, args) -> ThroughputInstance:
    """``splitopt make throughput GRAPH --setup 3`` or ``--node-gflops 14.7,5 --rate-mbytes 1400``."""
    if args.setup is not None:
        flops, rates = table2_platform(args.setup)
    else:
        if args.node_gflops is None or args.rate_mbytes is None:
            raise InstanceError("--node-gflops", "give --setup 1..4, or --node-gflops and --rate-mbytes")
        try:
            flops = [check_number("--node-gflops", float(x), strict=True) * 1e9 for x in args.node_gflops.split(",")]
        except ValueError:
            raise InstanceError("--node-gflops", f"must be comma-separated numbers, got {args.node_gflops!r}") from None
        rate = check_number("--rate-mbytes", args.rate_mbytes, strict=True) * 1e6
        rates = [[rate] * len(flops) for _ in flops]
    pins = {}
    for kv in args.pin:
        lay, sep, node = kv.partition("=")
        if not sep:
            raise InstanceError("--pin", f"must be LAYER=NODE, got {kv!r}")
        pins[lay] = node
    from splitopt.export.plan import torch_meta  # issue 23: a graph from PyTorch keeps its module names

    return ThroughputInstance.from_graph(source.graph, flops, rates, max_splits=args.max_splits,
                                         link_model=args.link_model, transfer=args.transfer,
                                         contiguous=bool(args.contiguous), pins=pins, meta=torch_meta(source.graph))


SOLVE_ARGUMENTS = (arg("--max-splits", type=int, default=None, help="throughput: override the split cap S"),)


override = field_overrides(SOLVE_ARGUMENTS)  # --max-splits replaces the instance's cap


_BNB = (TIME_LIMIT, NODE_LIMIT, Option("symmetry", lambda v: str(v).lower() not in ("0", "false", "no"), True,
                                       "break the symmetry of identical nodes"))

ALGORITHMS = {a.name: a for a in (
    Algorithm("bnb", T + "bnb:solve", "exact",
              "corrected B&B (seed 004 Alg. 1): valid bound on any DAG (fixed transfers, node loads, water-filling), "
              "depth-first with padded-leaf incumbents, symmetry breaking", options=_BNB),
    Algorithm("bnb_paper", T + "bnb_paper:solve", "paper",
              "seed 004 Alg. 1 as printed, made runnable: breadth-first, padded-leaf transfer bound (invalid with "
              "skip connections)", options=(TIME_LIMIT,)),
    Algorithm("capped_paper", T + "bnb_paper:capped", "baseline",
              "the authors' setting: the paper's B&B with the cap S = 3", options=(TIME_LIMIT,)),
    Algorithm("rlt", T + "milp:solve_rlt", "formulation", "RLT-1 MILP (digest §6.4) through HiGHS",
              options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("mccormick", T + "milp:solve_mccormick", "formulation", "McCormick MILP (digest §6.3) through HiGHS",
              options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("minlp", T + "milp:solve_minlp", "formulation",
              "MINLP with bilinear link terms (digest §6.2), solved by SCIP (spatial branch and bound)",
              options=(TIME_LIMIT, MIP_GAP)),
    Algorithm("lp_rlt", T + "milp:lp_rlt", "relaxation", "LP relaxation of the RLT MILP (bound)", options=SOLVER_OPTIONS),
    Algorithm("lp_mccormick", T + "milp:lp_mccormick", "relaxation", "LP relaxation of the McCormick MILP (bound)",
              options=SOLVER_OPTIONS),
    Algorithm("single_node", T + "baselines:best_single_node", "baseline", "every layer on the best single node"),
    Algorithm("bruteforce", T + "bruteforce:bruteforce", "exact", "enumeration of N^L placements (tiny instances)"),
)}

# issue 21 §2: the default, a written rule over the methods above
ALGORITHMS["auto"] = Algorithm("auto", T + "auto:solve", "exact",
                               "the family's rule (solvers/throughput/auto.py): bnb, then the RLT MILP from bnb's "
                               "incumbent on small instances when the limit stops bnb unproven", options=(TIME_LIMIT,))

FAMILY = Family(
    name="throughput",
    instance_type=ThroughputInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="auto",
    reference_algorithm="rlt",
    relaxations=("lp_rlt", "lp_mccormick"),
    describe=describe,
    render=render,
    sense="min",
    description="throughput-maximising placement of a DNN graph on edge nodes (seed 004)",
    generate=generate,
    sets=SetRecipes(quick={"n_layers": 6, "n_nodes": 3}, random={"n_layers": 7, "n_nodes": 3},
                    graph=None, quick_seeds=12, random_seeds=1000),
    make_arguments=MAKE_ARGUMENTS,
    make=make,
    solve_arguments=SOLVE_ARGUMENTS,
    override=override,
    claims="splitopt.solvers.throughput.claims:claims",
    sweep="splitopt.solvers.throughput.sweep:sweep",  # issue 24 item 5
)
