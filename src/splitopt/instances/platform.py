"""The platform: machines (device, client, server, edge nodes) and the directed links between them.

Units: FLOP/s, bytes, bytes/s, seconds. Conversions from Mbps, MHz, dBm happen at the edges in
helpers whose parameter names carry the unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from splitopt.errors import InstanceError, check_number

ROLES = ("device", "client", "server", "edge", "cloud")


@dataclass(frozen=True)
class Node:
    """A machine. ``flops`` is its compute rate (FLOP/s); ``machine_class`` selects measured
    per-layer seconds (``Layer.fwd_seconds[machine_class]``) when the graph has them;
    ``speedup`` divides measured seconds (a slower device has ``speedup < 1``)."""

    name: str
    role: str = "edge"
    flops: float = 1e12
    memory_bytes: float = math.inf
    overhead_s: float = 0.0
    machine_class: str | None = None
    speedup: float = 1.0

    def to_dict(self) -> dict:
        d = {"name": self.name, "role": self.role, "flops": self.flops}
        if math.isfinite(self.memory_bytes):
            d["memory_bytes"] = self.memory_bytes
        if self.overhead_s:
            d["overhead_s"] = self.overhead_s
        if self.machine_class is not None:
            d["machine_class"] = self.machine_class
        if self.speedup != 1.0:
            d["speedup"] = self.speedup
        return d


@dataclass(frozen=True)
class Link:
    """A directed link ``src -> dst`` with rate in bytes/s and a fixed latency in seconds."""

    src: str
    dst: str
    rate_bytes_per_s: float
    latency_s: float = 0.0

    def to_dict(self) -> dict:
        d = {"src": self.src, "dst": self.dst, "rate_bytes_per_s": self.rate_bytes_per_s}
        if self.latency_s:
            d["latency_s"] = self.latency_s
        return d


@dataclass(frozen=True)
class Platform:
    """Nodes and directed links. Validation names the bad field (``links[2].rate_bytes_per_s``)."""

    nodes: tuple[Node, ...]
    links: tuple[Link, ...] = ()
    name: str = "platform"

    def __post_init__(self):
        from splitopt.instances.limits import QUANTITY, RATE  # range limits of every platform number

        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "links", tuple(self.links))
        names: set[str] = set()
        if not self.nodes:
            raise InstanceError("nodes", "a platform needs at least one node")
        for i, nd in enumerate(self.nodes):
            if not isinstance(nd.name, str) or not nd.name or nd.name in names:
                raise InstanceError(f"nodes[{i}].name", f"must be a unique non-empty name, got {nd.name!r}")
            names.add(nd.name)
            if nd.role not in ROLES:
                raise InstanceError(f"nodes[{i}].role", f"must be one of {', '.join(ROLES)}, got {nd.role!r}")
            RATE.check(f"nodes[{i}].flops", nd.flops)
            if not (isinstance(nd.memory_bytes, (int, float)) and nd.memory_bytes == math.inf):
                QUANTITY.check(f"nodes[{i}].memory_bytes", nd.memory_bytes)
            QUANTITY.check(f"nodes[{i}].overhead_s", nd.overhead_s)
            RATE.check(f"nodes[{i}].speedup", nd.speedup)
            if nd.machine_class is not None and not isinstance(nd.machine_class, str):
                raise InstanceError(f"nodes[{i}].machine_class", f"must be a string or null, got {nd.machine_class!r}")
        pairs = set()
        for k, ln in enumerate(self.links):
            for end in ("src", "dst"):
                if getattr(ln, end) not in names:
                    raise InstanceError(f"links[{k}].{end}", f"unknown node {getattr(ln, end)!r}")
            if ln.src == ln.dst:
                raise InstanceError(f"links[{k}]", f"link from {ln.src!r} to itself")
            if (ln.src, ln.dst) in pairs:
                raise InstanceError(f"links[{k}]", f"duplicate link {ln.src!r} -> {ln.dst!r}")
            pairs.add((ln.src, ln.dst))
            RATE.check(f"links[{k}].rate_bytes_per_s", ln.rate_bytes_per_s)
            QUANTITY.check(f"links[{k}].latency_s", ln.latency_s)

    def node(self, name: str) -> Node:
        for nd in self.nodes:
            if nd.name == name:
                return nd
        raise InstanceError("node", f"unknown node {name!r}")

    def link(self, src: str, dst: str) -> Link | None:
        for ln in self.links:
            if ln.src == src and ln.dst == dst:
                return ln
        return None

    def rate(self, src: str, dst: str) -> float:
        """Rate of ``src -> dst`` in bytes/s; raises :class:`InstanceError` if there is no link."""
        ln = self.link(src, dst)
        if ln is None:
            raise InstanceError("links", f"no link {src!r} -> {dst!r}")
        return ln.rate_bytes_per_s

    def to_dict(self) -> dict:
        return {"name": self.name, "nodes": [n.to_dict() for n in self.nodes],
                "links": [ln.to_dict() for ln in self.links]}

    @classmethod
    def from_dict(cls, d: Mapping, path: str = "platform") -> "Platform":
        if not isinstance(d, Mapping):
            raise InstanceError(path, f"must be an object, got {type(d).__name__}")
        try:
            for fld in ("nodes", "links"):
                if not isinstance(d.get(fld, []), list):
                    raise InstanceError(fld, f"must be a list, got {d.get(fld)!r}"[:200])
            nodes = []
            for i, nd in enumerate(d.get("nodes", [])):
                if not isinstance(nd, Mapping) or "name" not in nd:
                    raise InstanceError(f"nodes[{i}]", f"must be an object with a name, got {nd!r}")
                unknown = set(nd) - {"name", "role", "flops", "memory_bytes", "overhead_s", "machine_class", "speedup"}
                if unknown:
                    raise InstanceError(f"nodes[{i}].{sorted(unknown)[0]}", "unknown field")
                nodes.append(Node(**nd))
            links = []
            for k, ln in enumerate(d.get("links", [])):
                if not isinstance(ln, Mapping):
                    raise InstanceError(f"links[{k}]", f"must be an object, got {ln!r}")
                unknown = set(ln) - {"src", "dst", "rate_bytes_per_s", "latency_s"}
                if unknown:
                    raise InstanceError(f"links[{k}].{sorted(unknown)[0]}", "unknown field")
                if "rate_bytes_per_s" not in ln:
                    raise InstanceError(f"links[{k}].rate_bytes_per_s", "missing")
                links.append(Link(**ln))
            return cls(tuple(nodes), tuple(links), name=str(d.get("name", "platform")))
        except InstanceError as exc:
            raise InstanceError(f"{path}.{exc.path}", exc.detail) from None


# ---------------------------------------------------------------------- unit helpers
def mbps(rate_mbit_per_s: float) -> float:
    """Megabit/s -> bytes/s (1 Mbit = 10**6 bit)."""
    return rate_mbit_per_s * 1e6 / 8.0


def dbm_to_watt(power_dbm: float) -> float:
    return 10.0 ** ((power_dbm - 30.0) / 10.0)


def shannon_rate(bandwidth_hz: float, tx_power_w: float, distance_m: float, path_loss_exponent: float,
                 noise_psd_w_per_hz: float) -> float:
    """Shannon rate in **bytes/s**: ``W log2(1 + p d^-gamma / (N0 W)) / 8``.

    Noise convention: ``noise_psd_w_per_hz`` is the one-sided noise power spectral density N0 in
    W/Hz, so the noise power over the band is ``N0 * W``. (For -174 dBm/Hz use
    ``dbm_to_watt(-174)``.) The channel gain is the plain path loss ``d^-gamma`` (no fading).
    """
    for nm, v in (("bandwidth_hz", bandwidth_hz), ("tx_power_w", tx_power_w), ("distance_m", distance_m),
                  ("noise_psd_w_per_hz", noise_psd_w_per_hz)):
        check_number(nm, v, minimum=0.0, strict=True)
    snr = tx_power_w * distance_m ** (-path_loss_exponent) / (noise_psd_w_per_hz * bandwidth_hz)
    return bandwidth_hz * math.log2(1.0 + snr) / 8.0


# ---------------------------------------------------------------------- topologies
def _nodes(names: Sequence[str] | int, role: str, flops: float | Sequence[float], prefix: str) -> list[Node]:
    if isinstance(names, int):
        names = [f"{prefix}{i}" for i in range(names)]
    fl = [flops] * len(names) if isinstance(flops, (int, float)) else list(flops)
    return [Node(n, role=role, flops=f) for n, f in zip(names, fl)]


def two_tier(device_flops: float, server_flops: float, up_bytes_per_s: float, down_bytes_per_s: float,
             device_memory_bytes: float = math.inf) -> Platform:
    """One device and one server with an uplink and a downlink."""
    return Platform((Node("device", "device", device_flops, device_memory_bytes), Node("server", "server", server_flops)),
                    (Link("device", "server", up_bytes_per_s), Link("server", "device", down_bytes_per_s)),
                    name="two-tier")


def line(n: int | Sequence[str], flops: float | Sequence[float], rate_bytes_per_s: float | Sequence[float],
         role: str = "edge", bidirectional: bool = True) -> Platform:
    """Nodes ``0 - 1 - ... - n-1``; rate ``i`` is the rate of hop ``i -> i+1`` (and back)."""
    nodes = _nodes(n, role, flops, "n")
    rates = [rate_bytes_per_s] * (len(nodes) - 1) if isinstance(rate_bytes_per_s, (int, float)) else list(rate_bytes_per_s)
    links = []
    for i in range(len(nodes) - 1):
        links.append(Link(nodes[i].name, nodes[i + 1].name, rates[i]))
        if bidirectional:
            links.append(Link(nodes[i + 1].name, nodes[i].name, rates[i]))
    return Platform(tuple(nodes), tuple(links), name="line")


def mesh(n: int | Sequence[str], flops: float | Sequence[float], rate_bytes_per_s: float, role: str = "edge") -> Platform:
    """Every ordered pair linked at the same rate."""
    nodes = _nodes(n, role, flops, "n")
    links = [Link(a.name, b.name, rate_bytes_per_s) for a in nodes for b in nodes if a is not b]
    return Platform(tuple(nodes), tuple(links), name="mesh")


def star(center_flops: float, leaf_flops: float | Sequence[float], n_leaves: int, rate_bytes_per_s: float,
         center_role: str = "server", leaf_role: str = "client") -> Platform:
    """A centre linked both ways with ``n_leaves`` leaves."""
    center = Node("center", center_role, center_flops)
    leaves = _nodes(n_leaves, leaf_role, leaf_flops, "leaf")
    links = []
    for lf in leaves:
        links += [Link(lf.name, center.name, rate_bytes_per_s), Link(center.name, lf.name, rate_bytes_per_s)]
    return Platform((center, *leaves), tuple(links), name="star")


def tree(branching: int, depth: int, flops: float, rate_bytes_per_s: float, role: str = "edge") -> Platform:
    """A complete tree (root ``t``, children ``t.0``, ``t.1`` ...), links both ways."""
    nodes = [Node("t", role, flops)]
    links: list[Link] = []
    frontier = ["t"]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for c in range(branching):
                nm = f"{p}.{c}"
                nodes.append(Node(nm, role, flops))
                links += [Link(p, nm, rate_bytes_per_s), Link(nm, p, rate_bytes_per_s)]
                nxt.append(nm)
        frontier = nxt
    return Platform(tuple(nodes), tuple(links), name="tree")


__all__ = ["Node", "Link", "Platform", "ROLES", "mbps", "dbm_to_watt", "shannon_rate", "two_tier", "line",
           "mesh", "star", "tree"]
