"""Registry entry of the ``placement`` family (issue 22): operators of a DNN graph on ``k``
accelerators with memory and ``l`` CPU cores, min max-load (Tarnawski et al., NeurIPS 2020, §4; the
model of msr-fiddle/dnn-partitioning). Until issue 22 this model lived inside ``throughput`` behind
``comm_model="device"``; its algorithms lost their ``device_`` prefix here.

Instance: :mod:`splitopt.instances.placement`; evaluator and formulations:
:mod:`splitopt.models.placement`; algorithms: :mod:`splitopt.solvers.placement` (one module each;
``auto``, the default, in :mod:`splitopt.solvers.placement.auto`).
"""

from __future__ import annotations

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
from splitopt.instances.placement import CONTIGUITIES, OBJECTIVES, PlacementInstance, generate, generate_mixed
from splitopt.models.placement import evaluate

T = "splitopt.solvers.placement."

ALGORITHMS = {a.name: a for a in (
    Algorithm("auto", T + "auto:solve", "exact",
              "the default: picks the fastest exact method for the instance's shape (contiguity, size, colour "
              "classes, backward nodes; rule in solvers/placement/auto.py) and hands incumbent and bound on; "
              "60 s unless --time-limit is given (inf: no limit)",
              options=(TIME_LIMIT,)),
    Algorithm("ideals", T + "ideals:solve", "exact",
              "contiguity chain: branch and bound over ideals (isolation min-cut bound, memo of failed "
              "states, forward/reverse portfolio); proven bound at any limit", options=(TIME_LIMIT, NODE_LIMIT)),
    Algorithm("milp", T + "milp:solve", "formulation",
              "the peer's IP strengthened (classes, symmetry breaking, work bound; convex or chain "
              "contiguity) through HiGHS, warm-started from the best baseline", options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("peer_ip", T + "milp:peer_ip", "formulation",
              "the peer's IP as published (no symmetry breaking, bounds or incumbent; convex or none) "
              "through HiGHS: the baseline for milp on the same solver", options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("lp", T + "milp:relaxation", "relaxation", "LP relaxation of milp (bound)", options=SOLVER_OPTIONS),
    Algorithm("lns", T + "lns:solve", "heuristic",
              "exact re-placement on pairs and triples of devices, the others frozen (convex or none), from the "
              "MILP's incumbent phase", options=(TIME_LIMIT,)),
    Algorithm("colgen", T + "colgen:relaxation", "relaxation",
              "configuration-LP bound by column generation (sees communication; exact DP pricing where few "
              "tensors are open, else a MILP), with dives and a restricted master MILP for placements",
              options=(TIME_LIMIT,)),
    Algorithm("linearised", T + "linearised:linearised_dp", "baseline",
              "PipeDream-style DP over runs of one topological order (the peer's -linearize)"),
    Algorithm("local", T + "baselines:local_search", "heuristic",
              "the peer's local search (best single-class moves, 10 seeded restarts)",
              options=(Option("restarts", int, 10, "random restarts"), Option("seed", int, 0, "random seed"))),
    Algorithm("expert", T + "baselines:expert", "baseline", "the human-expert split shipped with the workload"),
    Algorithm("bruteforce", T + "baselines:bruteforce", "exact",
              "every class assignment up to relabelling identical devices (tiny instances)"),
)}


def describe(instance: PlacementInstance) -> dict:
    return {"family": "placement", "name": instance.name, "nodes": instance.n_nodes,
            "tensors": len(instance.tensors), "accelerators": instance.n_accelerators, "cpu_cores": instance.n_cpus,
            "acc_memory_bytes": instance.acc_memory_bytes, "objective": instance.objective,
            "contiguity": instance.contiguity, "backward_nodes": sum(instance.backward),
            "colour_classes": len(instance.colour_classes),
            "total_acc_seconds": sum(instance.acc_seconds), "total_cpu_seconds": sum(instance.cpu_seconds)}


def render(instance: PlacementInstance, solution) -> str:
    from splitopt.models.placement import device_indices

    b = solution.breakdown
    bound = "" if solution.bound is None else f", bound {solution.bound:.6g} s"
    lines = [f"{instance.name}: {instance.objective} {solution.objective:.6g} s ({solution.algorithm}, "
             f"{solution.status}{bound}; fwd max {b.get('fwd_max', 0):.6g} s, bwd max {b.get('bwd_max', 0):.6g} s, "
             f"{int(b.get('devices_used', 0))} devices used)"]
    p = device_indices(instance, solution.assignment)
    for d, dev in enumerate(instance.devices):
        nodes = [instance.nodes[i] for i in range(instance.n_nodes) if p[i] == d]
        if nodes:
            shown = ", ".join(nodes[:8]) + (f", ... ({len(nodes)} nodes)" if len(nodes) > 8 else "")
            lines.append(f"  {dev:>6}: load {b.get(f'load[{dev}]', 0):.6g} s: {shown}")
    return "\n".join(lines)


def generate_family(seed: int, **params) -> PlacementInstance:
    """``Family.generate``: :func:`~splitopt.instances.placement.generate_mixed` (shape drawn from
    the seed) without parameters, else :func:`~splitopt.instances.placement.generate`."""
    return generate(seed, **params) if params else generate_mixed(seed)


SOLVE_ARGUMENTS = (
    arg("--contiguity", choices=CONTIGUITIES, default=None,
        help="placement: override the instance's contiguity (chain is the peer's DP model)"),
    arg("--objective", dest="placement_objective", choices=OBJECTIVES, default=None,
        help="placement: override the instance's objective"),
)

_fields = field_overrides(SOLVE_ARGUMENTS[:1])


def override(instance: PlacementInstance, args) -> PlacementInstance:
    inst = _fields(instance, args)
    obj = getattr(args, "placement_objective", None)
    return inst.with_(objective=obj) if obj is not None else inst


FAMILY = Family(
    name="placement",
    instance_type=PlacementInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="auto",
    reference_algorithm="milp",
    relaxations=("lp",),
    describe=describe,
    render=render,
    sense="min",
    description="operators on k accelerators with memory and l CPU cores, min max-load (msr-fiddle/dnn-partitioning)",
    generate=generate_family,
    sets=SetRecipes(quick={}, random={}, graph=None, quick_seeds=6, random_seeds=100),
    solve_arguments=SOLVE_ARGUMENTS,
    override=override,
)
