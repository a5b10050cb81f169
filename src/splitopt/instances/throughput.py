"""Instances of the ``throughput`` family: place every layer of a DNN graph on one of ``N`` edge
nodes so that the pipeline's period (its slowest resource) is as short as possible.

Seed 004 (Feltin et al., "DNN partitioning for inference throughput acceleration at the edge", IEEE
Access 2023), as read in the digest ``papers/004-throughput-bnb.md`` (cited as "digest §x").

Data (SI units): per layer its compute ``flop`` (FLOP per inference, the paper's ``c_i``) and its
memory ``mem_bytes``; per output tensor its producer, consumers and ``bytes`` (the paper's
``s_ij``, one value per tensor); per node its rate ``flops`` (FLOP/s, the paper's ``eta_a``, which
the paper writes in "GHz") and optional ``memory_bytes``; per ordered node pair a link rate
``rates[a][b]`` in bytes/s (``theta_ab``; loopback is free; 0 = no link).

The period of an assignment (evaluated by :func:`splitopt.models.throughput.evaluate`) is the largest
of the node times ``sum of flop on a / flops[a]`` and the link times; throughput is its inverse
(paper §IV). Options, all explicit fields (the paper's reading in brackets):

* ``max_splits`` (``S``, digest §2.2): at most this many positions ``i`` in the layer order with
  ``p_i != p_{i+1}`` (the paper's early stopping); ``None`` = no cap.
* ``link_model``: ``"full-duplex"`` (each ordered pair its own resource [paper eq. 5]),
  ``"half-duplex"`` (both directions of a pair share it), ``"shared"`` (one medium for all).
* ``transfer``: ``"once"`` (a tensor with several consumers on one remote node crosses the link
  once, as real systems send it; default) or ``"per_edge"`` (once per consuming edge [paper eq. 5],
  digest §5.1 item 2).
* ``pins``: layer -> node (e.g. the input on the camera node); ``contiguous``: each node runs one
  contiguous run of the layer order (digest §5.1 item 9); node ``memory_bytes`` limits.

The layer order is the graph's topological order (``DNNGraph.layers``), the order of the cap and of
the paper's branch and bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances import limits

LINK_MODELS = ("full-duplex", "half-duplex", "shared")
TRANSFERS = ("once", "per_edge")


@dataclass(frozen=True)
class ThroughputInstance:
    """One ``throughput`` instance (see the module docstring). Immutable, validated on construction."""

    family: ClassVar[str] = "throughput"
    #: range limits (:mod:`splitopt.instances.limits`), in the JSON names of :meth:`to_dict`
    LIMITS: ClassVar[dict] = {"layers[].flop": limits.QUANTITY, "layers[].mem_bytes": limits.QUANTITY,
                              "tensors[].bytes": limits.QUANTITY, "nodes[].flops": limits.RATE,
                              "nodes[].memory_bytes": limits.QUANTITY, "rates_bytes_per_s[][]": limits.LINK_RATE,
                              "max_splits": limits.COUNT}

    layers: tuple[str, ...]
    flop: tuple[float, ...]
    tensors: tuple[tuple[int, tuple[int, ...], float], ...]  # (producer, consumers, bytes)
    nodes: tuple[str, ...]
    node_flops: tuple[float, ...]
    rates: tuple[tuple[float, ...], ...]  # bytes/s per ordered pair; diagonal ignored (free)
    mem_bytes: tuple[float, ...] | None = None
    node_memory_bytes: tuple[float | None, ...] | None = None
    max_splits: int | None = None
    link_model: str = "full-duplex"
    transfer: str = "once"
    pins: Mapping[str, str] = field(default_factory=dict)
    contiguous: bool = False
    name: str = "throughput"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        L, N = len(self.layers), len(self.nodes)
        if L == 0:
            raise InstanceError("layers", "needs at least one layer")
        if N == 0:
            raise InstanceError("nodes", "needs at least one node")
        for what, names in (("layers", self.layers), ("nodes", self.nodes)):
            seen = set()
            for i, nm in enumerate(names):
                if not isinstance(nm, str) or not nm or nm in seen:
                    raise InstanceError(f"{what}[{i}].name", f"must be a unique non-empty string, got {nm!r}")
                seen.add(nm)
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        if len(self.flop) != L:
            raise InstanceError("flop", f"has {len(self.flop)} entries for {L} layers")
        object.__setattr__(self, "flop", tuple(check_number(f"layers[{i}].flop", v) for i, v in enumerate(self.flop)))
        if len(self.node_flops) != N:
            raise InstanceError("node_flops", f"has {len(self.node_flops)} entries for {N} nodes")
        object.__setattr__(self, "node_flops", tuple(check_number(f"nodes[{a}].flops", v, strict=True)
                                                     for a, v in enumerate(self.node_flops)))
        if len(self.rates) != N or any(len(r) != N for r in self.rates):
            raise InstanceError("rates", f"must be an {N} x {N} matrix of bytes/s")
        rates = tuple(tuple(math.inf if a == b else check_number(f"rates[{a}][{b}]", v)
                            for b, v in enumerate(row)) for a, row in enumerate(self.rates))
        object.__setattr__(self, "rates", rates)
        tens = []
        for k, t in enumerate(self.tensors):
            try:
                p, cons, b = t
            except (TypeError, ValueError):
                raise InstanceError(f"tensors[{k}]", f"must be [producer, consumers, bytes], got {t!r}") from None
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= int(p) < L:
                raise InstanceError(f"tensors[{k}].producer", f"must be a layer index in 0..{L - 1}, got {p!r}")
            if isinstance(cons, (str, bytes)) or not isinstance(cons, Sequence) or any(
                    isinstance(c, bool) or not isinstance(c, (int, np.integer)) for c in cons):
                raise InstanceError(f"tensors[{k}].consumers", f"must be a list of layer indices, got {cons!r}"[:200])
            cons = tuple(int(c) for c in cons)
            if not cons or any(not int(p) < c < L for c in cons) or len(set(cons)) != len(cons):
                raise InstanceError(f"tensors[{k}].consumers", f"must be distinct later layers, got {list(cons)}")
            tens.append((int(p), cons, check_number(f"tensors[{k}].bytes", b)))
        object.__setattr__(self, "tensors", tuple(tens))
        if self.mem_bytes is not None:
            if len(self.mem_bytes) != L:
                raise InstanceError("mem_bytes", f"has {len(self.mem_bytes)} entries for {L} layers")
            object.__setattr__(self, "mem_bytes", tuple(check_number(f"layers[{i}].mem_bytes", v)
                                                        for i, v in enumerate(self.mem_bytes)))
        if self.node_memory_bytes is not None:
            if len(self.node_memory_bytes) != N:
                raise InstanceError("node_memory_bytes", f"has {len(self.node_memory_bytes)} entries for {N} nodes")
            object.__setattr__(self, "node_memory_bytes", tuple(
                None if v is None else check_number(f"nodes[{a}].memory_bytes", v)
                for a, v in enumerate(self.node_memory_bytes)))
        if self.max_splits is not None:
            if isinstance(self.max_splits, bool) or not isinstance(self.max_splits, (int, np.integer)) \
                    or self.max_splits < 0:
                raise InstanceError("max_splits", f"must be a non-negative integer or null, got {self.max_splits!r}")
            object.__setattr__(self, "max_splits", int(self.max_splits))
        if self.link_model not in LINK_MODELS:
            raise InstanceError("link_model", f"must be one of {', '.join(LINK_MODELS)}, got {self.link_model!r}")
        if self.transfer not in TRANSFERS:
            raise InstanceError("transfer", f"must be one of {', '.join(TRANSFERS)}, got {self.transfer!r}")
        if not isinstance(self.contiguous, bool):
            raise InstanceError("contiguous", f"must be true or false, got {self.contiguous!r}")
        pins = {}
        if not isinstance(self.pins or {}, Mapping):
            raise InstanceError("pins", f"must be an object of layer -> node, got {self.pins!r}"[:200])
        for lay, node in dict(self.pins or {}).items():
            if lay not in self.layers:
                raise InstanceError(f"pins.{lay}", "unknown layer")
            if node not in self.nodes:
                raise InstanceError(f"pins.{lay}", f"unknown node {node!r} (nodes: {', '.join(self.nodes)})")
            pins[lay] = node
        object.__setattr__(self, "pins", pins)
        object.__setattr__(self, "meta", dict(self.meta or {}))
        limits.enforce(self)

    # ------------------------------------------------------------------ derived data
    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def pin_index(self) -> dict[int, int]:
        """Pinned layer index -> node index."""
        li = {nm: i for i, nm in enumerate(self.layers)}
        ni = {nm: a for a, nm in enumerate(self.nodes)}
        return {li[lay]: ni[node] for lay, node in self.pins.items()}

    def inverse_rates(self) -> np.ndarray:
        """``Theta[a, b] = 1 / rates[a][b]`` (0 on the diagonal, inf where there is no link)."""
        r = np.array(self.rates, dtype=float)
        with np.errstate(divide="ignore"):
            inv = np.where(r > 0, 1.0 / r, math.inf)
        np.fill_diagonal(inv, 0.0)
        return inv

    def edges(self) -> list[tuple[int, int, float]]:
        """``(producer, consumer, bytes)`` per consuming edge (the paper's ``s_ij``)."""
        return [(p, c, b) for p, cons, b in self.tensors for c in cons]

    def identical_node_classes(self) -> list[list[int]]:
        """Groups of interchangeable nodes: same rate, same memory, same link rates to every other
        node (so relabelling them changes no period), and no pins. Symmetry breaking uses them."""
        pinned = set(self.pin_index.values())
        mem = self.node_memory_bytes or (None,) * self.n_nodes
        classes: list[list[int]] = []
        for a in range(self.n_nodes):
            if a in pinned:
                classes.append([a])
                continue
            for cl in classes:
                b = cl[0]
                if b in pinned or self.node_flops[a] != self.node_flops[b] or mem[a] != mem[b]:
                    continue
                others = [c for c in range(self.n_nodes) if c not in (a, b)]
                if all(self.rates[a][c] == self.rates[b][c] and self.rates[c][a] == self.rates[c][b] for c in others) \
                        and self.rates[a][b] == self.rates[b][a]:
                    cl.append(a)
                    break
            else:
                classes.append([a])
        return classes

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "name": self.name,
            "layers": [{"name": nm, "flop": f, **({"mem_bytes": self.mem_bytes[i]} if self.mem_bytes else {})}
                       for i, (nm, f) in enumerate(zip(self.layers, self.flop))],
            "tensors": [{"producer": p, "consumers": list(c), "bytes": b} for p, c, b in self.tensors],
            "nodes": [{"name": nm, "flops": f, **({"memory_bytes": self.node_memory_bytes[a]}
                                                  if self.node_memory_bytes else {})}
                      for a, (nm, f) in enumerate(zip(self.nodes, self.node_flops))],
            "rates_bytes_per_s": [[None if math.isinf(v) else v for v in row] for row in self.rates],
            "max_splits": self.max_splits, "link_model": self.link_model, "transfer": self.transfer,
            "pins": dict(self.pins), "contiguous": self.contiguous,
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "ThroughputInstance":
        if not isinstance(d, Mapping):
            raise InstanceError("", f"a throughput instance must be an object, got {type(d).__name__}")
        if d.get("comm_model", "links") == "device":  # a file written before issue 22: a placement instance
            import sys

            from splitopt.instances.placement import PlacementInstance

            print("splitopt: note: a throughput file with comm_model 'device' (written before issue 22) "
                  "loads as a placement instance", file=sys.stderr)
            return PlacementInstance.from_dict(d)
        known = {"name", "layers", "tensors", "nodes", "rates_bytes_per_s", "max_splits", "link_model", "transfer", "comm_model",
                 "pins", "contiguous", "meta"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InstanceError(unknown[0], "unknown field")
        for key in ("layers", "tensors", "nodes", "rates_bytes_per_s"):
            if not isinstance(d.get(key), list):
                raise InstanceError(key, f"must be a list, got {d.get(key)!r}"[:200])
        layers, flop, mem = [], [], []
        for i, lay in enumerate(d["layers"]):
            if not isinstance(lay, Mapping) or "name" not in lay or "flop" not in lay:
                raise InstanceError(f"layers[{i}]", "must be an object with name and flop")
            layers.append(lay["name"])
            flop.append(check_number(f"layers[{i}].flop", lay["flop"]))
            mem.append(lay.get("mem_bytes"))
        has_mem = any(m is not None for m in mem)
        tensors = []
        for k, t in enumerate(d["tensors"]):
            if not isinstance(t, Mapping) or not {"producer", "consumers", "bytes"} <= set(t):
                raise InstanceError(f"tensors[{k}]", "must be an object with producer, consumers and bytes")
            if not isinstance(t["consumers"], list):
                raise InstanceError(f"tensors[{k}].consumers", f"must be a list, got {t['consumers']!r}")
            tensors.append((t["producer"], t["consumers"], t["bytes"]))
        nodes, flops, nmem = [], [], []
        for a, nd in enumerate(d["nodes"]):
            if not isinstance(nd, Mapping) or "name" not in nd or "flops" not in nd:
                raise InstanceError(f"nodes[{a}]", "must be an object with name and flops")
            nodes.append(nd["name"])
            flops.append(nd["flops"])
            nmem.append(nd.get("memory_bytes"))
        rates = []
        for a, row in enumerate(d["rates_bytes_per_s"]):
            if not isinstance(row, list):
                raise InstanceError(f"rates_bytes_per_s[{a}]", "must be a list")
            rates.append(tuple(math.inf if (v is None and a == b) else check_number(f"rates_bytes_per_s[{a}][{b}]", v)
                               for b, v in enumerate(row)))
        return cls(tuple(layers), tuple(flop), tuple(tensors), tuple(nodes), tuple(flops), tuple(rates),
                   mem_bytes=tuple(0.0 if m is None else m for m in mem) if has_mem else None,
                   node_memory_bytes=tuple(nmem) if any(m is not None for m in nmem) else None,
                   max_splits=d.get("max_splits"), link_model=d.get("link_model", "full-duplex"),
                   transfer=d.get("transfer", "once"), pins=d.get("pins") or {},
                   contiguous=d.get("contiguous", False), name=str(d.get("name", "throughput")),
                   meta=d.get("meta") or {})

    def with_(self, **changes) -> "ThroughputInstance":
        return replace(self, **changes)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_graph(cls, graph, node_flops: Sequence[float], rates, *, flop: str = "fwd_flop",
                   node_names: Sequence[str] | None = None, node_memory_bytes=None, **kw) -> "ThroughputInstance":
        """From a :class:`~splitopt.instances.graph.DNNGraph`: ``c_i`` = the layers' ``fwd_flop``
        (2 x MACs for analytic zoo graphs), one tensor per output port with its bytes and consumers,
        ``mem_bytes`` = parameter bytes. ``rates``: an ``N x N`` matrix or one number for every pair."""
        n = len(node_flops)
        if not isinstance(rates, (list, tuple, np.ndarray)):
            rates = [[rates] * n for _ in range(n)]
        flops_l = [float(getattr(lay, flop)) for lay in graph.layers]
        tensors = [(p, cons, b) for p, _port, b, cons in graph.tensors]
        names = tuple(node_names) if node_names is not None else tuple(f"n{a}" for a in range(n))
        return cls(tuple(graph.names), tuple(flops_l), tuple(tensors), names, tuple(float(f) for f in node_flops),
                   tuple(tuple(float(v) for v in row) for row in rates),
                   mem_bytes=tuple(float(lay.param_bytes) for lay in graph.layers),
                   node_memory_bytes=node_memory_bytes, name=kw.pop("name", graph.name), **kw)


# ---------------------------------------------------------------------- platforms of the paper
#: Table 2 of seed 004 (two identical nodes; YOLOv2; S = 3): (processor, rate FLOP/s, link, bytes/s)
TABLE2 = {
    1: ("NVIDIA Pascal GPU (256 CUDA cores)", 30.7e9, "Wi-Fi", 10e6),
    2: ("Quad-core ARM A57 CPU", 1.57e9, "Wi-Fi", 10e6),
    3: ("NVIDIA Maxwell GPU (128 CUDA cores)", 14.7e9, "Ethernet", 1.4e9),
    4: ("Quad-core ARM A57 CPU", 1.57e9, "Ethernet", 1.4e9),
}


def table2_platform(setup: int, n_nodes: int = 2) -> tuple[list[float], list[list[float]]]:
    """Node rates and link matrix of Table 2's set-up 1-4 (homogeneous; the paper's "GHz" read as
    GFLOP/s, MBps as 1e6 bytes/s, digest §4.3)."""
    if setup not in TABLE2:
        raise InstanceError("setup", f"must be 1..4, got {setup!r}")
    _p, eta, _l, theta = TABLE2[setup]
    return [eta] * n_nodes, [[theta] * n_nodes for _ in range(n_nodes)]


def heterogeneous_platform(added_flops: float, link: str = "ethernet") -> tuple[list[float], list[list[float]]]:
    """Seed 004 §VI-B: a fixed Maxwell-GPU node (14.7 GFLOP/s) plus one node of rate ``added_flops``,
    over Wi-Fi (10 MB/s) or Ethernet (1.4 GB/s)."""
    theta = {"wifi": 10e6, "ethernet": 1.4e9}.get(link)
    if theta is None:
        raise InstanceError("link", f"must be wifi or ethernet, got {link!r}")
    return [14.7e9, float(added_flops)], [[theta] * 2 for _ in range(2)]


# ---------------------------------------------------------------------- seeded generator
def generate(seed: int, n_layers: int = 7, n_nodes: int = 3, kind: str | None = None, skips: int = 2,
             homogeneous: bool | None = None, max_splits: int | None | str = "draw", graph=None,
             **options) -> ThroughputInstance:
    """A seeded random instance: a chain (``kind="chain"``) or a chain with ``skips`` skip edges
    (``"skip"``); ``kind=None`` draws it. Layer FLOP log-uniform over 1e8..1e10, tensor bytes over
    1e4..1e6, node rates 1e9..1e10 FLOP/s (one rate for all when ``homogeneous``), link rates chosen
    so that transfers and compute are of the same order. ``max_splits="draw"`` draws no cap or a cap
    of 1..3. With ``graph``: that DNN graph (zoo, PipeDream) on a drawn platform."""
    rng = np.random.default_rng([seed, 4004])
    if kind is None:
        kind = ("chain", "skip")[seed % 2]
    if homogeneous is None:
        homogeneous = bool(rng.random() < 0.4)
    if max_splits == "draw":
        max_splits = None if rng.random() < 0.5 else int(rng.integers(1, 4))
    if homogeneous:
        flops = [float(10 ** rng.uniform(9, 10))] * n_nodes
    else:
        flops = [float(10 ** rng.uniform(9, 10)) for _ in range(n_nodes)]
    if graph is not None:
        inst = ThroughputInstance.from_graph(graph, flops, 1.0, name=f"{graph.name}-s{seed}")
        total = sum(inst.flop) or 1.0
        mean_bytes = float(np.mean([b for _p, _c, b in inst.tensors])) if inst.tensors else 1.0
        # links at which moving one mean tensor costs about as much as 1/n of the compute
        base = mean_bytes / (total / float(np.mean(flops)) / max(2, n_nodes)) * float(10 ** rng.uniform(-0.5, 1))
        rates = _rates(rng, n_nodes, base, homogeneous)
        return inst.with_(rates=rates, max_splits=max_splits, **options)
    L = n_layers
    flop = [float(10 ** rng.uniform(8, 10)) for _ in range(L)]
    out = [float(10 ** rng.uniform(4, 6)) for _ in range(L)]
    cons: dict[int, set[int]] = {i: {i + 1} for i in range(L - 1)}
    if kind == "skip":
        for _ in range(skips):
            if L < 3:
                break
            i = int(rng.integers(0, L - 2))
            j = int(rng.integers(i + 2, L))
            cons[i].add(j)
    elif kind != "chain":
        raise InstanceError("kind", f"must be chain or skip, got {kind!r}")
    tensors = tuple((i, tuple(sorted(c)), out[i]) for i, c in sorted(cons.items()))
    total = sum(flop)
    base = float(np.mean(out)) / (total / float(np.mean(flops)) / n_nodes) * float(10 ** rng.uniform(-0.5, 1))
    rates = _rates(rng, n_nodes, base, homogeneous)
    return ThroughputInstance(tuple(f"L{i}" for i in range(L)), tuple(flop), tensors,
                              tuple(f"n{a}" for a in range(n_nodes)), tuple(flops), rates,
                              max_splits=max_splits, name=f"{kind}-{L}x{n_nodes}-s{seed}", **options)


def _rates(rng, n: int, base: float, homogeneous: bool) -> tuple[tuple[float, ...], ...]:
    if homogeneous:
        return tuple(tuple(math.inf if a == b else float(base) for b in range(n)) for a in range(n))
    m = [[math.inf] * n for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            m[a][b] = m[b][a] = float(base * 10 ** rng.uniform(-0.5, 0.5))
    return tuple(tuple(r) for r in m)


__all__ = ["ThroughputInstance", "LINK_MODELS", "TRANSFERS", "TABLE2", "table2_platform", "heterogeneous_platform",
           "generate"]
