"""Local search over chain positions for ``contiguity="chain"`` (ours, not in the peer's paper;
the model is the peer's DP model, Tarnawski et al., NeurIPS 2020, §4).

A chain placement is a position per super-node (:class:`~.common.Contracted`: colour classes with
their backward nodes, forward cycles fused) on a row of ``k + l`` devices, each position an
accelerator or a CPU core, with ``pos(u) <= pos(v)`` on every forward edge: the devices' sets are
then differences of a chain of ideals. Moving a super-node ``s`` to any position between the
largest position of its forward predecessors and the smallest of its forward successors keeps that
order, so every move below is feasible by construction (support and memory are checked per move).

Moves: a super-node to another allowed position (first improvement, super-nodes in random order);
two positions exchange their kinds (which one is the CPU core). A step is taken when it lowers the
objective, or keeps it and lowers the sum of squared excesses of the loads over 98 % of the
objective (the rule of :func:`~.baselines.improve`). At a local optimum a few random moves of
super-nodes on the most loaded position perturb it (iterated local search) until the time limit;
the best placement is returned. Loads are updated in O(tensors touched) per move with per-position
member counts (a tensor is paid on an accelerator that holds some but not all of its members: the
evaluator's rule).

Why: on GNMT-like grids (:func:`splitopt.instances.placement_gen.operator_graph`) the ideal
search stops too wide and HiGHS finds good chain placements only after minutes (gnmt-300 training:
47.07 ms from the ideal search, 40.21 ms from the MILP after 600 s).
"""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import device_indices, evaluate
from splitopt.solvers.placement.common import bits


class _State:
    def __init__(self, instance: PlacementInstance, con, dev: list[int], order: list[int]):
        self.inst, self.con = instance, con
        self.D = instance.n_devices
        k = instance.n_accelerators
        self.cpu_kind = [order[q] >= k for q in range(self.D)]
        qof = {d: q for q, d in enumerate(order)}
        n = con.n
        self.pos = [qof[dev[s]] for s in range(n)]
        self.cap = instance.acc_memory_bytes
        self.members = []
        for su, cm, _sec, _bw in con.tensors:
            self.members.append([su] + bits(cm))
        self.touch = [sorted(set(t)) for t in con.touch]
        self.preds = [bits(con.preds[s]) for s in range(n)]
        self.succs = [bits(con.succs[s]) for s in range(n)]
        self.two = instance.objective == "fwd+bwd"
        self.rebuild()

    def rebuild(self):
        con, D = self.con, self.D
        self.f = np.zeros(D)
        self.b = np.zeros(D)
        self.mem = np.zeros(D)
        for s, q in enumerate(self.pos):
            self._add_node(s, q, 1.0)
        self.cnt = [[0] * D for _ in con.tensors]
        for t, mem in enumerate(self.members):
            for s in mem:
                self.cnt[t][self.pos[s]] += 1
        for t in range(len(self.members)):
            self._tensor(t, 1.0)

    def _add_node(self, s: int, q: int, sign: float):
        con = self.con
        if self.cpu_kind[q]:
            self.f[q] += sign * con.cpuf[s]
            self.b[q] += sign * con.cpub[s]
        else:
            self.f[q] += sign * con.accf[s]
            self.b[q] += sign * con.accb[s]
            self.mem[q] += sign * con.size[s]

    def _tensor(self, t: int, sign: float, only=None):
        _su, _cm, sec, bw = self.con.tensors[t]
        c = self.cnt[t]
        size = len(self.members[t])
        arr = self.b if bw else self.f
        for q in (range(self.D) if only is None else only):
            if not self.cpu_kind[q] and 0 < c[q] < size:
                arr[q] += sign * sec

    def move(self, s: int, q: int):
        q0 = self.pos[s]
        both = (q0, q)
        for t in self.touch[s]:
            self._tensor(t, -1.0, both)
        self._add_node(s, q0, -1.0)
        self._add_node(s, q, 1.0)
        self.pos[s] = q
        for t in self.touch[s]:
            self.cnt[t][q0] -= 1
            self.cnt[t][q] += 1
            self._tensor(t, 1.0, both)

    def allowed(self, s: int) -> range:
        lo = max((self.pos[u] for u in self.preds[s]), default=0)
        hi = min((self.pos[v] for v in self.succs[s]), default=self.D - 1)
        return range(lo, hi + 1)

    def fits(self, s: int, q: int) -> bool:
        if self.cpu_kind[q]:
            return True
        if not self.con.sup[s]:
            return False
        return self.cap is None or self.mem[q] + self.con.size[s] <= self.cap * (1 + 1e-12)

    def score(self) -> tuple[float, float]:
        if self.two:
            v = float(self.f.max() + self.b.max())
            t = np.concatenate([self.f, self.b])
            top = float(t.max())
        else:
            t = self.f + self.b
            v = top = float(t.max())
        ex = np.maximum(t - 0.98 * top, 0.0)
        return v, float(ex @ ex)

    def swap_kinds(self, a: int, b: int) -> bool:
        """Exchange the kinds of positions ``a`` and ``b`` if support and memory allow."""
        if self.cpu_kind[a] == self.cpu_kind[b]:
            return False
        for q_new_acc in (a, b):
            if self.cpu_kind[q_new_acc]:  # becomes an accelerator: its super-nodes must fit
                nodes = [s for s, q in enumerate(self.pos) if q == q_new_acc]
                if not all(self.con.sup[s] for s in nodes):
                    return False
                if self.cap is not None and math.fsum(self.con.size[s] for s in nodes) > self.cap * (1 + 1e-12):
                    return False
        self.cpu_kind[a], self.cpu_kind[b] = self.cpu_kind[b], self.cpu_kind[a]
        self.rebuild()
        return True


def _better(a, b) -> bool:
    return a[0] < b[0] * (1 - 1e-12) or (a[0] <= b[0] * (1 + 1e-12) and a[1] < b[1] * (1 - 1e-9))


def _device_order(instance: PlacementInstance, con, dev: list[int]) -> list[int]:
    """The devices in an order in which every forward edge goes forward (a topological order of the
    devices' quotient graph; a chain placement has one), empty devices last."""
    D = instance.n_devices
    adj = [set() for _ in range(D)]
    for s in range(con.n):
        for v in bits(con.succs[s]):
            if dev[v] != dev[s]:
                adj[dev[s]].add(dev[v])
    used = sorted(set(dev))
    indeg = {d: 0 for d in used}
    for d in used:
        for e in adj[d]:
            indeg[e] += 1
    ready = sorted(d for d in used if indeg[d] == 0)
    out = []
    while ready:
        d = ready.pop(0)
        out.append(d)
        for e in sorted(adj[d]):
            indeg[e] -= 1
            if indeg[e] == 0:
                ready.append(e)
    if len(out) != len(used):
        raise InfeasibleSolution("the placement is not a chain of ideals")
    return out + [d for d in range(D) if d not in set(used)]


def _names(instance: PlacementInstance, st: _State) -> list[str]:
    na = nc = 0
    name_of = []
    for q in range(st.D):
        if st.cpu_kind[q]:
            name_of.append(f"cpu{nc}")
            nc += 1
        else:
            name_of.append(f"acc{na}")
            na += 1
    out = [""] * instance.n_nodes
    for s, mem in enumerate(st.con.members):
        for i in mem:
            out[i] = name_of[st.pos[s]]
    return out


def chain_search(instance: PlacementInstance, assignment, time_limit: float = 5.0, seed: int = 0) -> list[str]:
    """The best chain placement the search finds from ``assignment`` (a chain placement) within
    ``time_limit`` seconds (module docstring); never worse than ``assignment`` (by the evaluator).
    Instances the contraction declines (backward-only colour classes) come back unchanged."""
    from splitopt.solvers.placement.common import contracted

    if instance.contiguity != "chain":
        raise InstanceError("contiguity", f"the chain local search needs contiguity 'chain', got "
                                          f"{instance.contiguity!r}")
    deadline = time.perf_counter() + float(time_limit)
    start_v = evaluate(instance, assignment)[0]
    try:
        con = contracted(instance)
    except InstanceError:
        return list(assignment)
    if con.orphans or con.n == 0:
        return list(assignment)
    p = device_indices(instance, assignment)
    dev = [p[con.members[s][0]] for s in range(con.n)]
    st = _State(instance, con, dev, _device_order(instance, con, dev))
    rng = np.random.default_rng([seed, 3131])
    cur = st.score()
    best_pos, best_kind, best = list(st.pos), list(st.cpu_kind), cur
    order = list(range(con.n))
    stall = 0
    while time.perf_counter() < deadline:
        improved = True
        while improved and time.perf_counter() < deadline:
            improved = False
            rng.shuffle(order)
            for s in order:
                q0 = st.pos[s]
                for q in st.allowed(s):
                    if q == q0 or not st.fits(s, q):
                        continue
                    st.move(s, q)
                    sc = st.score()
                    if _better(sc, cur):
                        cur, q0, improved = sc, q, True
                    else:
                        st.move(s, q0)
            for a in range(st.D):
                for b in range(a + 1, st.D):
                    if st.swap_kinds(a, b):
                        sc = st.score()
                        if _better(sc, cur):
                            cur, improved = sc, True
                        else:
                            st.swap_kinds(a, b)
        if _better(cur, best):
            best_pos, best_kind, best = list(st.pos), list(st.cpu_kind), cur
            stall = 0
        else:
            stall += 1
            if stall > 3:  # back to the best placement before the next perturbation
                st.pos, st.cpu_kind = list(best_pos), list(best_kind)
                st.rebuild()
                stall = 0
        # perturb: a few random feasible moves of super-nodes on the most loaded position
        loads = st.f + st.b
        top = int(np.argmax(loads))
        on_top = [s for s in range(con.n) if st.pos[s] == top]
        for s in rng.permutation(on_top)[: max(1, len(on_top) // 10)]:
            qs = [q for q in st.allowed(int(s)) if q != top and st.fits(int(s), q)]
            if qs:
                st.move(int(s), int(rng.choice(qs)))
        cur = st.score()
    st.pos, st.cpu_kind = best_pos, best_kind
    st.rebuild()
    out = _names(instance, st)
    try:
        v = evaluate(instance, out)[0]
    except InfeasibleSolution:  # pragma: no cover - the moves keep the chain order by construction
        return list(assignment)
    return out if v < start_v else list(assignment)


__all__ = ["chain_search"]
