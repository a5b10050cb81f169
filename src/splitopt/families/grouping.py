"""Registry entry of the ``grouping`` family (seed 003): algorithms, options, sets, CLI.

Instance: :mod:`splitopt.instances.grouping`; evaluator and MILPs: :mod:`splitopt.models.grouping`;
algorithms: :mod:`splitopt.solvers.grouping` (one module each).
"""

from __future__ import annotations

from splitopt.errors import InstanceError
from splitopt.families import SOLVER_OPTIONS, Algorithm, Family, SetRecipes, arg
from splitopt.instances.grouping import OBJECTIVES, GroupingInstance, generate
from splitopt.models.grouping import evaluate, stage_table

G = "splitopt.solvers.grouping."


def describe(instance: GroupingInstance) -> dict:
    return {"family": "grouping", "name": instance.name, "parts": instance.n, "k": instance.k,
            "at_most_k": instance.at_most_k, "objective": instance.objective, "requests": instance.requests,
            "bandwidth_bytes_per_s": instance.bandwidth_bytes_per_s, "T_total_s": instance.T_total,
            "S_total_bytes": instance.S_total, "C_total": instance.C_total, "transfers": instance.transfers}


def render(instance: GroupingInstance, solution) -> str:
    """A stage table of a solution (one row per group)."""
    rows = stage_table(instance, solution.assignment)
    lines = [f"{instance.name}: {instance.objective} = {solution.objective:.6g} "
             f"({solution.algorithm}, {len(rows)} groups of {instance.n} parts)",
             f"{'stage':>5} {'parts':>5} {'first':>16} {'last':>16} {'compute_s':>11} {'transfer_s':>11} "
             f"{'stage_s':>11} {'convs':>5}"]
    for r in rows:
        lines.append(f"{r['stage']:>5} {r['parts']:>5} {r['first'][-16:]:>16} {r['last'][-16:]:>16} "
                     f"{r['compute_s']:>11.6g} {r['transfer_s']:>11.6g} {r['stage_s']:>11.6g} {r['convs']:>5}")
    return "\n".join(lines)


MAKE_ARGUMENTS = (
    arg("--k", type=int, required=True, help="number of groups (devices)"),
    arg("--objective", choices=OBJECTIVES, default="perf", help="objective to minimise (default: perf)"),
    arg("--requests", type=int, default=None,
        help="number of requests R (perf); default: the number of parts, as the thesis's ResNet-18 run (11 "
             "requests for 11 parts, digest 003 §4.2)"),
    arg("--bandwidth-bytes-per-s", type=float, default=None, help="link rate (default: thesis 25x1024 B/ms)"),
    arg("--flop-rate", type=float, default=None, help="FLOP/s to turn fwd_flop into seconds (default 2e11)"),
    arg("--machine", default=None, help="machine class of measured fwd_seconds"),
    arg("--batch", type=int, default=None,
        help="batch multiplier for times and bytes (default: 16 for a zoo name, as in the thesis; 1 for a graph)"),
    arg("--floor-flop", type=float, default=None, help="smallest FLOP count a part is charged"),
    arg("--collapse", choices=("block", "sese", "none"), default="block",
        help="how a DAG becomes a chain of parts (default: block labels)"),
    *(arg(f"--{w}", type=float, default=None, help=f"thesis_cost weight {w} (thesis default)")
      for w in ("alpha", "beta", "gamma", "delta")),
    arg("--no-transfers", action="store_true", help="ignore transfer times between groups"),
    arg("--no-final-transfer", action="store_true", help="do not charge the last group's output transfer"),
    arg("--k1-convention", choices=("thesis", "uniform"), default="thesis",
        help="k = 1 convention: thesis (Perf = R T_1) or uniform (closed form)"),
    arg("--at-most-k", action="store_true", help="allow fewer than k groups"),
)


def make(source, args) -> GroupingInstance:
    """``splitopt make grouping GRAPH_OR_ZOO``: a zoo name gets the thesis set-up (batch 16,
    :meth:`GroupingInstance.from_zoo`) without loading a generic graph first. Without
    ``--requests`` the number of requests R is the number of parts."""
    inst = _make(source, args)
    if args.requests is None:
        inst = inst.with_(requests=len(inst.names))
    return inst


def _make(source, args) -> GroupingInstance:
    kw: dict = {"objective": args.objective, "requests": 1 if args.requests is None else args.requests,
                "k1_convention": args.k1_convention, "at_most_k": bool(args.at_most_k),
                "transfers": not args.no_transfers, "charge_final_transfer": not args.no_final_transfer}
    if args.bandwidth_bytes_per_s is not None:
        kw["bandwidth_bytes_per_s"] = args.bandwidth_bytes_per_s
    for w in ("alpha", "beta", "gamma", "delta"):
        if getattr(args, w, None) is not None:
            kw[w] = getattr(args, w)
    tkw = {}
    if args.batch is not None:
        tkw["batch"] = args.batch
    if args.floor_flop is not None:
        tkw["floor_flop"] = args.floor_flop
    zoo_name = source.zoo_name
    if zoo_name is not None:
        # the thesis set-up of from_zoo: FLOP-based times at block granularity; say so rather than
        # silently ignore options that cannot apply
        if args.machine is not None:
            raise InstanceError("--machine", f"zoo architecture {zoo_name!r} has no measured seconds "
                                             f"(use --flop-rate), got {args.machine!r}")
        if args.collapse != "block":
            raise InstanceError("--collapse", f"a zoo name uses the thesis block granularity; for "
                                              f"collapse={args.collapse!r} save the graph first "
                                              f"(splitopt zoo show {zoo_name} -o graph.json) and pass that file")
        if args.flop_rate is not None:
            tkw["flop_rate"] = args.flop_rate
        return GroupingInstance.from_zoo(zoo_name, args.k, **tkw, **kw)
    flop_rate = args.flop_rate
    if flop_rate is None and args.machine is None:
        flop_rate = 2e11
    return GroupingInstance.from_graph(source.graph, args.k, collapse=args.collapse, flop_rate=flop_rate,
                                       machine=args.machine, **tkw, **kw)


SOLVE_ARGUMENTS = (arg("--k", type=int, default=None, help="grouping: override the number of groups"),)


def override(instance: GroupingInstance, args) -> GroupingInstance:
    """``--k`` replaces the group count; a name ending in ``-k<old>`` follows it."""
    import re

    k = getattr(args, "k", None)
    if k is None:
        return instance
    name = re.sub(r"-k\d+$", f"-k{k}", instance.name)
    return instance.with_(k=k, name=name)


_MILP_OPTIONS = SOLVER_OPTIONS

ALGORITHMS = {a.name: a for a in (
    Algorithm("auto", G + "auto:solve", "exact",
              "default: the fastest exact method for the instance's shape (rule in solvers/grouping/auto.py)"),
    Algorithm("threshold", G + "threshold:solve", "exact",
              "bisection / branch and bound over the threshold with O(k n log n) window DPs; all objectives"),
    Algorithm("dp", G + "dp:solve", "exact",
              "threshold enumeration + vectorised min-sum DP (digest §5.3 method 4); all objectives"),
    Algorithm("linear_partition", G + "linear_partition:solve_dp", "exact",
              "min-max DP (digest §5.3 methods 2-3); bottleneck only"),
    Algorithm("parametric", G + "linear_partition:parametric_search", "exact",
              "exact probe-based search over candidate stage times; bottleneck only"),
    Algorithm("bnp", G + "bnp:bnp", "paper",
              "thesis Alg. 1 Balanced Number Partitioning, as printed (greedy splitting)"),
    Algorithm("exhaustive", G + "exhaustive:exhaustive", "paper",
              "thesis Alg. 3 exhaustive search over cut sets, scored by the surrogate"),
    Algorithm("bruteforce", G + "bruteforce:bruteforce", "exact",
              "enumerate every grouping with the evaluator (tiny chains)"),
    Algorithm("milp_compact", G + "milp:solve_compact", "formulation",
              "digest §5.3 MILP A (assignment, staircase)", options=_MILP_OPTIONS),
    Algorithm("milp_interval", G + "milp:solve_interval", "formulation",
              "digest §5.3 MILP B (interval/path)", options=_MILP_OPTIONS),
    Algorithm("lp_compact", G + "milp:lp_compact", "relaxation",
              "LP relaxation of MILP A (bound; assignment a rounding)", options=_MILP_OPTIONS),
    Algorithm("lp_interval", G + "milp:lp_interval", "relaxation",
              "LP relaxation of MILP B (bound; assignment a rounding)", options=_MILP_OPTIONS),
)}

FAMILY = Family(
    name="grouping",
    instance_type=GroupingInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="auto",
    reference_algorithm="milp_interval",
    relaxations=("lp_compact", "lp_interval"),
    describe=describe,
    render=render,
    sense="min",
    description="balanced grouping of a chain of model parts into k pipeline stages (seed 003)",
    generate=generate,
    sets=SetRecipes(quick={"n": 10, "k": None, "objective": None}, random={"n": 12, "k": None, "objective": None},
                    graph={"k": None, "objective": None}),
    make_arguments=MAKE_ARGUMENTS,
    make=make,
    solve_arguments=SOLVE_ARGUMENTS,
    override=override,
    sweep="splitopt.solvers.grouping.sweep:sweep",
    claims="splitopt.solvers.grouping.claims:claims",
)
