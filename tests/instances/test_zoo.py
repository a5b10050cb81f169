"""Tests of the architecture zoo against published figures and hand computations.

Reference figures (none of them produced by this code):

* Parameter counts and MACs: torchvision ``Weights.meta`` ("num_params", "_ops"; the docs show
  "_ops" as GFLOPS, counted as conv + linear multiply-accumulates), e.g.
  https://pytorch.org/vision/stable/models.html and torchvision/models/{alexnet,vgg,resnet,
  googlenet,inception,mobilenetv2,densenet}.py: alexnet 61,100,840 / 0.714; vgg16 138,357,544 /
  15.47; resnet18 11,689,512 / 1.814; resnet34 21,797,672 / 3.664; resnet50 25,557,032 / 4.089;
  resnet101 44,549,160 / 7.801; resnet152 60,192,808 / 11.514; googlenet 6,624,904 / 1.498
  (without aux heads); inception_v3 27,161,264 (with AuxLogits) / 5.713 (eval forward, at 299);
  mobilenet_v2 3,504,872 / 0.301; densenet121 7,978,856 / 2.834 (the brief's 2.87 is not the
  torchvision figure).
* Darknet YOLOv2 page (https://pjreddie.com/darknet/yolov2/) "Bn FLOPs" (= 2 x MACs, Darknet's
  ``l.bflops = 2 * n * size^2 * c * out_h * out_w``): YOLOv2 VOC 416: 34.90, 544: 59.68 (original
  yolo-voc.cfg); Tiny YOLO VOC 416: 6.97; YOLOv2 COCO 608: 62.94.
* ResNet parts: digest 003 §3.2 (n = 11/19/19/36/53) and the per-part tables of §3.4.
"""

from __future__ import annotations

import math

import networkx as nx
import pytest

from splitopt.errors import InstanceError
from splitopt.instances import zoo
from splitopt.instances.graph import DNNGraph

TORCHVISION = {  # name: (num_params, GMACs) as published by torchvision
    "alexnet": (61_100_840, 0.714),
    "vgg16": (138_357_544, 15.47),
    "resnet18": (11_689_512, 1.814),
    "resnet34": (21_797_672, 3.664),
    "resnet50": (25_557_032, 4.089),
    "resnet101": (44_549_160, 7.801),
    "resnet152": (60_192_808, 11.514),
    "googlenet": (6_624_904, 1.498),
    "inception_v3": (27_161_264, 5.713),
    "mobilenet_v2": (3_504_872, 0.301),
    "densenet121": (7_978_856, 2.834),
}

_CACHE: dict = {}


def graph(name, *args, **kw) -> DNNGraph:
    key = (name, args, tuple(sorted(kw.items())))
    if key not in _CACHE:
        _CACHE[key] = zoo.get(name, *args, **kw)
    return _CACHE[key]


def macs(g, pred=lambda lay: True) -> float:
    return math.fsum(lay.meta["macs"] for lay in g.layers if pred(lay))


def params(g) -> int:
    return round(g.totals()["params"])


# ------------------------------------------------------------------ registry and API
def test_list_models_is_the_documented_set():
    assert zoo.list_models() == sorted([
        "alexnet", "vgg16", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "googlenet",
        "inception_v3", "mobilenet_v2", "densenet121", "tiny_yolov2", "yolov2"])


def test_unknown_name_lists_known_names():
    with pytest.raises(InstanceError) as exc:
        zoo.get("resnet51")
    assert exc.value.path == "name"
    assert "'resnet51'" in str(exc.value) and "resnet50" in str(exc.value) and "yolov2" in str(exc.value)
    with pytest.raises(InstanceError):
        zoo.describe("nope")


@pytest.mark.parametrize("kw, path", [
    ({"batch": 0}, "batch"), ({"batch": 1.5}, "batch"), ({"batch": True}, "batch"),
    ({"input_size": 31}, "input_size"), ({"input_size": "224"}, "input_size"),
    ({"input_size": (224, 224, 3)}, "input_size"), ({"aux_logits": True}, "aux_logits"),
    ({"num_classes": 0}, "num_classes"),
])
def test_bad_arguments_name_the_field(kw, path):
    with pytest.raises(InstanceError) as exc:
        zoo.get("vgg16", **kw)
    assert exc.value.path == path


def test_min_input_sizes():
    # torchvision min_size metadata: googlenet 15, inception_v3 75 (eval mode, no aux head),
    # densenet 29, alexnet 63
    for name, m, kw in [("googlenet", 15, {}), ("inception_v3", 75, {"aux_logits": False}),
                        ("densenet121", 29, {}), ("alexnet", 63, {})]:
        g = zoo.get(name, m, **kw)
        assert all(s >= 1 for lay in g.layers for s in lay.meta["shape"])
        with pytest.raises(InstanceError, match="input_size"):
            zoo.get(name, m - 1, **kw)
    # the aux head's 5x5/3 pool needs a larger map: the error names the input size and the layer
    with pytest.raises(InstanceError, match="AuxLogits.avgpool"):
        zoo.get("inception_v3", 75)


def test_describe_mentions_source_and_default_size():
    d = zoo.describe("inception_v3")
    assert "Rethinking the Inception Architecture" in d and "299x299" in d
    assert "1512.03385" in zoo.describe("resnet50")


def test_graph_meta_records_input_size_batch_and_source():
    g = zoo.get("resnet18", 160, batch=4)
    assert g.name == "resnet18"
    assert g.meta["input_size"] == [160, 160] and g.meta["batch"] == 4
    assert "Deep Residual Learning" in g.meta["source"]
    assert graph("inception_v3").meta["input_size"] == [299, 299]
    assert graph("yolov2").meta["input_size"] == [416, 416]
    assert graph("tiny_yolov2").meta["input_size"] == [416, 416]


# ------------------------------------------------------------------ published totals
@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_parameter_count_equals_torchvision_exactly(name):
    assert params(graph(name)) == TORCHVISION[name][0]


@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_macs_match_torchvision_within_one_percent(name):
    got = macs(graph(name)) / 1e9
    assert got == pytest.approx(TORCHVISION[name][1], rel=0.01)


def test_resnet_macs_match_to_published_precision():
    # torchvision gives 4 significant digits; the digest 003 §3.4 totals agree: 1.814 ... 11.514
    for name in ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152"):
        assert round(macs(graph(name)) / 1e9, 3) == TORCHVISION[name][1]


def test_inception_v3_aux_head_is_in_params_not_in_eval_macs():
    g = graph("inception_v3")
    eval_macs = macs(g, lambda lay: lay.block != "AuxLogits") / 1e9
    assert round(eval_macs, 3) == 5.713
    # hand count of AuxLogits: conv0 768*128 + bn 2*128; conv1 128*768*25 + bn 2*768; fc 768*1000 + 1000
    aux = (768 * 128 + 256) + (128 * 768 * 25 + 1536) + (768 * 1000 + 1000)
    assert params(zoo.get("inception_v3", aux_logits=False)) == 27_161_264 - aux == 23_834_568
    assert len(g.outputs) == 2


def test_googlenet_aux_heads_hand_count():
    # InceptionAux(in): BasicConv2d(in,128,1) + Linear(2048,1024) + Linear(1024,1000); in = 512, 528
    def aux(c_in):
        return (c_in * 128 + 2 * 128) + (2048 * 1024 + 1024) + (1024 * 1000 + 1000)

    g = zoo.get("googlenet", aux_logits=True)
    assert params(g) == 6_624_904 + aux(512) + aux(528) == 13_004_888
    assert len(g.outputs) == 3


def test_darknet_bflops():
    bflops = lambda g: 2 * macs(g) / 1e9  # noqa: E731
    assert round(bflops(graph("tiny_yolov2")), 2) == 6.97
    old_voc = {"num_classes": 20, "passthrough_conv": False}
    assert round(bflops(zoo.get("yolov2", 416, **old_voc)), 2) == 34.90
    assert round(bflops(zoo.get("yolov2", 544, **old_voc)), 2) == 59.68
    assert round(bflops(zoo.get("yolov2", 608)), 2) == 62.94
    # default: yolov2.cfg (COCO, passthrough conv) at 416 lies in the brief's 29.4-34.9 range
    assert 29.4 <= bflops(graph("yolov2")) <= 29.5


def test_tiny_yolov2_macs_by_hand():
    # 3x3 convs (stride 1, same padding) at 416/208/104/52/26/13/13/13, then the 1x1 125-filter head
    hand = (416**2 * 3 * 9 * 16 + 208**2 * 16 * 9 * 32 + 104**2 * 32 * 9 * 64 + 52**2 * 64 * 9 * 128
            + 26**2 * 128 * 9 * 256 + 13**2 * 256 * 9 * 512 + 13**2 * 512 * 9 * 1024
            + 13**2 * 1024 * 9 * 1024 + 13**2 * 1024 * 125)
    assert macs(graph("tiny_yolov2")) == hand


# ------------------------------------------------------------------ structure
@pytest.mark.parametrize("name", zoo.list_models())
def test_graph_is_valid_acyclic_with_one_input(name):
    g = graph(name)
    DNNGraph.from_dict(g.to_dict())  # re-validates
    assert nx.is_directed_acyclic_graph(g.to_networkx())
    assert len(g.inputs) == 1
    inp = g.layers[g.inputs[0]]
    h, w = g.meta["input_size"]
    assert inp.op == "input" and inp.fwd_flop == 0 and inp.param_bytes == 0
    assert inp.out_bytes == 3 * h * w * 4
    assert sum(lay.op == "input" for lay in g.layers) == 1
    for e in g.edges:  # producer -> consumer in topological order
        assert g.index(e.src) < g.index(e.dst)
    for lay in g.layers:
        assert lay.block is not None and lay.block_kind is not None
        assert lay.out_bytes == 4 * math.prod(lay.meta["shape"])
        assert lay.bwd_flop == 2 * lay.fwd_flop


def test_json_round_trip_is_equal():
    g = graph("googlenet")
    assert DNNGraph.from_dict(g.to_dict()) == g


@pytest.mark.parametrize("name, layer, shape", [
    ("resnet50", "layer4.2.relu3", [2048, 7, 7]),
    ("resnet18", "layer4.1.relu2", [512, 7, 7]),
    ("resnet50", "fc", [1000]),
    ("vgg16", "features.30", [512, 7, 7]),
    ("alexnet", "features.12", [256, 6, 6]),
    ("alexnet", "features.0", [64, 55, 55]),
    ("googlenet", "maxpool1", [64, 56, 56]),
    ("googlenet", "inception3a.concat", [256, 28, 28]),
    ("googlenet", "inception5b.concat", [1024, 7, 7]),
    ("inception_v3", "maxpool2", [192, 35, 35]),
    ("inception_v3", "Mixed_6e.concat", [768, 17, 17]),
    ("inception_v3", "Mixed_7c.concat", [2048, 8, 8]),
    ("inception_v3", "AuxLogits.conv1.relu", [768, 1, 1]),
    ("mobilenet_v2", "features.18.2", [1280, 7, 7]),
    ("mobilenet_v2", "features.17.conv.3", [320, 7, 7]),
    ("densenet121", "features.denseblock1.cat", [256, 56, 56]),
    ("densenet121", "features.norm5", [1024, 7, 7]),
    ("yolov2", "l28.route", [1280, 13, 13]),
    ("yolov2", "l27.reorg", [256, 13, 13]),
    ("yolov2", "l30.conv", [425, 13, 13]),
    ("tiny_yolov2", "l11.maxpool", [512, 13, 13]),
    ("tiny_yolov2", "l14.conv", [125, 13, 13]),
])
def test_output_shapes_at_known_points(name, layer, shape):
    assert graph(name).layer(layer).meta["shape"] == shape


def test_resnet_layer_counts_by_hand():
    # input + stem (conv1, bn1, relu, maxpool) + blocks + downsample pairs + (avgpool, fc)
    assert len(graph("resnet50")) == 1 + 4 + 16 * 10 + 4 * 2 + 2 == 175
    assert len(graph("resnet18")) == 1 + 4 + 8 * 7 + 3 * 2 + 2 == 69
    assert len(graph("resnet152")) == 1 + 4 + 50 * 10 + 4 * 2 + 2


def test_fan_out_is_real():
    r = graph("resnet50")
    # first block of a stage: its input feeds conv1 and the downsample conv
    assert sorted(r.names[j] for j in r.succ(r.index("layer1.2.relu3"))) == ["layer2.0.conv1", "layer2.0.downsample.0"]
    assert sorted(r.names[j] for j in r.succ(r.index("layer2.0.relu3"))) == ["layer2.1.add", "layer2.1.conv1"]
    d = graph("densenet121")
    # block input feeds denselayer1, the concats of denselayers 2..6 and the block-end concat
    assert d.fan_out(d.index("features.pool0")) == 1 + 5 + 1
    assert d.fan_in(d.index("features.denseblock4.cat")) == 17
    y = graph("yolov2")
    assert sorted(y.names[j] for j in y.succ(y.index("l16.leaky"))) == ["l17.maxpool", "l26.conv"]


# ------------------------------------------------------------------ block labels
@pytest.mark.parametrize("name, n", [("resnet18", 11), ("resnet34", 19), ("resnet50", 19),
                                     ("resnet101", 36), ("resnet152", 53)])
def test_resnet_parts_match_digest_003(name, n):
    parts = graph(name).collapse_by_block()
    assert len(parts) == n and parts.is_chain()
    kinds = [lay.block_kind for lay in parts.layers]
    assert kinds[:2] == ["Stem", "Stem"] and kinds[-1] == "Classifier"


def test_resnet_part_data_match_digest_003_tables():
    # digest 003 §3.4 (derived independently there): params, MMAC/image, s_j bytes for batch 16 fp32
    p18_full = zoo.get("resnet18", batch=16)
    p18 = p18_full.collapse_by_block()
    rows18 = {0: (9_536, 118.0, 51_380_224), 1: (0, 0.0, 12_845_056), 4: (230_144, 179.8, 6_422_528),
              9: (4_720_640, 231.2, 1_605_632), 10: (513_000, 0.5, 64_000)}
    for j, (prm, mmac, sbytes) in rows18.items():
        lay = p18.layers[j]
        assert round(lay.params) == prm
        assert math.fsum(p18_full.layer(m).meta["macs"] for m in _members(lay)) / 16 / 1e6 == pytest.approx(mmac, abs=0.05)
        assert lay.out_bytes == sbytes  # the tensor leaving the part (the logits for the head)
    p50 = graph("resnet50").collapse_by_block()
    assert [round(p50.layers[j].params) for j in (2, 3, 5, 15, 18)] == [75_008, 70_400, 379_392, 6_039_552, 2_049_000]
    # conv counts per part (c_j, including downsample convs): C_total = 53
    n_conv = [sum(graph("resnet50").layer(m).op == "conv" for m in _members(lay)) for lay in p50.layers]
    assert sum(n_conv) == 53 and n_conv[:4] == [1, 0, 4, 3]


def _members(lay):
    return lay.meta.get("members", [lay.name])


def test_darknet_granularity_by_block():
    # yolov2.cfg: 23 conv + 5 maxpool + reorg + route(concat); tiny: 9 conv + 6 maxpool
    assert len(graph("yolov2").collapse_by_block()) == 30
    assert len(graph("tiny_yolov2").collapse_by_block()) == 15
    assert sum(lay.op == "conv" for lay in graph("yolov2").layers) == 23


def test_other_block_labels():
    assert len(graph("densenet121").collapse_by_block()) == 1 + 58 + 3 + 1
    g = graph("googlenet").collapse_by_block()
    assert g.is_chain() and [lay.block for lay in g.layers][:3] == ["stem", "inception3a", "inception3b"]
    assert graph("mobilenet_v2").layer("features.3.add").block_kind == "InvertedResidual"


# ------------------------------------------------------------------ cost conventions
def test_costs_scale_with_batch_and_follow_the_convention():
    g1, g16 = graph("resnet18"), zoo.get("resnet18", batch=16)
    for a, b in zip(g1.layers, g16.layers):
        assert b.out_bytes == 16 * a.out_bytes
        assert b.fwd_flop == pytest.approx(16 * a.fwd_flop)
        assert b.param_bytes == a.param_bytes
    conv = g1.layer("layer1.0.conv1")  # 64 -> 64, 3x3, 56x56
    assert conv.meta["macs"] == 64 * 56 * 56 * 64 * 9
    assert conv.fwd_flop == 2 * conv.meta["macs"] and conv.bwd_flop == 2 * conv.fwd_flop
    assert conv.param_bytes == 4 * 64 * 64 * 9
    bn = g1.layer("layer1.0.bn1")
    assert bn.fwd_flop == 2 * 64 * 56 * 56 and bn.param_bytes == 4 * 2 * 64 and bn.meta["macs"] == 0
    fc = g1.layer("fc")
    assert fc.meta["macs"] == 512 * 1000 and fc.param_bytes == 4 * (512 * 1000 + 1000)
    # element ops add little on top of the MACs for a ResNet
    assert g1.totals()["fwd_flop"] / (2 * macs(g1)) == pytest.approx(1.0, abs=0.01)


def test_non_square_input():
    g = zoo.get("resnet50", (224, 320))
    assert g.layer("layer4.2.relu3").meta["shape"] == [2048, 7, 10]
    assert params(g) == 25_557_032
