"""Brute-force oracle for the ``split`` family: enumerate every feasible device set.

Seed 000's brute-force baseline "examines all possible subsets" (Sec. VII-A); only
predecessor-closed subsets are feasible (digest 000 E8), so this module enumerates the *ideals* of
the DAG (order ideals / down-sets) that respect the pins: a layer may join the device set only when
all its producers are already in it, scanning layers in topological order. Each ideal is produced
exactly once (a chain has ``L + 1`` of them). Costs are computed directly from the cost model with
bitmasks, independently of the min-cut code and of the evaluator, so that the enumeration is an
independent oracle; the objective shown to users is the evaluator's score of the returned set
(:func:`splitopt.families.solve` does that).

``closed=False`` enumerates all subsets that respect the pins, closed or not: the optimum of
the paper graphs without closure arcs (digest 000 Check B, digest 002 §2.6), used only to
demonstrate the printed algorithms' failures.

Meant for tiny instances (default limit 22 layers).
"""

from __future__ import annotations

import math

from splitopt.errors import InstanceError
from splitopt.instances.split import SplitInstance


def _tables(instance: SplitInstance):
    c = instance.costs
    g = instance.graph
    n = len(g)
    dev = [float(x) for x in c.dev]
    srv = [float(x) for x in c.srv]
    tens = []
    for p, cons, w, _b in c.tensors:
        if w > 0.0:
            cm = 0
            for j in cons:
                cm |= 1 << j
            tens.append((1 << p, cm, w))
    inp_mask = 0
    for i in c.input_layers:
        inp_mask |= 1 << i
    pred = []
    for v in range(n):
        pm = 0
        for u in g.pred(v):
            pm |= 1 << u
        pred.append(pm)
    fd = [bool(x) for x in c.force_dev]
    fs = [bool(x) for x in c.force_srv]
    return n, dev, srv, tens, c.input_weight, inp_mask, pred, fd, fs


def _cost(mask: int, n: int, dev, srv, tens, inp_w, inp_mask) -> float:
    parts = [dev[v] if (mask >> v) & 1 else srv[v] for v in range(n)]
    full = (1 << n) - 1
    off = full & ~mask
    for pb, cm, w in tens:
        if mask & pb and cm & off:
            parts.append(w)
    if inp_w and inp_mask & off:
        parts.append(inp_w)
    return math.fsum(parts)


def enumerate_splits(instance: SplitInstance, *, closed: bool = True, max_layers: int = 22):
    """Yield ``(cost, device_mask_int)`` for every feasible device set (every subset respecting the
    pins if not ``closed``). Bit ``v`` of the mask is layer ``v`` in topological order.

    The size is checked before anything is built (issue 21: the bitmask tables of a 100,000-layer
    graph took 45 s and 2.2 GB before the refusal)."""
    if len(instance.graph) > max_layers:
        raise InstanceError("graph", f"brute force is limited to {max_layers} layers, got {len(instance.graph)}")
    n, dev, srv, tens, inp_w, inp_mask, pred, fd, fs = _tables(instance)
    if not closed:
        need = sum(1 << v for v in range(n) if fd[v])
        forbid = sum(1 << v for v in range(n) if fs[v])
        for mask in range(1 << n):
            if mask & need == need and not mask & forbid:
                yield _cost(mask, n, dev, srv, tens, inp_w, inp_mask), mask
        return
    out = []

    def rec(v: int, mask: int):
        if v == n:
            out.append(mask)
            return
        if not fd[v]:
            rec(v + 1, mask)                      # v on the server
        if not fs[v] and (pred[v] & ~mask) == 0:
            rec(v + 1, mask | (1 << v))           # v on the device (all producers are)

    rec(0, 0)
    for mask in out:
        yield _cost(mask, n, dev, srv, tens, inp_w, inp_mask), mask


def solve_detailed(instance: SplitInstance, *, closed: bool = True, max_layers: int = 22):
    """``(best_cost, device_names, all_costs_sorted)`` of the enumeration."""
    best = None
    costs = []
    for cost, mask in enumerate_splits(instance, closed=closed, max_layers=max_layers):
        costs.append(cost)
        if best is None or cost < best[0] or (cost == best[0] and bin(mask).count("1") < bin(best[1]).count("1")):
            best = (cost, mask)
    if best is None:  # pragma: no cover - validated instances always have a feasible split
        raise InstanceError("pin_server", "no feasible split")
    names = [instance.graph.layers[v].name for v in range(len(instance.graph)) if (best[1] >> v) & 1]
    return best[0], sorted(names), sorted(costs)


def solve(instance: SplitInstance, *, max_layers: int = 22) -> list[str]:
    """Device-side names of an optimal feasible split, by enumeration of closed sets."""
    return solve_detailed(instance, max_layers=max_layers)[1]


__all__ = ["enumerate_splits", "solve_detailed", "solve"]
