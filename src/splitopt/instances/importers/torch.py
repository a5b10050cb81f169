"""Import a PyTorch module as a DNN graph through ``torch.export``: :func:`from_torch`.

The graph is read from the :class:`torch.export.ExportedProgram` of ``module(*example_inputs)``:
its ATen graph (``call_function`` nodes in execution order) and each node's ``nn_module_stack``
metadata (the chain of module *calls* that produced it, outermost first; a module called twice has
two call keys, ``relu`` and ``relu@1``). Costs are measured on the example inputs, on this machine's
CPU, node by node:

* **FLOP**: :class:`torch.utils.flop_counter.FlopCounterMode` around each node's forward (convolution,
  matrix products, attention: the ops PyTorch counts; element-wise ops count 0, as in published
  FLOP figures). With ``training=True`` the node's backward (``torch.autograd.grad`` of its outputs
  with respect to its inputs that need a gradient: parameters and activations that depend on them,
  never the raw model input) is counted the same way.
* **out_bytes**: bytes of the tensors a layer produces that another layer (or the model's output)
  consumes, each tensor once (``numel * element_size`` of the real value). A layer with several
  such tensors reports their sum on one port (a cut between it and only some consumers is
  over-charged; collapse or use ``level="op"`` where that matters).
* **param_bytes**: bytes of the parameters a layer reads, each parameter tensor counted once, at
  its first reader in execution order: tied weights (an embedding shared with the output head) are
  counted once. Buffers (batch-norm statistics) are not parameters, as in the zoo.

Levels
------
``level="op"``: one layer per ATen operator (``getitem`` of a multi-output op stays with its
producer), named after the export node (``conv2d_3``), ``meta["fqn"]`` = the innermost module.

``level="module"``: one layer per *unit*, a module call named by its fully qualified name (FQN),
at the depth where a pipeline may split:

* ``depth=None`` (default): starting from the root, a module call is expanded into its child calls
  when every child module is called exactly once and the children form a chain (inputs from outside
  reach only the first child, only the last child's tensors leave, and child ``i`` reads only from
  child ``i-1``): ``nn.Sequential`` stages, ``ModuleList`` stacks of blocks and the top level of
  most networks expand; a residual block (its skip connection bypasses children) or a block reusing
  a module stays whole.
* ``depth=D``: calls above depth ``D`` are expanded whenever each child module is called once
  (``layer1`` has depth 1, ``layer1.0`` depth 2).

Operators in a module's own code outside its children (the residual ``add``, ``torch.flatten`` in
``forward``) belong to the unit called last before them, the unit that a
``torch.distributed.pipelining`` split at the next unit's beginning puts them with. Every graph
input becomes a layer ``input`` (``input:NAME`` for several) with ``op="input"``. A unit is a
*split point* (``graph.meta["torch"]["split_points"]``) when its module is called once: a
``SplitPoint.BEGINNING`` on it marks exactly one place. Layer names are FQNs (a second call of a
reused module: ``relu@1``, not a split point). Each unit's ``block`` is its FQN (the input layer
takes the first unit's), so ``GroupingInstance.from_graph(collapse="block")`` keeps one part per
unit and puts the input with the first unit.

Errors: a module ``torch.export`` cannot trace raises :class:`TorchImportError` (a
:class:`~splitopt.errors.InstanceError`) naming the innermost module being traced and the first
line of export's reason.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import operator
import os
import re
import sys
from typing import Any, Sequence

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer
from splitopt.instances.importers.torch_sources import DTYPES, load_factory, parse_inputs, require_torch

LEVELS = ("module", "op")
_CONTAINER_TYPES = ("Sequential", "ModuleList", "ModuleDict")


class TorchImportError(InstanceError):
    """``torch.export`` could not trace the module (the message names the module and why)."""


# ---------------------------------------------------------------------------- export
def export_program(module, example_inputs: tuple):
    """``torch.export.export(module, example_inputs)``; a failure raises :class:`TorchImportError`
    naming the innermost module being traced (found by re-tracing with call-stack hooks)."""
    torch = require_torch()
    try:
        with _quiet():
            return torch.export.export(module, tuple(example_inputs))
    except Exception as exc:  # noqa: BLE001 - export raises many types; each becomes one line
        first = exc
    names = {m: n for n, m in module.named_modules()}
    stack: list[str] = []
    where: list[str] = []

    def pre(m, args):
        stack.append(names.get(m, "?"))

    def post(m, args, out):
        if stack:
            stack.pop()

    def on_error():
        if stack and not where:
            where.append(stack[-1])

    handles = [m.register_forward_pre_hook(pre) for m in names] + [m.register_forward_hook(post) for m in names]
    try:
        with _quiet():
            torch.export.export(module, tuple(example_inputs))
    except Exception:  # noqa: BLE001
        on_error()
    finally:
        for h in handles:
            h.remove()
    fqn = where[0] if where else ""
    mod = module.get_submodule(fqn) if fqn else module
    reason = next((ln.strip() for ln in str(first).splitlines() if ln.strip()), type(first).__name__)
    label = f"module {fqn!r} ({type(mod).__name__})" if fqn else f"the root module ({type(module).__name__})"
    raise TorchImportError("torch.export", f"cannot trace {label}: {type(first).__name__}: {reason}"[:400])


@contextlib.contextmanager
def _quiet():
    """Silence what ``torch.export`` prints while it fails (graph dumps, symbolic-shape warnings on
    the process's stdout/stderr): the failure becomes one error line instead."""
    loggers = [logging.getLogger(n) for n in ("torch", "torch.fx", "torch._dynamo", "torch.export")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    saved = []
    try:
        for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
            try:
                stream.flush()
                saved.append((fd, os.dup(fd)))
            except (OSError, ValueError, AttributeError):
                continue
        null = os.open(os.devnull, os.O_WRONLY)
        for fd, _ in saved:
            os.dup2(null, fd)
        os.close(null)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        for lg, lv in zip(loggers, levels):
            lg.setLevel(lv)


# ---------------------------------------------------------------------------- costs per node
def _tensor_bytes(v) -> float:
    torch = require_torch()
    if isinstance(v, torch.Tensor):
        return float(v.numel() * v.element_size())
    if isinstance(v, (list, tuple)):
        return math.fsum(_tensor_bytes(x) for x in v)
    return 0.0


def _tensors(v) -> list:
    torch = require_torch()
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _tensors(x)]
    return []


def _placeholder_values(ep, example_inputs: tuple) -> dict[str, tuple[str, Any, str | None]]:
    """Placeholder name -> (kind, value, target) from the graph signature (parameters, buffers,
    constants, user inputs in order)."""
    from torch.export.graph_signature import InputKind

    user = list(example_inputs)
    consts = dict(ep.constants)
    state = dict(ep.state_dict)
    out = {}
    for spec in ep.graph_signature.input_specs:
        name = spec.arg.name
        if spec.kind == InputKind.USER_INPUT:
            out[name] = ("input", user.pop(0) if user else None, None)
        elif spec.kind == InputKind.PARAMETER:
            out[name] = ("param", state[spec.target], spec.target)
        elif spec.kind == InputKind.BUFFER:
            v = state.get(spec.target, consts.get(spec.target))
            out[name] = ("buffer", v.detach().clone() if v is not None else None, spec.target)
        else:
            out[name] = ("const", consts.get(spec.target), spec.target)
    return out


def run_nodes(ep, example_inputs: tuple, *, training: bool = False, flops: bool = True):
    """Execute the exported graph node by node on CPU. Returns ``(sizes, fwd_flop, bwd_flop)`` keyed
    by node name: ``sizes[name] = (bytes, shape or None)`` of the node's value (``bwd_flop`` only with
    ``training``). A value is freed after its last consumer, so memory stays near the model's own."""
    torch = require_torch()
    from torch.utils.flop_counter import FlopCounterMode

    ph = _placeholder_values(ep, example_inputs)
    last_use: dict[str, int] = {}
    for i, node in enumerate(ep.graph.nodes):
        for a in node.all_input_nodes:
            last_use[a.name] = i
    sizes: dict[str, tuple[float, list | None]] = {}
    env: dict[str, Any] = {}
    grad: dict[str, bool] = {}
    fwd: dict[str, float] = {}
    bwd: dict[str, float] = {}
    for i, node in enumerate(ep.graph.nodes):
        if node.op == "placeholder":
            kind, v, _ = ph[node.name]
            env[node.name] = v
            grad[node.name] = training and kind == "param"
            continue
        if node.op != "call_function":
            continue
        needs = training and any(grad.get(a.name, False) for a in node.all_input_nodes)

        def load(a):
            v = env[a.name]
            if needs and grad.get(a.name) and isinstance(v, torch.Tensor) and v.is_floating_point():
                return v.detach().requires_grad_(True)
            return v

        args = torch.fx.node.map_arg(node.args, load)
        kwargs = torch.fx.node.map_arg(node.kwargs, load)
        leaves = [x for x in _tensors(list(args) + list(kwargs.values())) if x.requires_grad]
        with torch.set_grad_enabled(needs):
            if flops:
                with FlopCounterMode(display=False) as fc:
                    out = node.target(*args, **kwargs)
                fwd[node.name] = float(fc.get_total_flops())
            else:
                out = node.target(*args, **kwargs)
        if needs and flops:
            outs = [t for t in _tensors(out) if t.requires_grad]
            if outs and leaves:
                with FlopCounterMode(display=False) as fc:
                    torch.autograd.grad(outs, leaves, [torch.ones_like(t) for t in outs], allow_unused=True)
                bwd[node.name] = float(fc.get_total_flops())
        env[node.name] = _detach(out)
        grad[node.name] = needs
        sizes[node.name] = (_tensor_bytes(out), list(out.shape) if isinstance(out, torch.Tensor) else None)
        del args, kwargs, leaves, out
        for a in node.all_input_nodes:
            if a.op == "call_function" and last_use.get(a.name) == i:
                env.pop(a.name, None)
    return sizes, fwd, bwd


def _detach(v):
    torch = require_torch()
    if isinstance(v, torch.Tensor):
        return v.detach()
    if isinstance(v, (list, tuple)):
        return type(v)(_detach(x) for x in v)
    return v


# ---------------------------------------------------------------------------- units
def _stack(node) -> list[tuple[str, str, str]]:
    """``[(call key, fqn, class name), ...]`` outermost first, without the root."""
    st = node.meta.get("nn_module_stack") or {}
    out = []
    for key, (fqn, typ) in st.items():
        if fqn == "":
            continue
        cls = typ.rsplit(".", 1)[-1] if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
        out.append((key, fqn, cls))
    return out


def _call_fqn(key: str, fqn: str) -> str:
    m = re.search(r"@(\d+)$", key)
    return f"{fqn}@{m.group(1)}" if m else fqn


def _choose_units(nodes, depth: int | None, edges) -> set[str]:
    """The set of *expanded* call keys (the units are their children)."""
    calls_of: dict[str, set[str]] = {}
    parent: dict[str, str | None] = {}
    info: dict[str, tuple[str, str]] = {}
    for n in nodes:
        prev = None
        for key, fqn, cls in _stack(n):
            calls_of.setdefault(fqn, set()).add(key)
            parent.setdefault(key, prev)
            info[key] = (fqn, cls)
            prev = key
    children: dict[str | None, list[str]] = {}
    for key, p in parent.items():
        children.setdefault(p, []).append(key)
    expanded: set[str | None] = {None}

    def unit_of(n, exp) -> str | None:
        for key, _, _ in _stack(n):
            if key not in exp:
                return key
        return None

    def chain_ok(c: str) -> bool:
        exp = expanded | {c}
        region = [n for n in nodes if any(k == c for k, _, _ in _stack(n))]
        inside = {n.name for n in region}
        unit: dict[str, str] = {}
        order: list[str] = []
        last = None
        pending = []
        for n in region:
            u = unit_of(n, exp)
            if u is None:
                if last is None:
                    pending.append(n.name)
                    continue
                u = last
            if u not in order:
                order.append(u)
            unit[n.name] = u
            last = u
            for p in pending:
                unit[p] = u
            pending = []
        pos = {u: i for i, u in enumerate(order)}
        for a, b in edges:
            if b in inside and a in inside:
                ia, ib = pos[unit[a]], pos[unit[b]]
                if ia != ib and ia != ib - 1:
                    return False
            elif b in inside and pos[unit[b]] != 0:
                return False
            elif a in inside and b not in inside and pos[unit[a]] != len(order) - 1:
                return False
        return True

    frontier = list(children.get(None, []))
    while frontier:
        c = frontier.pop(0)
        kids = children.get(c, [])
        if not kids:
            continue
        fqn, cls = info[c]
        d = fqn.count(".") + 1
        if any(len(calls_of[info[k][0]]) > 1 for k in kids):
            continue
        if depth is not None:
            if d >= depth:
                continue
        elif not chain_ok(c):
            continue
        expanded.add(c)
        frontier.extend(kids)
    return expanded - {None}


def assign_layers(nodes, level: str, depth: int | None, root: str = "forward"):
    """``(layer_of, kind)``: the layer of every ``call_function`` node, and per layer ``(op, fqn, split
    fqn or None)``, at ``level`` (see the module docstring). Shared by the importer and the profiler."""
    node_edges = [(a.name, n.name) for n in nodes for a in n.all_input_nodes if a.op == "call_function"]
    # ---- layer of every node
    layer_of: dict[str, str] = {}
    kind: dict[str, tuple[str, str | None, str | None]] = {}  # layer -> (op, fqn, split fqn)
    if level == "op":
        for n in nodes:
            src = n.args[0] if n.target is operator.getitem and n.args else None
            if src is not None and getattr(src, "name", None) in layer_of:
                layer_of[n.name] = layer_of[src.name]
                continue
            layer_of[n.name] = n.name
            st = _stack(n)
            op = getattr(n.target, "__name__", str(n.target)).split(".")[0]
            kind[n.name] = (op, st[-1][1] if st else "", None)
        calls = _call_counts(nodes)
        seen: set[str] = set()
        for n in nodes:  # a node where a once-called module's call begins is a split point
            if layer_of[n.name] != n.name:
                continue
            for key, fqn, _ in _stack(n):
                if key in seen:
                    continue
                seen.add(key)
                if calls[fqn] == 1 and kind[n.name][2] is None:
                    kind[n.name] = (kind[n.name][0], kind[n.name][1], fqn)
    else:
        expanded = _choose_units(nodes, depth, node_edges)
        calls = _call_counts(nodes)
        pending: list[str] = []
        last = None
        for n in nodes:
            unit = next(((k, f, c) for k, f, c in _stack(n) if k not in expanded), None)
            if unit is None:
                if last is None:
                    pending.append(n.name)
                    continue
                lname = last
            else:
                key, fqn, cls = unit
                lname = _call_fqn(key, fqn)
                if lname not in kind:
                    kind[lname] = (cls, fqn, fqn if calls[fqn] == 1 else None)
            layer_of[n.name] = lname
            for p in pending:
                layer_of[p] = lname
            pending = []
            last = lname
        if pending:  # no module at all: the root's own code is one layer
            for p in pending:
                layer_of[p] = "forward"
            kind["forward"] = (root, "", None)

    return layer_of, kind


# ---------------------------------------------------------------------------- the importer
def from_torch(module, example_inputs, *, level: str = "module", depth: int | None = None,
               training: bool = False, name: str | None = None, program=None) -> DNNGraph:
    """A DNN graph of ``module`` run on ``example_inputs`` (see the module docstring).

    ``program``: an :class:`~torch.export.ExportedProgram` of the same call, when the caller has
    one (otherwise exported here). ``training`` also counts backward FLOP.
    """
    torch = require_torch()
    if level not in LEVELS:
        raise InstanceError("level", f"must be one of {', '.join(LEVELS)}, got {level!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InstanceError("depth", f"must be an integer >= 1, got {depth!r}")
    if not isinstance(module, torch.nn.Module):
        raise InstanceError("module", f"must be a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    module.train(training)
    ep = program if program is not None else export_program(module, example_inputs)
    sizes, fwd, bwd = run_nodes(ep, example_inputs, training=training)
    ph = _placeholder_values(ep, example_inputs)
    nodes = [n for n in ep.graph.nodes if n.op == "call_function"]
    inputs = [n for n in ep.graph.nodes if n.op == "placeholder" and ph[n.name][0] == "input"]
    in_names = {n.name: ("input" if len(inputs) == 1 else f"input:{n.name}") for n in inputs}
    layer_of, kind = assign_layers(nodes, level, depth, type(module).__name__)

    # ---- costs per layer
    order: list[str] = []
    for n in nodes:
        if layer_of[n.name] not in order:
            order.append(layer_of[n.name])
    f_l = {ln: 0.0 for ln in order}
    b_l = {ln: 0.0 for ln in order}
    p_l = {ln: 0.0 for ln in order}
    for n in nodes:
        f_l[layer_of[n.name]] += fwd.get(n.name, 0.0)
        b_l[layer_of[n.name]] += bwd.get(n.name, 0.0)
    counted: set[int] = set()
    for n in nodes:
        for a in n.all_input_nodes:
            if a.op == "placeholder" and ph[a.name][0] == "param":
                t = ph[a.name][1]
                key = t.untyped_storage().data_ptr() if t.numel() else id(t)
                if key not in counted:
                    counted.add(key)
                    p_l[layer_of[n.name]] += _tensor_bytes(t)
    from torch.export.graph_signature import OutputKind

    user_out = {s.arg.name for s in ep.graph_signature.output_specs
                if s.kind == OutputKind.USER_OUTPUT and hasattr(s.arg, "name")}
    leaving: dict[str, set[str]] = {ln: set() for ln in order}
    edges: set[tuple[str, str]] = set()
    for n in nodes:
        for a in n.all_input_nodes:
            if a.op == "call_function" and layer_of[a.name] != layer_of[n.name]:
                leaving[layer_of[a.name]].add(a.name)
                edges.add((layer_of[a.name], layer_of[n.name]))
            elif a.op == "placeholder" and a.name in in_names:
                edges.add((in_names[a.name], layer_of[n.name]))
    for nm in user_out:
        if nm in layer_of:
            leaving[layer_of[nm]].add(nm)
    first_unit = order[0] if order else None
    layers = []
    for inp in inputs:
        layers.append(Layer(name=in_names[inp.name], op="input", out_bytes=_tensor_bytes(ph[inp.name][1]),
                            block=first_unit if level == "module" else None,
                            meta={"shape": list(getattr(ph[inp.name][1], "shape", [])), "placeholder": inp.name}))
    npos = {n.name: i for i, n in enumerate(nodes)}
    for ln in order:
        op, fqn, split = kind[ln]
        last_out = max(leaving[ln], key=npos.__getitem__) if leaving[ln] else None  # in execution order
        shape = sizes.get(last_out, (0.0, None))[1] if last_out else None
        meta: dict[str, Any] = {"fqn": fqn}
        if shape is not None:
            meta["shape"] = shape
        layers.append(Layer(name=ln, op=op, fwd_flop=f_l[ln], bwd_flop=b_l[ln],
                            out_bytes=math.fsum(sizes.get(x, (0.0, None))[0] for x in leaving[ln]),
                            param_bytes=p_l[ln], block=ln if level == "module" else None,
                            block_kind=op if level == "module" else None, meta=meta))
    split_points = {ln: kind[ln][2] for ln in order if kind[ln][2]}
    fqns = {ln: kind[ln][1] for ln in order}
    n_params = sum(t.numel() for t in {id(p): p for p in module.parameters()}.values())
    meta = {"source": "torch.export", "torch_version": torch.__version__, "module": type(module).__name__,
            "input_shapes": [list(getattr(x, "shape", [])) for x in example_inputs],
            "input_dtypes": [str(getattr(x, "dtype", "")).replace("torch.", "") for x in example_inputs],
            "input_bytes": math.fsum(_tensor_bytes(x) for x in example_inputs), "training": bool(training),
            "params": int(n_params),
            "cost_convention": "FLOP from torch.utils.flop_counter.FlopCounterMode per ATen node (element-wise "
                               "ops count 0); bytes of the real tensors; parameters counted once",
            "torch": {"level": level, "depth": depth, "fqn": fqns, "split_points": split_points,
                      "inputs": [_shape_text(x) for x in example_inputs]}}
    return DNNGraph(layers, [Edge(a, b) for a, b in sorted(edges, key=lambda e: (_pos(layers, e)))],
                    name=name or type(module).__name__, meta=meta)


def _shape_text(x) -> str:
    """``"4x64:int64"``: the ``--input`` spelling of an example input."""
    shape = "x".join(str(d) for d in getattr(x, "shape", ())) or "1"
    dt = str(getattr(x, "dtype", "float32")).replace("torch.", "")
    return shape if dt == "float32" else f"{shape}:{dt}"


def _pos(layers, e):
    idx = {lay.name: i for i, lay in enumerate(layers)}
    return (idx[e[1]], idx[e[0]])


def _call_counts(nodes) -> dict[str, int]:
    keys: dict[str, set[str]] = {}
    for n in nodes:
        for key, fqn, _ in _stack(n):
            keys.setdefault(fqn, set()).add(key)
    return {f: len(k) for f, k in keys.items()}


def import_torch(spec: str, shapes: Sequence[str], *, dtype: str = "float32", level: str = "module",
                 depth: int | None = None, training: bool = False, name: str | None = None) -> DNNGraph:
    """``splitopt import torch SPEC --input SHAPE``: :func:`load_factory` + :func:`parse_inputs` +
    :func:`from_torch`; the graph's meta records ``spec`` so that ``splitopt profile`` can rebuild it."""
    torch = require_torch()
    module = load_factory(spec, training=training)
    inputs = parse_inputs(shapes, dtype)
    if dtype in ("float16", "bfloat16", "float64"):
        module = module.to(getattr(torch, dtype))
    g = from_torch(module, inputs, level=level, depth=depth, training=training,
                   name=name or spec.rpartition(":")[2])
    g.meta["torch"].update({"model": spec, "inputs": list(shapes), "dtype": dtype})
    return g


__all__ = ["from_torch", "import_torch", "load_factory", "parse_inputs", "export_program", "run_nodes",
           "TorchImportError", "LEVELS", "DTYPES", "require_torch"]
