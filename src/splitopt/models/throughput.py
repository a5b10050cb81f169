"""The mathematics of the ``throughput`` family (seed 004): evaluator, closed forms and the three
exact formulations.

Digest ``papers/004-throughput-bnb.md`` (cited as "digest §x"); instance semantics in
:mod:`splitopt.instances.throughput`.

* :func:`evaluate` is the single source of truth: the period ``T = max(node times, link times)``
  of paper §IV (throughput ``C = 1/T``), with node time ``sum_i c_i x_ai / eta_a`` (eq. 3, the sum
  over all of a node's threads: the paper's prose calls it the "highest thread latency", digest §1.4)
  and link times from eq. (5) under the instance's ``link_model`` and ``transfer`` semantics
  (``transfer="once"`` corrects eq. (5), which charges a tensor once per consuming edge, digest §5.1
  item 2). It rejects assignments that break the split cap, pins, memory, contiguity or use a
  missing link.
* :func:`build_model` writes the problem for an exact solver (digest §6): ``"minlp"`` (§6.2, the
  bilinear link terms ``x_ai x_bj`` as they are, for SCIP), ``"mccormick"`` (§6.3) and ``"rlt"``
  (§6.4, the transportation equalities per DNN edge; the split cap through the same products).
  Times are measured in units of the best single-node period, so every row has O(1) coefficients.
  Identical nodes get symmetry-breaking rows (§6.5). With ``transfer="once"`` a tensor's load on link
  ``(a, b)`` is ``w_ab >= x_ap x_bc`` for each consumer ``c`` (once, whatever the number of
  consumers on ``b``).
* :func:`acceleration_threshold` (eq. 10) and :func:`throughput_upper_bound` (eq. 12 as corrected
  in digest §5.2 item 5: ``min(N, S + 1)`` parts, and the unpartitioned throughput kept).
"""

from __future__ import annotations

import logging
import math
from typing import Any, Sequence

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.instances.throughput import ThroughputInstance

FORMULATIONS = ("minlp", "mccormick", "rlt")


# ---------------------------------------------------------------------- evaluator
def node_indices(instance: ThroughputInstance, assignment: Any) -> list[int]:
    """Assignment (node names or indices, one per layer) -> node indices; raises InstanceError."""
    if isinstance(assignment, (str, bytes)) or not isinstance(assignment, (Sequence, np.ndarray)):
        raise InstanceError("assignment", f"must be a list of node names, one per layer, got {assignment!r}"[:200])
    if len(assignment) != instance.n_layers:
        raise InstanceError("assignment", f"has {len(assignment)} entries for {instance.n_layers} layers")
    idx = {nm: a for a, nm in enumerate(instance.nodes)}
    out = []
    for i, v in enumerate(assignment):
        if isinstance(v, str):
            if v not in idx:
                raise InstanceError(f"assignment[{i}]", f"unknown node {v!r}")
            out.append(idx[v])
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= int(v) < instance.n_nodes:
            out.append(int(v))
        else:
            raise InstanceError(f"assignment[{i}]", f"must be a node name, got {v!r}")
    return out


def link_bytes(instance: ThroughputInstance, p: Sequence[int]) -> np.ndarray:
    """Bytes per frame on each ordered node pair under the instance's ``transfer`` semantics."""
    N = instance.n_nodes
    B = np.zeros((N, N))
    once = instance.transfer == "once"
    for prod, cons, size in instance.tensors:
        a = p[prod]
        dests = [p[c] for c in cons if p[c] != a]
        for b in (set(dests) if once else dests):
            B[a, b] += size
    return B


def link_times(instance: ThroughputInstance, B: np.ndarray) -> dict[tuple[int, int] | str, float]:
    """Busy time per link resource: ordered pairs (full-duplex), unordered pairs (half-duplex, key
    ``(a, b)`` with ``a < b``) or the one medium (``"medium"``)."""
    theta = instance.inverse_rates()
    N = instance.n_nodes
    out: dict = {}
    for a in range(N):
        for b in range(N):
            if a != b and B[a, b] > 0 and math.isinf(theta[a, b]):
                raise InfeasibleSolution(f"layers send {B[a, b]:g} bytes from node {instance.nodes[a]!r} to "
                                         f"{instance.nodes[b]!r}, which have no link")
    if instance.link_model == "full-duplex":
        for a in range(N):
            for b in range(N):
                if a != b and B[a, b] > 0:
                    out[(a, b)] = B[a, b] * theta[a, b]
    elif instance.link_model == "half-duplex":
        for a in range(N):
            for b in range(a + 1, N):
                t = (B[a, b] * theta[a, b] if B[a, b] > 0 else 0.0) + (B[b, a] * theta[b, a] if B[b, a] > 0 else 0.0)
                if t > 0:
                    out[(a, b)] = t
    else:
        out["medium"] = math.fsum(B[a, b] * theta[a, b] for a in range(N) for b in range(N) if a != b and B[a, b] > 0)
    return out


def check_constraints(instance: ThroughputInstance, p: Sequence[int]) -> None:
    """Raise :class:`InfeasibleSolution` for a broken cap, pin, memory limit or contiguity."""
    splits = sum(1 for i in range(len(p) - 1) if p[i] != p[i + 1])
    if instance.max_splits is not None and splits > instance.max_splits:
        raise InfeasibleSolution(f"{splits} split points in the layer order, more than max_splits = "
                                 f"{instance.max_splits}")
    for i, a in instance.pin_index.items():
        if p[i] != a:
            raise InfeasibleSolution(f"layer {instance.layers[i]!r} is pinned to {instance.nodes[a]!r} but placed "
                                     f"on {instance.nodes[p[i]]!r}")
    if instance.node_memory_bytes is not None and instance.mem_bytes is not None:
        use = np.zeros(instance.n_nodes)
        for i, a in enumerate(p):
            use[a] += instance.mem_bytes[i]
        for a, cap in enumerate(instance.node_memory_bytes):
            if cap is not None and use[a] > cap * (1 + 1e-12):
                raise InfeasibleSolution(f"node {instance.nodes[a]!r} holds {use[a]:g} bytes, more than its memory "
                                         f"{cap:g}")
    if instance.contiguous:
        seen, last = set(), None
        for i, a in enumerate(p):
            if a != last and a in seen:
                raise InfeasibleSolution(f"node {instance.nodes[a]!r} runs two separate runs of layers (contiguous "
                                         f"placement required; again at layer {instance.layers[i]!r})")
            seen.add(a)
            last = a


def evaluate(instance: ThroughputInstance, assignment: Any) -> tuple[float, dict[str, float]]:
    """Period (seconds per inference, minimised) and breakdown of an assignment (node per layer).

    Breakdown: ``period``, ``throughput`` (inferences/s), ``compute_max`` and ``link_max`` (the
    slowest node and link resource), ``splits`` (split points in the layer order)."""
    p = node_indices(instance, assignment)
    check_constraints(instance, p)
    loads = np.zeros(instance.n_nodes)
    for i, a in enumerate(p):
        loads[a] += instance.flop[i]
    compute = max(float(loads[a] / instance.node_flops[a]) for a in range(instance.n_nodes))
    links = link_times(instance, link_bytes(instance, p))
    lmax = max(links.values(), default=0.0)
    period = max(compute, lmax)
    return period, {"period": period, "throughput": (1.0 / period) if period > 0 else math.inf,
                    "compute_max": compute, "link_max": lmax,
                    "splits": float(sum(1 for i in range(len(p) - 1) if p[i] != p[i + 1]))}


def single_node_periods(instance: ThroughputInstance) -> list[float]:
    """Period of putting every layer on node ``a`` (no transfers), for each ``a``."""
    W = math.fsum(instance.flop)
    return [W / f for f in instance.node_flops]


# ---------------------------------------------------------------------- closed forms (homogeneous)
def acceleration_threshold(instance: ThroughputInstance) -> float:
    """Eq. (10): partitioning can beat one node only if ``theta / eta > s_min / sum c`` (bytes/FLOP);
    returns ``s_min / sum c`` (``s_min`` the smallest tensor, as printed; for a DAG the smallest *cut*
    is the right quantity, digest §5.2 item 11)."""
    sizes = [b for _p, _c, b in instance.tensors if b > 0]
    W = math.fsum(instance.flop)
    return (min(sizes) / W) if sizes and W > 0 else math.inf


def throughput_upper_bound(instance: ThroughputInstance, corrected: bool = True) -> float:
    """Eq. (12), homogeneous: ``C < min(eta min(N, S) / sum c, theta / s_min)`` as printed; with
    ``corrected`` (digest §5.2 item 5) ``C* <= max(eta / sum c, min(eta min(N, S + 1) / sum c,
    theta / s_min))``. ``S`` = ``max_splits`` (no cap: ``L - 1``)."""
    eta = max(instance.node_flops)
    theta = min(v for a, row in enumerate(instance.rates) for b, v in enumerate(row) if a != b) \
        if instance.n_nodes > 1 else math.inf
    W = math.fsum(instance.flop)
    sizes = [b for _p, _c, b in instance.tensors if b > 0]
    s_min = min(sizes) if sizes else 0.0
    S = instance.max_splits if instance.max_splits is not None else instance.n_layers - 1
    comm = theta / s_min if s_min > 0 else math.inf
    if not corrected:
        return min(eta * min(instance.n_nodes, S) / W, comm)
    return max(eta / W, min(eta * min(instance.n_nodes, S + 1) / W, comm))


# ---------------------------------------------------------------------- formulations
class BuildStopped(Exception):
    """:func:`build_model` saw its ``deadline`` pass (between two ``define_*`` steps, or every 256
    rows inside the large ones)."""


def _check(m) -> None:
    """Every 256 calls, raise :class:`BuildStopped` if the model's build deadline has passed."""
    dl = getattr(m, "_deadline", None)
    if dl is None:
        return
    m._ticks = getattr(m, "_ticks", 0) + 1
    if not m._ticks & 255 and dl.over():
        raise BuildStopped()


def _checked(rule):
    """A Pyomo constraint rule that first reads the build deadline (:func:`_check`)."""
    def wrapped(m, *idx):
        _check(m)
        return rule(m, *idx)
    return wrapped


def build_model(instance: ThroughputInstance, formulation: str = "rlt", *, symmetry: bool = True,
                incumbent: float | None = None, deadline=None):
    """Pyomo model of the instance (see the module docstring). ``incumbent`` (a period in seconds)
    adds the incumbent fixings of digest §6.5 (no layer on a node, no tensor on a link, that alone
    takes at least that long). The objective ``T`` is in units of :func:`time_unit`. ``deadline``
    (a :class:`~splitopt.solvers.deadline.Deadline`) is read between the ``define_*`` steps; when
    it has passed :class:`BuildStopped` is raised (a ResNet-152 model on 10 nodes takes seconds)."""
    import pyomo.environ as pyo

    if formulation not in FORMULATIONS:
        raise InstanceError("formulation", f"must be one of {', '.join(FORMULATIONS)}, got {formulation!r}")
    m = pyo.ConcreteModel(name=f"throughput[{instance.name}]")
    m._unit = time_unit(instance)
    m._deadline = deadline
    steps = [lambda: define_assignment(m, instance), lambda: define_compute_rows(m, instance),
             lambda: define_transfers(m, instance, formulation), lambda: define_link_rows(m, instance)]
    if instance.max_splits is not None:
        steps.append(lambda: define_split_cap(m, instance, formulation))
    if instance.contiguous:
        steps.append(lambda: define_contiguity(m, instance))
    steps += [lambda: define_memory_rows(m, instance), lambda: define_pins(m, instance)]
    if symmetry:
        steps.append(lambda: define_symmetry(m, instance))
    if incumbent is not None:
        steps.append(lambda: define_incumbent_fixings(m, instance, incumbent))
    # a rule that raises BuildStopped makes Pyomo log an ERROR: hush its logger during a timed build
    log = logging.getLogger("pyomo.core")
    level = log.level
    if deadline is not None:
        log.setLevel(logging.CRITICAL)
    try:
        for step in steps:
            if deadline is not None and deadline.over():
                raise BuildStopped(formulation)
            step()
    finally:
        log.setLevel(level)
    m.obj = pyo.Objective(expr=m.T, sense=pyo.minimize)
    return m


def time_unit(instance: ThroughputInstance) -> float:
    """The time unit of the models: the best single-node period (or 1 s if it is 0)."""
    t = min(single_node_periods(instance))
    return t if t > 0 and math.isfinite(t) else 1.0


def define_assignment(m, instance: ThroughputInstance) -> None:
    """``x[a, i]`` binary, one node per layer (eq. 6); ``T >= 0`` the period."""
    import pyomo.environ as pyo

    m.A = pyo.RangeSet(0, instance.n_nodes - 1)
    m.I = pyo.RangeSet(0, instance.n_layers - 1)
    m.x = pyo.Var(m.A, m.I, domain=pyo.Binary)
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    m.assign = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[a, i] for a in m.A) == 1)


def define_compute_rows(m, instance: ThroughputInstance) -> None:
    """``T >= sum_i c_i x_ai / eta_a`` per node (eq. 3), in model time units."""
    import pyomo.environ as pyo

    u = m._unit
    m.compute = pyo.Constraint(m.A, rule=lambda m, a: m.T >= sum(
        (instance.flop[i] / instance.node_flops[a] / u) * m.x[a, i] for i in m.I if instance.flop[i] > 0))


def _pairs(instance: ThroughputInstance) -> list[tuple[int, int]]:
    return [(a, b) for a in range(instance.n_nodes) for b in range(instance.n_nodes) if a != b]


def define_transfers(m, instance: ThroughputInstance, formulation: str) -> None:
    """Link-load variables. ``per_edge``: ``y[e, a, b]`` = ``x_a,src(e) x_b,dst(e)``; ``once``:
    ``w[t, a, b] >= x_a,p(t) x_b,c`` for every consumer ``c`` of tensor ``t``.

    MINLP: the products are written as products (bilinear rows for SCIP). McCormick: ``y >= x + x -
    1`` (the lower envelope suffices: ``y`` only appears in ``T >=`` rows, digest §6.3). RLT: one
    coupling ``y[e, a, b]`` per edge for all ``a, b`` with ``sum_b y = x_a,src`` and ``sum_a y =
    x_b,dst`` (digest §6.4), which implies every McCormick row."""
    import pyomo.environ as pyo

    edges = instance.edges()
    pairs = _pairs(instance)
    m.E = pyo.RangeSet(0, len(edges) - 1) if edges else pyo.Set(initialize=[])
    m._edges = edges
    if formulation == "rlt":
        m.y = pyo.Var(m.E, m.A, m.A, domain=pyo.NonNegativeReals)
        m.rlt_src = pyo.Constraint(m.E, m.A, rule=_checked(lambda m, e, a: sum(m.y[e, a, b] for b in m.A)
                                                            == m.x[a, edges[e][0]]))
        m.rlt_dst = pyo.Constraint(m.E, m.A, rule=_checked(lambda m, e, b: sum(m.y[e, a, b] for a in m.A)
                                                            == m.x[b, edges[e][1]]))
        prod = {(e, a, b): m.y[e, a, b] for e in range(len(edges)) for a, b in pairs}
    else:
        m.y = pyo.Var(m.E, pairs, domain=pyo.NonNegativeReals, bounds=(0, 1))
        if formulation == "mccormick":
            m.mccormick = pyo.Constraint(m.E, pairs, rule=_checked(lambda m, e, a, b:
                                         m.y[e, a, b] >= m.x[a, edges[e][0]] + m.x[b, edges[e][1]] - 1))
        else:  # minlp: y >= x x, bilinear
            m.product = pyo.Constraint(m.E, pairs, rule=_checked(lambda m, e, a, b:
                                       m.y[e, a, b] >= m.x[a, edges[e][0]] * m.x[b, edges[e][1]]))
        prod = {(e, a, b): m.y[e, a, b] for e in range(len(edges)) for a, b in pairs}
    if instance.transfer == "per_edge":
        m._load = {(a, b): [(edges[e][2], prod[e, a, b]) for e in range(len(edges))] for a, b in pairs}
        return
    # once: one w per (tensor, ordered pair), above the products of each of its consumers
    tens = list(instance.tensors)
    edge_of = {}
    for e, (p, c, _s) in enumerate(edges):
        edge_of[(p, c)] = e
    m.TT = pyo.RangeSet(0, len(tens) - 1) if tens else pyo.Set(initialize=[])
    m.w = pyo.Var(m.TT, pairs, domain=pyo.NonNegativeReals, bounds=(0, 1))
    m.once = pyo.ConstraintList()
    for t, (p, cons, _s) in enumerate(tens):
        for c in cons:
            e = edge_of[(p, c)]
            for a, b in pairs:
                _check(m)
                m.once.add(m.w[t, a, b] >= prod[e, a, b])
    m._load = {(a, b): [(tens[t][2], m.w[t, a, b]) for t in range(len(tens))] for a, b in pairs}


def define_link_rows(m, instance: ThroughputInstance) -> None:
    """``T >=`` link busy time under the link model (full-duplex per ordered pair, half-duplex per
    unordered pair, one shared medium); pairs without a link carry nothing."""
    import pyomo.environ as pyo

    theta = instance.inverse_rates()
    u = m._unit
    m.links = pyo.ConstraintList()
    m.no_link = pyo.ConstraintList()

    def load(a, b):
        _check(m)
        if math.isinf(theta[a, b]):
            for _s, v in m._load[(a, b)]:
                m.no_link.add(v <= 0)
            return 0
        return sum((s * theta[a, b] / u) * v for s, v in m._load[(a, b)] if s > 0)

    pairs = _pairs(instance)
    terms = {(a, b): load(a, b) for a, b in pairs}
    if instance.link_model == "full-duplex":
        for a, b in pairs:
            if not isinstance(terms[a, b], int):
                m.links.add(m.T >= terms[a, b])
    elif instance.link_model == "half-duplex":
        for a, b in pairs:
            if a < b:
                expr = terms[a, b] + terms[b, a]
                if not isinstance(expr, int):
                    m.links.add(m.T >= expr)
    else:
        expr = sum(terms.values())
        if not isinstance(expr, int):
            m.links.add(m.T >= expr)


def define_split_cap(m, instance: ThroughputInstance, formulation: str) -> None:
    """At most ``S`` split points in the layer order (digest §6.3 / §6.4). McCormick and MINLP:
    ``sigma_i >= x_ai - x_a,i+1``. RLT: a coupling ``z[i, a, b]`` of consecutive layers and
    ``sum_i (1 - sum_a z[i, a, a]) <= S`` (tighter: the crossing mass is a total-variation distance)."""
    import pyomo.environ as pyo

    L = instance.n_layers
    if L < 2:
        return  # no split point in a one-layer order: the cap holds trivially (a Pyomo row over an
        # empty sum is a constant, which Pyomo refuses: every formulation raised on such files)
    m.G = pyo.RangeSet(0, L - 2)
    if formulation == "rlt":
        m.z = pyo.Var(m.G, m.A, m.A, domain=pyo.NonNegativeReals)
        m.z_src = pyo.Constraint(m.G, m.A, rule=_checked(lambda m, i, a: sum(m.z[i, a, b] for b in m.A) == m.x[a, i]))
        m.z_dst = pyo.Constraint(m.G, m.A, rule=_checked(lambda m, i, b: sum(m.z[i, a, b] for a in m.A)
                                                          == m.x[b, i + 1]))
        m.cap = pyo.Constraint(expr=sum(1 - sum(m.z[i, a, a] for a in m.A) for i in m.G) <= instance.max_splits)
    else:
        m.sigma = pyo.Var(m.G, bounds=(0, 1))
        m.sigma_row = pyo.Constraint(m.G, m.A, rule=lambda m, i, a: m.sigma[i] >= m.x[a, i] - m.x[a, i + 1])
        m.cap = pyo.Constraint(expr=sum(m.sigma[i] for i in m.G) <= instance.max_splits)


def define_contiguity(m, instance: ThroughputInstance) -> None:
    """One run per node: ``eps_ai >= x_ai - x_a,i-1`` (``x_a,-1 = 0``), ``sum_i eps_ai <= 1``."""
    import pyomo.environ as pyo

    m.eps = pyo.Var(m.A, m.I, bounds=(0, 1))
    m.eps_row = pyo.Constraint(m.A, m.I, rule=lambda m, a, i: m.eps[a, i] >= m.x[a, i] - (m.x[a, i - 1] if i else 0))
    m.one_run = pyo.Constraint(m.A, rule=lambda m, a: sum(m.eps[a, i] for i in m.I) <= 1)


def define_memory_rows(m, instance: ThroughputInstance) -> None:
    """``sum_i m_i x_ai <= M_a``, divided by ``M_a`` (scaled rows)."""
    import pyomo.environ as pyo

    m.memory = pyo.ConstraintList()
    if instance.node_memory_bytes is None or instance.mem_bytes is None:
        return
    for a, cap in enumerate(instance.node_memory_bytes):
        if cap is None:
            continue
        if cap <= 0:
            for i in range(instance.n_layers):
                if instance.mem_bytes[i] > 0:
                    m.x[a, i].fix(0)
            continue
        m.memory.add(sum((instance.mem_bytes[i] / cap) * m.x[a, i] for i in range(instance.n_layers)
                         if instance.mem_bytes[i] > 0) <= 1)


def define_pins(m, instance: ThroughputInstance) -> None:
    for i, a in instance.pin_index.items():
        for b in range(instance.n_nodes):
            m.x[b, i].fix(1 if b == a else 0)


def define_symmetry(m, instance: ThroughputInstance) -> None:
    """Identical nodes (same rate, memory and links; no pins) are used in label order: ``x[b, i] <=
    sum_{k < i} x[b', k]`` for ``b'`` the class member before ``b`` (digest §6.5)."""
    import pyomo.environ as pyo

    m.symmetry = pyo.ConstraintList()
    for cl in instance.identical_node_classes():
        for prev, b in zip(cl, cl[1:]):
            for i in range(instance.n_layers):
                m.symmetry.add(m.x[b, i] <= sum(m.x[prev, k] for k in range(i)))


def define_incumbent_fixings(m, instance: ThroughputInstance, incumbent: float) -> None:
    """Digest §6.5: with an incumbent period ``U``, no layer on a node where it alone takes ``>= U``,
    no edge across a link where its tensor alone takes ``>= U`` (valid for solutions better than U)."""
    import pyomo.environ as pyo

    theta = instance.inverse_rates()
    m.fix_rows = pyo.ConstraintList()
    for i in range(instance.n_layers):
        for a in range(instance.n_nodes):
            if instance.flop[i] / instance.node_flops[a] >= incumbent and not m.x[a, i].fixed:
                m.x[a, i].fix(0)
    for p, c, s in instance.edges():
        for a, b in _pairs(instance):
            if s * theta[a, b] >= incumbent:
                m.fix_rows.add(m.x[a, p] + m.x[b, c] <= 1)


def assignment_from_model(instance: ThroughputInstance, model) -> list[str]:
    """Node name per layer from a solved model (the largest ``x[a, i]``)."""
    out = []
    for i in range(instance.n_layers):
        vals = [model.x[a, i].value or 0.0 for a in range(instance.n_nodes)]
        out.append(instance.nodes[int(np.argmax(vals))])
    return out


__all__ = ["BuildStopped", "evaluate", "node_indices", "link_bytes", "link_times", "check_constraints", "single_node_periods",
           "acceleration_threshold", "throughput_upper_bound", "build_model", "time_unit", "assignment_from_model",
           "FORMULATIONS", "define_assignment", "define_compute_rows", "define_transfers", "define_link_rows",
           "define_split_cap", "define_contiguity", "define_memory_rows", "define_pins", "define_symmetry",
           "define_incumbent_fixings"]
