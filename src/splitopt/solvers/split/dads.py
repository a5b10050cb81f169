"""DADS-style baseline: one networkx ``minimum_cut`` on the auxiliary-vertex graph, float capacities.

DADS (Hu et al., INFOCOM 2019) as characterised by seed 002 (digest 002 §2.2 Steps 1-4 and §2.7):
one min cut of the latency graph with the fan-out gadget, solved in one shot. Public
reimplementations call ``networkx.minimum_cut`` with its default flow function (preflow-push) on
float capacities. This module does exactly that on the *same* graph as
:mod:`splitopt.solvers.split.mincut` (corrected weights, auxiliary vertices, closure arcs, pins, raw-input
tensor; infinite arcs carry no ``capacity`` attribute, which networkx treats as infinite), so the only
difference is the solver: floating-point max-flow picks the cut from residual capacities compared
with exact zero, and can return a partition whose capacity differs from the flow value (digest 002
§7.1 item 9: 3 of 225 instances; networkx issues #4972 and #4592). The returned split is evaluated
like any other; it is **not** certified (not exact).

Options reproduce the original DADS graph: ``closure=False`` drops the closure arcs and
``input_cost=False`` the raw-input upload (DADS lacks QDMP's vertex ``o``; Theorem 1 of seed 002).
"""

from __future__ import annotations

import networkx as nx

from splitopt.instances.split import SplitInstance
from splitopt.solvers.split.mincut import cut_problem


def build_graph(instance: SplitInstance, *, closure: bool = True, input_cost: bool = True) -> nx.DiGraph:
    prob = cut_problem(instance, closure=closure, input_cost=input_cost)
    G = nx.DiGraph()
    S, T = "s", "t"
    G.add_node(S)
    G.add_node(T)

    def add(u, v, cap=None):
        if cap is None:
            G.add_edge(u, v)  # infinite
        elif cap > 0.0:
            if G.has_edge(u, v) and "capacity" in G[u][v]:
                G[u][v]["capacity"] += cap
            elif not G.has_edge(u, v):
                G.add_edge(u, v, capacity=cap)

    for v in range(prob.n):
        G.add_node(v)
        if prob.force_dev[v]:
            add(S, v)  # infinite first: a later finite add leaves it infinite
        if prob.force_srv[v]:
            add(v, T)
        add(v, T, float(prob.dev[v]))
        add(S, v, float(prob.srv[v]))
    for k, (p, cons, w) in enumerate(prob.tensors):
        pn = S if p < 0 else p
        if len(cons) > 1:
            d = ("d", k)
            add(pn, d, float(w))
            for c in cons:
                add(d, c)
        else:
            add(pn, cons[0], float(w))
    for u, w in prob.closure:
        add(w, u)
    return G


def solve(instance: SplitInstance, *, closure: bool = True, input_cost: bool = True, flow_func=None) -> list[str]:
    """Device-side names of the source side of ``networkx.minimum_cut`` (default preflow-push)."""
    G = build_graph(instance, closure=closure, input_cost=input_cost)
    kw = {} if flow_func is None else {"flow_func": flow_func}
    _value, (src_side, _snk) = nx.minimum_cut(G, "s", "t", **kw)
    names = instance.graph.names
    return sorted(names[v] for v in src_side if isinstance(v, int))


__all__ = ["solve", "build_graph"]
