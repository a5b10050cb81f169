"""Lower bounds for the throughput branch and bound (seed 004; digest §6.5-§6.6).

* :func:`waterfill` is the fluid compute bound of digest §6.6: the least ``T`` with
  ``sum_a max(0, eta_a T - W_a) >= R``.
* :class:`Makespan` is the **compute relaxation**: drop every transfer, the split cap, contiguity and
  memory, keep each layer whole on one node. What is left is makespan on uniform machines
  (``Q||C_max``, digest §2.4) over the layers not yet placed, with the loads already placed (and the
  loads of pinned layers) as start loads. Its optimum is a valid lower bound on the period of every
  completion, and it is much stronger than water-filling when a few large layers dominate (YOLOv2:
  eleven 1.6-GFLOP convolutions, two of 3.2 and one of 4.0 GFLOP). The paper has no such bound; it
  bounds by transfers only (digest §3.2).

  The search is exact: layers of equal FLOP are one group, and a group is branched on *how many*
  of its layers each node takes (no order among equal layers); nodes with the same rate and the same
  load at the start of a group are interchangeable in the relaxation (pinned loads are counted
  upfront), so their counts are taken non-increasing. Bound at a group boundary: water-filling of
  what remains. A list-scheduling completion (each remaining layer, largest first, to the node where
  it ends earliest) is tried at every boundary and ends a decision search as soon as it fits.
  With **two nodes** (any rates) :meth:`Makespan.value` instead runs a subset-sum dynamic programme over
  the FLOP of node 0, keeping only sums from which a split below the list-scheduling value is still
  reachable (Table 2 of the paper: two identical nodes, a near-perfect partition, proved in ms).
  Searches are budgeted: when the budget runs out the answer is the weaker but still valid one
  (``packable`` answers "maybe"; ``value`` returns its proven bound).
"""

from __future__ import annotations

import math
from itertools import groupby

REL = 1e-12


def waterfill(W, eta, R: float, nodes=None) -> float:
    """Least ``T`` with ``sum_a max(0, eta_a T - W_a) >= R`` over ``nodes`` (default all)."""
    if R <= 0:
        return 0.0
    idx = range(len(W)) if nodes is None else nodes
    levels = sorted((W[a] / eta[a], eta[a]) for a in idx)
    rate = have = 0.0
    for k, (lev, e) in enumerate(levels):
        nxt = levels[k + 1][0] if k + 1 < len(levels) else math.inf
        rate += e
        room = (nxt - lev) * rate
        if have + room >= R:
            return lev + (R - have) / rate
        have += room
    return math.inf  # pragma: no cover - room is infinite at the last level


def capped_fits(W, eta, R: float, k: int, thr: float, nodes=None) -> bool:
    """False only when ``R`` more FLOP cannot be spread over any ``k`` of ``nodes`` (default all)
    keeping each below ``thr``: the ``k`` largest rooms ``max(0, eta_a thr - W_a)`` hold less than
    ``R``. A split cap ``S`` lets the rest of the layer order use at most ``S - splits + 1`` runs,
    hence that many nodes: this is water-filling with the cap (issue 21), exact as a test at
    ``thr`` and O(N log N)."""
    if R <= 0:
        return True
    idx = range(len(W)) if nodes is None else nodes
    rooms = sorted((max(0.0, eta[a] * thr - W[a]) for a in idx), reverse=True)
    return math.fsum(rooms[:max(k, 0)]) >= R * (1 - 1e-12)


class _Budget(Exception):
    pass


class Makespan:
    """The compute relaxation of the layers ``depth..L-1`` (see the module docstring).

    ``flop[i]`` per layer, ``eta[a]`` per node, ``pins`` layer index -> node index."""

    def __init__(self, flop, eta, pins=None, jobs=None):
        """``jobs``: optional list of ``(first layer, FLOP, pinned node or None)`` replacing the layers
        (groups of layers that must share a node); a job counts from the depth of its first layer."""
        self.eta = [float(e) for e in eta]
        self.N = len(self.eta)
        L = len(flop)
        pins = dict(pins or {})
        if jobs is None:
            jobs = [(i, float(flop[i]), pins.get(i)) for i in range(L)]
        # per depth: forced loads of pinned jobs >= depth, and the groups (size, count) of free ones
        self.forced: list[list[float]] = []
        self.groups: list[list[tuple[float, int]]] = []
        self.suffix: list[float] = []
        for d in range(L + 1):
            forced = [0.0] * self.N
            free = []
            for i, f, pin in jobs:
                if i < d:
                    continue
                if pin is not None:
                    forced[pin] += f
                elif f > 0:
                    free.append(float(f))
            free.sort(reverse=True)
            self.forced.append(forced)
            self.groups.append([(s, len(list(g))) for s, g in groupby(free)])
            self.suffix.append(math.fsum(free))
        self.nodes = 0
        #: a :class:`~splitopt.solvers.deadline.Deadline` (or None): a search that sees it pass gives
        #: up as when its budget runs out (the answer is then the weaker, still valid one)
        self.deadline = None
        #: the last solution found by :meth:`value`: (FLOP of a group, layers of it per node) per group
        self.solution: list[tuple[float, list[int]]] | None = None

    # ------------------------------------------------------------------ public
    def packable(self, depth: int, W, thr: float, budget: int = 2000) -> bool:
        """False only when it is proved that no placement of the layers from ``depth`` on gives every
        node a time below ``thr`` (start loads ``W``); True when one exists or the budget ran out."""
        W0 = [W[a] + self.forced[depth][a] for a in range(self.N)]
        try:
            return self._search(W0, self.groups[depth], thr, budget, first=True) < thr
        except _Budget:
            return True

    def value(self, depth: int = 0, W=None, budget: int = 200_000) -> tuple[float, bool]:
        """(lower bound on the compute relaxation's optimum, proved optimal?). Exact within the budget,
        else the water-filling bound."""
        W = W if W is not None else [0.0] * self.N
        W0 = [W[a] + self.forced[depth][a] for a in range(self.N)]
        fluid = max(max(W0[a] / self.eta[a] for a in range(self.N)), waterfill(W0, self.eta, self.suffix[depth]))
        if self.groups[depth]:
            fluid = max(fluid, min((W0[a] + self.groups[depth][0][0]) / self.eta[a] for a in range(self.N)))
        ub = self._greedy(W0, self.groups[depth])
        greedy_solution = self._greedy_counts(W0, self.groups[depth])
        self.solution = greedy_solution
        if ub <= fluid * (1 + REL):
            return ub, True
        if self.N == 2:
            two = self._two_nodes(W0, self.groups[depth], ub, budget)
            if two is not None:
                best, sol = two
                if best < ub:
                    self.solution = sol
                    return best, True
                return ub, True
        try:
            best = self._search(W0, self.groups[depth], ub * (1 - REL), budget, first=False)
        except _Budget:
            self.solution = greedy_solution
            return fluid, False
        if best >= ub:
            self.solution = greedy_solution
        return min(best, ub), True

    # ------------------------------------------------------------------ search
    def _compositions(self, s: float, n: int, W: list, state: dict, tick):
        """Every split ``counts`` of ``n`` layers of FLOP ``s`` over the nodes that keeps each node
        below ``state["thr"]`` (read anew at each step: it falls as solutions are found), the
        counts of interchangeable nodes (same rate, same start load) non-increasing, node 0's count
        from the largest down. ``W`` holds the loads with ``counts`` added while a split is yielded.
        Iterative (a recursion per node overflowed Python's stack with 16 nodes and 60 layers) and
        counted by ``tick`` per split tried (the budget and the deadline bound the enumeration, not
        only the number of groups)."""
        eta, N = self.eta, self.N
        start = list(W)
        counts = [0] * N
        left = [0] * (N + 1)
        nxt = [0] * N  # next count to try per node (descending); -1 = exhausted
        left[0] = n

        def kmax(a):
            k = left[a]
            if a > 0 and eta[a] == eta[a - 1] and start[a] == start[a - 1]:
                k = min(k, counts[a - 1])
            room = state["thr"] * eta[a] - W[a]
            if room <= 0:
                return 0
            q = room / s  # may be inf or huge (s = 1e-300): int() of it overflowed
            return min(k, int(q) + 1) if q < k else k

        a = 0
        nxt[0] = kmax(0) if N > 1 else 0
        deadline = self.deadline
        steps = 0
        while a >= 0:
            steps += 1
            if deadline is not None and not steps & 63 and deadline.over():  # pruned steps yield nothing:
                raise _Budget                                                  # the clock is read here too
            if a == N - 1:
                k = left[a]
                ok = not (k and (W[a] + k * s) / eta[a] >= state["thr"])
                if ok and k and a > 0 and eta[a] == eta[a - 1] and start[a] == start[a - 1] and k > counts[a - 1]:
                    ok = False
                if ok:
                    tick()
                    W[a] += k * s
                    counts[a] = k
                    yield counts
                    counts[a] = 0
                    W[a] -= k * s
                a -= 1
                continue
            if counts[a]:  # back at node a: undo its current count
                W[a] -= counts[a] * s
                counts[a] = 0
            k = nxt[a]
            while k > 0 and (W[a] + k * s) / eta[a] >= state["thr"]:
                k -= 1
            if k < 0:
                a -= 1
                continue
            nxt[a] = k - 1
            counts[a] = k
            W[a] += k * s
            left[a + 1] = left[a] - k
            a += 1
            if a < N - 1:
                nxt[a] = kmax(a)

    def _two_nodes(self, W, groups, ub: float, budget: int):
        """Exact optimum for two nodes (any rates) by dynamic programming over the FLOP ``x`` that node
        0 takes (subset sum with groups): a state survives while ``x <= ub eta_0 - W_0`` and
        ``x + rest >= R + W_1 - ub eta_1`` (else no completion reaches ``ub``), so only sums near the
        balanced split are kept. Sums are merged on a grid of ``1e-14 R`` (float rounding noise only, far
        below the B&B tolerance). Returns ``(best, solution)`` with ``best <= ub`` (the greedy split is always in the window), or None when more than
        ``budget`` states were needed (the caller falls back to the group search)."""
        eta = self.eta
        R = math.fsum(s * n for s, n in groups)
        tol = 1e-9 * (R + W[0] + W[1])
        hi = ub * eta[0] - W[0] + tol
        lo = R + W[1] - ub * eta[1] - tol
        q = max(R, 1.0) * 1e-14
        rest = R
        states = {0: 0.0}  # grid key -> FLOP on node 0
        parents: list[dict[int, tuple[int, int]]] = []
        count = 0
        for s, n in groups:
            rest -= s * n
            nxt: dict[int, float] = {}
            par: dict[int, tuple[int, int]] = {}
            for key, x in states.items():
                for k in range(n + 1):
                    y = x + k * s
                    if y > hi:
                        break
                    if y + rest < lo:
                        continue
                    ky = round(y / q)
                    if ky not in nxt:
                        nxt[ky] = y
                        par[ky] = (key, k)
            count += len(nxt)
            if count > budget:
                return None
            parents.append(par)
            states = nxt
        self.nodes += count
        if not states:  # pragma: no cover - the greedy split is in the window
            return None

        def period(x):
            return max((W[0] + x) / eta[0], (W[1] + R - x) / eta[1])

        key = min(states, key=lambda k: period(states[k]))
        best = period(states[key])
        sol = []
        for g in range(len(groups) - 1, -1, -1):
            key, k = parents[g][key]
            sol.append((groups[g][0], [k, groups[g][1] - k]))
        sol.reverse()
        return best, sol

    def _greedy_counts(self, W, groups) -> list[tuple[float, list[int]]]:
        W = list(W)
        out = []
        for s, n in groups:
            cnt = [0] * self.N
            for _ in range(n):
                a = min(range(self.N), key=lambda a: (W[a] + s) / self.eta[a])
                W[a] += s
                cnt[a] += 1
            out.append((s, cnt))
        return out

    def _greedy(self, W, groups) -> float:
        W = list(W)
        for s, n in groups:
            for _ in range(n):
                a = min(range(self.N), key=lambda a: (W[a] + s) / self.eta[a])
                W[a] += s
        return max(W[a] / self.eta[a] for a in range(self.N))

    def _search(self, W0, groups, thr: float, budget: int, first: bool) -> float:
        """Smallest makespan below ``thr`` (or inf); with ``first`` stop at the first one found."""
        eta, N = self.eta, self.N
        W = list(W0)
        rem = [0.0] * (len(groups) + 1)
        for g in range(len(groups) - 1, -1, -1):
            rem[g] = rem[g + 1] + groups[g][0] * groups[g][1]
        state = {"thr": thr, "best": math.inf, "nodes": 0}
        chosen: list[list[int]] = []  # per finished group: count per node
        self.solution = None

        def found(v, g):
            # groups before g as chosen, the rest by list scheduling (as _greedy)
            sol = [list(c) for c in chosen]
            Wg = list(W)
            for s, n in groups[g:]:
                cnt = [0] * N
                for _ in range(n):
                    a = min(range(N), key=lambda a: (Wg[a] + s) / eta[a])
                    Wg[a] += s
                    cnt[a] += 1
                sol.append(cnt)
            self.solution = [(groups[k][0], sol[k]) for k in range(len(groups))]
            state["best"] = v
            state["thr"] = v * (1 - REL)
            if first:
                raise StopIteration

        deadline = self.deadline

        def tick():
            state["nodes"] += 1
            if state["nodes"] > budget:
                raise _Budget
            if deadline is not None and not state["nodes"] & 15 and deadline.over():
                raise _Budget

        def at_group(g):
            tick()
            if g == len(groups):
                found(max(W[a] / eta[a] for a in range(N)), g)
                return
            if waterfill(W, eta, rem[g]) >= state["thr"]:
                return
            # a list-scheduling completion ends a decision search early and tightens an optimisation
            gv = self._greedy(W, groups[g:])
            if gv < state["thr"]:
                found(gv, g)
                if waterfill(W, eta, rem[g]) >= state["thr"]:
                    return
            s, n = groups[g]
            for _counts in self._compositions(s, n, W, state, tick):
                chosen.append(list(_counts))
                at_group(g + 1)
                chosen.pop()

        try:
            at_group(0)
        except StopIteration:
            pass
        finally:
            self.nodes += state["nodes"]
        return state["best"]


__all__ = ["waterfill", "capped_fits", "Makespan"]
