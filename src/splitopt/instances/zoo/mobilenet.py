"""MobileNetV2 (Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks", CVPR 2018),
as defined in torchvision (width multiplier 1.0, ReLU6, dropout 0.2 before the classifier).

Vertex names follow torchvision module paths: ``features.0.0`` (conv) / ``.1`` (bn) / ``.2``
(ReLU6); in an inverted residual ``features.i.conv.0.*`` (1x1 expansion, absent when t = 1),
the depthwise ``ConvBNReLU6``, the linear 1x1 projection and its bn; ``features.i.add`` when the
block has a residual connection (stride 1 and equal channels); ``avgpool``; ``classifier.1``.

Block labels: ``features.0`` and ``features.18`` (kind ``ConvBNActivation``), ``features.1`` ...
``features.17`` (kind ``InvertedResidual``) and ``head`` (avgpool + linear, kind ``Classifier``).
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

SOURCE = ("Sandler, Howard, Zhu, Zhmoginov, Chen, 'MobileNetV2: Inverted Residuals and Linear "
          "Bottlenecks', CVPR 2018 (arXiv:1801.04381); layer definitions of torchvision.models.mobilenet_v2")

# t (expansion), c (output channels), n (repeats), s (first stride): the paper's Table 2
SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
            (6, 320, 1, 1)]


def _cbr(b: GraphBuilder, p: str, x: str, out_c: int, k: int, stride: int = 1, groups: int = 1) -> str:
    return b.conv_bn_act(p, x, out_c, k, stride, (k - 1) // 2, groups, act="relu6", names=("0", "1", "2"))


def build_mobilenet_v2(b: GraphBuilder, num_classes: int = 1000) -> None:
    with b.block("features.0", "ConvBNActivation"):
        x = b.input()
        x = _cbr(b, "features.0", x, 32, 3, 2)
    i = 1
    for t, c, n, s in SETTINGS:
        for r in range(n):
            stride = s if r == 0 else 1
            p = f"features.{i}"
            with b.block(p, "InvertedResidual"):
                inp = b.shape(x)[0]
                hidden = round(inp * t)
                y, j = x, 0
                if t != 1:
                    y = _cbr(b, f"{p}.conv.0", y, hidden, 1)
                    j = 1
                y = _cbr(b, f"{p}.conv.{j}", y, hidden, 3, stride, groups=hidden)
                y = b.bn(f"{p}.conv.{j + 2}", b.conv(f"{p}.conv.{j + 1}", y, c, 1))
                x = b.add(f"{p}.add", [x, y]) if (stride == 1 and inp == c) else y
            i += 1
    with b.block(f"features.{i}", "ConvBNActivation"):
        x = _cbr(b, f"features.{i}", x, 1280, 1)
    with b.block("head", "Classifier"):
        b.linear("classifier.1", b.adaptive_avgpool("avgpool", x), num_classes)
