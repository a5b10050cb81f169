"""ResNet-18/34/50/101/152 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016),
as defined in torchvision (v1.5: a Bottleneck's stride sits on its 3x3 convolution).

Vertices: ``conv1, bn1, relu, maxpool``; per block ``layerS.B.conv1, .bn1, .relu1, .conv2, .bn2,
[.relu2, .conv3, .bn3,] [.downsample.0, .downsample.1,] .add, .reluK``; then ``avgpool, fc``.
ResNet-50 thus has 1 (input) + 4 + 16 x 10 + 4 x 2 (downsample) + 2 = 175 vertices: the
"170-layer ResNet-50" of the split literature, with BN and ReLU as separate vertices.

Block labels follow the "model parts" of Petkos (2025), digest 003 §3.2 / §5.2 decision 1:
``stem.conv`` (input, conv1, bn1, relu), ``stem.pool`` (maxpool), one part per residual block
(``layer1.0``, ... kind ``BasicBlock`` / ``Bottleneck``) and ``head`` (avgpool + fc). So
``collapse_by_block()`` yields a chain of n = #blocks + 3 parts: 11 / 19 / 19 / 36 / 53 for
ResNet-18/34/50/101/152. (The thesis states n = 11 only for ResNet-18, Fig. 3; the other counts
are the digest's inference n = 2 + #blocks + 1.)
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

SOURCE = ("He, Zhang, Ren, Sun, 'Deep Residual Learning for Image Recognition', CVPR 2016 "
          "(arXiv:1512.03385); layer definitions of torchvision.models.resnet (v1.5)")

CONFIGS = {
    "resnet18": ("BasicBlock", (2, 2, 2, 2)),
    "resnet34": ("BasicBlock", (3, 4, 6, 3)),
    "resnet50": ("Bottleneck", (3, 4, 6, 3)),
    "resnet101": ("Bottleneck", (3, 4, 23, 3)),
    "resnet152": ("Bottleneck", (3, 8, 36, 3)),
}


def _basic(b: GraphBuilder, p: str, x: str, planes: int, stride: int) -> str:
    in_c = b.shape(x)[0]
    y = b.conv(f"{p}.conv1", x, planes, 3, stride, 1)
    y = b.bn(f"{p}.bn1", y)
    y = b.act(f"{p}.relu1", y)
    y = b.conv(f"{p}.conv2", y, planes, 3, 1, 1)
    y = b.bn(f"{p}.bn2", y)
    if stride != 1 or in_c != planes:
        x = b.bn(f"{p}.downsample.1", b.conv(f"{p}.downsample.0", x, planes, 1, stride))
    return b.act(f"{p}.relu2", b.add(f"{p}.add", [y, x]))


def _bottleneck(b: GraphBuilder, p: str, x: str, planes: int, stride: int) -> str:
    in_c, out_c = b.shape(x)[0], planes * 4
    y = b.act(f"{p}.relu1", b.bn(f"{p}.bn1", b.conv(f"{p}.conv1", x, planes, 1)))
    y = b.act(f"{p}.relu2", b.bn(f"{p}.bn2", b.conv(f"{p}.conv2", y, planes, 3, stride, 1)))
    y = b.bn(f"{p}.bn3", b.conv(f"{p}.conv3", y, out_c, 1))
    if stride != 1 or in_c != out_c:
        x = b.bn(f"{p}.downsample.1", b.conv(f"{p}.downsample.0", x, out_c, 1, stride))
    return b.act(f"{p}.relu3", b.add(f"{p}.add", [y, x]))


def build_resnet(b: GraphBuilder, arch: str, num_classes: int = 1000) -> None:
    kind, depths = CONFIGS[arch]
    block_fn = _basic if kind == "BasicBlock" else _bottleneck
    with b.block("stem.conv", "Stem"):
        x = b.input()
        x = b.act("relu", b.bn("bn1", b.conv("conv1", x, 64, 7, 2, 3)))
    with b.block("stem.pool", "Stem"):
        x = b.pool("maxpool", x, 3, 2, 1)
    for s, (n, planes) in enumerate(zip(depths, (64, 128, 256, 512)), start=1):
        for i in range(n):
            p = f"layer{s}.{i}"
            with b.block(p, kind):
                x = block_fn(b, p, x, planes, 2 if (i == 0 and s > 1) else 1)
    with b.block("head", "Classifier"):
        b.linear("fc", b.adaptive_avgpool("avgpool", x), num_classes)
