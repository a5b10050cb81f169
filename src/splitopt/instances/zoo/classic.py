"""AlexNet and VGG-16, as defined in torchvision.

* AlexNet: the torchvision variant (Krizhevsky, "One weird trick for parallelizing convolutional
  neural networks", arXiv:1404.5997: 64-192-384-256-256 channels, single tower), not the two-GPU
  original of Krizhevsky et al. (NIPS 2012).
* VGG-16: configuration D of Simonyan & Zisserman (ICLR 2015), without batch-norm.

Both end with an adaptive 6x6 / 7x7 average pool (an identity at 224x224) and a 3-layer
classifier. Vertex names are torchvision's module paths (``features.0``, ``classifier.1``);
dropout is not a vertex (see :mod:`.builder`).

Block labels: one block per stage (convolutions and ReLUs up to and including the stage's max-pool),
``stage1`` ... kind ``ConvStage``; ``classifier`` (avgpool + linear layers) kind ``Classifier``.
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

ALEXNET_SOURCE = ("Krizhevsky, 'One weird trick for parallelizing convolutional neural networks', "
                  "arXiv:1404.5997 (2014); layer definitions of torchvision.models.alexnet")
VGG_SOURCE = ("Simonyan & Zisserman, 'Very Deep Convolutional Networks for Large-Scale Image "
              "Recognition', ICLR 2015 (arXiv:1409.1556), configuration D; torchvision.models.vgg16")


def _classifier(b: GraphBuilder, x: str, pool_hw: int, hidden: int, num_classes: int, idx) -> None:
    """avgpool, then Linear-ReLU, Linear-ReLU, Linear named ``classifier.<idx[i]>``."""
    with b.block("classifier", "Classifier"):
        x = b.adaptive_avgpool("avgpool", x, pool_hw)
        x = b.act(f"classifier.{idx[1]}", b.linear(f"classifier.{idx[0]}", x, hidden))
        x = b.act(f"classifier.{idx[3]}", b.linear(f"classifier.{idx[2]}", x, hidden))
        b.linear(f"classifier.{idx[4]}", x, num_classes)


def build_alexnet(b: GraphBuilder, num_classes: int = 1000) -> None:
    # (out_channels, kernel, stride, padding, followed by max-pool) -> torchvision features indices
    spec = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False), (256, 3, 1, 1, False),
            (256, 3, 1, 1, True)]
    idx = 0
    x = None
    for s, (c, k, st, p, pool) in enumerate(spec, start=1):
        with b.block(f"stage{s}", "ConvStage"):
            if x is None:
                x = b.input()
            x = b.act(f"features.{idx + 1}", b.conv(f"features.{idx}", x, c, k, st, p, bias=True))
            idx += 2
            if pool:
                x = b.pool(f"features.{idx}", x, 3, 2)
                idx += 1
    # torchvision AlexNet classifier: Dropout, Linear(9216,4096), ReLU, Dropout, Linear, ReLU, Linear
    _classifier(b, x, 6, 4096, num_classes, (1, 2, 4, 5, 6))


VGG16_CFG = [[64, 64], [128, 128], [256, 256, 256], [512, 512, 512], [512, 512, 512]]


def build_vgg16(b: GraphBuilder, num_classes: int = 1000) -> None:
    idx = 0
    x = None
    for s, stage in enumerate(VGG16_CFG, start=1):
        with b.block(f"stage{s}", "ConvStage"):
            if x is None:
                x = b.input()
            for c in stage:
                x = b.act(f"features.{idx + 1}", b.conv(f"features.{idx}", x, c, 3, 1, 1, bias=True))
                idx += 2
            x = b.pool(f"features.{idx}", x, 2, 2)
            idx += 1
    # torchvision VGG classifier: Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear
    _classifier(b, x, 7, 4096, num_classes, (0, 1, 3, 4, 6))
