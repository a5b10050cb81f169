"""``placement="aggregate"`` (the paper's P4, per-node sums: digest 001 §2.6) for the exact search of
:mod:`.shortest_path`: a depth-first branch and bound over the paths of the layered DAG.

``T_f`` is the same sum as under ``revisit``, every aggregated stage is at least each of its items
and aggregated memory at least each block's, so the ``revisit`` value of a path is a lower bound of
its ``aggregate`` value. A partial path is bounded by its sum plus the ``revisit`` min-sum to go,
and its aggregated bottleneck so far against the ``revisit`` bottleneck-path value to go; leaves are
scored by the evaluator. Incumbent: the ``distinct`` incumbent (always ``aggregate``-feasible, same
value). The ``b`` are visited in increasing order of their ``revisit`` bound (a lower bound of the
``aggregate`` optimum at that ``b``). The deadline is checked per node (and inside the two DPs of
each ``b``); stopped, the bound of the unfinished ``b`` is their ``revisit`` bound.
"""

from __future__ import annotations

import math

from splitopt.errors import InfeasibleSolution
from splitopt.models.pipeline import Plan, evaluate_plan
from splitopt.solvers.pipeline.graph import DP, INF, Path, Stopped


def _late(dl, T) -> bool:
    from splitopt.solvers.pipeline.shortest_path import _late as late

    return late(dl, T)


def branch_and_bound(instance, T, rev, best, stats, dl, node_limit, lower, stopped):
    """Depth-first branch and bound for ``placement="aggregate"`` (module docstring), starting from
    the ``distinct`` incumbent in ``best``, over the ``b`` in increasing order of their ``revisit``
    bound ``rev[b]`` (a lower bound of the aggregate optimum at ``b``); returns ``(status, lower
    bound of unfinished work)``."""
    inc = [INF, None, None] if best[2] is None else \
        [evaluate_plan(instance, Plan(best[1], best[2].cuts, best[2].servers))[0], best[1], best[2]]
    for bb in sorted(rev, key=lambda x: rev[x]):
        lb = rev[bb]
        if lb >= inc[0]:
            break
        if stopped or (inc[2] is not None and _late(dl, T)):  # increasing order: lb covers the rest
            stopped = True
            lower = min(lower, lb)
            break
        W = T.weights(bb)
        fin = _bnb_one(instance, T, W, inc, stats, dl, node_limit)
        if not fin:
            stopped = True
            lower = min(lower, lb)
    best[:] = inc
    return ("optimal" if not stopped else "feasible"), lower


def _bnb_one(instance, T, W, inc, stats, dl, node_limit) -> bool:
    I, N = T.I, T.N
    xi_ = W.xi
    term, nxt = T.classes()
    # revisit cost-to-go from "server n starts a block at lo, class c": min-sum and min-bottleneck
    try:
        live = dl if inc[2] is not None else None
        Hs = DP(T, W.blk_a, W.tr_a, W.cl_a, deadline=live)
        Hm = DP(T, W.blk_b, W.tr_b, W.cl_b, op="max", deadline=live)
    except Stopped:
        return False
    hs, hm = Hs.U[0], Hm.U[0]  # (C, N, I+1)
    b = W.b
    agg_stage = _AggStages(instance, b)
    finished = True

    def rec(c, n, lo, cuts, servers, sa, mb):
        nonlocal finished
        stats["nodes"] += 1
        if (node_limit is not None and stats["nodes"] > node_limit) or dl.over():
            finished = False
            return
        # bound: sum so far + min-sum to go, bottleneck: aggregated so far vs bottleneck to go
        if sa + hs[c, n, lo] + xi_ * max(mb, hm[c, n, lo]) >= inc[0]:
            return
        for hi in range(I, lo, -1):
            if not finished:
                return
            if hi == I:
                if not term[c] or not math.isfinite(W.blk_a[c, n, lo, I]):
                    continue
                plan = Plan(b, tuple(cuts), tuple(servers))
                try:
                    v = evaluate_plan(instance, plan, check=True)[0]
                except InfeasibleSolution:
                    continue
                if v < inc[0]:
                    inc[:] = [v, b, Path(plan.cuts, plan.servers, 0.0, 0.0)]
                continue
            if nxt[c] < 0 or not math.isfinite(W.blk_a[c, n, lo, hi]):
                continue
            c2 = int(nxt[c])
            for n2 in range(N):
                if not math.isfinite(W.tr_a[hi, n, n2]) or not math.isfinite(hs[c2, n2, hi]):
                    continue
                srv = servers + [n2]
                m2 = agg_stage.partial(cuts + [hi], srv)
                if m2 is None:
                    continue
                rec(c2, n2, hi, cuts + [hi], srv, sa + W.blk_a[c, n, lo, hi] + W.tr_a[hi, n, n2], m2)

    C = T.C
    order = sorted(((float(W.cl_a[c, c1, n] + hs[c, n, c1]), c, c1, n) for c in range(C) for c1 in range(1, I)
                    for n in range(N) if math.isfinite(W.cl_a[c, c1, n] + hs[c, n, c1])))
    for _v, c, c1, n in order:
        if not finished:
            break
        m0 = agg_stage.partial([c1], [n])
        if m0 is None:
            continue
        rec(c, n, c1, [c1], [n], float(W.cl_a[c, c1, n]), m0)
    return finished


class _AggStages:
    """Aggregated bottleneck and memory of a partial plan (its completed blocks and transfers), by
    the evaluator's own stage items, so the bound uses exactly the evaluator's grouping."""

    def __init__(self, instance, b):
        self.inst, self.b = instance, b

    def partial(self, cuts, servers):
        from splitopt.models.pipeline import block_memory, client_times, server_times, transfer_times

        inst, b = self.inst, self.b
        ct = client_times(inst, b, cuts[0], servers[0])
        if ct is None:
            return None
        Fc, Bc, relay = ct
        res = inst.bottleneck == "resource"
        groups: dict = {}
        mem: dict = {}

        def add(k, v):
            groups[k] = groups.get(k, 0.0) + v

        for (x, y), smp in relay.items():
            cf = smp * inst.act_bytes[cuts[0] - 1] / inst.rates[x][y]
            cb = smp * inst.grad_bytes[cuts[0] - 1] / inst.rates[y][x]
            if res:
                add(("L", min(x, y), max(x, y)), cf + cb)
            else:
                add(("LF", x, y), cf)
                add(("LB", y, x), cb)
        top = max(f + g for f, g in zip(Fc, Bc)) if res else max(max(Fc), max(Bc))
        # completed blocks: all but the last server (its block end is not chosen yet)
        for j in range(len(servers) - 1):
            s, lo, hi = servers[j], cuts[j], cuts[j + 1]
            F, B = server_times(inst, b, s, lo, hi)
            if res:
                add(("G", s), F + B)
            else:
                add(("F", s), F)
                add(("B", s), B)
            if inst.memory == "paper":  # resident memory needs the final count: checked at the leaf
                mem[s] = mem.get(s, 0.0) + block_memory(inst, b, lo, hi, j + 1, len(servers) + 1)
            hops = transfer_times(inst, b, inst.server_node(s), inst.server_node(servers[j + 1]), hi)
            if hops is None:
                return None
            for (x, y), cf, cb in hops:
                if res:
                    add(("L", min(x, y), max(x, y)), cf + cb)
                else:
                    add(("LF", x, y), cf)
                    add(("LB", y, x), cb)
        for s, u in mem.items():
            cap = inst.server_memory_bytes[s]
            if cap is not None and u > cap * (1 + 1e-9):
                return None
        return max([top, *groups.values()])


__all__ = ["branch_and_bound"]
