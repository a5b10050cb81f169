"""Instances of the ``grouping`` family: balanced grouping of a chain into pipeline stages.

Source: Petkos (2025), *Optimizing Neural Network Deployment Through Partitioning* (seed 003;
digest ``papers/003-resnet-grouping-thesis.md``). A chain of ``n`` *model parts* (thesis Def. 3.1)
is cut into ``k`` contiguous groups, one per identical device (thesis §4.1). Part ``j`` carries

* ``t[j]`` -- execution time in **seconds** (thesis: ms; we keep SI units, digest §5.2 #2),
* ``s[j]`` -- bytes of its output tensor (digest §5.2 #3: bytes for the whole batch),
* ``c[j]`` -- its number of convolutions (digest §5.2 #4: all ``Conv2d`` incl. downsample).

Objectives (``objective``):

``perf``
    thesis §5.2 / digest §1.5: time for ``requests`` (thesis: *n*, digest: *N*) identical requests
    to clear the pipeline, ``Perf = sum_i w_i + (R-1) max_i w_i`` with ``w_i = T_i + s_last(G_i)/B``
    (digest §1.6a closed form of the thesis recurrence).
``bottleneck``
    ``min max_i w_i`` (digest §5.3 P2), or ``min max_i T_i`` when ``transfers`` is false (P1).
``thesis_cost``
    the surrogate that the thesis's exhaustive search minimises, thesis Defs. 4.2, 4.3, 4.5 and
    Alg. 3: ``sum_i Cost(G_i) + delta (max_i T_i / mean_i T_i - 1)`` (digest §1.3, §1.6f).

Corrections and decisions (digest §5.1/§5.2), all explicit fields:

* ``requests`` is separate from the number of parts (the thesis overloads *n*; digest §5.2 #6).
* ``charge_final_transfer`` (digest §5.2 #5): the thesis charges ``D_k`` for the last group when
  ``k > 1`` (default ``True``); set ``False`` to drop the output transfer of the last part.
* ``k1_convention`` (digest §5.1 #7): ``"thesis"`` (default) keeps the thesis's ``Perf = R T_1``
  for a single group (no transfer), ``"uniform"`` uses the same formula for every ``k``.
* ``delta`` is a parameter (thesis hard-codes 0.5; digest §5.2 #7).
* ``at_most_k`` (digest §5.2 #11): the thesis uses exactly ``k`` groups (default); with transfers
  fewer devices can be better, so "at most ``k``" is available. With exactly ``k`` groups,
  ``k > n`` is rejected (each group needs a part; the thesis's Alg. 1 loops forever there,
  digest §5.1 #5); with ``at_most_k`` it is allowed and means ``min(k, n)``.
* Degenerate normalisers of the surrogate: ``S_total = 0`` or ``C_total = 0`` make the
  corresponding term 0 (the thesis divides by zero); ``T_total = 0`` is rejected for
  ``thesis_cost`` because the balance factor ``max/mean`` is undefined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances import limits
from splitopt.instances._dict_checks import check_instance_object, check_lists, check_record, meta_of

OBJECTIVES = ("perf", "bottleneck", "thesis_cost")
K1_CONVENTIONS = ("thesis", "uniform")
#: thesis §5.2: B = 25 x 1024 bytes/ms
THESIS_BANDWIDTH_BYTES_PER_S = 25 * 1024 * 1000.0
#: ops counted as convolutions when building an instance from a DNN graph
CONV_OPS = ("conv", "conv2d", "conv1d", "conv3d", "convolution")


def _check_int(path: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InstanceError(path, f"must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise InstanceError(path, f"must be >= {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class GroupingInstance:
    """One ``grouping`` instance (see the module docstring for the fields' meaning and units).

    Immutable; validated on construction (raises :class:`~splitopt.errors.InstanceError` naming
    the field, e.g. ``parts[3].t_seconds: must be a number, got NaN``).
    """

    family: ClassVar[str] = "grouping"
    #: range limits (:mod:`splitopt.instances.limits`), in the JSON names of :meth:`to_dict`
    LIMITS: ClassVar[dict] = {"parts[].t_seconds": limits.QUANTITY, "parts[].out_bytes": limits.QUANTITY,
                              "parts[].convs": limits.COUNT, "k": limits.POSITIVE_COUNT,
                              "requests": limits.POSITIVE_COUNT, "bandwidth_bytes_per_s": limits.RATE,
                              "weights.delta": limits.QUANTITY}

    names: tuple[str, ...]
    t: tuple[float, ...]
    s: tuple[float, ...]
    c: tuple[int, ...]
    k: int
    objective: str = "perf"
    requests: int = 1
    bandwidth_bytes_per_s: float = THESIS_BANDWIDTH_BYTES_PER_S
    alpha: float = 0.3
    beta: float = 0.4
    gamma: float = 0.3
    delta: float = 0.5
    transfers: bool = True
    charge_final_transfer: bool = True
    k1_convention: str = "thesis"
    at_most_k: bool = False
    name: str = "grouping"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        n = len(self.names)
        if n == 0:
            raise InstanceError("parts", "a chain needs at least one part")
        for fname in ("t", "s", "c"):
            if len(getattr(self, fname)) != n:
                raise InstanceError(fname, f"has {len(getattr(self, fname))} entries for {n} parts")
        seen: set[str] = set()
        for j, nm in enumerate(self.names):
            if not isinstance(nm, str) or not nm:
                raise InstanceError(f"parts[{j}].name", f"must be a non-empty string, got {nm!r}")
            if nm in seen:
                raise InstanceError(f"parts[{j}].name", f"duplicate part name {nm!r}")
            seen.add(nm)
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "t", tuple(check_number(f"parts[{j}].t_seconds", v) for j, v in enumerate(self.t)))
        object.__setattr__(self, "s", tuple(check_number(f"parts[{j}].out_bytes", v) for j, v in enumerate(self.s)))
        object.__setattr__(self, "c", tuple(_check_int(f"parts[{j}].convs", v, 0) for j, v in enumerate(self.c)))
        k = _check_int("k", self.k, 1)
        object.__setattr__(self, "k", k)
        if not isinstance(self.at_most_k, bool):
            raise InstanceError("at_most_k", f"must be true or false, got {self.at_most_k!r}")
        if k > n and not self.at_most_k:
            raise InstanceError("k", f"must be <= the number of parts n = {n} (every group needs at least "
                                     f"one part; use at_most_k for 'at most k groups'), got {k}")
        if self.objective not in OBJECTIVES:
            raise InstanceError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        object.__setattr__(self, "requests", _check_int("requests", self.requests, 1))
        object.__setattr__(self, "bandwidth_bytes_per_s",
                           check_number("bandwidth_bytes_per_s", self.bandwidth_bytes_per_s, minimum=0.0, strict=True))
        for w in ("alpha", "beta", "gamma"):
            v = check_number(f"weights.{w}", getattr(self, w))
            if v > 1.0:
                raise InstanceError(f"weights.{w}", f"must be in [0, 1], got {v!r}")
            object.__setattr__(self, w, v)
        tot = self.alpha + self.beta + self.gamma
        if abs(tot - 1.0) > 1e-6:
            raise InstanceError("weights", f"alpha + beta + gamma must be 1 (thesis Def. 4.3), got {tot!r}")
        object.__setattr__(self, "delta", check_number("weights.delta", self.delta))
        limits.enforce(self)
        for b in ("transfers", "charge_final_transfer"):
            if not isinstance(getattr(self, b), bool):
                raise InstanceError(b, f"must be true or false, got {getattr(self, b)!r}")
        if self.k1_convention not in K1_CONVENTIONS:
            raise InstanceError("k1_convention", f"must be one of {', '.join(K1_CONVENTIONS)}, "
                                                 f"got {self.k1_convention!r}")
        if self.objective == "thesis_cost" and not sum(self.t) > 0:
            raise InstanceError("parts", "thesis_cost needs a positive total execution time "
                                         "(the balance factor max/mean is undefined otherwise)")
        if self.objective == "thesis_cost" and not math.isfinite(len(self.t) / sum(self.t)):
            # normalised times t_j / T overflow for a subnormal total (found by hypothesis)
            raise InstanceError("parts", f"thesis_cost normalises by the total execution time, got "
                                         f"{sum(self.t)!r} s: too small to normalise")
        object.__setattr__(self, "meta", dict(self.meta or {}))

    # ------------------------------------------------------------------ derived data
    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def k_max(self) -> int:
        """The largest usable number of groups, ``min(k, n)``."""
        return min(self.k, self.n)

    @property
    def group_counts(self) -> range:
        """The admissible numbers of groups: ``{k}`` or ``1..min(k, n)``."""
        return range(1, self.k_max + 1) if self.at_most_k else range(self.k, self.k + 1)

    @cached_property
    def t_array(self) -> np.ndarray:
        return np.asarray(self.t, dtype=float)

    @cached_property
    def s_array(self) -> np.ndarray:
        return np.asarray(self.s, dtype=float)

    @cached_property
    def c_array(self) -> np.ndarray:
        return np.asarray(self.c, dtype=np.int64)

    @property
    def T_total(self) -> float:
        return math.fsum(self.t)

    @property
    def S_total(self) -> float:
        return math.fsum(self.s)

    @property
    def C_total(self) -> int:
        return int(sum(self.c))

    def transfer_bytes(self, a: int, b: int, n_groups: int) -> float:
        """Bytes charged for the output of the stage ``parts[a..b]`` (0-based, inclusive) in the
        ``perf`` / ``bottleneck`` objectives: ``s[b]``, except for the last part ``b = n-1``, where
        it is 0 unless ``charge_final_transfer``, and 0 for a single group under the thesis's
        ``k = 1`` convention. Always 0 when ``transfers`` is false."""
        if not self.transfers:
            return 0.0
        if b == self.n - 1:
            if not self.charge_final_transfer:
                return 0.0
            if n_groups == 1 and self.k1_convention == "thesis":
                return 0.0
        return self.s[b]

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "k": self.k,
            "objective": self.objective,
            "requests": self.requests,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "weights": {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "delta": self.delta},
            "transfers": self.transfers,
            "charge_final_transfer": self.charge_final_transfer,
            "k1_convention": self.k1_convention,
            "at_most_k": self.at_most_k,
            "parts": [{"name": nm, "t_seconds": t, "out_bytes": s, "convs": c}
                      for nm, t, s, c in zip(self.names, self.t, self.s, self.c)],
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "GroupingInstance":
        """Inverse of :meth:`to_dict`; errors name the JSON path (``parts[2].t_seconds: ...``)."""
        check_instance_object(d, "grouping", ("name", "k", "objective", "requests", "bandwidth_bytes_per_s",
                                              "weights", "transfers", "charge_final_transfer", "k1_convention",
                                              "at_most_k", "parts", "meta"))
        check_lists(d, ("parts",))
        names, t, s, c = [], [], [], []
        for j, p in enumerate(d["parts"]):
            check_record(f"parts[{j}]", p, ("name", "t_seconds", "out_bytes", "convs"),
                         required=("name", "t_seconds", "out_bytes"))
            names.append(p["name"])
            t.append(check_number(f"parts[{j}].t_seconds", p["t_seconds"]))
            s.append(check_number(f"parts[{j}].out_bytes", p["out_bytes"]))
            c.append(_check_int(f"parts[{j}].convs", p.get("convs", 0), 0))
        if "k" not in d:
            raise InstanceError("k", "missing")
        w = d.get("weights", {})
        if not isinstance(w, Mapping):
            raise InstanceError("weights", f"must be an object, got {w!r}")
        bad = sorted(set(w) - {"alpha", "beta", "gamma", "delta"})
        if bad:
            raise InstanceError(f"weights.{bad[0]}", "unknown field")
        kw = {key: d[key] for key in ("objective", "requests", "bandwidth_bytes_per_s", "transfers",
                                      "charge_final_transfer", "k1_convention", "at_most_k") if key in d}
        kw.update({key: w[key] for key in ("alpha", "beta", "gamma", "delta") if key in w})
        return cls(names=tuple(names), t=tuple(t), s=tuple(s), c=tuple(c), k=d["k"],
                   name=str(d.get("name", "grouping")), meta=dict(meta_of(d)), **kw)

    def to_json(self, indent: int | None = 1) -> str:
        from splitopt.instances.io import dumps

        return dumps(self, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "GroupingInstance":
        from splitopt.instances.io import loads

        inst = loads(text)
        if not isinstance(inst, cls):
            raise InstanceError("family", f"expected a grouping instance, got {type(inst).__name__}")
        return inst

    def with_(self, **changes) -> "GroupingInstance":
        """A validated copy with some fields changed (``inst.with_(k=4, objective="bottleneck")``)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(cls, t: Sequence[float], s: Sequence[float], c: Sequence[int] | None = None, *,
                    k: int, names: Sequence[str] | None = None, **kw) -> "GroupingInstance":
        """Build from plain per-part arrays (``names`` default to ``p1 .. pn``)."""
        n = len(t)
        names = tuple(names) if names is not None else tuple(f"p{j + 1}" for j in range(n))
        c = tuple(c) if c is not None else (0,) * n
        return cls(names=names, t=tuple(t), s=tuple(s), c=c, k=k, **kw)

    @classmethod
    def from_graph(cls, graph, k: int, *, collapse: str = "block", flop_rate: float | None = None,
                   machine: str | None = None, batch: int = 1, floor_flop: float = 0.0,
                   conv_ops: Sequence[str] = CONV_OPS, **kw) -> "GroupingInstance":
        """Build an instance from a chain-like DNN graph.

        ``collapse``: ``"block"`` (:meth:`DNNGraph.collapse_by_block`, one part per architectural
        block, e.g. a residual block), ``"sese"`` (:meth:`DNNGraph.collapse`, single-entry /
        single-exit regions) or ``"none"`` (the graph must already be a chain).

        Times: ``t_j = batch * max(fwd_flop_j, floor_flop) / flop_rate`` when ``flop_rate``
        (FLOP/s) is given, otherwise the measured ``fwd_seconds[machine]`` (times ``batch``).
        ``s_j = batch * out_bytes_j``; for the last part, the bytes of the graph's output layer
        (the collapsed graph reports 0 bytes *leaving* it). ``c_j`` counts the member layers whose
        ``op`` (lower case) is in ``conv_ops`` (digest §5.2 #4: downsample convs included).
        """
        from splitopt.instances.graph import DNNGraph

        if not isinstance(graph, DNNGraph):
            raise InstanceError("graph", f"must be a DNNGraph, got {type(graph).__name__}")
        batch = _check_int("batch", batch, 1)
        floor_flop = check_number("floor_flop", floor_flop)
        if collapse == "block":
            g = graph.collapse_by_block()
        elif collapse == "sese":
            g = graph.collapse()
        elif collapse == "none":
            g = graph
        else:
            raise InstanceError("collapse", f"must be 'block', 'sese' or 'none', got {collapse!r}")
        if not g.is_chain():
            raise InstanceError("graph", f"{graph.name!r} is not a chain after collapse={collapse!r} "
                                         f"({len(g)} parts, {len(g.edges)} edges); try collapse='sese'")
        if flop_rate is None and machine is None:
            raise InstanceError("flop_rate", "give a FLOP rate (FLOP/s) or a machine class with measured seconds")
        if flop_rate is not None:
            flop_rate = limits.RATE.check("flop_rate", flop_rate)
        ops = {o.lower() for o in conv_ops}
        names, t, s, c = [], [], [], []
        part_layers: list[list[str]] = []  # issue 23: the graph layers of every part, for exported plans
        for j, lay in enumerate(g.layers):
            members = lay.meta.get("members") if lay.op == "block" else None
            if not (isinstance(members, list) and members and all(isinstance(m, str) for m in members)):
                members = [lay.name]  # a user's "block" layer without (valid) collapse members
            mem_layers = [graph.layer(m) for m in members]
            if flop_rate is not None:
                t.append(batch * max(lay.fwd_flop, floor_flop) / flop_rate)
            else:
                if machine not in lay.fwd_seconds and any(machine not in m.fwd_seconds for m in mem_layers):
                    raise InstanceError(f"graph.layers[{j}].fwd_seconds",
                                        f"no measured seconds for machine {machine!r} on part {lay.name!r}")
                t.append(batch * lay.fwd_seconds.get(machine, 0.0))
            out = lay.out_bytes if j < len(g) - 1 else mem_layers[-1].out_bytes
            s.append(batch * out)
            c.append(sum(1 for m in mem_layers if m.op.lower() in ops))
            names.append(lay.block or lay.name)
            part_layers.append(members)
        if len(set(names)) != len(names):
            names = [lay.name for lay in g.layers]
        meta = {"source": "graph", "graph": graph.name, "collapse": collapse, "batch": batch,
                "flop_rate": flop_rate, "machine": machine, "floor_flop": floor_flop}
        if isinstance(graph.meta.get("torch"), Mapping):  # a graph from PyTorch: plans name its modules
            meta["torch"] = dict(graph.meta["torch"])
            meta["part_layers"] = dict(zip(names, part_layers))
        meta.update(kw.pop("meta", {}) or {})
        return cls(names=tuple(names), t=tuple(t), s=tuple(s), c=tuple(c), k=k,
                   name=kw.pop("name", f"{graph.name}-k{k}"), meta=meta, **kw)

    @classmethod
    def from_zoo(cls, arch: str, k: int, *, flop_rate: float = 2e11, batch: int = 16,
                 floor_flop: float = 2e6, **kw) -> "GroupingInstance":
        """A zoo architecture (``splitopt.instances.zoo.get(arch)``) at block granularity.

        Defaults follow the digest's synthetic check (§5.4): a batch of 16, 100 GMAC/s
        (``flop_rate`` = 2e11 FLOP/s, 2 FLOP per MAC), a floor of 1e6 MAC (2e6 FLOP) for
        zero-FLOP parts such as the max-pool, and the thesis bandwidth 25 x 1024 B/ms. ResNets give
        n = 11/19/19/36/53 parts (digest §3.2).
        """
        from splitopt.instances import zoo

        graph = zoo.get(arch)
        kw.setdefault("name", f"{arch}-k{k}")
        return cls.from_graph(graph, k, collapse="block", flop_rate=flop_rate, batch=batch,
                              floor_flop=floor_flop, meta={"source": "zoo", "arch": arch}, **kw)


def generate(seed: int, n: int = 8, k: int | None = 3, objective: str | None = "perf", requests: int = 4,
             bandwidth_bytes_per_s: float = 1e8, graph=None, **kw) -> GroupingInstance:
    """A seeded random instance. Identical on every machine for the same arguments (numpy PCG64).

    Without ``graph``: a random chain, ``t ~ U(1, 100) ms``, ``s ~ U(0.1, 10) MB`` (log-uniform),
    ``c`` in ``0..4``. With ``graph`` (a DNN graph, e.g. from the zoo or a PipeDream profile): the
    graph collapsed into a chain of parts (by block labels when that gives a chain, else by SESE
    regions), times from measured seconds when the graph has them, else from FLOP at 1e11 FLOP/s.
    ``k=None`` draws k in ``2..min(8, n)``; ``objective=None`` takes ``OBJECTIVES[seed % 3]``, so a
    set of seeds exercises every objective.
    """
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    if objective is None:
        objective = OBJECTIVES[seed % len(OBJECTIVES)]
    if graph is not None:
        measured = sorted(set.intersection(*(set(l.fwd_seconds) for l in graph.layers)))
        tkw = {"machine": measured[0]} if measured else {"flop_rate": 1e11}
        inst = None
        for collapse in ("block", "sese"):
            try:
                inst = GroupingInstance.from_graph(graph, 1, collapse=collapse, **tkw)
                break
            except InstanceError:
                continue
        if inst is None:  # pragma: no cover - "sese" always gives a chain
            raise InstanceError("graph", f"graph {graph.name!r} cannot be collapsed into a chain")
        parts = len(inst.names)
        if k is None:
            k = int(rng.integers(2, max(2, min(8, parts)) + 1)) if parts >= 2 else 1
        k = min(k, parts)
        return inst.with_(k=k, objective=objective, requests=requests,
                          bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                          name=f"{graph.name}-k{k}-{objective}-s{seed}")
    n = _check_int("n", n, 1)
    t = np.round(rng.uniform(1e-3, 0.1, n), 6)
    s = np.round(10 ** rng.uniform(5, 7, n))
    c = rng.integers(0, 5, n)
    if k is None:
        k = int(rng.integers(1, n + 1))
    return GroupingInstance.from_arrays([float(x) for x in t], [float(x) for x in s], [int(x) for x in c],
                                        k=k, objective=objective, requests=requests,
                                        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                                        name=kw.pop("name", f"grouping-n{n}-k{k}-s{seed}"),
                                        meta={"source": "generate", "seed": seed}, **kw)


__all__ = ["GroupingInstance", "generate", "OBJECTIVES", "THESIS_BANDWIDTH_BYTES_PER_S"]
