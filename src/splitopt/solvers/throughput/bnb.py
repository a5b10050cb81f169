"""Corrected branch and bound for the throughput family: exact on every DAG, with or without the
split cap.

Seed 004 Algorithm 1 (paper §IV-A/B) branches on the node of the next layer in a fixed order and
bounds a subtree by the transfers of its padded leaf (the prefix padded with its last node). Corrections
(digest §3.2, §3.4, §6.6):

* **A valid bound.** The padded leaf's transfers are not a bound on a DAG with skip connections
  (the padding invents transfers that another completion avoids; the paper's B&B was suboptimal on
  10 of 300 random 7-layer DAGs, digest §3.2). Here the bound of a prefix is
  ``max(transfers among fixed layers, node loads, water-filling, largest remaining layer)``: a
  transfer counts only when producer and consumer are both placed; the water-filling bound is the
  least ``T`` with ``sum_a max(0, eta_a T - W_a) >= remaining FLOP`` over the nodes that may still
  take layers (digest §6.6). Every term only grows along a branch, so the bound is valid for any
  completion, on any DAG, under every link model and transfer semantics.
* **The search runs.** Depth-first (the printed queue starts empty and never runs, digest §3.4),
  children in increasing order of their bound, the padded leaf of every node as a free incumbent
  (when it is feasible), the best single node as the first incumbent.
* **Symmetry breaking** for interchangeable nodes (same rate, memory and links, no pins): a node of
  such a class is opened only after the earlier members of its class (digest §6.5).
* **Constraints** the paper lacks, enforced while branching: split cap, pins, node memory,
  contiguity (one run per node).

Additions for speed (none in the paper; each keeps the search exact):

* **Root bound from the compute relaxation** (:class:`~splitopt.solvers.throughput.bounds.Makespan`):
  makespan on uniform machines of the layers, after merging layers joined by a tensor that alone
  takes at least the incumbent period on the fastest link (they share a node in every better
  placement). ``min(incumbent, relaxation)`` bounds the optimum; the search ends as soon as an
  incumbent meets it. With two nodes the relaxation is solved exactly by a windowed subset-sum
  dynamic programme (``Makespan._two_nodes``; the paper's Table 2 set-ups).
* **Quota-guided incumbent searches**: depth-first in the layer order, every node gets exactly the
  (large) components the relaxation's optimum gives it, only the transfers are searched. On YOLOv2
  with 3-6 heterogeneous nodes this meets the root bound at once (uncapped optimum proved in ms).
* **Runs under a cap** (``max_splits <= RUN_CAP``): branch on whole runs ``pos..e`` on one node;
  the window of ends is cut by monotone bounds (node and link times grow with ``e``, water-filling of
  the rest shrinks, found by bisection; with one split left the last run's compute bounds it), and
  the last run is scored as a padded leaf.
* **Node-level packing check** in the layer search: a child is pruned when the compute relaxation
  of the remaining layers cannot fit below the incumbent (budgeted; "maybe" never prunes).

It reports the nodes explored and, when stopped by ``time_limit`` or ``node_limit``, the proven
bound (the smallest bound of any unexplored subtree; the root bound when the stop came before the
main search) and the gap.

Issue 21 ("anytime and honest at any size"): one :class:`~splitopt.solvers.deadline.Deadline` is
read in every phase, the relaxation's searches included (a root relaxation gets at most
``ROOT_SHARE`` of the time left); under a cap ``S`` the root relaxation runs on the ``S + 1`` usable
nodes and both searches prune with capped water-filling (``bounds.capped_fits``); the greedy
incumbents run over the ``S + 1`` fastest nodes, with a local search over their order and the best
runs on distinct nodes (:mod:`~splitopt.solvers.throughput.runs`); no bytes are ever put on a
missing link (``s * inf`` added to and removed from the shared medium gave NaN). The phases before
the main search live in :mod:`~splitopt.solvers.throughput.bnb_phases`.
"""

from __future__ import annotations

import math
import sys
import time

from splitopt.errors import InstanceError, NoFeasibleSolution
from splitopt.families import AlgoResult
from splitopt.instances.throughput import ThroughputInstance
from splitopt.models.throughput import single_node_periods
from splitopt.solvers.deadline import Deadline
from splitopt.solvers.throughput.bnb_phases import _REL, RUN_CAP, Phases, _Done, _Stop
from splitopt.solvers.throughput.bounds import Makespan, capped_fits


def _busy(nbytes: float, theta: float) -> float:
    """Seconds to move ``nbytes`` at ``1 / theta`` bytes/s; nothing takes no time even on a missing
    link (``0 * inf`` would be NaN, and ``max`` silently drops a NaN)."""
    return nbytes * theta if nbytes > 0 else 0.0


def solve(instance: ThroughputInstance, time_limit: float | None = None, node_limit: int | None = None,
          symmetry: bool = True, pack_budget: int = 2000, root_budget: int = 200_000) -> AlgoResult:
    """Exact minimum period (see the module docstring); ``AlgoResult.info`` has ``nodes`` explored,
    ``incumbents`` found, ``bound`` and ``gap``."""
    return _BnB(instance, time_limit, node_limit, symmetry, pack_budget, root_budget).run()


class _BnB(Phases):
    def __init__(self, inst: ThroughputInstance, time_limit, node_limit, symmetry: bool, pack_budget: int = 2000,
                 root_budget: int = 200_000):
        self.inst = inst
        L, N = inst.n_layers, inst.n_nodes
        self.L, self.N = L, N
        self.c = list(inst.flop)
        self.eta = list(inst.node_flops)
        theta = inst.inverse_rates()
        self.theta = theta.tolist()
        self.model = inst.link_model
        self.once = inst.transfer == "once"
        self.cap = inst.max_splits if inst.max_splits is not None else L
        self.pins = inst.pin_index
        self.mem = list(inst.mem_bytes) if inst.mem_bytes is not None else [0.0] * L
        nm = inst.node_memory_bytes
        self.mem_cap = [math.inf if (nm is None or nm[a] is None) else nm[a] for a in range(N)]
        self.contiguous = inst.contiguous
        # incoming tensors per consumer: (tensor id, producer, bytes)
        self.tens = [(p, cons, s) for p, cons, s in inst.tensors]
        self.incoming: list[list[tuple[int, int, float]]] = [[] for _ in range(L)]
        for t, (p, cons, s) in enumerate(self.tens):
            for c in cons:
                self.incoming[c].append((t, p, s))
        # tensors crossing each depth s (producer < s <= a consumer): the padded leaf's extra transfers
        self.crossing: list[list[int]] = [[] for _ in range(L + 1)]
        for t, (p, cons, s) in enumerate(self.tens):
            for d in range(p + 1, max(cons) + 1):
                self.crossing[d].append(t)
        self.prefix_flop = [0.0] * (L + 1)
        for i in range(L):
            self.prefix_flop[i + 1] = self.prefix_flop[i] + self.c[i]
        self.run_mode = False
        self.searching = False  # the main search has started (its open bounds are then kept)
        self.suffix_flop = [0.0] * (L + 1)
        for i in range(L - 1, -1, -1):
            self.suffix_flop[i] = self.suffix_flop[i + 1] + self.c[i]
        fastest = max(self.eta)
        self.suffix_layer = [0.0] * (L + 1)  # largest single remaining layer time on the fastest node
        for i in range(L - 1, -1, -1):
            self.suffix_layer[i] = max(self.suffix_layer[i + 1], self.c[i] / fastest)
        self.pinned_later = [set() for _ in range(L + 1)]  # nodes that later pinned layers need
        for i in range(L - 1, -1, -1):
            self.pinned_later[i] = set(self.pinned_later[i + 1])
            if i in self.pins:
                self.pinned_later[i].add(self.pins[i])
        self.cls_prev = [None] * N  # the class member before a, for symmetry breaking
        if symmetry:
            for cl in inst.identical_node_classes():
                for prev, b in zip(cl, cl[1:]):
                    self.cls_prev[b] = prev
        self.dl = Deadline(time_limit)  # kept in every phase: root bound, incumbent searches, search
        self.node_limit = node_limit
        # search state
        self.p = [-1] * L
        self.W = [0.0] * N
        self.M = [0.0] * N
        self.B = [[0.0] * N for _ in range(N)]
        self.cnt = [dict() for _ in self.tens]  # tensor -> {dest node: consumers placed there}
        self.medium = 0.0  # shared medium busy time
        self.used = [False] * N
        self.closed = [False] * N
        self.nodes = 0
        self.incumbent_nodes = 0  # nodes of the capped incumbent searches, not counted in node_limit
        self.incumbents = 0
        self.best = math.inf
        self.best_p: list[int] | None = None
        self.pending: list[list[float]] = []  # per depth: bounds of children not yet explored
        self.stopped = None
        self.mk = Makespan(self.c, self.eta, self.pins)
        self.mk.deadline = self.dl
        self.lb_root = 0.0
        self.pack_budget = pack_budget
        self.root_budget = root_budget
        self.root_info: dict = {}
        self.comp = self.comp_pin = self.comp_flop = self.root_solution = None
        self.pack_calls = 0
        self.pack_pruned = 0

    # ------------------------------------------------------------------ link accounting
    def _res_time(self, a: int, b: int) -> float:
        """Busy time of the resource holding link (a, b) under the link model. Bytes are never put
        on a missing link (``theta = inf``, see :meth:`_place`), so no ``0 * inf`` arises."""
        if self.model == "full-duplex":
            return _busy(self.B[a][b], self.theta[a][b])
        if self.model == "half-duplex":
            return _busy(self.B[a][b], self.theta[a][b]) + _busy(self.B[b][a], self.theta[b][a])
        return self.medium

    def _add(self, a: int, b: int, s: float) -> None:
        self.B[a][b] += s
        if self.model == "shared":
            self.medium += s * self.theta[a][b]

    def _sub(self, a: int, b: int, s: float) -> None:
        self.B[a][b] -= s
        if self.model == "shared":
            self.medium -= s * self.theta[a][b]

    def _place(self, i: int, b: int) -> tuple[float, list]:
        """Put layer ``i`` on node ``b``; returns the largest link-resource time it touched (inf if it
        needs a missing link) and an undo list."""
        undo = []
        touched = 0.0
        for t, p, s in self.incoming[i]:
            a = self.p[p]
            if a == b:
                continue
            cnt = self.cnt[t]
            k = cnt.get(b, 0)
            cnt[b] = k + 1
            if self.once and k:
                undo.append((t, a, b, 0.0))
                continue
            if s <= 0 or math.isinf(self.theta[a][b]):  # nothing to send, or a missing link (the branch
                if s > 0:                                  # is dead): adding and later removing s * inf
                    touched = math.inf                     # on the shared medium gave NaN
                undo.append((t, a, b, 0.0))
                continue
            self._add(a, b, s)
            undo.append((t, a, b, s))
            touched = max(touched, self._res_time(a, b))
        self.p[i] = b
        self.W[b] += self.c[i]
        self.M[b] += self.mem[i]
        return touched, undo

    def _unplace(self, i: int, b: int, undo: list) -> None:
        self.W[b] -= self.c[i]
        self.M[b] -= self.mem[i]
        self.p[i] = -1
        for t, a, bb, s in reversed(undo):
            cnt = self.cnt[t]
            cnt[bb] -= 1
            if not cnt[bb]:
                del cnt[bb]
            if s:
                self._sub(a, bb, s)

    def _enter(self, i: int, last: int, b: int) -> tuple[float, list, bool, bool]:
        """One branching step of the layer searches (:meth:`_dfs`, :meth:`_quota_incumbents`): put
        layer ``i`` on node ``b`` after node ``last`` (``-1`` at the first layer), mark ``b`` used
        and, when ``b`` leaves ``last``, mark ``last`` closed. Returns ``(touched, undo, first_use,
        closed_last)``: the largest link-resource time touched and the undo list (as :meth:`_place`),
        and whether ``b`` was marked used / ``last`` closed here; the caller undoes the last two and
        then calls :meth:`_unplace` (inline: this is the hot path, a second call cost time)."""
        touched, undo = self._place(i, b)
        first_use = not self.used[b]
        self.used[b] = True
        closed_last = last >= 0 and b != last and not self.closed[last]
        if closed_last:
            self.closed[last] = True
        return touched, undo, first_use, closed_last

    # ------------------------------------------------------------------ bounds and leaves
    def _waterfill(self, depth: int, last: int) -> float:
        R = self.suffix_flop[depth]
        if R <= 0:
            return 0.0
        if self.contiguous:  # a node left behind takes no more layers
            open_nodes = [a for a in range(self.N) if a == last or not self.used[a]]
        else:
            open_nodes = range(self.N)
        levels = sorted((self.W[a] / self.eta[a], self.eta[a]) for a in open_nodes)
        rate = 0.0
        have = 0.0  # FLOP that fit below the current level
        for k, (lev, eta) in enumerate(levels):
            nxt = levels[k + 1][0] if k + 1 < len(levels) else math.inf
            rate += eta
            # fill from lev to nxt with the nodes so far
            room = (nxt - lev) * rate if math.isfinite(nxt) else math.inf
            if have + room >= R:
                return lev + (R - have) / rate
            have += room
        return math.inf  # pragma: no cover

    def _cap_fits(self, depth: int, last: int, k: int) -> bool:
        """Whether the layers from ``depth`` on can still fit below the incumbent on some ``k`` of
        the nodes that may take them (:func:`~splitopt.solvers.throughput.bounds.capped_fits`)."""
        if self.contiguous:
            nodes = [a for a in range(self.N) if a == last or not self.used[a]]
        else:
            nodes = None
        return capped_fits(self.W, self.eta, self.suffix_flop[depth], k, self.best * (1 - _REL), nodes)

    def _padded(self, depth: int, q: int, cmax: float, lmax: float) -> float:
        """Period of the prefix padded with node ``q`` (every remaining layer on q), or inf when that
        leaf breaks a constraint."""
        if depth < self.L:
            if any(a != q for a in self.pinned_later[depth]):
                return math.inf
            if self.M[q] + sum(self.mem[depth:]) > self.mem_cap[q] * (1 + 1e-12):
                return math.inf
        comp = max(cmax, (self.W[q] + self.suffix_flop[depth]) / self.eta[q])
        if comp >= self.best:  # cannot become the incumbent: its transfers need not be counted
            return comp
        extra: dict[tuple[int, int], float] = {}
        for t in self.crossing[depth]:
            p, cons, s = self.tens[t]
            a = self.p[p]
            if a == q:
                continue
            if self.once:
                if self.cnt[t].get(q, 0) == 0:
                    extra[(a, q)] = extra.get((a, q), 0.0) + s
            else:
                k = sum(1 for c in cons if c >= depth)
                extra[(a, q)] = extra.get((a, q), 0.0) + s * k
        link = lmax
        if extra:
            if self.model == "shared":
                link = max(link, self.medium + sum(_busy(s, self.theta[a][b]) for (a, b), s in extra.items()))
            else:
                for (a, b), s in extra.items():
                    th = self.theta[a][b]
                    if s <= 0:
                        continue
                    if math.isinf(th):
                        return math.inf
                    if self.model == "full-duplex":
                        link = max(link, (self.B[a][b] + s) * th)
                    else:
                        back = extra.get((b, a), 0.0)
                        link = max(link, (self.B[a][b] + s) * th + _busy(self.B[b][a] + back, self.theta[b][a]))
        return max(comp, link)

    def _offer(self, value: float, depth: int, q: int) -> None:
        if value < self.best:
            self.best = value
            self.best_p = self.p[:depth] + [q] * (self.L - depth)
            self.incumbents += 1
            if self.best <= self.lb_root * (1 + _REL):
                raise _Done

    # ------------------------------------------------------------------ search
    def _children(self, depth: int, last: int, splits: int) -> list[int]:
        i = depth
        if i in self.pins:
            cand = [self.pins[i]]
        else:
            cand = range(self.N)
        out = []
        for b in cand:
            if last >= 0 and b != last:
                if splits + 1 > self.cap:
                    continue
                if self.contiguous and self.used[b]:
                    continue
            if self.M[b] + self.mem[i] > self.mem_cap[b] * (1 + 1e-12):
                continue
            if not self.used[b] and self.cls_prev[b] is not None and not self.used[self.cls_prev[b]]:
                continue  # symmetry: open class members in label order
            out.append(b)
        return out

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes & 15 == 0 or self.node_limit is not None:
            if self.node_limit is not None and self.nodes >= self.node_limit:
                self.stopped = "node_limit"
                raise _Stop
            if self.dl.over():
                self.stopped = "time_limit"
                raise _Stop

    def _search(self) -> None:
        """The main search: by runs when the split cap is small, else layer by layer."""
        self.searching = True
        if self.cap <= RUN_CAP:
            self.run_mode = True
            self._runs(0, -1, 0, 0.0, 0.0)
        else:
            self._dfs(0, -1, 0, 0.0, 0.0)

    def _wf_at(self, e: int, b: int, extra: float) -> float:
        """Water-filling bound after a run on ``b`` ends at ``e`` having added ``extra`` FLOP to it
        (not yet placed): non-increasing in ``e``."""
        self.W[b] += extra
        try:
            return self._waterfill(e + 1, b)
        finally:
            self.W[b] -= extra

    def _runs(self, pos: int, last: int, splits: int, cmax: float, lmax: float) -> None:
        """Branch on whole runs: a run of layers ``pos..e`` on one node ``b != last``, for every end
        ``e`` in the window where ``max(node and link times so far) < incumbent`` (non-decreasing in
        ``e``) and the water-filling bound of the rest ``< incumbent`` (non-increasing in ``e``: its
        start is found by bisection). With no split left the run takes every remaining layer and is
        scored as a padded leaf; with one split left each end is scored with every last node."""
        self._tick()
        thr = self.best * (1 - _REL)
        left = self.cap - splits  # splits still allowed after this run starts
        for b in self._children(pos, last, splits - (last >= 0)):
            if b == last:
                continue
            first_use = not self.used[b]
            closed_last = last >= 0 and not self.closed[last]
            if left == 0 or pos == self.L - 1:
                self.used[b] = True
                if closed_last:
                    self.closed[last] = True
                try:
                    self._offer(self._padded(pos, b, cmax, lmax), pos, b)
                finally:
                    if closed_last:
                        self.closed[last] = False
                    if first_use:
                        self.used[b] = False
                continue
            self.used[b] = True
            if closed_last:
                self.closed[last] = True
            placed = []
            try:
                # bisection for the first end whose water-filling bound is below the incumbent
                lo, hi = pos, self.L - 1
                pre = self.prefix_flop
                if left == 1:  # the rest is one run on one other node: its compute alone bounds the end
                    lasts = [c for c in range(self.N) if c != b and not (self.contiguous and self.used[c])]

                    def ok(e):
                        return min(((self.W[c] + self.suffix_flop[e + 1]) / self.eta[c] for c in lasts),
                                   default=math.inf) < thr
                else:
                    def ok(e):
                        return self._wf_at(e, b, pre[e + 1] - pre[pos]) < thr and self.suffix_layer[e + 1] < thr
                while lo < hi:
                    mid = (lo + hi) // 2
                    if ok(mid):
                        hi = mid
                    else:
                        lo = mid + 1
                e_lo = lo
                cm, lm = cmax, lmax
                for e in range(pos, self.L):
                    thr = self.best * (1 - _REL)
                    if e in self.pins and self.pins[e] != b:
                        break
                    if self.M[b] + self.mem[e] > self.mem_cap[b] * (1 + 1e-12):
                        break
                    touched, undo = self._place(e, b)
                    placed.append((e, undo))
                    cm = max(cm, self.W[b] / self.eta[b])
                    lm = max(lm, touched)
                    if max(cm, lm) >= thr or not math.isfinite(lm):
                        break
                    if e == self.L - 1:
                        self._offer(max(cm, lm), self.L, b)
                        break
                    if e < e_lo:
                        continue
                    self._offer(self._padded(e + 1, b, cm, lm), e + 1, b)
                    if left == 1:  # the next run is the last: score it with every node
                        for c in self._children(e + 1, b, splits):
                            if c == b:
                                continue
                            fu = not self.used[c]
                            self.used[c] = True
                            cl = not self.closed[b]
                            self.closed[b] = True
                            try:
                                self._offer(self._padded(e + 1, c, cm, lm), e + 1, c)
                            finally:
                                if cl:
                                    self.closed[b] = False
                                if fu:
                                    self.used[c] = False
                        self._tick()
                        continue
                    lb = max(cm, lm, self.suffix_layer[e + 1], self._waterfill(e + 1, b))
                    if lb < self.best * (1 - _REL) and (left >= self.N or self._cap_fits(e + 1, b, left)):
                        self._runs(e + 1, b, splits + 1, cm, lm)
            finally:
                for e, undo in reversed(placed):
                    self._unplace(e, b, undo)
                if closed_last:
                    self.closed[last] = False
                if first_use:
                    self.used[b] = False

    def _dfs(self, depth: int, last: int, splits: int, cmax: float, lmax: float) -> None:
        self._tick()
        if depth == self.L:
            self._offer(max(cmax, lmax), depth, last)
            return
        kids = []
        for b in self._children(depth, last, splits):
            touched, undo, first_use, closed_last = self._enter(depth, last, b)
            cm = max(cmax, self.W[b] / self.eta[b])
            lm = max(lmax, touched)
            lb = max(cm, lm, self.suffix_layer[depth + 1], self._waterfill(depth + 1, b))
            k = self.cap - splits - (last >= 0 and b != last) + 1  # nodes the rest can still use
            if lb < self.best * (1 - _REL) and k < self.N and not self._cap_fits(depth + 1, b, k):
                lb = self.best
            if lb < self.best * (1 - _REL) and math.isfinite(lm) and self.pack_budget:
                self.pack_calls += 1
                if not self.mk.packable(depth + 1, self.W, self.best * (1 - _REL), self.pack_budget):
                    self.pack_pruned += 1
                    lb = self.best
            if lb < self.best * (1 - _REL) and math.isfinite(lm):
                self._offer(self._padded(depth + 1, b, cm, lm), depth + 1, b)
                kids.append((lb, b, cm, lm))
            if closed_last:
                self.closed[last] = False
            if first_use:
                self.used[b] = False
            self._unplace(depth, b, undo)
        kids.sort(key=lambda k: (k[0], k[1] != last))
        self.pending.append([k[0] for k in kids])
        try:
            for j, (lb, b, cm, lm) in enumerate(kids):
                self.pending[-1] = [k[0] for k in kids[j:]]
                if lb >= self.best * (1 - _REL):
                    break
                _touched, undo, first_use, closed_last = self._enter(depth, last, b)
                try:
                    self._dfs(depth + 1, b, splits + (last >= 0 and b != last), cm, lm)
                finally:
                    if closed_last:
                        self.closed[last] = False
                    if first_use:
                        self.used[b] = False
                    self._unplace(depth, b, undo)
            self.pending[-1] = []
        finally:
            if self.stopped is None:
                self.pending.pop()

    def _reached_root_bound(self) -> bool:
        return self.best_p is not None and self.best <= self.lb_root * (1 + _REL)

    def _check_time(self) -> None:
        """Between phases: stop (status ``time_limit``) once the deadline has passed."""
        if self.dl.over():
            self.stopped = "time_limit"
            raise _Stop

    def run(self) -> AlgoResult:
        """The phases in order (first incumbents, root bound, quota incumbents, capped incumbents,
        search), each watching the one deadline; Python's recursion limit is raised to cover the
        layer-deep searches (a 500-layer graph) and restored afterwards."""
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 4 * self.L + 2000))
        try:
            return self._run()
        finally:
            sys.setrecursionlimit(old)

    def _run(self) -> AlgoResult:
        if self.L == 0:  # pragma: no cover - instances have layers
            return AlgoResult([], bound=0.0)
        t0 = time.perf_counter()
        # first incumbent: the best feasible single node
        for a in sorted(range(self.N), key=single_node_periods(self.inst).__getitem__):
            v = self._padded(0, a, 0.0, 0.0)
            if math.isfinite(v):
                self.best, self.best_p = v, [a] * self.L
                break
        try:
            self._greedy_incumbents()
            self._check_time()
            for _round in range(3):  # a better incumbent merges more layers: a stronger root bound
                before = self.best
                self._root_bound()
                if self._reached_root_bound():
                    raise _Done
                self._check_time()
                for big in (0.0, 0.05) if self.cap > RUN_CAP else ():  # exact counts, then large ones only
                    self._quota_incumbents(big=big)
                    if self._reached_root_bound():
                        raise _Done
                    self._check_time()
                if not self.best < before:
                    break
            for phase in (self._capped_incumbents, self._search):
                if self._reached_root_bound():
                    raise _Done
                self._check_time()
                phase()
        except (_Stop, _Done):
            pass
        if self.best_p is None:
            if self.stopped == "time_limit":
                raise self.dl.no_answer()
            if self.stopped:
                raise InstanceError("instance", f"no feasible placement found before the {self.stopped}")
            raise NoFeasibleSolution("no feasible placement (pins, memory, cap and contiguity conflict)")
        if self.stopped:
            if self.run_mode or not self.searching:  # no open bounds kept (run search) or none yet
                bound = min(self.best, self.lb_root)  # (stopped before the search): the root bound
            else:
                open_bounds = [b for level in self.pending for b in level]
                bound = max(self.lb_root, min([self.best] + open_bounds))
            status = self.stopped if self.stopped == "time_limit" else "feasible"
            if bound >= self.best * (1 - _REL):  # the bound met the incumbent before the stop
                bound, status = self.best, "optimal"
        else:
            bound, status = self.best, "optimal"
        gap = (self.best - bound) / self.best if self.best > 0 else 0.0
        return AlgoResult([self.inst.nodes[a] for a in self.best_p], status=status, bound=bound,
                          info={"nodes": self.nodes, "incumbent_nodes": self.incumbent_nodes, "incumbents": self.incumbents, "gap": gap,
                                "seconds": time.perf_counter() - t0, "stopped": self.stopped,
                                "pack_calls": self.pack_calls, "pack_pruned": self.pack_pruned, **self.root_info})


__all__ = ["solve"]
