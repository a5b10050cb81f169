"""Formulation B of the ``pipeline`` family (digest 001 §8.3): arc flow on the DAG of digest §3.5;
overview and corrections in :mod:`.pipeline_milp`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
    block_memory,
    client_memory,
    client_times,
    make_assignment,
    server_times,
    transfer_times,
    xi,
)
from splitopt.models.pipeline_milp_common import _require_paper_memory, _rows, _tick


# ---------------------------------------------------------------------- Formulation B (arc flow)
@dataclass(frozen=True)
class Arc:
    """One arc of the DAG of digest §3.5: ``tail``/``head`` vertices (``"s"``, ``"d"``,
    ``(1, "c", e)`` for the client cut ``e``, ``(k, n, e)`` for submodel ``k`` ending at layer count
    ``e`` on server ``n``); ``a`` its share of ``T_f`` (seconds), ``beta`` its largest stage,
    ``level`` the submodel it leaves."""

    tail: object
    head: object
    a: float
    beta: float
    level: int
    server: int | None  # the head's server


def dag(instance: PipelineInstance, b: int) -> list[Arc]:
    """The arcs of Formulation B for micro-batch ``b`` under per-submodel semantics (``revisit``;
    ``distinct`` needs the one-visit side rows): blocks or client cuts that break memory and
    transfers without a route are left out. Stage times come from the evaluator's building blocks
    (:func:`server_times`, :func:`client_times`, :func:`transfer_times`)."""
    _require_paper_memory(instance)
    if instance.placement == "aggregate":
        raise InstanceError("placement", "the arc-flow DAG has per-submodel semantics (revisit or distinct), "
                                         "not 'aggregate'")
    I, N = instance.n_layers, instance.n_servers
    K = min(instance.max_submodels or I, I)
    res = instance.bottleneck == "resource"
    arcs: list[Arc] = []
    fits = {}
    for n in range(N):
        cap = instance.server_memory_bytes[n]
        for lo in range(I):
            for hi in range(lo + 1, I + 1):
                use = block_memory(instance, b, lo, hi, 1, 2)  # paper memory: position-free
                fits[n, lo, hi] = cap is None or use <= cap * (1 + 1e-9)
    for e in range(1, I):
        cm = client_memory(instance, b, e, 2)
        if any(c is not None and u > c * (1 + 1e-9) for u, c in zip(cm, instance.client_memory_bytes)):
            continue
        arcs.append(Arc("s", (1, "c", e), 0.0, 0.0, 0, None))
        for n2 in range(N):
            ct = client_times(instance, b, e, n2)
            if ct is None:
                continue
            Fc, Bc, relay = ct
            relay_hops = []
            for (x, y), samples in sorted(relay.items()):
                relay_hops += [(x, y, samples)]
            hop_t = [(samples * instance.act_bytes[e - 1] / instance.rates[x][y],
                      samples * instance.grad_bytes[e - 1] / instance.rates[y][x]) for x, y, samples in relay_hops]
            for e2 in range(e + 1, I + 1):
                if not fits[n2, e, e2]:
                    continue
                _tick()
                F, B = server_times(instance, b, n2, e, e2)
                a = max(Fc) + max(Bc) + sum(cf + cb for cf, cb in hop_t) + F + B
                if res:
                    st = [max(f + g for f, g in zip(Fc, Bc)), F + B] + [cf + cb for cf, cb in hop_t]
                else:
                    st = [max(Fc), max(Bc), F, B] + [t for pair in hop_t for t in pair]
                arcs.append(Arc((1, "c", e), (2, n2, e2), a, max(st), 1, n2))
    for k in range(2, K + 1):
        for n in range(N):
            if k < K:
                for e in range(k - 1, I):
                    for n2 in range(N):
                        if n2 == n:
                            continue
                        hops = transfer_times(instance, b, instance.server_node(n), instance.server_node(n2), e)
                        if hops is None:
                            continue
                        for e2 in range(e + 1, I + 1):
                            if not fits[n2, e, e2]:
                                continue
                            _tick()
                            F, B = server_times(instance, b, n2, e, e2)
                            a = sum(cf + cb for _h, cf, cb in hops) + F + B
                            if res:
                                st = [F + B] + [cf + cb for _h, cf, cb in hops]
                            else:
                                st = [F, B] + [t for _h, cf, cb in hops for t in (cf, cb)]
                            arcs.append(Arc((k, n, e), (k + 1, n2, e2), a, max(st), k, n2))
            arcs.append(Arc((k, n, I), "d", 0.0, 0.0, k, None))
    return arcs


def build_b(instance: PipelineInstance, b: int):
    """Formulation B (digest §8.3): arc flow with bottleneck rows per DAG level; ``distinct`` adds
    ``sum of arcs into server n <= 1``."""
    import pyomo.environ as pyo

    arcs = dag(instance, b)
    co_unit = max([a.a for a in arcs] + [1e-300])
    u = co_unit if co_unit > 0 else 1.0
    # keep only arcs on some source -> sink path
    fwd, bwd = {"s"}, {"d"}
    for a in arcs:  # arcs are generated in topological order of their tails
        if a.tail in fwd:
            fwd.add(a.head)
    for a in reversed(arcs):
        if a.head in bwd:
            bwd.add(a.tail)
    arcs = [a for a in arcs if a.tail in fwd and a.head in bwd]
    if not arcs:
        raise InstanceError("instance", f"no feasible assignment at b = {b} (memory or topology)")
    m = pyo.ConcreteModel(name=f"pipeline-B[{instance.name}, b={b}]")
    A = range(len(arcs))
    m.u = pyo.Var(A, domain=pyo.Binary)
    m.T = pyo.Var(domain=pyo.NonNegativeReals)
    m.cons = _rows(pyo)
    out, inn = defaultdict(list), defaultdict(list)
    for j, a in enumerate(arcs):
        out[a.tail].append(j)
        inn[a.head].append(j)
    m.cons.add(sum(m.u[j] for j in out["s"]) == 1)
    for v in set(out) | set(inn):
        if v in ("s", "d"):
            continue
        m.cons.add(sum(m.u[j] for j in inn[v]) == sum(m.u[j] for j in out[v]))
    levels = defaultdict(list)
    for j, a in enumerate(arcs):
        if a.beta > 0:
            levels[a.level].append(j)
    for js in levels.values():
        m.cons.add(m.T >= sum(arcs[j].beta / u * m.u[j] for j in js))
    if instance.placement == "distinct":
        for n in range(instance.n_servers):
            js = [j for j, a in enumerate(arcs) if a.server == n]
            if len(js) > 1:
                m.cons.add(sum(m.u[j] for j in js) <= 1)
    m.xi = xi(instance.batch, b)
    m.obj = pyo.Objective(expr=sum(arcs[j].a / u * m.u[j] for j in A) + m.xi * m.T, sense=pyo.minimize)
    m._unit = u

    def extract():
        nxt = {arcs[j].tail: arcs[j].head for j in A if (m.u[j].value or 0) > 0.5}
        v, cuts, servers = nxt["s"], [], []
        cuts.append(v[2])
        while True:
            w = nxt[v]
            if w == "d":
                break
            if len(servers) < len(cuts):
                servers.append(w[1])
            if w[2] < instance.n_layers:
                cuts.append(w[2])
            v = w
        return make_assignment(instance, b, cuts, servers)

    m._extract = extract
    return m
