"""Registry entry of the ``pipeline`` family (seed 001): algorithms, options, sets, CLI.

Instance: :mod:`splitopt.instances.pipeline`; evaluator and formulations:
:mod:`splitopt.models.pipeline` (and :mod:`splitopt.models.pipeline_milp`); algorithms:
:mod:`splitopt.solvers.pipeline` (one module each).

# interface

Algorithms are declared in :data:`ALGORITHMS`; a new one is one :class:`Algorithm` line there
(kind ``exact``, ``formulation``, ``relaxation``, ``paper``, ``heuristic`` or ``baseline``).
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
from splitopt.instances.pipeline import (
    BOTTLENECKS,
    CLIENT_SPLITS,
    MEMORIES,
    PLACEMENTS,
    RELAYS,
    TOPOLOGIES,
    PipelineInstance,
)
from splitopt.instances.pipeline_generate import PROFILES, generate, profile_instance
from splitopt.models.pipeline import evaluate, parse_assignment

S = "splitopt.solvers.pipeline."


def describe(instance: PipelineInstance) -> dict:
    return {"family": "pipeline", "name": instance.name, "layers": instance.n_layers, "clients": instance.n_clients,
            "servers": instance.n_servers, "batch": instance.batch,
            "b_values": len(instance.allowed_b()), "placement": instance.placement,
            "bottleneck": instance.bottleneck, "memory": instance.memory, "client_split": instance.client_split,
            "topology": instance.topology, "relay": instance.relay, "max_submodels": instance.max_submodels,
            "total_gflop_per_sample": (sum(instance.fwd_flop) + sum(instance.bwd_flop)) / 1e9}


def render(instance: PipelineInstance, solution) -> str:
    plan = parse_assignment(instance, solution.assignment)
    br = solution.breakdown
    lines = [f"{instance.name}: round latency {solution.objective:.6g} s ({solution.algorithm}; b = {plan.b}, "
             f"T_f = {br.get('T_f', 0):.6g} s, T_i = {br.get('T_i', 0):.6g} s x {br.get('xi', 0)}, "
             f"bottleneck: {br.get('bottleneck', '?')})"]
    blocks = plan.blocks(instance.n_layers)
    lo, hi = blocks[0]
    lines.append(f"  {'clients':>10}: layers {lo}..{hi - 1} ({instance.layers[lo]} .. {instance.layers[hi - 1]}) "
                 f"x {instance.n_clients}")
    for (lo, hi), s in zip(blocks[1:], plan.servers):
        lines.append(f"  {instance.servers[s]:>10}: layers {lo}..{hi - 1} ({instance.layers[lo]} .. "
                     f"{instance.layers[hi - 1]})")
    return "\n".join(lines)


MAKE_ARGUMENTS = (
    arg("--clients", type=int, default=5, help="number of clients M (default 5)"),
    arg("--servers", type=int, default=6, help="number of edge servers N (default 6, the paper's default)"),
    arg("--seed", type=int, default=0, help="seed of the Table II platform draw (positions, bandwidths, rates, memory)"),
    arg("--band", choices=("sub6", "mmwave"), default="sub6",
        help="Table II bandwidths: sub6 10-50 MHz (default) or mmwave 100-200 MHz"),
    arg("--batch", type=int, default=512, help="mini-batch size B (default 512, the paper's)"),
    arg("--micro-batch", type=int, default=None, help="allow only this micro-batch size b (default: every b in 1..B)"),
    arg("--max-submodels", type=int, default=None, help="the paper's K: at most this many submodels, client included"),
    arg("--placement", choices=PLACEMENTS, default="distinct",
        help="distinct: a server hosts at most one block; revisit: path-graph semantics; aggregate: the paper's P4"),
    arg("--bottleneck", choices=BOTTLENECKS, default="stages",
        help="stages: Eq. 13 separate FP/BP/link stages; resource: 1F1B, FP and BP share a GPU, a link both directions"),
    arg("--memory", choices=MEMORIES, default="paper",
        help="paper: Eq. 11 everything times b; resident: parameters once, activations x micro-batches in flight"),
    arg("--client-split", choices=CLIENT_SPLITS, default="balanced",
        help="balanced: round robin (monotone in b); paper: Eq. 1, remainder on the last client"),
    arg("--topology", choices=TOPOLOGIES, default="mesh", help="server network of Fig. 8"),
    arg("--relay", choices=RELAYS, default="forbidden",
        help="transfers between non-adjacent servers: forbidden, or relayed store-and-forward"),
    arg("--seq-len", type=int, default=512, help="tokens per sample of the tinyllama profile (default 512)"),
)


def profile_from_graph(graph) -> dict:
    """A layer profile from a DNN graph that is a chain (after collapsing single-entry/single-exit
    regions): FP FLOP, BP FLOP (2 x FP where the graph has none), activation = output bytes,
    gradient the same size, parameter bytes."""
    g = graph if graph.is_chain() else graph.collapse()
    if not g.is_chain():
        raise InstanceError("graph", f"{graph.name!r} is not a chain, even after collapsing its blocks")
    lays = g.layers
    return {"names": [lay.name for lay in lays], "fwd_flop": [lay.fwd_flop for lay in lays],
            "bwd_flop": [lay.bwd_flop or 2.0 * lay.fwd_flop for lay in lays],
            "act_bytes": [lay.out_bytes for lay in lays], "grad_bytes": [lay.out_bytes for lay in lays],
            "param_bytes": [lay.param_bytes for lay in lays]}


def make(source, args) -> PipelineInstance:
    """``splitopt make pipeline vgg16-cifar`` (or ``tinyllama``, or any chain-like graph) on a Table
    II platform drawn from ``--seed``."""
    M = int(check_number("--clients", args.clients, minimum=1))
    N = int(check_number("--servers", args.servers, minimum=1))
    micro = None if args.micro_batch is None else (args.micro_batch,)
    kw = dict(batch=args.batch, micro_batches=micro, max_submodels=args.max_submodels, placement=args.placement,
              bottleneck=args.bottleneck, memory=args.memory, client_split=args.client_split,
              topology=args.topology, relay=args.relay)
    spec = source.spec
    if spec in PROFILES:
        prof = PROFILES[spec](seq_len=args.seq_len) if spec == "tinyllama" else PROFILES[spec]()
        return profile_instance(prof, n_clients=M, n_servers=N, seed=args.seed, band=args.band,
                                name=f"{spec}-M{M}-N{N}-s{args.seed}", **kw)
    prof = profile_from_graph(source.graph)
    inst = profile_instance(prof, n_clients=M, n_servers=N, seed=args.seed, band=args.band,
                            name=f"{source.graph.name}-M{M}-N{N}-s{args.seed}", **kw)
    from splitopt.export.plan import torch_meta  # issue 23: a graph from PyTorch keeps its module names

    g = source.graph
    extra = torch_meta(g, g if g.is_chain() else g.collapse())
    return inst.with_(meta={**inst.meta, **extra}) if extra else inst


SOLVE_ARGUMENTS = (
    arg("--placement", choices=PLACEMENTS, default=None, help="pipeline: override the placement semantics"),
    arg("--bottleneck", choices=BOTTLENECKS, default=None, help="pipeline: override the bottleneck semantics"),
)


override = field_overrides(SOLVE_ARGUMENTS)  # --placement / --bottleneck replace the instance's


_ORDER = Option("order", str, "bisect",
                "threshold order of the bottleneck-aware search: bisect (best-first bisection, default), "
                "descending (path-skip) or ascending (digest §3.5); all exact")
_MAX_CRITICAL = Option("max_critical", int, 12,
                       "distinct: largest set of servers whose reuse the DP tracks (2^k states); beyond it the "
                       "answer is the best distinct plan with a proven bound")
_K = Option("K", int, None, "submodels forced by Algorithm 1's graph (default max_submodels or min(I, N + 1))")
_SEED = Option("seed", int, 0, "seed of the random cut or placement")
_SP = (_ORDER, _MAX_CRITICAL, TIME_LIMIT, NODE_LIMIT)

_MILP = SOLVER_OPTIONS + (MIP_GAP,)

ALGORITHMS = {a.name: a for a in (
    Algorithm("auto", S + "auto:solve", "exact",
              "default: the exact search, then the MILP of the placement with the time left when the search "
              "cannot finish; best plan, strongest bound (rule in solvers/pipeline/auto.py)", options=(TIME_LIMIT,)),
    Algorithm("shortest_path", S + "shortest_path:solve", "exact",
              "corrected bottleneck-aware shortest path, joint over b (distinct: state-space relaxation; "
              "aggregate: branch and bound)", options=_SP),
    Algorithm("shortest_path_ascending", S + "shortest_path:solve", "exact",
              "the same with ascending thresholds and the min-sum early stop (digest §3.5 as written)",
              options=_SP[1:], fixed={"order": "ascending"}),
    Algorithm("milp", S + "milp:solve_best", "formulation",
              "the exact MILP that fits the placement (C distinct, B revisit, A aggregate), one per allowed b",
              options=_MILP),
    Algorithm("milp_c", S + "milp:solve_c", "formulation",
              "Formulation C (digest §8.1): layer-to-node binaries, McCormick transfers; distinct; loop over b",
              options=_MILP),
    Algorithm("milp_a", S + "milp:solve_a", "formulation",
              "Formulation A (digest §8.2): stage variables, exact RLT products; every placement; loop over b",
              options=_MILP),
    Algorithm("milp_b", S + "milp:solve_b", "formulation",
              "Formulation B (digest §8.3): arc flow on the split/placement DAG; revisit, distinct; loop over b",
              options=_MILP),
    Algorithm("milp_joint", S + "milp:solve_joint", "formulation",
              "Formulation C over every allowed b at once, with choice binaries (digest §8.5 ii); distinct",
              options=_MILP),
    Algorithm("lp_rlt", S + "milp:lp_rlt", "relaxation",
              "LP relaxation of Formulation A with RLT level-1 products (the paper's Appendix B bound), min over b",
              options=SOLVER_OPTIONS),
    Algorithm("lp_plain", S + "milp:lp_plain", "relaxation",
              "LP relaxation of Formulation A with plain McCormick products, min over b", options=SOLVER_OPTIONS),
    Algorithm("bruteforce", S + "bruteforce:solve", "exact",
              "enumeration of every b, cut set and server sequence, scored by the evaluator (tiny instances)",
              options=(TIME_LIMIT,)),
    Algorithm("algorithm1", S + "paper:algorithm1", "paper",
              "Algorithm 1 as printed over every b: descending edges, RLT LP bound (HiGHS), sum-as-bottleneck, "
              "exactly K parts, last compute on no edge", options=(_K, TIME_LIMIT)),
    Algorithm("theorem1", S + "paper:theorem1", "paper",
              "exact plan at b0 = 20, then Theorem 1's closed-form b with T_1 frozen", options=(TIME_LIMIT,)),
    Algorithm("bcd", S + "paper:bcd", "paper",
              "Algorithm 2 (BCD) as printed: exact MSP step, Theorem 1 b step with T_1 frozen (stalls near 20)",
              options=(TIME_LIMIT,)),
    Algorithm("bcd_alg1", S + "paper:bcd", "paper",
              "Algorithm 2 with Algorithm 1 as printed for the MSP step", options=(_K, TIME_LIMIT),
              fixed={"msp": "paper"}),
    Algorithm("bcd_exact_b", S + "paper:bcd", "heuristic",
              "BCD with an exact 1-D b step (monotone descent, no optimality claim)", options=(TIME_LIMIT,),
              fixed={"b_step": "exact"}),
    Algorithm("rc_op", S + "baselines:rc_op", "baseline",
              "RC+OP: random cuts, optimal placement and b", options=(_SEED, TIME_LIMIT)),
    Algorithm("rp_oc", S + "baselines:rp_oc", "baseline",
              "RP+OC: random server order, optimal cuts and b", options=(_SEED, TIME_LIMIT)),
    Algorithm("no_pipeline", S + "baselines:no_pipeline", "baseline",
              "No Pipeline: b = B, optimal cuts and placement", options=(TIME_LIMIT,)),
)}

FAMILY = Family(
    name="pipeline",
    instance_type=PipelineInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="auto",
    reference_algorithm="milp",
    relaxations=("lp_rlt", "lp_plain"),
    describe=describe,
    render=render,
    sense="min",
    description="pipelined split learning over a multi-hop edge network: cuts, placement, micro-batch (seed 001)",
    generate=generate,
    sets=SetRecipes(quick={"n_layers": 5, "n_servers": 3, "n_clients": 2, "b": "draw"},
                    random={"n_layers": 6, "n_servers": 3, "n_clients": 2, "b": "draw"},
                    graph=None, quick_seeds=12, random_seeds=1000),
    make_arguments=MAKE_ARGUMENTS,
    make=make,
    solve_arguments=SOLVE_ARGUMENTS,
    override=override,
    sweep="splitopt.solvers.pipeline.sweep:sweep",
    claims="splitopt.solvers.pipeline.claims:claims",
)

__all__ = ["FAMILY", "ALGORITHMS", "describe", "render", "make", "override", "profile_from_graph"]
