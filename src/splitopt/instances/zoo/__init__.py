"""The architecture zoo: analytic layer-level DNN graphs computed from the architectures themselves.

>>> from splitopt.instances import zoo
>>> g = zoo.get("resnet50")                     # 224x224, batch 1
>>> round(sum(l.meta["macs"] for l in g.layers) / 1e9, 3)
4.089
>>> len(g.collapse_by_block())                  # digest 003 parts: stem x2, 16 blocks, head
19

Every graph has one vertex per torchvision-level operation and one explicit ``input`` vertex; the
cost conventions (MACs of conv/linear, ``fwd_flop = 2 * MACs + element ops``, ``bwd_flop = 2 *
fwd_flop``, fp32 bytes) are documented in :mod:`splitopt.instances.zoo.builder`; the block labels
of each family in its module. ``graph.meta`` records ``architecture``, ``input_size`` ([H, W]),
``batch``, ``source`` and the published reference figures (``published``) the tests check.

Vertex counts at the defaults (input vertex included): alexnet 20, vgg16 38, resnet18 69,
resnet34 125, resnet50 175, resnet101 345, resnet152 515, googlenet 196, inception_v3 322 (with
AuxLogits), mobilenet_v2 152, densenet121 427, tiny_yolov2 32, yolov2 75.

Published figures (torchvision ``Weights.meta``: ``num_params``, and ``_ops`` = GFLOPS as
documented, which are GMACs; Darknet YOLOv2 page: Bn FLOPs = 2 x MACs) are stored per
architecture in :data:`PUBLISHED`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph
from splitopt.instances.zoo import classic, densenet, inception, mobilenet, resnet, yolo
from splitopt.instances.zoo.builder import GraphBuilder


@dataclass(frozen=True)
class _Arch:
    build: Callable
    input_size: int
    source: str
    description: str
    options: tuple[str, ...] = ("num_classes",)
    min_size: int = 32


def _res(arch):
    return lambda b, **kw: resnet.build_resnet(b, arch, **kw)


_ZOO: dict[str, _Arch] = {
    "alexnet": _Arch(classic.build_alexnet, 224, classic.ALEXNET_SOURCE,
                     "AlexNet (torchvision single-tower variant): 5 conv + 3 linear layers.", min_size=63),
    "vgg16": _Arch(classic.build_vgg16, 224, classic.VGG_SOURCE,
                   "VGG-16 (configuration D, no batch-norm): 13 conv + 3 linear layers."),
    **{a: _Arch(_res(a), 224, resnet.SOURCE,
                f"ResNet-{a[6:]} ({resnet.CONFIGS[a][0]} blocks {list(resnet.CONFIGS[a][1])}).", min_size=1)
       for a in resnet.CONFIGS},
    "googlenet": _Arch(inception.build_googlenet, 224, inception.GOOGLENET_SOURCE,
                       "GoogLeNet / Inception v1 (torchvision, batch-norm, no auxiliary heads by default).",
                       ("num_classes", "aux_logits"), min_size=15),
    "inception_v3": _Arch(inception.build_inception_v3, 299, inception.INCEPTION_V3_SOURCE,
                          "Inception v3 (torchvision Inception3, with the AuxLogits head by default).",
                          ("num_classes", "aux_logits"), min_size=75),
    "mobilenet_v2": _Arch(mobilenet.build_mobilenet_v2, 224, mobilenet.SOURCE,
                          "MobileNetV2 (width 1.0): 17 inverted residual blocks.", min_size=1),
    "densenet121": _Arch(densenet.build_densenet121, 224, densenet.SOURCE,
                         "DenseNet-121: dense blocks of 6/12/24/16 layers, growth rate 32.", min_size=29),
    "tiny_yolov2": _Arch(yolo.build_tiny_yolov2, 416, yolo.SOURCE,
                         "Tiny-YOLOv2 (Darknet yolov2-tiny-voc.cfg, 20 VOC classes, ONNX zoo tiny-yolov2).",
                         ("num_classes", "num_anchors")),
    "yolov2": _Arch(yolo.build_yolov2, 416, yolo.SOURCE,
                    "YOLOv2 (Darknet yolov2.cfg, 80 COCO classes, passthrough reorg route; presumably the ONNX-zoo model "
                    "of Feltin et al. 2023, seed 004).", ("num_classes", "num_anchors", "passthrough_conv")),
}

#: Published reference figures per architecture (batch 1, default input size).
#: ``params``: torchvision ``num_params``; ``gmacs``: torchvision ``_ops`` (documented as GFLOPS,
#: counted as conv + linear multiply-accumulates); ``bflops``: Darknet Bn FLOPs (2 x MACs).
PUBLISHED: dict[str, dict] = {
    "alexnet": {"params": 61_100_840, "gmacs": 0.714},
    "vgg16": {"params": 138_357_544, "gmacs": 15.47},
    "resnet18": {"params": 11_689_512, "gmacs": 1.814},
    "resnet34": {"params": 21_797_672, "gmacs": 3.664},
    "resnet50": {"params": 25_557_032, "gmacs": 4.089},
    "resnet101": {"params": 44_549_160, "gmacs": 7.801},
    "resnet152": {"params": 60_192_808, "gmacs": 11.514},
    "googlenet": {"params": 6_624_904, "gmacs": 1.498},
    "inception_v3": {"params": 27_161_264, "gmacs": 5.713},
    "mobilenet_v2": {"params": 3_504_872, "gmacs": 0.301},
    "densenet121": {"params": 7_978_856, "gmacs": 2.834},
    "tiny_yolov2": {"bflops": 6.97},                 # Darknet YOLOv2 page, Tiny YOLO (VOC), 416
    "yolov2": {"bflops_608": 62.94},                 # Darknet YOLOv2 page, YOLOv2 608x608 (COCO)
}


def list_models() -> list[str]:
    """Names of the architectures :func:`get` knows, sorted."""
    return sorted(_ZOO)


def _arch(name) -> _Arch:
    a = _ZOO.get(name) if isinstance(name, str) else None
    if a is None:
        raise InstanceError("name", f"unknown architecture {name!r}; known: {', '.join(list_models())}")
    return a


def describe(name: str) -> str:
    """One paragraph: what the architecture is, its source, default input size and published figures."""
    a = _arch(name)
    pub = PUBLISHED.get(name, {})
    figs = ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in pub.items())
    return (f"{name}: {a.description} Source: {a.source}. Default input {a.input_size}x{a.input_size}."
            + (f" Published: {figs}." if figs else ""))


def get(name: str, input_size: int | tuple[int, int] | None = None, batch: int = 1, **options) -> DNNGraph:
    """The DNN graph of architecture ``name`` for a square (``int``) or ``(H, W)`` input and a batch.

    ``input_size`` defaults to the architecture's usual size (224; inception_v3 299; yolov2 and
    tiny_yolov2 416). ``options`` are architecture switches (``num_classes``; ``aux_logits`` for
    googlenet / inception_v3; ``passthrough_conv`` and ``num_anchors`` for the YOLOs). Raises
    :class:`InstanceError` naming ``name``, ``input_size``, ``batch`` or the option on bad input.
    Minimum input sizes follow torchvision's ``min_size`` (alexnet 63, googlenet 15, inception_v3
    75 without the aux head, densenet121 29, resnets and mobilenet_v2 1, others 32); a size that
    still shrinks some feature map to nothing raises an ``input_size`` error naming the layer.
    """
    a = _arch(name)
    if input_size is None:
        input_size = a.input_size
    hw = (input_size, input_size) if not isinstance(input_size, (tuple, list)) else tuple(input_size)
    if len(hw) != 2 or any(isinstance(v, bool) or not isinstance(v, int) or v < a.min_size for v in hw):
        raise InstanceError("input_size", f"must be an int or (H, W) of ints >= {a.min_size} for {name!r}, "
                            f"got {input_size!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InstanceError("batch", f"must be a positive integer, got {batch!r}")
    for k, v in options.items():
        if k not in a.options:
            raise InstanceError(k, f"unknown option for {name!r} (allowed: {', '.join(a.options)})")
        if k in ("num_classes", "num_anchors") and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise InstanceError(k, f"must be a positive integer, got {v!r}")
        if k in ("aux_logits", "passthrough_conv") and not isinstance(v, bool):
            raise InstanceError(k, f"must be true or false, got {v!r}")
    b = GraphBuilder(name, (3, *hw), batch)
    a.build(b, **options)
    meta = {"architecture": name, "input_size": list(hw), "batch": batch, "source": a.source,
            "options": dict(options), "published": dict(PUBLISHED.get(name, {})),
            "cost_convention": "meta.macs = conv+linear MACs; fwd_flop = 2*MACs + element ops; "
                               "bwd_flop = 2*fwd_flop; fp32 bytes"}
    return b.build(meta)


__all__ = ["list_models", "get", "describe", "PUBLISHED", "GraphBuilder"]
