"""Import an ONNX file as a DNN graph: :func:`load_onnx`.

ONNX is the graph source of seed 004 (YOLOv2 "from the ONNX model zoo", digest 004 §1 item 4 and
§9 item 1, which notes that the paper never says how ONNX nodes map to layers) and of the public
tools tfeltin/wedge and dcomp-leris/SHARD (``anchors-related-software.md`` §A3 and "How tools get
the graph"). This importer answers digest 004's open question explicitly: **one layer per ONNX
node**, in a deterministic topological order. Fusing (conv + bn + act) is left to
:meth:`DNNGraph.collapse` / :meth:`DNNGraph.collapse_by_block`.

Mapping (ONNX IR v3+, operators per the ONNX operator specification, default domain)
--------------------------------------------------------------------------------------
* **Layers.** One :class:`~splitopt.instances.graph.Layer` per ONNX node: ``name`` = the node's
  name, or ``f"{op_type}_{i}"`` (``i`` = the node's index in ``graph.node``) when the name is
  empty; a name already taken gets a ``_1``, ``_2`` ... suffix and the original name is kept in
  ``meta["onnx_name"]``. ``op`` = ``op_type``; a non-default domain is kept in ``meta["domain"]``.
* **Raw input.** Every graph input that is not an initializer (and that some layer consumes) becomes
  an explicit layer named after the tensor, with ``op="input"``, no compute, and ``out_bytes`` =
  raw input bytes. The split family (:meth:`SplitInstance.from_graph`) recognises ``op="input"``
  layers as the raw input (pinned to the device or uploaded, digest 000 §7 E3 / digest 002 §2.5).
* **Tensors and ports.** Output ``k`` of a node is port ``k``: ``out_bytes`` is output 0,
  ``extra_out_bytes[k-1]`` output ``k`` (trailing omitted optional outputs are dropped, an omitted
  output in the middle has 0 bytes). One :class:`Edge` ``producer -> consumer`` per (tensor,
  consumer), carrying the producer's port; a consumer reading the same tensor twice gets one edge.
  Nodes with subgraphs (``If``, ``Loop``, ``Scan``) are single layers; tensors their subgraphs read
  from the outer scope give edges too.
* **Sizes.** Tensor shapes come from ``onnx.shape_inference.infer_shapes`` (strict mode, with data
  propagation); bytes = element count x dtype size (``onnx.helper.tensor_dtype_to_np_dtype``;
  4-bit and 2-bit types are packed: half / a quarter byte per element). Shapes are inferred on a
  copy of the ONNX model in which the **batch dimension** (axis 0 of every graph input, when it is
  symbolic or unset, and every other occurrence of the same symbol, e.g. ``"N"`` in declared
  output shapes) is set to ``batch`` (default 1). Fixed dimensions are never changed: when no
  graph input has a symbolic axis 0, the graph's batch is the first input's axis 0, and a ``batch``
  that differs raises :class:`InstanceError` (path ``batch``). Other symbolic dimensions (sequence
  length, image size) are left alone and usually end as unknown shapes (below).
* **Unknown shapes.** A tensor whose shape (or element size: strings, sequences, maps) is still
  unknown after inference raises :class:`InstanceError` naming the tensor, with path
  ``graph.node[i].output[k]`` or ``graph.input[j]``. With ``unknown_shapes="zero"`` such a tensor
  counts 0 bytes instead, the layer gets ``meta["unknown_shape"] = True``, its FLOP count falls
  back to 0 with ``meta["flop_unknown"] = True`` when it needs that shape, and the tensor names are
  listed in ``graph.meta["unknown_shape_tensors"]``. Unused extra outputs (port >= 1, no consumer,
  not a graph output) never raise: they count 0 bytes when unknown.
* **Parameters.** ``param_bytes`` = bytes of every *constant value* a layer consumes, each counted
  once and attributed to its first consumer (topological order): initializers (dense and sparse,
  sparse ones at their dense size) and constant-folded values. **Constant folding**: a ``Constant``
  node, and any default-domain node whose inputs are all constant values (e.g. ``Cast`` or
  ``DequantizeLinear`` of an initializer, shape arithmetic on constants) and that is not random,
  is not a layer; its outputs are constant values (bytes from inferred shapes) charged to their
  consuming layers as parameters, and its FLOP are not counted (done once at load time, as ONNX
  runtimes do). An initializer read only by folded nodes is therefore represented by the folded
  value it produces, not by itself. Folded node names are listed in ``graph.meta["folded_nodes"]``.
  Unlike the zoo (trainable parameters only), batch-norm's running mean and variance are
  initializers and so count here (4 x C values, not 2 x C).

FLOP convention (the zoo's, :mod:`splitopt.instances.zoo.builder`)
-----------------------------------------------------------------
``meta["macs"]`` = multiply-accumulates of Conv, ConvTranspose, Gemm, MatMul (and their integer /
QLinear forms), whole batch; ``fwd_flop = 2 * macs + element ops``; ``bwd_flop = 2 * fwd_flop``.
Biases are not counted (as in published MAC figures). With ``Y`` = output 0 and ``X`` = input 0:

* ``Conv``, ``ConvInteger``, ``QLinearConv``: ``macs = |Y| * prod(W.shape[1:])`` (``W.shape[1]`` is
  ``C_in / groups``, so grouped and depthwise convolutions are covered);
* ``ConvTranspose``: ``macs = |X| * prod(W.shape[1:])`` (every input element meets
  ``C_out / groups * prod(kernel)`` weights);
* ``Gemm``: ``macs = |Y| * K`` with ``K = A.shape[0]`` if ``transA`` else ``A.shape[1]``;
  ``MatMul``, ``MatMulInteger``, ``QLinearMatMul``: ``macs = |Y| * A.shape[-1]`` (numpy
  broadcasting and 1-D operands included);
* ``BatchNormalization``: 2 FLOP per output element (scale and shift, as the zoo);
* activations and unary element ops (:data:`UNARY_OPS`: Relu, LeakyRelu, Sigmoid, Tanh, ...):
  1 FLOP per output element;
* binary element ops (:data:`BINARY_OPS`: Add, Sub, Mul, Div, Pow, PRelu, ...): 1 per output
  element; variadic ``Sum``/``Max``/``Min``/``Mean`` with ``m`` inputs: ``m - 1`` per output
  element (the zoo's residual-add rule);
* ``MaxPool``, ``AveragePool``, ``LpPool``: ``|Y| * prod(kernel_shape)`` (one op per window
  element, as the zoo); ``GlobalAveragePool``, ``GlobalMaxPool``, ``GlobalLpPool``: ``|X|``;
* data movement (:data:`ZERO_FLOP_OPS`: Reshape, Flatten, Transpose, Concat, Split, Slice, Gather,
  Cast, Dropout, Pad, ...): 0 FLOP, a known value (like the zoo's concat / flatten / reorg);
* **every other op** (Softmax, Resize, LayerNormalization, Einsum, LSTM, custom domains, ...): 0 FLOP
  and ``meta["flop_unknown"] = True``; their op types are listed in ``graph.meta["flop_unknown_ops"]``.

Layer ``meta``: ``macs``, ``tensor_shape`` (full shape of output 0, batch axis included: unlike
the zoo's per-sample ``shape``), ``tensors`` (ONNX names of the outputs, by port), ``dtype`` (input
layers), and the flags above (``flop_unknown``, ``unknown_shape``, ``onnx_name``, ``domain``).

Graph ``meta``: ``source`` (path or ``None``), ``format="onnx"``, ``producer_name``,
``producer_version``, ``ir_version``, ``opset`` (default-domain version), ``onnx_graph_name``,
``input_shapes`` (``{tensor: shape}`` after batch substitution), ``outputs`` (graph output tensors),
``batch``, ``folded_nodes``, ``flop_unknown_ops``.

Limitations: a node that reads no runtime tensor but is not folded (a random generator, or a
custom-domain op on constants) becomes a layer without producer, which the split family treats like
a raw-input layer; graph outputs that are graph inputs or constants are ignored; models over 2 GB
must keep their weights in external data files (they are never read, only their dims).

Errors (all :class:`~splitopt.errors.InstanceError`): ``path`` (missing file, not an ONNX file),
``path_or_model`` (wrong type), ``batch``, ``unknown_shapes`` (bad option),
``graph.node[i].input[j]`` (tensor produced by nothing), ``graph.node[i].output[k]`` (tensor produced
twice, or unknown shape), ``graph.node`` (cycle), ``onnx_model`` (rejected by ``onnx.checker`` or by
strict shape inference; the ONNX message is included).

Not derived from any other importer's code; written from the ONNX IR / operator specification.
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Any

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer, stable_topological_order
from splitopt.instances.importers.onnx_flop import _DEFAULT_DOMAINS, _flop, _Unknown

__all__ = ["load_onnx"]

_RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                         "Multinomial", "Bernoulli"})
_SUBBYTE_BITS = {"INT4": 4, "UINT4": 4, "FLOAT4E2M1": 4, "INT2": 2, "UINT2": 2}




def _require_onnx():
    try:
        import onnx  # noqa: F401
    except ImportError as exc:  # pragma: no cover - onnx is in the test extra
        raise ImportError("load_onnx needs the onnx package: pip install 'splitopt[onnx]'") from exc
    return onnx


def _load(path_or_model, onnx) -> tuple[Any, str | None]:
    if isinstance(path_or_model, onnx.ModelProto):
        return path_or_model, None  # never mutated: the work is done on a copy
    if not isinstance(path_or_model, (str, os.PathLike)):
        raise InstanceError("path_or_model", f"must be a path or an onnx.ModelProto, got "
                                             f"{type(path_or_model).__name__}")
    p = Path(path_or_model)
    if not p.is_file():
        raise InstanceError("path", f"no such file: {str(p)!r}")
    try:
        m = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # DecodeError, json ParseError, ...
        raise InstanceError("path", f"{str(p)!r} is not an ONNX file: {type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0][:200] if str(exc) else ''}") from None
    if not m.HasField("graph") or m.ir_version <= 0 or not (len(m.graph.node) or len(m.graph.input)):
        raise InstanceError("path", f"{str(p)!r} is not an ONNX file (no graph or IR version)")
    return m, str(p)


def _subgraph_outer_refs(node) -> list[str]:
    """Tensors that ``node``'s subgraphs (If/Loop/Scan bodies) read from the enclosing scope."""
    refs: list[str] = []

    def walk(graph, outer_defined: set[str]):
        defined = set(outer_defined)
        defined.update(i.name for i in graph.input)
        defined.update(t.name for t in graph.initializer)
        defined.update(t.values.name for t in graph.sparse_initializer)
        for n in graph.node:
            for t in n.input:
                if t and t not in defined and t not in refs:
                    refs.append(t)
            for a in n.attribute:
                for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    walk(g, defined)
            defined.update(o for o in n.output if o)

    for a in node.attribute:
        for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            walk(g, set())
    return refs


def _node_inputs(node) -> list[str]:
    out = [t for t in node.input if t]
    for t in _subgraph_outer_refs(node):
        if t not in out:
            out.append(t)
    return out


def _topological_nodes(graph) -> tuple[list[int], dict[str, tuple[int, int]]]:
    """Validate tensor references and return node indices in a stable topological order plus the
    producer map ``tensor -> (node index, port)``."""
    init = {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    inputs = {i.name for i in graph.input}
    producer: dict[str, tuple[int, int]] = {}
    nodes = list(graph.node)
    for i, nd in enumerate(nodes):
        for k, t in enumerate(nd.output):
            if not t:
                continue
            if t in producer:
                j = producer[t][0]
                raise InstanceError(f"graph.node[{i}].output[{k}]",
                                    f"tensor {t!r} is also produced by node {j} ({nodes[j].op_type} "
                                    f"{nodes[j].name!r})")
            if t in init or t in inputs:
                raise InstanceError(f"graph.node[{i}].output[{k}]",
                                    f"tensor {t!r} is already a graph input or initializer")
            producer[t] = (i, k)
    deps: list[set[int]] = []
    for i, nd in enumerate(nodes):
        d: set[int] = set()
        explicit = list(nd.input)
        for t in _node_inputs(nd):
            if t in producer:
                d.add(producer[t][0])
            elif t not in init and t not in inputs:
                j = explicit.index(t) if t in explicit else None
                path = f"graph.node[{i}].input[{j}]" if j is not None else f"graph.node[{i}].attribute"
                raise InstanceError(path, f"tensor {t!r} read by node {nd.name or nd.op_type!r} is "
                                          f"produced by no node and is neither a graph input nor an initializer")
        deps.append(d)
    n = len(nodes)
    succ: list[list[int]] = [[] for _ in range(n)]
    for i, d in enumerate(deps):
        for j in d:
            if j == i:
                raise InstanceError("graph.node", f"the ONNX graph is cyclic: node {i} "
                                                  f"({nodes[i].name or nodes[i].op_type!r}) reads its own output")
            succ[j].append(i)
    order, cyc = stable_topological_order(succ)
    if cyc is not None:
        names = " -> ".join(repr(nodes[i].name or f"{nodes[i].op_type}_{i}") for i in cyc)
        raise InstanceError("graph.node", f"the ONNX graph is cyclic: {names}")
    return order, producer


def _set_batch(m, batch: int | None) -> int:
    """Fix the batch dimension on the copy ``m``; return the batch size used."""
    g = m.graph
    init = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    symbols: set[str] = set()
    fixed: list[tuple[str, int]] = []
    for vi in g.input:
        if vi.name in init or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape") or len(tt.shape.dim) == 0:
            continue
        d0 = tt.shape.dim[0]
        if d0.HasField("dim_value"):
            fixed.append((vi.name, int(d0.dim_value)))
        elif d0.HasField("dim_param") and d0.dim_param:
            symbols.add(d0.dim_param)
        else:
            symbols.add("")  # anonymous batch dimension: only this occurrence
    if not symbols:
        # nothing symbolic: the graph's batch is the first input's fixed axis 0
        b0 = fixed[0][1] if fixed else 1
        if batch is not None and fixed and batch != b0:
            raise InstanceError("batch", f"graph input {fixed[0][0]!r} has a fixed batch dimension {b0} "
                                         f"(no input has a symbolic one), cannot set batch={batch}")
        return b0 if batch is None else batch
    b = 1 if batch is None else batch

    def fix(vi, first_axis_too: bool):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            return
        for a, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and d.dim_param in symbols and d.dim_param:
                d.dim_value = b
            elif first_axis_too and a == 0 and not d.HasField("dim_value") and not d.dim_param:
                d.dim_value = b

    for vi in g.input:
        if vi.name not in init:
            fix(vi, True)
    for vi in list(g.output) + list(g.value_info):
        fix(vi, False)
    return b


def _detach_external_data(m, onnx) -> None:
    """Replace initializers stored in external files (not loaded: only their dims matter) by typed
    graph inputs on the working copy, so that the checker and shape inference do not look for the
    data files."""
    from onnx import helper

    g = m.graph
    keep, moved = [], []
    for t in g.initializer:
        (moved if t.data_location == onnx.TensorProto.EXTERNAL else keep).append(t)
    if not moved:
        return
    declared = {vi.name for vi in g.input}
    del g.initializer[:]
    g.initializer.extend(keep)
    for t in moved:
        if t.name not in declared:
            g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))


def _dims(vi) -> list[int | None] | None:
    """Shape of a ValueInfo (``None`` entries for symbolic dims); ``None`` if not a ranked tensor."""
    tp = vi.type
    if not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
        return None
    return [int(d.dim_value) if d.HasField("dim_value") else None for d in tp.tensor_type.shape.dim]


def load_onnx(path_or_model, *, batch: int | None = None, name: str | None = None,
              unknown_shapes: str = "error") -> DNNGraph:
    """Read an ONNX file (or an ``onnx.ModelProto``) as a :class:`DNNGraph`, one layer per node.

    ``batch`` sets a symbolic batch dimension (default 1; see the module docstring for the mapping,
    the FLOP convention, constant folding and the errors). ``name`` defaults to the ONNX graph's
    name, else the file stem. ``unknown_shapes="zero"`` turns an unknown tensor shape from an error
    into 0 bytes (flagged in the layer's and the graph's meta).
    """
    onnx = _require_onnx()
    from onnx import helper, shape_inference

    if batch is not None:
        if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or batch < 1:
            raise InstanceError("batch", f"must be a positive integer, got {batch!r}")
        batch = int(batch)
    if unknown_shapes not in ("error", "zero"):
        raise InstanceError("unknown_shapes", f"must be 'error' or 'zero', got {unknown_shapes!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise InstanceError("name", f"must be a non-empty string, got {name!r}")

    model, source = _load(path_or_model, onnx)
    order, _producer = _topological_nodes(model.graph)
    # Work on a topologically sorted copy (the checker and shape inference need sorted nodes).
    nodes_sorted = [model.graph.node[i] for i in order]
    work = onnx.ModelProto()
    work.CopyFrom(model)
    del work.graph.node[:]
    work.graph.node.extend(nodes_sorted)
    b = _set_batch(work, batch)
    _detach_external_data(work, onnx)
    try:
        onnx.checker.check_model(work)
    except Exception as exc:
        msg = " ".join(str(exc).split())[:400]
        raise InstanceError("onnx_model", f"invalid ONNX model: {msg}") from None
    try:
        inferred = shape_inference.infer_shapes(work, check_type=True, strict_mode=True, data_prop=True)
    except Exception as exc:
        msg = " ".join(str(exc).split())[:400]
        raise InstanceError("onnx_model", f"ONNX shape inference failed: {msg}") from None

    g = inferred.graph
    nodes = list(model.graph.node)  # original indices for names and error paths
    # ---------------------------------------------------------------- tensor types
    types: dict[str, tuple[int, list[int | None] | None, str]] = {}  # name -> (elem, dims, kind)
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tp = vi.type
        if tp.HasField("tensor_type"):
            types[vi.name] = (tp.tensor_type.elem_type, _dims(vi), "tensor")
        else:
            types[vi.name] = (0, None, tp.WhichOneof("value") or "unknown")
    init_tensors: dict[str, tuple[int, list[int]]] = {}
    for t in model.graph.initializer:
        init_tensors[t.name] = (t.data_type, [int(d) for d in t.dims])
    for st in model.graph.sparse_initializer:
        init_tensors[st.values.name] = (st.values.data_type, [int(d) for d in st.dims])
    for nm, (et, dims) in init_tensors.items():
        types[nm] = (et, dims, "tensor")

    elem_bits_cache: dict[int, float | None] = {}

    def elem_bits(et: int) -> float | None:
        if et not in elem_bits_cache:
            tname = onnx.TensorProto.DataType.Name(et) if et in onnx.TensorProto.DataType.values() else ""
            if tname in _SUBBYTE_BITS:
                elem_bits_cache[et] = float(_SUBBYTE_BITS[tname])
            elif tname in ("", "UNDEFINED", "STRING"):
                elem_bits_cache[et] = None
            else:
                import numpy as np

                try:
                    elem_bits_cache[et] = 8.0 * np.dtype(helper.tensor_dtype_to_np_dtype(et)).itemsize
                except Exception:
                    elem_bits_cache[et] = None
        return elem_bits_cache[et]

    def shape_of(t: str) -> list[int]:
        et, dims, kind = types.get(t, (0, None, "missing"))
        if kind != "tensor":
            raise _Unknown(f"type is {kind}, not a tensor" if kind != "missing" else "no type inferred")
        if dims is None:
            raise _Unknown("rank unknown")
        if any(d is None for d in dims):
            raise _Unknown("dims [" + ", ".join("?" if d is None else str(d) for d in dims) + "]")
        return dims

    def nbytes(t: str) -> float:
        dims = shape_of(t)
        bits = elem_bits(types[t][0])
        if bits is None:
            raise _Unknown(f"element size of type {types[t][0]} unknown")
        return float(math.ceil(math.prod(dims) * bits / 8.0))

    zero_mode = unknown_shapes == "zero"
    unknown_tensors: list[str] = []

    def tensor_bytes(t: str, path: str, *, lenient: bool = False) -> tuple[float, bool]:
        """(bytes, known)"""
        try:
            return nbytes(t), True
        except _Unknown as why:
            if zero_mode or lenient:
                if t not in unknown_tensors:
                    unknown_tensors.append(t)
                return 0.0, False
            raise InstanceError(path, f"shape of tensor {t!r} is unknown after ONNX shape inference "
                                      f"({why}); set batch=..., fix the ONNX file, or pass "
                                      f"unknown_shapes='zero'") from None

    # ---------------------------------------------------------------- constant folding
    const: set[str] = set(init_tensors)
    folded: set[int] = set()
    for i in order:
        nd = nodes[i]
        ins = _node_inputs(nd)
        if nd.domain in _DEFAULT_DOMAINS and nd.op_type not in _RANDOM_OPS \
                and (nd.op_type == "Constant" or (ins and all(t in const for t in ins))):
            folded.add(i)
            const.update(o for o in nd.output if o)

    # ---------------------------------------------------------------- layers and edges
    consumers: dict[str, int] = {}
    for i in order:
        if i not in folded:
            for t in _node_inputs(nodes[i]):
                consumers[t] = consumers.get(t, 0) + 1
    graph_outputs = [vi.name for vi in model.graph.output]
    used: set[str] = set()
    layer_of_tensor: dict[str, tuple[str, int]] = {}
    layers: list[Layer] = []
    edges: list[Edge] = []
    input_shapes: dict[str, list] = {}

    def unique(base: str) -> str:
        nm, k = base, 0
        while nm in used:
            k += 1
            nm = f"{base}_{k}"
        used.add(nm)
        return nm

    for j, vi in enumerate(model.graph.input):
        if vi.name in init_tensors:
            continue
        shp = types.get(vi.name, (0, None, ""))[1]
        input_shapes[vi.name] = shp
        if not consumers.get(vi.name):
            continue
        ob, known = tensor_bytes(vi.name, f"graph.input[{j}]")
        lname = unique(vi.name)
        meta: dict[str, object] = {"tensor_shape": shp, "dtype": _dtype_name(onnx, types[vi.name][0]),
                                   "macs": 0.0}
        if not known:
            meta["unknown_shape"] = True
        layers.append(Layer(name=lname, op="input", out_bytes=ob, meta=meta))
        layer_of_tensor[vi.name] = (lname, 0)

    attributed: set[str] = set()
    unknown_ops: set[str] = set()
    for i in order:
        if i in folded:
            continue
        nd = nodes[i]
        base = nd.name or f"{nd.op_type}_{i}"
        lname = unique(base)
        meta = {}
        if lname != base or (nd.name and lname != nd.name):
            meta["onnx_name"] = nd.name
        if nd.domain not in _DEFAULT_DOMAINS:
            meta["domain"] = nd.domain
        outs = list(nd.output)
        while outs and not outs[-1]:
            outs.pop()
        port_bytes: list[float] = []
        unknown = False
        for k, t in enumerate(outs):
            if not t:
                port_bytes.append(0.0)
                continue
            needed = k == 0 or consumers.get(t) or t in graph_outputs
            bts, known = tensor_bytes(t, f"graph.node[{i}].output[{k}]", lenient=not needed)
            unknown |= not known
            port_bytes.append(bts)
            layer_of_tensor[t] = (lname, k)
        if not outs:
            port_bytes = [0.0]
        # parameters: constant values consumed, each charged once to its first consumer
        pbytes = 0.0
        srcs: list[tuple[str, int]] = []
        for jx, t in enumerate(_node_inputs(nd)):
            if t in const:
                if t not in attributed:
                    attributed.add(t)
                    path = f"graph.node[{i}].input[{list(nd.input).index(t)}]" if t in nd.input \
                        else f"graph.node[{i}].attribute"
                    bts, known = tensor_bytes(t, path)
                    unknown |= not known
                    pbytes += bts
            else:
                src = layer_of_tensor[t]
                if src not in srcs:
                    srcs.append(src)
        macs, elem, flop_known = _flop(nd, shape_of)
        if not flop_known:
            meta["flop_unknown"] = True
            unknown_ops.add(nd.op_type)
        if unknown:
            meta["unknown_shape"] = True
        fwd = 2.0 * macs + elem
        try:
            meta["tensor_shape"] = shape_of(outs[0]) if outs and outs[0] else None
        except _Unknown:
            meta["tensor_shape"] = None
        meta["macs"] = float(macs)
        meta["tensors"] = outs
        layers.append(Layer(name=lname, op=nd.op_type, fwd_flop=fwd, bwd_flop=2.0 * fwd,
                            out_bytes=port_bytes[0], param_bytes=pbytes,
                            extra_out_bytes=tuple(port_bytes[1:]), meta=meta))
        for (s, port) in srcs:
            edges.append(Edge(s, lname, port))

    opset = next((int(o.version) for o in model.opset_import if o.domain in _DEFAULT_DOMAINS), None)
    gmeta = {
        "source": source,
        "format": "onnx",
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "ir_version": int(model.ir_version),
        "opset": opset,
        "onnx_graph_name": model.graph.name,
        "input_shapes": input_shapes,
        "outputs": graph_outputs,
        "batch": b,
        "folded_nodes": [nodes[i].name or f"{nodes[i].op_type}_{i}" for i in order if i in folded],
        "flop_unknown_ops": sorted(unknown_ops),
    }
    if unknown_tensors:
        gmeta["unknown_shape_tensors"] = unknown_tensors
    if not layers:
        raise InstanceError("graph.node", "the ONNX graph has no layer after constant folding")
    gname = name or model.graph.name or (Path(source).stem if source else "onnx")
    try:
        return DNNGraph(layers, edges, name=gname, meta=gmeta)
    except InstanceError as exc:  # e.g. a graph whose every layer is constant-fed
        raise InstanceError(f"graph.{exc.path}", exc.detail) from None


def _dtype_name(onnx, et: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(et).lower()
    except ValueError:
        return str(et)
