"""The layered DAG of a ``pipeline`` instance for one micro-batch size ``b``, with two weights per
arc, and the topological dynamic programme over it (digest §3.5, corrected Algorithm 1 graph).

Seed 001 (Wei et al., arXiv:2505.04368), Section V-D, Eqs. (20)-(22); digest
``papers/001-pipelined-split-learning.md`` §3.2-§3.5. The paper's graph has one vertex per
(submodel, node, layer interval) and one edge per pair of consecutive submodels; here it is
compressed (digest §3.5) and split so that the number of arcs is ``O(N I^2 + N^2 I)`` instead of
``O(N^2 I^3)``:

* a **client arc** ``source -> (n, c)``: the clients hold layers ``0..c-1`` and send to server ``n``
  (client FP and BP stages with their upload/download hop, relayed hops of the clients' traffic);
* a **block arc** ``(n, lo) -> (n, hi)*``: server ``n`` holds layers ``lo..hi-1`` (its FP and BP
  compute; a block with ``hi = I`` ends at the sink);
* a **transfer arc** ``(n, hi)* -> (n', hi)``: the activation/gradient at cut ``hi`` moves from
  ``n`` to ``n' != n`` (every hop of its route).

Each arc has an additive weight ``a`` (its share of ``T_f``, Eq. 12, with the last submodel's
compute counted: digest §7.2 #5) and a bottleneck weight ``beta`` (the largest of the stage times
it owns, Eq. 13 with submodel ``K`` included; *not* the sum the paper's Algorithm 1 uses, digest
§7.2 #7). A path is a plan; ``T_f`` is the sum of ``a`` and, under the ``distinct`` and
``revisit`` placements, ``T_i`` is the max of ``beta`` along it (every stage is owned by one arc).
Splitting a paper edge into a block arc and a transfer arc in series keeps both the sum and the
max.

Memory (per block, Eq. 11 or the ``resident`` model) removes arcs. When the memory of a block
depends on the number of blocks after it (``memory="resident"``) or ``max_submodels`` caps the
count, every server vertex carries a *class* ``r``: the number of server blocks from it to the
end, inclusive (the chain position counted from the end is what the ``resident`` model needs:
``K' - s = r``). Otherwise one class stands for any count.

:class:`Tables` holds the per-sample (``b``-independent) coefficients, :meth:`Tables.weights`
the arc weights of one ``b`` (every stage time is affine in ``b``, in the client loads and in
``max(b - threshold, 0)``). :func:`dp` is the backward topological DP (``O(V + A)`` numpy work per
call, no Dijkstra needed: digest §7.2 #6), with an optional *critical set* of servers whose reuse
it forbids (decremental state-space relaxation, see :mod:`.shortest_path`), and an optional
deadline checked once per layer (:class:`Stopped`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import MEM_TOL, xi

INF = np.inf


class Stopped(Exception):
    """Raised inside :class:`DP` when its ``deadline`` has passed (the DP's tables are then unusable)."""


def _fits(use, cap):
    """Memory check of the evaluator (relative tolerance ``MEM_TOL``), vectorised."""
    if cap is None:
        return np.ones(np.shape(use), dtype=bool)
    return use <= cap * (1 + MEM_TOL) + 1e-300


class Tables:
    """The ``b``-independent coefficients of every arc of ``instance`` (see the module docstring)."""

    def __init__(self, instance: PipelineInstance, *, classes: bool | None = None):
        inst = self.inst = instance
        I, N, M = inst.n_layers, inst.n_servers, inst.n_clients
        self.I, self.N, self.M = I, N, M
        pf, pb = inst.prefix("fwd_flop"), inst.prefix("bwd_flop")
        ps = inst.prefix("sample_mem_bytes")
        po = inst.prefix("param_bytes") + inst.prefix("opt_bytes")
        Wf = pf[None, :] - pf[:, None]  # [lo, hi]
        Wb = pb[None, :] - pb[:, None]
        f = np.array(inst.server_flops, dtype=float)
        self.cf = Wf[None] / f[:, None, None]  # (N, I+1, I+1) FP seconds per sample
        self.cb = Wb[None] / f[:, None, None]
        self.memS = ps[None, :] - ps[:, None]
        self.memPO = po[None, :] - po[:, None]
        lo, hi = np.meshgrid(np.arange(I + 1), np.arange(I + 1), indexing="ij")
        self.valid = (lo >= 1) & (hi > lo)  # server blocks: lo >= 1 (the client holds layer 0)
        self.cap = [None if c is None else float(c) for c in inst.server_memory_bytes]
        # number of vertex classes (see the module docstring)
        need = inst.memory == "resident" or inst.max_submodels is not None
        self.explicit = need if classes is None else classes
        R = I - 1 if inst.max_submodels is None else min(I - 1, inst.max_submodels - 1)
        if inst.placement == "distinct":  # at most one block per server: at most N server blocks
            R = min(R, N)
        self.C = R if self.explicit else 1
        # transfers between servers, per cut h (1..I-1): sums and maxima of 1/rate over the hops
        act = np.array(inst.act_bytes, dtype=float)
        grad = np.array(inst.grad_bytes, dtype=float)
        self.act, self.grad = act, grad
        shape = (I + 1, N, N)
        self.tf_sum = np.full(shape, INF)
        self.tb_sum = np.full(shape, INF)
        self.tf_max = np.full(shape, INF)
        self.tb_max = np.full(shape, INF)
        self.tr_max = np.full(shape, INF)
        R_ = inst.rates
        for n in range(N):
            for n2 in range(N):
                if n == n2:
                    continue
                route = inst.route(inst.server_node(n), inst.server_node(n2))
                if route is None:
                    continue
                invf = np.array([1.0 / R_[x][y] for x, y in route])
                invb = np.array([1.0 / R_[y][x] for x, y in route])
                a, g = act[:I - 1], grad[:I - 1]  # cut h = 1..I-1 -> layer h-1's output
                self.tf_sum[1:I, n, n2] = a * invf.sum()
                self.tb_sum[1:I, n, n2] = g * invb.sum()
                self.tf_max[1:I, n, n2] = a * invf.max()
                self.tb_max[1:I, n, n2] = g * invb.max()
                self.tr_max[1:I, n, n2] = (a[:, None] * invf[None, :] + g[:, None] * invb[None, :]).max(axis=1)
        # clients: first hop of each client's route to each server, relayed hops after it
        self.cl_invf = np.full((M, N), INF)
        self.cl_invb = np.full((M, N), INF)
        self.cl_relay: list[dict] = []  # per server: {hop: [clients]}
        for n in range(N):
            relay: dict = {}
            for m in range(M):
                route = inst.route(m, inst.server_node(n))
                if route is None:
                    continue
                x = route[0][1]
                self.cl_invf[m, n] = 1.0 / R_[m][x]
                self.cl_invb[m, n] = 1.0 / R_[x][m]
                for hop in route[1:]:
                    relay.setdefault(hop, []).append(m)
            self.cl_relay.append(relay)
        self.cl_route = np.isfinite(self.cl_invf)
        self.cfl = np.array(inst.client_flops, dtype=float)
        self.ccap = [None if c is None else float(c) for c in inst.client_memory_bytes]
        self.pf, self.pb, self.ps, self.po = pf, pb, ps, po

    def classes(self):
        """``(term, nxt)``: whether a vertex class may end at the sink, and its successor class."""
        if not self.explicit:
            return np.array([True]), np.array([0])
        C = self.C
        return np.arange(C) == 0, np.arange(C) - 1

    def weights(self, b: int) -> "Weights":
        """Arc weights for micro-batch ``b`` (``inf`` = no arc)."""
        inst = self.inst
        I, N = self.I, self.N
        C = self.C
        stages = inst.bottleneck == "stages"
        q = -(-inst.batch // b)
        pi = max(b - inst.bwd_threshold_server, 0)
        F = b * self.cf + inst.t0_server_s
        Bk = pi * self.cb + inst.t1_server_s
        a_blk = F + Bk
        b_blk = np.maximum(F, Bk) if stages else a_blk
        # block memory depends on the class only through min(q, r): one table per distinct value
        if inst.memory == "paper":
            eff = [0] * C
        else:
            eff = [min(q, c + 1 if self.explicit else 1) for c in range(C)]
        uniq = sorted(set(eff))
        ta, tb = [], []
        for u in uniq:
            mem = b * (self.memS + self.memPO) if inst.memory == "paper" else self.memPO + b * self.memS * u
            ok = np.stack([self.valid & _fits(mem, self.cap[n]) for n in range(N)])
            ta.append(np.where(ok, a_blk, INF))
            tb.append(np.where(ok, b_blk, INF))
        pos = np.array([uniq.index(u) for u in eff])
        blk_a = np.stack(ta)[pos] if len(uniq) > 1 else np.broadcast_to(ta[0], (C, N, I + 1, I + 1)).copy()
        blk_b = np.stack(tb)[pos] if len(uniq) > 1 else np.broadcast_to(tb[0], (C, N, I + 1, I + 1)).copy()
        tr_a = b * (self.tf_sum + self.tb_sum)
        tr_b = b * (np.maximum(self.tf_max, self.tb_max) if stages else self.tr_max)
        # clients
        loads = np.array(inst.local_batches(b), dtype=float)
        active = loads > 0
        pic = np.maximum(loads - inst.bwd_threshold_client, 0)
        cl_a = np.full((C, I + 1, N), INF)
        cl_b = np.full((C, I + 1, N), INF)
        cuts = np.arange(1, I)
        Wf, Wb = self.pf[cuts], self.pb[cuts]  # client block 0..c-1
        act, grad = self.act[cuts - 1], self.grad[cuts - 1]
        S, PO = self.ps[cuts], self.po[cuts]
        for n in range(N):
            if not self.cl_route[active, n].all():
                continue
            Fm = (loads[:, None] * Wf[None, :] / self.cfl[:, None] + inst.t0_client_s
                  + loads[:, None] * act[None, :] * np.where(active, self.cl_invf[:, n], 0.0)[:, None])
            Bm = (pic[:, None] * Wb[None, :] / self.cfl[:, None] + inst.t1_client_s
                  + loads[:, None] * grad[None, :] * np.where(active, self.cl_invb[:, n], 0.0)[:, None])
            Fm = np.where(active[:, None], Fm, 0.0)
            Bm = np.where(active[:, None], Bm, 0.0)
            cf, cb = Fm.max(axis=0), Bm.max(axis=0)
            a = cf + cb
            beta = np.maximum(cf, cb) if stages else (Fm + Bm).max(axis=0)
            for (x, y), ms in sorted(self.cl_relay[n].items()):
                smp = float(loads[ms].sum())
                if smp == 0:
                    continue
                hf = smp * act / inst.rates[x][y]
                hb = smp * grad / inst.rates[y][x]
                a = a + hf + hb
                beta = np.maximum(beta, np.maximum(hf, hb) if stages else hf + hb)
            for c in range(C):
                ok = np.ones(I - 1, dtype=bool)
                for m in range(self.M):
                    if inst.memory == "paper":
                        use = loads[m] * (S + PO)
                    else:
                        K = (c + 2) if self.explicit else 2
                        use = PO + loads[m] * S * min(q, K)
                    ok &= _fits(use, self.ccap[m])
                cl_a[c, 1:I, n] = np.where(ok, a, INF)
                cl_b[c, 1:I, n] = np.where(ok, beta, INF)
        return Weights(b, xi(inst.batch, b), blk_a, blk_b, tr_a, tr_b, cl_a, cl_b)


@dataclass
class Weights:
    """Arc weights of one ``b``: block arcs ``[class, n, lo, hi]``, transfer arcs ``[h, n, n']``,
    client arcs ``[class, c, n]``; ``*_a`` additive, ``*_b`` bottleneck."""

    b: int
    xi: int
    blk_a: np.ndarray
    blk_b: np.ndarray
    tr_a: np.ndarray
    tr_b: np.ndarray
    cl_a: np.ndarray
    cl_b: np.ndarray

    def masked(self, below: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Additive weights of the arcs whose bottleneck weight is strictly below ``below``."""
        if below == INF:
            return self.blk_a, self.tr_a, self.cl_a
        return (np.where(self.blk_b < below, self.blk_a, INF), np.where(self.tr_b < below, self.tr_a, INF),
                np.where(self.cl_b < below, self.cl_a, INF))


@dataclass
class Path:
    """A source-sink path: the plan ``(cuts, servers)``, its class at the first server, its additive
    sum and its bottleneck (max of ``beta``)."""

    cuts: tuple[int, ...]
    servers: tuple[int, ...]
    sum_a: float
    max_b: float

    def repeated(self) -> set[int]:
        seen, rep = set(), set()
        for s in self.servers:
            (rep if s in seen else seen).add(s)
        return rep


class DP:
    """Backward topological DP over the arcs of :class:`Weights` (``op`` ``"sum"``: shortest path;
    ``"max"``: bottleneck path), forbidding the reuse of the servers in ``critical`` (the state then
    carries the set of critical servers already used)."""

    def __init__(self, tables: Tables, blk, tr, cl, *, op: str = "sum", critical: tuple[int, ...] = (),
                 deadline=None):
        self.t = tables
        self.blk, self.tr, self.cl = blk, tr, cl
        self.op = np.add if op == "sum" else np.maximum
        I, N, C = tables.I, tables.N, tables.C
        self.crit = tuple(critical)
        nS = 1 << len(self.crit)
        bit = np.zeros(N, dtype=np.int64)
        for j, s in enumerate(self.crit):
            bit[s] = 1 << j
        self.bit = bit
        S = np.arange(nS)[:, None]
        self.idx = S | bit[None, :]  # [state, n'] -> state after visiting n'
        self.ok = (S & bit[None, :]) == 0  # n' allowed from state (not critical or not yet used)
        self.term, self.nxt = tables.classes()
        U = np.full((nS, C, N, I + 1), INF)
        D = np.full((nS, C, N, I + 1), INF)
        op = self.op
        nxt_ok = self.nxt >= 0
        nx = np.where(nxt_ok, self.nxt, 0)
        arN = np.arange(N)
        for h in range(I - 1, 0, -1):
            if deadline is not None and deadline.over():  # one DP can take seconds (2^|critical| states)
                raise Stopped
            # U[s, c, n, h]: server n starts a block at h
            best = np.where(self.term[None, :, None], blk[None, :, :, h, I], INF)
            best = np.broadcast_to(best, (nS, C, N))
            if h + 1 < I:
                Dn = D[:, nx, :, h + 1:I]  # (S, C, N, k)
                Dn = np.where(nxt_ok[None, :, None, None], Dn, INF)
                cand = op(blk[None, :, :, h, h + 1:I], Dn).min(axis=-1)
                best = np.minimum(best, cand)
            U[:, :, :, h] = best
            # D[s, c, n, h]: server n finished at h; next block on n' of class c
            Uh = U[:, :, :, h]  # (S, C, N)
            G = Uh[self.idx, :, arN[None, :]]  # (S, N', C)
            G = np.where(self.ok[:, :, None], G, INF).transpose(0, 2, 1)  # (S, C, N')
            D[:, :, :, h] = op(tr[h][None, None, :, :], G[:, :, None, :]).min(axis=-1)
        self.U, self.D = U, D
        # source: client arc (class c, cut c1, server n) then U[s0(n), c, n, c1]
        s0 = bit  # state after the first server
        Us = U[s0[None, None, :], np.arange(C)[:, None, None], arN[None, None, :], np.arange(I + 1)[None, :, None]]
        self.src = op(cl, Us)  # (C, I+1, N)
        self.value = float(self.src.min()) if self.src.size else INF

    def path(self, W: Weights) -> Path | None:
        """The path achieving :attr:`value` (recomputed forward with the same arithmetic), with its
        sum and bottleneck under the unmasked weights ``W``."""
        if not math.isfinite(self.value):
            return None
        t, op = self.t, self.op
        I = t.I
        c, c1, n = np.unravel_index(int(np.argmin(self.src)), self.src.shape)
        c, c1, n = int(c), int(c1), int(n)
        s = int(self.bit[n])
        cuts, servers = [c1], [n]
        sa, mb = float(W.cl_a[c, c1, n]), float(W.cl_b[c, c1, n])
        lo = c1
        while True:
            cand = np.full(I + 1, INF)
            if self.term[c]:
                cand[I] = self.blk[c, n, lo, I]
            if self.nxt[c] >= 0 and lo + 1 < I:
                cand[lo + 1:I] = op(self.blk[c, n, lo, lo + 1:I], self.D[s, self.nxt[c], n, lo + 1:I])
            hi = int(np.argmin(cand))
            sa += float(W.blk_a[c, n, lo, hi])
            mb = max(mb, float(W.blk_b[c, n, lo, hi]))
            if hi == I:
                break
            c = int(self.nxt[c])
            G = self.U[self.idx[s], c, np.arange(t.N), hi]
            G = np.where(self.ok[s], G, INF)
            n2 = int(np.argmin(op(self.tr[hi, n, :], G)))
            sa += float(W.tr_a[hi, n, n2])
            mb = max(mb, float(W.tr_b[hi, n, n2]))
            s = int(self.idx[s, n2])
            n, lo = n2, hi
            cuts.append(hi)
            servers.append(n)
        return Path(tuple(cuts), tuple(servers), sa, mb)
