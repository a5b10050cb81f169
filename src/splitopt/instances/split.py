"""Instances of the ``split`` family: one DNN graph split between a device and a server.

Seeds 000 (Li et al., "Fast AI Model Splitting over Edge Networks", split *training*) and 002
(Zhang et al., QDMP, IMWUT 2020, edge/cloud *inference*). The device holds the raw input; data
flows only device -> server, so the device-side layer set is closed under predecessors
(digest 000 §7 E4, digest 002 §2.6).

Per layer the instance stores seconds per iteration on each side (``device_s``, ``server_s``;
forward + backward in training, forward only in inference), in the topological order of
``graph.layers``. Parameter and tensor sizes come from the graph (``Layer.param_bytes``, the
tensors of :attr:`DNNGraph.tensors`, each charged once however many consumers it has).

Cost model (evaluated by :func:`splitopt.models.split.evaluate`), with ``N = iterations``,
``R_D = up_bytes_per_s``, ``R_S = down_bytes_per_s``:

* ``mode="training"``: seed 000 Eq. 7 in the corrected per-layer form of digest 000 §2.4::

      T = sum_{v in D} [N xi_D,v + k_v (1/R_D + 1/R_S)] + sum_{v in S} N xi_S,v
          + sum_{tensors t from D with a server consumer} N a_t (1/R_D + 1/R_S)

* ``mode="inference"``: seed 002 §1.2 per-tensor latency ``L(S)`` (digest 002 §1.2): edge compute
  + cloud compute + each cut tensor uploaded once (``a/R_D``), times ``N`` frames.

Raw input (``input_policy``): ``"pin"`` keeps every input layer (layer without producer) on the
device (the fix of digest 000 §7 E3; default in training); ``"upload"`` charges
``N * input_bytes / R_D`` once when any input layer runs on the server (QDMP's vertex ``o`` with
``tau = D_input / B``, digest 002 §2.5, generalised to several input layers as a pinned
pseudo-layer with fan-out, digest 002 §7.1 item 2; default in inference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Iterable, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances import limits
from splitopt.instances.graph import DNNGraph

MODES = ("training", "inference")
INPUT_POLICIES = ("pin", "upload")


@dataclass(frozen=True)
class SplitCosts:
    """Per-layer and per-tensor cost coefficients derived from a :class:`SplitInstance`.

    ``dev[v]`` is the full cost of placing layer ``v`` on the device (compute and, in training,
    parameter download + upload), ``srv[v]`` of placing it on the server. ``tensors`` lists
    ``(producer, consumers, weight, bytes)``: ``weight`` is charged once when the producer is on the
    device and at least one consumer on the server. ``input_weight`` is charged once when a layer
    of ``input_layers`` is on the server (0 under ``input_policy="pin"``). ``force_dev`` /
    ``force_srv`` are boolean arrays of the pins (input layers included under ``"pin"``).
    """

    dev: np.ndarray
    srv: np.ndarray
    dev_compute: np.ndarray
    dev_params: np.ndarray
    tensors: tuple[tuple[int, tuple[int, ...], float, float], ...]
    act_factor: float
    grad_factor: float
    input_weight: float
    input_layers: tuple[int, ...]
    force_dev: np.ndarray
    force_srv: np.ndarray


@dataclass(frozen=True)
class SplitInstance:
    """A two-tier device/server split problem (see the module docstring for the cost model).

    Build with :meth:`from_graph` (from FLOP and rates or from measured seconds) or directly.
    Bad input raises :class:`~splitopt.errors.InstanceError` naming the field: non-positive or NaN
    rates, wrong-length or negative/NaN cost arrays, unknown pinned layers, a layer pinned to both
    sides, a server pin on an input layer under ``input_policy="pin"``, and pins that force a
    server -> device flow (a server-pinned ancestor of a device-pinned layer).
    """

    family: ClassVar[str] = "split"
    #: range limits (:mod:`splitopt.instances.limits`); the graph's layer numbers are quantities,
    #: checked by :class:`~splitopt.instances.graph.DNNGraph`
    LIMITS: ClassVar[dict] = {"device_s[]": limits.QUANTITY, "server_s[]": limits.QUANTITY,
                              "up_bytes_per_s": limits.RATE, "down_bytes_per_s": limits.RATE,
                              "iterations": limits.POSITIVE_COUNT, "input_bytes": limits.QUANTITY}

    graph: DNNGraph
    device_s: tuple[float, ...]
    server_s: tuple[float, ...]
    up_bytes_per_s: float
    down_bytes_per_s: float | None = None
    mode: str = "training"
    iterations: int = 1
    pin_device: tuple[str, ...] = ()
    pin_server: tuple[str, ...] = ()
    input_bytes: float = 0.0
    input_policy: str | None = None
    name: str = ""

    def __post_init__(self):
        g = self.graph
        if not isinstance(g, DNNGraph):
            raise InstanceError("graph", f"must be a DNNGraph, got {type(g).__name__}")
        n = len(g)
        for fld in ("device_s", "server_s"):
            arr = getattr(self, fld)
            if isinstance(arr, np.ndarray):
                arr = arr.tolist()
            if isinstance(arr, (str, bytes)) or not isinstance(arr, Iterable):
                raise InstanceError(fld, f"must be a list of {n} numbers, got {arr!r}"[:200])
            arr = list(arr)
            if len(arr) != n:
                raise InstanceError(fld, f"has {len(arr)} entries but graph {g.name!r} has {n} layers")
            object.__setattr__(self, fld, tuple(check_number(f"{fld}[{i}]", v) for i, v in enumerate(arr)))
        up = check_number("up_bytes_per_s", self.up_bytes_per_s, minimum=0.0, strict=True)
        object.__setattr__(self, "up_bytes_per_s", up)
        down = up if self.down_bytes_per_s is None else self.down_bytes_per_s
        object.__setattr__(self, "down_bytes_per_s",
                           check_number("down_bytes_per_s", down, minimum=0.0, strict=True))
        if self.mode not in MODES:
            raise InstanceError("mode", f"must be one of {', '.join(MODES)}, got {self.mode!r}")
        it = self.iterations
        if isinstance(it, float) and it.is_integer():
            it = int(it)
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise InstanceError("iterations", f"must be an integer >= 1, got {self.iterations!r}")
        object.__setattr__(self, "iterations", int(it))
        object.__setattr__(self, "input_bytes", check_number("input_bytes", self.input_bytes))
        limits.check({"device_s": self.device_s, "server_s": self.server_s, "up_bytes_per_s": up,
                      "down_bytes_per_s": self.down_bytes_per_s, "iterations": self.iterations,
                      "input_bytes": self.input_bytes}, self.LIMITS)
        pol = self.input_policy
        if pol is None:
            pol = "pin" if self.mode == "training" else "upload"
        if pol not in INPUT_POLICIES:
            raise InstanceError("input_policy", f"must be one of {', '.join(INPUT_POLICIES)}, got {pol!r}")
        object.__setattr__(self, "input_policy", pol)
        object.__setattr__(self, "name", str(self.name or g.name))
        pins = {}
        for fld in ("pin_device", "pin_server"):
            vals = getattr(self, fld)
            if isinstance(vals, str):
                vals = (vals,)
            vals = tuple(vals)
            for i, nm in enumerate(vals):
                if not isinstance(nm, str) or nm not in g:
                    raise InstanceError(f"{fld}[{i}]", f"unknown layer {nm!r} in graph {g.name!r}")
            object.__setattr__(self, fld, vals)
            pins[fld] = vals
        dev_set = set(pins["pin_device"])
        for j, nm in enumerate(pins["pin_server"]):
            if nm in dev_set:
                raise InstanceError(f"pin_server[{j}]", f"layer {nm!r} is also pinned to the device")
            if pol == "pin" and g.index(nm) in g.inputs:
                raise InstanceError(f"pin_server[{j}]",
                                    f"layer {nm!r} is an input layer, which input_policy 'pin' keeps on "
                                    f"the device")
        # A server pin that is an ancestor of a device-forced layer forces a server -> device flow.
        forced = [g.index(nm) for nm in pins["pin_device"]]
        if pol == "pin":
            forced += list(g.inputs)
        anc = g.closure(forced)
        for j, nm in enumerate(pins["pin_server"]):
            v = g.index(nm)
            if anc[v]:
                below = g.closure([v], ancestors=False)
                culprit = next((g.layers[u].name for u in forced if below[u]), "?")
                raise InstanceError(f"pin_server[{j}]",
                                    f"layer {nm!r} is pinned to the server but feeds {culprit!r}, which is "
                                    f"kept on the device: that would need a server -> device flow")

    # ------------------------------------------------------------------ derived data
    @property
    def n_layers(self) -> int:
        return len(self.graph)

    @cached_property
    def costs(self) -> SplitCosts:
        g = self.graph
        n = len(g)
        N = float(self.iterations)
        up, down = self.up_bytes_per_s, self.down_bytes_per_s
        training = self.mode == "training"
        dev_compute = N * np.asarray(self.device_s, dtype=float)
        srv = N * np.asarray(self.server_s, dtype=float)
        params = np.array([lay.param_bytes for lay in g.layers], dtype=float)
        dev_params = params * (1.0 / up + 1.0 / down) if training else np.zeros(n)
        act = N / up
        grad = N / down if training else 0.0
        tensors = tuple((p, cons, b * (act + grad), b) for (p, _port, b, cons) in g.tensors)
        force_dev = np.zeros(n, dtype=bool)
        force_srv = np.zeros(n, dtype=bool)
        for nm in self.pin_device:
            force_dev[g.index(nm)] = True
        for nm in self.pin_server:
            force_srv[g.index(nm)] = True
        if self.input_policy == "pin":
            force_dev[list(g.inputs)] = True
            input_weight = 0.0
        else:
            input_weight = N * self.input_bytes / up
        return SplitCosts(dev=dev_compute + dev_params, srv=srv, dev_compute=dev_compute, dev_params=dev_params,
                          tensors=tensors, act_factor=act, grad_factor=grad, input_weight=input_weight,
                          input_layers=tuple(g.inputs), force_dev=force_dev, force_srv=force_srv)

    @cached_property
    def min_device_mask(self) -> np.ndarray:
        """The smallest feasible device set: the pinned device layers and their ancestors."""
        c = self.costs
        return self.graph.closure(np.flatnonzero(c.force_dev))

    @cached_property
    def max_device_mask(self) -> np.ndarray:
        """The largest feasible device set: every layer except server pins and their descendants."""
        c = self.costs
        return ~self.graph.closure(np.flatnonzero(c.force_srv), ancestors=False)

    def names_of(self, mask) -> list[str]:
        """Sorted layer names of a boolean device mask (the family's plain-data assignment)."""
        names = self.graph.names
        return sorted(names[i] for i in np.flatnonzero(np.asarray(mask, dtype=bool)))

    def mask_of(self, assignment: Iterable[str]) -> np.ndarray:
        """Boolean device mask of an iterable of layer names; unknown names raise InstanceError."""
        if isinstance(assignment, str):
            raise InstanceError("assignment", f"must be a list of layer names, got the string {assignment!r}")
        mask = np.zeros(self.n_layers, dtype=bool)
        idx = self.graph.name_index
        for i, nm in enumerate(assignment):
            j = idx.get(nm) if isinstance(nm, str) else None
            if j is None:
                raise InstanceError(f"assignment[{i}]", f"unknown layer {nm!r} in graph {self.graph.name!r}")
            mask[j] = True
        return mask

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_graph(cls, graph: DNNGraph, platform=None, *, up_bytes_per_s: float | None = None,
                   down_bytes_per_s: float | None = None, mode: str = "training", iterations: int = 1,
                   device_flops: float | None = None, server_flops: float | None = None,
                   machine_class: str | None = None, device_slowdown: float = 1.0,
                   server_speedup: float = 1.0, timing: str = "auto", pin_device: Sequence[str] = (),
                   pin_server: Sequence[str] = (), input_bytes: float | None = None,
                   input_policy: str | None = None, name: str | None = None) -> "SplitInstance":
        """Build an instance from a DNN graph and either a platform or explicit rates.

        Layer seconds: ``timing="flops"`` divides FLOP (``fwd_flop + bwd_flop`` in training,
        ``fwd_flop`` in inference) by ``device_flops`` / ``server_flops``; ``timing="measured"``
        takes ``Layer.fwd_seconds[machine_class]`` (+ ``bwd_seconds`` in training), multiplied by
        ``device_slowdown`` on the device and divided by ``server_speedup`` on the server;
        ``"auto"`` uses measured seconds when every layer has them for the machine class and no
        FLOP rate was given, FLOP otherwise.

        ``platform`` (a :class:`~splitopt.instances.platform.Platform`): its first node with role
        ``device``/``client`` and first with role ``server``/``cloud``/``edge`` give the FLOP rates,
        the machine class and the ``speedup`` of measured seconds (a device ``speedup`` of 0.25 is a
        slow-down of 4); its links give the rates. Explicit keyword values win over the platform.
        ``input_bytes`` defaults to ``graph.meta["input_bytes"]``, else to the output bytes of the
        graph's explicit raw-input layers (op ``input``/``Input``: zoo and PipeDream graphs), else 0.
        """
        if platform is not None:
            dev_node = next((nd for nd in platform.nodes if nd.role in ("device", "client")), None)
            srv_node = next((nd for nd in platform.nodes if nd.role in ("server", "cloud", "edge")
                             and nd is not dev_node), None)
            if dev_node is None or srv_node is None:
                raise InstanceError("platform.nodes", "needs one device/client node and one server node")
            if device_flops is None and timing != "measured":
                device_flops = dev_node.flops
            if server_flops is None and timing != "measured":
                server_flops = srv_node.flops
            if up_bytes_per_s is None:
                up_bytes_per_s = platform.rate(dev_node.name, srv_node.name)
            if down_bytes_per_s is None:
                ln = platform.link(srv_node.name, dev_node.name)
                down_bytes_per_s = ln.rate_bytes_per_s if ln is not None else up_bytes_per_s
            machine_class = machine_class or dev_node.machine_class or srv_node.machine_class
            device_slowdown = device_slowdown / dev_node.speedup
            server_speedup = server_speedup * srv_node.speedup
        if up_bytes_per_s is None:
            raise InstanceError("up_bytes_per_s", "missing (give a platform or the rate)")
        training = mode == "training"
        layers = graph.layers
        classes = set.intersection(*(set(l.fwd_seconds) for l in layers)) if layers else set()
        mc = machine_class
        if mc is None and len(classes) == 1:
            mc = next(iter(classes))
        have_measured = mc is not None and mc in classes and (
            not training or all(mc in l.bwd_seconds for l in layers))
        if timing not in ("auto", "flops", "measured"):
            raise InstanceError("timing", f"must be auto, flops or measured, got {timing!r}")
        use_measured = timing == "measured" or (timing == "auto" and have_measured
                                                and device_flops is None and server_flops is None)
        if use_measured:
            if not have_measured:
                raise InstanceError("timing", f"measured seconds requested but not every layer has "
                                              f"{'fwd/bwd' if training else 'fwd'}_seconds for machine class {mc!r}")
            limits.RATE.check("device_slowdown", device_slowdown)
            limits.RATE.check("server_speedup", server_speedup)
            base = [l.fwd_seconds[mc] + (l.bwd_seconds[mc] if training else 0.0) for l in layers]
            dev = [b * device_slowdown for b in base]
            srv = [b / server_speedup for b in base]
        else:
            for fld, rate in (("device_flops", device_flops), ("server_flops", server_flops)):
                if rate is None:
                    raise InstanceError(fld, "missing: give FLOP/s rates (CLI: --device-flops and --server-flops) "
                                             "or a graph with measured seconds"
                                             + (f" (machine classes here: {', '.join(sorted(classes))})"
                                                if classes else " (this graph has none)"))
            df = limits.RATE.check("device_flops", device_flops)
            sf = limits.RATE.check("server_flops", server_flops)
            work = [l.fwd_flop + (l.bwd_flop if training else 0.0) for l in layers]
            dev = [w / df for w in work]
            srv = [w / sf for w in work]
        if input_bytes is None:
            input_bytes = graph.meta.get("input_bytes")
        if input_bytes is None:
            # an explicit raw-input layer (zoo "input", PipeDream "Input") outputs the raw input:
            # running it on the server means uploading that tensor (digest 002 §2.5, tau)
            input_bytes = math.fsum(graph.layers[i].out_bytes for i in graph.inputs
                                    if graph.layers[i].op.lower().startswith("input"))
        return cls(graph=graph, device_s=tuple(dev), server_s=tuple(srv), up_bytes_per_s=up_bytes_per_s,
                   down_bytes_per_s=down_bytes_per_s, mode=mode, iterations=iterations,
                   pin_device=tuple(pin_device), pin_server=tuple(pin_server), input_bytes=input_bytes,
                   input_policy=input_policy, name=name or graph.name)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "graph": self.graph.to_dict(),
            "device_s": list(self.device_s),
            "server_s": list(self.server_s),
            "up_bytes_per_s": self.up_bytes_per_s,
            "down_bytes_per_s": self.down_bytes_per_s,
            "mode": self.mode,
            "iterations": self.iterations,
            "pin_device": list(self.pin_device),
            "pin_server": list(self.pin_server),
            "input_bytes": self.input_bytes,
            "input_policy": self.input_policy,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SplitInstance":
        if not isinstance(d, Mapping):
            raise InstanceError("", f"a split instance must be an object, got {type(d).__name__}")
        known = {"name", "graph", "device_s", "server_s", "up_bytes_per_s", "down_bytes_per_s", "mode",
                 "iterations", "pin_device", "pin_server", "input_bytes", "input_policy"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InstanceError(unknown[0], "unknown field")
        for req in ("graph", "device_s", "server_s", "up_bytes_per_s"):
            if req not in d:
                raise InstanceError(req, "missing")
        graph = DNNGraph.from_dict(d["graph"], path="graph")
        for fld in ("device_s", "server_s", "pin_device", "pin_server"):
            if fld in d and not isinstance(d[fld], list):
                raise InstanceError(fld, f"must be a list, got {d[fld]!r}"[:200])
        return cls(graph=graph, device_s=d["device_s"], server_s=d["server_s"],
                   up_bytes_per_s=d["up_bytes_per_s"], down_bytes_per_s=d.get("down_bytes_per_s"),
                   mode=d.get("mode", "training"), iterations=d.get("iterations", 1),
                   pin_device=tuple(d.get("pin_device", ())), pin_server=tuple(d.get("pin_server", ())),
                   input_bytes=d.get("input_bytes", 0.0), input_policy=d.get("input_policy"),
                   name=d.get("name", ""))

    def replace(self, **changes) -> "SplitInstance":
        """A copy with some fields changed (validated again)."""
        from dataclasses import replace

        return replace(self, **changes)


# ---------------------------------------------------------------------- seeded generator
def generate(seed: int, kind: str | None = "layered_dag", n: int = 12, mode: str | None = "training",
             iterations: int = 10, device_flops: float | None = 1e11, server_flops: float | None = 1e13,
             up_mbps: float | None = 50.0, down_mbps: float | None = 100.0, graph=None,
             **params) -> SplitInstance:
    """A seeded random instance on a two-tier platform.

    Without ``graph``: a graph from :func:`splitopt.instances.generate.generate` (``kind``; ``n`` is
    passed as the size parameter the generator expects). With ``graph`` (zoo or PipeDream): that
    graph, with measured seconds when every layer has them (device 2-50x slower than the profiled
    machine, drawn from the seed), FLOP at the given rates otherwise. ``up_mbps=None`` picks the
    uplink at which the server-only split costs 1-3x the device-only split (downlink 1-4x the uplink;
    a log-uniform draw in 1..1000 Mbit/s when no such rate exists), so optima are often interior; ``device_flops=None`` draws the device
    in 1e9..3e11 FLOP/s and ``server_flops=None`` a server 2-300x faster, ``mode=None`` picks training or
    inference, ``kind=None`` the graph family and ``costs=None`` the cost distribution from the seed, so a set of seeds covers every graph
    family and moves the optimal cut around.
    """
    import inspect

    from splitopt.instances import generate as gen
    from splitopt.instances.platform import mbps

    rng = np.random.default_rng(seed)
    if kind is None:
        kind = gen.KINDS[seed % len(gen.KINDS)]
    balance = up_mbps is None
    if up_mbps is None:
        up_mbps = float(np.round(10 ** rng.uniform(0, 3), 6))
        down_mbps = float(np.round(up_mbps * rng.uniform(1, 4), 6))
    if mode is None:
        mode = MODES[seed % 2]
    if device_flops is None:
        device_flops = float(np.round(10 ** rng.uniform(9, 11.5), 6))
    if server_flops is None:
        server_flops = float(np.round(device_flops * 10 ** rng.uniform(0.3, 2.5), 6))
    if graph is None:
        if params.get("costs", "uniform") is None:
            params["costs"] = gen.COSTS[(seed // len(gen.KINDS)) % len(gen.COSTS)]
        fn = getattr(gen, kind, None)
        sig = inspect.signature(fn) if fn is not None else None
        if sig is not None and "blocks" in sig.parameters and "n" not in sig.parameters:
            params.setdefault("blocks", max(1, n // 4))
        else:
            params.setdefault("n", n)
        graph = gen.generate(kind, seed, **params)
        measured = False
    else:
        measured = all(l.fwd_seconds for l in graph.layers) and bool(
            set.intersection(*(set(l.fwd_seconds) for l in graph.layers)))
    slowdown = float(np.round(rng.uniform(2, 50), 6)) if measured else 1.0

    def build(up_bytes_per_s: float, down_bytes_per_s: float) -> SplitInstance:
        if measured:
            return SplitInstance.from_graph(graph, up_bytes_per_s=up_bytes_per_s, down_bytes_per_s=down_bytes_per_s,
                                            mode=mode, iterations=iterations, timing="measured",
                                            device_slowdown=slowdown, name=f"{graph.name}-s{seed}")
        return SplitInstance.from_graph(graph, up_bytes_per_s=up_bytes_per_s, down_bytes_per_s=down_bytes_per_s,
                                        mode=mode, iterations=iterations, device_flops=device_flops,
                                        server_flops=server_flops, timing="flops", name=f"{graph.name}-s{seed}")

    if balance:
        factor = down_mbps / up_mbps
        up_mbps = _balanced_uplink_mbps(build, factor, float(10 ** rng.uniform(0.0, 0.5))) or up_mbps
        down_mbps = float(np.round(up_mbps * factor, 6))
    return build(mbps(up_mbps), mbps(down_mbps))


def _mask_cost(instance: SplitInstance, mask: np.ndarray) -> float:
    """Cost of a feasible device mask from the derived cost tables, with the same arithmetic as the
    evaluator (:func:`splitopt.models.split.evaluate`; a test keeps the two equal). Only the
    generator uses it, to place the uplink rate: the instance module needs neither the evaluator
    nor a baseline (issue 22 §5: the import circle instances/split -> models/split ->
    solvers/split/baselines -> instances/split is gone)."""
    c = instance.costs
    on_srv = ~mask
    a = math.fsum([b for p, cons, _w, b in c.tensors if mask[p] and any(on_srv[j] for j in cons)])
    inp = c.input_weight if (c.input_weight and any(on_srv[i] for i in c.input_layers)) else 0.0
    return math.fsum([math.fsum(c.dev_compute[mask]), math.fsum(c.srv[on_srv]), a * c.act_factor,
                      a * c.grad_factor, math.fsum(c.dev_params[mask]), inp])


def _balanced_uplink_mbps(build, down_factor: float, ratio: float) -> float | None:
    """The uplink (Mbit/s) at which server-only costs ``ratio`` times device-only, or None.

    Every cost is ``a + b / r`` in the uplink rate ``r`` when the downlink is ``down_factor * r``, so
    two evaluations of each trivial split give ``a`` and ``b`` exactly; the crossing is then closed-form.
    Random instances drawn at such rates have the optimum strictly inside far more often than at a
    rate drawn blindly (which mostly gives all-server or inputs-only optima).
    """
    from splitopt.instances.platform import mbps

    coef = []
    for which in ("max_device_mask", "min_device_mask"):  # device-only, server-only
        c1, c2 = (_mask_cost(inst, getattr(inst, which)) for inst in (build(mbps(1.0), mbps(down_factor)),
                                                                      build(mbps(2.0), mbps(2.0 * down_factor))))
        b = 2.0 * (c1 - c2)
        coef.append((c1 - b, b))
    (a_d, b_d), (a_s, b_s) = coef
    num, den = b_s - ratio * b_d, ratio * a_d - a_s
    if num <= 0 or den <= 0:
        return None
    r = num / den
    return float(np.round(r, 6)) if 1e-3 <= r <= 1e6 else None


__all__ = ["SplitInstance", "SplitCosts", "MODES", "INPUT_POLICIES", "generate"]
