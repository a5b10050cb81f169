"""The algorithms of seed 001 as printed (Wei et al., arXiv:2505.04368, Sections V-C to V-E,
Appendices A-B; digest ``papers/001-pipelined-split-learning.md`` §3-§4), kept beside the
corrected ones so that anyone can see where and how often they fail.

**Algorithm 1** (:func:`algorithm1`, ``variant="paper"``), bottleneck-aware shortest path for a
fixed ``b``, on the paper's graph (Eqs. 20-22, digest §3.2): a vertex is (submodel ``k``, node,
layer interval), an edge joins consecutive submodels on different nodes, with weight ``c(e)`` =
the tail's FP+BP compute plus the FP+BP transfer to the head (for ``k = 1``: the largest client
FP stage plus the largest client BP stage, uploads included); arcs into the sink cost 0, and only
submodel-``K`` vertices reach it. As printed:

1. edges sorted in **descending** order of ``c(e)``;
2. a lower bound ``l_b`` of the min-sum part from the RLT LP of Appendix B (vertex variables
   ``mu``, edge variables ``zeta`` with the marginal equalities C17+/C18+, index-garbled in the
   text and read as in digest §3.6), solved with HiGHS (:class:`~splitopt.solvers.exact.HighsMatrix`;
   the paper used Gurobi);
3. for each edge ``e``: skip it if ``l_b + xi c(e) > L*`` (line 6, ``continue``); else the shortest
   path through ``e`` in the subgraph of edges no heavier than ``e`` (not yet removed), a
   topological DP in place of the heap Dijkstra (same shortest path on a DAG), ``L^h = path sum +
   xi c(e)``; keep the best; remove ``e``. Edges with the same tail vertex, head node and cut have
   the same weight and are processed together (a valid order among ties).

It keeps the paper's three defects (digest §7.3 #3): the **sum** ``c(e)`` stands for the
bottleneck, the last submodel's compute is on no edge, and exactly ``K`` non-empty submodels are
forced. ``K`` is not given in the paper; default ``max_submodels`` or ``min(I, N + 1)``. Memory
is per submodel (a vertex whose block does not fit is removed), as in the graph. The returned
plan is scored by the evaluator, which is how its suboptimality shows; its own value ``L*`` is
reported in ``info["own_value"]``. With ``b`` not fixed it runs for every allowed ``b`` and keeps
the best own value: the paper's "optimal" reference of Fig. 7 (exhaustive over ``b``, Algorithm 1
for each, digest §5.3).

**Theorem 1** (:func:`theorem1_b`, Eq. 18, Appendix A): with ``(x, y, T_1)`` fixed,
``b~_r = sqrt(B T_1 / alpha_r)`` per regime, rounded to the better of floor and ceiling by
``T_f(b) + xi(b) T_1``, set to 1 below 1 and clipped to ``b_v`` (the largest ``b`` that fits in
memory with ``T_i(b) <= T_1``, Eq. 24). Corrections: the regimes are tried as candidates and the
best kept (they are conditioned on ``b`` itself in Eq. 18, digest §7.1 #12), the client threshold
is compared with the client load, ``b_v`` is the exact largest feasible ``b`` (the floor reading;
Eq. 24 prints ceilings, digest §7.2 #11), ``alpha_r`` is the slope of ``T_f`` in regime ``r``
with ``b_m = b / M`` (Eq. 28, digest §4.2).

**BCD** (:func:`bcd`, Algorithm 2): ``b^0 = 20``; repeat: ``(x, y, T_1)`` = the MSP at
``b^(t-1)`` (``msp="exact"``: the corrected exact search, default, so that only the ``b`` step is
the paper's; ``msp="paper"``: Algorithm 1 as printed), then ``b^t`` from Theorem 1 with ``T_1``
frozen; stop when the round latency changes by less than ``theta`` (0.01 s, Table II) or after
``max_iter`` rounds. The frozen ``T_1`` makes ``b`` unable to leave ``b^0`` (digest §4.3).
``b_step="exact"`` replaces the ``b`` step by the exact 1-D minimisation of the true ``L`` over
every allowed ``b`` and stops when ``L`` no longer decreases (monotone descent, finite).
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import (
    Plan,
    evaluate_plan,
    make_assignment,
    transfer_times,
    xi,
)
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline.paper_graph import INF, PaperGraph, _stopped, rlt_bound


def _as_deadline(deadline) -> Deadline | None:
    """``deadline`` as a :class:`Deadline`; a number is an end time on ``time.perf_counter()``'s
    clock (the form ``benchmarks/pipeline.py`` passes)."""
    if deadline is None or not isinstance(deadline, (int, float)):
        return deadline
    import time

    dl = Deadline(None)
    dl.end = float(deadline)
    dl.limit = round(max(dl.end - time.perf_counter(), 0.0), 3)
    return dl


def _paper_K(instance: PipelineInstance, K) -> int:
    if K is None:
        K = instance.max_submodels or min(instance.n_layers, instance.n_servers + 1)
    K = int(K)
    if not 2 <= K <= instance.n_layers:
        raise InstanceError("K", f"must be in 2..{instance.n_layers} (submodels, client included), got {K}")
    return K


def algorithm1_fixed_b(instance: PipelineInstance, b: int, K: int, *, deadline: Deadline | None = None,
                       stats=None):
    """Algorithm 1 as printed for one ``b``: ``(own value L*, plan or None)`` (``None``: no path
    exists). ``deadline`` is checked while the graph and the LP of line 3 are built, by HiGHS in
    that LP, and per edge class; once it has passed and a path is held, the best path so far is
    returned; before any path, the time-out of :func:`_stopped` is raised (a
    :class:`~splitopt.errors.SolverFailed` with status ``"time_limit"``: the graph, the LP and the
    first paths of a 60-layer model take minutes)."""
    deadline = _as_deadline(deadline)
    G = PaperGraph(instance, b, K, deadline=deadline)
    x = G.xi
    classes = G.edge_classes()
    classes.sort(key=lambda t: -t[0])  # line 2: descending
    lb = rlt_bound(G, deadline)  # line 3
    if stats is not None:
        stats["lp"] = stats.get("lp", 0) + 1
    best = (INF, None)
    allow = {1: np.isfinite(G.cw)}
    allow.update({k: np.isfinite(w) for k, w in G.sw.items()})
    for w, k, idx in classes:
        if deadline is not None and deadline.over():
            if best[1] is None:
                raise _stopped(deadline, b, "in the edge loop")
            break
        if lb + x * w > best[0]:  # line 6
            continue
        # line 5: the subgraph of edges no heavier than e (e kept, removed edges gone)
        sub = {1: allow[1] & (G.cw <= w)}
        sub.update({kk: allow[kk] & (G.sw[kk] <= w) for kk in G.sw})
        cw, sw = G._masked(sub)
        f, d = G.forward(cw, sw), G.backward(cw, sw)
        if stats is not None:
            stats["paths"] = stats.get("paths", 0) + 1
        if k == 1:
            c1, n2 = idx
            val = w + d[2][n2, c1, :].min()
        else:
            n, lo, hi, n2 = idx
            val = f[k][n, lo, hi] + w + d[k + 1][n2, hi, :].min()
        if math.isfinite(val) and val + x * w < best[0]:  # lines 10-13
            best = (val + x * w, (k, idx, sub))
        allow[k][idx] = False  # line 15
    if best[1] is None:
        return INF, None
    k, idx, sub = best[1]
    return best[0], _recover(G, k, idx, sub)


def _recover(G: PaperGraph, k, idx, sub) -> Plan:
    cw, sw = G._masked(sub)
    f, d = G.forward(cw, sw), G.backward(cw, sw)
    I = G.I
    # forward part: from the tail back to the source
    if k == 1:
        c1, n2 = idx
        cuts, servers = [c1], []
        nxt = (n2, c1)
    else:
        n, lo, hi, n2 = idx
        chain = [(n, lo, hi)]
        kk = k
        while kk > 2:
            cn, clo, chi = chain[0]
            cand = f[kk - 1][:, :, clo] + sw[kk - 1][:, :, clo, cn]
            pn, plo = np.unravel_index(int(np.argmin(cand)), cand.shape)
            chain.insert(0, (int(pn), int(plo), clo))
            kk -= 1
        cuts = [chain[0][1]] + [c[2] for c in chain]
        servers = [c[0] for c in chain]
        nxt = (n2, hi)
        k = k  # position of the tail
    # backward part: from the head to the sink
    kk = k + 1 if k >= 2 else 2
    n, lo = nxt
    while True:
        hi = int(np.argmin(d[kk][n, lo, :]))
        servers.append(n)
        if hi == I:
            break
        cuts.append(hi)
        cand = sw[kk][n, lo, hi, :] + d[kk + 1][:, hi, :].min(axis=1)
        n, lo = int(np.argmin(cand)), hi
        kk += 1
    return Plan(G.b, tuple(cuts[:len(servers)]), tuple(servers))


def algorithm1(instance: PipelineInstance, *, b: int | None = None, K: int | None = None,
               time_limit: float | None = None) -> AlgoResult:
    """Algorithm 1 as printed (module docstring); over every allowed ``b`` unless ``b`` is given.
    ``time_limit``: checked once per ``b`` and inside each ``b`` (graph build, the LP of line 3,
    each edge class; :func:`algorithm1_fixed_b`); once it has passed and a path is held, the best
    own value so far is returned with status ``"time_limit"`` (``info``: ``b_done`` of
    ``b_total``); before any path, a time-out (:class:`~splitopt.errors.SolverFailed` with status
    ``"time_limit"``) naming the step it stopped."""
    K = _paper_K(instance, K)
    bs = instance.allowed_b() if b is None else (int(b),)
    dl = Deadline(time_limit)
    stats: dict = {}
    best = (INF, None)
    done = 0
    for bb in bs:
        if dl.over():
            if best[1] is None:
                raise dl.no_answer(f" (Algorithm 1 as printed: {done} of {len(bs)} micro-batch sizes done, "
                                   "no path held)")
            break
        try:
            val, plan = algorithm1_fixed_b(instance, bb, K, deadline=dl, stats=stats)
        except SolverFailed as exc:
            if exc.status != "time_limit" or best[1] is None:
                raise
            break  # stopped inside this b: the best of the b done
        done += 1
        if plan is not None and val < best[0]:
            best = (val, plan)
    if best[1] is None:
        raise InstanceError("instance", f"Algorithm 1 (K = {K}) found no path: exactly {K} submodels do not fit "
                                        "(memory, topology)")
    p = best[1]
    return AlgoResult(make_assignment(instance, p.b, p.cuts, p.servers), status="time_limit" if dl.hit else "ok",
                      bound=None, info={"own_value": best[0], "K": K, "b_done": done, "b_total": len(bs), **stats})


# ---------------------------------------------------------------------- Theorem 1 and BCD
def _feasible(instance, plan: Plan) -> bool:
    try:
        evaluate_plan(instance, plan, check=True)
    except InfeasibleSolution:
        return False
    return True


def _alphas(instance: PipelineInstance, plan: Plan) -> tuple[float, float]:
    """Slopes of ``T_f`` in ``b`` with ``b_m = b / M`` (Eq. 28 and Appendix A): regime 1 (BP
    below both thresholds: constant) and regime 2 (above both: BP linear)."""
    inst = instance
    M = inst.n_clients
    blocks = plan.blocks(inst.n_layers)
    srv_f = srv_b = link = 0.0
    for j, ((lo, hi), s) in enumerate(zip(blocks[1:], plan.servers)):
        f = inst.server_flops[s]
        srv_f += inst.block_sum("fwd_flop", lo, hi) / f
        srv_b += inst.block_sum("bwd_flop", lo, hi) / f
        if j + 1 < len(plan.servers):
            hops = transfer_times(inst, 1, inst.server_node(s), inst.server_node(plan.servers[j + 1]), hi)
            link += sum(cf + cb for _h, cf, cb in hops or ())
    c1 = plan.cuts[0]
    t = inst.server_node(plan.servers[0])
    up, down, cbw = [], [], []
    for m in range(M):
        route = inst.route(m, t)
        if route is None:
            continue
        x = route[0][1]
        fm = inst.client_flops[m]
        up.append((inst.block_sum("fwd_flop", 0, c1) / fm + inst.act_bytes[c1 - 1] / inst.rates[m][x]) / M)
        down.append(inst.grad_bytes[c1 - 1] / inst.rates[x][m] / M)
        cbw.append(inst.block_sum("bwd_flop", 0, c1) / fm / M)
    a1 = srv_f + link + max(up, default=0.0) + max(down, default=0.0)
    a2 = srv_f + srv_b + link + max(up, default=0.0) + max((d + c for d, c in zip(down, cbw)), default=0.0)
    return a1, a2


def theorem1_b(instance: PipelineInstance, plan: Plan, T1: float, deadline: Deadline | None = None) -> int | None:
    """Theorem 1's micro-batch size for ``plan`` with the bottleneck ``T1`` frozen (module
    docstring); ``plan.b`` is only used as the fallback when no ``b`` satisfies the constraints.
    ``None`` when ``deadline`` passed during the search for ``b_v`` (one evaluation per ``b``)."""
    B = instance.batch
    allowed = instance.allowed_b()

    def at(b):
        return Plan(b, plan.cuts, plan.servers)

    # b_v: the largest allowed b that fits in memory with T_i(b) <= T_1 (Eq. 24, floor reading)
    bv = None
    for b in sorted(allowed, reverse=True):
        if deadline is not None and deadline.over():
            return None
        p = at(b)
        if _feasible(instance, p) and evaluate_plan(instance, p)[1]["T_i"] <= T1 * (1 + 1e-12):
            bv = b
            break
    if bv is None:
        return plan.b

    def z(b):  # the P3 objective T_f(b) + xi(b) T_1
        return evaluate_plan(instance, at(b))[1]["T_f"] + xi(B, b) * T1

    def nearest_allowed(b):
        return min((a for a in allowed if a <= bv), key=lambda a: (abs(a - b), a))

    th = max(instance.bwd_threshold_server, instance.bwd_threshold_client * instance.n_clients)
    a1, a2 = _alphas(instance, plan)
    cands = []
    for alpha, lo_r, hi_r in ((a1, 1, min(th, bv)), (a2, min(th, bv), bv)):
        if alpha <= 0:
            bt = hi_r
        else:
            bt = math.sqrt(B * T1 / alpha)  # Eqs. 27, 32
        pair = {max(1, math.floor(bt)), max(1, math.ceil(bt))}
        br = min(pair, key=lambda b: (z(min(b, bv)), b))
        if br <= 1:
            bs = 1
        elif br <= min(bv, B):
            bs = br
        else:
            bs = min(bv, B)
        bs = min(max(bs, lo_r), hi_r)
        cands.append(nearest_allowed(bs))
    return min(cands, key=lambda b: (z(b), b))


def _exact_fixed_b(instance, b, time_limit=None) -> tuple[Plan, str]:
    """The exact plan at ``b`` and the search's status (``"time_limit"``: best found in time)."""
    from splitopt.models.pipeline import parse_assignment
    from splitopt.solvers.pipeline.shortest_path import solve

    r = solve(instance, b=b, time_limit=time_limit)
    return parse_assignment(instance, r.assignment), r.status


def bcd(instance: PipelineInstance, *, b_step: str = "paper", msp: str = "exact", b0: int = 20,
        theta: float = 0.01, max_iter: int = 50, K: int | None = None,
        time_limit: float | None = None) -> AlgoResult:
    """Algorithm 2 (BCD); ``b_step="paper"`` (Theorem 1, frozen ``T_1``) or ``"exact"`` (1-D
    minimisation of the true ``L``); ``msp="exact"`` or ``"paper"`` (Algorithm 1 as printed).

    ``time_limit``: checked once per round and inside each step (per ``b`` of the ``b`` step; for
    Algorithm 1, in its graph build, its LP and per edge class; the exact MSP step gets the time
    left). Once it has passed, the round under way ends with what its steps found (a ``b`` step cut
    short keeps the round's plan or the best ``b`` scanned; an Algorithm 1 step stopped before any
    path ends the rounds) and the best plan of the rounds done is returned with status
    ``"time_limit"`` (the last one for ``b_step="exact"``, whose rounds only descend). Algorithm 1
    stopped in the first round, with no plan at all: its time-out
    (:class:`~splitopt.errors.SolverFailed` with status ``"time_limit"``)."""
    if b_step not in ("paper", "exact"):
        raise InstanceError("b_step", f"must be paper or exact, got {b_step!r}")
    if msp not in ("paper", "exact"):
        raise InstanceError("msp", f"must be paper or exact, got {msp!r}")
    dl = Deadline(time_limit)
    allowed = instance.allowed_b()
    b = min(allowed, key=lambda a: (abs(a - b0), a))  # line 1 (b^0 = 20, Table II)
    Kp = _paper_K(instance, K) if msp == "paper" else None

    def step_xy(bb):
        if msp == "exact":
            return _exact_fixed_b(instance, bb, dl.remaining())
        _v, p = algorithm1_fixed_b(instance, bb, Kp, deadline=dl)
        if p is None:
            raise InstanceError("instance", f"BCD: Algorithm 1 found no path at b = {bb}")
        return p, "ok"

    history = []
    prev_L = INF
    plan = None
    best_plan = (INF, None)  # the best (L, plan) of the rounds done
    stopped = False
    for it in range(max_iter):
        if plan is not None and dl.over():
            stopped = True
            break
        try:
            p, st = step_xy(b)  # line 5
        except SolverFailed as exc:  # Algorithm 1 stopped before any path at this b
            if exc.status != "time_limit" or plan is None:
                raise
            stopped = True
            break
        stopped = st == "time_limit"
        T1 = evaluate_plan(instance, p)[1]["T_i"]
        if b_step == "paper":
            b_new = theorem1_b(instance, p, T1, deadline=dl)  # line 6
            if b_new is None:
                stopped, b_new = True, p.b
        else:
            best = None
            for bb in allowed:
                if best is not None and dl.over():
                    stopped = True
                    break
                q = Plan(bb, p.cuts, p.servers)
                if not _feasible(instance, q):
                    continue
                v = evaluate_plan(instance, q)[0]
                if best is None or v < best[0]:
                    best = (v, bb)
            b_new = best[1]
        q = Plan(b_new, p.cuts, p.servers)
        if not _feasible(instance, q):
            q = p
        L = evaluate_plan(instance, q)[0]
        history.append((int(q.b), L))
        if b_step == "exact" and plan is not None and L >= prev_L:
            break  # monotone descent: no further decrease
        plan, b = q, q.b
        if L < best_plan[0]:
            best_plan = (L, q)
        if stopped or (b_step == "paper" and abs(L - prev_L) < theta):  # line 2
            break
        prev_L = L
    stopped = stopped or dl.hit
    if stopped:
        plan = best_plan[1]
    return AlgoResult(make_assignment(instance, plan.b, plan.cuts, plan.servers),
                      status="time_limit" if stopped else "ok", bound=None,
                      info={"iterations": len(history), "b_history": [h[0] for h in history],
                            "L_history": [h[1] for h in history], "b_step": b_step, "msp": msp})


def theorem1(instance: PipelineInstance, *, b0: int = 20, time_limit: float | None = None) -> AlgoResult:
    """One BCD round: the exact plan at ``b^0`` and Theorem 1's ``b`` for it (``T_1`` frozen).
    ``time_limit`` covers both steps; cut short, the answer is the plan at ``b^0`` (or the best the
    exact step found in time) with status ``"time_limit"``."""
    dl = Deadline(time_limit)
    allowed = instance.allowed_b()
    b = min(allowed, key=lambda a: (abs(a - b0), a))
    p, st = _exact_fixed_b(instance, b, dl.remaining())
    T1 = evaluate_plan(instance, p)[1]["T_i"]
    bn = theorem1_b(instance, p, T1, deadline=dl)
    q = p if bn is None else Plan(bn, p.cuts, p.servers)
    if not _feasible(instance, q):
        q = p
    stopped = st == "time_limit" or bn is None
    return AlgoResult(make_assignment(instance, q.b, q.cuts, q.servers), status="time_limit" if stopped else "ok",
                      bound=None, info={"b0": b, "b": q.b, "T1": T1})


__all__ = ["algorithm1", "algorithm1_fixed_b", "rlt_bound", "theorem1_b", "theorem1", "bcd", "PaperGraph"]
