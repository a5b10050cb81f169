"""The phases of the corrected throughput B&B (:mod:`splitopt.solvers.throughput.bnb`) before its main
search: first incumbents (greedy runs over the ``S + 1`` fastest nodes, a local search over their
order, the best runs on distinct nodes over node subsets, exact searches under caps 1 and 2, quota
searches guided by the compute relaxation) and the root bound (the compute relaxation of the merged
components, on the ``S + 1`` usable nodes under a cap). A mixin of ``bnb._BnB``: the methods use its
search state (see that module's docstring for the method, the paper and the corrections).
"""

from __future__ import annotations

import math

from splitopt.solvers.deadline import Deadline
from splitopt.solvers.throughput.bounds import Makespan
from splitopt.solvers.throughput.runs import best_runs

_REL = 1e-12  # a subtree is pruned when its bound reaches the incumbent within this relative tolerance
ORDER_SHARE = 0.1  # share of the time left for the local search over greedy node orders
ORDER_TRIES = 400  # and at most this many orders scored
ROOT_SHARE = 0.3  # at most this share of the time left goes to one root relaxation (time_limit only)
RUN_CAP = 6  # caps up to this many split points are searched by runs (bnb._runs)


class _Stop(Exception):
    pass


class _Done(Exception):
    """The incumbent reached the root lower bound: it is optimal."""


class Phases:
    """First incumbents and the root bound of ``bnb._BnB`` (a mixin)."""

    def _greedy_incumbents(self) -> None:
        """Contiguous runs in the layer order, one node after another (fastest first, then slowest
        first), each run as long as its compute and its cut transfer fit a target period; the least
        target that works is found by bisection and the placement scored by the evaluator. A fast,
        good first incumbent (the search proves or improves it)."""
        from splitopt.errors import InfeasibleSolution
        from splitopt.models.throughput import evaluate

        cut = [0.0] * (self.L + 1)  # bytes crossing a cut after layer i (tensors produced <= i, consumed > i)
        for p, cons, s in self.tens:
            for d in range(p, max(cons)):
                cut[d] += s
        # under a cap S only S + 1 runs: the S + 1 fastest nodes (all N orders broke any cap < N - 1)
        k = min(self.N, self.cap + 1)
        fast = sorted(range(self.N), key=lambda a: -self.eta[a])[:k]
        orders = {tuple(fast), tuple(reversed(fast))}
        fastest_link = min((self.theta[a][b] for a in range(self.N) for b in range(self.N) if a != b),
                           default=math.inf)

        def runs(T, order):
            p, pos = [], 0
            load = [0.0] * self.N
            for k, a in enumerate(order):
                if pos == self.L:
                    break
                if k == len(order) - 1:
                    end = self.L - 1
                    if (load[a] + math.fsum(self.c[pos:])) / self.eta[a] > T:
                        return None
                else:
                    run, end, best_end = load[a], pos - 1, None
                    while end + 1 < self.L and (run + self.c[end + 1]) / self.eta[a] <= T:
                        end += 1
                        run += self.c[end]
                        if end == self.L - 1 or cut[end] * fastest_link <= T:
                            best_end = end
                    if best_end is None:
                        continue  # this node takes nothing here
                    end = best_end
                load[a] += math.fsum(self.c[pos:end + 1])
                p.extend([a] * (end - pos + 1))
                pos = end + 1
            return p if pos == self.L else None

        if not self.contiguous:  # the same node order visited again (threads), within the cap
            orders = {o * r for o in orders for r in (1, 2, 3) if len(o) * r - 1 <= self.cap}
        lo = max(self.suffix_flop[0] / sum(self.eta), self.suffix_layer[0])

        def try_order(order) -> float:
            """Score the least-period runs of ``order`` (bisection on T), keep it if it improves."""
            a_lo, a_hi = lo, self.best if math.isfinite(self.best) else self.suffix_flop[0] / min(self.eta)
            found = None
            for _ in range(50):
                mid = 0.5 * (a_lo + a_hi)
                p = runs(mid, order)
                if p is None:
                    a_lo = mid
                else:
                    a_hi, found = mid, p
                if a_hi - a_lo <= 1e-9 * a_hi:
                    break
            if found is None:
                return math.inf
            try:
                v = evaluate(self.inst, found)[0]
            except InfeasibleSolution:
                return math.inf
            if v < self.best:
                self.best, self.best_p = v, found
                self.incumbents += 1
            return v

        scored = sorted((try_order(o), o) for o in orders)
        start = next((list(o) for v, o in scored if math.isfinite(v) and len(o) == len(fast)), fast)
        if len(fast) > 2:
            self._improve_order(start, try_order)
            # the best runs on distinct nodes over node subsets (runs.best_runs), scored by the evaluator
            stop = None if self.dl.end is None else Deadline(ORDER_SHARE * self.dl.remaining())
            found = best_runs(self.c, self.eta, k, lambda j, T: cut[j] * fastest_link <= T, deadline=stop,
                              hi=self.best)
            if found is not None:
                try:
                    v = evaluate(self.inst, found)[0]
                except InfeasibleSolution:
                    v = math.inf
                if v < self.best:
                    self.best, self.best_p = v, found
                    self.incumbents += 1

    def _improve_order(self, order: list[int], try_order, max_tries: int = ORDER_TRIES) -> None:
        """Local search over the node order of the greedy runs: swap two positions or replace a node
        by an unused one while that lowers the evaluated period (first improvement), within
        ``max_tries`` scorings and :data:`ORDER_SHARE` of the time left. Heuristic: its value only
        ever becomes an incumbent (issue 21: on ResNet-152 over 10 nodes with the cap 7 the
        fastest-first order alone stayed 2.6 % above the bound)."""
        stop = None if self.dl.end is None else Deadline(ORDER_SHARE * self.dl.remaining())
        best = self.best
        tries = 0
        improved = True
        while improved:
            improved = False
            unused = [a for a in range(self.N) if a not in order]
            moves = [("swap", i, j) for i in range(len(order)) for j in range(i + 1, len(order))]
            moves += [("put", i, a) for i in range(len(order)) for a in unused]
            for kind, i, j in moves:
                if tries >= max_tries or (stop is not None and stop.over()) or self.dl.over():
                    return
                cand = list(order)
                if kind == "swap":
                    cand[i], cand[j] = cand[j], cand[i]
                else:
                    cand[i] = j
                tries += 1
                v = try_order(tuple(cand))
                if v < best * (1 - 1e-12):
                    best, order, improved = v, cand, True
                    break

    def _capped_incumbents(self, caps=(1, 2), node_limit: int = 200_000) -> None:
        """Exact searches of the same instance restricted to 1 and 2 split points (small trees) give
        feasible incumbents for the larger problem; they run only when the real cap is larger."""
        for cap in caps:
            if cap >= self.cap:
                break
            limit = node_limit if self.node_limit is None else min(node_limit, self.node_limit)
            sub = type(self)(self.inst.with_(max_splits=cap), None, limit, any(c is not None for c in self.cls_prev),
                       self.pack_budget)
            sub.dl = self.dl
            sub.mk.deadline = self.dl
            sub.best, sub.best_p = self.best, self.best_p
            try:
                sub._search()
            except _Stop:
                pass
            if sub.best < self.best:
                self.best, self.best_p = sub.best, sub.best_p
                self.incumbents += 1
            self.incumbent_nodes += sub.nodes

    def _components(self, U: float):
        """Layers that share a node in every placement with a period below ``U``: a tensor whose bytes
        take at least ``U`` on the fastest link never crosses one. Returns (component root per layer =
        its first layer, pinned node per root or None), or None when two pins meet in one component
        (then nothing beats ``U``)."""
        fastest = min((self.theta[a][b] for a in range(self.N) for b in range(self.N) if a != b), default=math.inf)
        parent = list(range(self.L))

        def find(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for p, cons, s in self.tens:
            if s * fastest >= U * (1 - _REL):
                for c in cons:
                    a, b = find(p), find(c)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
        root = [find(i) for i in range(self.L)]
        pin: dict[int, int] = {}
        for i, a in self.pins.items():
            if pin.setdefault(root[i], a) != a:
                return None
        return root, pin

    def _root_nodes(self) -> list[int] | None:
        """The nodes of the capped compute relaxation: with at most ``S`` split points a placement
        uses at most ``S + 1`` nodes, among them every pinned one; the makespan over any such set
        is at least the makespan over the pinned nodes plus the fastest others (pair the free nodes
        of any set with these by speed: each is at least as fast). ``None`` when the cap leaves
        every node usable (or the pins alone exceed it: the search then finds nothing)."""
        k = self.cap + 1
        if k >= self.N:
            return None
        pinned = sorted(set(self.pins.values()))
        if len(pinned) > k:
            return None
        free = sorted((a for a in range(self.N) if a not in pinned), key=lambda a: -self.eta[a])
        return sorted(pinned + free[:k - len(pinned)])

    def _root_bound(self) -> None:
        """Root lower bound: fluid, largest layer and the compute relaxation (bounds.Makespan) of the
        components of :meth:`_components` at the incumbent; a solution below the incumbent keeps each
        component on one node, so ``min(incumbent, relaxation)`` bounds the optimum. Under a split
        cap ``S < N - 1`` the relaxation runs on the ``S + 1`` nodes of :meth:`_root_nodes` (issue
        21: ``sum(FLOP) / sum(all rates)`` ignored the cap; on ResNet-152 with 8 nodes and ``S = 3``
        it left a 48.6 % gap)."""
        base = max(self._waterfill(0, -1), self.suffix_layer[0])
        comps = self._components(self.best) if math.isfinite(self.best) else self._components(math.inf)
        if comps is None:
            lb, val, exact = self.best, math.inf, True
        else:
            root, pin = comps
            flop: dict[int, float] = {}
            for i in range(self.L):
                flop[root[i]] = flop.get(root[i], 0.0) + self.c[i]
            sub = self._root_nodes()
            idx = list(range(self.N)) if sub is None else sub
            pos = {a: j for j, a in enumerate(idx)}
            jobs = [(r, f, None if pin.get(r) is None else pos[pin[r]]) for r, f in sorted(flop.items())]
            mk = Makespan(self.c, [self.eta[a] for a in idx], jobs=jobs)
            # a share of the time left, so that a hard relaxation leaves time for the incumbents
            mk.deadline = self.dl if self.dl.end is None else Deadline(ROOT_SHARE * self.dl.remaining())
            budget = self.root_budget if self.cap > RUN_CAP else min(self.root_budget, 2000)
            val, exact = mk.value(0, None, budget) if budget else (0.0, False)
            lb = min(self.best, val)
            sol = None if mk.solution is None else [
                (size, [cnt[pos[a]] if a in pos else 0 for a in range(self.N)]) for size, cnt in mk.solution]
            self.comp, self.comp_pin, self.comp_flop, self.root_solution = root, pin, flop, sol
        self.lb_root = max(self.lb_root, base, lb)
        self.root_info = {"makespan_bound": val, "makespan_exact": exact, "root_bound": self.lb_root,
                          "components": len(set(self.comp)) if self.comp else None}

    def _quota_incumbents(self, budget: int = 20_000, big: float = 0.05) -> None:
        """Depth-first search in the layer order for a placement whose period meets the root bound
        ``tau``: every node takes exactly the large components (FLOP at least ``big`` times the largest,
        counted per FLOP value) that the compute relaxation's optimum gives it; smaller components go
        anywhere their node keeps ``W_b + reserved_b <= tau eta_b`` (``reserved`` = its large components
        still to come) and the remaining small FLOP still fits (fluid). Links are searched with the
        node of the previous layer first. A placement found is optimal (it meets the bound); the
        search is a heuristic within ``budget`` nodes, the proof is the bound."""
        sol = self.root_solution
        if not sol or self.comp is None:
            return
        root, pin, cflop = self.comp, self.comp_pin, self.comp_flop
        tau = self.lb_root * (1 + 1e-12)
        fmax = max(cflop.values())
        quota = {size: list(cnt) for size, cnt in sol if size >= big * fmax}
        reserved = [math.fsum(size * cnt[a] for size, cnt in quota.items()) for a in range(self.N)]
        small_left = [math.fsum(f for r, f in cflop.items() if r not in pin and f not in quota)]
        cap = [tau * self.eta[a] for a in range(self.N)]
        count = [0]

        def rec(depth, last, splits, cmax, lmax):
            count[0] += 1
            if count[0] > budget or (not count[0] & 255 and self.dl.over()):
                raise _Stop
            if depth == self.L:
                self._offer(max(cmax, lmax), depth, last)
                return
            kids = self._children(depth, last, splits)
            r = root[depth]
            kind = None
            if r < depth:
                kids = [b for b in kids if b == self.p[r]]
            elif r in pin:
                kids = [b for b in kids if b == pin[r]]
            elif cflop[r] in quota:
                kind = "big"
                q = quota[cflop[r]]
                kids = [b for b in kids if q[b] > 0]
            else:
                kind = "small"
                f = cflop[r]
                kids = [b for b in kids if self.W[b] + reserved[b] + f <= cap[b]]
            scored = []
            for b in kids:
                touched, undo = self._place(depth, b)
                self._unplace(depth, b, undo)
                scored.append((b != last, touched, b))
            scored.sort()
            for _x, _t, b in scored:
                touched, undo, first_use, closed_last = self._enter(depth, last, b)
                cm = max(cmax, self.W[b] / self.eta[b])
                lm = max(lmax, touched)
                if kind == "big":
                    quota[cflop[r]][b] -= 1
                    reserved[b] -= cflop[r]
                elif kind == "small":
                    small_left[0] -= cflop[r]
                try:
                    room = math.fsum(max(0.0, cap[a] - self.W[a] - reserved[a]) for a in range(self.N))
                    if max(cm, lm) < self.best * (1 - _REL) and small_left[0] <= room * (1 + 1e-12):
                        rec(depth + 1, b, splits + (last >= 0 and b != last), cm, lm)
                finally:
                    if kind == "big":
                        quota[cflop[r]][b] += 1
                        reserved[b] += cflop[r]
                    elif kind == "small":
                        small_left[0] += cflop[r]
                    if closed_last:
                        self.closed[last] = False
                    if first_use:
                        self.used[b] = False
                    self._unplace(depth, b, undo)

        try:
            rec(0, -1, 0, 0.0, 0.0)
        except _Stop:
            pass
        finally:
            self.incumbent_nodes += count[0]


__all__ = ["Phases", "RUN_CAP"]
