"""GoogLeNet (Inception v1) and Inception v3, as defined in torchvision.

* GoogLeNet: Szegedy et al., "Going Deeper with Convolutions", CVPR 2015, in torchvision's form:
  every convolution is a ``BasicConv2d`` (conv without bias, batch-norm, ReLU), and the "5x5"
  branch uses a 3x3 kernel (a known torchvision deviation kept for weight compatibility). The
  published torchvision figures (6,624,904 parameters, 1.498 GMAC) are for the model *without*
  the two auxiliary classifiers (``aux_logits=False``, the state of the pretrained model), which is
  our default; ``aux_logits=True`` adds ``aux1`` / ``aux2`` as side branches.
* Inception v3: Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
  CVPR 2016, torchvision ``Inception3``. torchvision's published parameter count (27,161,264)
  *includes* the auxiliary classifier ``AuxLogits`` (default ``aux_logits=True``), so it is included
  by default here too: a side branch off ``Mixed_6e`` ending in a second output. Its MACs (about
  5.7 M at 299x299) belong to training only; the published 5.713 GMAC is the eval-mode forward,
  without it.

Block labels: each Inception module (``inception3a``, ``Mixed_5b``, ... kind ``Inception`` /
``InceptionA`` ... ``InceptionE``), each stem ``BasicConv2d`` (Inception v3) or the whole stem
(GoogLeNet, ``stem``), each stand-alone pool (kind ``Pool``), the auxiliary heads (kind
``InceptionAux``) and ``head`` (kind ``Classifier``).
"""

from __future__ import annotations

from splitopt.instances.zoo.builder import GraphBuilder

GOOGLENET_SOURCE = ("Szegedy et al., 'Going Deeper with Convolutions', CVPR 2015 (arXiv:1409.4842); "
                    "layer definitions of torchvision.models.googlenet (BasicConv2d with batch-norm)")
INCEPTION_V3_SOURCE = ("Szegedy et al., 'Rethinking the Inception Architecture for Computer Vision', "
                       "CVPR 2016 (arXiv:1512.00567); layer definitions of torchvision.models.inception_v3")


def _bc(b: GraphBuilder, p: str, x: str, out_c: int, k, stride=1, padding=0) -> str:
    """torchvision ``BasicConv2d``: conv (no bias) -> bn -> relu, vertices ``p.conv, p.bn, p.relu``."""
    return b.conv_bn_act(p, x, out_c, k, stride, padding)


# ---------------------------------------------------------------------------- GoogLeNet
# (in_channels is implicit) ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj
GOOGLENET_CFG = {
    "inception3a": (64, 96, 128, 16, 32, 32),
    "inception3b": (128, 128, 192, 32, 96, 64),
    "inception4a": (192, 96, 208, 16, 48, 64),
    "inception4b": (160, 112, 224, 24, 64, 64),
    "inception4c": (128, 128, 256, 24, 64, 64),
    "inception4d": (112, 144, 288, 32, 64, 64),
    "inception4e": (256, 160, 320, 32, 128, 128),
    "inception5a": (256, 160, 320, 32, 128, 128),
    "inception5b": (384, 192, 384, 48, 128, 128),
}


def _inception_v1(b: GraphBuilder, p: str, x: str, cfg) -> str:
    c1, c3r, c3, c5r, c5, pp = cfg
    with b.block(p, "Inception"):
        b1 = _bc(b, f"{p}.branch1", x, c1, 1)
        b2 = _bc(b, f"{p}.branch2.1", _bc(b, f"{p}.branch2.0", x, c3r, 1), c3, 3, 1, 1)
        b3 = _bc(b, f"{p}.branch3.1", _bc(b, f"{p}.branch3.0", x, c5r, 1), c5, 3, 1, 1)  # sic: 3x3
        b4 = _bc(b, f"{p}.branch4.1", b.pool(f"{p}.branch4.0", x, 3, 1, 1, ceil_mode=True), pp, 1)
        return b.concat(f"{p}.concat", [b1, b2, b3, b4])


def _googlenet_aux(b: GraphBuilder, p: str, x: str, num_classes: int) -> None:
    with b.block(p, "InceptionAux"):
        y = _bc(b, f"{p}.conv", b.adaptive_avgpool(f"{p}.avgpool", x, 4), 128, 1)
        y = b.act(f"{p}.relu", b.linear(f"{p}.fc1", y, 1024))
        b.linear(f"{p}.fc2", y, num_classes)


def build_googlenet(b: GraphBuilder, num_classes: int = 1000, aux_logits: bool = False) -> None:
    with b.block("stem", "Stem"):
        x = b.input()
        x = _bc(b, "conv1", x, 64, 7, 2, 3)
        x = b.pool("maxpool1", x, 3, 2, ceil_mode=True)
        x = _bc(b, "conv2", x, 64, 1)
        x = _bc(b, "conv3", x, 192, 3, 1, 1)
        x = b.pool("maxpool2", x, 3, 2, ceil_mode=True)
    for name, cfg in GOOGLENET_CFG.items():
        x = _inception_v1(b, name, x, cfg)
        if aux_logits and name in ("inception4a", "inception4d"):
            _googlenet_aux(b, "aux1" if name == "inception4a" else "aux2", x, num_classes)
        if name in ("inception3b", "inception4e"):
            pool = "maxpool3" if name == "inception3b" else "maxpool4"
            with b.block(pool, "Pool"):
                x = b.pool(pool, x, 3 if pool == "maxpool3" else 2, 2, ceil_mode=True)
    with b.block("head", "Classifier"):
        b.linear("fc", b.adaptive_avgpool("avgpool", x), num_classes)


# ---------------------------------------------------------------------------- Inception v3
def _inc_a(b, p, x, pool_features):
    b1 = _bc(b, f"{p}.branch1x1", x, 64, 1)
    b5 = _bc(b, f"{p}.branch5x5_2", _bc(b, f"{p}.branch5x5_1", x, 48, 1), 64, 5, 1, 2)
    b3 = _bc(b, f"{p}.branch3x3dbl_1", x, 64, 1)
    b3 = _bc(b, f"{p}.branch3x3dbl_2", b3, 96, 3, 1, 1)
    b3 = _bc(b, f"{p}.branch3x3dbl_3", b3, 96, 3, 1, 1)
    bp = _bc(b, f"{p}.branch_pool", b.pool(f"{p}.avgpool", x, 3, 1, 1, op="avgpool"), pool_features, 1)
    return b.concat(f"{p}.concat", [b1, b5, b3, bp])


def _inc_b(b, p, x):
    b3 = _bc(b, f"{p}.branch3x3", x, 384, 3, 2)
    bd = _bc(b, f"{p}.branch3x3dbl_1", x, 64, 1)
    bd = _bc(b, f"{p}.branch3x3dbl_2", bd, 96, 3, 1, 1)
    bd = _bc(b, f"{p}.branch3x3dbl_3", bd, 96, 3, 2)
    bp = b.pool(f"{p}.maxpool", x, 3, 2)
    return b.concat(f"{p}.concat", [b3, bd, bp])


def _inc_c(b, p, x, c7):
    b1 = _bc(b, f"{p}.branch1x1", x, 192, 1)
    b7 = _bc(b, f"{p}.branch7x7_1", x, c7, 1)
    b7 = _bc(b, f"{p}.branch7x7_2", b7, c7, (1, 7), 1, (0, 3))
    b7 = _bc(b, f"{p}.branch7x7_3", b7, 192, (7, 1), 1, (3, 0))
    bd = _bc(b, f"{p}.branch7x7dbl_1", x, c7, 1)
    bd = _bc(b, f"{p}.branch7x7dbl_2", bd, c7, (7, 1), 1, (3, 0))
    bd = _bc(b, f"{p}.branch7x7dbl_3", bd, c7, (1, 7), 1, (0, 3))
    bd = _bc(b, f"{p}.branch7x7dbl_4", bd, c7, (7, 1), 1, (3, 0))
    bd = _bc(b, f"{p}.branch7x7dbl_5", bd, 192, (1, 7), 1, (0, 3))
    bp = _bc(b, f"{p}.branch_pool", b.pool(f"{p}.avgpool", x, 3, 1, 1, op="avgpool"), 192, 1)
    return b.concat(f"{p}.concat", [b1, b7, bd, bp])


def _inc_d(b, p, x):
    b3 = _bc(b, f"{p}.branch3x3_2", _bc(b, f"{p}.branch3x3_1", x, 192, 1), 320, 3, 2)
    b7 = _bc(b, f"{p}.branch7x7x3_1", x, 192, 1)
    b7 = _bc(b, f"{p}.branch7x7x3_2", b7, 192, (1, 7), 1, (0, 3))
    b7 = _bc(b, f"{p}.branch7x7x3_3", b7, 192, (7, 1), 1, (3, 0))
    b7 = _bc(b, f"{p}.branch7x7x3_4", b7, 192, 3, 2)
    bp = b.pool(f"{p}.maxpool", x, 3, 2)
    return b.concat(f"{p}.concat", [b3, b7, bp])


def _inc_e(b, p, x):
    b1 = _bc(b, f"{p}.branch1x1", x, 320, 1)
    b3 = _bc(b, f"{p}.branch3x3_1", x, 384, 1)
    b3 = b.concat(f"{p}.branch3x3.concat", [_bc(b, f"{p}.branch3x3_2a", b3, 384, (1, 3), 1, (0, 1)),
                                            _bc(b, f"{p}.branch3x3_2b", b3, 384, (3, 1), 1, (1, 0))])
    bd = _bc(b, f"{p}.branch3x3dbl_2", _bc(b, f"{p}.branch3x3dbl_1", x, 448, 1), 384, 3, 1, 1)
    bd = b.concat(f"{p}.branch3x3dbl.concat", [_bc(b, f"{p}.branch3x3dbl_3a", bd, 384, (1, 3), 1, (0, 1)),
                                               _bc(b, f"{p}.branch3x3dbl_3b", bd, 384, (3, 1), 1, (1, 0))])
    bp = _bc(b, f"{p}.branch_pool", b.pool(f"{p}.avgpool", x, 3, 1, 1, op="avgpool"), 192, 1)
    return b.concat(f"{p}.concat", [b1, b3, bd, bp])


def build_inception_v3(b: GraphBuilder, num_classes: int = 1000, aux_logits: bool = True) -> None:
    stem = [("Conv2d_1a_3x3", 32, 3, 2, 0), ("Conv2d_2a_3x3", 32, 3, 1, 0), ("Conv2d_2b_3x3", 64, 3, 1, 1),
            ("maxpool1", 0, 3, 2, 0), ("Conv2d_3b_1x1", 80, 1, 1, 0), ("Conv2d_4a_3x3", 192, 3, 1, 0),
            ("maxpool2", 0, 3, 2, 0)]
    x = None
    for name, c, k, s, p in stem:
        with b.block(name, "Pool" if c == 0 else "BasicConv2d"):
            if x is None:
                x = b.input()
            x = b.pool(name, x, k, s) if c == 0 else _bc(b, name, x, c, k, s, p)
    mixed = [("Mixed_5b", "InceptionA", _inc_a, (32,)), ("Mixed_5c", "InceptionA", _inc_a, (64,)),
             ("Mixed_5d", "InceptionA", _inc_a, (64,)), ("Mixed_6a", "InceptionB", _inc_b, ()),
             ("Mixed_6b", "InceptionC", _inc_c, (128,)), ("Mixed_6c", "InceptionC", _inc_c, (160,)),
             ("Mixed_6d", "InceptionC", _inc_c, (160,)), ("Mixed_6e", "InceptionC", _inc_c, (192,)),
             ("Mixed_7a", "InceptionD", _inc_d, ()), ("Mixed_7b", "InceptionE", _inc_e, ()),
             ("Mixed_7c", "InceptionE", _inc_e, ())]
    for name, kind, fn, args in mixed:
        with b.block(name, kind):
            x = fn(b, name, x, *args)
        if name == "Mixed_6e" and aux_logits:
            with b.block("AuxLogits", "InceptionAux"):
                y = b.pool("AuxLogits.avgpool", x, 5, 3, op="avgpool")
                y = _bc(b, "AuxLogits.conv0", y, 128, 1)
                y = _bc(b, "AuxLogits.conv1", y, 768, 5)
                b.linear("AuxLogits.fc", b.adaptive_avgpool("AuxLogits.avgpool2", y), num_classes)
    with b.block("head", "Classifier"):
        b.linear("fc", b.adaptive_avgpool("avgpool", x), num_classes)
