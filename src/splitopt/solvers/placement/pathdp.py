"""The exact pricing DP of the configuration LP (:mod:`.colgen`): over a topological order of the
classes with few open tensors (:func:`_few_open_order`), the states of a step are the open tensors'
codes and the load so far (:class:`_PathDP`, its step compiled by numba in
:mod:`.pricing_kernels`). Split out of :mod:`.pricing` (2026-11-29: modules under 600 lines); the
mathematics is described in :mod:`splitopt.solvers.placement.colgen`'s docstring (Tarnawski et al.,
NeurIPS 2020, §4)."""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.solvers.placement.pricing import _Data, _max_memory, _merged
from splitopt.solvers.placement.pricing_kernels import _back_step, _dp_step, _dp_step_memory, _knapsacks

LOAD_TOL = 1e-12
"""The DP admits sets of load up to ``V (1 + LOAD_TOL)``: every set of load ``<= V`` whatever the
order its seconds are summed in (rounding is about 1e-14 of ``V``), and none of a placement
``5e-10`` above ``V``, so a proof at ``(1 - 5e-10) U`` can certify an incumbent of value ``U``
(:data:`~.colgen.EXACT`). Was 1e-9 until 2026-11-25."""


def _few_open_order(n: int, tens, start: int | None = None, dag=None) -> list[int]:
    """An order of the ``n`` classes that keeps few tensors open (ours, 2026-11-28): greedily the
    class that opens the fewest tensors less those it closes (a tensor is open from its first member
    in the order to its last), among the neighbours of the classes placed (another component's
    lowest class where none is left), from ``start``; ``dag`` (a networkx DiGraph): among the
    classes whose predecessors are all placed (a topological order, for convex sets). The orders
    :meth:`_PathDP.build` tried before keep 58 tensors open on the peer's BERT-L6 training
    operator graph (247 classes, treewidth 4), where the DP does not apply; this one 12-13 (384
    codes at its widest step)."""
    members = [sorted({gu, *gs}) for gu, gs, *_r in tens]
    touch: list[list[int]] = [[] for _ in range(n)]
    for t, mem in enumerate(members):
        for v in mem:
            touch[v].append(t)
    seen = [0] * len(members)
    placed = [False] * n
    order: list[int] = []
    if dag is not None:
        indeg = {v: dag.in_degree(v) for v in range(n)}
        front = {v for v in range(n) if indeg[v] == 0}
    else:
        front = {0 if start is None else start}
    while len(order) < n:
        if not front:
            front = {next(v for v in range(n) if not placed[v])}
        best, pick = None, -1
        for v in front:
            new = sum(1 for t in touch[v] if seen[t] == 0)
            close = sum(1 for t in touch[v] if seen[t] + 1 == len(members[t]))
            key = (new - close, -close, v)
            if best is None or key < best:
                best, pick = key, v
        v = pick
        front.discard(v)
        placed[v] = True
        order.append(v)
        for t in touch[v]:
            seen[t] += 1
        if dag is not None:
            for w in dag.successors(v):
                indeg[w] -= 1
                if indeg[w] == 0:
                    front.add(w)
        else:
            front.update(w for t in touch[v] for w in members[t] if not placed[w])
    return order

LAGRANGE = True
"""Prune the DP pricing's points by the Lagrangian completion too (:meth:`_PathDP._lagrange`), and
skip the DP where its bound is already at most the floor."""

LAGRANGE_ITERS = 40
"""At most this many backward passes minimise the Lagrangian over its multiplier."""

LAGRANGE_KEEP = 9
"""Multipliers the pruning tries per point (spread by factors of 2 around the best)."""


class _PathDP:
    """Exact pricing ``max pi(S)`` s.t. ``load(S) <= V`` by dynamic programming along an order of
    the classes (ours). A tensor is a hyperedge (its producer and consumer classes); at each step
    the *open* tensors (some member placed, some not) carry a code: all placed members outside
    ``S`` (0), all inside (1), or both (2: crossing, its seconds already added). For every code
    tuple the DP keeps the Pareto front of (load, profit) over the classes decided so far, so the
    optimum is exact (no discretisation). In a topological order ResNet-50's 177 classes keep at
    most 3 tensors open (27 codes); a pricing is 0.3-0.6 s against 1-4 s for the MILP.

    Used when at most :attr:`MAX_CODES` code tuples are reachable at any step. Until 2026-11-25
    the gate was the number of open tensors (at most 6, 3^6 = 729 codes), but open tensors are
    correlated: a tensor of two classes, one placed, has the code of that class, so on the BERT-like
    training graphs 8 open tensors reach at most 16-24 codes. The DP has no memory dimension: where
    memory could bind (:func:`_max_memory`) it applies only with ``relax_memory`` (the maximum over
    all sets of load ``<= V`` is an upper bound on that over the sets that also fit in memory; the
    caller keeps the sets that do not fit out of its placements)."""

    #: at most this many code tuples at a step (the cost of a step is linear in their fronts)
    MAX_CODES = 729
    #: the same for convex sets (since 2026-11-29: where the convex DP has more, the pricing falls
    #: back to all sets, the non-contiguous relaxation; with the Lagrangian completion the peer's
    #: BERT-L6 training graph, 4,032 codes, proves 72.83 ms (0.05 % below the chain optimum) in
    #: 60 s, where the relaxation stops at the non-contiguous optimum 71.64 ms)
    MAX_CODES_CONVEX = 4096
    #: orders keeping more tensors open are not tried (their codes are counted step by step)
    MAX_WIDTH = 16

    def __init__(self, d: _Data, V: float, order: list[int], convex: bool = False, cpu: bool = False,
                 pairs=()):
        self.d, self.V, self.G, self.convex, self.cpu = d, V, d.G, convex, cpu
        self.order, self.pairs = list(order), tuple(pairs)
        if convex:  # the forward tensors (convexity and cost), then those of cost only (none on CPU)
            tens = list(d.convex_tens) + ([] if cpu else list(d.cost_tens))
            cost_only = [False] * len(d.convex_tens) + [True] * (len(tens) - len(d.convex_tens))
        else:
            tens = _merged(d.tens)
            cost_only = [True] * len(tens)
        # branching pairs (:mod:`.branchprice`; Ryan and Foster): ``(a, b, same)``, a pseudo-tensor
        # of no seconds whose code is whether the first of the two joined ``S``; at the second,
        # ``same`` allows only the same choice, else not both
        kind = [0] * len(tens) + [1 if same else 2 for _a, _b, same in self.pairs]
        tens += [(a, [b], 0.0) for a, b, _same in self.pairs]
        cost_only += [True] * len(self.pairs)
        # cpu: sets for a CPU core (CPU time, no communication: data is in host memory)
        self.w = d.cpu if cpu else d.acc
        self.cap = V * (1 + LOAD_TOL)
        pos = np.empty(d.G, int)
        pos[order] = np.arange(d.G)
        touch: list[list[int]] = [[] for _ in range(d.G)]
        first, last = [], []
        for t, (gu, gs, _sec) in enumerate(tens):
            mem = [gu, *gs]
            first.append(order[min(pos[m] for m in mem)])
            last.append(order[max(pos[m] for m in mem)])
            for m in mem:
                touch[m].append(t)
        self.sec = np.array([0.0 if cpu else sec for _u, _g, sec in tens])
        self.allowed = (d.cpu <= V) if cpu else d.sup & (d.acc <= V)
        # per step: the class, the open tensors before it, the tensors it touches (position in the
        # current list, whether newly opened), and the positions kept after it
        self.steps = []
        open_: list[int] = []
        self.width = 0
        self._plans: dict = {}
        for g in order:
            cur = open_ + [t for t in touch[g] if first[t] == g]
            where = {t: j for j, t in enumerate(cur)}
            keep = [j for j, t in enumerate(cur) if last[t] != g]
            self.steps.append((g, len(open_), len(cur), [where[t] for t in touch[g]], keep, self.sec[cur],
                               [cost_only[t] for t in cur], [(where[t], kind[t]) for t in touch[g] if kind[t]]))
            open_ = [cur[j] for j in keep]
            self.width = max(self.width, len(cur))

    @classmethod
    def build(cls, d: _Data, V: float, cpu: bool = False, relax_memory: bool = False,
              convex: bool | None = None) -> "_PathDP | None":
        """The DP pricer for ``d`` at ``V`` (``cpu``: of CPU-core sets), or ``None`` where it does
        not apply (memory could bind and not ``relax_memory``, or more than :attr:`MAX_CODES`
        codes at a step along every order tried). Of the orders, the one with the fewest codes at
        its widest step. ``convex``: price convex sets (default: where :attr:`_Data.convex_tens`);
        where the convex DP has too many codes, an accelerator pricer of all sets (a relaxation)."""
        if not cpu and not relax_memory and d.cap is not None and _max_memory(d, V) > d.cap:
            return None
        if convex is None:
            convex = d.convex_tens is not None
            if convex and not cpu:
                return cls.build(d, V, cpu, relax_memory, True) or cls.build(d, V, cpu, relax_memory, False)
        # the choice depends on the classes allowed, not on V otherwise: kept on ``d`` (a search
        # over V builds a pricer per value; 2-5 s each where the plans have thousands of codes)
        allowed = (d.cpu <= V) if cpu else d.sup & (d.acc <= V)
        key = (cpu, convex, allowed.tobytes())
        built = d.__dict__.setdefault("_built", {})
        if key in built:
            if built[key] is None:
                return None
            order, plans = built[key]
            dp = cls(d, V, order, convex, cpu)
            dp._plans = dict(plans)  # (the plans of other masks, a dive's, stay with this pricer)
            return dp
        best = cls._choose(d, V, cpu, convex)
        built[key] = None if best is None else (best.order, dict(best._plans))
        return best

    @classmethod
    def _choose(cls, d: _Data, V: float, cpu: bool, convex: bool) -> "_PathDP | None":
        """:meth:`build`'s choice of order (uncached)."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(range(d.G))
        g.add_edges_from((gu, gv) for gu, gs, _s in (d.convex_tens if convex else d.tens) for gv in gs)
        # the order that keeps the fewest tensors open, of a few: topological ones (the convex DP
        # needs one; depth first finishes a branch before it starts the next: three parallel
        # branches of 31 layers keep 4 open, against 5 in networkx's default order and 7 in the
        # lexicographic one) and, for non-convex sets, any order (training classes, a forward node
        # with its backward node, make cycles; a depth-first walk of the undirected graph keeps 4
        # open on the BERT-like operator graphs, where every topological order tried keeps 5)
        if convex and not cpu:
            # a class without forward edges (a weight update) may go anywhere in a topological
            # order: after the classes it shares a cost tensor with, not where networkx puts it
            # (a BERT-like training graph with weight updates: 86 tensors open -> 8, 26 codes)
            alone = {v for v in g if g.degree(v) == 0}
            for gu, gs, _s in d.cost_tens:
                for v in (gu, *gs):
                    if v in alone:
                        g.add_edges_from((w, v) for w in (gu, *gs) if w not in alone)
        orders = []
        if nx.is_directed_acyclic_graph(g):
            orders += [list(nx.topological_sort(g)), list(reversed(list(nx.dfs_postorder_nodes(g)))),
                       list(nx.lexicographical_topological_sort(g))]
        elif convex:  # never: the forward graph is acyclic
            return None
        else:
            # the forward graph of a training graph: each 2-cycle (a forward tensor and its
            # gradient) kept in one direction (three branches of 31 layers, training: 6 open)
            fwd = nx.DiGraph((a, b) for a, b in g.edges if not (b < a and g.has_edge(b, a)))
            fwd.add_nodes_from(range(d.G))
            if nx.is_directed_acyclic_graph(fwd):
                orders += [list(nx.topological_sort(fwd)), list(reversed(list(nx.dfs_postorder_nodes(fwd))))]
        if not convex:
            und = g.to_undirected()
            orders.append(list(range(d.G)))
            for src in (0, d.G - 1):
                walk = list(nx.dfs_preorder_nodes(und, src))
                seen = set(walk)
                orders.append(walk + [v for v in range(d.G) if v not in seen])  # other components
        orders += cls._few_open_orders(d, g, convex, cpu)
        best, fewest = None, (cls.MAX_CODES_CONVEX if convex else cls.MAX_CODES) + 1
        for dp in sorted((cls(d, V, order, convex, cpu) for order in orders), key=lambda dp: dp.width):
            if dp.width > cls.MAX_WIDTH:
                break
            plan = dp._plan(fewest - 1)
            if plan is not None:
                best, fewest = dp, max(grp.size - 1 for grp, *_rest in plan)
        return best

    @staticmethod
    def _few_open_orders(d: _Data, g, convex: bool, cpu: bool) -> list[list[int]]:
        """The orders of :func:`_few_open_order` for ``d`` (cached on ``d``: they depend on the
        graph, not on ``V``): topological for convex sets, else from class 0, the last class and
        a class farthest from class 0."""
        import networkx as nx

        cache = d.__dict__.setdefault("_few_open", {})
        key = (convex, cpu)
        if key not in cache:
            tens = (list(d.convex_tens) + ([] if cpu else list(d.cost_tens))) if convex else _merged(d.tens)
            if convex:
                cache[key] = [_few_open_order(d.G, tens, dag=g)]
            else:
                far = max(nx.single_source_shortest_path_length(g.to_undirected(), 0).items(),
                          key=lambda kv: (kv[1], -kv[0]))[0] if d.G else 0
                cache[key] = [_few_open_order(d.G, tens, s) for s in sorted({0, max(d.G - 1, 0), far})]
        return cache[key]

    def _plan(self, limit: int | None = None):
        """The transitions of every step for the current :attr:`allowed` mask (cached): per step the
        codes before it, and for every code after it the list of ``(code before, x, seconds added)``
        (``x``: the class joins ``S``). They depend on the graph and the mask only, not on the
        duals or the loads, so one plan serves every pricing at this mask (a smaller mask reaches a
        subset of the codes). ``None`` as soon as a step has more than ``limit`` codes (then nothing
        is cached)."""
        key = self.allowed.tobytes()
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        codes = [()]
        plan = []
        for g, nb, ncur, touching, keep, secs, kinds, pairs in self.steps:
            groups: dict = {}
            for si, code in enumerate(codes):
                for x in ((0, 1) if self.allowed[g] else (0,)):
                    if any(j < nb and (code[j] != x if kd == 1 else code[j] == 1 and x) for j, kd in pairs):
                        continue  # a branching pair's second class: the same choice, or not both
                    t = self._convex_move(code, x, nb, ncur, touching, secs, kinds) if self.convex else \
                        self._move(code, x, nb, ncur, touching, secs)
                    if t is not None:
                        c, add = t
                        add += self.w[g] if x else 0.0
                        groups.setdefault(tuple(c[j] for j in keep), []).append((si, x, add))
            new = list(groups)
            if limit is not None and len(new) > limit:
                return None
            flat = [t for c in new for t in groups[c]]
            grp = np.cumsum([0] + [len(groups[c]) for c in new]).astype(np.int64)
            plan.append((grp, np.array([t[0] for t in flat], np.int64), np.array([t[2] for t in flat], float),
                         np.array([t[1] for t in flat], np.bool_)))
            codes = new
        self._plans[key] = plan
        return plan

    @staticmethod
    def _move(code, x, nb, ncur, touching, secs):
        """The codes after a class joins ``S`` (``x = 1``) or not, and the seconds it adds."""
        c = list(code) + [x] * (ncur - nb)
        add = 0.0
        for j in touching:
            if j < nb and c[j] != 2 and c[j] != x:
                c[j] = 2
                add += secs[j]
        return c, add

    @staticmethod
    def _convex_move(code, x, nb, ncur, touching, secs, kinds):
        """:meth:`_move` for convex sets (order topological, so a forward tensor opens at its
        producer; ``kinds[j]``: tensor ``j`` carries cost only, coded as in :meth:`_move`).
        Codes: producer outside and not reachable from ``S`` (0: no consumer inside; 2: some, paid),
        producer inside (1: no consumer outside; 3: some, paid), producer outside but reachable from
        ``S`` (4, *tainted*: no consumer may join ``S``, or a path would leave it and re-enter). A
        class outside ``S`` is tainted when an input's producer is inside or tainted; ``None`` where
        the class may not join."""
        c = list(code) + [0] * (ncur - nb)
        add = 0.0
        tainted = False
        for j in touching:
            if j >= nb:
                continue
            st = c[j]
            if kinds[j]:
                if st != 2 and st != x:
                    c[j] = 2
                    add += secs[j]
                continue
            if st == 4:
                if x:
                    return None
                tainted = True
            elif st in (1, 3):
                if not x:
                    tainted = True
                    if st == 1:
                        c[j] = 3
                        add += secs[j]
            elif x and st == 0:
                c[j] = 2
                add += secs[j]
        for j in range(nb, ncur):
            c[j] = x if kinds[j] else (1 if x else (4 if tainted else 0))
        return c, add

    def price(self, pi: np.ndarray, ncols: int = 1, deadline: float | None = None, keep: int = 0,
              floor: float = -math.inf, budget: float = math.inf, thin_to: int = 2048, memory=None):
        """``(max pi(S), columns)``: the exact maximum and up to ``ncols`` sets of the largest
        profits (all within ``V``); ``(inf, [])`` if ``deadline`` passed first. The fronts of one
        step are merged by the compiled kernel :func:`_dp_step` (linear in the points: the fronts
        arrive sorted by load), 10-20x the numpy version it replaced (ResNet-50: 0.3-0.6 s).

        ``keep > 0``: a heuristic pricing (a *restriction*: its sets are real, its maximum may be
        below the true one, so it is no bound): every front is thinned to ``keep`` points spread
        evenly along it, the lightest and the most profitable among them. Measured 2026-11-25 on a
        BERT-like training graph of 308 classes: exact fronts hold up to 262,000 points a step (a
        pricing 0.2 s).

        ``floor``: only sets of profit above it are wanted. A point whose profit plus every positive
        profit still to come is at most ``floor`` is dropped (it cannot end above it), and so is a
        point whose profit plus the fractional knapsack of the classes to come within the load it
        leaves (``cap - load``: their times fill it, communication only adds to it) is at most
        ``floor`` (since 2026-11-25, later; :func:`_knapsacks`); the maximum is then exact where it
        exceeds ``floor``, else ``floor`` is returned (an upper bound) with no sets. The
        configuration LP asks ``floor = 1`` (its Lagrangian divides by ``max(u, 1)``, and only sets
        of profit above 1 are columns): near the work bound's duals (profit proportional to time)
        almost every point that pays communication goes. Measured 2026-11-25 on the peer's
        BERT-L12 inference graph (424 classes, up to 729 codes a step), non-contiguous: a value of
        the configuration LP 24 s -> 3 s. Since 2026-11-29 (:data:`LAGRANGE`) a point is also dropped
        where its profit plus the Lagrangian completion of its code (:meth:`_lagrange`, which sees
        the communication still to pay) is at most ``floor``, and where the Lagrangian's ``u`` is at
        most 1e-9 above ``floor`` no DP runs: the larger of the two is returned with no sets (the
        maximum is then exact only where it exceeds ``floor`` by more than 1e-9). :attr:`upper`
        keeps ``u``, a bound whatever the thinning.

        ``budget``: once the fronts so far hold more points than this, the steps left thin to
        ``thin_to`` points (``thinned`` is then set: the maximum is no bound).

        ``memory``: per class its size over an accelerator's memory; the maximum is then over the
        sets that also fit (sum at most 1), exactly (:func:`~.pricing_kernels._dp_step_memory`:
        fronts of load, memory and profit; since 2026-11-29). No thinning then: past ``budget``
        points the pricing gives up, ``(inf, [])`` as at the deadline."""
        L, P, offs = np.zeros(1), np.zeros(1), np.array([0, 1], np.int64)
        M = np.zeros(1)
        hist = []
        self.thinned = False  # whether a heuristic pricing dropped points (else it was exact)
        self.points = 0  # the points of all fronts (the work of this pricing)
        # an upper bound on the maximum over every admitted set of load <= V, whatever the thinning
        # (the Lagrangian's u, where a floor asked for it)
        self.upper = math.inf
        # the positive profit still to come after each step (classes that may join)
        gains = np.where(self.allowed, np.maximum(pi, 0.0), 0.0)[self.order]
        after = np.concatenate((np.cumsum(gains[::-1])[::-1][1:], [0.0]))
        # and at most what the load left can take of it: the fractional knapsack of the classes
        # still to come (weights their times; communication only adds load)
        plan = self._plan()
        lam, lgs = np.zeros(0), None
        if math.isfinite(floor):
            ka, kp, ko = _knapsacks(gains, self.w[self.order])
            if LAGRANGE:
                u, lam, lgs = self._lagrange(pi, plan)
                self.upper = u * (1 + 1e-12) + 1e-12
                if self.upper <= floor + 1e-9 * max(abs(floor), 1.0):
                    # no set of load <= V exceeds the floor by more than 1e-9: nothing to list, and
                    # the larger of the floor and the Lagrangian's u bounds the maximum.
                    # (Where u meets the floor, as for CPU sets of no communication priced above the
                    # best CPU column, the DP would otherwise handle every point tied with it:
                    # 358 million on the peer's BERT-L6 training graph, convex)
                    return max(floor, self.upper, 0.0), []
        else:
            ka, kp, ko = np.zeros(1), np.zeros(1), np.zeros(len(self.order) + 1, np.int64)
        none2 = np.zeros((0, 0))
        for i, ((g, *_rest), (grp, src, add, take)) in enumerate(zip(self.steps, plan)):
            if deadline is not None and time.perf_counter() > deadline:
                return math.inf, []
            drop = floor - after[i] * (1 + 1e-12) if math.isfinite(floor) else -math.inf
            if memory is not None:
                if self.points > budget:
                    return math.inf, []
                L, M, P, offs, par, xs = _dp_step_memory(
                    L, M, P, offs, grp, src, add, take, float(pi[g]), float(memory[g]), self.cap, 1.0 + 1e-12,
                    drop, floor, ka[ko[i]:ko[i + 1]], kp[ko[i]:ko[i + 1]], none2 if lgs is None else lgs[i], lam,
                    int(min(budget - self.points, 1e12)))
                if offs.size == 0:  # past the budget
                    return math.inf, []
                self.points += L.size
                hist.append((par, xs))
                continue
            if not keep and self.points > budget:
                keep = thin_to
            L, P, offs, par, xs, thin = _dp_step(L, P, offs, grp, src, add, take, float(pi[g]), self.cap, keep, drop,
                                                 floor, ka[ko[i]:ko[i + 1]], kp[ko[i]:ko[i + 1]],
                                                 none2 if lgs is None else lgs[i], lam)
            self.thinned |= thin
            self.points += L.size
            hist.append((par, xs))
        if P.size == 0:  # every point dropped (or only the empty set fits: never, it has load 0)
            return (max(floor, 0.0), []) if math.isfinite(floor) else (0.0, [np.zeros(self.G, bool)])
        best = np.argsort(-P, kind="stable")[:max(1, ncols)]
        return float(P[best[0]]), [self._set(hist, int(j)) for j in best]

    def _lagrange(self, pi: np.ndarray, plan):
        """The Lagrangian completion of :meth:`price` (ours, 2026-11-29): ``(u, lam, F)`` with ``u =
        min over lam >= 0 of lam cap + max_S (pi(S) - lam load(S))`` (over every set the plan
        admits, of any load: an upper bound on the pricing's maximum, as every set of load <= cap
        has ``pi(S) <= pi(S) - lam (load(S) - cap)``), and per step ``F[i][code, q]``, the most
        ``profit - lam[q] x load`` the steps after step ``i`` can add from a code after it
        (:func:`~.pricing_kernels._back_step`), for :data:`LAGRANGE_KEEP` multipliers around the
        best one. Unlike the fractional knapsack, this completion sees the codes, so the
        communication a completion must pay. ``u`` is convex and piecewise linear in ``lam``, its
        slope ``cap - load`` of the maximising set: minimised by intersecting the lines at a
        bracket's ends (at most :data:`LAGRANGE_ITERS` backward passes of one multiplier)."""
        gains = [float(pi[g]) for g, *_rest in self.steps]
        cap = self.cap

        def at(lam):
            f, a = self._back(gains, plan, np.array([lam]), keep=False)
            return lam * cap + f[0], cap - a[0]

        lo, (ulo, glo) = 0.0, at(0.0)
        best, blam = ulo, 0.0
        if glo < 0:  # the best set at lam = 0 is over the load: a larger multiplier
            pos = np.maximum(np.asarray(gains), 0.0)
            w = self.w[self.order]
            hi = pos.sum() / max(w[pos > 0].sum(), 1e-300) if (pos > 0).any() else 1.0
            uhi, ghi = at(hi)
            for _ in range(60):
                if ghi >= 0:
                    break
                lo, ulo, glo = hi, uhi, ghi
                hi *= 2.0
                uhi, ghi = at(hi)
            if uhi < best:
                best, blam = uhi, hi
            if ulo < best:
                best, blam = ulo, lo
            for _ in range(LAGRANGE_ITERS):
                if ghi < 0 or glo >= 0 or glo == ghi:
                    break
                x = (uhi - ulo + glo * lo - ghi * hi) / (glo - ghi)  # where the two lines meet
                x = min(max(x, lo), hi)
                floor_x = ulo + glo * (x - lo)  # no multiplier does better than this
                if best - floor_x <= 1e-12 * max(abs(best), 1.0):
                    break
                ux, gx = at(x)
                if ux < best:
                    best, blam = ux, x
                if gx < 0:
                    lo, ulo, glo = x, ux, gx
                else:
                    hi, uhi, ghi = x, ux, gx
        lam = np.unique(np.r_[blam * np.exp2(np.linspace(-2.0, 2.0, LAGRANGE_KEEP - 1)), blam])
        F = self._back(gains, plan, lam, keep=True)
        return float(best), lam, F

    def _back(self, gains, plan, lam: np.ndarray, keep: bool):
        """The backward pass of :meth:`_lagrange` for the multipliers ``lam``: per step the array of
        the codes after it (``keep``), else the value and the load of the empty code before the
        first step."""
        n = plan[-1][0].size - 1 if plan else 1
        F, A = np.zeros((n, lam.size)), np.zeros((n, lam.size))
        out = [None] * len(plan)
        for i in range(len(plan) - 1, -1, -1):
            grp, src, add, take = plan[i]
            if keep:
                out[i] = F
            nsrc = 1 if i == 0 else plan[i - 1][0].size - 1
            F, A = _back_step(F, A, grp, src, add, take, gains[i], lam, nsrc)
        return out if keep else (F[0], A[0])

    def _set(self, hist, j: int) -> np.ndarray:
        S = np.zeros(self.G, bool)
        for (g, *_rest), (par, xs) in zip(reversed(self.steps), reversed(hist)):
            S[g] = xs[j]
            j = int(par[j])
        return S
