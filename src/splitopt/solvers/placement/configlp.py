"""The configuration LP of the device-placement model at one value ``V`` (Tarnawski et al.,
NeurIPS 2020, §4 model; the LP is ours): column generation (:class:`_ColGen`: the master of
:mod:`.master`, the pricing of :mod:`.pricing`, smoothed duals, the Lagrangian (Farley) bound and the
price-and-dive heuristic) and :func:`prove_above`. Split out of :mod:`.colgen` (2026-11-25), whose
docstring describes the mathematics and whose :func:`~.colgen.relaxation` searches over ``V`` with
it; :mod:`.branchprice` branches on it."""

from __future__ import annotations

import math
import time

import numpy as np

from splitopt.instances.placement import PlacementInstance
from splitopt.solvers.placement.columns import windows
from splitopt.solvers.placement.master import _Master, _restricted_mip
from splitopt.solvers.placement.memoryprice import _MemoryPricing
from splitopt.solvers.placement.pathdp import _PathDP
from splitopt.solvers.placement.pricing import _Data, _max_memory, _Pricer

KEEP = 2048
"""Points a front keeps in the DP's heuristic pricing (:meth:`_ColGen._price_at`; 0: exact pricing
only)."""

MEMORY_LAGRANGIAN = True
"""Where memory could bind, price with the memory row's Lagrangian and keep only columns that fit
(:meth:`_ColGen._memory_price`: the configuration LP with memory); ``False``: the memory-free LP
of before 2026-11-27 (a weaker relaxation, kept for comparison)."""

DIVE_LEVEL_MIN = 0.3
"""Seconds a level of a dive (:meth:`_ColGen.dive` with ``shares``: the wide dives of
:mod:`.colgen`, far above the LP's threshold) may always take; beyond that, each level takes at most
the time left over the levels left plus one (since 2026-11-29). A level whose LP is not done by then
goes on from the master's primal as it stands. Before, the first slow level took all the time: on
the peer's BERT-L12 training graph (non-contiguous, 2,012 nodes) the wide dives, 4-5 s each, spent
it on residual LPs of 3-4 s at their third or fourth level and found nothing in three command-line
runs out of three (418.32 ms, 10.7 % open). Not for the dives at the LP's own values, just above its
threshold, where the LP must be solved to be followed: ResNet-50 inference (non-contiguous), whose
dive at 33.241 ms finds 33.2386 ms, found nothing in one run of three with the shares (its third-
and fourth-level LPs stopped at 1 s)."""

DIVE_BY_WORK = True
"""A wide dive (``shares``) places the column of largest LP value times accelerator work (since
2026-11-29; before, largest LP value). Where the LP is degenerate (many columns at 1) the plain rule
took the oldest, and where a level's LP stopped at its time share (:data:`DIVE_LEVEL_MIN`) often a
column of one or two classes, spending an accelerator on almost nothing. Measured on the peer's
BERT-L12 training graph (non-contiguous, ``auto`` at 60 s, 2-core machine): 396.86 ms in three runs
by LP value, 375.94 and 374.92 ms in two by value times work (bound 373.41 ms). The dives at the
LP's own values keep the plain rule: with both rules on every dive, the peer's ResNet-50 inference
layer graph (non-contiguous) ended 0.153 % open in two tables of two (its proof at 33.2144 ms,
about 17 s, missed its deadline; 0.073 % in the tables before, and in three traces of four), a
difference these runs could not tell from noise, so the change was kept where it was measured."""

DIVE_MIP_DEVICES = 3
"""A dive (:meth:`_ColGen.dive`) asks the restricted MILP for a partition of the columns only once
at most this many accelerators are left (at least 1; since 2026-11-29). With more left, that MILP
mostly proved that no partition exists, at its cap of 2 s a level, while the LP of a level took
0.01-0.03 s: on ResNet-50 (non-contiguous) two dives near the LP's threshold, given 3.6 and 1.0 s
beside the branch and price, ran out of time at their third and second levels and found nothing;
with the rule the first found 33.2422 ms in 2.5 s (its MILP answering with three accelerators
left), the call ending 0.10 % open instead of 0.36 % (``colgen.relaxation`` at 60 s from the same
5-s incumbent, one run each)."""

HEURISTIC_FROM = 5e6
"""The heuristic pricing is used where an exact pricing handles more front points than this (about
0.1 s). Measured 2026-11-25, proofs of one value near the LP's threshold, exact pricing only -> with
the heuristic: a 308-class BERT-like training graph (8.3 million points, 0.16 s a pricing) 16.6 ->
4.7 s and 24.2 -> 11.1 s; ResNet-50 (3.9 million, 83 ms) 6.0 -> 10.7 s and 6.4 -> 10.7 s: below this
the exact pricing is cheap enough that the heuristic's poorer columns cost more rounds than they
save."""


EXACT_BUDGET = 4 * HEURISTIC_FROM
"""Front points past which an exact DP pricing, while the heuristic pricing is not yet on, thins
its remaining steps and turns the heuristic on (:meth:`_ColGen.price`; ours, 2026-11-28). The
first pricing at the work bound's duals is cheap (the floor of 1 drops almost every point), the
second can take the longest of all: 161 million points, 9 s, on the peer's BERT-L6 training
operator graph (the heuristic pricings after it: 0.4-1 s)."""


class _ColGen(_MemoryPricing):
    """Column generation for the configuration LP at ``V`` (module docstring): the master, the
    pricer (:class:`_PathDP` where it applies, else the MILP of :class:`_Pricer`), the columns, and
    the classes a dive has placed (:meth:`fix`). ``node``: a node of the branch and price
    (:class:`~.branchprice.Node`: its branching pairs and CPU decisions restrict the columns, the
    master and the Lagrangian), with ``dps`` its accelerator and CPU DP pricers (pairs built in)."""

    def __init__(self, d: _Data, V: float, columns=None, alpha: float = 0.8, ncols: int = 40,
                 pricing_limit: float = 10.0, cpu_columns=None, node=None, dps=None, seed: bool = False,
                 seed_until: float | None = None):
        self.d, self.V, self.alpha, self.ncols, self.pricing_limit = d, V, alpha, ncols, pricing_limit
        self.keep = 0  # set by run()
        self.node = node
        # the DP has no memory dimension: where memory could bind the LP starts without memory
        # (its columns may not fit, and only those that do (:meth:`placeable`) make placements: a
        # relaxation); where that LP reaches k with a column that does not fit, the root switches
        # to the LP with memory (:meth:`_with_memory`: columns that fit only, the pricing by the
        # memory row's Lagrangian, :meth:`_memory_price`; since 2026-11-27,
        # :data:`MEMORY_LAGRANGIAN`); else the MILP prices, with its memory row
        self.dp = _PathDP.build(d, V, relax_memory=True) if dps is None else dps[0]
        self.pricer = _Pricer(d, V) if self.dp is None else None
        self.memory_free = self.dp is not None and d.cap is not None and _max_memory(d, V) > d.cap
        self.memory_binds = self.memory_free  # columns are checked against memory to place them
        self.memory_priced = False  # the LP with memory (the columns fit; memory_free then off)
        self.banned_memory: set[int] = set()  # columns barred from the LP with memory
        if self.memory_free:
            self.msize = d.size / d.cap if d.cap > 0 else np.where(d.size > 0, np.inf, 0.0)
            self.mu = 0.0  # the multiplier of the memory row that gave the smallest bound so far
        cols = list(columns or [])
        if seed and self.dp is not None and node is None:
            cols += windows(d, V, self.dp.order, deadline=seed_until)
        self.cols = [S for S, ok in zip(cols, self._fitting(cols)) if ok]
        self.have = {S.tobytes() for S in self.cols}
        singles = np.eye(d.G, dtype=bool)
        fit = d.fitting(singles, V, memory=not self.memory_free)
        if node is not None:
            fit &= node.admitted(singles, False)
        for S, ok in zip(singles, fit):
            if ok and S.tobytes() not in self.have:
                self.cols.append(S)
                self.have.add(S.tobytes())
        # CPU-set columns (where d.cpu_sets and the DP applies): the singletons and the given sets
        # of CPU time <= V; else CPU fractions
        if dps is not None:
            self.cpu_dp = dps[1]
        else:
            self.cpu_dp = _PathDP.build(d, V, cpu=True) if d.cpu_sets and self.dp is not None and self.dp.convex \
                else None
        self.master = _Master(d, V, cpu_sets=self.cpu_dp is not None)
        self.master.add(self.cols)
        self.fixed = np.zeros(d.G, bool)
        # the CPU fractions' capacity (seconds) and the classes that may take them
        self.cpu_cap, self.cpu_may = d.l * V, np.ones(d.G, bool)
        self.cpu_cols: list[np.ndarray] = []
        if self.cpu_dp is not None:
            cand = list(cpu_columns or []) + list(np.eye(d.G, dtype=bool))
            seen: set = set()
            ok = np.ones(len(cand), bool) if node is None else node.admitted(cand, True)
            for S, o in zip(cand, ok):
                if o and S.tobytes() not in seen and math.fsum(d.cpu[S]) <= V:
                    seen.add(S.tobytes())
                    self.cpu_cols.append(S)
            self.master.add(self.cpu_cols, cpu=True)
        if node is not None and self.cpu_dp is None:
            # CPU fractions: the classes on a CPU core leave the covering rows and take their CPU
            # time off the capacity; the classes on an accelerator get no fraction
            self.fixed = node.on_cpu.copy()
            self.cpu_cap = d.l * V - math.fsum(d.cpu[node.on_cpu])
            self.cpu_may = ~node.on_cpu & ~node.off_cpu
            self.master.restrict(self.fixed, self.cols, set(), self.cpu_cols)
            self.master.limit_cpu(self.cpu_cap / V, self.cpu_may)

    def _fitting(self, cols) -> np.ndarray:
        """Which of the accelerator sets ``cols`` are columns here: :meth:`_Data.fitting` at ``V``,
        or at a node (whose columns come from the same ``V``) the node's branching decisions."""
        if self.node is not None:
            return self.node.admitted(cols, False)
        return self.d.fitting(cols, self.V, memory=not self.memory_free)

    def price(self, point: np.ndarray, deadline: float | None, keep: int = 0):
        """``((upper bound on max point(S) over the accelerator columns, max point(C) over the
        CPU sets or None), the new columns)``. ``keep > 0``: the DP's heuristic pricing
        (:meth:`_PathDP.price`): its "bound" is then only the best set it found."""
        d = self.d
        left = None if deadline is None else deadline - time.perf_counter()
        if self.dp is not None:
            if self.memory_priced:
                ub, sets = self._memory_price(point, deadline, keep)
            else:
                # until the heuristic is on, an exact pricing past EXACT_BUDGET points thins the
                # rest of its steps: no bound then (inf), and the heuristic is on from here
                budget = EXACT_BUDGET if not keep and not self.keep else math.inf
                ub, sets = self.dp.price(point, self.ncols, deadline, keep=keep, floor=1.0, budget=budget,
                                         thin_to=KEEP)
                ub *= 1 + 1e-12  # the profits' rounding
                if not keep and self.dp.thinned:
                    self.keep = KEEP
                    sets = [S for S in sets if point[S].sum() > 1 + 1e-9]
                    if not any(S.tobytes() not in self.have for S in sets):
                        return self.price(point, deadline)  # nothing new: exact, no budget now
                    ub = math.inf
            sets = [S for S in sets if point[S].sum() > 1 + 1e-9]
        else:
            lim = self.pricing_limit if left is None else min(self.pricing_limit, max(left, 0.1))
            val, ub, S = self.pricer.price(point, lim)
            sets = [] if S is None or val <= 1 + 1e-9 else [S]
        fresh = []
        # a column within the solver's tolerance of V is kept: columns only steer the duals,
        # the proof is the Lagrangian bound, whatever the columns
        for S, ok in zip(sets, d.fitting(sets, self.V * (1 + 1e-6), memory=not self.memory_free)):
            # (at a branch-and-price node the DP's pairs and masks already meet its decisions)
            if ok and S.tobytes() not in self.have:
                self.have.add(S.tobytes())
                fresh.append(S)
        self.cols.extend(fresh)
        self.master.add(fresh)
        rho = None
        if self.cpu_dp is not None:
            # CPU sets better than every CPU column so far; none means the CPU part is priced out
            # (only sets above the best CPU column are wanted: with that floor the DP prunes, and
            # returns the floor itself, a column's profit, where none is above it)
            have = max((point[S].sum() for S in self.cpu_cols), default=0.0)
            rho, csets = self.cpu_dp.price(point, 10, deadline, floor=have, budget=HEURISTIC_FROM, thin_to=KEEP)
            rho *= 1 + 1e-12
            if self.cpu_dp.thinned:  # its fronts thinned past the budget: the Lagrangian's u bounds
                rho = self.cpu_dp.upper
            new_cpu = [S for S in csets if point[S].sum() > have + 1e-9]
            self.cpu_cols.extend(new_cpu)
            self.master.add(new_cpu, cpu=True)
            fresh = fresh + new_cpu
        return (ub, rho), fresh

    def _with_memory(self) -> bool:
        """Switch the root's LP to the configuration LP with memory where the LP without it reaches
        ``k`` with a column that does not fit (then only the LP with memory can prove more at
        ``V``): columns that do not fit are barred from the master and the pricing moves to
        :meth:`_memory_price`. Whether it switched (not in a dive, nor where the LP's columns all
        fit: there the LP with memory reaches ``k`` too). At a branch-and-price node too since
        2026-11-29, where the DP with memory exact (:meth:`_memory_dp_price`, which honours the
        node's pairs) prices; before, a node's LP stayed without memory, and on the seeded BERT-like
        300-node graph (non-contiguous) the branch and price at the value certifying 0.281573 ms
        searched 97 nodes in 19 s undecided. Measured
        2026-11-27: pricing with memory from the start took the seeded Inception-like 300-node
        graph's first value from 2.6 to 23 s (more pricings, poorer pruning), where its LP's
        columns fit."""
        if not (self.memory_free and MEMORY_LAGRANGIAN and not self.fixed.any()):
            return False
        lam = self.master.primal()
        fit = self.placeable()
        if not ((lam > 1e-9) & ~fit).any():
            return False
        self.memory_free, self.memory_priced = False, True
        self.banned_memory = {j for j, ok in enumerate(fit) if not ok}
        for j in self.banned_memory:
            self.master.h.changeColBounds(self.master.acc_at[j], 0.0, 0.0)
        return True

    def _at_root(self) -> bool:
        """Whether this LP is the root's: not a branch-and-price node, no class placed by a dive."""
        return self.node is None and not self.fixed.any()

    def _admit(self, cand) -> list:
        """The sets of ``cand`` that are columns here and new, added to the master."""
        fresh = []
        for S, ok in zip(cand, self._fitting(cand)):
            if ok and S.tobytes() not in self.have:
                self.have.add(S.tobytes())
                fresh.append(S)
        self.cols += fresh
        self.master.add(fresh)
        return fresh

    def placeable(self) -> np.ndarray:
        """Which of :attr:`cols` fit in an accelerator's memory (all where memory cannot bind)."""
        if not self.memory_binds or not self.cols:
            return np.ones(len(self.cols), bool)
        return np.asarray(self.cols, bool) @ self.d.size <= self.d.cap

    def lagrangian(self, pi: np.ndarray, bound) -> float:
        """The Lagrangian (Farley) bound at ``pi`` (module docstring). With CPU-set columns the CPU
        part is also at most ``l`` times the best CPU set's profit (the cores hold ``l`` convex sets
        of CPU time ``<= V``); the smaller of that and the fractional knapsack counts."""
        u, rho = bound
        q = pi / max(u, 1.0)
        cpu = self.d.cpu_take(np.where(self.cpu_may, q, 0.0), self.V, self.cpu_cap)
        if rho is not None:
            cpu = min(cpu, self.d.l * rho / max(u, 1.0))
        return math.fsum(q) - cpu

    def run(self, k: int, deadline: float | None, centre: np.ndarray | None = None):
        """``(verdict, Lagrangian bound)`` for covering the unplaced classes with ``k`` columns.
        ``centre``: the smoothing centre to start from (default: the work bound's duals); the last
        one is kept in :attr:`centre` (a branch-and-price child starts from its parent's)."""
        if centre is None:
            centre = np.where(self.d.sup & ~self.fixed, self.d.acc, 0.0) / self.V
        else:
            centre = np.where(self.fixed, 0.0, centre)
        self.centre = centre
        u0, _new = self.price(centre, deadline)
        best = score = self.lagrangian(centre, u0)
        # the heuristic pricing pays where exact pricings are long (fronts of many points)
        self.keep = KEEP if self.dp is not None and self.dp.points > HEURISTIC_FROM else 0
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
                if self._with_memory():
                    continue
                return "no", best
            point = self.alpha * centre + (1 - self.alpha) * pi
            L, new, bound = self._price_at(point, k, deadline)
            best = max(best, bound)
            if L > score:  # the smoothing centre moves on the Lagrangian, exact or heuristic
                score, centre = L, point
                self.centre = centre
            if new or best > k * (1 + 1e-9):
                continue
            # mis-price at the smoothed point: price the master's own duals, exactly
            ub, new = self.price(pi, deadline)
            self._heuristic_if_long()
            L = self.lagrangian(pi, ub)
            best = max(best, L)
            score, centre = L, pi
            self.centre = centre
            if not new and best <= k * (1 + 1e-9):
                # no column and no proof: the LP is at (numerically) k, or the pricing stopped early;
                # with memory priced by its Lagrangian, the bound can stay above 1 with no set that
                # fits above it (a duality gap): no proof at V either
                if ub[0] <= 1 + 1e-9 and self._with_memory():
                    continue
                if ub[0] > 1 + 1e-9 and self.memory_priced and math.isfinite(ub[0]):
                    # a duality gap of the memory row: the DP with memory exact prices the master's
                    # duals (where its fronts stay small), else the pricing MILP (its dual bound)
                    got = self._memory_dp_price(pi, ub, deadline)
                    ub, new = got if got is not None else self._milp_price(pi, ub, deadline)
                    if ub is not None:
                        best = max(best, self.lagrangian(pi, ub))
                        if new or best > k * (1 + 1e-9):
                            continue
                if ub is not None and ub[0] <= 1 + 1e-9:
                    return "no", best
                # with memory priced and its gap still open (the pricing MILP ran out of time, or
                # its best set is not a column: convex), the LP may still exceed k: "undecided"
                # (was "no" until 2026-11-28: BERT-like 300 non-contiguous, 0.281573 ms, "no" under
                # `auto` and proven by this LP alone in 21-36 s)
                undecided = ub is not None and self.memory_priced
                return ("undecided" if undecided else "time_limit"), best

    def _price_at(self, point: np.ndarray, k: int, deadline: float | None):
        """``(Lagrangian at point, new columns, a valid Lagrangian bound or -inf)``. First the DP's
        heuristic pricing (:data:`KEEP` points a front) where the DP applies: its sets are real, so
        its Lagrangian is at least the exact one, not a bound; the bound is then the Lagrangian at
        the DP's Lagrangian upper bound on the pricing (:attr:`_PathDP.upper`, since 2026-11-29:
        measured within 0.3 % of the best set priced on the peer's Inception-v3 layer graph, for
        10-20 ms against 0.5 s a heuristic pricing). The exact pricing follows only where the
        heuristic finds no column or its Lagrangian exceeds ``k`` (a proof in sight). Measured
        2026-11-25 on a 308-class BERT-like training graph: a heuristic pricing 9 ms, an exact one
        0.2 s."""
        new: list = []
        if self.dp is not None and self.keep:
            ub, new = self.price(point, deadline, keep=self.keep)
            L = self.lagrangian(point, ub)
            if not self.dp.thinned:  # no front was that long: the pricing was exact
                return L, new, L if math.isfinite(ub[0]) else -math.inf
            bound = self.lagrangian(point, (self.dp.upper, ub[1])) if math.isfinite(self.dp.upper) else -math.inf
            if new and L <= k * (1 + 1e-9) or bound > k * (1 + 1e-9):
                return L, new, bound
        ub, more = self.price(point, deadline)
        self._heuristic_if_long()
        L = self.lagrangian(point, ub)
        return L, new + more, L

    def _heuristic_if_long(self) -> None:
        """Turn the heuristic pricing on once an exact DP pricing handled more than
        :data:`HEURISTIC_FROM` points (ours). Until 2026-11-28 only the first pricing decided, at the
        work bound's duals, where the floor of 1 drops almost every point: on the peer's Inception-v3
        layer graph (326 classes, non-contiguous) that pricing had 241 points and the later ones
        7-125 million (0.5-9 s each), all exact."""
        if self.dp is not None and not self.keep and self.dp.points > HEURISTIC_FROM:
            self.keep = KEEP

    def _restrict(self, fixed: np.ndarray, banned: set[int]) -> None:
        self.fixed = fixed.copy()
        self.master.restrict(fixed, self.cols, banned | self.banned_memory, self.cpu_cols)
        self.dp.allowed = self.allowed0 & ~fixed
        if self.cpu_dp is not None:
            self.cpu_dp.allowed = self.cpu_allowed0 & ~fixed

    def dive(self, deadline: float | None, tries: int = 3, shares: bool = False):
        """Price and dive (a heuristic): solve the LP over the classes not yet placed; if the columns
        so far partition them (:func:`_restricted_mip`, asked once at most :data:`DIVE_MIP_DEVICES`
        accelerators are left), done; else place the column of the largest LP value, drop its
        classes and one accelerator, and repeat. With ``shares`` (the wide dives), each level's LP
        has at most its share of the time left (:data:`DIVE_LEVEL_MIN`), one not done by then is
        followed as it stands, and the column placed is the one of most LP value times accelerator
        work (:data:`DIVE_BY_WORK`). A placed column after which the
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
                # a wide dive (shares): each level at most its share of the time left (DIVE_LEVEL_MIN
                # at least), so one slow LP does not end the dive; a level stopped by its share goes
                # on from the master's primal as it stands (unless the master LP fails)
                cap = deadline
                if deadline is not None and shares:
                    share = (deadline - time.perf_counter()) / (d.k - dev + 1)
                    cap = min(deadline, time.perf_counter() + max(DIVE_LEVEL_MIN, share))
                verdict, _L = self.run(d.k - dev, cap)
                if verdict == "time_limit" and (cap == deadline or time.perf_counter() >= deadline
                                                or self.master.solve()[1] is None):
                    return None
                if verdict == "proven":  # the last column placed leaves an infeasible rest
                    if dev == 0 or fails >= tries:
                        return None
                    fails += 1
                    banned.add(chosen.pop())
                    self._restrict(np.any([self.cols[j] for j in chosen], axis=0) if chosen
                                   else np.zeros(d.G, bool), banned)
                    continue
                # only with few devices left (DIVE_MIP_DEVICES) and at most 2 s each: with all k
                # devices open the MILP over thousands of columns mostly proves that no partition
                # exists (ResNet-50: 19 s at the first level of a dive, 0.3-0.6 s with three
                # devices left, where partitions are found)
                left = min(2.0, max(deadline - time.perf_counter(), 0.1)) if deadline is not None else 2.0
                ok = self.placeable()
                rest = None
                if d.k - dev <= DIVE_MIP_DEVICES:
                    rest, _st = _restricted_mip(d, [S for S, o in zip(self.cols, ok) if o], self.V, left,
                                                fixed=self.fixed, k=d.k - dev,
                                                cpu_cols=self.cpu_cols if self.cpu_dp is not None else None)
                if rest is not None:
                    place = np.full(d.G, -1)
                    for dev_, j in enumerate(chosen):
                        place[self.cols[j]] = dev_
                    for g in np.flatnonzero(~self.fixed):
                        place[g] = rest[g] + dev if rest[g] < d.k else rest[g]
                    return place
                lam = self.master.primal()
                if len(lam) == 0:  # no column in the master (every node fits the CPU cores' side)
                    return None
                lam = np.where(ok, lam, 0.0)  # place only columns that fit in memory
                # the column the LP uses most (a wide dive: weighted by its accelerator work)
                j = int(np.argmax(lam * (np.asarray(self.cols, float) @ d.acc) if DIVE_BY_WORK and shares else lam))
                if lam[j] <= 1e-9:
                    return None
                chosen.append(j)
                self._restrict(self.fixed | self.cols[j], banned)
            return None
        finally:
            self.dp.allowed = self.allowed0
            if self.cpu_dp is not None:
                self.cpu_dp.allowed = self.cpu_allowed0


def prove_above(instance: PlacementInstance, V: float, *, time_limit: float | None = None,
                columns: list[np.ndarray] | None = None, alpha: float = 0.8, pricing_limit: float = 10.0,
                ncols: int = 40):
    """Try to prove that no placement has value ``<= V``. Returns ``(verdict, lagrangian, columns)``
    with verdict ``"proven"`` (the Lagrangian bound exceeds ``k``), ``"no"`` (the LP reaches ``k``
    or less: ``V`` cannot be proven this way), ``"undecided"`` (memory priced by its Lagrangian,
    whose duality gap the pricing MILP did not close in time) or ``"time_limit"``; ``columns`` (every set
    generated, all feasible at ``V``) can seed a call with another ``V`` (those that fit are kept).

    Pricing by :class:`_PathDP` where it applies (up to ``ncols`` columns per round), else by the
    MILP of :class:`_Pricer` (one). The smoothing centre starts at duals proportional to the
    accelerator time (``pi_g = acc_g / V``: their Lagrangian bound is the work bound), which on
    ResNet-50 halves the rounds."""
    cg = _ColGen(_Data(instance), V, columns, alpha, ncols, pricing_limit)
    deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
    verdict, best = cg.run(cg.d.k, deadline)
    return verdict, best, cg.cols


__all__ = ["prove_above"]
