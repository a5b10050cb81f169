"""Branch and price on the configuration LP of the device-placement model (issue 22; ours, not in
the peer's paper, Tarnawski et al., NeurIPS 2020, §4): decides whether some placement has value
``<= V``, where the LP alone (:mod:`.colgen`) reaches ``k`` columns at ``V`` and so proves nothing.

Each node is the configuration LP of :class:`~.configlp._ColGen` under branching decisions:

- *CPU or accelerator* for a class the LP splits between the two (with CPU fractions: a class on a
  CPU core leaves the covering rows and takes its CPU time off the cores' capacity; with CPU-set
  columns (convex pricing): the accelerator or the CPU pricing may not take it);
- *Ryan-Foster pairs* (Ryan and Foster, 1981): classes ``a, b`` such that some column of positive
  value holds both and another holds just one; the *same* child admits only columns holding both
  or neither, the *apart* child none holding both. Both children exclude the LP solution; the DP
  pricing (:class:`~.pathdp._PathDP`) carries a pair as a pseudo-tensor of no seconds whose code
  is the first class's choice, so the pricing stays exact under the branching.

A node is pruned when its Lagrangian bound exceeds ``k`` (the proof of :mod:`.colgen`: the node's
LP is a relaxation of the placements that meet its decisions). Where no pair and no class can be
branched on, the columns of positive value are disjoint and, the covering rows met, make a
placement: it is scored by the evaluator and, at most ``V``, refutes ``V``. Depth first, the child
the LP leans to first. The answer ``"proven"`` needs every node pruned.

Applies wherever the DP prices the LP. Where memory could bind, a node's LP switches to the LP with
memory as the root's does (:meth:`~.configlp._ColGen._with_memory`; since 2026-11-29, priced by the
DP with memory exact, which honours the node's pairs: the seeded BERT-like 300-node graph,
non-contiguous, certified 0.281573 ms at its first node where 97 nodes in 19 s stayed undecided).
Before, only the root switched: a node's columns could exceed memory, so it proved less than the
root's LP, and a leaf whose columns do not fit is open (below); where the DP with memory gives up
(:data:`~.memoryprice.MEMORY_DP_POINTS`) a node's LP is undecided (the pricing MILP does not know the
node's pairs).
Where the DP prices a relaxation (all sets for a convex instance whose convex DP has too many codes; the max-load of a
fwd+bwd instance, never above its value), proofs stay valid, but a leaf's placement may not fit in
memory, not be convex or exceed ``V`` by its objective: such a leaf is *open* (no proof at ``V``)
and the search goes on for a placement elsewhere.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from splitopt.solvers.placement.columns import _placement
from splitopt.solvers.placement.configlp import _ColGen
from splitopt.solvers.placement.pathdp import LOAD_TOL, _PathDP
from splitopt.solvers.placement.pricing import _Data

EPS = 1e-6
"""Column values below this count as zero."""

BRANCH_MAX_CODES = 4 * 729
"""A node whose pairs open more codes than this at a step is undecided (its plan is built in
Python, about a second per thousand codes; four times the non-contiguous DP's limit)."""


@dataclass
class Node:
    """Branching decisions: pairs ``(a, b, same)`` and the classes decided on a CPU core or on an
    accelerator."""

    pairs: tuple = ()
    on_cpu: np.ndarray = field(default=None)
    off_cpu: np.ndarray = field(default=None)
    #: the parent's smoothing centre (its duals: the child's LP differs by one decision)
    centre: np.ndarray | None = None

    def admitted(self, cols, cpu: bool) -> np.ndarray:
        """Which of the sets ``cols`` (boolean masks; of a CPU core where ``cpu``) meet the decisions."""
        if len(cols) == 0:
            return np.zeros(0, bool)
        X = np.asarray(cols, bool).reshape(len(cols), -1)
        ok = ~(X & (self.off_cpu if cpu else self.on_cpu)).any(axis=1)
        for a, b, same in self.pairs:
            ok &= (X[:, a] == X[:, b]) if same else ~(X[:, a] & X[:, b])
        return ok


class BranchPrice:
    """The search at one value ``V`` (:meth:`decide`), with a pool of columns shared by its nodes."""

    def __init__(self, instance, d: _Data, V: float, columns=(), cpu_columns=()):
        self.instance, self.d, self.V = instance, d, V
        root = _ColGen(d, V, list(columns), cpu_columns=list(cpu_columns))
        self.dp, self.cpu_dp = root.dp, root.cpu_dp
        self.ok = self.dp is not None  # the branching lives in the DP's codes
        self.pool, self.cpu_pool = list(root.cols), list(root.cpu_cols)
        self.nodes = 0

    def _dps(self, node: Node):
        d, V = self.d, self.V
        dp = _PathDP(d, V, self.dp.order, self.dp.convex, pairs=node.pairs)
        dp.allowed = self.dp.allowed & ~node.on_cpu
        cpu_dp = None
        if self.cpu_dp is not None:
            cpu_dp = _PathDP(d, V, self.cpu_dp.order, self.cpu_dp.convex, cpu=True, pairs=node.pairs)
            cpu_dp.allowed = self.cpu_dp.allowed & ~node.off_cpu
        if not node.pairs:  # the root's plans serve (they are per mask; pairs change the codes)
            dp._plans = self.dp._plans
            if cpu_dp is not None:
                cpu_dp._plans = self.cpu_dp._plans
        if (dp._plan(BRANCH_MAX_CODES) is None
                or (cpu_dp is not None and cpu_dp._plan(BRANCH_MAX_CODES) is None)):
            return None  # the pairs open too many codes
        return dp, cpu_dp

    def decide(self, deadline: float | None, max_nodes: int | None = None):
        """``(verdict, device per class or None)``: ``"proven"`` (no placement of value ``<= V``),
        ``"found"`` (a placement of value ``<= V``, by the evaluator) or ``"undecided"`` (the
        deadline, ``max_nodes``, a pricing with too many codes, or a leaf whose placement the
        evaluator rejects)."""
        d, V = self.d, self.V
        if not self.ok:
            return "undecided", None
        zero = np.zeros(d.G, bool)
        stack = [Node((), zero, zero)]
        open_leaf = False  # a leaf whose placement the evaluator rejects: no proof, the search goes on
        while stack:
            if (deadline is not None and time.perf_counter() >= deadline) or \
                    (max_nodes is not None and self.nodes >= max_nodes):
                return "undecided", None
            node = stack.pop()
            self.nodes += 1
            if self.cpu_dp is None and math.fsum(d.cpu[node.on_cpu]) > d.l * V * (1 + 1e-12):
                continue  # the CPU cores cannot hold the classes decided on them
            dps = self._dps(node)
            if dps is None:
                return "undecided", None
            cg = _ColGen(d, V, list(self.pool), cpu_columns=list(self.cpu_pool), node=node, dps=dps)
            verdict, _L = cg.run(d.k, deadline, node.centre)
            self._keep(cg)
            if verdict == "proven":
                continue
            if verdict != "no":
                return "undecided", None
            kids = self._branch(cg, node)
            if kids is None:  # a leaf: the columns make a placement
                place = self._leaf(cg)
                if place is not None:
                    return "found", place
                open_leaf = True
                continue
            for kid in kids:
                kid.centre = cg.centre
            stack.extend(reversed(kids))  # the first child is searched first
        return ("undecided" if open_leaf else "proven"), None

    def _keep(self, cg: _ColGen) -> None:
        seen = {S.tobytes() for S in self.pool}
        self.pool += [S for S in cg.cols if S.tobytes() not in seen]
        seen = {S.tobytes() for S in self.cpu_pool}
        self.cpu_pool += [S for S in cg.cpu_cols if S.tobytes() not in seen]

    def _branch(self, cg: _ColGen, node: Node):
        """The two children (the one the LP leans to first), or ``None`` at a leaf."""
        d = self.d
        lam, lam_cpu, y = cg.master.values()
        acc = [(S, v) for S, v in zip(cg.cols, lam) if v > EPS]
        cpu = [(S, v) for S, v in zip(cg.cpu_cols, lam_cpu) if v > EPS]
        on_acc = np.zeros(d.G)
        for S, v in acc:
            on_acc[S] += v
        on_cpu = np.zeros(d.G)
        for S, v in cpu:
            on_cpu[S] += v
        if self.cpu_dp is None:
            on_cpu = np.where(cg.fixed, 0.0, y)
        # a class split between a CPU core and the accelerators: the side it leans to first
        free = ~node.on_cpu & ~node.off_cpu
        split = free & (on_cpu > EPS) & ((on_acc > EPS) | (on_cpu < 1 - EPS))
        if split.any():
            g = int(np.flatnonzero(split)[np.argmin(np.abs(on_cpu[split] - 0.5))])
            to_cpu = Node(node.pairs, node.on_cpu | _one(d.G, g), node.off_cpu)
            to_acc = Node(node.pairs, node.on_cpu, node.off_cpu | _one(d.G, g))
            return [to_cpu, to_acc] if on_cpu[g] >= 0.5 else [to_acc, to_cpu]
        cols = acc + cpu
        if not cols:
            return None
        X = np.array([S for S, _v in cols], float)
        v = np.array([v for _S, v in cols])
        both = (X.T * v) @ X  # value of the columns holding both classes
        cover = np.diag(both)
        # pairs held together by some column and apart by another
        cand = (both > EPS) & ((cover[:, None] - both > EPS) | (cover[None, :] - both > EPS))
        np.fill_diagonal(cand, False)
        if not cand.any():
            return None
        pos = np.empty(d.G)
        pos[self.dp.order] = np.arange(d.G)
        a_, b_ = np.nonzero(np.triu(cand))
        if a_.size == 0:
            a_, b_ = np.nonzero(cand)
        # closest to one half, then the nearest in the DP's order (a pair opens a code meanwhile)
        score = np.abs(both[a_, b_] - 0.5) + 1e-3 * np.abs(pos[a_] - pos[b_]) / d.G
        j = int(np.argmin(score))
        a, b = int(a_[j]), int(b_[j])
        same = Node(node.pairs + ((a, b, True),), node.on_cpu, node.off_cpu)
        apart = Node(node.pairs + ((a, b, False),), node.on_cpu, node.off_cpu)
        return [same, apart] if both[a, b] >= 0.5 else [apart, same]

    def _leaf(self, cg: _ColGen):
        """The placement of a leaf's disjoint columns (CPU fractions: the classes outside them go to
        the least loaded core, by decreasing CPU time), scored by the evaluator; ``None`` where it
        exceeds ``V`` or is infeasible."""
        from splitopt.errors import InfeasibleSolution
        from splitopt.models.placement import evaluate

        d, V = self.d, self.V
        lam, lam_cpu, _y = cg.master.values()
        place = np.full(d.G, -1)
        accs = [S for S, v in zip(cg.cols, lam) if v > EPS]
        if len(accs) > d.k:
            return None
        for dev, S in enumerate(accs):
            place[S] = dev
        if self.cpu_dp is not None:
            cores = [S for S, v in zip(cg.cpu_cols, lam_cpu) if v > EPS]
            if len(cores) > d.l:
                return None
            for c, S in enumerate(cores):
                place[S & (place < 0)] = d.k + c
        else:
            load = np.zeros(d.l)
            rest = np.flatnonzero(place < 0)
            for g in rest[np.argsort(-d.cpu[rest], kind="stable")]:
                c = int(np.argmin(load))
                load[c] += d.cpu[g]
                place[g] = d.k + c
        if (place < 0).any():
            return None
        try:
            value = evaluate(self.instance, _placement(self.instance, d, place))[0]
        except InfeasibleSolution:
            return None
        return place if value <= V * (1 + LOAD_TOL) else None


def _one(n: int, g: int) -> np.ndarray:
    m = np.zeros(n, bool)
    m[g] = True
    return m


__all__ = ["BranchPrice", "Node"]
