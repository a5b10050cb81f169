"""Pricing of the configuration LP of the device-placement model (:mod:`.colgen`): the class data
(:class:`_Data`), the fractional knapsack of the CPU part and the MILP pricer (:class:`_Pricer`);
the exact DP over a topological order with few open tensors is :class:`.pathdp._PathDP`. Split out
of ``colgen`` (issue 22: modules under 600 lines); the mathematics is described in
:mod:`splitopt.solvers.placement.colgen`'s docstring (Tarnawski et al., NeurIPS 2020, §4)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import class_data, class_tensors


class _Data:
    """Class-level data in seconds: accelerator and CPU time (forward + backward), size, support,
    tensors ``(producer class, consumer classes, seconds)`` between distinct classes."""

    def __init__(self, instance: PlacementInstance):
        cls, cpu, acc, size, sup = class_data(instance)
        self.classes = cls
        self.G = len(cls)
        self.cpu, self.acc = np.array(cpu, float), np.array(acc, float)
        self.size, self.sup = np.array(size, float), np.array(sup, bool)
        self.tens = [(gu, gs, float(sec)) for gu, gs, sec, _b in class_tensors(instance)[1]]
        self.k, self.l = instance.n_accelerators, instance.n_cpus
        self.cap = instance.acc_memory_bytes
        if self.cap is not None:
            # a class larger than an accelerator's memory is on a CPU core in every placement: no
            # column holds it (with a capacity of 0 its memory share was infinite, and the memory
            # pricing's lines NaN)
            self.sup &= self.size <= self.cap
        # contiguity "convex" where convexity of class sets is that of their nodes
        # (:meth:`_class_level_convexity`; a training graph's classes pair a forward node with its
        # backward nodes, an operator graph's an operator with its weights and the nodes it alone
        # feeds): the DP prices convex sets only, over every
        # forward edge (tensors of zero seconds too: they carry paths), each tensor's seconds on
        # the forward tensor with the same member classes, else on a tensor of cost only
        # (:attr:`cost_tens`: a backward tensor). Else the pricing ignores convexity: the LP is a
        # relaxation of the convex problem, still a bound
        self.convex_tens = None
        self.cost_tens: list = []
        back = instance.backward
        cls_of = {i: g for g, c in enumerate(cls) for i in c}
        if instance.contiguity == "convex" and self._class_level_convexity(instance, cls, cls_of):
            conv, by_set = [], {}
            for u, cons, _sec in instance.tensors:
                if back[u]:
                    continue
                gs = sorted({cls_of[c] for c in cons if not back[c]} - {cls_of[u]})
                if gs:
                    t = [cls_of[u], gs, 0.0]
                    conv.append(t)
                    by_set.setdefault(frozenset((t[0], *gs)), t)
            for gu, gs, sec in _merged(self.tens):
                t = by_set.get(frozenset((gu, *gs)))
                if t is not None:
                    t[2] += sec
                else:
                    self.cost_tens.append((gu, gs, sec))
            self.convex_tens = [tuple(t) for t in conv]
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

    @staticmethod
    def _class_level_convexity(instance: PlacementInstance, cls, cls_of) -> bool:
        """Whether convexity of class sets in the class graph is convexity of their nodes: every
        class's *entries* (forward nodes fed by another class) reach each of its *exits* (forward
        nodes feeding another class) along forward edges inside the class. Then every walk of
        classes is a path of nodes (it enters a class at an entry and can leave it at any exit), so
        a path of nodes leaves a set and re-enters it exactly where a walk of its classes does, and
        the class graph is acyclic (a cycle of classes would be a cycle of nodes). Else a set that
        is convex node by node may not be so class by class (a class fed at one node and feeding
        at another it does not reach), and pricing convex class sets would miss columns.

        Since 2026-11-25 (before: at most one forward node per class that is fed or feeds another
        class, which this includes): the peer's BERT inference operator graphs group an operator
        with the nodes it alone feeds (a matmul with its reshapes: entry and exit joined by a path)."""
        succ: dict[int, list[int]] = {}
        entries, exits = set(), set()
        for u, v in instance.forward_edges:
            if cls_of[u] == cls_of[v]:
                succ.setdefault(u, []).append(v)
            else:
                exits.add(u)
                entries.add(v)
        for c in cls:
            ins = [i for i in c if i in entries]
            outs = {i for i in c if i in exits}
            if not ins or not outs or (len(ins) == 1 and outs == {ins[0]}):
                continue
            for a in ins:
                seen, stack = {a}, [a]
                while stack:
                    for y in succ.get(stack.pop(), ()):
                        if y not in seen:
                            seen.add(y)
                            stack.append(y)
                if not outs <= seen:
                    return False
        return True

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

    def fitting(self, cols, V: float, memory: bool = True) -> np.ndarray:
        """Which of the class sets one accelerator can hold at ``V``: supported classes only, load
        ``<= V``, memory within the limit (unless not ``memory``)."""
        X = np.asarray(cols, bool).reshape(-1, self.G)
        ok = ~(X & ~self.sup).any(axis=1) & (self.loads(X) <= V)
        if self.cap is not None and memory:
            ok &= X.astype(float) @ self.size <= self.cap
        return ok

    def fits(self, S: np.ndarray, V: float) -> bool:
        return bool(self.fitting(S, V)[0])

    def cpu_take(self, pi: np.ndarray, V: float, cap: float | None = None) -> float:
        """``max pi y`` over ``0 <= y_g <= [cpu_g <= V]``, ``sum cpu_g y_g <= cap`` (default ``l
        V``; greedy = exact)."""
        if self.l == 0:
            return 0.0
        ok = (pi > 0) & (self.cpu <= V)
        return _fractional_knapsack(pi[ok], self.cpu[ok], self.l * V if cap is None else max(cap, 0.0))


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
        self.hm.set_option("mip_improving_solution_save", True)  # for :meth:`improving`
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

    def improving(self, pi: np.ndarray, floor: float = 1.0) -> list[np.ndarray]:
        """The sets of the last :meth:`price`'s improving solutions (HiGHS saves each) of profit
        ``pi(S) > floor``: columns too, beside the best (more columns per pricing MILP: BERT-like
        300 non-contiguous, the LP with memory at 0.281573 ms proven in 20.5 s against 35.6 s)."""
        out = []
        for sol in self.hm.highs.getSavedMipSolutions():
            S = np.asarray(sol.col_value[:self.G]) > 0.5
            if math.fsum(pi[S]) > floor * (1 + 1e-9):
                out.append(S)
        return out


_LAST: list = []  # weak references to the last instances asked about, each with its class data


def data_of(instance: PlacementInstance) -> _Data:
    """``_Data(instance)``, built once for each of the last few instances asked about
    (:func:`~.common.recent`: the same instance, or a copy of the same data with the same contiguity
    and objective): the MILP's test of whether the configuration LP applies and the LP itself then
    share the class data and the DP pricers chosen (:meth:`.pathdp._PathDP.build` caches on it)."""
    from splitopt.solvers.placement.common import recent

    return recent(_LAST, instance, lambda held: held.same_data(instance) and held.contiguity == instance.contiguity
                  and held.objective == instance.objective, lambda: _Data(instance))


def _max_memory(d: _Data, V: float) -> float:
    """An upper bound on the memory of any accelerator set of load ``<= V``: the fractional
    knapsack of sizes under accelerator time ``<= V`` (a load is at least the compute time)."""
    ok = d.sup & (d.acc <= V)
    return _fractional_knapsack(d.size[ok], d.acc[ok], V)


def _merged(tens):
    """Tensors with the same member classes as one (their seconds summed): a set pays a tensor iff
    it holds some of its members but not all, whoever produces it. A training graph's forward
    tensor and the gradient sent back along it join the same two classes: halves the open tensors
    of a chain of layers."""
    merged: dict = {}
    for gu, gs, sec in tens:
        key = frozenset((gu, *gs))
        if key in merged:
            merged[key][2] += sec
        else:
            merged[key] = [gu, gs, sec]
    return [tuple(v) for v in merged.values()]
