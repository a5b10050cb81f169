"""Block-wise device/server split (seed 000 Sec. VI, Alg. 3, Theorem 2, Eqs. 19-22), corrected.

The paper shrinks the DNN graph before the min cut: a *block* (a group of layers with one entry
layer ``v_in`` outside it) is collapsed into one vertex when the intra-block rule of Sec. VI-A says
that no optimal cut passes through it, and Alg. 2 (:mod:`splitopt.solvers.split.mincut`) then runs on the
smaller graph. Digest 000 §4 and §7 E6/E7 list what is wrong or missing in the printed version;
``variant="corrected"`` (default) fixes all of it and is **exact** (same objective as brute force and
the MILP on every instance):

* **Transmit-once block cut (E6a).** ``a_B^min`` is the minimum cut of the block graph (source
  ``v_in`` pinned to the device, sink = the block exit pinned to the server, edge weights = tensor
  bytes) computed on the Alg.-2-restructured graph, i.e. each tensor counted once however many
  consumers it has, with closure arcs (only predecessor-closed cuts, E4). The printed rule uses a
  "standard" min cut, which counts a fan-out tensor once per crossed edge (digest check E: it
  abstracts a block whose optimal cut is inside, 280 instead of 160).
* **The rule is "=" (E6b).** ``c_B^in`` is itself a block cut, so ``a_B^min <= a_B^in``; a block is
  abstracted iff ``a_B^min = a_B^in`` (decided with the certified lower bound of
  :func:`~splitopt.solvers.split.mincut.min_cut`, relative tolerance 1e-12).
* **Assumption 1 is checked, per block (Eq. 16, E6b).** Theorem 2 needs ``dev_v >= srv_v`` for every
  block layer (device cost incl. parameter transfer, digest 000 §2.4, at least the server cost).
  A block that violates it is never abstracted. Blocks containing a pinned layer are not
  abstracted either.
* **SESE blocks, decided per block instance (E6d-g, E7, §8 item 7).** Blocks are single-entry
  single-exit regions, found from the graph itself (the paper gives no detection method): first the
  regions between consecutive articulation layers (:meth:`DNNGraph.sese_blocks`; entry = the previous
  articulation layer, kept *outside* as Fig. 7 keeps ``v_1``, E6f), then, inside regions that are not
  abstracted, maximal chains of single-producer/single-consumer layers, segmented greedily so that
  each segment satisfies the rule (for a chain the transmit-once block cut is the smallest tensor,
  so no max-flow is needed). Each block instance is tested on its own (E6e) instead of Alg. 3's one
  all-or-nothing decision for a "representative" block. ``regions="labels"`` uses the architectural
  ``Layer.block`` labels (module hierarchy, as the paper probably did) where they form a SESE
  region, then the chains.
* **Exactness proof** (mine, completing Theorem 2 / Eq. A.1 for "any" outside placement). Let ``B``
  be a region with entry ``e`` outside and exit ``x`` inside such that every edge into ``B`` comes
  from ``e`` or from ``B``, every edge leaving ``B`` starts at ``x``, and every layer of ``B`` has a
  producer (so ``B`` lies below ``e`` and above ``x``). Take any feasible split ``X``. If ``e`` is on
  the server (or ``x`` on the device), closure already puts all of ``B`` on the server (device).
  Otherwise move all of ``B`` to the server: the result is feasible (``x`` was on the server, so all
  consumers of ``x`` were), and the cost changes by
  ``-sum_{v in D_B}(dev_v - srv_v) - phi*(cut_B(D_B) - a_in) <= 0``, where ``D_B`` are the block
  layers ``X`` had on the device, ``phi = N (1/R_D + 1/R_S)`` (``N/R_D`` in inference) is the common
  factor of every tensor weight and ``cut_B`` is the transmit-once block cut of ``{e} + D_B``
  (the entry tensor is paid by ``X`` at least when it has a block consumer on the server). Both
  terms are >= 0 under Assumption 1 and ``a_B^min = a_B^in``. The move touches only ``B``, so it can
  be applied to disjoint blocks one after the other: some optimal split is uniform on every
  abstracted block, and the min cut of the abstracted graph is the optimum.
* **Abstraction (Eqs. 19-22).** Block execution weights are sums (Eqs. 19-20; Eq. 24's typo
  ``w_(D,v_B^1)`` on the right-hand side is read as ``w_(D,v_2)``); the entry tensor is charged once
  (Eq. 21, ``v_in`` kept outside); the exit tensors keep their own weights (Eq. 22: in a SESE block
  only the exit feeds outside, so the sum has one term); internal tensors vanish. Closure arcs and
  pins are mapped to the block vertices. If the abstracted graph is a chain it is solved by a prefix
  scan (digest 000 §8 item 6), otherwise by the certified min cut of :mod:`splitopt.solvers.split.mincut`.

``variant="paper"`` is Alg. 3 as printed, with only the block rule defective so the failure is
visible on its own: blocks from the ``Layer.block`` labels (else the articulation regions), one
decision taken on the first block (the "representative block") with the *plain* min cut (a fan-out
tensor counted once per crossed edge, E6a), no Assumption 1 check, and all SESE blocks abstracted
when ``a_B^min >= a_B^in``; the abstracted graph is then solved exactly (corrected weights, closure,
pins). It reproduces digest check E (280 instead of 160).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph
from splitopt.instances.split import SplitInstance
from splitopt.solvers.flow import CutProblem, min_cut

VARIANTS = ("corrected", "paper")
REGIONS = ("sese", "labels")
_REL_TOL = 1e-12


@dataclass(frozen=True)
class Region:
    """A candidate block: ``members`` (topological indices), ``entry`` (outside), ``exit``.

    ``a_in``: bytes of the entry tensors that have a consumer in the block; ``a_min``: transmit-once
    block cut with closure (certified lower bound); ``a_min_plain``: the paper's plain min cut.
    """

    members: tuple[int, ...]
    entry: int
    exit: int
    a_in: float
    a_min: float
    a_min_plain: float

    @property
    def passes(self) -> bool:
        """Corrected size rule: ``a_B^min = a_B^in`` (transmit-once)."""
        return self.a_min >= self.a_in * (1.0 - _REL_TOL)

    @property
    def passes_paper(self) -> bool:
        """Printed size rule: ``a_B^min >= a_B^in`` with the plain (per-edge) min cut."""
        return self.a_min_plain >= self.a_in * (1.0 - _REL_TOL)


@dataclass
class _GraphData:
    """Rate-independent structure of a graph, cached per graph object."""

    sese: list[Region]
    labels: list[Region]
    chains: list[list[int]]          # maximal chains, first element = possible entry
    tensor_bytes_out: np.ndarray     # bytes of all tensors of a layer (chain cut after the layer)
    edge_bytes: dict                 # (u, v) -> bytes of u's tensors consumed by v


def _graph_data(g: DNNGraph) -> _GraphData:
    """Structure of ``g`` (the size rule does not depend on rates: precomputed once per graph, as
    Sec. VI-A notes), kept with the immutable graph (:meth:`DNNGraph.derived`)."""
    return g.derived("blockwise", lambda: _analyse(g))


# ---------------------------------------------------------------------- structure analysis
def _clean_region(g: DNNGraph, members) -> tuple[int, int] | None:
    """``(entry, exit)`` if ``members`` is a SESE region in the sense of the module docstring."""
    B = set(members)
    if len(B) < 2:
        return None
    x = max(B)
    entry = None
    for v in B:
        preds = g.pred(v)
        if not preds:
            return None
        for u in preds:
            if u not in B:
                if entry is None:
                    entry = u
                elif entry != u:
                    return None
        if v != x and any(w not in B for w in g.succ(v)):
            return None
    if entry is None:
        return None
    # every member must reach the exit (no dead ends inside the block)
    seen = {x}
    stack = [x]
    while stack:
        w = stack.pop()
        for u in g.pred(w):
            if u in B and u not in seen:
                seen.add(u)
                stack.append(u)
    if len(seen) != len(B):
        return None
    return entry, x


def _block_cut(g: DNNGraph, members, entry: int, exit_: int, *, gadget: bool) -> tuple[float, float]:
    """``(a_in, a_min)`` of a block: entry pinned to the device, exit to the server, tensor bytes as
    weights; ``gadget=True``: transmit-once with closure arcs (corrected), ``False``: plain per-edge
    min cut without closure (as printed). ``a_min`` is the certified lower bound."""
    loc = {entry: 0}
    for i, v in enumerate(sorted(members)):
        loc[v] = i + 1
    n = len(loc)
    tensors = []
    a_in_parts = []
    for (p, _port, b, cons) in g.tensors:
        if p == entry:
            inside = tuple(loc[c] for c in cons if c in loc and c != entry)
            if inside:
                tensors.append((0, inside, float(b)))
                a_in_parts.append(float(b))
        elif p in loc and p != exit_:
            tensors.append((loc[p], tuple(loc[c] for c in cons), float(b)))
    a_in = math.fsum(a_in_parts)
    closure = []
    if gadget:
        for v in members:
            for u in g.pred(v):
                closure.append((loc[u], loc[v]))
    fd = np.zeros(n, dtype=bool)
    fs = np.zeros(n, dtype=bool)
    fd[0] = True
    fs[loc[exit_]] = True
    prob = CutProblem(n, np.zeros(n), np.zeros(n), tensors, closure, fd, fs, gadget)
    res = min_cut(prob)
    return a_in, (res.lower_bound if res is not None else math.inf)


def _region(g: DNNGraph, members) -> Region | None:
    ends = _clean_region(g, members)
    if ends is None:
        return None
    e, x = ends
    members = tuple(sorted(members))
    a_in, a_min = _block_cut(g, members, e, x, gadget=True)
    _, a_plain = _block_cut(g, members, e, x, gadget=False)
    return Region(members, e, x, a_in, a_min, a_plain)


def _analyse(g: DNNGraph) -> _GraphData:
    n = len(g)
    sese = [r for r in (_region(g, b) for b in g.sese_blocks() if len(b) > 1) if r is not None]
    by_label: dict[str, list[int]] = {}
    for v, lay in enumerate(g.layers):
        if lay.block is not None:
            by_label.setdefault(lay.block, []).append(v)
    labels = [r for r in (_region(g, m) for m in by_label.values() if len(m) > 1) if r is not None]
    out_bytes = np.zeros(n)
    edge_bytes: dict = {}
    for (p, _port, b, cons) in g.tensors:
        out_bytes[p] += b
        for c in cons:
            edge_bytes[(p, c)] = edge_bytes.get((p, c), 0.0) + b
    # maximal chains: next[u] = v iff u's only consumer is v and v's only producer is u
    nxt = [-1] * n
    has_prev = [False] * n
    for u in range(n):
        s = g.succ(u)
        if len(s) == 1 and len(g.pred(s[0])) == 1:
            nxt[u] = s[0]
            has_prev[s[0]] = True
    chains = []
    for v in range(n):
        if has_prev[v]:
            continue
        run = [v]
        while nxt[run[-1]] != -1:
            run.append(nxt[run[-1]])
        preds = g.pred(v)
        if len(preds) == 1:
            run.insert(0, preds[0])     # the producer (with several consumers) is the chain's entry
        if len(run) >= 3:
            chains.append(run)
    return _GraphData(sese, labels, chains, out_bytes, edge_bytes)


# ---------------------------------------------------------------------- region selection
def _select_groups(instance: SplitInstance, variant: str, regions: str) -> list[tuple[int, ...]]:
    """Disjoint blocks to abstract for this instance."""
    g = instance.graph
    c = instance.costs
    data = _graph_data(g)
    n = len(g)
    grouped = np.zeros(n, dtype=bool)
    pinned = c.force_dev | c.force_srv
    groups: list[tuple[int, ...]] = []
    if variant == "paper":
        cands = data.labels if (regions == "labels" or (regions == "auto" and data.labels)) else data.sese
        cands = [r for r in cands if not pinned[list(r.members)].any()]
        if cands and cands[0].passes_paper:       # one decision, taken on the representative block
            for r in cands:
                groups.append(r.members)
        return groups
    a1 = c.dev >= c.srv                                   # Assumption 1 (Eq. 16), per layer
    ok = a1 & ~pinned
    cands = data.labels if regions == "labels" else data.sese
    for r in cands:
        m = list(r.members)
        if r.passes and ok[m].all() and not grouped[m].any():
            groups.append(r.members)
            grouped[m] = True
    # chains inside what is left, greedily segmented so that every segment passes the rule
    ob = data.tensor_bytes_out
    eb = data.edge_bytes
    for ch in data.chains:
        s = 0                       # index (in ch) of the current entry
        members: list[int] = []

        def close():
            if len(members) >= 2:
                groups.append(tuple(members))
                grouped[members] = True

        for j in range(1, len(ch)):
            v = ch[j]
            if grouped[v] or not ok[v]:
                close()
                s, members = j, []
                continue
            if not members:
                a_in = eb.get((ch[s], v), 0.0)
            elif ob[members[-1]] < a_in * (1.0 - _REL_TOL):
                # the last member would become internal with a smaller tensor than the entry's:
                # end the block there, it becomes the next entry
                close()
                s, members = j - 1, []
                a_in = eb.get((ch[s], v), 0.0)
            members.append(v)
        close()
    return groups


# ---------------------------------------------------------------------- abstraction and solve
def abstract(instance: SplitInstance, groups) -> tuple[CutProblem, np.ndarray]:
    """The abstracted problem (Eqs. 19-22) and the map layer -> block vertex."""
    g = instance.graph
    c = instance.costs
    n = len(g)
    gid = np.full(n, -1, dtype=np.int64)
    for k, m in enumerate(groups):
        gid[list(m)] = k
    free = np.flatnonzero(gid < 0)
    # number the block vertices in topological order of their first layer
    k0 = len(groups)
    gid[free] = np.arange(k0, k0 + free.size)
    ng = k0 + free.size
    first_layer = np.full(ng, n, dtype=np.int64)
    np.minimum.at(first_layer, gid, np.arange(n))
    order = np.argsort(first_layer, kind="stable")
    rank = np.empty(ng, dtype=np.int64)
    rank[order] = np.arange(ng)
    gid = rank[gid]
    dev = np.zeros(ng)
    srv = np.zeros(ng)
    np.add.at(dev, gid, c.dev)                              # Eq. 19
    np.add.at(srv, gid, c.srv)                              # Eq. 20
    gl = gid.tolist()
    tensors = []
    for p, cons, w, _b in c.tensors:                         # Eqs. 21-22, internal tensors vanish
        gp = gl[p]
        gc = tuple(sorted({gl[j] for j in cons if gl[j] != gp}))
        if gc:
            tensors.append((gp, gc, w))
    if c.input_weight > 0.0:
        tensors.append((-1, tuple(sorted({gl[i] for i in c.input_layers})), c.input_weight))
    closure = sorted({(gl[u], gl[w]) for u, w in g.edge_pairs if gl[u] != gl[w]})
    fd = np.zeros(ng, dtype=bool)
    fs = np.zeros(ng, dtype=bool)
    fd[gid[c.force_dev]] = True
    fs[gid[c.force_srv]] = True
    return CutProblem(ng, dev, srv, tensors, closure, fd, fs, True), gid


def _chain_scan(prob: CutProblem) -> np.ndarray | None:
    """Prefix scan when the abstracted graph is the chain 0 -> 1 -> ... (else None)."""
    n = prob.n
    if len(prob.closure) != n - 1 or any(u != i or w != i + 1 for i, (u, w) in enumerate(prob.closure)):
        return None
    cut = np.zeros(n + 1)               # cut[j]: device = {0..j-1}
    for p, cons, w in prob.tensors:
        if p < 0:
            cut[0] += w                 # raw input uploaded when vertex 0 is on the server
        elif cons == (p + 1,):
            cut[p + 1] += w
        else:
            return None
    cost = np.concatenate([[0.0], np.cumsum(prob.dev)]) + \
        np.concatenate([np.cumsum(prob.srv[::-1])[::-1], [0.0]]) + cut
    fd = np.flatnonzero(prob.force_dev)
    fs = np.flatnonzero(prob.force_srv)
    lo = int(fd.max()) + 1 if fd.size else 0
    hi = int(fs.min()) if fs.size else n
    if lo > hi:
        return None
    best = lo + int(np.argmin(cost[lo:hi + 1]))
    return np.arange(n) < best


def blockwise_detailed(instance: SplitInstance, variant: str = "corrected", regions: str | None = None) -> dict:
    """Block-wise split with diagnostics: ``device`` (names), ``groups`` (abstracted blocks as
    lists of names), ``vertices`` (size of the abstracted graph), ``method`` (``chain`` or
    ``mincut``)."""
    if not isinstance(instance, SplitInstance):
        raise InstanceError("instance", f"must be a SplitInstance, got {type(instance).__name__}")
    if variant not in VARIANTS:
        raise InstanceError("variant", f"must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if regions is None:
        regions = "auto" if variant == "paper" else "sese"
    if regions not in REGIONS + (("auto",) if variant == "paper" else ()):
        raise InstanceError("regions", f"must be one of {', '.join(REGIONS)}, got {regions!r}")
    groups = _select_groups(instance, variant, regions)
    prob, gid = abstract(instance, groups)
    gmask = _chain_scan(prob)
    method = "chain"
    if gmask is None:
        res = min_cut(prob)
        if res is None:  # pragma: no cover - instance validation rules this out
            raise InstanceError("pin_server", "pins admit no feasible split")
        gmask = res.mask
        method = "mincut"
    mask = gmask[gid]
    names = instance.graph.names
    return {"device": instance.names_of(mask), "mask": mask, "vertices": prob.n, "method": method,
            "groups": [[names[v] for v in m] for m in groups]}


def blockwise(instance: SplitInstance, variant: str = "corrected", regions: str | None = None) -> list[str]:
    """Device-side layer names of the block-wise split (see the module docstring).

    ``variant="corrected"`` (default) is exact; ``variant="paper"`` is seed 000 Alg. 3's block rule
    as printed (plain min cut, one decision for all blocks) and can be suboptimal (digest check E).
    ``regions``: ``"sese"`` (articulation regions, default) or ``"labels"`` (``Layer.block`` labels),
    each followed by chain segments in the corrected variant.
    """
    return blockwise_detailed(instance, variant, regions)["device"]


def solve(instance: SplitInstance, variant: str = "corrected", **options) -> list[str]:
    """Alias of :func:`blockwise` (the name the family registry calls)."""
    return blockwise(instance, variant, **options)


__all__ = ["blockwise", "blockwise_detailed", "solve", "abstract", "Region", "VARIANTS", "REGIONS"]
