"""DenseNet-121 (Huang et al., "Densely Connected Convolutional Networks", CVPR 2017), as defined in
torchvision (growth rate 32, bottleneck width 4 x 32 = 128, blocks of 6/12/24/16 layers,
compression 0.5).

Dense connectivity is modelled as it executes: dense layer k >= 2 of a block starts with a
``concat`` of the block input and the outputs of layers 1..k-1 (``torch.cat`` in
``_DenseLayer.bn_function``), so each block input and each layer output fans out to every later
layer of its block, and the block ends with a ``concat`` of all of them (the transition's input).
Layer 1 reads the block input directly (``torch.cat`` of one tensor is a copy, not a vertex).

Block labels: ``stem`` (input, conv0, norm0, relu0, pool0), ``denseblockB.denselayerK`` (kind
``DenseLayer``: its input concat, norm1, relu1, conv1, norm2, relu2, conv2), ``transitionB`` (kind
``Transition``: the block-end concat, norm, relu, 1x1 conv, 2x2 average pool) and ``head`` (the
last block-end concat, norm5, relu, avgpool, classifier).
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

SOURCE = ("Huang, Liu, van der Maaten, Weinberger, 'Densely Connected Convolutional Networks', "
          "CVPR 2017 (arXiv:1608.06993); layer definitions of torchvision.models.densenet121")

GROWTH, BN_SIZE, BLOCKS, INIT = 32, 4, (6, 12, 24, 16), 64


def build_densenet121(b: GraphBuilder, num_classes: int = 1000) -> None:
    with b.block("stem", "Stem"):
        x = b.input()
        x = b.act("features.relu0", b.bn("features.norm0", b.conv("features.conv0", x, INIT, 7, 2, 3)), "relu")
        x = b.pool("features.pool0", x, 3, 2, 1)
    for bi, n_layers in enumerate(BLOCKS, start=1):
        feats = [x]
        for k in range(1, n_layers + 1):
            p = f"features.denseblock{bi}.denselayer{k}"
            with b.block(f"denseblock{bi}.denselayer{k}", "DenseLayer"):
                y = feats[0] if len(feats) == 1 else b.concat(f"{p}.cat", feats)
                y = b.act(f"{p}.relu1", b.bn(f"{p}.norm1", y))
                y = b.conv(f"{p}.conv1", y, BN_SIZE * GROWTH, 1)
                y = b.act(f"{p}.relu2", b.bn(f"{p}.norm2", y))
                feats.append(b.conv(f"{p}.conv2", y, GROWTH, 3, 1, 1))
        last = bi == len(BLOCKS)
        with b.block("head" if last else f"transition{bi}", "Classifier" if last else "Transition"):
            x = b.concat(f"features.denseblock{bi}.cat", feats)
            if not last:
                p = f"features.transition{bi}"
                x = b.act(f"{p}.relu", b.bn(f"{p}.norm", x))
                x = b.conv(f"{p}.conv", x, b.shape(x)[0] // 2, 1)
                x = b.pool(f"{p}.pool", x, 2, 2, op="avgpool")
    with b.block("head", "Classifier"):
        x = b.act("relu", b.bn("features.norm5", x))
        b.linear("classifier", b.adaptive_avgpool("avgpool", x), num_classes)
