"""Exact joint optimum of a ``pipeline`` instance: the corrected bottleneck-aware shortest path
(seed 001, Algorithm 1 corrected as in digest §3.4-§3.5), made exact for ``distinct`` by a
decremental state-space relaxation and for ``aggregate`` by a branch and bound, and run jointly
over every micro-batch size ``b``.

**Fixed b (digest §3.4, Minoux 1989).** On the DAG of :mod:`.graph`, ``L = sum a + xi max beta``
over the arcs of a path, and ``OPT = min over theta of SP(theta) + xi theta`` where
``SP(theta)`` is the shortest path (additive weights) over the arcs with ``beta <= theta``. Two
exact orders are implemented (``order``):

* ``"ascending"`` (digest §3.5 as written): thresholds = the distinct ``beta`` values in
  ascending order, starting at the smallest one that admits a path (a bottleneck DP), each
  threshold one topological DP, early stop as soon as ``LB + xi theta >= best`` with ``LB`` the
  unconstrained min-sum (a DAG shortest path; it replaces the paper's RLT LP bound, digest
  §3.6). Every later threshold is larger, so the stop is valid (the paper's descending order
  does not allow it: digest §7.2 #8).
* ``"descending"`` (default; same optimum, fewer DPs): start with every arc; a DP returns a path
  ``P`` of sum ``SP`` and bottleneck ``m``; every path with bottleneck in ``[m, cap)`` has sum
  ``>= SP`` and so value ``>= SP + xi m`` = the value of ``P``, which is recorded; every path
  with bottleneck below ``m`` has sum ``>= SP``, so only bottlenecks below
  ``(best - SP) / xi`` can improve. The next cap is the smaller of the two; stop when no path
  is left. Proof of exactness: the invariant "every path with bottleneck ``>= cap`` is worth at
  least ``best``" holds initially (``cap = inf``) and after each step by the two facts above.

Both are exact for ``placement="revisit"`` (the path-graph semantics: every stage time and every
memory use belongs to one arc) and ``O(|thresholds| (V + A))``.

**distinct** (each server at most once: an elementary-path constraint the DAG cannot express,
digest §7.3 #1). Decremental state-space relaxation (Righini and Salani 2008): solve with a set
``C`` of *critical* servers whose reuse the DP forbids (its state carries the subset of ``C``
already used; ``C`` empty is the ``revisit`` relaxation). The optimum over ``C`` is a lower
bound for ``distinct``; if its path uses no server twice it is optimal, otherwise the servers it
repeats join ``C`` and the search repeats. Elementary paths met on the way are incumbents. It
ends after at most ``N`` rounds; ``max_critical`` caps ``|C|`` (the state space is ``2^|C|``):
beyond it the answer is the best elementary path with status ``feasible`` and a proven bound.

**aggregate** (the paper's P4: per-node sums, C8/C9/C11/C13/C15, not arc-local: digest §2.6):
``T_f`` is the same sum as under ``revisit``, every aggregated stage is at least each of its
items and aggregated memory at least each block's, so the ``revisit`` value of a path is a lower
bound of its ``aggregate`` value. :func:`solve` runs a depth-first branch and bound over the
paths, bounding a partial path by its sum plus the ``revisit`` min-sum to go, and its aggregated
bottleneck so far against the ``revisit`` bottleneck-path value to go; leaves are scored by the
evaluator. Incumbent: the ``distinct`` optimum (always ``aggregate``-feasible).

**Joint over b (digest §8.5 (i)).** Every stage time and memory use is non-decreasing in ``b``
and in each client's load, for a fixed number ``q = ceil(B / b)`` of micro-batches (the
``resident`` memory depends on ``q`` too), and ``xi = q - 1``. Hence, among the allowed ``b``
with the same ``q``, a ``b`` whose client loads are all at least those of a smaller allowed ``b``
is dominated (same plan, same ``xi``, no larger stage or memory): :func:`candidate_bs` keeps the
others (one per ``q`` with the ``balanced`` split: 45 for ``B = 512``; a few per ``q`` with the
paper's Eq. 1 split, whose last client's load is not monotone). Work is reused across ``b``: the
per-sample arc coefficients are built once (:class:`~.graph.Tables`), every candidate gets the
lower bound ``min-sum + xi * min-bottleneck`` (two DPs), candidates are searched in increasing
bound order with one global incumbent, and the loop stops at the first bound not below it.
``tests/solvers/pipeline`` checks the reduction against enumerating every ``b``.

**Time limit** (:class:`~splitopt.solvers.deadline.Deadline`, checked once per ``b`` while
scoring and while searching, per decremental round and per branch-and-bound node). Stopped with
an incumbent, the answer has status ``"time_limit"`` and the bound ``min(incumbent, smallest
bound of the work left undone)``: the bound of the first candidate not searched (candidates are
searched in increasing bound order, so it covers every later one and, by the dominance above,
every ``b`` that is no candidate), the relaxed value of an unfinished decremental round, or the
candidate bound of an unfinished branch and bound. If the deadline passes while the candidates
are still being scored, the ``b`` left unscored have no bound, and neither has the answer
(``info["b_unscored"]``). Before the first incumbent the search goes on (one ``b`` is a few
DPs); the aggregate branch and bound, whose single ``b`` can take long, stops with a time-out.
"""

from __future__ import annotations

import math

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import Plan, evaluate_plan, make_assignment
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline.graph import DP, INF, Path, Stopped, Tables, Weights

ORDERS = ("descending", "ascending")


def candidate_bs(instance: PipelineInstance, b_values=None) -> list[int]:
    """The allowed ``b`` that are not dominated (see the module docstring)."""
    bs = sorted(instance.allowed_b() if b_values is None else b_values)
    B = instance.batch
    kept: dict[int, list[tuple[int, tuple]]] = {}
    out = []
    for b in bs:
        q = -(-B // b)
        loads = instance.local_batches(b)
        group = kept.setdefault(q, [])
        if any(all(x <= y for x, y in zip(lo, loads)) for _b, lo in group):
            continue
        group.append((b, loads))
        out.append(b)
    return out


def _dp(T: Tables, W: Weights, below: float = INF, critical=(), deadline=None) -> DP:
    blk, tr, cl = W.masked(below)
    return DP(T, blk, tr, cl, critical=critical, deadline=deadline)


def bounds(T: Tables, W: Weights, deadline=None) -> tuple[float, float]:
    """``(min-sum, min-bottleneck)`` over every path (the ``revisit`` relaxation)."""
    s = DP(T, W.blk_a, W.tr_a, W.cl_a, deadline=deadline).value
    m = DP(T, W.blk_b, W.tr_b, W.cl_b, op="max", deadline=deadline).value
    return s, m


def threshold_search(T: Tables, W: Weights, best: float = INF, *, critical=(), order: str = "descending",
                     stats: dict | None = None, on_path=None, deadline=None,
                     floor: tuple[float, float] = (-INF, -INF)) -> tuple[float, Path | None, float]:
    """``min over paths of sum a + xi max beta`` if below ``best`` (else ``(best, None, ...)``), over
    the paths that reuse no server of ``critical``. ``on_path(path)`` sees every path found.

    Returns ``(value, path, rest)``: ``rest`` is ``inf`` when the search finished, else (the
    ``deadline`` passed, :class:`~.graph.Stopped`) a lower bound of every path it had not yet
    excluded: the last min-sum over the arcs left plus ``xi`` times the min-bottleneck (descending),
    or the min-sum plus ``xi`` times the next threshold (ascending); ``floor`` = the unconstrained
    ``(min-sum, min-bottleneck)`` of this ``b`` stands in for a DP not yet run."""
    stats = stats if stats is not None else {}
    found = None
    x = W.xi
    s0, m0 = floor
    if order == "descending":
        cap, last = INF, s0
        while True:
            try:
                dp = _dp(T, W, cap, critical, deadline)
            except Stopped:
                return best, found, last + x * m0
            stats["dps"] = stats.get("dps", 0) + 1
            P = dp.path(W)
            if P is None:
                break
            last = dp.value
            if on_path is not None:
                on_path(P)
            val = P.sum_a + x * P.max_b
            if val < best:
                best, found = val, P
            if x == 0:
                break
            cap = min(P.max_b, (best - dp.value) / x)
            if not cap > 0:
                break
        return best, found, INF
    if order != "ascending":
        raise InstanceError("order", f"must be one of {', '.join(ORDERS)}, got {order!r}")
    try:
        lb = _dp(T, W, INF, critical, deadline)
    except Stopped:
        return best, None, s0 + x * m0
    stats["dps"] = stats.get("dps", 0) + 1
    if not math.isfinite(lb.value):
        return best, None, INF
    if x == 0:  # only the min-sum counts: the unconstrained shortest path is optimal
        P = lb.path(W)
        if on_path is not None:
            on_path(P)
        val = P.sum_a
        return (val, P, INF) if val < best else (best, None, INF)
    thetas = np.unique(np.concatenate([a[np.isfinite(a)] for a in (W.blk_b, W.tr_b, W.cl_b)]))
    try:
        lo = DP(T, W.blk_b, W.tr_b, W.cl_b, op="max", critical=critical, deadline=deadline).value
    except Stopped:
        return best, None, lb.value + x * m0
    stats["dps"] += 1
    for th in thetas[np.searchsorted(thetas, lo):]:
        if lb.value + x * th >= best:
            break
        try:
            dp = _dp(T, W, np.nextafter(th, INF), critical, deadline)
        except Stopped:
            return best, found, lb.value + x * th
        stats["dps"] += 1
        P = dp.path(W)
        if P is None:
            continue
        if on_path is not None:
            on_path(P)
        val = P.sum_a + x * P.max_b
        if val < best:
            best, found = val, P
    return best, found, INF


#: largest DP table (states x classes x servers x layers) the distinct search builds; the critical
#: set is capped below it (each extra critical server doubles the states)
MAX_DP_CELLS = 2.5e7


def solve(instance: PipelineInstance, *, order: str = "descending", b: int | None = None,
          max_critical: int = 12, time_limit: float | None = None, node_limit: int | None = None,
          restrict=None) -> AlgoResult:
    """Exact joint optimum over cuts, placement and ``b`` (every allowed ``b``, or only ``b``).

    Returns an :class:`~splitopt.families.AlgoResult` whose ``bound`` is a proven lower bound
    (equal to the value when ``status == "optimal"``); ``info``: ``b_candidates``,
    ``b_searched``, ``dps`` (topological DPs run), ``critical`` (largest critical set under
    ``distinct``), ``nodes`` (branch-and-bound nodes under ``aggregate``), ``revisit_bound`` (the
    ``revisit`` optimum over every ``b``, a lower bound for ``distinct`` and ``aggregate``, when
    the time allowed it). ``restrict(weights)`` may set arcs to ``inf`` in place (the baselines fix
    cuts or a server order that way); the answer is then the optimum over the remaining arcs.
    ``time_limit``: see the module docstring (status ``"time_limit"``; ``"feasible"`` when only
    ``max_critical``, the table size cap or ``node_limit`` cut the search)."""
    if order not in ORDERS:
        raise InstanceError("order", f"must be one of {', '.join(ORDERS)}, got {order!r}")
    dl = Deadline(time_limit)
    T = Tables(instance)
    if restrict is not None:
        _weights = T.weights

        def weights(bb, _w=_weights):
            W = _w(bb)
            restrict(W)
            return W

        T.weights = weights
    bs = candidate_bs(instance, None if b is None else (_check_b(instance, b),))
    stats: dict = {"dps": 0, "critical": 0, "nodes": 0}
    placement = instance.placement
    best = [INF, None, None]  # value, b, path (an elementary path unless revisit)

    def live():  # the deadline applies once an answer exists
        return dl if best[2] is not None else None

    scored = []
    unscored = 0  # candidates left without a lower bound when the deadline passed
    for i, bb in enumerate(bs):
        if scored and dl.over():
            unscored = len(bs) - i
            break
        W = T.weights(bb)
        s, m = bounds(T, W)  # two DPs without critical servers: short, the clock is read per b
        stats["dps"] += 2
        if math.isfinite(s) and math.isfinite(m):
            scored.append((s + W.xi * m, bb, s, m))
            _single_block(W, best)
    if not scored:
        if unscored:
            raise dl.no_answer()
        raise InstanceError("instance", "no feasible assignment (memory, topology or micro-batch sizes)")
    scored.sort()
    floors = {bb: (s, m) for _lb, bb, s, m in scored}
    # phase 1: the revisit optimum over every b (the answer under revisit, a bound otherwise)
    rev = {bb: lb for lb, bb, _s, _m in scored}  # per-b lower bound of the revisit optimum
    rev_path: dict = {}
    rev_best = [INF]
    searched = 0
    stopped = False

    def seen(P: Path, W):
        if placement == "revisit" or not P.repeated():
            v = P.sum_a + W.xi * P.max_b
            if v < best[0]:
                best[:] = [v, W.b, P]

    for lb, bb, s, m in scored:
        if lb >= rev_best[0] or (placement == "revisit" and lb >= best[0]):
            break
        if best[2] is not None and dl.over():
            stopped = True
            break
        searched += 1
        W = T.weights(bb)
        cut = min(rev_best[0], best[0]) if placement == "revisit" else rev_best[0]
        val, P, rest = threshold_search(T, W, cut, order=order, stats=stats, deadline=live(), floor=(s, m),
                                        on_path=lambda P, W=W: seen(P, W))
        if P is not None:
            rev_best[0] = val
            rev[bb] = val
            rev_path[bb] = P
        else:
            rev[bb] = max(rev[bb], min(cut, rest))
        if rest < INF:
            stopped = True
            break
    lower = -INF if unscored else INF  # smallest lower bound of a b left unfinished
    status = "optimal"
    info: dict = {}
    if placement == "revisit":
        if stopped:
            lower = min(lower, min(rev[bb] for bb in rev if rev[bb] < best[0]) if rev else INF)
    else:
        if not stopped and not unscored:
            info["revisit_bound"] = min(rev.values())
        if placement == "distinct":
            sub = dl
        else:  # aggregate: the distinct search only seeds the branch and bound with an incumbent
            sub = Deadline(None if time_limit is None else max(dl.remaining() * 0.3, 1e-3))
        if not stopped:
            dist, stopped_d = _distinct_all(T, rev, rev_path, floors, best, order, max_critical, stats, sub)
            if placement == "distinct":
                stopped = stopped_d
                lower = min(lower, min(dist.values(), default=INF))
            elif stopped_d and dl.over():
                stopped = True
        if placement == "distinct" and stopped:
            lower = min(lower, min((rev[bb] for bb in rev if rev[bb] < best[0]), default=INF))
        if placement == "aggregate":
            status, lower = _aggregate(instance, T, rev, best, stats, dl, node_limit, lower, stopped)
    if best[2] is None:
        if lower < INF:  # work left undone: infeasibility is not proven
            if dl.hit:
                raise dl.no_answer()
            raise InstanceError("node_limit" if placement == "aggregate" else "max_critical",
                                "no feasible assignment found within the search limits")
        raise InstanceError("instance", "no feasible assignment (memory, topology or micro-batch sizes)")
    val, bb, P = best
    bound = min(val, lower)
    if bound < val and status == "optimal":
        status = "feasible"
    if status == "feasible" and dl.hit:  # work was left undone when the deadline passed
        status = "time_limit"
    info.update({"b_candidates": len(bs), "b_searched": searched, "dps": stats["dps"], "order": order})
    if unscored:
        info["b_unscored"] = unscored
    if placement != "revisit":
        info["critical"] = stats["critical"]
    if placement == "aggregate":
        info["nodes"] = stats["nodes"]
    return AlgoResult(make_assignment(instance, bb, P.cuts, P.servers), status=status,
                      bound=bound if math.isfinite(bound) else None, info=info)


def _single_block(W: Weights, best) -> None:
    """Incumbent: the best plan with one server block (elementary under every placement)."""
    a = W.cl_a[0, :, :] + W.blk_a[0, :, :, -1].T  # [cut, server]
    if not np.isfinite(a).any():
        return
    v = a + W.xi * np.maximum(W.cl_b[0, :, :], W.blk_b[0, :, :, -1].T) if W.xi else a
    c1, n = np.unravel_index(int(np.argmin(v)), v.shape)
    if math.isfinite(v[c1, n]) and v[c1, n] < best[0]:
        best[:] = [float(v[c1, n]), W.b, Path((int(c1),), (int(n),), float(a[c1, n]),
                                               float(max(W.cl_b[0, c1, n], W.blk_b[0, n, c1, -1])))]


def _check_b(instance: PipelineInstance, b) -> int:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 1 <= int(b) <= instance.batch:
        raise InstanceError("b", f"must be an integer in 1..{instance.batch} (the batch B), got {b!r}")
    if int(b) not in instance.allowed_b():
        raise InstanceError("b", f"{b} is not an allowed micro-batch size (micro_batches: "
                                 f"{list(instance.micro_batches or ())})"[:300])
    return int(b)


def _distinct_all(T, rev, rev_path, floors, best, order, max_critical, stats, dl):
    """Decremental state-space relaxation (module docstring) over every ``b`` in increasing order
    of its revisit bound, starting from the servers its revisit path repeats. Updates ``best`` in
    place; returns ``({b: lower bound of b's distinct optimum} for every b left unfinished,
    stopped by the deadline)``."""
    cap = max(0, int(math.floor(math.log2(max(MAX_DP_CELLS / (T.C * T.N * (T.I + 1)), 1.0)))))
    limit = min(max_critical, cap)
    left: dict = {}
    done: set = set()

    def unfinished():
        return {x: left.get(x, rev[x]) for x in rev if x not in done and left.get(x, rev[x]) < best[0]}

    for bb in sorted(rev, key=lambda x: rev[x]):
        lbb = rev[bb]
        if lbb >= best[0]:
            done.add(bb)
            continue
        if best[2] is not None and dl.over():
            return unfinished(), True
        W = T.weights(bb)
        P0 = rev_path.get(bb)
        crit = tuple(sorted(P0.repeated())) if P0 is not None else ()

        def seen(P: Path, W=W):
            if not P.repeated():
                v = P.sum_a + W.xi * P.max_b
                if v < best[0]:
                    best[:] = [v, W.b, P]

        while True:
            if len(crit) > limit:
                left[bb] = lbb  # capped: b keeps its bound
                break
            stats["critical"] = max(stats["critical"], len(crit))
            val, P, rest = threshold_search(T, W, best[0], critical=crit, order=order, stats=stats, on_path=seen,
                                            deadline=dl if best[2] is not None else None, floor=floors[bb])
            if rest < INF:  # stopped inside the round
                left[bb] = max(lbb, min(rest, val))
                return unfinished(), True
            if P is None or not P.repeated():  # nothing beats the incumbent, or seen() recorded it
                done.add(bb)
                break
            lbb = max(lbb, val)
            crit = tuple(sorted(set(crit) | P.repeated()))
            if best[2] is not None and dl.over():
                left[bb] = lbb
                return unfinished(), True
    return unfinished(), False


# ---------------------------------------------------------------------- aggregate: branch and bound
def _aggregate(instance, T, rev, best, stats, dl, node_limit, lower, stopped):
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
        if stopped or (inc[2] is not None and dl.over()):  # increasing order: lb covers the rest
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


__all__ = ["solve", "threshold_search", "candidate_bs", "bounds", "ORDERS"]
