"""Instances of the ``pipeline`` family: pipelined split learning over a multi-hop edge network.

Seed 001 (Wei, Lin, Li, Li, Chen, "Pipelining Split Learning in Multi-hop Edge Networks",
arXiv:2505.04368), as read in the digest ``papers/001-pipelined-split-learning.md`` (cited as
"digest §x"). A chain of ``I`` layers is cut into submodels: submodel 1 (a prefix of at least one
layer) runs on each of ``M`` clients, the rest as contiguous blocks on edge servers chosen among
``N``. A mini-batch of ``B`` samples is pipelined in micro-batches of ``b`` samples; the round
latency (Eq. 14) is ``L = T_f + ceil((B - b) / b) * T_i`` (evaluated by
:func:`splitopt.models.pipeline.evaluate`).

Data (SI units; digest §9 for the formulas):

* per layer (per sample, **not** cumulative: the paper's ``w_i``, ``rho_i``, ``beta_i``,
  ``sigma_i`` are prefix sums of these): ``fwd_flop`` (FP FLOP), ``bwd_flop`` (BP FLOP),
  ``act_bytes`` (its output activation, the paper's ``varphi_i``: what crosses a cut after layer
  ``i`` forward), ``grad_bytes`` (the gradient of that output, what crosses the same cut backward:
  the paper's ``phi_(i+1)``, digest §1.8), ``param_bytes`` (``beta``), ``opt_bytes`` (optimizer
  state, ``sigma``) and ``sample_mem_bytes`` (working memory per sample, the paper's
  ``varphi + phi`` inside Eq. 11);
* per client and per server: an effective rate in FLOP/s (``client_flops``, ``server_flops``: one
  number for the paper's ``f_n / kappa_n``, digest §7.1 #1) and a memory in bytes (``None`` =
  unlimited);
* ``rates``: an ``(M + N) x (M + N)`` matrix of link rates in **bytes/s**, clients first, then
  servers (diagonal ignored; 0 = no link). :func:`shannon_rates` computes it from the raw radio
  parameters of Table II (``W log2(1 + p d^-gamma / (N0 W))`` bit/s: log base 2 and noise ``N0 W``,
  the corrections of digest §7.1 #2); the raw parameters are kept in ``radio`` (provenance only:
  ``rates`` is authoritative).

Semantics are explicit fields, each defaulting to the corrected reading (issue 9):

* ``placement``: ``"distinct"`` (each server hosts at most one contiguous block; default),
  ``"revisit"`` (the path-graph semantics of Algorithm 1: per-submodel stages and memory, a server
  may be reused by non-consecutive submodels), ``"aggregate"`` (the paper's P4: per-node sums of
  compute, memory and per-link sums of traffic, C8/C9/C11/C13/C15). In every semantics consecutive
  submodels sit on different nodes (the paper's graph, Eq. 21: ``n != n'``).
* ``bottleneck``: ``"stages"`` (Eq. 13 with submodel ``K`` included: client FP, client BP, every
  server FP, server BP, FP link and BP link are separate stages; default) or ``"resource"`` (1F1B:
  a node's FP and BP share its GPU, a link's two directions share it, a client's FP and BP are one
  stage; digest §7.1 #8).
* ``memory``: ``"paper"`` (Eq. 11: ``b * (sample + param + opt bytes)`` of the block) or
  ``"resident"`` (parameters and optimizer state once, ``b * sample bytes`` times the micro-batches
  in flight: ``min(ceil(B / b), S - s)`` at chain position ``s`` of ``S`` submodels, the 1F1B bound
  of digest §7.1 #9).
* ``client_split``: ``"balanced"`` (samples dealt round robin, client ``m`` gets
  ``ceil((b - m) / M)``: monotone in ``b``; default) or ``"paper"`` (Eq. 1: ``floor(b / M)`` each,
  the remainder on the last client). A client with no sample is idle.
* ``topology`` (Fig. 8, formalised here, digest §7.1 #3): ``"mesh"`` (every server pair, every
  client to every server), ``"line"`` (a *unidirectional* line ``s0 -> s1 -> ...``: forward
  transfers only to the next server, the gradient returning on the same link), ``"star"`` (hub
  ``s0``), ``"tree"`` (binary tree rooted at ``s0``, parent of ``s_a`` is ``s_(a-1)//2``). Outside
  the mesh, clients reach only the access server ``s0`` (digest §1.1, §7.1 #6). A pair is linked
  iff the topology allows it and both directions have a positive rate.
* ``relay``: ``"forbidden"`` (consecutive submodels on linked nodes only; default) or
  ``"store_forward"`` (a transfer follows the fewest-hop route; every hop adds to ``T_f`` and is its
  own bottleneck stage; relayed hops after the access server carry the whole micro-batch).
* ``bwd_threshold_client`` / ``bwd_threshold_server`` (Eq. 7, Table II: 32 and 32): BP time is
  ``t1 + max(b_local - threshold, 0) * BP FLOP / rate``.
* ``t0_*`` / ``t1_*``: fixed FP / BP overheads per stage and micro-batch (Table II: 1 ms).
* ``batch`` (``B``), ``micro_batches`` (allowed ``b``; ``None`` = ``1..B``), ``max_submodels``
  (the paper's ``K``, client submodel included; ``None`` = no cap; the client always holds at
  least one layer and at least one server is used, digest §7.1 #5).

# interface

``PipelineInstance`` (frozen; ``to_dict``/``from_dict``, ``io.save``/``io.load``), ``with_``;
derived: ``n_layers``, ``n_clients``, ``n_servers``, ``node_names`` (clients then servers),
``server_node(j) = M + j``, prefix sums ``prefix(field)`` (numpy, length ``I + 1``),
``allowed_b()``, ``linked(u, v)`` and ``route(u, v)`` (node indices; the hops of a transfer or
``None``), ``local_batches(b)``. Constructor: :meth:`PipelineInstance.from_profile`. Seeded
generators (``generate``, Table II platforms, the VGG-16 and TinyLlama profiles):
:mod:`splitopt.instances.pipeline_generate`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances import limits
from splitopt.instances._dict_checks import check_instance_object, check_lists, check_record, meta_of

PLACEMENTS = ("distinct", "revisit", "aggregate")
BOTTLENECKS = ("stages", "resource")
MEMORIES = ("paper", "resident")
CLIENT_SPLITS = ("balanced", "paper")
TOPOLOGIES = ("mesh", "line", "star", "tree")
RELAYS = ("forbidden", "store_forward")
LAYER_FIELDS = ("fwd_flop", "bwd_flop", "act_bytes", "grad_bytes", "param_bytes", "opt_bytes", "sample_mem_bytes")
#: Table II of seed 001: noise spectral density (dBm/Hz) and path-loss exponent
NOISE_DBM_PER_HZ = -174.0
GAMMA = 3.5


def _check_int(path: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InstanceError(path, f"must be an integer, got {value!r}")
    if value < minimum:
        raise InstanceError(path, f"must be >= {minimum}, got {value!r}")
    return int(value)


def _choice(path: str, value, options: Sequence[str]) -> str:
    if value not in options:
        raise InstanceError(path, f"must be one of {', '.join(options)}, got {value!r}")
    return value


def _names(path: str, names) -> tuple[str, ...]:
    seen = set()
    for i, nm in enumerate(names):
        if not isinstance(nm, str) or not nm or nm in seen:
            raise InstanceError(f"{path}[{i}]", f"must be a unique non-empty string, got {nm!r}")
        seen.add(nm)
    return tuple(names)


@dataclass(frozen=True)
class PipelineInstance:
    """One ``pipeline`` instance (see the module docstring). Immutable, validated on construction."""

    family: ClassVar[str] = "pipeline"
    #: range limits (:mod:`splitopt.instances.limits`), in the JSON names of :meth:`to_dict`
    LIMITS: ClassVar[dict] = {
        **{f"layers[].{f}": limits.QUANTITY for f in ("fwd_flop", "bwd_flop", "act_bytes", "grad_bytes",
                                                      "param_bytes", "opt_bytes", "sample_mem_bytes")},
        "clients[].flops": limits.RATE, "servers[].flops": limits.RATE,
        "clients[].memory_bytes": limits.QUANTITY, "servers[].memory_bytes": limits.QUANTITY,
        "rates_bytes_per_s[][]": limits.LINK_RATE, "batch": limits.BATCH,
        "micro_batches[]": limits.BATCH, "max_submodels": limits.COUNT,
        "bwd_threshold_client": limits.COUNT, "bwd_threshold_server": limits.COUNT,
        **{f: limits.QUANTITY for f in ("t0_client_s", "t1_client_s", "t0_server_s", "t1_server_s")},
    }

    layers: tuple[str, ...]
    fwd_flop: tuple[float, ...]
    bwd_flop: tuple[float, ...]
    act_bytes: tuple[float, ...]
    grad_bytes: tuple[float, ...]
    param_bytes: tuple[float, ...]
    opt_bytes: tuple[float, ...]
    sample_mem_bytes: tuple[float, ...]
    clients: tuple[str, ...]
    client_flops: tuple[float, ...]
    client_memory_bytes: tuple[float | None, ...]
    servers: tuple[str, ...]
    server_flops: tuple[float, ...]
    server_memory_bytes: tuple[float | None, ...]
    rates: tuple[tuple[float, ...], ...]
    batch: int = 512
    micro_batches: tuple[int, ...] | None = None
    max_submodels: int | None = None
    placement: str = "distinct"
    bottleneck: str = "stages"
    memory: str = "paper"
    client_split: str = "balanced"
    topology: str = "mesh"
    relay: str = "forbidden"
    bwd_threshold_client: int = 32
    bwd_threshold_server: int = 32
    t0_client_s: float = 1e-3
    t1_client_s: float = 1e-3
    t0_server_s: float = 1e-3
    t1_server_s: float = 1e-3
    radio: Mapping[str, Any] | None = None
    name: str = "pipeline"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        s = object.__setattr__
        I = len(self.layers)
        if I < 2:
            raise InstanceError("layers", f"needs at least 2 layers (one on the clients, one on a server), got {I}")
        s(self, "layers", _names("layers", self.layers))
        for f in LAYER_FIELDS:
            vals = getattr(self, f)
            if vals is None or len(vals) != I:
                raise InstanceError(f, f"has {0 if vals is None else len(vals)} entries for {I} layers")
            s(self, f, tuple(check_number(f"layers[{i}].{f}", v) for i, v in enumerate(vals)))
        M, N = len(self.clients), len(self.servers)
        if M < 1:
            raise InstanceError("clients", "needs at least one client")
        if N < 1:
            raise InstanceError("servers", "needs at least one server")
        s(self, "clients", _names("clients", self.clients))
        s(self, "servers", _names("servers", self.servers))
        if set(self.clients) & set(self.servers):
            raise InstanceError("servers", f"share a name with a client: {sorted(set(self.clients) & set(self.servers))[0]!r}")
        for what, n in (("client", M), ("server", N)):
            fl, mem = getattr(self, f"{what}_flops"), getattr(self, f"{what}_memory_bytes")
            if len(fl) != n:
                raise InstanceError(f"{what}_flops", f"has {len(fl)} entries for {n} {what}s")
            s(self, f"{what}_flops", tuple(check_number(f"{what}s[{a}].flops", v, strict=True)
                                          for a, v in enumerate(fl)))
            if mem is None:
                mem = (None,) * n
            if len(mem) != n:
                raise InstanceError(f"{what}_memory_bytes", f"has {len(mem)} entries for {n} {what}s")
            s(self, f"{what}_memory_bytes", tuple(check_number(f"{what}s[{a}].memory_bytes", v, allow_none=True)
                                                  for a, v in enumerate(mem)))
        V = M + N
        if len(self.rates) != V or any(len(r) != V for r in self.rates):
            raise InstanceError("rates", f"must be a {V} x {V} matrix of bytes/s (clients first, then servers)")
        s(self, "rates", tuple(tuple(0.0 if u == v else check_number(f"rates[{u}][{v}]", x)
                                     for v, x in enumerate(row)) for u, row in enumerate(self.rates)))
        s(self, "batch", _check_int("batch", self.batch, 1))
        if self.micro_batches is not None:
            mb = [_check_int(f"micro_batches[{j}]", v, 1) for j, v in enumerate(self.micro_batches)]
            if not mb:
                raise InstanceError("micro_batches", "must list at least one micro-batch size (or be null for 1..B)")
            for j, v in enumerate(mb):
                if v > self.batch:
                    raise InstanceError(f"micro_batches[{j}]", f"must be <= batch = {self.batch}, got {v}")
            s(self, "micro_batches", tuple(sorted(set(mb))))
        if self.max_submodels is not None:
            s(self, "max_submodels", _check_int("max_submodels", self.max_submodels, 2))
        _choice("placement", self.placement, PLACEMENTS)
        _choice("bottleneck", self.bottleneck, BOTTLENECKS)
        _choice("memory", self.memory, MEMORIES)
        _choice("client_split", self.client_split, CLIENT_SPLITS)
        _choice("topology", self.topology, TOPOLOGIES)
        _choice("relay", self.relay, RELAYS)
        s(self, "bwd_threshold_client", _check_int("bwd_threshold_client", self.bwd_threshold_client, 0))
        s(self, "bwd_threshold_server", _check_int("bwd_threshold_server", self.bwd_threshold_server, 0))
        for f in ("t0_client_s", "t1_client_s", "t0_server_s", "t1_server_s"):
            s(self, f, check_number(f, getattr(self, f)))
        if self.radio is not None and not isinstance(self.radio, Mapping):
            raise InstanceError("radio", f"must be an object or null, got {self.radio!r}"[:200])
        if not isinstance(self.name, str):
            raise InstanceError("name", f"must be a string, got {self.name!r}")
        s(self, "radio", None if self.radio is None else dict(self.radio))
        s(self, "meta", dict(self.meta or {}))
        limits.enforce(self)
        # derived tables (not dataclass fields)
        s(self, "_prefix", {f: np.concatenate(([0.0], np.cumsum(np.array(getattr(self, f), dtype=float))))
                            for f in LAYER_FIELDS})
        s(self, "_routes", {})

    # ------------------------------------------------------------------ sizes and names
    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def n_clients(self) -> int:
        return len(self.clients)

    @property
    def n_servers(self) -> int:
        return len(self.servers)

    @property
    def node_names(self) -> tuple[str, ...]:
        """Clients then servers: the row/column order of ``rates``."""
        return self.clients + self.servers

    def server_node(self, j: int) -> int:
        """Node index (row of ``rates``) of server ``j``."""
        return self.n_clients + j

    def prefix(self, f: str) -> np.ndarray:
        """Prefix sums of a per-layer field: ``prefix(f)[i]`` = sum over layers ``0..i-1``."""
        return self._prefix[f]

    def block_sum(self, f: str, lo: int, hi: int) -> float:
        """Sum of per-layer field ``f`` over layers ``lo..hi-1``."""
        p = self._prefix[f]
        return float(p[hi] - p[lo])

    def allowed_b(self) -> tuple[int, ...]:
        return self.micro_batches if self.micro_batches is not None else tuple(range(1, self.batch + 1))

    def local_batches(self, b: int) -> tuple[int, ...]:
        """Samples of a micro-batch of ``b`` on each client (``client_split``)."""
        M = self.n_clients
        if self.client_split == "balanced":
            return tuple(max(0, -(-(b - m) // M)) for m in range(M))
        q = b // M
        return tuple([q] * (M - 1) + [b - (M - 1) * q])

    # ------------------------------------------------------------------ topology
    def topology_allows(self, u: int, v: int) -> bool:
        """Whether the topology has a direct forward link ``u -> v`` (node indices; the gradient
        returns on the same link). Clients only send; they never relay."""
        M = self.n_clients
        if u == v or v < M:
            return False
        b = v - M
        if u < M:
            return self.topology == "mesh" or b == 0
        a = u - M
        if self.topology == "mesh":
            return True
        if self.topology == "line":
            return b == a + 1
        if self.topology == "star":
            return a == 0 or b == 0
        return (a > 0 and (a - 1) // 2 == b) or (b > 0 and (b - 1) // 2 == a)

    def linked(self, u: int, v: int) -> bool:
        """A direct transfer ``u -> v`` is possible: the topology allows it and both directions of
        the link have a positive rate (activation forward, gradient back)."""
        return self.topology_allows(u, v) and self.rates[u][v] > 0 and self.rates[v][u] > 0

    def route(self, u: int, v: int) -> tuple[tuple[int, int], ...] | None:
        """Hops ``((u, x), (x, y), ..., (z, v))`` of a transfer ``u -> v``: the direct link, or with
        ``relay="store_forward"`` the fewest-hop route (ties: smallest node indices first);
        ``None`` when there is none."""
        key = (u, v)
        if key in self._routes:
            return self._routes[key]
        if self.linked(u, v):
            r: tuple | None = ((u, v),)
        elif self.relay == "forbidden":
            r = None
        else:
            V = self.n_clients + self.n_servers
            prev = {u: None}
            dq = deque([u])
            while dq:
                x = dq.popleft()
                if x == v:
                    break
                for y in range(self.n_clients, V):
                    if y not in prev and self.linked(x, y):
                        prev[y] = x
                        dq.append(y)
            if v not in prev:
                r = None
            else:
                hops, y = [], v
                while prev[y] is not None:
                    hops.append((prev[y], y))
                    y = prev[y]
                r = tuple(reversed(hops))
        self._routes[key] = r
        return r

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "name": self.name,
            "layers": [{"name": nm, **{f: getattr(self, f)[i] for f in LAYER_FIELDS}}
                       for i, nm in enumerate(self.layers)],
            "clients": [{"name": nm, "flops": f, "memory_bytes": m}
                        for nm, f, m in zip(self.clients, self.client_flops, self.client_memory_bytes)],
            "servers": [{"name": nm, "flops": f, "memory_bytes": m}
                        for nm, f, m in zip(self.servers, self.server_flops, self.server_memory_bytes)],
            "rates_bytes_per_s": [list(r) for r in self.rates],
        }
        for f in _SCALAR_FIELDS:
            v = getattr(self, f)
            d[f] = list(v) if isinstance(v, tuple) else v
        if self.radio is not None:
            d["radio"] = dict(self.radio)
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "PipelineInstance":
        """Inverse of :meth:`to_dict`; errors name the JSON path (``layers[3].act_bytes: ...``)."""
        check_instance_object(d, "pipeline", ("name", "layers", "clients", "servers", "rates_bytes_per_s", "radio",
                                              "meta", *_SCALAR_FIELDS))
        check_lists(d, ("layers", "clients", "servers", "rates_bytes_per_s"))
        cols: dict[str, list] = {f: [] for f in ("name", *LAYER_FIELDS)}
        for i, lay in enumerate(d["layers"]):
            check_record(f"layers[{i}]", lay, cols)  # missing fields below, in order with the values
            for f in cols:
                if f not in lay:
                    if f in ("opt_bytes",):
                        cols[f].append(0.0)
                        continue
                    raise InstanceError(f"layers[{i}].{f}", "missing")
                cols[f].append(lay[f] if f == "name" else check_number(f"layers[{i}].{f}", lay[f]))
        nodes = {}
        for what in ("clients", "servers"):
            names, fl, mem = [], [], []
            for a, nd in enumerate(d[what]):
                if not isinstance(nd, Mapping) or "name" not in nd or "flops" not in nd:
                    raise InstanceError(f"{what}[{a}]", "must be an object with name, flops and memory_bytes")
                bad = sorted(set(nd) - {"name", "flops", "memory_bytes"})
                if bad:
                    raise InstanceError(f"{what}[{a}].{bad[0]}", "unknown field")
                names.append(nd["name"])
                fl.append(check_number(f"{what}[{a}].flops", nd["flops"], strict=True))
                mem.append(check_number(f"{what}[{a}].memory_bytes", nd.get("memory_bytes"), allow_none=True))
            nodes[what] = (tuple(names), tuple(fl), tuple(mem))
        rates = []
        for u, row in enumerate(d["rates_bytes_per_s"]):
            if not isinstance(row, list):
                raise InstanceError(f"rates_bytes_per_s[{u}]", "must be a list")
            rates.append(tuple(check_number(f"rates_bytes_per_s[{u}][{v}]", x) for v, x in enumerate(row)))
        kw = {f: d[f] for f in _SCALAR_FIELDS if f in d}
        if kw.get("micro_batches") is not None:
            if not isinstance(kw["micro_batches"], list):
                raise InstanceError("micro_batches", f"must be a list of integers or null, got {kw['micro_batches']!r}")
            kw["micro_batches"] = tuple(kw["micro_batches"])
        meta = meta_of(d)
        return cls(layers=tuple(cols["name"]), **{f: tuple(cols[f]) for f in LAYER_FIELDS},
                   clients=nodes["clients"][0], client_flops=nodes["clients"][1],
                   client_memory_bytes=nodes["clients"][2], servers=nodes["servers"][0],
                   server_flops=nodes["servers"][1], server_memory_bytes=nodes["servers"][2],
                   rates=tuple(rates), radio=d.get("radio"), name=str(d.get("name", "pipeline")), meta=meta, **kw)

    def to_json(self, indent: int | None = 1) -> str:
        from splitopt.instances.io import dumps

        return dumps(self, indent=indent)

    @classmethod
    def from_json(cls, text: str) -> "PipelineInstance":
        from splitopt.instances.io import loads

        inst = loads(text)
        if not isinstance(inst, cls):
            raise InstanceError("family", f"expected a pipeline instance, got {type(inst).__name__}")
        return inst

    def with_(self, **changes) -> "PipelineInstance":
        """A validated copy with some fields changed (``inst.with_(placement="revisit")``)."""
        return replace(self, **changes)

    def scaled(self, *, rate: float = 1.0, server_flops: float = 1.0, client_flops: float = 1.0,
               memory: float = 1.0) -> "PipelineInstance":
        """A copy with every link rate, node rate or memory multiplied by a factor."""
        def mem(xs):
            return tuple(None if x is None else x * memory for x in xs)

        return self.with_(rates=tuple(tuple(x * rate for x in row) for row in self.rates),
                          server_flops=tuple(f * server_flops for f in self.server_flops),
                          client_flops=tuple(f * client_flops for f in self.client_flops),
                          server_memory_bytes=mem(self.server_memory_bytes),
                          client_memory_bytes=mem(self.client_memory_bytes))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_profile(cls, profile: Mapping[str, Sequence], *, client_flops, client_memory_bytes, server_flops,
                     server_memory_bytes, rates, clients: Sequence[str] | None = None,
                     servers: Sequence[str] | None = None, **kw) -> "PipelineInstance":
        """From a layer profile (a mapping with ``names`` and the per-layer fields, as returned by
        :func:`vgg16_cifar`; a missing ``opt_bytes`` is 0, a missing ``sample_mem_bytes`` is
        ``act_bytes + grad_bytes`` as in Eq. 11) and a platform."""
        I = len(profile["names"])
        lay = {f: tuple(profile[f]) for f in LAYER_FIELDS if f in profile}
        lay.setdefault("opt_bytes", (0.0,) * I)
        if "sample_mem_bytes" not in lay:
            lay["sample_mem_bytes"] = tuple(a + g for a, g in zip(profile["act_bytes"], profile["grad_bytes"]))
        M, N = len(client_flops), len(server_flops)
        return cls(layers=tuple(profile["names"]), **lay,
                   clients=tuple(clients) if clients is not None else tuple(f"c{m}" for m in range(M)),
                   client_flops=tuple(client_flops), client_memory_bytes=tuple(client_memory_bytes),
                   servers=tuple(servers) if servers is not None else tuple(f"s{j}" for j in range(N)),
                   server_flops=tuple(server_flops), server_memory_bytes=tuple(server_memory_bytes),
                   rates=tuple(tuple(r) for r in rates), **kw)


_SCALAR_FIELDS = ("batch", "micro_batches", "max_submodels", "placement", "bottleneck", "memory", "client_split",
                  "topology", "relay", "bwd_threshold_client", "bwd_threshold_server", "t0_client_s", "t1_client_s",
                  "t0_server_s", "t1_server_s")


def __getattr__(name: str):
    """The generators moved to :mod:`splitopt.instances.pipeline_generate` (issue 22 §5); their old
    names here resolve lazily, so this module imports neither the generator nor the evaluator."""
    if name in _MOVED:
        from splitopt.instances import pipeline_generate

        return getattr(pipeline_generate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MOVED = ("shannon_rates", "table2_platform", "vgg16_cifar", "tinyllama_chain", "random_profile",
          "profile_instance", "generate", "PROFILES", "VGG16_CFG", "TINYLLAMA_CONFIG", "dbm_to_watt")

__all__ = ["PipelineInstance", "PLACEMENTS", "BOTTLENECKS", "MEMORIES", "CLIENT_SPLITS", "TOPOLOGIES", "RELAYS",
           "LAYER_FIELDS"]
