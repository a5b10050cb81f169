"""The graph of Algorithm 1 of seed 001 (multi-hop pipelined split learning) and the LP bound of its
line 3: :class:`PaperGraph` (the layered graph whose paths are plans at a fixed ``b``, with its
edge classes) and :func:`rlt_bound`, with the time-out both raise when their deadline passes
before a path is held (:func:`_stopped`). The algorithms that use them, and the corrections to the
paper, are in :mod:`.paper`; split out of it (2026-11-29: modules under 600 lines)."""

from __future__ import annotations

import numpy as np

from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import block_memory, client_memory, client_times, server_times, transfer_times, xi
from splitopt.solvers.deadline import MIN_REMAINING, Deadline

INF = np.inf


def _fits(use: float, cap) -> bool:
    return cap is None or use <= cap * (1 + 1e-9) + 1e-300


class PaperGraph:
    """The graph of Eqs. (20)-(22) for one ``b`` and exactly ``K`` submodels, compressed by edge
    class: ``cw[c1, n']`` (client vertex ``[0, c1)`` to any submodel-2 vertex on ``n'`` starting at
    ``c1``) and ``sw[k][n, lo, hi, n']`` (vertex ``(k, n, [lo, hi))`` to any ``(k+1, n', [hi,
    .))``), ``k = 2..K-1``; ``vx[k][n, lo, hi]``: the vertex exists (its block fits in memory).

    ``deadline`` (a :class:`~splitopt.solvers.deadline.Deadline`): checked per node and layer while
    the graph is built (about 0.2 s per ``b`` at I = 60, N = 6) and per submodel in
    :meth:`edge_classes`; once it has passed, :func:`_stopped` is raised."""

    def __init__(self, instance: PipelineInstance, b: int, K: int, deadline: Deadline | None = None):
        self.inst, self.b, self.K = instance, b, K
        self.deadline = deadline

        def check(what):
            if deadline is not None and deadline.over():
                raise _stopped(deadline, b, f"while building its graph ({what})")

        I, N = instance.n_layers, instance.n_servers
        self.I, self.N = I, N
        self.xi = xi(instance.batch, b)
        ccap = instance.client_memory_bytes
        scap = instance.server_memory_bytes
        self.v1 = np.zeros(I + 1, dtype=bool)
        self.cw = np.full((I + 1, N), INF)
        for c1 in range(1, I):
            check("client vertices")
            if not all(_fits(u, c) for u, c in zip(client_memory(instance, b, c1, K), ccap)):
                continue
            self.v1[c1] = True
            for n2 in range(N):
                ct = client_times(instance, b, c1, n2)
                if ct is None:
                    continue
                Fc, Bc, relay = ct
                w = max(Fc) + max(Bc)
                for (x, y), smp in relay.items():
                    w += smp * (instance.act_bytes[c1 - 1] / instance.rates[x][y]
                                + instance.grad_bytes[c1 - 1] / instance.rates[y][x])
                self.cw[c1, n2] = w
        self.vx = {}
        comp = np.full((N, I + 1, I + 1), INF)
        for n in range(N):
            for lo in range(1, I):
                check("server compute")
                for hi in range(lo + 1, I + 1):
                    F, B = server_times(instance, b, n, lo, hi)
                    comp[n, lo, hi] = F + B
        for k in range(2, K + 1):
            v = np.zeros((N, I + 1, I + 1), dtype=bool)
            for n in range(N):
                for lo in range(1, I):
                    check("server vertices")
                    for hi in range(lo + 1, I + 1):
                        v[n, lo, hi] = _fits(block_memory(instance, b, lo, hi, k - 1, K), scap[n])
            self.vx[k] = v
        trans = np.full((I + 1, N, N), INF)
        for h in range(1, I):
            check("transfers")
            for n in range(N):
                for n2 in range(N):
                    if n == n2:
                        continue
                    hops = transfer_times(instance, b, instance.server_node(n), instance.server_node(n2), h)
                    if hops is not None:
                        trans[h, n, n2] = sum(cf + cb for _h, cf, cb in hops)
        self.sw = {}
        for k in range(2, K):
            check("edge weights")
            w = comp[:, :, :, None] + np.transpose(trans, (1, 0, 2))[:, None, :, :]  # [n, lo, hi, n']
            w = np.where(self.vx[k][:, :, :, None], w, INF)
            self.sw[k] = w

    def edge_classes(self):
        """``(weight, k, index)`` of every edge class with a finite weight (``k = 1``: index
        ``(c1, n')``; else ``(n, lo, hi, n')``)."""
        out = []
        c1s, ns = np.nonzero(np.isfinite(self.cw) & self.v1[:, None])
        out += [(float(self.cw[a, c]), 1, (int(a), int(c))) for a, c in zip(c1s, ns)]
        for k, w in self.sw.items():
            if self.deadline is not None and self.deadline.over():
                raise _stopped(self.deadline, self.b, "while listing its edges")
            idx = np.argwhere(np.isfinite(w))
            out += [(v, k, tuple(i)) for v, i in zip(w[tuple(idx.T)].tolist(), idx.tolist())]
        return out

    # -------------------------------------------------------------- DPs on a subgraph
    def _masked(self, allow):
        cw = np.where(allow[1], self.cw, INF)
        sw = {k: np.where(allow[k], w, INF) for k, w in self.sw.items()}
        return cw, sw

    def forward(self, cw, sw):
        """``f[k][n, lo, hi]``: shortest source -> vertex (k, n, [lo, hi))."""
        I, K = self.I, self.K
        hi_gt = np.arange(I + 1)[None, :] > np.arange(I + 1)[:, None]  # [lo, hi]: hi > lo
        f = {}
        g = np.where(self.v1[:, None], cw, INF).T  # [n', lo]
        f[2] = np.where(self.vx[2] & hi_gt[None], g[:, :, None], INF)
        for k in range(2, K):
            g = (f[k][:, :, :, None] + sw[k]).min(axis=(0, 1))  # [hi, n'] -> start of k+1 at hi
            f[k + 1] = np.where(self.vx[k + 1] & hi_gt[None], g.T[:, :, None], INF)
        return f

    def backward(self, cw, sw):
        """``d[k][n, lo, hi]``: shortest vertex (k, n, [lo, hi)) -> sink."""
        I, K = self.I, self.K
        d = {}
        last = np.full((self.N, I + 1, I + 1), INF)
        last[:, :, I] = 0.0
        d[K] = np.where(self.vx[K], last, INF)
        for k in range(K - 1, 1, -1):
            start = d[k + 1].min(axis=2)  # [n', lo' = hi]
            d[k] = (sw[k] + start.T[None, None, :, :]).min(axis=3)
        return d


def rlt_bound(G: PaperGraph, deadline: Deadline | None = None) -> float:
    """The LP bound ``l_b`` of Algorithm 1 line 3: Appendix B's RLT relaxation of the min-sum part
    (vertex variables ``mu``, edge-class variables ``zeta``, marginal equalities C17+/C18+),
    solved with HiGHS. ``inf`` when infeasible.

    ``deadline``: checked every :data:`_CHECK_EVERY` columns and rows while the LP is written
    (3 s at I = 60: 320,000 columns), and the time left is HiGHS's limit (the LP alone took
    50-100 s there); once it has passed, or HiGHS stops at its limit, :func:`_stopped` is raised."""
    import scipy.sparse as sp

    from splitopt.solvers.exact import HighsMatrix

    I, K = G.I, G.K
    cols, cost = {}, []
    ticks = [0]

    def check():
        ticks[0] += 1
        if deadline is not None and ticks[0] % _CHECK_EVERY == 0 and deadline.over():
            raise _stopped(deadline, G.b, "while writing the LP bound of line 3")

    def col(key, c):
        check()
        cols[key] = len(cost)
        cost.append(c)

    for c1 in range(1, I):
        if G.v1[c1]:
            col(("m", 1, c1), 0.0)
    for k in range(2, K + 1):
        for n, lo, hi in np.argwhere(G.vx[k]):
            col(("m", k, int(n), int(lo), int(hi)), 0.0)
    for c1, n2 in np.argwhere(np.isfinite(G.cw) & G.v1[:, None]):
        col(("z", 1, int(c1), int(n2)), float(G.cw[c1, n2]))
    for k, w in G.sw.items():
        for i in np.argwhere(np.isfinite(w)):
            col(("z", k, *(int(x) for x in i)), float(w[tuple(i)]))
    rows, rc, rv, lo_, up_ = [], [], [], [], []

    def row(entries, rhs):
        check()
        r = len(lo_)
        for c, v in entries:
            rows.append(r)
            rc.append(c)
            rv.append(v)
        lo_.append(rhs)
        up_.append(rhs)

    row([(cols[("m", 1, c1)], 1.0) for c1 in range(1, I) if ("m", 1, c1) in cols], 1.0)
    # C18+: a vertex's mass leaves on its edge classes; C17+: what enters (k, n', lo) starts there
    out: dict = {}
    into: dict = {}
    for key, c in cols.items():
        if key[0] != "z":
            continue
        if key[1] == 1:
            _z, _k, c1, n2 = key
            out.setdefault(("m", 1, c1), []).append(c)
            into.setdefault((2, n2, c1), []).append(c)
        else:
            _z, k, n, lo, hi, n2 = key
            out.setdefault(("m", k, n, lo, hi), []).append(c)
            into.setdefault((k + 1, n2, hi), []).append(c)
    starts: dict = {}
    for key, c in cols.items():
        if key[0] == "m" and key[1] >= 2:
            _m, k, n, lo, hi = key
            starts.setdefault((k, n, lo), []).append(c)
            if k < K:
                row([(c, 1.0)] + [(z, -1.0) for z in out.get(key, [])], 0.0)
            elif hi != I:
                row([(c, 1.0)], 0.0)
        elif key[0] == "m":
            row([(c, 1.0)] + [(z, -1.0) for z in out.get(key, [])], 0.0)
    for key in set(starts) | set(into):
        row([(c, 1.0) for c in starts.get(key, [])] + [(z, -1.0) for z in into.get(key, [])], 0.0)
    n = len(cost)
    A = sp.csc_matrix((rv, (rows, rc)), shape=(len(lo_), n))
    hm = HighsMatrix.from_arrays(np.array(cost), A, np.array(lo_), np.array(up_), np.zeros(n), np.ones(n))
    left = None if deadline is None else deadline.remaining()
    if left is not None:  # what the hand-over to HiGHS (0.25 s at I = 60) left, less HiGHS's overrun
        hm.set_time_limit(max(left - min(HIGHS_OVERRUN, 0.1 * left), MIN_REMAINING))
    res = hm.solve()
    if res.status == "time_limit" and deadline is not None:
        deadline.hit = True  # HiGHS's clock and ours: the limit is the time that was left
        raise _stopped(deadline, G.b, "while solving the LP bound of line 3")
    if res.status != "optimal" or res.objective is None:
        return INF
    return float(res.objective)


#: columns and rows of :func:`rlt_bound`'s LP written between two looks at the clock
_CHECK_EVERY = 2000
#: seconds by which HiGHS overran its limit on :func:`rlt_bound`'s LP at I = 60, N = 6 (0.3-0.4 s);
#: its limit is the time left less this (at most a tenth of it)
HIGHS_OVERRUN = 0.3


def _stopped(deadline: Deadline, b: int, where: str):
    """The time-out of Algorithm 1 at ``b`` stopped ``where`` before it held a path (a
    :class:`~splitopt.errors.SolverFailed` with status ``"time_limit"``)."""
    return deadline.no_answer(f" (Algorithm 1 as printed at b = {b}: stopped {where}, no path held)")


__all__ = ["PaperGraph", "rlt_bound"]
