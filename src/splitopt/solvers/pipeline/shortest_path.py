"""Exact joint optimum of a ``pipeline`` instance: the corrected bottleneck-aware shortest path
(seed 001, Algorithm 1 corrected as in digest §3.4-§3.5), made exact for ``distinct`` by a
decremental state-space relaxation and for ``aggregate`` by a branch and bound, and run jointly
over every micro-batch size ``b``.

**Fixed b (digest §3.4, Minoux 1989).** On the DAG of :mod:`.graph`, ``L = sum a + xi max beta``
over the arcs of a path, and ``OPT = min over theta of SP(theta) + xi theta`` where
``SP(theta)`` is the shortest path (additive weights) over the arcs with ``beta <= theta``. Three
exact orders are implemented (``order``):

* ``"bisect"`` (default; ours): a best-first bisection over the threshold. A DP at ``theta``
  returns a path of bottleneck ``mu <= theta`` (an incumbent) and ``SP`` is constant on
  ``[mu, theta]``; a range ``(lo, hi)`` of thresholds is worth at least ``SP(hi) + xi c`` with
  ``c`` the smallest bottleneck weight above ``lo`` (``SP`` is non-increasing), so ranges that
  cannot beat the incumbent are dropped. It needs far fewer DPs than a walk over the steps of
  ``SP`` when there are many (2,000 layers: tens of DPs against hundreds).
* ``"ascending"`` (digest §3.5 as written): thresholds = the distinct ``beta`` values in
  ascending order, starting at the smallest one that admits a path (a bottleneck DP), each
  threshold one topological DP, early stop as soon as ``LB + xi theta >= best`` with ``LB`` the
  unconstrained min-sum (a DAG shortest path; it replaces the paper's RLT LP bound, digest
  §3.6). Every later threshold is larger, so the stop is valid (the paper's descending order
  does not allow it: digest §7.2 #8).
* ``"descending"`` (same optimum): start with every arc; a DP returns a path
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

**aggregate** (the paper's P4: per-node sums, not arc-local: digest §2.6): the branch and bound
of :mod:`.aggregate`, seeded with the ``distinct`` incumbent (searched for at most 30 % of the time
limit).

**Bounds for distinct and aggregate** (issue 21): every ``distinct`` or ``aggregate`` plan is a
``revisit`` path worth at least its ``revisit`` value, so the ``revisit`` optimum over every ``b``
(phase 1 of :func:`solve`, the same search as for ``revisit``) is a lower bound of both; it is
``info["revisit_bound"]`` and the floor of every bound returned. Per ``b`` the bound rises with
each finished decremental round. A plan with one server block is elementary under every placement:
it is the first incumbent (found while scoring); the second is the best plan whose servers follow
the order of their speeds (the transfer arcs against that order removed: every path is then
elementary), one threshold search at the most promising ``b``. From then on the deadline applies.

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

**Time limit** (:class:`~splitopt.solvers.deadline.Deadline`): checked once per ``b`` while
scoring, and, once an incumbent exists, inside every DP (once per layer: a DP with ``2^|C|``
states can take seconds), per decremental round and per branch-and-bound node. Stopped with an
incumbent, the answer has status ``"time_limit"`` and the bound ``min(incumbent, smallest bound of
the work left undone)``: per ``b`` the largest of its candidate bound, its ``revisit`` optimum (when
phase 1 finished it) and its last finished decremental round; an interrupted threshold search
contributes the bound of the thresholds it had not excluded. If the deadline passes while the
candidates are still being scored, the ``b`` left unscored have no bound, and neither has the
answer (``info["b_unscored"]``). The state space of the decremental relaxation is capped at
:data:`MAX_DP_CELLS` table cells (fewer critical servers when there are many layers and servers):
beyond it the ``b`` keeps its proven bound and the answer is ``feasible``.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from splitopt.errors import InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import make_assignment
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.pipeline.diagnose import infeasible
from splitopt.solvers.pipeline.graph import DP, INF, Path, Stopped, Tables, Weights

ORDERS = ("bisect", "descending", "ascending")


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
    if order == "bisect":
        return _bisect(T, W, best, critical, stats, on_path, deadline, floor)
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


def _bisect(T, W, best, critical, stats, on_path, deadline, floor):
    """``order="bisect"``: best-first bisection over the threshold (module docstring).

    A range ``(lo, hi)`` is open at both ends, ``SP(hi)`` is known and every value at or below
    ``lo`` is covered. With ``c`` the smallest bottleneck weight above ``lo``, every path in the
    range is worth at least ``SP(hi) + xi c``; a DP at ``theta`` in ``[c, hi)`` returns a path of
    bottleneck ``mu <= theta``, an incumbent, and ``SP`` is constant on ``[mu, theta]``, leaving
    ``(lo, mu)`` and ``(theta, hi)``. No candidate in ``(lo, hi)``: the range is covered."""
    x = W.xi
    s0, m0 = floor
    found = None
    cand = getattr(W, "_thresholds", None)
    if cand is None:  # the distinct bottleneck weights, once per b
        cand = W._thresholds = np.unique(np.concatenate([a[np.isfinite(a)] for a in (W.blk_b, W.tr_b, W.cl_b)]))

    def nxt(theta):
        i = int(np.searchsorted(cand, theta, side="right"))
        return float(cand[i]) if i < cand.size else INF

    def ev(theta):
        dp = _dp(T, W, np.nextafter(theta, INF) if theta < INF else INF, critical, deadline)
        stats["dps"] = stats.get("dps", 0) + 1
        P = dp.path(W)
        if P is not None and on_path is not None:
            on_path(P)
        return dp.value, P

    try:
        sp, P = ev(INF)
    except Stopped:
        return best, None, s0 + x * m0
    if P is None:
        return best, None, INF
    val = P.sum_a + x * P.max_b
    if val < best:
        best, found = val, P
    if x == 0:
        return best, found, INF
    heap: list = []

    def push(lo, hi, sph):
        c = nxt(lo)
        if c < hi and math.isfinite(sph):
            heapq.heappush(heap, (sph + x * c, lo, hi, sph, c))

    push(np.nextafter(m0, -INF) if math.isfinite(m0) else -INF, P.max_b, sp)
    while heap:
        lb, lo, hi, sph, c = heapq.heappop(heap)
        if lb >= best:
            return best, found, INF
        th = 0.5 * (c + hi)
        if not c <= th < hi:
            th = c
        try:
            spm, Pm = ev(th)
        except Stopped:
            return best, found, min(lb, *(h[0] for h in heap)) if heap else lb
        if Pm is None:  # nothing at or below th
            push(th, hi, sph)
            continue
        v = Pm.sum_a + x * Pm.max_b
        if v < best:
            best, found = v, Pm
        push(lo, Pm.max_b, spm)
        push(th, hi, sph)
    return best, found, INF


def relaxation_bound(instance: PipelineInstance, b_values, deadline=None) -> float | None:
    """A lower bound of the optimum over ``b_values`` under every placement: the smallest
    ``min-sum + xi * min-bottleneck`` of the ``revisit`` relaxation over the non-dominated ones
    (two DPs each; module docstring). ``None`` if ``deadline`` passes first (checked per ``b``);
    ``inf`` if no ``b`` has a feasible path."""
    T = Tables(instance, classes=False)  # relaxed classes: see _relaxed_tables
    out = INF
    for bb in candidate_bs(instance, b_values):
        if deadline is not None and deadline.over():
            return None
        W = T.weights(bb)
        s, m = bounds(T, W)
        if math.isfinite(s) and math.isfinite(m):
            out = min(out, s + W.xi * m)
    return out


#: largest DP table (states x classes x servers x layers) the distinct search builds; the critical
#: set is capped below it (each extra critical server doubles the states)
MAX_DP_CELLS = 2.5e7


def solve(instance: PipelineInstance, *, order: str = "bisect", b: int | None = None,
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
    _exact_weights = T.weights

    def timed_weights(bb):
        t0 = time.perf_counter()
        W = _exact_weights(bb)
        T.weights_seconds = max(getattr(T, "weights_seconds", 0.0), time.perf_counter() - t0)
        return W

    T.weights = timed_weights
    # scoring tables: without classes (the resident memory of a block at its smallest, any number
    # of blocks) every arc of T is kept, so their DPs give lower bounds, at a fraction of the cost
    Ts = Tables(instance, classes=False) if T.explicit else T
    if restrict is not None:
        for tab in {id(T): T, id(Ts): Ts}.values():
            _weights = tab.weights

            def weights(bb, _w=_weights):
                W = _w(bb)
                restrict(W)
                return W

            tab.weights = weights
    bs = candidate_bs(instance, None if b is None else (_check_b(instance, b),))
    stats: dict = {"dps": 0, "critical": 0, "nodes": 0}
    placement = instance.placement
    best = [INF, None, None]  # value, b, path (an elementary path unless revisit)

    def live():  # the deadline applies once an answer exists
        return dl if best[2] is not None else None

    scored = []
    unscored = 0  # candidates left without a lower bound when the deadline passed
    per_b = 0.0  # seconds the last b took to score: a b that cannot end in time is not started
    for i, bb in enumerate(bs):
        if scored and (dl.over() or (dl.end is not None and dl.remaining() < per_b)):
            dl.hit = True
            unscored = len(bs) - i
            break
        t0 = time.perf_counter()
        W = Ts.weights(bb)
        s, m = bounds(Ts, W)  # two DPs without critical servers: short, the clock is read per b
        stats["dps"] += 2
        if math.isfinite(s) and math.isfinite(m):
            scored.append((s + W.xi * m, bb, s, m))
            if Ts is T:
                _single_block(W, best)
        per_b = time.perf_counter() - t0
    if not scored:
        if unscored:
            raise dl.no_answer()
        raise infeasible(instance, None if b is None else bs)
    scored.sort()
    floors = {bb: (s, m) for _lb, bb, s, m in scored}
    if Ts is not T or placement != "revisit":
        W0 = T.weights(scored[0][1])
        _single_block(W0, best)
        if placement != "revisit" and (best[2] is None or dl.end is None or dl.remaining() > 2 * per_b):
            _monotone_incumbent(T, W0, best, order, stats, instance, live())
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
        if best[2] is not None and _late(dl, T):
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
            low_d = min(dist.values(), default=INF)
            if placement == "distinct":
                stopped = stopped_d
                lower = min(lower, low_d)
            elif stopped_d and dl.over():
                stopped = True
        if placement == "distinct" and stopped:
            lower = min(lower, min((rev[bb] for bb in rev if rev[bb] < best[0]), default=INF))
        if placement == "aggregate":
            from splitopt.solvers.pipeline.aggregate import branch_and_bound

            status, lower = branch_and_bound(instance, T, rev, best, stats, dl, node_limit, lower, stopped)
    if best[2] is None:
        if lower < INF:  # work left undone: infeasibility is not proven
            if dl.hit:
                raise dl.no_answer()
            raise InstanceError("node_limit" if placement == "aggregate" else "max_critical",
                                "no feasible assignment found within the search limits")
        raise infeasible(instance, None if b is None else bs)
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


def _monotone_incumbent(T: Tables, W: Weights, best, order, stats, instance, deadline) -> None:
    """Incumbent: the best plan whose servers follow a fixed order (fastest first, by
    ``server_flops``), found by the threshold search with the transfer arcs against that order
    removed: every path of that DAG is elementary, so it is feasible under every placement."""
    rank = np.argsort(np.argsort(-np.asarray(instance.server_flops, dtype=float), kind="stable"))
    back = rank[None, :] <= rank[:, None]  # [n, n']: n' not after n in the order
    tr_a = np.where(back[None], INF, W.tr_a)
    tr_b = np.where(back[None], INF, W.tr_b)
    Wm = Weights(W.b, W.xi, W.blk_a, W.blk_b, tr_a, tr_b, W.cl_a, W.cl_b)
    val, P, _rest = threshold_search(T, Wm, best[0], order=order, stats=stats, deadline=deadline)
    if P is not None and val < best[0]:
        best[:] = [val, W.b, P]


def _late(dl, T: Tables) -> bool:
    """The deadline has passed, or what is left of it is shorter than building one ``b``'s arc
    weights took (an atomic step of seconds on large instances: not started if it cannot end in
    time); the second case marks the deadline as hit."""
    if dl.over():
        return True
    if dl.end is not None and dl.remaining() < getattr(T, "weights_seconds", 0.0):
        dl.hit = True
        return True
    return False


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
        if best[2] is not None and _late(dl, T):
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


__all__ = ["solve", "threshold_search", "candidate_bs", "bounds", "relaxation_bound", "ORDERS"]
