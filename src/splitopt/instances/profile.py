"""Measured seconds per layer on this machine's CPU: :func:`profile_torch` and :func:`profile_onnx`.

The measured seconds go where PipeDream profiles put theirs, ``Layer.fwd_seconds[machine]`` and
``Layer.bwd_seconds[machine]`` (default machine class ``"cpu"``), so every family's instance
builder takes them as it takes FLOP (``GroupingInstance.from_graph(machine="cpu")``,
``SplitInstance.from_graph(machine_class="cpu", timing="measured")``; the builders that read FLOP
only, ``pipeline`` and ``throughput``, through :func:`measured_as_flop`, which states the
measured seconds as FLOP at the rate the profiled machine stands for).

PyTorch (:func:`profile_torch`): the module is exported again (``torch.export``) and its ATen graph
is executed node by node ``warmup + repeat`` times (on ``threads`` intra-op threads, default 1,
so that other work on a shared machine disturbs the figures less) on the example inputs; a node's forward time is
the ``time.perf_counter`` interval around it, a layer's the sum over its nodes (layers as
:func:`~splitopt.instances.importers.torch.from_torch` forms them, at the graph's own level and
depth); the value written is the **median** over the repeats. With ``training=True`` each repeat
also runs the backward pass of the whole graph (the sum of the outputs as loss) with a hook on
every node's output: autograd's CPU engine runs one node at a time, so the interval from the
moment a node's output gradient is complete to the next such moment is charged to that node's
backward (an attribution, not a per-op timer: small ops absorb engine overhead).

ONNX (:func:`profile_onnx`): onnxruntime's own profiler (``SessionOptions.enable_profiling``) gives
each node's kernel time per run; the median over the repeats goes to the layer of that node
(:func:`~splitopt.instances.importers.onnx.load_onnx` names layers after nodes). Forward only.

Each graph records ``meta["profile"]``: machine class, host, processor, date (UTC), torch or
onnxruntime version, warm-up and repeat counts, the statistic (median) and the total; each layer's
``meta["profile"]`` its min and max over the repeats (the spread).
"""

from __future__ import annotations

import datetime
import math
import platform
import statistics
import time
from dataclasses import replace
from typing import Any, Sequence

from splitopt.errors import InstanceError, MissingDependency
from splitopt.instances.graph import DNNGraph


def _check_counts(repeat: int, warmup: int) -> None:
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= 10_000:
        raise InstanceError("--repeat", f"must be an integer in 1..10,000, got {repeat!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= 10_000:
        raise InstanceError("--warmup", f"must be an integer in 0..10,000, got {warmup!r}")


def _machine_meta(machine: str, **extra) -> dict:
    return {"machine": machine, "host": platform.node(), "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **extra}


def _write(graph: DNNGraph, fwd: dict[str, list[float]], bwd: dict[str, list[float]], machine: str,
           meta: dict) -> DNNGraph:
    missing = [lay.name for lay in graph.layers if lay.op != "input" and lay.name not in fwd]
    if missing:
        raise InstanceError("graph", f"layer {missing[0]!r} of {graph.name!r} was not run by the profiled model "
                                     "(profile the model the graph was imported from, at the same level)")
    layers = []
    for lay in graph.layers:
        if lay.name not in fwd:  # a graph input: no compute, 0 s (so every layer has the machine class)
            fs, bs = dict(lay.fwd_seconds), dict(lay.bwd_seconds)
            fs[machine] = 0.0
            bs.pop(machine, None)
            if bwd:
                bs[machine] = 0.0
            layers.append(replace(lay, fwd_seconds=fs, bwd_seconds=bs))
            continue
        fs = dict(lay.fwd_seconds)
        fs[machine] = statistics.median(fwd[lay.name])
        m = dict(lay.meta)
        m["profile"] = {"fwd_min_s": min(fwd[lay.name]), "fwd_max_s": max(fwd[lay.name])}
        bs = dict(lay.bwd_seconds)
        bs.pop(machine, None)  # a forward-only profile leaves no stale backward seconds behind
        if lay.name in bwd:
            bs[machine] = statistics.median(bwd[lay.name])
            m["profile"].update(bwd_min_s=min(bwd[lay.name]), bwd_max_s=max(bwd[lay.name]))
        layers.append(replace(lay, fwd_seconds=fs, bwd_seconds=bs, meta=m))
    gm = dict(graph.meta)
    meta["fwd_total_s"] = math.fsum(lay.fwd_seconds.get(machine, 0.0) for lay in layers)
    if bwd:
        meta["bwd_total_s"] = math.fsum(lay.bwd_seconds.get(machine, 0.0) for lay in layers)
    gm["profile"] = meta
    return DNNGraph(layers, graph.edges, name=graph.name, meta=gm)


def measured_as_flop(graph: DNNGraph, machine: str = "cpu", flops_per_s: float = 1e9) -> DNNGraph:
    """A copy of ``graph`` whose ``fwd_flop``/``bwd_flop`` are the measured seconds on ``machine``
    times ``flops_per_s``, the rate that machine stands for: builders that read FLOP only (the
    ``pipeline`` and ``throughput`` families) then charge a layer exactly its measured seconds on a
    node of rate ``flops_per_s`` and proportionally less on a faster one. The counted FLOP are kept
    in ``meta["counted_fwd_flop"]`` / ``meta["counted_bwd_flop"]``; ``graph.meta["flop_from_seconds"]``
    records the machine and rate. A layer without measured backward seconds gets ``bwd_flop = 0``
    (never counted FLOP beside measured ones: the builders' own convention applies, e.g. the
    pipeline family's 2 x forward)."""
    from splitopt.instances.limits import RATE

    rate = RATE.check("flops_per_s", flops_per_s)
    layers = []
    for i, lay in enumerate(graph.layers):
        if machine not in lay.fwd_seconds:
            raise InstanceError(f"layers[{i}].fwd_seconds", f"no measured seconds for machine {machine!r} on "
                                                            f"layer {lay.name!r} (run splitopt profile first)")
        m = {**lay.meta, "counted_fwd_flop": lay.fwd_flop, "counted_bwd_flop": lay.bwd_flop}
        bwd = lay.bwd_seconds.get(machine)
        layers.append(replace(lay, fwd_flop=lay.fwd_seconds[machine] * rate,
                              bwd_flop=(bwd * rate) if bwd is not None else 0.0, meta=m))
    return DNNGraph(layers, graph.edges, name=graph.name,
                    meta={**graph.meta, "flop_from_seconds": {"machine": machine, "flops_per_s": rate}})


# ---------------------------------------------------------------------------- PyTorch
def profile_torch(graph: DNNGraph, module, example_inputs, *, repeat: int = 5, warmup: int = 2,
                  training: bool = False, machine: str = "cpu", threads: int | None = 1) -> DNNGraph:
    """``graph`` (from :func:`from_torch` on the same module and inputs) with measured seconds."""
    from splitopt.instances.importers.torch import require_torch

    torch = require_torch()
    _check_counts(repeat, warmup)
    info = graph.meta.get("torch")
    if not isinstance(info, dict):
        raise InstanceError("graph", f"{graph.name!r} was not imported from PyTorch (no meta.torch): "
                                     "use `splitopt import torch` first")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    module.train(training)
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(int(threads))
    try:
        return _profile(torch, graph, module, example_inputs, repeat, warmup, training, machine, info)
    finally:
        torch.set_num_threads(before)


def _profile(torch, graph, module, example_inputs, repeat, warmup, training, machine, info) -> DNNGraph:
    from splitopt.instances.importers.torch import _placeholder_values, _tensors, assign_layers, export_program

    ep = export_program(module, example_inputs)
    nodes = [n for n in ep.graph.nodes if n.op == "call_function"]
    layer_of, _ = assign_layers(nodes, info.get("level", "module"), info.get("depth"), type(module).__name__)
    ph = _placeholder_values(ep, example_inputs)
    fwd: dict[str, list[float]] = {}
    bwd: dict[str, list[float]] = {}
    for r in range(warmup + repeat):
        env: dict[str, Any] = {}
        for n in ep.graph.nodes:
            if n.op == "placeholder":
                kind, v, _ = ph[n.name]
                if kind == "param" and training:
                    v = v.detach().requires_grad_(True)
                env[n.name] = v
        f_l: dict[str, float] = {}
        with torch.set_grad_enabled(training):
            for n in nodes:
                args = torch.fx.node.map_arg(n.args, lambda a: env[a.name])
                kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a.name])
                t0 = time.perf_counter()
                env[n.name] = n.target(*args, **kwargs)
                dt = time.perf_counter() - t0
                f_l[layer_of[n.name]] = f_l.get(layer_of[n.name], 0.0) + dt
        b_l: dict[str, float] = {}
        if training:
            b_l = _backward_times(torch, ep, nodes, env, layer_of, _tensors)
        if r >= warmup:
            for k, v in f_l.items():
                fwd.setdefault(k, []).append(v)
            for k, v in b_l.items():
                bwd.setdefault(k, []).append(v)
    if training:  # a layer whose nodes need no gradient ran no backward
        for k in fwd:
            bwd.setdefault(k, [0.0] * repeat)
    meta = _machine_meta(machine, tool="torch " + torch.__version__, threads=torch.get_num_threads(),
                         warmup=warmup, repeat=repeat, statistic="median", training=bool(training),
                         inputs=[list(getattr(x, "shape", [])) for x in example_inputs])
    return _write(graph, fwd, bwd, machine, meta)


def _backward_times(torch, ep, nodes, env, layer_of, _tensors) -> dict[str, float]:
    from torch.export.graph_signature import OutputKind

    outs = [env[s.arg.name] for s in ep.graph_signature.output_specs
            if s.kind == OutputKind.USER_OUTPUT and getattr(s.arg, "name", None) in env]
    loss_terms = [t.float().sum() for t in _tensors(outs) if t.requires_grad]
    if not loss_terms:
        return {}
    events: list[tuple[float, str]] = []
    handles = []
    for n in nodes:
        for t in _tensors(env[n.name]):
            if t.requires_grad:
                handles.append(t.register_hook(lambda g, name=n.name: events.append((time.perf_counter(), name))))
                break
    t0 = time.perf_counter()
    torch.autograd.backward(loss_terms)
    t_end = time.perf_counter()
    for h in handles:
        h.remove()
    out: dict[str, float] = {}
    events.sort()
    del t0
    for i, (t, name) in enumerate(events):
        nxt = events[i + 1][0] if i + 1 < len(events) else t_end
        out[layer_of[name]] = out.get(layer_of[name], 0.0) + (nxt - t)
    return out


def profile_torch_spec(graph: DNNGraph, spec: str, shapes: Sequence[str] | None = None, *, dtype: str | None = None,
                       repeat: int = 5, warmup: int = 2, training: bool = False, machine: str = "cpu",
                       threads: int | None = 1) -> DNNGraph:
    """:func:`profile_torch` of the model ``spec`` (``PKG.MOD:FACTORY``) on inputs of ``shapes``
    (default: the shapes the graph was imported with)."""
    from splitopt.instances.importers.torch import load_factory, parse_inputs, require_torch

    torch = require_torch()
    info = graph.meta.get("torch") or {}
    shapes = list(shapes or info.get("inputs") or [])
    dtype = dtype or info.get("dtype") or "float32"
    module = load_factory(spec, training=training)
    torch.manual_seed(0)
    if dtype in ("float16", "bfloat16", "float64"):
        module = module.to(getattr(torch, dtype))
    return profile_torch(graph, module, parse_inputs(shapes, dtype), repeat=repeat, warmup=warmup,
                         training=training, machine=machine, threads=threads)


# ---------------------------------------------------------------------------- ONNX
def profile_onnx(path, graph: DNNGraph | None = None, *, repeat: int = 5, warmup: int = 2, batch: int | None = None,
                 machine: str = "cpu") -> DNNGraph:
    """The graph of ONNX model ``path`` (``load_onnx``) with each node's median kernel seconds from
    onnxruntime's profiler (one thread, all graph optimisations off, so nodes stay the file's)."""
    import json
    import os
    import tempfile

    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError:
        raise MissingDependency("profiling an ONNX model needs onnxruntime: pip install onnxruntime") from None
    from splitopt.instances.importers.onnx import load_onnx

    _check_counts(repeat, warmup)
    g = graph if graph is not None else load_onnx(path, batch=batch)
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    with tempfile.TemporaryDirectory() as tmp:
        so.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        feeds = {}
        rng = np.random.default_rng(0)
        for inp in sess.get_inputs():
            shape = [d if isinstance(d, int) else (batch or 1) for d in inp.shape]
            dt = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
                  "tensor(int32)": np.int32, "tensor(float16)": np.float16}.get(inp.type, np.float32)
            feeds[inp.name] = (rng.standard_normal(shape).astype(dt) if np.issubdtype(dt, np.floating)
                               else np.zeros(shape, dtype=dt))
        for _ in range(warmup + repeat):
            sess.run(None, feeds)
        prof = sess.end_profiling()
        with open(prof) as fh:
            events = json.load(fh)
    runs: dict[str, list[float]] = {}
    for e in events:
        if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time"):
            node = e.get("args", {}).get("node_name") or e["name"][: -len("_kernel_time")]
            runs.setdefault(node, []).append(float(e.get("dur", 0.0)) * 1e-6)
    by_onnx = {lay.meta.get("onnx_name", lay.name): lay.name for lay in g.layers}
    fwd: dict[str, list[float]] = {}
    for node, ts in runs.items():
        lay = by_onnx.get(node)
        if lay is not None:
            fwd[lay] = ts[warmup:] or ts
    for lay in g.layers:  # nodes onnxruntime never timed (constants folded at load): 0 s
        if lay.op != "input" and lay.name not in fwd:
            fwd[lay.name] = [0.0]
    meta = _machine_meta(machine, tool="onnxruntime " + ort.__version__, threads=1, warmup=warmup, repeat=repeat,
                         statistic="median", training=False)
    return _write(g, fwd, {}, machine, meta)


__all__ = ["profile_torch", "profile_torch_spec", "profile_onnx", "measured_as_flop"]
