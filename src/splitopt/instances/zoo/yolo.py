"""YOLOv2 and Tiny-YOLOv2 (Redmon & Farhadi, "YOLO9000: Better, Faster, Stronger", CVPR 2017),
from the Darknet configuration files.

* ``yolov2``: Darknet ``yolov2.cfg`` (Darknet-19 trunk, passthrough route: ``route -9``, a 1x1
  64-filter conv, ``reorg`` stride 2, ``route -1,-4`` concat), 80 COCO classes (425 output
  filters) by default. The ONNX model zoo's ``yolov2-coco`` was converted from pytorch-yolo2,
  which reads this Darknet cfg; Feltin et al. 2023 (digest 004, §4.1) used "YOLOv2 from the ONNX
  model zoo" without saying which variant.
  ``passthrough_conv=False`` gives the original 2016 ``yolo-voc.cfg`` (reorg of the 512-channel
  map, no 64-filter conv), whose 416x416 cost is the 34.90 Bn FLOPs of the Darknet YOLOv2 page;
  ``num_classes=20`` selects the VOC head (125 filters).
* ``tiny_yolov2``: Darknet ``yolov2-tiny-voc.cfg`` (the ONNX model zoo ``tiny-yolov2``, 20 VOC
  classes): 9 convolutions, 6 max-pools, the last one 2x2 with stride 1. Darknet page: 6.97 Bn.

Darknet "BFLOPs" are ``2 * MACs`` of the convolutions (``l.bflops = 2 * n * size^2 * c * out_h *
out_w``), i.e. exactly ``2 * sum(meta["macs"])`` here. Darknet layers become vertices
``l<i>.conv, l<i>.bn, l<i>.leaky`` (``l<i>.conv`` alone for the linear output conv, which has a
bias), ``l<i>.maxpool``, ``l<i>.reorg``, ``l<i>.route`` (a concat); ``i`` is the Darknet layer
index. A route with a single input is a reference, not a vertex. The ``[region]`` decoding layer
has no weights or MACs and is not a vertex. Max-pools use Darknet's size rule.

Block labels: one block per Darknet layer (``l<i>``, kinds ``Convolutional``, ``MaxPool``,
``Reorg``, ``Route``), so ``collapse_by_block()`` gives the Darknet-granularity graph
(yolov2: 23 conv + 5 maxpool + reorg + route = 30 vertices; tiny: 15).

Layer count of digest 004: the paper's YOLOv2 has L = 49 "layers", but neither the paper nor the
digest says how ONNX nodes map to layers (digest 004 §4.1, §5.1 item 1). No granularity of this
graph gives 49: per-op vertices give 75 (incl. input), Darknet layers 30, and conv (BN folded) +
LeakyReLU + max-pool + reorg + concat gives 52.
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

SOURCE = ("Redmon & Farhadi, 'YOLO9000: Better, Faster, Stronger', CVPR 2017 (arXiv:1612.08242); "
          "Darknet cfg files yolov2.cfg / yolo-voc.cfg / yolov2-tiny-voc.cfg (pjreddie.com/darknet/yolov2)")


def _dark_conv(b: GraphBuilder, i: int, x: str, n: int, k: int, linear: bool = False) -> str:
    with b.block(f"l{i}", "Convolutional"):
        if linear:
            return b.conv(f"l{i}.conv", x, n, k, 1, k // 2, bias=True)
        return b.conv_bn_act(f"l{i}", x, n, k, 1, k // 2, act="leaky")


def _dark_pool(b: GraphBuilder, i: int, x: str, stride: int = 2) -> str:
    with b.block(f"l{i}", "MaxPool"):
        return b.pool(f"l{i}.maxpool", x, 2, stride, darknet=True)


def _run(b: GraphBuilder, spec, start_x: str, start_i: int = 0):
    """Run a list of ("C", filters, size) / ("M",) / ("M1",) Darknet layers; return (x, outputs)."""
    x, outs, i = start_x, {}, start_i
    for item in spec:
        if item[0] == "C":
            x = _dark_conv(b, i, x, item[1], item[2])
        else:
            x = _dark_pool(b, i, x, 1 if item[0] == "M1" else 2)
        outs[i] = x
        i += 1
    return x, outs, i


# Darknet-19 trunk of YOLOv2 (layers 0..24 of yolov2.cfg)
YOLOV2_TRUNK = [("C", 32, 3), ("M",), ("C", 64, 3), ("M",), ("C", 128, 3), ("C", 64, 1), ("C", 128, 3), ("M",),
                ("C", 256, 3), ("C", 128, 1), ("C", 256, 3), ("M",), ("C", 512, 3), ("C", 256, 1), ("C", 512, 3),
                ("C", 256, 1), ("C", 512, 3), ("M",), ("C", 1024, 3), ("C", 512, 1), ("C", 1024, 3),
                ("C", 512, 1), ("C", 1024, 3), ("C", 1024, 3), ("C", 1024, 3)]


def build_yolov2(b: GraphBuilder, num_classes: int = 80, passthrough_conv: bool = True,
                 num_anchors: int = 5) -> None:
    with b.block("l0", "Convolutional"):
        x = b.input()
    x, outs, i = _run(b, YOLOV2_TRUNK, x)          # i == 25: "route -9" (-> layer 16), a reference
    fine = outs[16]
    i += 1
    if passthrough_conv:
        fine = _dark_conv(b, i, fine, 64, 1)
        i += 1
    with b.block(f"l{i}", "Reorg"):
        fine = b.reorg(f"l{i}.reorg", fine, 2)
    i += 1
    with b.block(f"l{i}", "Route"):
        x = b.concat(f"l{i}.route", [fine, x])
    i += 1
    x = _dark_conv(b, i, x, 1024, 3)
    _dark_conv(b, i + 1, x, num_anchors * (5 + num_classes), 1, linear=True)


TINY_VOC = [("C", 16, 3), ("M",), ("C", 32, 3), ("M",), ("C", 64, 3), ("M",), ("C", 128, 3), ("M",),
            ("C", 256, 3), ("M",), ("C", 512, 3), ("M1",), ("C", 1024, 3), ("C", 1024, 3)]


def build_tiny_yolov2(b: GraphBuilder, num_classes: int = 20, num_anchors: int = 5) -> None:
    with b.block("l0", "Convolutional"):
        x = b.input()
    x, _, i = _run(b, TINY_VOC, x)
    _dark_conv(b, i, x, num_anchors * (5 + num_classes), 1, linear=True)
