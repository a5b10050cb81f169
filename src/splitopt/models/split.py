"""The ``split`` family: evaluator, exact MILP/LP formulation and registry entry.

Seeds 000 (split training, digest ``000-fast-model-splitting.md``) and 002 (QDMP edge/cloud
inference, digest ``002-qdmp.md``). The cost model is described in
:mod:`splitopt.instances.split`.

* :func:`evaluate` is the single source of truth for objective values: seed 000 Eq. 7 in the
  corrected per-layer form of digest 000 §2.4 (parameter download charged to device layers, not to
  server layers as Eq. 10 prints it, E2; each tensor sent once, §3.2; raw input pinned to the device,
  E3) and seed 002's ``L(S)`` of digest 002 §1.2 (per-tensor upload, raw-input upload
  ``tau = D_input / B`` as in Alg. 2, not the big-M of §3.2.1, digest 002 §2.5). Assignments that
  send data server -> device (not closed under predecessors) are rejected: neither paper costs such
  flows and both protocols forbid them (digest 000 E4, digest 002 §2.6).
* :func:`relaxed_cost` is the same cost *without* the feasibility checks: the function the papers'
  graphs minimise when they lack closure arcs (digest 000 §3.6, digest 002 §2.3 Lemma). It exists
  to show what the printed algorithms optimise, never to score a solution.
* :func:`build_milp` is digest 002 §8.2 (side variable per layer, upload variable per tensor,
  closure rows, pins). Its matrix is totally unimodular (digest 002 §8.3), so
  ``solvers.exact.solve(model, relax=True)`` returns an integral optimum equal to the MILP's.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from splitopt.errors import InfeasibleSolution, SolverFailed
from splitopt.families import Algorithm, AlgoResult, Family
from splitopt.instances.split import MODES, SplitInstance

BREAKDOWN_KEYS = ("device_compute", "server_compute", "activations", "gradients", "parameters", "input")


# ---------------------------------------------------------------------- evaluator
def check_feasible(instance: SplitInstance, mask: np.ndarray) -> None:
    """Raise :class:`InfeasibleSolution` if ``mask`` violates a pin or sends data server -> device."""
    c = instance.costs
    g = instance.graph
    names = g.names
    bad = np.flatnonzero(c.force_dev & ~mask)
    if bad.size:
        v = names[bad[0]]
        why = "pinned to the device" if v in instance.pin_device else "an input layer (input_policy 'pin')"
        raise InfeasibleSolution(f"layer {v!r} is {why} but assigned to the server")
    bad = np.flatnonzero(c.force_srv & mask)
    if bad.size:
        raise InfeasibleSolution(f"layer {names[bad[0]]!r} is pinned to the server but assigned to the device")
    for v in np.flatnonzero(mask):
        for u in g._pred[v]:
            if not mask[u]:
                raise InfeasibleSolution(
                    f"edge {names[u]!r} -> {names[v]!r}: {names[u]!r} runs on the server but feeds "
                    f"{names[v]!r} on the device (data may only flow device -> server)")


def breakdown_of_mask(instance: SplitInstance, mask: np.ndarray) -> dict[str, float]:
    """Cost breakdown of a device mask, without feasibility checks."""
    c = instance.costs
    on_srv = ~mask
    cut_bytes = []
    for p, cons, _w, b in c.tensors:
        if mask[p] and any(on_srv[j] for j in cons):
            cut_bytes.append(b)
    a = math.fsum(cut_bytes)
    inp = c.input_weight if (c.input_weight and any(on_srv[i] for i in c.input_layers)) else 0.0
    return {
        "device_compute": math.fsum(c.dev_compute[mask]),
        "server_compute": math.fsum(c.srv[on_srv]),
        "activations": a * c.act_factor,
        "gradients": a * c.grad_factor,
        "parameters": math.fsum(c.dev_params[mask]),
        "input": inp,
    }


def evaluate(instance: SplitInstance, assignment: Iterable[str]) -> tuple[float, dict[str, float]]:
    """Objective and breakdown of a split given as the device-side layer names.

    Breakdown keys: ``device_compute`` (N sum xi_D), ``server_compute`` (N sum xi_S),
    ``activations`` (N a / R_D per cut tensor), ``gradients`` (N a / R_S per cut tensor, training
    only), ``parameters`` (k (1/R_D + 1/R_S) per device layer, training only: seed 000 Eqs. 3 and 6)
    and ``input`` (raw-input upload under ``input_policy="upload"``). The objective is their sum.

    Raises :class:`~splitopt.errors.InstanceError` for unknown layer names and
    :class:`~splitopt.errors.InfeasibleSolution` for a violated pin or a server -> device edge
    (the message names the edge).
    """
    mask = instance.mask_of(assignment)
    check_feasible(instance, mask)
    br = breakdown_of_mask(instance, mask)
    return math.fsum(br.values()), br


def relaxed_cost(instance: SplitInstance, assignment) -> float:
    """The cost of *any* device set, feasible or not (pins and closure ignored).

    ``assignment`` is an iterable of names or a boolean mask. This is what a min-cut graph without
    closure arcs minimises (digest 000 §3.6; digest 002 §2.3); server -> device flows cost nothing.
    """
    if isinstance(assignment, np.ndarray) and assignment.dtype == bool:
        mask = assignment
    else:
        mask = instance.mask_of(assignment)
    return math.fsum(breakdown_of_mask(instance, mask).values())


# ---------------------------------------------------------------------- MILP
def build_milp(instance: SplitInstance, *, closure: bool = True, pins: bool = True):
    """Digest 002 §8.2 per-tensor MILP, generalised to training costs (digest 000 §2.4).

    Variables: ``x[v]`` = 1 iff layer ``v`` runs on the server; ``y[t]`` = 1 iff tensor ``t`` is sent
    (``t`` indexes :attr:`DNNGraph.tensors`); ``y_in`` = 1 iff the raw input is uploaded. Rows:
    ``upload[t,w]``: ``x[w] - x[p] - y[t] <= 0`` for each consumer ``w`` of ``t`` (p its producer);
    ``closure[u,w]``: ``x[u] - x[w] <= 0`` for each graph edge (no server -> device flow; dropped
    with ``closure=False``, the paper-literal graph of digest 002 §8.2); ``input_row[v]``:
    ``x[v] - y_in <= 0`` for each input layer; pins fix ``x``. Objective ``obj`` (minimise)::

        sum_v dev_v + (srv_v - dev_v) x_v + sum_t w_t y_t + w_in y_in

    which equals :func:`evaluate` at every feasible integral point with optimal ``y``. The matrix is
    totally unimodular (digest 002 §8.3, Ghouila-Houri), so the LP relaxation is integral.
    """
    import pyomo.environ as pyo

    c = instance.costs
    g = instance.graph
    n = len(g)
    m = pyo.ConcreteModel(name=f"split[{instance.name}]")
    m.L = pyo.RangeSet(0, n - 1)
    tensors = [t for t in c.tensors if t[2] > 0.0]
    m.T = pyo.RangeSet(0, len(tensors) - 1) if tensors else pyo.Set(initialize=[])
    m.x = pyo.Var(m.L, domain=pyo.Binary)
    m.y = pyo.Var(m.T, domain=pyo.Binary)
    use_input = c.input_weight > 0.0
    if use_input:
        m.y_in = pyo.Var(domain=pyo.Binary)
    m.upload = pyo.ConstraintList()
    for k, (p, cons, _w, _b) in enumerate(tensors):
        for w in cons:
            m.upload.add(m.x[w] - m.x[p] - m.y[k] <= 0)
    m.closure = pyo.ConstraintList()
    if closure:
        for v in range(n):
            for u in g._pred[v]:
                m.closure.add(m.x[u] - m.x[v] <= 0)
    m.input_row = pyo.ConstraintList()
    if use_input:
        for v in c.input_layers:
            m.input_row.add(m.x[v] - m.y_in <= 0)
    if pins:
        for v in np.flatnonzero(c.force_dev):
            m.x[int(v)].fix(0)
        for v in np.flatnonzero(c.force_srv):
            m.x[int(v)].fix(1)
    const = math.fsum(c.dev)
    expr = const + sum(float(c.srv[v] - c.dev[v]) * m.x[v] for v in range(n))
    expr = expr + sum(float(t[2]) * m.y[k] for k, t in enumerate(tensors))
    if use_input:
        expr = expr + float(c.input_weight) * m.y_in
    m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    m._split_layer_names = g.names
    return m


def assignment_from_model(instance: SplitInstance, model) -> list[str]:
    """Device-side names from a solved :func:`build_milp` model (``x[v] < 0.5``)."""
    import pyomo.environ as pyo

    names = instance.graph.names
    return sorted(names[v] for v in range(len(names)) if pyo.value(model.x[v]) < 0.5)


def _solve_formulation(instance: SplitInstance, *, relax: bool, solver: str = "highs",
                       time_limit: float | None = None, mip_gap: float | None = None, tee: bool = False):
    from splitopt.solvers import exact

    model = build_milp(instance)
    res = exact.solve(model, solver, time_limit=time_limit, mip_gap=mip_gap, relax=relax, tee=tee)
    if not res.has_solution:
        raise SolverFailed(f"solver: {solver} returned no solution (status {res.status})"
                           + (f": {res.message}" if res.message else ""), status=res.status)
    info = {"solver": solver, "termination": res.termination, "model_objective": res.objective,
            "solver_seconds": res.seconds}
    if relax:
        import pyomo.environ as pyo

        frac = max((min(pyo.value(model.x[v]), 1 - pyo.value(model.x[v])) for v in model.L), default=0.0)
        info["max_fractionality"] = float(frac)
    return AlgoResult(assignment_from_model(instance, model), status=res.status, bound=res.bound, info=info)


def solve_milp(instance: SplitInstance, solver: str = "highs", time_limit: float | None = None,
               mip_gap: float | None = None, tee: bool = False) -> AlgoResult:
    """Solve :func:`build_milp` with an exact solver (default HiGHS)."""
    return _solve_formulation(instance, relax=False, solver=solver, time_limit=time_limit, mip_gap=mip_gap,
                              tee=tee)


def solve_lp(instance: SplitInstance, solver: str = "highs", time_limit: float | None = None,
             tee: bool = False) -> AlgoResult:
    """Solve the LP relaxation of :func:`build_milp` (integral by total unimodularity, digest 002
    §8.3); ``info["max_fractionality"]`` reports how far the LP point is from integral."""
    return _solve_formulation(instance, relax=True, solver=solver, time_limit=time_limit, tee=tee)


# ---------------------------------------------------------------------- registry helpers
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
    lines.append(f"device ({len(dev)} layers): {', '.join(dev) if dev else '(none)'}")
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


def generate(seed: int, kind: str | None = "layered_dag", n: int = 12, mode: str | None = "training",
             iterations: int = 10, device_flops: float | None = 1e11, server_flops: float | None = 1e13,
             up_mbps: float | None = 50.0, down_mbps: float | None = 100.0, graph=None,
             **params) -> SplitInstance:
    """A seeded random instance on a two-tier platform.

    Without ``graph``: a graph from :func:`splitopt.instances.generate.generate` (``kind``; ``n`` is
    passed as the size parameter the generator expects). With ``graph`` (zoo or PipeDream): that
    graph, with measured seconds when every layer has them (device 2-50x slower than the profiled
    machine, drawn from the seed), FLOP at the given rates otherwise. ``up_mbps=None`` picks the
    uplink at which the server-only split costs 1-3x the device-only split (downlink 1-4x the uplink;
    a log-uniform draw in 1..1000 Mbit/s when no such rate exists), so optima are often interior; ``device_flops=None`` draws the device
    in 1e9..3e11 FLOP/s and ``server_flops=None`` a server 2-300x faster, ``mode=None`` picks training or
    inference, ``kind=None`` the graph family and ``costs=None`` the cost distribution from the seed, so a set of seeds covers every graph
    family and moves the optimal cut around.
    """
    from splitopt.instances import generate as gen
    from splitopt.instances.platform import mbps

    import inspect

    rng = np.random.default_rng(seed)
    if kind is None:
        kind = gen.KINDS[seed % len(gen.KINDS)]
    balance = up_mbps is None
    if up_mbps is None:
        up_mbps = float(np.round(10 ** rng.uniform(0, 3), 6))
        down_mbps = float(np.round(up_mbps * rng.uniform(1, 4), 6))
    if mode is None:
        mode = MODES[seed % 2]
    if device_flops is None:
        device_flops = float(np.round(10 ** rng.uniform(9, 11.5), 6))
    if server_flops is None:
        server_flops = float(np.round(device_flops * 10 ** rng.uniform(0.3, 2.5), 6))
    if graph is None:
        if params.get("costs", "uniform") is None:
            params["costs"] = gen.COSTS[(seed // len(gen.KINDS)) % len(gen.COSTS)]
        fn = getattr(gen, kind, None)
        sig = inspect.signature(fn) if fn is not None else None
        if sig is not None and "blocks" in sig.parameters and "n" not in sig.parameters:
            params.setdefault("blocks", max(1, n // 4))
        else:
            params.setdefault("n", n)
        graph = gen.generate(kind, seed, **params)
        measured = False
    else:
        measured = all(l.fwd_seconds for l in graph.layers) and bool(
            set.intersection(*(set(l.fwd_seconds) for l in graph.layers)))
    slowdown = float(np.round(rng.uniform(2, 50), 6)) if measured else 1.0

    def build(up_bytes_per_s: float, down_bytes_per_s: float) -> SplitInstance:
        if measured:
            return SplitInstance.from_graph(graph, up_bytes_per_s=up_bytes_per_s, down_bytes_per_s=down_bytes_per_s,
                                            mode=mode, iterations=iterations, timing="measured",
                                            device_slowdown=slowdown, name=f"{graph.name}-s{seed}")
        return SplitInstance.from_graph(graph, up_bytes_per_s=up_bytes_per_s, down_bytes_per_s=down_bytes_per_s,
                                        mode=mode, iterations=iterations, device_flops=device_flops,
                                        server_flops=server_flops, timing="flops", name=f"{graph.name}-s{seed}")

    if balance:
        factor = down_mbps / up_mbps
        up_mbps = _balanced_uplink_mbps(build, factor, float(10 ** rng.uniform(0.0, 0.5))) or up_mbps
        down_mbps = float(np.round(up_mbps * factor, 6))
    return build(mbps(up_mbps), mbps(down_mbps))


def _balanced_uplink_mbps(build, down_factor: float, ratio: float) -> float | None:
    """The uplink (Mbit/s) at which server-only costs ``ratio`` times device-only, or None.

    Every cost is ``a + b / r`` in the uplink rate ``r`` when the downlink is ``down_factor * r``, so
    two evaluations of each trivial split give ``a`` and ``b`` exactly; the crossing is then closed-form.
    Random instances drawn at such rates have the optimum strictly inside far more often than at a
    rate drawn blindly (which mostly gives all-server or inputs-only optima).
    """
    from splitopt.instances.platform import mbps
    from splitopt.solvers.baselines import device_only, server_only

    coef = []
    for split in (device_only, server_only):
        c1, c2 = (evaluate(inst, split(inst))[0] for inst in (build(mbps(1.0), mbps(down_factor)),
                                                              build(mbps(2.0), mbps(2.0 * down_factor))))
        b = 2.0 * (c1 - c2)
        coef.append((c1 - b, b))
    (a_d, b_d), (a_s, b_s) = coef
    num, den = b_s - ratio * b_d, ratio * a_d - a_s
    if num <= 0 or den <= 0:
        return None
    r = num / den
    return float(np.round(r, 6)) if 1e-3 <= r <= 1e6 else None


def add_make_arguments(parser) -> None:
    """Arguments of ``splitopt make split GRAPH``."""
    parser.add_argument("--device-flops", type=float, default=None, help="device FLOP/s (analytic graphs)")
    parser.add_argument("--server-flops", type=float, default=None, help="server FLOP/s (analytic graphs)")
    parser.add_argument("--machine-class", default=None, help="machine class of measured seconds")
    parser.add_argument("--slowdown", type=float, default=1.0,
                        help="device slow-down factor applied to measured seconds")
    parser.add_argument("--speedup", type=float, default=1.0,
                        help="server speed-up factor applied to measured seconds")
    parser.add_argument("--up-mbps", type=float, required=True, help="uplink device -> server, Mbit/s")
    parser.add_argument("--down-mbps", type=float, default=None, help="downlink server -> device, Mbit/s")
    parser.add_argument("--mode", choices=("training", "inference"), default="training")
    parser.add_argument("--iterations", type=int, default=1, help="N: local iterations (training) or frames")
    parser.add_argument("--input-bytes", type=float, default=None, help="raw input size in bytes")
    parser.add_argument("--input-policy", choices=("pin", "upload"), default=None)
    parser.add_argument("--pin-device", action="append", default=[], metavar="LAYER")
    parser.add_argument("--pin-server", action="append", default=[], metavar="LAYER")


def make(graph, args) -> SplitInstance:
    """Instance from ``splitopt make split`` arguments."""
    from splitopt.instances.platform import mbps
    from splitopt.errors import check_number

    up = mbps(check_number("--up-mbps", args.up_mbps, minimum=0.0, strict=True))
    down = None if args.down_mbps is None else mbps(check_number("--down-mbps", args.down_mbps, minimum=0.0,
                                                                 strict=True))
    timing = "flops" if (args.device_flops is not None or args.server_flops is not None) else "auto"
    return SplitInstance.from_graph(graph, up_bytes_per_s=up, down_bytes_per_s=down, mode=args.mode,
                                    iterations=args.iterations, device_flops=args.device_flops,
                                    server_flops=args.server_flops, machine_class=args.machine_class,
                                    device_slowdown=args.slowdown, server_speedup=args.speedup, timing=timing,
                                    pin_device=args.pin_device, pin_server=args.pin_server,
                                    input_bytes=args.input_bytes, input_policy=args.input_policy)


# ---------------------------------------------------------------------- algorithms (lazy imports)
def _alg_mincut(instance, **kw):
    from splitopt.solvers import mincut
    return mincut.solve(instance, **kw)


def _alg_mincut_paper(instance, **kw):
    from splitopt.solvers import mincut
    return mincut.solve(instance, variant="paper", **kw)


def _alg_plain_mincut(instance, **kw):
    from splitopt.solvers import mincut
    return mincut.plain_mincut(instance, **kw)


def _alg_qdmp(instance, **kw):
    from splitopt.solvers import qdmp
    return qdmp.solve(instance, **kw)


def _alg_qdmp_paper(instance, **kw):
    from splitopt.solvers import qdmp
    return qdmp.solve(instance, variant="paper", **kw)


def _alg_chain(instance, **kw):
    from splitopt.solvers import chain
    return chain.solve(instance, **kw)


def _alg_dads(instance, **kw):
    from splitopt.solvers import dads
    return dads.solve(instance, **kw)


def _alg_blockwise(instance, **kw):
    from splitopt.solvers import blockwise
    return blockwise.solve(instance, **kw)


def _alg_blockwise_paper(instance, **kw):
    from splitopt.solvers import blockwise
    return blockwise.solve(instance, variant="paper", **kw)


def _alg_device_only(instance, **kw):
    from splitopt.solvers import baselines
    return baselines.device_only(instance, **kw)


def _alg_server_only(instance, **kw):
    from splitopt.solvers import baselines
    return baselines.server_only(instance, **kw)


def _alg_bruteforce(instance, **kw):
    from splitopt.solvers import bruteforce
    return bruteforce.solve(instance, **kw)


ALGORITHMS = {
    "mincut": Algorithm("mincut", _alg_mincut, exact=True,
                        description="one max-flow on the auxiliary-vertex graph with closure arcs and pins "
                                    "(seed 000 Alg. 2 / seed 002 Steps 1-5, corrected); certified exact"),
    "qdmp": Algorithm("qdmp", _alg_qdmp, exact=True,
                      description="QDMP (seed 002 Algs. 1-2) corrected: articulation layers (>= test), "
                                  "exact segment boundaries, a min-cut per segment"),
    "chain": Algorithm("chain", _alg_chain, exact=True,
                       description="O(L) prefix scan for chains (Neurosurgeon style); refuses non-chains"),
    "bruteforce": Algorithm("bruteforce", _alg_bruteforce, exact=True,
                            description="enumeration of predecessor-closed device sets (<= ~22 layers)"),
    "milp": Algorithm("milp", solve_milp, exact=True, formulation=True,
                      description="digest 002 §8.2 MILP through solvers.exact (default HiGHS)"),
    "lp": Algorithm("lp", solve_lp, exact=True, formulation=True,
                    description="LP relaxation of the MILP (integral: TU, digest 002 §8.3)"),
    "dads": Algorithm("dads", _alg_dads, exact=False,
                      description="one-shot networkx minimum_cut on the auxiliary-vertex graph with float "
                                  "capacities (DADS reimplementation baseline)"),
    "mincut_paper": Algorithm("mincut_paper", _alg_mincut_paper, exact=False, paper=True,
                              description="seed 000 Alg. 1-2 as printed: Eq. 9/10 weights, no closure arcs, "
                                          "no pins"),
    "plain_mincut": Algorithm("plain_mincut", _alg_plain_mincut, exact=False, paper=True,
                              description="min-cut without the auxiliary vertex (counts a fan-out tensor once "
                                          "per consumer)"),
    "qdmp_paper": Algorithm("qdmp_paper", _alg_qdmp_paper, exact=False, paper=True,
                            description="QDMP as printed: no closure arcs, bridge test '>', Alg. 2 boundaries"),
    "blockwise": Algorithm("blockwise", _alg_blockwise, exact=True,
                           description="seed 000 Alg. 3 corrected (solvers/blockwise.py): abstract a SESE block "
                                       "only if its transmit-once min cut equals its input and Assumption 1 "
                                       "holds on it, then one min cut"),
    "blockwise_paper": Algorithm("blockwise_paper", _alg_blockwise_paper, exact=False, paper=True,
                                 description="seed 000 Alg. 3 as printed: plain min cut test, one decision "
                                             "for all blocks"),
    "device_only": Algorithm("device_only", _alg_device_only, exact=False,
                             description="every layer on the device (server pins respected)"),
    "server_only": Algorithm("server_only", _alg_server_only, exact=False,
                             description="every layer on the server (device pins and their ancestors kept)"),
}

FAMILY = Family(
    name="split",
    instance_type=SplitInstance,
    evaluate=evaluate,
    algorithms=ALGORITHMS,
    default_algorithm="mincut",
    reference_algorithm="milp",
    describe=describe,
    render=render,
    sense="min",
    description="two-tier device/server split of a DNN graph (seeds 000 training, 002 inference)",
    generate=generate,
    add_make_arguments=add_make_arguments,
    make=make,
)

__all__ = ["evaluate", "relaxed_cost", "check_feasible", "breakdown_of_mask", "build_milp",
           "assignment_from_model", "solve_milp", "solve_lp", "describe", "render", "generate",
           "add_make_arguments", "make", "FAMILY", "ALGORITHMS", "BREAKDOWN_KEYS"]
