"""The restricted master LP of the device-placement configuration LP (:class:`_Master`, HiGHS
kept warm between rounds) and the restricted master MILP over given columns
(:func:`_restricted_mip`): split out of :mod:`.colgen` (issue 22: modules under 600 lines); the
model (Tarnawski et al., NeurIPS 2020, §4; configuration LP) is described in that module's
docstring."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from splitopt.solvers.placement.pricing import _Data


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

    def limit_cpu(self, cap: float, may: np.ndarray) -> None:
        """The CPU fractions' capacity (in units of ``V``) and which classes may take a fraction."""
        self.h.changeRowBounds(self.G, -self._hs.kHighsInf, float(cap))
        for g in np.flatnonzero(~may):
            self.h.changeColBounds(int(g), 0.0, 0.0)

    def values(self):
        """``(accelerator columns' values, CPU-set columns' values, CPU fractions)`` of the last solve."""
        x = np.asarray(self.h.getSolution().col_value, dtype=float)
        return x[self.acc_at], x[self.cpu_at], x[:self.G]

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
