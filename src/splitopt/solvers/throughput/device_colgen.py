"""A lower bound for the device model that sees communication: the configuration LP, solved by
column generation, with price-and-branch placements (issue 11; ours, not in the peer's paper).

Why: the compact MILP's LP relaxation (and the work, pigeonhole and isolation bounds) lets every
class sit fractionally on all accelerators at once, and a blend of identical fractions crosses no
tensor: on ResNet-50 non-contiguous the LP bound is the work bound (33.02 ms) while every placement
pays 1.2-1.6 ms of communication over six accelerators, and HiGHS's branching lifts the bound only
to 33.06-33.13 ms in 60-900 s.

The configuration LP for a target ``V``: a column is a set ``S`` of colour classes that one
accelerator can hold, ``load(S) = compute(S) + (tensors crossing the boundary of S) <= V`` and
memory within the limit (supported classes only); each class is covered by columns or by the CPU
cores (fractions ``y_g``, classes with CPU time above ``V`` excluded, ``sum cpu_g y_g <= l V``):

    min sum_S lambda_S   s.t.  sum_{S ∋ g} lambda_S + y_g >= 1  (every class g),  lambda, y >= 0.

Every placement of value ``<= V`` (max-load, hence also fwd+bwd, which is never below it; any
contiguity, which only removes placements) gives a solution with ``sum lambda <= k``. So if the
LP's optimum exceeds ``k``, no placement reaches ``V``: ``V`` is a lower bound. The proof is a
Lagrangian (Farley) bound: for covering duals ``pi >= 0`` and ``u >= max_S pi(S)`` (an exact
pricing, or the pricing MILP's *dual bound*), ``L = sum(pi/u) - max{(pi/u) y : y in Y}`` (the CPU
part: a fractional knapsack, solved exactly) is at most the LP optimum; ``L > k`` proves ``V``.

Convex contiguity (the peer's IP model; ours): where every class is one node and there are no
backward nodes, the columns are *convex* sets (no forward path leaves ``S`` and re-enters it) and
the CPU cores are columns too: convex sets ``C`` of CPU time ``<= V`` (the evaluator asks every
device, CPU cores included, to be convex), at most ``l`` of them, instead of the fractions ``y``.
A convex placement of value ``<= V`` gives ``k`` accelerator and ``l`` CPU columns, so with
``rho >= max_C pi(C)`` the CPU part of ``L`` is at most ``min(knapsack, l rho / u)``. Elsewhere the
pricing ignores convexity: the LP is then a relaxation of the convex problem, still a bound.

Pricing (``max pi(S)`` over the columns): :class:`_PathDP`, an exact dynamic program along a
topological order of the classes (Pareto fronts of (load, profit) per state of the open tensors;
ResNet-50 keeps at most 3 open), its steps merged by a compiled kernel (:func:`_dp_step`, numba:
40-150 ms a pricing on ResNet-50, 40 columns each, against 0.3-0.6 s for the numpy version and 1-4
s for a MILP), where memory cannot bind; else a MILP (:class:`_Pricer`, knapsack rows with the
in/out tensor rows of :func:`~splitopt.models.throughput_device.build_milp` for one device). For
convex sets its codes also carry whether a producer is reachable from ``S`` (then no consumer may
join); CPU sets are priced by the same DP with CPU times and no communication. Duals are smoothed
(Wentges) from a centre that starts at ``pi_g = acc_g / V`` (whose bound is the work bound); the
master is one HiGHS LP to which columns are appended (warm-started simplex).

Placements (price and branch, heuristic): where the LP reaches ``k`` at ``V``, a dive
(:meth:`_ColGen.dive`: place the column of the largest LP value, re-solve the rest, a
set-partitioning MILP over the columns at every level (at most 2 s each), back up on a
proven-infeasible rest) and, without a dive placement, a set-partitioning MILP over the columns
and the incumbent's own sets (:func:`_restricted_mip`) look for placements of value ``<= V``;
every placement is scored by the evaluator.

:func:`relaxation` (registry ``device_colgen``; :func:`~splitopt.solvers.throughput.device_milp.solve`
runs it before the MILP from a 5 s limit on): a search on ``V`` that first proves a value 0.6 %
below the incumbent, then climbs from the largest proven value in steps of ``0.8 max(gap, 0.1 %)``
(near the LP's threshold the LP is tight: proofs raise the bound there and dives find placements),
aiming at ``(1 - target_gap)`` times the incumbent.

Measured (2026-11-24, 2-core EPYC, HiGHS 1.16), ResNet-50 (177 classes): non-contiguous, one LP
value at 33.19 ms from scratch 36 s before the compiled kernel and vectorised loads, 11-13 s
after; the LP is at ``k`` at about 33.217 ms; ``device_milp`` at a 60 s limit with ``mip_gap=1e-3``
proves 33.2144 ms and finds 33.2325 ms by a dive: 0.055 % in 28-30 s (the MILP's own bound is
33.10 ms at 60 s). Convex: 33.7746 ms proven in about 1 s, and the LP reaches ``k`` at 33.77467
ms, just above the peer's DP value 33.774666 ms: the chain optimum is the convex optimum.
Found and fixed on the way: the master's duals on the void rows of classes a dive placed inflated
the Lagrangian bound of the rest (their rows now get zero duals); a restricted MILP at the first
level of a dive took 19 s to prove that no partition exists (now at most 2 s a level).
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp
from numba import njit

from splitopt.errors import InstanceError
from splitopt.families import AlgoResult
from splitopt.instances.throughput_device import DeviceInstance
from splitopt.models.throughput_device import class_data, class_tensors


class _Data:
    """Class-level data in seconds: accelerator and CPU time (forward + backward), size, support,
    tensors ``(producer class, consumer classes, seconds)`` between distinct classes."""

    def __init__(self, instance: DeviceInstance):
        cls, cpu, acc, size, sup = class_data(instance)
        self.classes = cls
        self.G = len(cls)
        self.cpu, self.acc = np.array(cpu, float), np.array(acc, float)
        self.size, self.sup = np.array(size, float), np.array(sup, bool)
        self.tens = [(gu, gs, float(sec)) for gu, gs, sec, _b in class_tensors(instance)[1]]
        self.k, self.l = instance.n_accelerators, instance.n_cpus
        self.cap = instance.acc_memory_bytes
        # contiguity "convex" with one node per class and no backward nodes: the DP prices convex
        # sets only, over every forward edge (tensors of zero seconds too: they carry paths). Else
        # the pricing ignores convexity: the LP is a relaxation of the convex problem, still a bound
        self.convex_tens = None
        if (instance.contiguity == "convex" and not any(instance.backward)
                and all(len(c) == 1 for c in cls)):
            cls_of = {c[0]: g for g, c in enumerate(cls)}
            self.convex_tens = []
            for u, cons, sec in instance.tensors:
                gs = sorted({cls_of[c] for c in cons} - {cls_of[u]})
                if gs:
                    self.convex_tens.append((cls_of[u], gs, max(float(sec), 0.0)))
        # with convex pricing the CPU cores are columns too (convex sets of CPU time <= V), priced
        # by the same DP, instead of fractions under a capacity row: their sets must be convex
        self.cpu_sets = self.convex_tens is not None and self.l > 0

        prod = np.array([gu for gu, _gs, _s in self.tens], np.int64)
        rows = [t for t, (_gu, gs, _s) in enumerate(self.tens) for _g in gs]
        cons = [g for _gu, gs, _s in self.tens for g in gs]
        self._prod = prod
        self._cons = sp.csr_matrix((np.ones(len(cons)), (rows, cons)), shape=(len(self.tens), self.G))
        self._ncons = np.asarray(self._cons.sum(axis=1)).ravel()
        self._sec = np.array([sec for _gu, _gs, sec in self.tens], float)

    def loads(self, cols) -> np.ndarray:
        """Accelerator loads of class sets (boolean masks, one per row): compute time plus every
        tensor crossing the set's boundary (producer inside and some consumer outside, or the
        producer outside and some consumer inside), once."""
        X = np.asarray(cols, bool).reshape(-1, self.G)
        w = X.astype(float) @ self.acc
        if self._prod.size:
            cons_in = (self._cons @ X.T.astype(float)).T
            cross = np.where(X[:, self._prod], cons_in < self._ncons - 0.5, cons_in > 0.5)
            w = w + cross.astype(float) @ self._sec
        return w

    def load(self, S: np.ndarray) -> float:
        """Accelerator load of the class set ``S`` (boolean mask)."""
        return float(self.loads(S)[0])

    def fitting(self, cols, V: float) -> np.ndarray:
        """Which of the class sets one accelerator can hold at ``V``: supported classes only, load
        ``<= V``, memory within the limit."""
        X = np.asarray(cols, bool).reshape(-1, self.G)
        ok = ~(X & ~self.sup).any(axis=1) & (self.loads(X) <= V)
        if self.cap is not None:
            ok &= X.astype(float) @ self.size <= self.cap
        return ok

    def fits(self, S: np.ndarray, V: float) -> bool:
        return bool(self.fitting(S, V)[0])

    def cpu_take(self, pi: np.ndarray, V: float) -> float:
        """``max pi y`` over ``0 <= y_g <= [cpu_g <= V]``, ``sum cpu_g y_g <= l V`` (greedy = exact)."""
        if self.l == 0:
            return 0.0
        ok = (pi > 0) & (self.cpu <= V)
        return _fractional_knapsack(pi[ok], self.cpu[ok], self.l * V)


def _fractional_knapsack(value: np.ndarray, weight: np.ndarray, cap: float) -> float:
    """``max sum value_i x_i`` over ``0 <= x <= 1``, ``sum weight_i x_i <= cap`` (``value, weight >=
    0``): the items of zero weight, then by value per weight (greedy = exact)."""
    free = weight <= 0
    total = math.fsum(value[free])
    value, weight = value[~free], weight[~free]
    for j in np.argsort(-(value / weight), kind="stable"):
        if weight[j] <= cap:
            cap -= weight[j]
            total += value[j]
        else:
            return total + value[j] * cap / weight[j]
    return total


class _Pricer:
    """``max pi(S)`` over the columns for a fixed ``V`` (times in units of ``V``)."""

    def __init__(self, d: _Data, V: float):
        from splitopt.solvers.exact.highs import HighsMatrix

        G, T = d.G, len(d.tens)
        n = G + 2 * T
        rows, cols, vals, lo, hi = [], [], [], [], []
        r = 0
        for t, (gu, gs, _sec) in enumerate(d.tens):
            ci, co = G + 2 * t, G + 2 * t + 1
            for gv in gs:
                rows += [r, r, r, r + 1, r + 1, r + 1]
                cols += [gv, gu, ci, gu, gv, co]
                vals += [1.0, -1.0, -1.0, 1.0, -1.0, -1.0]
                lo += [-np.inf, -np.inf]
                hi += [0.0, 0.0]
                r += 2
        for g in range(G):
            if d.acc[g] > 0:
                rows.append(r), cols.append(g), vals.append(d.acc[g] / V)
        for t, (_gu, _gs, sec) in enumerate(d.tens):
            rows += [r, r]
            cols += [G + 2 * t, G + 2 * t + 1]
            vals += [sec / V, sec / V]
        lo.append(-np.inf), hi.append(1.0)
        r += 1
        if d.cap is not None and (d.size > 0).any() and math.fsum(d.size) > d.cap:
            for g in range(G):
                if d.size[g] > 0:
                    rows.append(r), cols.append(g), vals.append(d.size[g] / d.cap if d.cap > 0 else 1.0)
            lo.append(-np.inf), hi.append(1.0 if d.cap > 0 else 0.0)
            r += 1
        A = sp.csc_matrix((vals, (rows, cols)), shape=(r, n))
        ub = np.ones(n)
        ub[:G] = np.where(d.sup & (d.acc <= V), 1.0, 0.0)
        integer = np.r_[np.ones(G, bool), np.zeros(2 * T, bool)]
        self.hm = HighsMatrix.from_arrays(np.r_[np.ones(G), np.zeros(2 * T)], A, np.array(lo), np.array(hi),
                                          np.zeros(n), ub, integer, maximize=True, mip_gap=1e-4)
        self.G = G

    def price(self, pi: np.ndarray, time_limit: float | None):
        """``(value, upper bound, S)``; ``S`` is ``None`` without a solution."""
        self.hm.set_costs(np.r_[pi, np.zeros(self.hm.num_col - self.G)])
        self.hm.set_option("time_limit", float(time_limit) if time_limit is not None else math.inf)
        res = self.hm.solve()
        if res.bound is None:
            return -math.inf, math.inf, None
        S = None if res.x is None else res.x[:self.G] > 0.5
        return (res.objective if res.objective is not None else -math.inf), max(res.bound, 0.0), S


def _max_memory(d: _Data, V: float) -> float:
    """An upper bound on the memory of any accelerator set of load ``<= V``: the fractional
    knapsack of sizes under accelerator time ``<= V`` (a load is at least the compute time)."""
    ok = d.sup & (d.acc <= V)
    return _fractional_knapsack(d.size[ok], d.acc[ok], V)


class _PathDP:
    """Exact pricing ``max pi(S)`` s.t. ``load(S) <= V`` by dynamic programming along an order of
    the classes (ours). A tensor is a hyperedge (its producer and consumer classes); at each step
    the *open* tensors (some member placed, some not) carry a code: all placed members outside
    ``S`` (0), all inside (1), or both (2: crossing, its seconds already added). For every code
    tuple the DP keeps the Pareto front of (load, profit) over the classes decided so far, so the
    optimum is exact (no discretisation). In a topological order ResNet-50's 177 classes keep at
    most 3 tensors open (27 codes); a pricing is 0.3-0.6 s against 1-4 s for the MILP.

    Used when the order keeps at most :attr:`MAX_OPEN` tensors open and memory cannot bind (the
    DP has no memory dimension; :func:`_max_memory` decides)."""

    MAX_OPEN = 4

    def __init__(self, d: _Data, V: float, order: list[int], convex: bool = False, cpu: bool = False):
        self.d, self.V, self.G, self.convex = d, V, d.G, convex
        tens = d.convex_tens if convex else d.tens
        # cpu: sets for a CPU core (CPU time, no communication: data is in host memory)
        self.w = d.cpu if cpu else d.acc
        self.cap = V * (1 + 1e-9)
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
            self.steps.append((g, len(open_), len(cur), [where[t] for t in touch[g]], keep, self.sec[cur]))
            open_ = [cur[j] for j in keep]
            self.width = max(self.width, len(cur))

    @classmethod
    def build(cls, d: _Data, V: float, cpu: bool = False) -> "_PathDP | None":
        """The DP pricer for ``d`` at ``V`` (``cpu``: of CPU-core sets), or ``None`` where it does
        not apply (memory could bind, or too many tensors open in a topological order of the class
        graph)."""
        import networkx as nx

        if not cpu and d.cap is not None and _max_memory(d, V) > d.cap:
            return None
        convex = d.convex_tens is not None
        g = nx.DiGraph()
        g.add_nodes_from(range(d.G))
        g.add_edges_from((gu, gv) for gu, gs, _s in (d.convex_tens if convex else d.tens) for gv in gs)
        try:
            order = list(nx.topological_sort(g))
        except nx.NetworkXUnfeasible:
            if convex:  # never: the forward graph is acyclic
                return None
            order = list(range(d.G))
        dp = cls(d, V, order, convex, cpu)
        return dp if dp.width <= cls.MAX_OPEN else None

    def _plan(self):
        """The transitions of every step for the current :attr:`allowed` mask (cached): per step the
        codes before it, and for every code after it the list of ``(code before, x, seconds added)``
        (``x``: the class joins ``S``). They depend on the graph and the mask only, not on the
        duals or the loads, so one plan serves every pricing at this mask."""
        key = self.allowed.tobytes()
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        codes = [()]
        plan = []
        for g, nb, ncur, touching, keep, secs in self.steps:
            groups: dict = {}
            for si, code in enumerate(codes):
                for x in ((0, 1) if self.allowed[g] else (0,)):
                    t = self._convex_move(code, x, nb, ncur, touching, secs) if self.convex else \
                        self._move(code, x, nb, ncur, touching, secs)
                    if t is not None:
                        c, add = t
                        add += self.w[g] if x else 0.0
                        groups.setdefault(tuple(c[j] for j in keep), []).append((si, x, add))
            new = list(groups)
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
    def _convex_move(code, x, nb, ncur, touching, secs):
        """:meth:`_move` for convex sets (order topological, so a tensor opens at its producer).
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
            c[j] = 1 if x else (4 if tainted else 0)
        return c, add

    def price(self, pi: np.ndarray, ncols: int = 1, deadline: float | None = None):
        """``(max pi(S), columns)``: the exact maximum and up to ``ncols`` sets of the largest
        profits (all within ``V``); ``(inf, [])`` if ``deadline`` passed first. The fronts of one
        step are merged by the compiled kernel :func:`_dp_step` (linear in the points: the fronts
        arrive sorted by load), 10-20x the numpy version it replaced (ResNet-50: 0.3-0.6 s)."""
        L, P, offs = np.zeros(1), np.zeros(1), np.array([0, 1], np.int64)
        hist = []
        for (g, *_rest), (grp, src, add, take) in zip(self.steps, self._plan()):
            if deadline is not None and time.perf_counter() > deadline:
                return math.inf, []
            L, P, offs, par, xs = _dp_step(L, P, offs, grp, src, add, take, float(pi[g]), self.cap)
            hist.append((par, xs))
        if P.size == 0:  # only the empty set fits (never: it has load 0)
            return 0.0, [np.zeros(self.G, bool)]
        best = np.argsort(-P, kind="stable")[:max(1, ncols)]
        return float(P[best[0]]), [self._set(hist, int(j)) for j in best]

    def _set(self, hist, j: int) -> np.ndarray:
        S = np.zeros(self.G, bool)
        for (g, *_rest), (par, xs) in zip(reversed(self.steps), reversed(hist)):
            S[g] = xs[j]
            j = int(par[j])
        return S


@njit(cache=True)
def _dp_step(L, P, offs, grp, src, add, take, gain, cap):  # pragma: no cover - compiled
    """One step of :class:`_PathDP`: for every code after the step (``grp[i]:grp[i+1]`` indexes its
    incoming parts: the front of code ``src[j]`` before the step, shifted by ``add[j]`` seconds and,
    where ``take[j]``, by the profit ``gain``), the Pareto front of the merged parts: loads within
    ``cap``, ascending, each point strictly more profitable than every lighter one. Fronts arrive
    sorted by load, so a k-way merge is linear. Returns the new ``(L, P, offs)`` and per point the
    flat index of its parent and whether the class joined."""
    tot = 0
    for j in range(src.size):
        tot += offs[src[j] + 1] - offs[src[j]]
    Ln = np.empty(tot)
    Pn = np.empty(tot)
    par = np.empty(tot, np.int64)
    xs = np.empty(tot, np.bool_)
    ng = grp.size - 1
    offn = np.empty(ng + 1, np.int64)
    heads = np.empty(src.size, np.int64)
    n = 0
    for gi in range(ng):
        offn[gi] = n
        a, b = grp[gi], grp[gi + 1]
        for j in range(a, b):
            heads[j] = offs[src[j]]
        top = -np.inf
        while True:
            jb, lb, pb = -1, np.inf, -np.inf
            for j in range(a, b):
                h = heads[j]
                if h >= offs[src[j] + 1]:
                    continue
                lv = L[h] + add[j]
                if lv > cap:  # the rest of this front is heavier still
                    heads[j] = offs[src[j] + 1]
                    continue
                pv = P[h] + gain if take[j] else P[h]
                if lv < lb or (lv == lb and pv > pb):
                    jb, lb, pb = j, lv, pv
            if jb < 0:
                break
            h = heads[jb]
            heads[jb] = h + 1
            if pb > top:
                top = pb
                Ln[n], Pn[n], par[n], xs[n] = lb, pb, h, take[jb]
                n += 1
    offn[ng] = n
    return Ln[:n].copy(), Pn[:n].copy(), offn, par[:n].copy(), xs[:n].copy()


class _Master:
    """The restricted master LP, kept in one HiGHS instance: columns are appended and the simplex
    restarts from the last basis. Rows: one covering row per class, one CPU row: the CPU fractions'
    capacity (``sum cpu_g y_g <= l V``) or, where :attr:`_Data.cpu_sets`, the number of CPU-set
    columns (``<= l``; the fractions are then fixed at 0). An artificial column per class (cost
    ``k + 1``) keeps it feasible before the columns cover every class (a class whose singleton does
    not fit may still fit with its neighbours); it plays no part in the proof, which is the
    Lagrangian bound."""

    def __init__(self, d: _Data, V: float, cpu_sets: bool = False):
        import highspy

        from splitopt.solvers.exact.highs import new_highs

        self._hs = highspy
        G = self.G = d.G
        h = self.h = new_highs(False)
        inf = highspy.kHighsInf
        none_i, none_f = np.zeros(0, np.int32), np.zeros(0)
        h.addRows(G, np.ones(G), np.full(G, inf), 0, none_i, none_i, none_f)
        h.addRows(1, np.array([-inf]), np.array([float(d.l)]), 0, none_i, none_i, none_f)
        starts, idx, val = [], [], []
        for g in range(G):
            starts.append(len(idx))
            idx.append(g), val.append(1.0)
            if d.cpu[g] > 0:
                idx.append(G), val.append(d.cpu[g] / V)
        self.yub = np.where(d.cpu <= V, 1.0, 0.0) if d.l and not cpu_sets else np.zeros(G)
        h.addCols(G, np.zeros(G), np.zeros(G), self.yub, len(idx), np.array(starts, np.int32),
                  np.array(idx, np.int32), np.array(val))
        ar = np.arange(G, dtype=np.int32)
        h.addCols(G, np.full(G, d.k + 1.0), np.zeros(G), np.ones(G), G, ar, ar, np.ones(G))
        self.acc_at: list[int] = []  # HiGHS column of every accelerator column, in order
        self.cpu_at: list[int] = []  # and of every CPU-set column

    def add(self, cols: list[np.ndarray], cpu: bool = False) -> None:
        """Append accelerator columns (cost 1), or CPU-set columns (cost 0, one in the CPU row)."""
        if not cols:
            return
        starts, idx = [], []
        for S in cols:
            starts.append(len(idx))
            idx += np.flatnonzero(S).tolist() + ([self.G] if cpu else [])
        m = len(cols)
        first = self.h.getNumCol()
        (self.cpu_at if cpu else self.acc_at).extend(range(first, first + m))
        self.h.addCols(m, np.zeros(m) if cpu else np.ones(m), np.zeros(m), np.full(m, self._hs.kHighsInf),
                       len(idx), np.array(starts, np.int32), np.array(idx, np.int32), np.ones(len(idx)))

    def restrict(self, fixed: np.ndarray, cols: list[np.ndarray], banned: set[int],
                 cpu_cols: list[np.ndarray] = ()) -> None:
        """Bounds for a dive: the rows of the ``fixed`` classes (placed on an accelerator) drop out,
        and so do their CPU fractions and every column that meets them or is ``banned``."""
        h, inf = self.h, self._hs.kHighsInf
        for g in range(self.G):
            h.changeRowBounds(g, 0.0 if fixed[g] else 1.0, inf)
            h.changeColBounds(g, 0.0, 0.0 if fixed[g] else float(self.yub[g]))
            h.changeColBounds(self.G + g, 0.0, 0.0 if fixed[g] else 1.0)
        for j, C in enumerate(cols):
            h.changeColBounds(self.acc_at[j], 0.0, 0.0 if j in banned or (C & fixed).any() else inf)
        for j, C in enumerate(cpu_cols):
            h.changeColBounds(self.cpu_at[j], 0.0, 0.0 if (C & fixed).any() else inf)

    def primal(self) -> np.ndarray:
        """The accelerator columns' values of the last solve."""
        return np.asarray(self.h.getSolution().col_value, dtype=float)[self.acc_at]

    def solve(self):
        """``(value, covering duals)``: the value is ``inf`` while an artificial column is in use
        (its fraction, at cost ``k + 1``, could otherwise pass for a cover by ``k`` columns);
        ``(inf, None)`` if the LP failed."""
        h = self.h
        h.run()
        if h.getModelStatus() != self._hs.HighsModelStatus.kOptimal:
            return math.inf, None
        sol = h.getSolution()
        y = np.asarray(sol.row_dual, dtype=float)[:self.G]
        art = math.fsum(np.asarray(sol.col_value, dtype=float)[self.G:2 * self.G])
        z = float(h.getInfo().objective_function_value) if art <= 1e-9 else math.inf
        return z, np.maximum(y, 0.0)


def _restricted_mip(d: _Data, cols: list[np.ndarray], V: float, time_limit: float | None,
                    fixed: np.ndarray | None = None, k: int | None = None, start=None, start_cpu=None,
                    cpu_cols: list[np.ndarray] | None = None):
    """Price and branch: the best placement made of the generated columns (each an accelerator's
    whole class set, so its load is the column's load) and CPU cores (a knapsack each, or, with
    ``cpu_cols``, at most ``l`` of these CPU sets): a set partitioning MILP minimising the largest
    load, all loads ``<= V``. With ``fixed`` (classes a dive placed) only the other classes are
    partitioned, by at most ``k`` columns that avoid the fixed ones. Returns ``(device per class
    (accelerators ``0..k-1``, CPU cores ``k..``; -1 for the fixed classes) or None, HiGHS's
    status)``. ``start`` (indices of columns) and ``start_cpu`` (the CPU core of every class, -1 for
    none) give HiGHS a placement to start from."""
    from splitopt.solvers.exact.highs import HighsMatrix

    G, l = d.G, d.l
    fixed = np.zeros(G, bool) if fixed is None else fixed
    k = d.k if k is None else k
    cols = [S for S in cols if not (S & fixed).any()]
    nS = len(cols)
    if nS == 0:
        return None, "no columns"
    loads = d.loads(cols)
    sets = cpu_cols is not None
    # the start's own CPU sets (one per busy core)
    own = [] if start_cpu is None else [C for C in (start_cpu == c for c in range(l)) if C.any()]
    if sets:
        # the CPU sets (the start's own last), as columns of CPU time; one count row
        ccols = [C for C in cpu_cols if not (C & fixed).any() and math.fsum(d.cpu[C]) <= V] + own
        cl = [math.fsum(d.cpu[C]) for C in ccols]
        cpu_ok, nC, nK = np.zeros(0, int), len(ccols), 1
    else:
        cpu_ok = np.flatnonzero((d.cpu <= V) & ~fixed) if l else np.zeros(0, int)
        nC, nK = l * cpu_ok.size, l
    n = nS + nC + 1  # columns, CPU columns or assignments, T
    tcol = n - 1
    rows, cc, vals = [], [], []
    for j, S in enumerate(cols):
        idx = np.flatnonzero(S)
        rows += idx.tolist() + [G, G + 1 + nK + j, G + 1 + nK + j]
        cc += [j] * (idx.size + 2) + [tcol]
        vals += [1.0] * idx.size + [1.0, loads[j] / V, -1.0]
    col = nS
    if sets:
        for j, C in enumerate(ccols):
            idx = np.flatnonzero(C)
            rows += idx.tolist() + [G + 1, G + 1 + nK + nS + j, G + 1 + nK + nS + j]
            cc += [col] * (idx.size + 2) + [tcol]
            vals += [1.0] * idx.size + [1.0, cl[j] / V, -1.0]
            col += 1
        m = G + 1 + nK + nS + nC
        hi_k, lo_t = np.r_[float(k), float(l)], np.full(nS + nC, -np.inf)
    else:
        for c in range(l):
            for g in cpu_ok:
                rows += [g, G + 1 + c, G + 1 + l + nS + c]
                cc += [col, col, col]
                vals += [1.0, d.cpu[g] / V, d.cpu[g] / V]
                col += 1
            rows.append(G + 1 + l + nS + c), cc.append(tcol), vals.append(-1.0)
        m = G + 1 + l + nS + l
        hi_k, lo_t = np.r_[float(k), np.ones(l)], np.full(nS + l, -np.inf)
    A = sp.csc_matrix((vals, (rows, cc)), shape=(m, n))
    need = np.where(fixed, 0.0, 1.0)
    lo = np.r_[need, -np.inf, np.full(nK, -np.inf), lo_t]
    hi = np.r_[need, hi_k, np.zeros(lo_t.size)]
    c = np.zeros(n)
    c[tcol] = 1.0
    integer = np.r_[np.ones(n - 1, bool), False]
    hm = HighsMatrix.from_arrays(c, A, lo, hi, np.zeros(n), np.r_[np.ones(n - 1), 1.0], integer,
                                 time_limit=time_limit, options={"presolve": "off"})
    if start is not None:
        # a MIP start: the placement the columns ``start`` (and CPU cores ``start_cpu``) make
        x0 = np.zeros(n)
        x0[list(start)] = 1.0
        if sets:
            x0[n - 1 - len(own):n - 1] = 1.0
        else:
            col = nS
            for c_ in range(l):
                for g in cpu_ok:
                    x0[col] = float(start_cpu[g] == c_)
                    col += 1
        x0[tcol] = max([loads[j] / V for j in start] + [math.fsum(d.cpu[C]) / V for C in own])
        import highspy

        sol = highspy.HighsSolution()
        sol.col_value = x0.tolist()
        hm.highs.setSolution(sol)
    res = hm.solve()
    if res.x is None:
        return None, res.status
    x = res.x > 0.5
    place = np.full(G, -1)
    for dev, j in enumerate(np.flatnonzero(x[:nS])):
        place[cols[j]] = dev
    if sets:
        for core, j in enumerate(np.flatnonzero(x[nS:nS + nC])):
            place[ccols[j]] = d.k + core
    else:
        col = nS
        for c_ in range(l):
            for g in cpu_ok:
                if x[col]:
                    place[g] = d.k + c_
                col += 1
    return (None, "incomplete") if (place[~fixed] < 0).any() else (place, res.status)


class _ColGen:
    """Column generation for the configuration LP at ``V`` (module docstring): the master, the
    pricer (:class:`_PathDP` where it applies, else the MILP of :class:`_Pricer`), the columns, and
    the classes a dive has placed (:meth:`fix`)."""

    def __init__(self, d: _Data, V: float, columns=None, alpha: float = 0.8, ncols: int = 40,
                 pricing_limit: float = 10.0, cpu_columns=None):
        self.d, self.V, self.alpha, self.ncols, self.pricing_limit = d, V, alpha, ncols, pricing_limit
        cols = list(columns or [])
        self.cols = [S for S, ok in zip(cols, d.fitting(cols, V)) if ok]
        self.have = {S.tobytes() for S in self.cols}
        singles = np.eye(d.G, dtype=bool)
        for S, ok in zip(singles, d.fitting(singles, V)):
            if ok and S.tobytes() not in self.have:
                self.cols.append(S)
                self.have.add(S.tobytes())
        self.dp = _PathDP.build(d, V)
        self.pricer = _Pricer(d, V) if self.dp is None else None
        # CPU-set columns (where d.cpu_sets and the DP applies): the singletons and the given sets
        # of CPU time <= V; else CPU fractions
        self.cpu_dp = _PathDP.build(d, V, cpu=True) if d.cpu_sets else None
        self.master = _Master(d, V, cpu_sets=self.cpu_dp is not None)
        self.master.add(self.cols)
        self.fixed = np.zeros(d.G, bool)
        self.cpu_cols: list[np.ndarray] = []
        if self.cpu_dp is not None:
            cand = list(cpu_columns or []) + list(np.eye(d.G, dtype=bool))
            seen: set = set()
            for S in cand:
                if S.tobytes() not in seen and math.fsum(d.cpu[S]) <= V:
                    seen.add(S.tobytes())
                    self.cpu_cols.append(S)
            self.master.add(self.cpu_cols, cpu=True)

    def price(self, point: np.ndarray, deadline: float | None):
        """``((upper bound on max point(S) over the accelerator columns, max point(C) over the
        CPU sets or None), the new columns)``."""
        d = self.d
        left = None if deadline is None else deadline - time.perf_counter()
        if self.dp is not None:
            ub, sets = self.dp.price(point, self.ncols, deadline)
            ub *= 1 + 1e-12  # the profits' rounding
            sets = [S for S in sets if point[S].sum() > 1 + 1e-9]
        else:
            lim = self.pricing_limit if left is None else min(self.pricing_limit, max(left, 0.1))
            val, ub, S = self.pricer.price(point, lim)
            sets = [] if S is None or val <= 1 + 1e-9 else [S]
        fresh = []
        # a column within the solver's tolerance of V is kept: columns only steer the duals,
        # the proof is the Lagrangian bound, whatever the columns
        for S, ok in zip(sets, d.fitting(sets, self.V * (1 + 1e-6))):
            if ok and S.tobytes() not in self.have:
                self.have.add(S.tobytes())
                fresh.append(S)
        self.cols.extend(fresh)
        self.master.add(fresh)
        rho = None
        if self.cpu_dp is not None:
            # CPU sets better than every CPU column so far; none means the CPU part is priced out
            rho, csets = self.cpu_dp.price(point, 10, deadline)
            rho *= 1 + 1e-12
            have = max((point[S].sum() for S in self.cpu_cols), default=0.0)
            new_cpu = [S for S in csets if point[S].sum() > have + 1e-9]
            self.cpu_cols.extend(new_cpu)
            self.master.add(new_cpu, cpu=True)
            fresh = fresh + new_cpu
        return (ub, rho), fresh

    def lagrangian(self, pi: np.ndarray, bound) -> float:
        """The Lagrangian (Farley) bound at ``pi`` (module docstring). With CPU-set columns the CPU
        part is also at most ``l`` times the best CPU set's profit (the cores hold ``l`` convex sets
        of CPU time ``<= V``); the smaller of that and the fractional knapsack counts."""
        u, rho = bound
        q = pi / max(u, 1.0)
        cpu = self.d.cpu_take(q, self.V)
        if rho is not None:
            cpu = min(cpu, self.d.l * rho / max(u, 1.0))
        return math.fsum(q) - cpu

    def run(self, k: int, deadline: float | None):
        """``(verdict, Lagrangian bound)`` for covering the unplaced classes with ``k`` columns."""
        centre = np.where(self.d.sup & ~self.fixed, self.d.acc, 0.0) / self.V
        u0, _new = self.price(centre, deadline)
        best = self.lagrangian(centre, u0)
        while True:
            if best > k * (1 + 1e-9):
                return "proven", best
            if deadline is not None and time.perf_counter() >= deadline:
                return "time_limit", best
            z, pi = self.master.solve()
            if pi is None:
                return "time_limit", best  # the master LP failed: no verdict
            # the rows of placed classes are void: whatever duals the LP gives them, the pricing
            # cannot take those classes, so they must not count in the bound
            pi[self.fixed] = 0.0
            if z <= k * (1 + 1e-9):
                return "no", best
            point = self.alpha * centre + (1 - self.alpha) * pi
            ub, new = self.price(point, deadline)
            L = self.lagrangian(point, ub)
            if L > best:
                best, centre = L, point
            if new or best > k * (1 + 1e-9):
                continue
            # mis-price at the smoothed point: price the master's own duals
            centre = pi
            ub, new = self.price(pi, deadline)
            best = max(best, self.lagrangian(pi, ub))
            if not new and best <= k * (1 + 1e-9):
                # no column and no proof: the LP is at (numerically) k, or the pricing stopped early
                return ("no" if ub[0] <= 1 + 1e-9 else "time_limit"), best

    def _restrict(self, fixed: np.ndarray, banned: set[int]) -> None:
        self.fixed = fixed.copy()
        self.master.restrict(fixed, self.cols, banned, self.cpu_cols)
        self.dp.allowed = self.allowed0 & ~fixed
        if self.cpu_dp is not None:
            self.cpu_dp.allowed = self.cpu_allowed0 & ~fixed

    def dive(self, deadline: float | None, tries: int = 3):
        """Price and dive (a heuristic): solve the LP over the classes not yet placed; if the columns
        so far partition them (:func:`_restricted_mip`), done; else place the column of the largest
        LP value, drop its classes and one accelerator, and repeat. A placed column after which the
        LP proves the rest infeasible is taken back and banned (``tries`` times in all). Returns
        the device of every class (accelerators ``0..k-1``, CPU cores ``k..``) or ``None``. Needs
        the DP pricer."""
        d = self.d
        if self.dp is None:
            return None
        self.allowed0 = self.dp.allowed.copy()
        if self.cpu_dp is not None:
            self.cpu_allowed0 = self.cpu_dp.allowed.copy()
        chosen: list[int] = []
        banned: set[int] = set()
        fails = 0
        try:
            while len(chosen) < d.k:
                dev = len(chosen)
                verdict, _L = self.run(d.k - dev, deadline)
                if verdict == "time_limit":
                    return None
                if verdict == "proven":  # the last column placed leaves an infeasible rest
                    if dev == 0 or fails >= tries:
                        return None
                    fails += 1
                    banned.add(chosen.pop())
                    self._restrict(np.any([self.cols[j] for j in chosen], axis=0) if chosen
                                   else np.zeros(d.G, bool), banned)
                    continue
                # at most 2 s each: with all k devices open the MILP over thousands of columns
                # mostly proves that no partition exists (ResNet-50: 19 s at the first level of a
                # dive, 0.3-0.6 s with three devices left, where partitions are found)
                left = min(2.0, max(deadline - time.perf_counter(), 0.1)) if deadline is not None else 2.0
                rest, _st = _restricted_mip(d, self.cols, self.V, left, fixed=self.fixed, k=d.k - dev,
                                            cpu_cols=self.cpu_cols if self.cpu_dp is not None else None)
                if rest is not None:
                    place = np.full(d.G, -1)
                    for dev_, j in enumerate(chosen):
                        place[self.cols[j]] = dev_
                    for g in np.flatnonzero(~self.fixed):
                        place[g] = rest[g] + dev if rest[g] < d.k else rest[g]
                    return place
                lam = self.master.primal()
                j = int(np.argmax(lam))
                if lam[j] <= 1e-9:
                    return None
                chosen.append(j)
                self._restrict(self.fixed | self.cols[j], banned)
            return None
        finally:
            self.dp.allowed = self.allowed0
            if self.cpu_dp is not None:
                self.cpu_dp.allowed = self.cpu_allowed0


def prove_above(instance: DeviceInstance, V: float, *, time_limit: float | None = None,
                columns: list[np.ndarray] | None = None, alpha: float = 0.8, pricing_limit: float = 10.0,
                ncols: int = 40):
    """Try to prove that no placement has value ``<= V``. Returns ``(verdict, lagrangian, columns)``
    with verdict ``"proven"`` (the Lagrangian bound exceeds ``k``), ``"no"`` (the LP reaches ``k``
    or less: ``V`` cannot be proven this way) or ``"time_limit"``; ``columns`` (every set
    generated, all feasible at ``V``) can seed a call with another ``V`` (those that fit are kept).

    Pricing by :class:`_PathDP` where it applies (up to ``ncols`` columns per round), else by the
    MILP of :class:`_Pricer` (one). The smoothing centre starts at duals proportional to the
    accelerator time (``pi_g = acc_g / V``: their Lagrangian bound is the work bound), which on
    ResNet-50 halves the rounds."""
    cg = _ColGen(_Data(instance), V, columns, alpha, ncols, pricing_limit)
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    verdict, best = cg.run(cg.d.k, deadline)
    return verdict, best, cg.cols


def _sets_of(instance: DeviceInstance, d: _Data, assignment):
    """The class sets of the accelerators a placement uses, and the CPU core of every class (-1
    where on an accelerator)."""
    from splitopt.models.throughput_device import device_indices

    p = device_indices(instance, assignment)
    dev = np.array([p[m[0]] for m in d.classes])
    sets = [dev == j for j in range(d.k) if (dev == j).any()]
    return sets, np.where(dev >= d.k, dev - d.k, -1)


def _placement(instance: DeviceInstance, d: _Data, place: np.ndarray) -> list[str]:
    names = [""] * instance.n_nodes
    for g, members in enumerate(d.classes):
        for i in members:
            names[i] = instance.devices[int(place[g])]
    return names


def relaxation(instance: DeviceInstance, time_limit: float | None = None, target_gap: float = 1e-3,
               incumbent=None, steps: int = 20, first_step: float = 6e-3) -> AlgoResult:
    """The configuration-LP bound with price-and-branch placements (module docstring).

    From an incumbent of value ``U``, values ``V`` are decided one after another: first
    ``(1 - first_step) U`` (0.3 % below), then the target ``(1 - target_gap) U`` while no value at or
    below it is refuted, else halfway between the largest proven and the smallest refuted value;
    after a refuted value the next is at most ``step`` lower (0.3 %, doubling while values are
    refuted in a row). Where the LP reaches ``k`` at ``V`` ("no"), a dive (where the Lagrangian is
    within 0.2 % of ``k``) and :func:`_restricted_mip` over the columns and the incumbent's sets look
    for a placement of value ``<= U``; a better one lowers ``U`` and the target with it (ResNet-50:
    a dive at 33.229 ms found 33.2245 ms). ``incumbent``: a placement (default:
    :func:`~splitopt.solvers.throughput.device_lns.solve`, or the MILP's incumbent phase for
    ``chain``, with 0.2 of ``time_limit``). Each value gets the time left less a fifth (at most 10 s)
    for the dive and the restricted MILP; one part in 50 of the limit (at most 1 s) is kept for the
    end. Returns the best placement (evaluated) and ``bound`` the largest value proven (one part in
    1e9 below it, for the solvers' tolerances); ``info["tried"]`` lists every value, its verdict,
    Lagrangian bound, columns, the clock, and the placements found there."""
    from splitopt.errors import InfeasibleSolution
    from splitopt.models.throughput_device import evaluate
    from splitopt.solvers.throughput.device_milp import _incumbent, combinatorial_bound

    if instance.n_accelerators == 0:
        raise InstanceError("n_accelerators", "is 0: the configuration LP bounds accelerator sets")
    t0 = time.perf_counter()
    d = _Data(instance)
    lb, _lbs = combinatorial_bound(instance)
    if incumbent is None:
        share = None if time_limit is None else 0.2 * time_limit
        if instance.contiguity != "chain":
            from splitopt.solvers.throughput import device_lns

            incumbent = device_lns.solve(instance, time_limit=share).assignment
        else:
            incumbent = _incumbent(instance, share)[0]
        if incumbent is None:
            raise InstanceError("instance", "no feasible placement found to bound against")
    ub = evaluate(instance, incumbent)[0]
    source = "incumbent"

    # a margin for what follows the last decision (building a master, scoring, returning)
    budget = None if time_limit is None else time_limit - min(1.0, 0.02 * time_limit)

    def left():
        return None if budget is None else budget - (time.perf_counter() - t0)

    proven, lo, hi = lb, lb, ub
    tried: list[dict] = []
    cols: list[np.ndarray] = []
    cpu_cols: list[np.ndarray] = []
    def aim(u):  # the value that meets the target gap once proven (the proof is 1e-9 below it)
        return u * (1 - target_gap) * (1 + 2e-9)

    # first aim below the target, where the LP is tight enough for a dive to find placements
    # (from a poor incumbent, 0.1 % below it is a value the LP cannot prove nor a dive reach)
    V = max(lb, ub * (1 - max(target_gap, first_step)))
    if V <= lb:  # the combinatorial bound is already that close: aim at the target (BERT-24)
        V = aim(ub)
    def score(place):
        if place is None:
            return math.inf, None
        p = _placement(instance, d, place)
        try:
            return evaluate(instance, p)[0], p
        except InfeasibleSolution:  # not contiguous as the instance asks
            return math.inf, None

    step = first_step
    proven_cols: list[np.ndarray] = []
    proven_cpu: list[np.ndarray] = []

    # how far above the largest proven value the next one goes: near the LP's threshold the LP is
    # tight, so a dive there finds placements, and a proof there raises the bound
    climb = 0.8 * max(target_gap, 1e-3)

    def nxt():
        # the target, or just above the largest proven value where that is lower; halfway between
        # the proven and the refuted values where both are at or above the smallest refuted one
        v = aim(ub) if lo <= lb else min(aim(ub), lo * (1 + climb))
        return v if v < hi else 0.5 * (lo + hi)

    for _step in range(max(1, steps)):
        rest = left()
        if V <= proven or hi - lo <= 1e-6 * hi or (rest is not None and rest <= 0):
            break
        deadline = None if rest is None else time.perf_counter() + rest - min(10.0, 0.2 * rest)
        cg = _ColGen(d, V, cols, cpu_columns=cpu_cols)
        verdict, L = cg.run(d.k, deadline)
        cols, cpu_cols = list(cg.cols), list(cg.cpu_cols)
        tried.append({"V": V, "verdict": verdict, "lagrangian": L, "columns": len(cols),
                      "seconds": round(time.perf_counter() - t0, 2)})
        if verdict == "proven":
            step = first_step
            proven = lo = V
            proven_cols, proven_cpu = list(cols), list(cpu_cols)
            if V >= aim(ub) * (1 - 1e-12):
                break
            V = nxt()
            continue
        if verdict == "no":
            # the LP reaches k at V: look for placements in it (a dive, then the best partition of
            # the columns with the incumbent's own sets, which always has a solution)
            v, a = math.inf, None
            if L >= d.k * (1 - 2e-3) or (lo > lb and V <= lo * (1 + 2.5 * climb)):
                # a dive pays only where the LP is tight (ResNet-50: at 0.5 % of slack every column
                # the dive placed left an infeasible rest; at 0.1 % it found 33.224 ms; from
                # scratch at 33.223-33.24 ms, 0.02-0.07 % above the LP's threshold, 5 dives of 6
                # found 33.222-33.235 ms)
                rest = left()
                dive_end = None if rest is None else time.perf_counter() + min(30.0, 0.5 * rest)
                v, a = score(cg.dive(dive_end))
                cols, cpu_cols = list(cg.cols), list(cg.cpu_cols)
                if a is None and proven_cols and (rest is None or left() > 0.4 * rest):
                    # again from the columns of the last proven value (a fresh LP state: from
                    # there dives at three values near ResNet-50's threshold all succeeded)
                    again = _ColGen(d, V, proven_cols, cpu_columns=proven_cpu)
                    if again.run(d.k, dive_end)[0] == "no":
                        v, a = score(again.dive(dive_end))
                tried[-1]["dive"] = v
            if a is None:
                # no dive placement (or none tried): the best partition of the columns with the
                # incumbent's own sets (a dive's placement is within V, where the LP is tight;
                # this MILP then only costs time: 5 s on ResNet-50)
                rest = left()
                fit = [S for S, ok in zip(cols, d.fitting(cols, ub)) if ok]
                own, own_cpu = _sets_of(instance, d, incumbent)
                place, st = _restricted_mip(d, fit + own, ub, None if rest is None else min(5.0, max(rest, 0.1)),
                                            start=range(len(fit), len(fit) + len(own)), start_cpu=own_cpu,
                                            cpu_cols=cpu_cols if cg.cpu_dp is not None else None)
                pv, p = score(place)
                tried[-1]["restricted_mip"] = pv
                tried[-1]["restricted_mip_status"] = st
                if pv < v:
                    v, a = pv, p
            if v < ub:
                incumbent, ub, source = a, v, "dive" if v == tried[-1].get("dive") else "restricted_mip"
                step = first_step
                hi = min(hi, ub)
                V = nxt()
                continue
        hi = V  # refuted or undecided: look lower, by halves but at most `step` at a time (each
        # value costs about as much to decide; the LP bound is usually close below the optimum),
        # the step doubling while values are refuted in a row
        V = max(0.5 * (lo + hi), hi * (1 - step))
        step *= 2
    bound = min(proven * (1 - 1e-9) if proven > lb else lb, ub)
    return AlgoResult(list(incumbent), status="ok", bound=bound,
                      info={"tried": tried, "combinatorial": lb, "incumbent": ub, "solution_from": source})


__all__ = ["prove_above", "relaxation"]
