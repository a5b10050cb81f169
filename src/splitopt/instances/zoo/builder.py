"""A small builder for analytic layer-level DNN graphs.

:class:`GraphBuilder` appends one vertex per torchvision-level operation (conv, bn, relu, pool,
add, concat, linear, ...), tracks the output shape of every vertex and fills the cost fields of
:class:`splitopt.instances.graph.Layer`.

Cost conventions (all zoo graphs)
---------------------------------
* ``meta["macs"]``: multiply-accumulates of convolutions and fully-connected layers only, for the
  whole batch. Their sum over a graph at batch 1 is the figure torchvision publishes as "GFLOPS"
  (which are really GMACs) and half the "BFLOPs" Darknet prints.
* ``fwd_flop = 2 * macs + element ops``, where element ops (per output element) are: batch-norm 2
  (scale and shift), ReLU / ReLU6 / LeakyReLU 1, residual add ``(inputs - 1)``, max / average
  pooling one op per window element, adaptive average pooling one op per input element.
  Concat, flatten and reorg (space-to-depth) move data only and cost 0 FLOP; bias additions of
  conv/linear layers are not counted (as in the published MAC figures).
* ``bwd_flop = 2 * fwd_flop`` (the usual estimate: gradients with respect to the input and to the
  weights each cost about one forward pass).
* ``out_bytes = batch * elements * 4`` (fp32 activations); ``param_bytes = 4 * parameters``
  (trainable parameters only, as ``sum(p.numel() for p in model.parameters())`` counts them:
  batch-norm contributes ``2 * C``, its running statistics are buffers and are not counted).
* ``meta["shape"]``: output shape of one sample, ``[C, H, W]`` (``[F]`` after a linear layer).

Dropout is the identity at inference time and is not a vertex; neither is ``torch.flatten`` (a
view). The explicit input vertex (``op="input"``) has ``out_bytes`` = raw input bytes and no
compute; architecture builders open their first block before creating it, so it carries the first
block's label and :meth:`DNNGraph.collapse_by_block` folds it into the first part.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Iterator, Sequence

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer

FP32 = 4


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


class GraphBuilder:
    """Append layers, track shapes, and produce a validated :class:`DNNGraph`.

    Every ``add_*`` style method takes the new vertex's name and its producer name(s) and returns
    the new name, so architectures read like their forward pass::

        b = GraphBuilder("tiny", (3, 32, 32), batch=1)
        x = b.input()
        x = b.conv("conv1", x, 16, 3, padding=1)
        x = b.act("relu1", x)
    """

    def __init__(self, name: str, in_shape: Sequence[int], batch: int = 1):
        self.name = name
        self.in_shape = [int(s) for s in in_shape]
        self.batch = int(batch)
        self.layers: list[Layer] = []
        self.edges: list[Edge] = []
        self.shapes: dict[str, list[int]] = {}
        self._block: str | None = None
        self._kind: str | None = None

    # ------------------------------------------------------------------ bookkeeping
    @contextmanager
    def block(self, label: str | None, kind: str | None) -> Iterator[None]:
        """Label every layer created inside the ``with`` body with ``block`` / ``block_kind``."""
        saved = self._block, self._kind
        self._block, self._kind = label, kind
        try:
            yield
        finally:
            self._block, self._kind = saved

    def shape(self, name: str) -> list[int]:
        return self.shapes[name]

    def _add(self, name: str, op: str, srcs: Sequence[str], shape: Sequence[int], *, macs: float = 0.0,
             elem_flop: float = 0.0, params: int = 0, **meta) -> str:
        shape = [int(s) for s in shape]
        if any(s <= 0 for s in shape):
            raise InstanceError("input_size", f"too small for {self.name!r}: layer {name!r} would have "
                                f"output shape {shape} (input {self.in_shape})")
        if name in self.shapes:
            raise ValueError(f"duplicate layer name {name!r}")  # programming error in a builder
        elems = math.prod(shape)
        macs_b = float(macs) * self.batch
        fwd = 2.0 * macs_b + float(elem_flop) * self.batch
        self.layers.append(Layer(
            name=name, op=op, fwd_flop=fwd, bwd_flop=2.0 * fwd,
            out_bytes=float(self.batch * elems * FP32), param_bytes=float(FP32 * params),
            block=self._block, block_kind=self._kind,
            meta={"shape": list(shape), "macs": macs_b, **meta}))
        self.shapes[name] = shape
        for s in srcs:
            self.edges.append(Edge(s, name))
        return name

    # ------------------------------------------------------------------ operations
    def input(self, name: str = "input") -> str:
        return self._add(name, "input", (), self.in_shape)

    def conv(self, name: str, x: str, out_c: int, k, stride=1, padding=0, groups: int = 1,
             bias: bool = False, dilation=1) -> str:
        c, h, w = self.shapes[x]
        kh, kw = _pair(k)
        sh, sw = _pair(stride)
        ph, pw = _pair(padding)
        dh, dw = _pair(dilation)
        if c % groups or out_c % groups:
            raise ValueError(f"{name}: channels {c}->{out_c} not divisible by groups={groups}")
        ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        per_out = (c // groups) * kh * kw
        params = out_c * per_out + (out_c if bias else 0)
        return self._add(name, "conv", (x,), (out_c, ho, wo), macs=out_c * ho * wo * per_out, params=params,
                         kernel=[kh, kw], stride=[sh, sw], groups=groups)

    def bn(self, name: str, x: str) -> str:
        s = self.shapes[x]
        return self._add(name, "bn", (x,), s, elem_flop=2 * math.prod(s), params=2 * s[0])

    def act(self, name: str, x: str, op: str = "relu") -> str:
        s = self.shapes[x]
        return self._add(name, op, (x,), s, elem_flop=math.prod(s))

    def pool(self, name: str, x: str, k, stride=None, padding=0, *, op: str = "maxpool",
             ceil_mode: bool = False, darknet: bool = False) -> str:
        """Max or average pooling with PyTorch output-size rules (``ceil_mode`` included).

        ``darknet=True`` uses Darknet's maxpool rule ``out = (in + k - 1 - k) // s + 1`` (implicit
        padding ``k - 1``), under which a 2x2 stride-1 pool keeps the spatial size.
        """
        c, h, w = self.shapes[x]
        kh, kw = _pair(k)
        sh, sw = _pair(stride if stride is not None else k)
        ph, pw = _pair(padding)

        def out(n, k_, s_, p_):
            if darknet:
                return (n + (k_ - 1) - k_) // s_ + 1
            num = n + 2 * p_ - k_
            o = (-(-num // s_) if ceil_mode else num // s_) + 1
            if ceil_mode and (o - 1) * s_ >= n + p_:
                o -= 1
            return o

        ho, wo = out(h, kh, sh, ph), out(w, kw, sw, pw)
        return self._add(name, op, (x,), (c, ho, wo), elem_flop=c * ho * wo * kh * kw,
                         kernel=[kh, kw], stride=[sh, sw])

    def adaptive_avgpool(self, name: str, x: str, out=1) -> str:
        c, h, w = self.shapes[x]
        oh, ow = _pair(out)
        return self._add(name, "avgpool", (x,), (c, oh, ow), elem_flop=c * h * w)

    def linear(self, name: str, x: str, out_f: int, bias: bool = True) -> str:
        in_f = math.prod(self.shapes[x])
        return self._add(name, "linear", (x,), (out_f,), macs=in_f * out_f,
                         params=in_f * out_f + (out_f if bias else 0))

    def add(self, name: str, xs: Sequence[str]) -> str:
        s = self.shapes[xs[0]]
        for x in xs[1:]:
            if self.shapes[x] != s:
                raise ValueError(f"{name}: cannot add shapes {s} and {self.shapes[x]}")
        return self._add(name, "add", xs, s, elem_flop=(len(xs) - 1) * math.prod(s))

    def concat(self, name: str, xs: Sequence[str]) -> str:
        """Channel concatenation (data movement only)."""
        hw = self.shapes[xs[0]][1:]
        for x in xs[1:]:
            if self.shapes[x][1:] != hw:
                raise ValueError(f"{name}: cannot concatenate {self.shapes[xs[0]]} and {self.shapes[x]}")
        return self._add(name, "concat", xs, [sum(self.shapes[x][0] for x in xs), *hw])

    def reorg(self, name: str, x: str, stride: int = 2) -> str:
        """Space-to-depth (Darknet ``[reorg]``): ``C x H x W -> C*s^2 x H/s x W/s``."""
        c, h, w = self.shapes[x]
        return self._add(name, "reorg", (x,), (c * stride * stride, h // stride, w // stride))

    # ------------------------------------------------------------------ composites
    def conv_bn_act(self, prefix: str, x: str, out_c: int, k, stride=1, padding=0, groups: int = 1,
                    act: str = "relu", names=("conv", "bn", None)) -> str:
        """conv -> bn -> activation, named ``prefix.<names[i]>`` (``names[2]`` defaults to ``act``)."""
        n_conv, n_bn, n_act = names
        x = self.conv(f"{prefix}.{n_conv}", x, out_c, k, stride, padding, groups)
        x = self.bn(f"{prefix}.{n_bn}", x)
        return self.act(f"{prefix}.{n_act or act}", x, act)

    # ------------------------------------------------------------------ result
    def build(self, meta: dict | None = None) -> DNNGraph:
        return DNNGraph(self.layers, self.edges, name=self.name, meta=meta or {})


__all__ = ["GraphBuilder", "FP32"]
