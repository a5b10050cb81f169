"""The certified minimum s-t cut engine behind every exact ``split`` algorithm.

A :class:`CutProblem` is a two-sided labelling problem (vertices on the device = source side or the
server = sink side) with per-vertex costs, per-tensor costs charged once (the auxiliary-vertex
gadget of seed 002 Step 4' / seed 000 Eqs. 13-15, digest 000 §3.6) or once per consumer, closure
pairs and pins. :func:`min_cut` returns the smallest optimal device set with its value and a proven
lower bound. The network *structure* (:class:`Structure`) is independent of the costs, so callers
build it once and call :func:`solve_structure` with new costs.

With ``m_v = min(dev_v, srv_v)`` the cut value of a device set ``X`` plus ``const = sum_v m_v`` is
its cost. Capacities are floats spanning many orders of magnitude, so no float max-flow is
trusted to pick the cut. Three exact paths, all returning a certificate (a lower bound ``LB`` with
``value - LB`` at rounding level) and the *smallest* optimal device set (ties towards the server,
digest 000 E9):

**A. Small networks (at most ``SMALL_VERTICES`` flow vertices): exact integer max-flow.** Every
finite double is a dyadic rational, so with ``K`` the largest binary exponent among the
denominators of ``dev``, ``srv`` and the tensor weights, ``x * 2^K`` is an exact Python integer for
all of them. The reparametrisation ``m_v = min(dev_v, srv_v)`` is done on these integers (no
rounding at all), infinite arcs get ``1 + sum of finite capacities`` (above any finite cut), and
Dinic's max-flow (:func:`exact_max_flow`) in arbitrary-precision integers gives the exact maximum
flow ``F``. By max-flow/min-cut the source side of the final residual graph is the smallest minimum
cut, and its cost is exactly ``(sum m + F) / 2^K``: the returned value and lower bound are this
number rounded once, i.e. the same double as the evaluator's correctly rounded ``fsum`` (gap 0). This is used for QDMP segments, abstracted block-wise graphs and the
block-rule cuts, where the fixed overhead of one scipy call would dominate.

**B. Larger networks: one scaled 32-bit max-flow, then an exact threshold round.**
``scipy.sparse.csgraph.maximum_flow`` accepts only 32-bit integer capacities (scipy 1.17 docs:
"an integer representing the capacity"; int64 is rejected), so:

1. ``UB`` = the real value of the better of two known feasible splits (the pinned layers and
   their ancestors; everything except the server pins and their descendants), ``LB = 0``.
2. Scaled round: ``bound = UB - LB - const`` bounds the remaining flow. Capacities ``r > bound`` are
   clamped to ``bound`` (a cut through such an arc costs more than the optimum, so the optimum is
   unchanged); scale by a power of two ``2^e`` with ``bound * 2^e <= 2^30`` and round **down**.
   Infinite arcs get ``2^31 - 1``, above any finite integer cut (``<= 2^30``), so no cut ever
   crosses one. Rounding down makes ``flow / 2^e`` a feasible flow of the real residual network,
   so ``LB += flow_value / 2^e`` stays a valid lower bound (weak duality) and the real residual
   capacities ``r = c - flow / 2^e`` are non-negative (exact in doubles: ``r`` is ``c`` with its
   bits above ``2^-e`` partly removed). The source side ``X`` of the integer residual graph is a
   minimum integer cut, ``val(X) - LB < |cut arcs| / 2^e``; ``UB = min(UB, val(X))``.
3. Threshold round (exact, replaces a second scaled round). Let ``theta = UB - const - LB`` (the
   remaining gap; stop if ``theta <= 1e-13 UB``). For every cut ``C`` the residual identity
   ``cap(C) = LB + r(C)`` holds, ``r(C)`` the residual capacity leaving ``C`` (reverse arcs
   included). So a cut that crosses an arc with ``r >= theta`` (or an infinite arc) costs at
   least ``UB`` and cannot improve on the incumbent. Call such arcs *big* (with a margin of a few
   ulps of ``UB`` added to ``theta`` to absorb the rounding of ``UB`` itself). Let ``A`` be the
   vertices reachable from ``s`` by big arcs and ``B`` those reaching ``t`` by big arcs. Every cut
   with ``r(C) < theta`` contains ``A`` and avoids ``B``. If ``A`` and ``B`` meet, no such cut
   exists and the incumbent is optimal (``LB := UB``). Otherwise contract ``A`` into ``s`` and
   ``B`` into ``t``; the free vertices ``F`` (normally a handful) with the arcs between them carry
   the residual capacities, computed *exactly* as integers (``c * 2^K - f * 2^(K-e)`` from the
   double ``c`` and the integer scipy flow ``f``). Path A's exact max-flow ``F2`` on this small
   network is the minimum of ``r(C)`` over the cuts containing ``A`` and avoiding ``B``, so
   ``LB := LB + min(F2, theta)`` is a valid bound and the cut ``A + (source side in F)`` reaches it.
   Thus after one scipy call and one small exact flow the gap is at rounding level.
4. If ``F`` is too large for path A (``MAX_FREE`` vertices) a further scaled round (step 2 on the
   residual network, the previous refinement scheme) is run instead and step 3 retried; each
   scaled round shrinks the gap by about ``2^30 / |cut arcs|``, so the loop ends after
   ``max_rounds`` at the latest with ``UB - LB <= 1e-13 UB`` in practice.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

# scipy is imported where path B first needs it (``Structure.csr``, ``reach``, ``_scaled_round``): a
# small network solved by path A never pays for ``scipy.sparse`` (0.2-0.4 s of a cold start)

INT_CAP = 1 << 30        # finite integer capacities are <= this
INT_INF = (1 << 31) - 1  # infinite arcs
REL_STOP = 1e-13
SMALL_VERTICES = 64      # path A (exact integer max-flow) up to this many flow vertices
MAX_FREE = 64            # step 3 of path B: at most this many free vertices, else another scaled round
_ULP = 2.0 ** -52


@dataclass
class CutProblem:
    """A two-sided labelling problem solvable by one min cut.

    Local vertices ``0..n-1``. ``dev[v]``/``srv[v]``: cost of ``v`` on the device/server side.
    ``tensors``: ``(producer, consumers, weight)``, producer ``-1`` meaning the source (raw input);
    charged once if the producer is on the device and some consumer on the server (``gadget``) or
    once per server consumer (``gadget=False``). ``closure``: pairs ``(u, w)``: ``u`` on the server
    forces ``w`` to the server. ``force_dev``/``force_srv``: pins.
    """

    n: int
    dev: np.ndarray
    srv: np.ndarray
    tensors: list
    closure: list
    force_dev: np.ndarray
    force_srv: np.ndarray
    gadget: bool = True

    def value(self, mask: np.ndarray) -> float:
        """Real cost of a device mask (``inf`` if it violates pins or closure), one correctly rounded
        ``fsum`` of all the cost parts."""
        if (self.force_dev & ~mask).any() or (self.force_srv & mask).any():
            return math.inf
        for u, w in self.closure:
            if not mask[u] and mask[w]:
                return math.inf
        # one correctly rounded sum of all the parts (no intermediate rounding)
        parts = self.dev[mask].tolist() + self.srv[~mask].tolist()
        for p, cons, w in self.tensors:
            if p < 0 or mask[p]:
                if self.gadget:
                    if any(not mask[c] for c in cons):
                        parts.append(w)
                else:
                    parts.extend(w for c in cons if not mask[c])
        return math.fsum(parts)


@dataclass
class CutResult:
    """Outcome of :func:`min_cut`: the device mask, its real value and a certified lower bound."""

    mask: np.ndarray
    value: float
    lower_bound: float
    rounds: int
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.value - self.lower_bound


# ---------------------------------------------------------------------- exact integer max-flow
def _to_ints(*arrays) -> tuple[list[list[int]], int]:
    """Finite non-negative doubles as exact integers ``x * 2^K`` with one common ``K`` (>= 0).

    ``x = M * 2^k`` with the 53-bit integer mantissa ``M = frexp(x)[0] * 2^53`` (exact), so
    ``x * 2^K = M << (K + k)`` for ``K >= -k``."""
    x = np.concatenate([np.asarray(a, dtype=float) for a in arrays])
    mant, ex = np.frexp(x)
    M = (mant * 9007199254740992.0).astype(np.int64)       # 2^53
    k = ex.astype(np.int64) - 53
    nz = M != 0
    K = max(0, int(-k[nz].min())) if nz.any() else 0
    sh = (K + k).tolist()
    vals = [m << s_ if m else 0 for m, s_ in zip(M.tolist(), sh)]
    out, i = [], 0
    for a in arrays:
        out.append(vals[i:i + len(a)])
        i += len(a)
    return out, K


def exact_max_flow(nv: int, s: int, t: int, tails, heads, caps) -> tuple[int, list[bool]]:
    """Maximum ``s``-``t`` flow of a network with exact integer capacities (``None`` = infinite).

    Dinic's algorithm (BFS level graph, blocking flow by depth-first search with current-arc
    pointers) in Python integers: no rounding, terminates on integers. Infinite arcs get
    ``1 + sum of finite capacities``. Returns the flow value and the source side of the final
    residual graph (the smallest minimum cut).
    """
    finite = 0
    for c in caps:
        if c is not None:
            finite += c
    inf = finite + 1
    m = len(tails)
    head = [0] * (2 * m)
    cap = [0] * (2 * m)
    adj: list[list[int]] = [[] for _ in range(nv)]
    for i in range(m):
        u, v, c = tails[i], heads[i], caps[i]
        a = 2 * i
        head[a] = v
        head[a + 1] = u
        cap[a] = inf if c is None else c
        adj[u].append(a)
        adj[v].append(a + 1)
    flow = 0
    while True:
        level = [-1] * nv
        level[s] = 0
        queue = [s]
        for u in queue:
            lu = level[u] + 1
            for a in adj[u]:
                if cap[a] > 0:
                    v = head[a]
                    if level[v] < 0:
                        level[v] = lu
                        queue.append(v)
        if level[t] < 0:
            return flow, [x >= 0 for x in level]
        lt = level[t]
        cur = [0] * nv
        path: list[int] = []
        u = s
        while True:
            if u == t:
                b = inf
                for a in path:
                    if cap[a] < b:
                        b = cap[a]
                for a in path:
                    cap[a] -= b
                    cap[a ^ 1] += b
                flow += b
                # back up to the tail of the first saturated arc
                for j, a in enumerate(path):
                    if cap[a] == 0:
                        del path[j:]
                        u = head[a ^ 1]
                        break
                continue
            au = adj[u]
            i = cur[u]
            lu = level[u] + 1
            while i < len(au):
                a = au[i]
                if cap[a] > 0:
                    v = head[a]
                    if level[v] == lu and (lu < lt or v == t):
                        break
                i += 1
            cur[u] = i
            if i < len(au):
                path.append(au[i])
                u = head[au[i]]
                continue
            if u == s:
                break
            level[u] = -2          # dead end for this phase
            a = path.pop()
            u = head[a ^ 1]
            cur[u] += 1


# ---------------------------------------------------------------------- network structure
class Structure:
    """Rate-independent part of the flow network of a cut problem (see the module docstring).

    Flow vertices: ``0 = s``, ``1 = t``, ``2 + v`` for layer ``v``, then one data vertex per
    gadget tensor. Raw arcs carry a parameter index into ``[dev - m (n), srv - m (n), w (T)]`` or
    ``-1`` (infinite). Slots are the arcs of the symmetric CSR structure (every arc with its reverse).
    """

    def __init__(self, n: int, tensors, closure, force_dev, force_srv, gadget: bool):
        self.n = n
        self.gadget = gadget
        tens = [(int(p), tuple(int(c) for c in cons)) for p, cons in tensors]
        self.n_tensors = len(tens)
        fd = np.asarray(force_dev, dtype=bool).copy()
        fs = np.asarray(force_srv, dtype=bool).copy()
        self.force_dev, self.force_srv = fd, fs
        cl = np.asarray(closure, dtype=np.int64).reshape(-1, 2)
        self.cu, self.cw = cl[:, 0].copy(), cl[:, 1].copy()
        ar = np.arange(n, dtype=np.int64)
        tails = [ar + 2, np.zeros(n, np.int64)]
        heads = [np.ones(n, np.int64), ar + 2]
        param = [ar, ar + n]
        vfd, vfs = np.flatnonzero(fd), np.flatnonzero(fs)
        tails += [np.zeros(vfd.size, np.int64), vfs + 2]
        heads += [vfd + 2, np.ones(vfs.size, np.int64)]
        param += [np.full(vfd.size, -1), np.full(vfs.size, -1)]
        tt: list[int] = []
        th: list[int] = []
        tp: list[int] = []
        nxt = n + 2
        t_prod, t_cidx, t_cptr = [], [], [0]
        for k, (p, cons) in enumerate(tens):
            pn = 0 if p < 0 else p + 2
            t_prod.append(p if p >= 0 else n)
            t_cidx.extend(cons)
            t_cptr.append(len(t_cidx))
            if not cons:
                continue
            if gadget and len(cons) > 1:
                tt.append(pn); th.append(nxt); tp.append(2 * n + k)
                for c in cons:
                    tt.append(nxt); th.append(c + 2); tp.append(-1)
                nxt += 1
            else:
                for c in cons:
                    tt.append(pn); th.append(c + 2); tp.append(2 * n + k)
        tails += [np.asarray(tt, np.int64), self.cw + 2]
        heads += [np.asarray(th, np.int64), self.cu + 2]
        param += [np.asarray(tp, np.int64), np.full(self.cu.size, -1)]
        tails = np.concatenate(tails)
        heads = np.concatenate(heads)
        param = np.concatenate(param).astype(np.int64)
        nv = nxt
        self.nv = nv
        self.tails_l, self.heads_l, self.param_l = tails.tolist(), heads.tolist(), param.tolist()
        # symmetric CSR slots
        keys = tails * nv + heads
        allk = np.concatenate([keys, heads * nv + tails])
        uk, inv = np.unique(allk, return_inverse=True)
        slot = inv[:keys.size]
        self.nslots = uk.size
        self.rows = uk // nv
        self.cols = (uk % nv).astype(np.int32)
        self.rev = np.searchsorted(uk, self.cols.astype(np.int64) * nv + self.rows)
        self.indptr = np.searchsorted(self.rows, np.arange(nv + 1)).astype(np.int32)
        fin = param >= 0
        self.fin_slot, self.fin_param = slot[fin], param[fin]
        self.inf_slot = np.zeros(uk.size, dtype=bool)
        self.inf_slot[slot[~fin]] = True
        self.n_arcs = int(keys.size)
        self._template = None  # the checked csr_array template, built on first use (csr)
        # vectorised evaluator
        self.t_prod = np.asarray(t_prod, dtype=np.int64)
        self.t_cidx = np.asarray(t_cidx, dtype=np.int64)
        self.t_cptr = np.asarray(t_cptr, dtype=np.int64)
        self.t_cnt = np.diff(self.t_cptr)
        self.t_has = self.t_cnt > 0
        # feasible starts: smallest (pins + ancestors) and largest (all but server pins + descendants)
        back: list[list[int]] = [[] for _ in range(n)]
        fwd: list[list[int]] = [[] for _ in range(n)]
        for u, w in zip(self.cu.tolist(), self.cw.tolist()):
            back[w].append(u)
            fwd[u].append(w)
        self.start_min = _close(fd, back)
        srv_side = _close(fs, fwd)
        self.start_max = ~srv_side
        self.feasible = not (self.start_min & fs).any()
        self.all_forced = not (~(self.start_min | srv_side)).any()

    # ------------------------------------------------------------------ per-solve pieces
    def value(self, mask: np.ndarray, dev: np.ndarray, srv: np.ndarray, w: np.ndarray) -> float:
        """Same as :meth:`CutProblem.value`, vectorised."""
        if (self.force_dev & ~mask).any() or (self.force_srv & mask).any():
            return math.inf
        if self.cu.size and (~mask[self.cu] & mask[self.cw]).any():
            return math.inf
        ext = np.append(mask, True)
        parts = [dev[mask], srv[~mask]]
        if self.n_tensors:
            off = ~mask[self.t_cidx]
            if self.gadget:
                anyoff = np.zeros(self.n_tensors, dtype=bool)
                if off.size:
                    anyoff[self.t_has] = np.logical_or.reduceat(off, self.t_cptr[:-1][self.t_has])
                parts.append(w[ext[self.t_prod] & anyoff])
            else:
                cnt = np.zeros(self.n_tensors, dtype=np.int64)
                if off.size:
                    cnt[self.t_has] = np.add.reduceat(off.astype(np.int64), self.t_cptr[:-1][self.t_has])
                cnt[~ext[self.t_prod]] = 0
                parts.append(np.repeat(w, cnt))
        return math.fsum(np.concatenate(parts).tolist())

    def capacities(self, dev, srv, w) -> tuple[np.ndarray, float]:
        m = np.minimum(dev, srv)
        params = np.concatenate([dev - m, srv - m, w])
        cap = np.bincount(self.fin_slot, weights=params[self.fin_param], minlength=self.nslots)
        cap[self.inf_slot] = 0.0
        return cap, math.fsum(m.tolist())

    def reach(self, keep: np.ndarray, src: int) -> np.ndarray:
        """Vertices reachable from ``src`` over the slots where ``keep`` holds."""
        ck = np.zeros(self.nslots + 1, dtype=np.int32)
        np.cumsum(keep, out=ck[1:])
        # float64 data: breadth_first_order would otherwise convert (a copy costing more than the BFS)
        g = self.csr(np.ones(int(ck[-1])), self.cols[keep], ck[self.indptr])
        out = np.zeros(self.nv, dtype=bool)
        from scipy.sparse.csgraph import breadth_first_order

        out[breadth_first_order(g, src, directed=True, return_predecessors=False)] = True
        return out

    def csr(self, data, indices, indptr):
        """A ``csr_array`` from arrays that are valid by construction (sorted int32 indices, monotone
        indptr), without the format checks of the constructor: a shallow copy of a checked
        template whose three public arrays are replaced."""
        if self._template is None:
            import scipy.sparse as sp

            self._template = sp.csr_array((np.ones(self.nslots), self.cols, self.indptr), shape=(self.nv, self.nv))
        g = copy.copy(self._template)
        g.data, g.indices, g.indptr = data, indices, indptr
        return g


def _close(seed: np.ndarray, adj) -> np.ndarray:
    """``seed`` (a boolean mask) plus everything reachable from it along ``adj``."""
    mask = np.asarray(seed, dtype=bool).copy()
    stack = np.flatnonzero(mask).tolist()
    while stack:
        v = stack.pop()
        for u in adj[v]:
            if not mask[u]:
                mask[u] = True
                stack.append(u)
    return mask


def _structure_of(prob: CutProblem) -> Structure:
    return Structure(prob.n, [(p, cons) for p, cons, _w in prob.tensors], prob.closure, prob.force_dev,
                      prob.force_srv, prob.gadget)


def _weights_of(prob: CutProblem) -> np.ndarray:
    return np.fromiter((w for _p, _c, w in prob.tensors), dtype=float, count=len(prob.tensors))


# ---------------------------------------------------------------------- solving
def _solve_small(st: Structure, dev, srv, w) -> CutResult:
    """Path A of the module docstring: exact integer max-flow on the whole network. The source side
    of the final residual graph is a minimum cut, so its cost is exactly ``(sum m + flow) / 2^K``
    (one rounding, the same correctly rounded number the evaluator's ``fsum`` gives)."""
    (di, si, wi), K = _to_ints(dev, srv, w)
    n = st.n
    mi = [a if a < b else b for a, b in zip(di, si)]
    params = [a - b for a, b in zip(di, mi)] + [a - b for a, b in zip(si, mi)] + wi
    tails, heads, caps = [], [], []
    for u, v, p in zip(st.tails_l, st.heads_l, st.param_l):
        if p < 0:
            tails.append(u); heads.append(v); caps.append(None)
        else:
            c = params[p]
            if c > 0:
                tails.append(u); heads.append(v); caps.append(c)
    flow, side = exact_max_flow(st.nv, 0, 1, tails, heads, caps)
    mask = np.array(side[2:2 + n], dtype=bool)
    val = (sum(mi) + flow) / (1 << K)
    return CutResult(mask, val, val, 1, {"path": "exact", "vertices": st.nv, "arcs": st.n_arcs})


def _scaled_round(st: Structure, resid: np.ndarray, bound: float):
    """Step 2 of path B: integer max-flow of the residual network scaled to 30 bits.

    The exponent ``e`` comes from ``frexp(bound)`` and the scaling is ``ldexp`` (exact), never
    ``2^30 / bound`` nor ``2.0**e`` as a float: with every cost near 1e-300 (inside the stated
    quantity range) the quotient overflows to infinity and ``2^e`` exceeds the double range (issue 21,
    ``OverflowError`` on an instance whose costs and bytes are all 1e-300)."""
    e = (INT_CAP.bit_length() - 1) - math.frexp(bound)[1]  # bound < 2^ex, so bound * 2^e < 2^30
    icap = np.floor(np.ldexp(np.clip(resid, 0.0, bound), e))  # infinite slots (resid <= 0) are set below
    icap = np.minimum(icap, INT_CAP).astype(np.int32)
    icap[st.inf_slot] = INT_INF
    graph = st.csr(icap, st.cols, st.indptr)
    from scipy.sparse.csgraph import maximum_flow

    res = maximum_flow(graph, 0, 1)
    fl = res.flow
    if fl.indptr.shape == st.indptr.shape and np.array_equal(fl.indptr, st.indptr) and \
            np.array_equal(fl.indices, st.cols):
        fdata = np.asarray(fl.data, dtype=np.int64)
    else:  # pragma: no cover - defensive: realign if scipy changed the structure
        fdata = np.asarray(fl[st.rows, st.cols.astype(np.int64)]).ravel().astype(np.int64)
    side = st.reach(icap.astype(np.int64) > fdata, 0)
    return e, fdata, int(res.flow_value), side


def _threshold_round(st: Structure, cap, resid, flows, theta, margin):
    """Step 3 of path B. Returns ``None`` if too many free vertices remain, ``("certified",)`` if the
    incumbent is proven optimal, else ``("cut", side, F2 as float)``."""
    big = st.inf_slot | (resid >= theta + margin)
    A = st.reach(big, 0)
    B = st.reach(big[st.rev], 1)
    if (A & B).any():
        return ("certified",)
    free = ~(A | B)
    nfree = int(free.sum())
    if nfree == 0:  # the only candidate is A: its residual capacity is the sum over the A -> B arcs
        ab = A[st.rows] & B[st.cols] & ~st.inf_slot
        return ("cut", A, math.fsum(resid[ab].tolist()))
    if nfree > MAX_FREE:
        return None
    # contracted network: s' = 0 (A), t' = 1 (B), free vertices 2.. ; arcs with tail not in B and
    # head not in A, mapped; residual capacities exact as integers
    node = np.full(st.nv, -1, dtype=np.int64)
    node[A] = 0
    node[B] = 1
    fv = np.flatnonzero(free)
    node[fv] = np.arange(2, 2 + nfree)
    rows, cols = st.rows, st.cols
    tu, tv = node[rows], node[cols]
    sel = np.flatnonzero(~B[rows] & ~A[cols] & (st.inf_slot | (resid > 0.0)) & (tu != tv))
    infs = st.inf_slot[sel].tolist()
    fin = [i for i, f in zip(sel.tolist(), infs) if not f]
    # exact residual: c * 2^K - sum_k f_k * 2^(K - e_k)
    ratios = [float(x).as_integer_ratio() for x in cap[fin].tolist()]
    K = max([q.bit_length() - 1 for _p, q in ratios] + [e for e, _f in flows] + [0])
    fcols = [fd[fin].tolist() for _e, fd in flows]
    shifts = [K - e for e, _f in flows]
    caps_fin = []
    for j, (p, q) in enumerate(ratios):
        r = p << (K - (q.bit_length() - 1))
        for fc, sh in zip(fcols, shifts):
            r -= fc[j] << sh
        caps_fin.append(r if r > 0 else 0)
    # parallel arcs of the contracted network (e.g. all A -> B arcs) are merged: one augmenting
    # path each would otherwise cost a BFS
    agg: dict[tuple[int, int], int | None] = {}
    it = iter(caps_fin)
    for a, b, f in zip(tu[sel].tolist(), tv[sel].tolist(), infs):
        c = None if f else next(it)
        key = (a, b)
        if key in agg:
            old = agg[key]
            agg[key] = None if (old is None or c is None) else old + c
        else:
            agg[key] = c
    keys = list(agg)
    flow, side_c = exact_max_flow(2 + nfree, 0, 1, [k[0] for k in keys], [k[1] for k in keys], list(agg.values()))
    side = A.copy()
    side[fv] = np.asarray(side_c[2:], dtype=bool)
    return ("cut", side, flow / (1 << K) if flow < (1 << 1020) else math.inf)


def solve_structure(st: Structure, dev: np.ndarray, srv: np.ndarray, w: np.ndarray, *, max_rounds: int = 8,
           small: int | None = None) -> CutResult | None:
    """Certified minimum cut for the structure ``st`` filled with ``dev``, ``srv``, ``w``."""
    if not st.feasible:
        return None
    if st.all_forced:  # every vertex is forced: nothing to decide
        val = st.value(st.start_min, dev, srv, w)
        return CutResult(st.start_min, val, val, 0, {})
    if st.nv <= (SMALL_VERTICES if small is None else small):
        return _solve_small(st, dev, srv, w)
    best_mask = st.start_min
    best_val = st.value(best_mask, dev, srv, w)
    alt = st.value(st.start_max, dev, srv, w)
    if alt < best_val:
        best_mask, best_val = st.start_max, alt
    cap, const = st.capacities(dev, srv, w)
    info = {"path": "scaled", "const": const, "vertices": st.nv, "arcs": st.n_arcs}
    if best_val - const <= 0.0:
        return CutResult(best_mask, best_val, best_val, 0, info)
    resid = cap.copy()
    flows: list[tuple[int, np.ndarray]] = []
    lb_parts: list[float] = []
    lb = 0.0
    extra = 0.0                 # exact last-round flow (threshold round)
    rounds = 0
    certified = False
    while rounds < max_rounds:
        bound = (best_val - const) - lb
        if bound <= REL_STOP * max(best_val, 1e-300):
            break
        if flows:
            margin = 8 * _ULP * (abs(best_val) + abs(const) + lb)
            out = _threshold_round(st, cap, resid, flows, bound, margin)
            if out is not None:
                rounds += 1
                info["path"] = "scaled+threshold"
                if out[0] == "certified":
                    certified = True
                else:
                    _k, side, f2 = out
                    extra = min(f2, bound)
                    mask = side[2:2 + st.n]
                    val = st.value(mask, dev, srv, w)
                    if val < best_val or (val == best_val and mask.sum() < best_mask.sum()):
                        best_val, best_mask = val, mask.copy()
                break
        rounds += 1
        e, fdata, fval, side = _scaled_round(st, resid, bound)
        flows.append((e, fdata))
        resid = resid - np.ldexp(fdata.astype(float), -e)
        lb_parts.append(math.ldexp(float(fval), -e))
        lb = math.fsum(lb_parts)
        mask = side[2:2 + st.n]
        val = st.value(mask, dev, srv, w)
        if val < best_val:
            best_val, best_mask = val, mask.copy()
    lower = best_val if certified else math.fsum([const, lb, extra])
    return CutResult(best_mask, best_val, min(lower, best_val), rounds, info)


def min_cut(prob: CutProblem, *, max_rounds: int = 8) -> CutResult | None:
    """Certified minimum cut of ``prob`` (see the module docstring); None if pins are contradictory."""
    return solve_structure(_structure_of(prob), np.asarray(prob.dev, dtype=float), np.asarray(prob.srv, dtype=float),
                  _weights_of(prob), max_rounds=max_rounds)


__all__ = ["CutProblem", "CutResult", "Structure", "min_cut", "solve_structure", "exact_max_flow"]
