"""Shared preprocessing of the device-model algorithms (issue 11): colour classes contracted into
super-nodes, super-nodes on a forward cycle fused (contiguity forces them onto one device, as the
peer's DP does by fusing strongly connected components), bitmask adjacency, and the load of a
block of super-nodes on an accelerator or a CPU core.

Nothing here decides an objective value shown to users: every algorithm returns an assignment that
the evaluator (:func:`splitopt.models.placement.evaluate`) scores.
"""

from __future__ import annotations

import math
import time
import weakref

from splitopt.errors import InstanceError
from splitopt.instances.placement import PlacementInstance


def cpu_exchange(con: "Contracted") -> float:
    """The most accelerator seconds one CPU second can take over (max over super-nodes of
    accelerator / CPU time; ``inf`` where a super-node takes no CPU time but some accelerator time):
    a CPU core with load ``<= U`` removes at most ``U`` times this of accelerator work."""
    if any(c == 0 and a > 0 for a, c in zip(con.accw, con.cpuw)):
        return math.inf
    return max((a / c for a, c in zip(con.accw, con.cpuw) if c > 0), default=0.0)


def bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out



def lex_less(a: tuple, b: tuple) -> bool:
    """Whether ``a`` is lexicographically smaller than ``b`` with a relative tolerance of 1e-12 per
    entry (an objective, then loads sorted decreasingly: the re-placements' acceptance test)."""
    for x, y in zip(a, b):
        if x < y * (1 - 1e-12):
            return True
        if x > y * (1 + 1e-12):
            return False
    return False

class Contracted:
    """Super-nodes of a device instance.

    ``members[s]``: original nodes of super-node ``s`` (its colour classes, with their backward
    nodes); ``order``: super-nodes in a topological order of the forward graph, renumbered so that
    super-node ``s`` is the ``s``-th (bit ``1 << s`` in masks); ``preds[s]`` / ``succs[s]``: masks of
    forward predecessors / successors; ``accf``/``accb``/``cpuf``/``cpub``: forward and backward
    seconds on an accelerator / a CPU core; ``size``, ``sup``; ``tensors``: ``(source super-node,
    consumer mask, seconds, backward?)`` per original tensor leaving its super-node;
    ``touch[s]``: indices of the tensors whose source or a consumer is in ``s``.
    """

    def __init__(self, instance: PlacementInstance, *, fuse_cycles: bool = True, reverse: bool = False,
                 orphans_only: bool = False, merge_idle: bool = True):
        """``orphans_only``: the caller reads :attr:`orphans` alone (a tensor feeding one is then
        skipped instead of refused; the other attributes are not the instance's); ``merge_idle``:
        merge idle super-nodes into their one neighbour (:func:`_merge_idle`)."""
        n = instance.n_nodes
        back = instance.backward
        # union-find over nodes: colour classes
        parent = list(range(n))

        def find(a):
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for cl in instance.colour_classes:
            for i in cl[1:]:
                parent[find(i)] = find(cl[0])
        if fuse_cycles:
            while True:
                groups = sorted({find(i) for i in range(n)})
                gi = {g: j for j, g in enumerate(groups)}
                adj = [set() for _ in groups]
                for u, v in instance.forward_edges:
                    a, b = gi[find(u)], gi[find(v)]
                    if a != b:
                        adj[a].add(b)
                comps = _scc(len(groups), adj)
                if all(len(c) == 1 for c in comps):
                    break
                for c in comps:
                    for j in c[1:]:
                        parent[find(groups[j])] = find(groups[c[0]])
        self.merged_idle = _merge_idle(instance, find, parent) if merge_idle else 0
        roots = sorted({find(i) for i in range(n)})
        members = {r: [] for r in roots}
        for i in range(n):
            members[find(i)].append(i)
        # groups made only of backward nodes are not constrained by contiguity: not handled here
        orphans = [r for r in roots if all(back[i] for i in members[r])]
        self.orphans = [members[r] for r in orphans]
        groups = [r for r in roots if r not in set(orphans)]
        gi = {g: j for j, g in enumerate(groups)}
        adj = [set() for _ in groups]
        for u, v in instance.forward_edges:
            a, b = gi[find(u)], gi[find(v)]
            if a != b:
                adj[a].add(b)
        if reverse:  # the reversed graph: ideals become filters (the loads do not change)
            radj = [set() for _ in groups]
            for a in range(len(groups)):
                for b in adj[a]:
                    radj[b].add(a)
            adj = radj
        topo = _topo(len(groups), adj)
        self.acyclic = topo is not None
        if topo is None:  # only possible without fuse_cycles: any order (no algorithm relying on it runs)
            topo = list(range(len(groups)))
        self.reverse = reverse
        rank = {g: r for r, g in enumerate(topo)}
        self.n = len(groups)
        self.members = [members[groups[g]] for g in topo]
        self.node_super = [-1] * n
        for s, mem in enumerate(self.members):
            for i in mem:
                self.node_super[i] = s
        self.preds = [0] * self.n
        self.succs = [0] * self.n
        for a in range(len(groups)):
            for b in adj[a]:
                self.succs[rank[a]] |= 1 << rank[b]
                self.preds[rank[b]] |= 1 << rank[a]
        cpu, acc = instance.cpu_seconds, instance.acc_seconds
        self.accf = [math.fsum(acc[i] for i in m if not back[i]) for m in self.members]
        self.accb = [math.fsum(acc[i] for i in m if back[i]) for m in self.members]
        self.cpuf = [math.fsum(cpu[i] for i in m if not back[i]) for m in self.members]
        self.cpub = [math.fsum(cpu[i] for i in m if back[i]) for m in self.members]
        self.accw = [f + b for f, b in zip(self.accf, self.accb)]  # forward + backward seconds
        self.cpuw = [f + b for f, b in zip(self.cpuf, self.cpub)]
        self.size = [math.fsum(instance.size_bytes[i] for i in m) for m in self.members]
        self.sup = [all(instance.supported[i] for i in m) for m in self.members]
        self.tensors = []
        self.touch: list[list[int]] = [[] for _ in range(self.n)]
        for u, cons, sec in instance.tensors:
            su = self.node_super[u]
            if su < 0 or sec == 0.0:
                continue
            cm = 0
            for c in cons:
                sc = self.node_super[c]
                if sc < 0:
                    cm = -1
                    break
                if sc != su:
                    cm |= 1 << sc
            if cm == -1 and orphans_only:
                continue
            if cm == -1:
                raise InstanceError("colour", "a tensor feeds a backward-only colour class: not handled by this "
                                              "algorithm (use the MILP)")
            if cm == 0:
                continue
            t = len(self.tensors)
            self.tensors.append((su, cm, sec, back[u]))
            self.touch[su].append(t)
            m = cm
            while m:
                low = m & -m
                self.touch[low.bit_length() - 1].append(t)
                m ^= low
        self.full = (1 << self.n) - 1

    def comm(self, block: int) -> tuple[float, float]:
        """(forward, backward) communication seconds of ``block`` (mask) on an accelerator."""
        f = b = 0.0
        for su, cm, sec, bw in self.tensors:
            inside = (block >> su) & 1
            if (inside and (cm & ~block)) or (not inside and (cm & block)):
                if bw:
                    b += sec
                else:
                    f += sec
        return f, b

    def block_pair(self, block: int, cpu: bool, objective: str) -> tuple[float, float]:
        """The block's load as the pair the objective combines: ``(fwd + bwd, 0)`` for max-load,
        ``(fwd, bwd)`` for fwd+bwd."""
        idx = [s for s in range(self.n) if (block >> s) & 1]
        if cpu:
            f = math.fsum(self.cpuf[s] for s in idx)
            b = math.fsum(self.cpub[s] for s in idx)
        else:
            cf, cb = self.comm(block)
            f = math.fsum([self.accf[s] for s in idx] + [cf])
            b = math.fsum([self.accb[s] for s in idx] + [cb])
        return (f + b, 0.0) if objective == "max-load" else (f, b)


_LAST: list = []  # weak references to the last instances contracted, each with its contractions by flags
_KEEP = 4


def recent(cache: list, instance: PlacementInstance, match, make):
    """The value kept in ``cache`` (a list of ``(weak reference to an instance, value)``, most
    recent first, at most :data:`_KEEP`) for the first held instance ``match`` accepts, moved to
    the front; else ``make()``, kept for ``instance``."""
    for i, (ref, value) in enumerate(cache):
        held = ref()
        if held is not None and match(held):
            cache.insert(0, cache.pop(i))
            return value
    value = make()
    cache.insert(0, (weakref.ref(instance), value))
    del cache[_KEEP:]
    return value


def contracted(instance: PlacementInstance, **flags) -> Contracted:
    """``Contracted(instance, **flags)``, built once for each of the last :data:`_KEEP` instances
    asked about (an instance is immutable and a :class:`Contracted` is read only after
    construction): ``auto``'s rule, the ideal search and its DP each ask for the same ones (on
    BERT-24, five contractions of 2-3 ms each in a 15 ms solve), and the MILP's incumbent phase asks
    for an instance and its chain copy in turn (six contractions of 0.2 s each on a 6,083-node
    graph, within a 3 s limit). An instance the contraction refuses is refused again from the cache
    (the incumbent phase asks twice: 0.37 s each on a 10,026-node graph)."""
    # (a contraction ignores contiguity and objective)
    per = recent(_LAST, instance, lambda held: held.same_data(instance), dict)
    key = tuple(sorted(flags.items()))
    con = per.get(key)
    if con is None:
        try:
            con = per[key] = Contracted(instance, **flags)
        except InstanceError as e:  # kept without its traceback (its frames), raised again below
            con = per[key] = e.with_traceback(None)
    if isinstance(con, InstanceError):
        raise con
    return con


def isolation_bound(con: Contracted, instance: PlacementInstance, *, target: float = math.inf,
                    max_cuts: int | None = None, deadline: float | None = None) -> tuple[float, int]:
    """A lower bound on the max-load of every placement (any contiguity, both objectives): the
    device holding super-node ``s`` has load at least ``min(cpu(s), min over sets X containing s of
    acc(X) + cut(X))`` (``cpu(s)`` only if there is a CPU core; the accelerator term only if every
    node of ``X`` is supported), where ``cut(X)`` sums the seconds of the tensors that ``X`` splits
    (some of producer and consumers inside, some outside: exactly the tensors an accelerator
    holding ``X`` sends or receives). The inner minimum is an s-t minimum cut with one auxiliary
    arc pair per tensor (Lawler's hyperedge gadget), solved exactly in integers by
    :func:`splitopt.solvers.flow.exact_max_flow`. Contiguity and memory are relaxed, so the bound
    holds for every contiguity; it is the max over ``s``, computed for the super-nodes whose
    trivial estimate (``X = {s}``) exceeds the bound so far, largest first, stopping at ``target``.
    Returns ``(bound, cuts computed)``."""
    from splitopt.solvers.flow import _to_ints, exact_max_flow

    n = con.n
    k, l_ = instance.n_accelerators, instance.n_cpus
    accw, cpuw = con.accw, con.cpuw
    own = [0.0] * n
    for su, cm, sec, _bw in con.tensors:
        own[su] += sec
        m = cm
        while m:
            low = m & -m
            own[low.bit_length() - 1] += sec
            m ^= low

    def estimate(s):
        opts = ([cpuw[s]] if l_ else []) + ([accw[s] + own[s]] if (k and con.sup[s]) else [])
        return min(opts) if opts else math.inf

    (ints_acc, ints_sec), _K = _to_ints(accw, [sec for _su, _cm, sec, _bw in con.tensors])
    # 2^K is not a double when a value is tiny (1e-300 s: K > 1023, issue 21); Python's int / int
    # is correctly rounded at any size, so the flow is divided as an integer
    scale = 1 << _K
    best, cuts = 0.0, 0
    for s in sorted(range(n), key=lambda s: -estimate(s)):
        est = estimate(s)
        if est <= best or best >= target:
            break
        if not (k and con.sup[s]):
            best = max(best, est)
            continue
        if l_ and cpuw[s] <= best:
            continue
        if max_cuts is not None and cuts >= max_cuts:
            break
        if deadline is not None and cuts and time.perf_counter() > deadline:
            break  # the max over the cuts computed so far is still a bound
        # vertices: super-nodes 0..n-1, source n, sink n+1, tensor gadgets n+2+2t, n+3+2t
        src, snk = n, n + 1
        tails, heads, caps = [], [], []
        tails.append(src), heads.append(s), caps.append(None)
        for v in range(n):
            tails.append(v), heads.append(snk)
            caps.append(None if not con.sup[v] else ints_acc[v])
        for t_i, (su, cm, _sec, _bw) in enumerate(con.tensors):
            a, b = n + 2 + 2 * t_i, n + 3 + 2 * t_i
            members = [su] + bits(cm)
            for v in members:
                tails.append(v), heads.append(a), caps.append(None)
                tails.append(b), heads.append(v), caps.append(None)
            tails.append(a), heads.append(b), caps.append(ints_sec[t_i])
        flow, _side = exact_max_flow(n + 2 + 2 * len(con.tensors), src, snk, tails, heads, caps)
        cuts += 1
        acc_val = flow / scale
        val = min(cpuw[s], acc_val) if l_ else acc_val
        best = max(best, val)
    return best, cuts


def _merge_idle(instance: PlacementInstance, find, parent: list[int]) -> int:
    """Merge *idle* groups into a neighbour, in place on the union-find ``parent`` (groups: colour
    classes, forward cycles fused); returns the number of merges. This is the peer's "trivial node
    optimisation" (``performTrivialNodeOptimizations`` of its ``dp.cpp``: a forward node with no
    latency and one neighbour joins it), made exact and more general.

    A group ``s`` (not backward-only) is idle when it takes no time on either device kind, every
    node is supported on accelerators, and it holds no bytes (or memory cannot bind: every node fits
    on one accelerator). It joins group ``t`` when

    * every tensor of positive seconds that ``s`` produces is consumed only in ``s`` or ``t``, and
      every tensor of positive seconds that ``s`` consumes is produced in ``t``;
    * ``t`` is the only forward successor of ``s``, or its only forward predecessor, or ``s`` has no
      forward edge (a sink with two predecessors may not join an arbitrary one of them: the other
      could come later in a chain).

    Then moving ``s`` onto ``t``'s device raises no load (``s`` adds no time; the tensors between
    them stop crossing; no other tensor changes who sends or receives it), no memory, and keeps every
    contiguity: with ``succ(s) = {t}``, ``pos(u) <= pos(s) <= pos(t)`` for every predecessor ``u``
    (chain), and a path through ``s`` runs through ``t``, so ``s`` and ``t`` were on one device
    whenever a device's set had to contain ``s`` for convexity (the mirror for ``pred(s) = {t}``).
    So every placement maps to one of the merged instance at no higher objective (both objectives),
    and the merged instance has the same optimum. The peer merges regardless of bytes (which can
    lose its optimum when memory binds) and counts zero-second tensors as neighbours, so it merges
    less: on its GNMT layer graph these merges take the ideals from 3,310,714 to 168 (its own: 17,914
    in its log; our chain 10.5 s -> 0.06 s, tests/solvers/placement/test_idle.py).
    One pass merges ``s`` into ``t`` unless ``t`` itself moves or ``s`` receives; passes repeat.
    """
    n = instance.n_nodes
    back, acc, cpu, sup = instance.backward, instance.acc_seconds, instance.cpu_seconds, instance.supported
    sizes = instance.size_bytes
    mem = instance.acc_memory_bytes
    slack = mem is None or math.fsum(sizes) <= mem
    merges = 0
    while True:
        busy: dict[int, bool] = {}  # group -> still a candidate (False: touches a positive tensor of another)
        only_back: dict[int, bool] = {}
        for i in range(n):
            g = find(i)
            idle = acc[i] == 0.0 and cpu[i] == 0.0 and sup[i] and (slack or sizes[i] == 0.0)
            busy[g] = busy.get(g, True) and idle
            only_back[g] = only_back.get(g, True) and back[i]
        partner: dict[int, int] = {}  # idle group -> the one group it may join

        def bind(g: int, h: int) -> None:
            if not busy.get(g):
                return
            if partner.setdefault(g, h) != h:
                busy[g] = False

        for u, cons, sec in instance.tensors:
            if sec == 0.0:
                continue
            gu = find(u)
            outside = {find(c) for c in cons} - {gu}
            if not outside:
                continue
            if len(outside) > 1:
                busy[gu] = False
            else:
                bind(gu, next(iter(outside)))
            for h in outside:
                bind(h, gu)
        fsucc: dict[int, set[int]] = {}
        fpred: dict[int, set[int]] = {}
        for u, v in instance.forward_edges:
            a, b = find(u), find(v)
            if a != b:
                fsucc.setdefault(a, set()).add(b)
                fpred.setdefault(b, set()).add(a)
        moving: dict[int, int] = {}
        targets: set[int] = set()
        for g, ok in busy.items():
            if not ok or only_back[g]:
                continue
            su, pr = fsucc.get(g, set()), fpred.get(g, set())
            t = partner.get(g)
            if t is None:  # no positive tensor: any forward neighbour that is alone on its side
                t = next(iter(su)) if len(su) == 1 else next(iter(pr)) if len(pr) == 1 else None
                if t is None:  # (no forward edge and no tensor: nothing to gain)
                    continue
            if only_back.get(t, False) or not (su == {t} or pr == {t} or not (su or pr)):
                continue
            if g in targets or t in moving:
                continue
            moving[g] = t
            targets.add(t)
        if not moving:
            return merges
        for g, t in moving.items():
            parent[find(g)] = find(t)
            merges += 1


def _topo(n: int, adj: list[set[int]]) -> list[int] | None:
    indeg = [0] * n
    for a in range(n):
        for b in adj[a]:
            indeg[b] += 1
    # depth-first flavoured order (successors right after their last predecessor): blocks of a
    # chain-like graph stay together in the order
    stack = [a for a in range(n) if indeg[a] == 0][::-1]
    out = []
    while stack:
        a = stack.pop()
        out.append(a)
        for b in sorted(adj[a], reverse=True):
            indeg[b] -= 1
            if indeg[b] == 0:
                stack.append(b)
    return out if len(out) == n else None


def _scc(n: int, adj: list[set[int]]) -> list[list[int]]:
    """Strongly connected components (iterative Tarjan)."""
    index = [-1] * n
    low = [0] * n
    on = [False] * n
    st: list[int] = []
    comps = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        work = [(root, iter(sorted(adj[root])))]
        index[root] = low[root] = counter
        counter += 1
        st.append(root)
        on[root] = True
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = st.pop()
                        on[x] = False
                        comp.append(x)
                        if x == v:
                            break
                    comps.append(sorted(comp))
            elif index[w] == -1:
                index[w] = low[w] = counter
                counter += 1
                st.append(w)
                on[w] = True
                work.append((w, iter(sorted(adj[w]))))
            elif on[w]:
                low[v] = min(low[v], index[w])
    return comps


def assignment_from_blocks(instance: PlacementInstance, con: Contracted, blocks: list[tuple[int, bool]]) -> list[str]:
    """Device name per node from ``(mask, on_cpu)`` blocks: accelerators and CPU cores numbered in
    block order."""
    out = [""] * instance.n_nodes
    na = nc = 0
    for mask, cpu in blocks:
        if cpu:
            name = f"cpu{nc}"
            nc += 1
        else:
            name = f"acc{na}"
            na += 1
        for s in range(con.n):
            if (mask >> s) & 1:
                for i in con.members[s]:
                    out[i] = name
    return out


__all__ = ["Contracted", "assignment_from_blocks", "isolation_bound"]
