"""FLOP rules of the ONNX importer (:mod:`splitopt.instances.importers.onnx`, its module docstring,
"FLOP convention"): which operators count multiply-accumulates, which count element operations and
which are free; split out of the importer (issue 22 §5: modules under 600 lines)."""

from __future__ import annotations

import math

_DEFAULT_DOMAINS = ("", "ai.onnx")

CONV_OPS = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3}  # op -> index of the weight input
MATMUL_OPS = {"MatMul": 0, "MatMulInteger": 0, "QLinearMatMul": 0}  # op -> index of input A
UNARY_OPS = frozenset({
    "Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu", "Celu",
    "ThresholdedRelu", "Softplus", "Softsign", "Gelu", "Mish", "Clip", "Exp", "Log", "Sqrt",
    "Reciprocal", "Neg", "Abs", "Erf", "Sin", "Cos", "Tan", "Floor", "Ceil", "Round", "Sign",
})
BINARY_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "PRelu"})
VARIADIC_OPS = frozenset({"Sum", "Max", "Min", "Mean"})
WINDOW_POOL_OPS = frozenset({"MaxPool", "AveragePool", "LpPool"})
GLOBAL_POOL_OPS = frozenset({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
ZERO_FLOP_OPS = frozenset({
    "Identity", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Split",
    "Slice", "Gather", "GatherElements", "GatherND", "Shape", "Size", "Cast", "CastLike", "Dropout",
    "Pad", "Expand", "Tile", "SpaceToDepth", "DepthToSpace", "ConstantOfShape", "Range",
})
#: ops never constant-folded (their value is not fixed at load time)


class _Unknown(Exception):
    """A tensor's shape or element size is unknown (internal)."""


def _attr(node, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            from onnx import helper

            return helper.get_attribute_value(a)
    return default


def _flop(nd, shape_of) -> tuple[float, float, bool]:
    """``(macs, element_flop, known)`` of one node (module docstring, "FLOP convention")."""
    op = nd.op_type
    if nd.domain not in _DEFAULT_DOMAINS:
        return 0.0, 0.0, False
    ins = list(nd.input)
    try:
        if op in ZERO_FLOP_OPS:
            return 0.0, 0.0, True
        y = nd.output[0] if nd.output else ""
        if op in CONV_OPS:
            w = shape_of(ins[CONV_OPS[op]])
            return float(math.prod(shape_of(y)) * math.prod(w[1:])), 0.0, True
        if op == "ConvTranspose":
            w = shape_of(ins[1])
            return float(math.prod(shape_of(ins[0])) * math.prod(w[1:])), 0.0, True
        if op == "Gemm":
            a = shape_of(ins[0])
            k = a[0] if _attr(nd, "transA", 0) else a[1]
            return float(math.prod(shape_of(y)) * k), 0.0, True
        if op in MATMUL_OPS:
            a = shape_of(ins[MATMUL_OPS[op]])
            return float(math.prod(shape_of(y)) * a[-1]), 0.0, True
        if op == "BatchNormalization":
            return 0.0, 2.0 * math.prod(shape_of(y)), True
        if op in UNARY_OPS or op in BINARY_OPS:
            return 0.0, float(math.prod(shape_of(y))), True
        if op in VARIADIC_OPS:
            m = len([t for t in ins if t])
            return 0.0, float(max(m - 1, 0) * math.prod(shape_of(y))), True
        if op in WINDOW_POOL_OPS:
            ks = _attr(nd, "kernel_shape")
            if not ks:
                return 0.0, 0.0, False
            return 0.0, float(math.prod(shape_of(y)) * math.prod(ks)), True
        if op in GLOBAL_POOL_OPS:
            return 0.0, float(math.prod(shape_of(ins[0]))), True
    except _Unknown:
        return 0.0, 0.0, False
    return 0.0, 0.0, False
