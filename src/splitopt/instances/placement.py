"""Instances of the ``placement`` family (issue 22; issue 11 had it inside ``throughput`` behind
``comm_model="device"``): place the operators of a DNN graph on ``k`` identical accelerators and ``l`` CPU cores so that the
largest device load (the pipeline's period) is as small as possible.

Source: Tarnawski, Phanishayee, Devanur, Mahajan, Nina Paravecino, "Efficient Algorithms for Device
Placement of DNN Graph Operators", NeurIPS 2020, §4 (throughput: min max-load) and its public code
msr-fiddle/dnn-partitioning (MIT), whose input format :mod:`splitopt.instances.importers.dnn_partitioning`
reads. Unlike seed 004's ``throughput`` model (:class:`~splitopt.instances.throughput.ThroughputInstance`,
where transfers load links), here transfers load the *accelerators* that send or receive them.
Files written before issue 22 (family ``throughput``, ``"comm_model": "device"``) load as placement
instances (:meth:`PlacementInstance.from_dict` accepts the old field).

Data (SI units; the importer converts the peer's milliseconds to seconds):

* per node (operator or layer): ``cpu_seconds`` and ``acc_seconds`` (time on one CPU core / one
  accelerator), ``supported`` (may run on an accelerator), ``size_bytes`` (accelerator memory it
  needs), ``backward`` (a training graph's backward node), ``colour`` (nodes sharing a colour class
  must be on one device; ``None`` = its own class);
* per tensor: its ``producer``, its ``consumers`` and ``seconds``, the time to move it between an
  accelerator and host memory (one value per producer, as in the peer's format);
* ``n_accelerators`` (k, identical, ``acc_memory_bytes`` each, ``None`` = unlimited), ``n_cpus`` (l).

Cost model (evaluated by :func:`splitopt.models.placement.evaluate`, the single source of
truth): a CPU core's load is the sum of its nodes' ``cpu_seconds`` (no communication: data is in host
memory); an accelerator's load is the sum of its nodes' ``acc_seconds`` plus, for every tensor that
enters it (producer elsewhere, some consumer here) or leaves it (producer here, some consumer
elsewhere), that tensor's ``seconds`` once; communication is not overlapped with compute. A
tensor's time counts as forward or backward load by its producer's kind.

Options, explicit fields:

* ``objective``: ``"max-load"`` (the largest forward + backward load of a device; default) or
  ``"fwd+bwd"`` (the largest forward load plus the largest backward load, the peer's
  ``diffmaxima``);
* ``contiguity``: ``"none"``; ``"convex"`` (each device's forward nodes form a convex set of the
  forward graph: no path leaves the set and re-enters it; the peer's integer program); ``"chain"``
  (moreover the devices can be ordered so that every forward edge goes forward: the device sets are
  differences of a chain of ideals, the model of the peer's dynamic program). ``chain`` implies
  ``convex``; the converse is false (two convex sets can feed each other), so a ``convex`` optimum
  can be below the ``chain`` optimum. Backward nodes are constrained only through colour classes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar, Mapping

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances import limits

OBJECTIVES = ("max-load", "fwd+bwd")
CONTIGUITIES = ("none", "convex", "chain")
_DATA_FIELDS = ("nodes", "cpu_seconds", "acc_seconds", "tensors", "supported", "size_bytes", "backward", "colour")


@dataclass(frozen=True, eq=False)
class PlacementInstance:
    """One ``placement`` instance (see the module docstring)."""

    family: ClassVar[str] = "placement"
    #: range limits (:mod:`splitopt.instances.limits`), in the JSON names of :meth:`to_dict`
    LIMITS: ClassVar[dict] = {"nodes[].cpu_seconds": limits.QUANTITY, "nodes[].acc_seconds": limits.QUANTITY,
                              "nodes[].size_bytes": limits.QUANTITY, "tensors[].seconds": limits.QUANTITY,
                              "acc_memory_bytes": limits.QUANTITY, "n_accelerators": limits.COUNT,
                              "n_cpus": limits.COUNT}

    nodes: tuple[str, ...]
    cpu_seconds: tuple[float, ...]
    acc_seconds: tuple[float, ...]
    tensors: tuple[tuple[int, tuple[int, ...], float], ...]  # (producer, consumers, seconds)
    n_accelerators: int
    n_cpus: int = 1
    acc_memory_bytes: float | None = None
    supported: tuple[bool, ...] | None = None
    size_bytes: tuple[float, ...] | None = None
    backward: tuple[bool, ...] | None = None
    colour: tuple[int | None, ...] | None = None
    objective: str = "max-load"
    contiguity: str = "none"
    name: str = "device"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.nodes)
        if n == 0:
            raise InstanceError("nodes", "needs at least one node")
        seen = set()
        for i, nm in enumerate(self.nodes):
            if not isinstance(nm, str) or not nm or nm in seen:
                raise InstanceError(f"nodes[{i}].name", f"must be a unique non-empty string, got {nm!r}")
            seen.add(nm)
        object.__setattr__(self, "nodes", tuple(self.nodes))
        for key in ("cpu_seconds", "acc_seconds"):
            vals = getattr(self, key)
            if len(vals) != n:
                raise InstanceError(key, f"has {len(vals)} entries for {n} nodes")
            object.__setattr__(self, key, tuple(check_number(f"nodes[{i}].{key}", v) for i, v in enumerate(vals)))
        for key, default in (("supported", True), ("backward", False)):
            vals = getattr(self, key)
            if vals is None:
                vals = (default,) * n
            if len(vals) != n:
                raise InstanceError(key, f"has {len(vals)} entries for {n} nodes")
            for i, v in enumerate(vals):
                if not isinstance(v, (bool, np.bool_)) and v not in (0, 1):
                    raise InstanceError(f"nodes[{i}].{key}", f"must be true or false, got {v!r}")
            object.__setattr__(self, key, tuple(bool(v) for v in vals))
        sizes = self.size_bytes if self.size_bytes is not None else (0.0,) * n
        if len(sizes) != n:
            raise InstanceError("size_bytes", f"has {len(sizes)} entries for {n} nodes")
        object.__setattr__(self, "size_bytes", tuple(check_number(f"nodes[{i}].size_bytes", v)
                                                     for i, v in enumerate(sizes)))
        col = self.colour if self.colour is not None else (None,) * n
        if len(col) != n:
            raise InstanceError("colour", f"has {len(col)} entries for {n} nodes")
        for i, c in enumerate(col):
            if c is not None and (isinstance(c, bool) or not isinstance(c, (int, np.integer))):
                raise InstanceError(f"nodes[{i}].colour", f"must be an integer or null, got {c!r}")
        object.__setattr__(self, "colour", tuple(None if c is None else int(c) for c in col))
        for key in ("n_accelerators", "n_cpus"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise InstanceError(key, f"must be a non-negative integer, got {v!r}")
            object.__setattr__(self, key, int(v))
        if self.n_accelerators + self.n_cpus == 0:
            raise InstanceError("n_accelerators", "there must be at least one device (n_accelerators + n_cpus >= 1)")
        if self.acc_memory_bytes is not None:
            object.__setattr__(self, "acc_memory_bytes", check_number("acc_memory_bytes", self.acc_memory_bytes))
        tens, producers = [], set()
        for t_i, t in enumerate(self.tensors):
            try:
                p, cons, sec = t
            except (TypeError, ValueError):
                raise InstanceError(f"tensors[{t_i}]", f"must be [producer, consumers, seconds], got {t!r}") from None
            if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 0 <= int(p) < n:
                raise InstanceError(f"tensors[{t_i}].producer", f"must be a node index in 0..{n - 1}, got {p!r}")
            p = int(p)
            if p in producers:
                raise InstanceError(f"tensors[{t_i}].producer", f"node {p} already has a tensor (one per producer)")
            producers.add(p)
            try:
                cons = tuple(int(c) for c in cons)
            except (TypeError, ValueError):
                raise InstanceError(f"tensors[{t_i}].consumers", f"must be a list of node indices, got {cons!r}") from None
            if not cons or any(not 0 <= c < n or c == p for c in cons) or len(set(cons)) != len(cons):
                raise InstanceError(f"tensors[{t_i}].consumers",
                                    f"must be distinct node indices other than the producer, got {list(cons)}")
            tens.append((p, cons, check_number(f"tensors[{t_i}].seconds", sec)))
        object.__setattr__(self, "tensors", tuple(tens))
        if self.objective not in OBJECTIVES:
            raise InstanceError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if self.contiguity not in CONTIGUITIES:
            raise InstanceError("contiguity", f"must be one of {', '.join(CONTIGUITIES)}, got {self.contiguity!r}")
        if self.n_cpus == 0:
            for i, s in enumerate(self.supported):
                if not s:
                    raise InstanceError(f"nodes[{i}].supported", "is false but there is no CPU core (n_cpus = 0)")
        order = self._topological()
        if order is None:
            raise InstanceError("tensors", "the graph has a cycle (it must be a DAG)")
        if self.meta is not None and not isinstance(self.meta, Mapping):
            raise InstanceError("meta", f"must be an object (a mapping), got {self.meta!r}"[:200])
        object.__setattr__(self, "meta", dict(self.meta or {}))
        limits.enforce(self)

    # ------------------------------------------------------------------ derived data
    def _topological(self) -> list[int] | None:
        n = len(self.nodes)
        indeg = [0] * n
        succ: list[list[int]] = [[] for _ in range(n)]
        for p, cons, _s in self.tensors:
            for c in cons:
                succ[p].append(c)
                indeg[c] += 1
        stack = [i for i in range(n) if indeg[i] == 0][::-1]
        out = []
        while stack:
            u = stack.pop()
            out.append(u)
            for v in reversed(succ[u]):
                indeg[v] -= 1
                if indeg[v] == 0:
                    stack.append(v)
        return out if len(out) == n else None

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_devices(self) -> int:
        return self.n_accelerators + self.n_cpus

    @property
    def devices(self) -> tuple[str, ...]:
        """Device names: accelerators ``acc0..`` (indices ``0..k-1``), then CPU cores ``cpu0..``."""
        return tuple(f"acc{j}" for j in range(self.n_accelerators)) + tuple(f"cpu{j}" for j in range(self.n_cpus))

    def is_cpu(self, d: int) -> bool:
        return d >= self.n_accelerators

    @cached_property
    def order(self) -> tuple[int, ...]:
        """A topological order of all nodes."""
        return tuple(self._topological())

    @cached_property
    def edges(self) -> tuple[tuple[int, int], ...]:
        return tuple((p, c) for p, cons, _s in self.tensors for c in cons)

    @cached_property
    def forward_edges(self) -> tuple[tuple[int, int], ...]:
        """Edges between two forward nodes (the graph contiguity is about)."""
        b = self.backward
        return tuple((u, v) for u, v in self.edges if not b[u] and not b[v])

    @cached_property
    def colour_classes(self) -> tuple[tuple[int, ...], ...]:
        """Groups of nodes that must share a device (singletons for nodes without a colour)."""
        groups: dict[Any, list[int]] = {}
        for i, c in enumerate(self.colour):
            groups.setdefault(("c", c) if c is not None else ("n", i), []).append(i)
        return tuple(tuple(g) for g in groups.values())

    @property
    def training(self) -> bool:
        return any(self.backward)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "name": self.name,
            "n_accelerators": self.n_accelerators, "n_cpus": self.n_cpus, "acc_memory_bytes": self.acc_memory_bytes,
            "objective": self.objective, "contiguity": self.contiguity,
            "nodes": [{"name": nm, "cpu_seconds": self.cpu_seconds[i], "acc_seconds": self.acc_seconds[i],
                       "supported": self.supported[i], "size_bytes": self.size_bytes[i],
                       "backward": self.backward[i], "colour": self.colour[i]} for i, nm in enumerate(self.nodes)],
            "tensors": [{"producer": p, "consumers": list(c), "seconds": s} for p, c, s in self.tensors],
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "PlacementInstance":
        if not isinstance(d, Mapping):
            raise InstanceError("", f"a placement instance must be an object, got {type(d).__name__}")
        known = {"comm_model", "name", "n_accelerators", "n_cpus", "acc_memory_bytes", "objective", "contiguity",
                 "nodes", "tensors", "meta"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InstanceError(unknown[0], "unknown field")
        if "comm_model" in d and d["comm_model"] != "device":  # files written before issue 22
            raise InstanceError("comm_model", f"must be 'device' (or absent), got {d.get('comm_model')!r}")
        for key in ("nodes", "tensors"):
            if not isinstance(d.get(key), list):
                raise InstanceError(key, f"must be a list, got {d.get(key)!r}"[:200])
        for key in ("n_accelerators",):
            if key not in d:
                raise InstanceError(key, "missing")
        cols: dict[str, list] = {k: [] for k in ("name", "cpu_seconds", "acc_seconds", "supported", "size_bytes",
                                                 "backward", "colour")}
        defaults = {"supported": True, "size_bytes": 0.0, "backward": False, "colour": None}
        for i, nd in enumerate(d["nodes"]):
            if not isinstance(nd, Mapping):
                raise InstanceError(f"nodes[{i}]", "must be an object")
            bad = sorted(set(nd) - set(cols))
            if bad:
                raise InstanceError(f"nodes[{i}].{bad[0]}", "unknown field")
            for k in cols:
                if k not in nd and k not in defaults:
                    raise InstanceError(f"nodes[{i}].{k}", "missing")
                cols[k].append(nd.get(k, defaults.get(k)))
        tensors = []
        for t_i, t in enumerate(d["tensors"]):
            if not isinstance(t, Mapping) or not {"producer", "consumers", "seconds"} <= set(t):
                raise InstanceError(f"tensors[{t_i}]", "must be an object with producer, consumers and seconds")
            if not isinstance(t["consumers"], list):
                raise InstanceError(f"tensors[{t_i}].consumers", f"must be a list, got {t['consumers']!r}")
            tensors.append((t["producer"], t["consumers"], t["seconds"]))
        return cls(tuple(cols["name"]), tuple(cols["cpu_seconds"]), tuple(cols["acc_seconds"]), tuple(tensors),
                   n_accelerators=d["n_accelerators"], n_cpus=d.get("n_cpus", 1),
                   acc_memory_bytes=d.get("acc_memory_bytes"), supported=tuple(cols["supported"]),
                   size_bytes=tuple(cols["size_bytes"]), backward=tuple(cols["backward"]),
                   colour=tuple(cols["colour"]), objective=d.get("objective", "max-load"),
                   contiguity=d.get("contiguity", "none"), name=str(d.get("name", "device")), meta=d.get("meta", {}))

    def with_(self, **changes) -> "PlacementInstance":
        """A copy with ``changes``. Where only the contiguity or the objective changes (the
        algorithms' chain and non-contiguous copies), the validated data is shared instead of
        checked again: a copy of a 10,026-node graph took 0.6-1 s of a 2 s limit (2026-11-29)."""
        if changes and set(changes) <= {"contiguity", "objective"}:
            for key, allowed in (("contiguity", CONTIGUITIES), ("objective", OBJECTIVES)):
                if key in changes and changes[key] not in allowed:
                    raise InstanceError(key, f"must be one of {', '.join(allowed)}, got {changes[key]!r}")
            new = copy.copy(self)  # the cached properties (order, edges, classes) are the data's
            for key, v in changes.items():
                object.__setattr__(new, key, v)
            object.__setattr__(new, "meta", dict(self.meta))
            return new
        return replace(self, **changes)

    def same_data(self, other: "PlacementInstance") -> bool:
        """Whether ``other`` is ``self`` or a :meth:`with_` copy of it that changed only the
        contiguity or the objective (the same node and tensor tuples, not merely equal ones)."""
        return other is self or (isinstance(other, PlacementInstance)
                                 and all(getattr(self, f) is getattr(other, f) for f in _DATA_FIELDS)
                                 and (self.n_accelerators, self.n_cpus, self.acc_memory_bytes)
                                 == (other.n_accelerators, other.n_cpus, other.acc_memory_bytes))

    def __eq__(self, other) -> bool:
        return isinstance(other, PlacementInstance) and self.to_dict() == other.to_dict()

    __hash__ = None  # mutable-looking fields (meta): not hashable, like the other instances


# ---------------------------------------------------------------------- seeded generator
def generate(seed: int, n_nodes: int = 7, n_accelerators: int = 2, n_cpus: int = 1, *, skips: int = 2,
             training: bool = False, memory: bool | None = None, colours: int | None = None,
             unsupported: int | None = None, objective: str = "max-load", contiguity: str = "none",
             name: str | None = None) -> PlacementInstance:
    """A seeded random device-model instance: a chain of ``n_nodes`` forward nodes plus ``skips``
    skip edges; accelerator times log-uniform over 1..10 ms, CPU times 2-20x slower, tensor times
    log-uniform over 0.1..3 ms; ``memory`` (drawn when ``None``) gives accelerators about 40-80 % of
    the total size; ``colours`` random co-location pairs (drawn when ``None``); ``unsupported``
    nodes that only a CPU may run (drawn when ``None``). ``training`` mirrors the forward graph into
    backward nodes (reversed edges, each forward node feeding its own backward node, the two in one
    colour class), as the peer's training graphs are built."""
    rng = np.random.default_rng([seed, 11011])
    n = int(n_nodes)
    if n < 1:
        raise InstanceError("n_nodes", f"must be >= 1, got {n_nodes!r}")
    acc = [float(10 ** rng.uniform(-3, -2)) for _ in range(n)]
    cpu = [a * float(rng.uniform(2, 20)) for a in acc]
    size = [float(rng.integers(1, 100)) * 1e6 for _ in range(n)]
    cons: dict[int, set[int]] = {i: {i + 1} for i in range(n - 1)}
    for _ in range(skips if n >= 3 else 0):
        i = int(rng.integers(0, n - 2))
        cons[i].add(int(rng.integers(i + 2, n)))
    if unsupported is None:
        unsupported = int(rng.integers(0, 2)) if n_cpus > 0 else 0
    sup = [True] * n
    for i in rng.choice(n, size=min(unsupported, n), replace=False):
        sup[int(i)] = False
    colour: list[int | None] = [None] * n
    if colours is None:
        colours = int(rng.integers(0, 2))
    for c in range(colours):
        i, j = (int(v) for v in rng.choice(n, size=2, replace=False)) if n >= 2 else (0, 0)
        cid = 1000 + c
        for v in (i, j):
            old = colour[v]
            if old is not None:  # merge classes
                colour = [cid if x == old else x for x in colour]
            colour[v] = cid
    tensors = [(i, tuple(sorted(c)), float(10 ** rng.uniform(-4, -2.5))) for i, c in sorted(cons.items())]
    names = [f"v{i}" for i in range(n)]
    backward = [False] * n
    if training:
        for i in range(n):
            if colour[i] is None:
                colour[i] = i
        base = n
        names += [f"v{i}_grad" for i in range(n)]
        acc += [a * float(rng.uniform(1, 2)) for a in acc[:n]]
        cpu += [c * float(rng.uniform(1, 2)) for c in cpu[:n]]
        size += [0.0] * n
        sup += sup[:n]
        colour += colour[:n]
        backward += [True] * n
        bcons: dict[int, set[int]] = {}
        for p, cs, _s in tensors:
            for c in cs:
                bcons.setdefault(base + c, set()).add(base + p)
        fwd_tensors = []
        for p, cs, s in tensors:
            fwd_tensors.append((p, tuple(sorted(set(cs) | {base + p})), s))
        # the last forward node feeds its own backward node (the loss)
        if not any(p == n - 1 for p, _c, _s in fwd_tensors):
            fwd_tensors.append((n - 1, (base + n - 1,), float(10 ** rng.uniform(-4, -2.5))))
        tensors = fwd_tensors + [(p, tuple(sorted(c)), float(10 ** rng.uniform(-4, -2.5)))
                                 for p, c in sorted(bcons.items())]
    if memory is None:
        memory = bool(rng.random() < 0.5)
    mem = float(sum(size) * rng.uniform(0.4, 0.8)) if memory else None
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tuple(tensors), n_accelerators=n_accelerators,
                          n_cpus=n_cpus, acc_memory_bytes=mem, supported=tuple(sup), size_bytes=tuple(size),
                          backward=tuple(backward), colour=tuple(colour), objective=objective, contiguity=contiguity,
                          name=name or f"device-{n}x{n_accelerators}+{n_cpus}-s{seed}")


def generate_mixed(seed: int) -> PlacementInstance:
    """A small :func:`generate` instance whose shape is drawn from the seed as well (4-7 forward
    nodes, 1-3 accelerators, 0-1 CPU core, inference or training, both objectives, every
    contiguity): the members of the ``device-random`` validation set, small enough for
    ``bruteforce``."""
    rng = np.random.default_rng([seed, 22022])
    training = bool(rng.random() < 0.3)
    k = int(rng.integers(1, 4))
    l_ = int(rng.integers(0, 2)) if k > 1 else 1
    # without a CPU core nothing may be unsupported or memory-bound (always feasible: one accelerator
    # takes all); with one, the CPU core can take everything
    extra = {} if l_ else {"unsupported": 0, "memory": False}
    return generate(seed, n_nodes=int(rng.integers(4, 8 if not training else 6)), n_accelerators=k, n_cpus=l_,
                    training=training, objective=str(rng.choice(OBJECTIVES)),
                    contiguity=str(rng.choice(CONTIGUITIES)), name=f"device-mixed-s{seed}", **extra)


DeviceInstance = PlacementInstance  # the name before issue 22

__all__ = ["PlacementInstance", "DeviceInstance", "OBJECTIVES", "CONTIGUITIES", "generate", "generate_mixed"]
