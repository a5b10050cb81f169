"""The DNN graph: a DAG of layers.

A *layer* is a vertex; its output *tensor* is sent once to all of its consumers (fan-out). A layer
may have several different outputs (``extra_out_bytes``); an edge then names the output ``port``
it carries. Units: FLOP, bytes, seconds.

Per layer:

* ``fwd_flop`` / ``bwd_flop``: forward / backward compute in FLOP (analytic graphs);
* ``fwd_seconds`` / ``bwd_seconds``: measured seconds per machine class (``{"gpu": 0.022}``),
  e.g. from PipeDream profiles;
* ``out_bytes``: bytes of output port 0 (the main output tensor);
* ``param_bytes``: bytes of parameters; ``mem_bytes``: optional working-memory footprint;
* ``block`` / ``block_kind``: membership of an architectural block (``"layer1.0"``,
  ``"BasicBlock"``), so block-level views come for free.

Graphs are immutable after construction: build them with :class:`DNNGraph` (which validates) and
derive new graphs from them. All index-based helpers use the topological order ``0..n-1`` given by
:attr:`DNNGraph.order`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.graph_checks import (
    _NUMERIC_FIELDS,
    _check_layer_numbers,
    _check_meta_macs,
    stable_topological_order,
)


@dataclass(frozen=True)
class Layer:
    """One vertex of a DNN graph (see module docstring for the fields and units)."""

    name: str
    op: str = "layer"
    fwd_flop: float = 0.0
    bwd_flop: float = 0.0
    out_bytes: float = 0.0
    param_bytes: float = 0.0
    mem_bytes: float | None = None
    fwd_seconds: Mapping[str, float] = field(default_factory=dict)
    bwd_seconds: Mapping[str, float] = field(default_factory=dict)
    extra_out_bytes: tuple[float, ...] = ()
    block: str | None = None
    block_kind: str | None = None
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def n_outputs(self) -> int:
        return 1 + len(self.extra_out_bytes)

    def port_bytes(self, port: int) -> float:
        return self.out_bytes if port == 0 else self.extra_out_bytes[port - 1]

    @property
    def params(self) -> float:
        """Parameter count assuming 4-byte (fp32) parameters."""
        return self.param_bytes / 4.0

    @property
    def macs(self) -> float:
        """Forward multiply-accumulates: ``meta["macs"]`` when the source counted them (the zoo counts
        conv + linear MACs, the published convention), else ``fwd_flop / 2``."""
        m = self.meta.get("macs") if self.meta else None
        return float(m) if isinstance(m, (int, float)) else self.fwd_flop / 2.0

    def to_dict(self) -> dict:
        d: dict = {"name": self.name, "op": self.op}
        for f in _NUMERIC_FIELDS:
            v = getattr(self, f)
            if v:
                d[f] = v
        if self.mem_bytes is not None:
            d["mem_bytes"] = self.mem_bytes
        if self.fwd_seconds:
            d["fwd_seconds"] = dict(self.fwd_seconds)
        if self.bwd_seconds:
            d["bwd_seconds"] = dict(self.bwd_seconds)
        if self.extra_out_bytes:
            d["extra_out_bytes"] = list(self.extra_out_bytes)
        if self.block is not None:
            d["block"] = self.block
        if self.block_kind is not None:
            d["block_kind"] = self.block_kind
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping, path: str = "layer") -> "Layer":
        from splitopt.instances.limits import QUANTITY

        check_number = QUANTITY.check  # every layer number is a quantity (instances.limits)

        if not isinstance(d, Mapping):
            raise InstanceError(path, f"must be an object, got {d!r}")
        unknown = set(d) - {"name", "op", *_NUMERIC_FIELDS, "mem_bytes", "fwd_seconds",
                            "bwd_seconds", "extra_out_bytes", "block", "block_kind", "meta"}
        if unknown:
            raise InstanceError(f"{path}.{sorted(unknown)[0]}", "unknown field")
        if "name" not in d:
            raise InstanceError(f"{path}.name", "missing")
        name = d["name"]
        if not isinstance(name, str) or not name:
            raise InstanceError(f"{path}.name", f"must be a non-empty string, got {name!r}")
        kw: dict = {"name": name, "op": str(d.get("op", "layer"))}
        for f in _NUMERIC_FIELDS:
            if f in d:
                kw[f] = check_number(f"{path}.{f}", d[f])
        if d.get("mem_bytes") is not None:
            kw["mem_bytes"] = check_number(f"{path}.mem_bytes", d["mem_bytes"])
        for f in ("fwd_seconds", "bwd_seconds"):
            if f in d:
                m = d[f]
                if not isinstance(m, Mapping):
                    raise InstanceError(f"{path}.{f}", f"must be an object of machine class -> seconds, got {m!r}")
                kw[f] = {str(k): check_number(f"{path}.{f}.{k}", v) for k, v in m.items()}
        if "extra_out_bytes" in d:
            eo = d["extra_out_bytes"]
            if not isinstance(eo, (list, tuple)):
                raise InstanceError(f"{path}.extra_out_bytes", f"must be a list, got {eo!r}")
            kw["extra_out_bytes"] = tuple(check_number(f"{path}.extra_out_bytes[{i}]", v) for i, v in enumerate(eo))
        for f in ("block", "block_kind"):
            if d.get(f) is not None:
                kw[f] = str(d[f])
        if d.get("meta"):
            if not isinstance(d["meta"], Mapping):
                raise InstanceError(f"{path}.meta", f"must be an object, got {d['meta']!r}"[:200])
            kw["meta"] = dict(d["meta"])
            _check_meta_macs(kw["meta"], path)
        return cls(**kw)


@dataclass(frozen=True)
class Edge:
    """Producer -> consumer; ``port`` is the producer's output carried (0 = main output)."""

    src: str
    dst: str
    port: int = 0


class DNNGraph:
    """A validated DAG of layers.

    ``layers`` may be given in any order; the graph stores them in a deterministic topological order
    (Kahn's algorithm, ties broken by the given order), so index ``i`` always refers to
    ``graph.layers[i]`` and every edge goes from a lower to a higher index.

    Validation (raises :class:`InstanceError` naming the field): unique non-empty names, edges
    referencing existing layers and ports, no self-loops or duplicate edges, acyclic, at least one
    input layer, finite non-negative numbers.
    """

    __slots__ = ("name", "layers", "edges", "meta", "_index", "_succ", "_pred", "__dict__")

    def __init__(self, layers: Sequence[Layer], edges: Iterable[Edge | tuple], name: str = "graph",
                 meta: Mapping | None = None, *, _validated_numbers: bool = False):
        self.name = name
        self.meta = dict(meta or {})
        layers = list(layers)
        if not layers:
            raise InstanceError("layers", "a DNN graph needs at least one layer")
        index: dict[str, int] = {}
        for i, lay in enumerate(layers):
            if not isinstance(lay, Layer):
                raise InstanceError(f"layers[{i}]", f"must be a Layer, got {type(lay).__name__}")
            if not isinstance(lay.name, str) or not lay.name:
                raise InstanceError(f"layers[{i}].name", f"must be a non-empty string, got {lay.name!r}")
            if lay.name in index:
                raise InstanceError(f"layers[{i}].name", f"duplicate layer name {lay.name!r}")
            index[lay.name] = i
            if not _validated_numbers:
                _check_layer_numbers(lay, i)
        n = len(layers)
        succ: list[list[int]] = [[] for _ in range(n)]
        pred: list[list[int]] = [[] for _ in range(n)]
        elist: list[Edge] = []
        seen: set[tuple[int, int, int]] = set()
        for k, e in enumerate(edges):
            if not isinstance(e, Edge):
                try:
                    e = Edge(*e)
                except TypeError:
                    raise InstanceError(f"edges[{k}]", f"must be [src, dst] or [src, dst, port], got {e!r}") from None
            s = index.get(e.src) if isinstance(e.src, str) else None
            if s is None:
                raise InstanceError(f"edges[{k}].src", f"unknown layer {e.src!r}"[:200])
            t = index.get(e.dst) if isinstance(e.dst, str) else None
            if t is None:
                raise InstanceError(f"edges[{k}].dst", f"unknown layer {e.dst!r}"[:200])
            if s == t:
                raise InstanceError(f"edges[{k}]", f"self-loop on layer {e.src!r}")
            if isinstance(e.port, bool) or not isinstance(e.port, int) or not 0 <= e.port < layers[s].n_outputs:
                raise InstanceError(f"edges[{k}].port",
                                    f"layer {e.src!r} has {layers[s].n_outputs} output(s), got port {e.port!r}")
            key = (s, t, e.port)
            if key in seen:
                raise InstanceError(f"edges[{k}]", f"duplicate edge {e.src!r} -> {e.dst!r}")
            seen.add(key)
            elist.append(e)
            if t not in succ[s]:
                succ[s].append(t)
                pred[t].append(s)
        if all(pred):
            raise InstanceError("edges", "the graph has no input layer (every layer has a producer): it is cyclic")
        order, cyc = stable_topological_order(succ)
        if cyc is not None:
            names = " -> ".join(layers[i].name for i in cyc)
            raise InstanceError("edges", f"the graph is cyclic: {names}")
        pos = [0] * n
        for p, i in enumerate(order):
            pos[i] = p
        self.layers: tuple[Layer, ...] = tuple(layers[i] for i in order)
        self._index = {lay.name: p for p, lay in enumerate(self.layers)}
        self._succ = tuple(tuple(sorted(pos[j] for j in succ[i])) for i in order)
        self._pred = tuple(tuple(sorted(pos[j] for j in pred[i])) for i in order)
        self.edges: tuple[Edge, ...] = tuple(elist)

    # ------------------------------------------------------------------ basic queries
    def __len__(self) -> int:
        return len(self.layers)

    def __repr__(self) -> str:
        return f"DNNGraph({self.name!r}, {len(self.layers)} layers, {len(self.edges)} edges)"

    def __eq__(self, other) -> bool:
        return (isinstance(other, DNNGraph) and self.name == other.name and self.layers == other.layers
                and sorted(map(_edge_key, self.edges)) == sorted(map(_edge_key, other.edges)))

    def __hash__(self):  # pragma: no cover - graphs are used as values, not keys
        return hash((self.name, len(self.layers), len(self.edges)))

    def index(self, name: str) -> int:
        """Topological index of the layer called ``name``."""
        try:
            return self._index[name]
        except KeyError:
            raise InstanceError("layer", f"unknown layer {name!r} in graph {self.name!r}") from None

    def layer(self, name_or_index: str | int) -> Layer:
        if isinstance(name_or_index, int):
            return self.layers[name_or_index]
        return self.layers[self.index(name_or_index)]

    @property
    def names(self) -> list[str]:
        return [lay.name for lay in self.layers]

    @property
    def order(self) -> range:
        """The topological order (indices are already topological)."""
        return range(len(self.layers))

    def succ(self, i: int) -> tuple[int, ...]:
        """Consumers of layer ``i`` (fan-out), sorted."""
        return self._succ[i]

    def pred(self, i: int) -> tuple[int, ...]:
        """Producers of layer ``i`` (fan-in), sorted."""
        return self._pred[i]

    def fan_out(self, i: int) -> int:
        return len(self._succ[i])

    def __contains__(self, name: object) -> bool:
        return name in self._index

    @property
    def name_index(self) -> Mapping[str, int]:
        """Read-only map layer name -> topological index."""
        return MappingProxyType(self._index)

    @cached_property
    def edge_pairs(self) -> tuple[tuple[int, int], ...]:
        """Every distinct producer -> consumer pair ``(u, w)`` of layer indices (ports merged),
        sorted by consumer: the rows of "no data flows server -> device" (closure) constraints."""
        return tuple((u, w) for w in range(len(self.layers)) for u in self._pred[w])

    def closure(self, start: Iterable[int], *, ancestors: bool = True) -> np.ndarray:
        """Boolean mask of the layers ``start`` and all their ancestors (``ancestors=False``: all
        their descendants)."""
        adj = self._pred if ancestors else self._succ
        mask = np.zeros(len(self.layers), dtype=bool)
        stack = [int(v) for v in start]
        mask[stack] = True
        while stack:
            v = stack.pop()
            for u in adj[v]:
                if not mask[u]:
                    mask[u] = True
                    stack.append(u)
        return mask

    def open_edge(self, mask) -> tuple[int, int] | None:
        """The first edge ``(u, w)`` with ``w`` in ``mask`` and ``u`` not (so ``mask`` is not closed
        under predecessors), or ``None`` when ``mask`` is predecessor-closed."""
        for w in np.flatnonzero(mask):
            for u in self._pred[w]:
                if not mask[u]:
                    return int(u), int(w)
        return None

    def derived(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """Data derived from this (immutable) graph, built once per key and kept with the graph:
        the one cache of the algorithms (it lives and dies with the graph object, so it can never
        serve one graph's data for another, as an ``id()``-keyed cache can)."""
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            cache[key] = build()
        return cache[key]

    def fan_in(self, i: int) -> int:
        return len(self._pred[i])

    @cached_property
    def inputs(self) -> tuple[int, ...]:
        """Layers with no producer."""
        return tuple(i for i in self.order if not self._pred[i])

    @cached_property
    def outputs(self) -> tuple[int, ...]:
        """Layers with no consumer."""
        return tuple(i for i in self.order if not self._succ[i])

    @cached_property
    def tensors(self) -> tuple[tuple[int, int, float, tuple[int, ...]], ...]:
        """Every output tensor that has a consumer: ``(producer, port, bytes, consumers)``.

        A tensor is sent once to all of its consumers; algorithms charge its bytes once.
        """
        cons: dict[tuple[int, int], set[int]] = {}
        for e in self.edges:
            cons.setdefault((self._index[e.src], e.port), set()).add(self._index[e.dst])
        return tuple((p, port, self.layers[p].port_bytes(port), tuple(sorted(c)))
                     for (p, port), c in sorted(cons.items()))

    def is_chain(self) -> bool:
        """True if the layers form one path ``0 -> 1 -> ... -> n-1``."""
        n = len(self.layers)
        return all(self._succ[i] == (i + 1,) for i in range(n - 1)) and not self._succ[n - 1] \
            and all(lay.n_outputs == 1 for lay in self.layers)

    def to_networkx(self):
        """A ``networkx.DiGraph`` with layer names as nodes and layer fields as attributes."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for lay in self.layers:
            g.add_node(lay.name, **lay.to_dict())
        for e in self.edges:
            g.add_edge(e.src, e.dst, port=e.port)
        return g

    def totals(self) -> dict[str, float]:
        """Sums over layers: ``layers, edges, fwd_flop, bwd_flop, macs, params, param_bytes, out_bytes``."""
        return {
            "layers": len(self.layers),
            "edges": len(self.edges),
            "fwd_flop": math.fsum(l.fwd_flop for l in self.layers),
            "bwd_flop": math.fsum(l.bwd_flop for l in self.layers),
            "macs": math.fsum(l.macs for l in self.layers),
            "params": math.fsum(l.params for l in self.layers),
            "param_bytes": math.fsum(l.param_bytes for l in self.layers),
            "out_bytes": math.fsum(l.out_bytes + sum(l.extra_out_bytes) for l in self.layers),
        }

    # ------------------------------------------------------------------ structure
    @cached_property
    def articulation_layers(self) -> tuple[int, ...]:
        """Layers on *every* path from an input to an output (sorted topologically).

        Computed from dominators (of a virtual sink, rooted at a virtual source): a layer lies on
        every source-sink path iff it dominates the virtual sink. These are the cut vertices of
        QDMP (seed 002, Theorem 2) and the boundaries of the chain of SESE blocks.
        """
        n = len(self.layers)
        # Immediate dominators on a DAG in topological order: idom(v) = LCA of preds in dom tree.
        src = n  # a virtual source before every input layer
        idom = [-1] * (n + 2)
        depth = [0] * (n + 2)
        idom[src] = src

        def lca(a: int, b: int) -> int:
            while a != b:
                if depth[a] < depth[b]:
                    a, b = b, a
                a = idom[a]
            return a

        for v in range(n):
            preds = self._pred[v] or (src,)
            d = preds[0]
            for p in preds[1:]:
                d = lca(d, p)
            idom[v] = d
            depth[v] = depth[d] + 1
        outs = self.outputs
        d = outs[0]
        for p in outs[1:]:
            d = lca(d, p)
        chain = []
        while d != src:
            chain.append(d)
            d = idom[d]
        return tuple(sorted(chain))

    def sese_blocks(self) -> list[tuple[int, ...]]:
        """The chain of single-entry/single-exit regions between consecutive articulation layers.

        Block ``k`` holds the layers strictly after articulation layer ``k-1`` up to and including
        articulation layer ``k`` (the first block starts at the inputs, a last block without an
        articulation exit holds the layers after the last one). Every layer is in exactly one
        block, and every edge stays inside a block or joins a block's exit to the next block.
        """
        arts = self.articulation_layers
        n = len(self.layers)
        # Layers reachable from articulation a_{k-1} but not beyond a_k: since every path passes
        # through each articulation layer, topological position between them decides membership
        # except for layers that are neither ancestors of a_k nor descendants of a_{k-1}; those
        # cannot exist in a graph where every input->output path passes a_k, unless they are dead
        # ends, which we assign by their producers.
        block_of = [-1] * n
        anc = self._ancestors_mask()
        k = 0
        blocks: list[list[int]] = [[] for _ in range(len(arts) + 1)]
        for v in range(n):
            # first articulation layer that v is an ancestor-or-equal of
            while k < len(arts) and v > arts[k]:
                k += 1
            b = k
            # a dead-end layer (not an ancestor of art[b]) after art[b-1] still belongs to block b
            # only if it is an ancestor; otherwise it belongs where its producers are.
            if b < len(arts) and v != arts[b] and not anc(v, arts[b]):
                b = max((block_of[p] for p in self._pred[v]), default=b)
            block_of[v] = b
            blocks[b].append(v)
        return [tuple(b) for b in blocks if b]

    def _ancestors_mask(self):
        """Return ``is_anc(u, v)``: whether there is a path u -> ... -> v (cached per target)."""
        cache: dict[int, set[int]] = {}

        def is_anc(u: int, v: int) -> bool:
            s = cache.get(v)
            if s is None:
                s = set()
                stack = [v]
                while stack:
                    x = stack.pop()
                    for p in self._pred[x]:
                        if p not in s:
                            s.add(p)
                            stack.append(p)
                cache[v] = s
            return u in s

        return is_anc

    def collapse(self, groups: Sequence[Sequence[int]] | None = None, name: str | None = None) -> "DNNGraph":
        """Collapse groups of layers into single vertices with summed costs.

        ``groups`` defaults to :meth:`sese_blocks`, which gives a chain. Each group becomes one
        layer named after its last layer (``block`` is kept when the group shares one), with summed
        FLOP, seconds, parameter and memory bytes. Its output bytes are the bytes of the tensors
        leaving the group (each tensor once), counting the main output of a graph output layer
        (no consumer) as leaving: so collapsing into singletons keeps every ``out_bytes``, and the
        last block of :meth:`sese_blocks` reports the graph's output bytes (not 0). Raises :class:`InstanceError` if the quotient graph is
        cyclic.
        """
        if groups is None:
            groups = self.sese_blocks()
        n = len(self.layers)
        gid = [-1] * n
        for g, members in enumerate(groups):
            for v in members:
                if gid[v] != -1:
                    raise InstanceError(f"groups[{g}]", f"layer {self.layers[v].name!r} is in two groups")
                gid[v] = g
        if -1 in gid:
            raise InstanceError("groups", f"layer {self.layers[gid.index(-1)].name!r} is in no group")
        leaving: list[float] = [0.0] * len(groups)
        for (p, port, b, cons) in self.tensors:
            if any(gid[c] != gid[p] for c in cons):
                leaving[gid[p]] += b
        for v in self.outputs:  # a graph output's tensor leaves the graph, hence its group
            leaving[gid[v]] += self.layers[v].out_bytes
        new_layers = []
        for g, members in enumerate(groups):
            ms = [self.layers[v] for v in sorted(members)]
            blocks = {m.block for m in ms}
            kinds = {m.block_kind for m in ms}
            fs: dict[str, float] = {}
            bs: dict[str, float] = {}
            for m in ms:
                for k2, v2 in m.fwd_seconds.items():
                    fs[k2] = fs.get(k2, 0.0) + v2
                for k2, v2 in m.bwd_seconds.items():
                    bs[k2] = bs.get(k2, 0.0) + v2
            mem = [m.mem_bytes for m in ms if m.mem_bytes is not None]
            new_layers.append(Layer(
                name=ms[-1].name if len(ms) == 1 else f"{ms[-1].name}",
                op="block" if len(ms) > 1 else ms[0].op,
                fwd_flop=math.fsum(m.fwd_flop for m in ms),
                bwd_flop=math.fsum(m.bwd_flop for m in ms),
                out_bytes=leaving[g],
                param_bytes=math.fsum(m.param_bytes for m in ms),
                mem_bytes=math.fsum(mem) if mem else None,
                fwd_seconds=fs, bwd_seconds=bs,
                block=blocks.pop() if len(blocks) == 1 else None,
                block_kind=kinds.pop() if len(kinds) == 1 else None,
                meta={"members": [m.name for m in ms]} if len(ms) > 1 else dict(ms[0].meta),
            ))
        new_edges = sorted({(gid[self._index[e.src]], gid[self._index[e.dst]]) for e in self.edges
                            if gid[self._index[e.src]] != gid[self._index[e.dst]]})
        return DNNGraph(new_layers, [Edge(new_layers[a].name, new_layers[b].name) for a, b in new_edges],
                        name=name or f"{self.name}[collapsed]", meta=self.meta, _validated_numbers=True)

    def collapse_by_block(self, name: str | None = None) -> "DNNGraph":
        """Collapse consecutive layers sharing a ``block`` label (layers without one stay alone)."""
        groups: list[list[int]] = []
        label_group: dict[str, int] = {}
        for v, lay in enumerate(self.layers):
            if lay.block is not None and lay.block in label_group:
                groups[label_group[lay.block]].append(v)
            else:
                groups.append([v])
                if lay.block is not None:
                    label_group[lay.block] = len(groups) - 1
        return self.collapse(groups, name=name or f"{self.name}[blocks]")

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "meta": dict(self.meta),
            "layers": [lay.to_dict() for lay in self.layers],
            "edges": [[e.src, e.dst] if e.port == 0 else [e.src, e.dst, e.port] for e in self.edges],
        }

    @classmethod
    def from_dict(cls, d: Mapping, path: str = "graph") -> "DNNGraph":
        if not isinstance(d, Mapping):
            raise InstanceError(path, f"must be an object, got {type(d).__name__}")
        layers_d = d.get("layers")
        if not isinstance(layers_d, list):
            raise InstanceError(f"{path}.layers", f"must be a list, got {layers_d!r}"[:200])
        edges_d = d.get("edges", [])
        if not isinstance(edges_d, list):
            raise InstanceError(f"{path}.edges", f"must be a list, got {edges_d!r}"[:200])
        meta = d.get("meta") or {}
        if not isinstance(meta, Mapping):
            raise InstanceError(f"{path}.meta", f"must be an object, got {meta!r}"[:200])
        layers = [Layer.from_dict(ld, f"{path}.layers[{i}]") for i, ld in enumerate(layers_d)]
        edges = []
        for k, e in enumerate(edges_d):
            if not isinstance(e, (list, tuple)) or len(e) not in (2, 3):
                raise InstanceError(f"{path}.edges[{k}]", f"must be [src, dst] or [src, dst, port], got {e!r}")
            edges.append(Edge(*e))
        try:
            return cls(layers, edges, name=str(d.get("name", "graph")), meta=meta,
                       _validated_numbers=True)
        except InstanceError as exc:
            raise InstanceError(f"{path}.{exc.path}", exc.detail) from None


def _edge_key(e: Edge):
    return (e.src, e.dst, e.port)


def chain(costs: Sequence[Mapping], name: str = "chain") -> DNNGraph:
    """Build a chain graph from per-layer field dicts (``name`` defaults to ``l0, l1, ...``)."""
    layers = [Layer(**{"name": f"l{i}", **c}) for i, c in enumerate(costs)]
    return DNNGraph(layers, [Edge(layers[i].name, layers[i + 1].name) for i in range(len(layers) - 1)],
                    name=name)


__all__ = ["Layer", "Edge", "DNNGraph", "chain", "stable_topological_order", "replace"]
