"""from_torch (torch.export importer), `splitopt import torch` and measured profiles (issue 23).

Expected values are derived independently of the importer: FLOP and bytes from the layer
formulas (2 * Cout * Cin * k * k * Hout * Wout * N for a convolution), parameter totals from
``module.parameters()``, seconds from the profile's own per-layer records."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from cases.torch_models import Reuse  # noqa: E402
from splitopt.cli import main  # noqa: E402
from splitopt.errors import InstanceError  # noqa: E402
from splitopt.instances import io  # noqa: E402
from splitopt.instances.importers.torch import TorchImportError, from_torch, load_factory  # noqa: E402


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.c2 = nn.Conv2d(4, 6, 3, stride=2, padding=1, bias=False)
        self.fc = nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        return self.fc(torch.flatten(self.c2(torch.relu(self.c1(x))), 1))


def test_flop_bytes_params_of_each_layer():
    g = from_torch(Plain().eval(), (torch.randn(2, 3, 8, 8),))
    assert g.names == ["input", "c1", "c2", "fc"] and g.is_chain()
    c1, c2, fc = g.layer("c1"), g.layer("c2"), g.layer("fc")
    assert c1.fwd_flop == 2 * 4 * 3 * 9 * 8 * 8 * 2           # N=2, 8x8 output
    assert c2.fwd_flop == 2 * 6 * 4 * 9 * 4 * 4 * 2           # stride 2: 4x4 output
    assert fc.fwd_flop == 2 * 2 * 96 * 5
    assert g.layer("input").out_bytes == 2 * 3 * 8 * 8 * 4
    assert c1.out_bytes == 2 * 4 * 8 * 8 * 4                    # the relu (root code) is c1's: its output leaves
    assert c2.out_bytes == 2 * 96 * 4                           # flatten keeps the bytes
    assert fc.out_bytes == 2 * 5 * 4                            # the model's output
    assert (c1.param_bytes, c2.param_bytes, fc.param_bytes) == (4 * (4 * 27 + 4), 4 * 6 * 36, 4 * (96 * 5 + 5))
    assert g.meta["torch"]["split_points"] == {"c1": "c1", "c2": "c2", "fc": "fc"}


def test_backward_flop_skips_the_input_gradient():
    g = from_torch(Plain().train(), (torch.randn(2, 3, 8, 8),), training=True)
    # the first conv needs only its weight gradient (the raw input needs none): bwd = fwd;
    # later layers need the input gradient too: bwd = 2 fwd
    assert g.layer("c1").bwd_flop == g.layer("c1").fwd_flop
    assert g.layer("c2").bwd_flop == 2 * g.layer("c2").fwd_flop
    assert g.layer("fc").bwd_flop == 2 * g.layer("fc").fwd_flop


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.mid = nn.Linear(8, 8)
        self.head = nn.Linear(8, 30, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, idx):
        return self.head(torch.tanh(self.mid(self.emb(idx))))


def test_tied_weights_counted_once_at_first_use():
    m = Tied().eval()
    g = from_torch(m, (torch.zeros(1, 5, dtype=torch.long),))
    unique = sum(p.numel() for p in m.parameters())             # parameters() deduplicates tied ones
    assert unique == 30 * 8 + 8 * 8 + 8
    assert g.totals()["param_bytes"] == 4 * unique
    assert g.layer("emb").param_bytes == 4 * 30 * 8 and g.layer("head").param_bytes == 0


def test_op_level_keeps_totals_and_names_modules():
    m = load_factory("splitopt.instances.importers.torch_examples:residual_cnn")
    x = torch.randn(1, 3, 16, 16)
    gm, go = from_torch(m, (x,)), from_torch(m, (x,), level="op")
    assert len(go) > 3 * len(gm)
    for key in ("fwd_flop", "param_bytes"):
        assert go.totals()[key] == pytest.approx(gm.totals()[key], rel=1e-12)
    convs = [lay for lay in go.layers if lay.op == "conv2d"]
    assert len(convs) == sum(isinstance(x, nn.Conv2d) for x in m.modules())
    assert {lay.meta["fqn"] for lay in convs} == {n for n, x in m.named_modules() if isinstance(x, nn.Conv2d)}


def test_depth_chooses_the_units():
    m = load_factory("splitopt.instances.importers.torch_examples:residual_cnn")
    x = torch.randn(1, 3, 16, 16)
    auto = from_torch(m, (x,))
    # default: containers expand while they form a chain; residual blocks (skip edges) stay whole
    assert auto.names == ["input", "stem.0", "stem.1", "stem.2", *[f"blocks.{i}" for i in range(6)], "pool", "fc"]
    assert from_torch(m, (x,), depth=1).names == ["input", "stem", "blocks", "pool", "fc"]
    d3 = from_torch(m, (x,), depth=3)
    assert "blocks.0.conv1" in d3 and "blocks.2.down" in d3 and not d3.is_chain()


def test_a_module_called_twice_is_no_split_point():
    g = from_torch(Reuse().eval(), (torch.randn(2, 4),))
    assert g.names == ["input", "act", "a", "act@1", "b"]
    assert set(g.meta["torch"]["split_points"]) == {"a", "b"}


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.ok = nn.Linear(4, 4)
        self.bad = DataDependent()

    def forward(self, x):
        return self.bad(self.ok(x))


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent control flow: torch.export cannot trace it
            return x * 2
        return x


def test_untraceable_module_is_named():
    with pytest.raises(TorchImportError) as e:
        from_torch(Branchy().eval(), (torch.randn(2, 4),))
    msg = str(e.value)
    assert "'bad' (DataDependent)" in msg and "\n" not in msg


def test_bad_arguments():
    with pytest.raises(InstanceError, match="level"):
        from_torch(Plain(), (torch.randn(1, 3, 8, 8),), level="layer")
    with pytest.raises(InstanceError, match="depth"):
        from_torch(Plain(), (torch.randn(1, 3, 8, 8),), depth=0)
    with pytest.raises(InstanceError, match="no attribute"):
        load_factory("splitopt.instances.importers.torch_examples:nothing")


MODEL_FILE = """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(6, 5)
        self.l2 = torch.nn.Linear(5, 3)
        self.gate = Gate()
    def forward(self, x):
        return self.gate(self.l2(self.l1(x)))
class Gate(torch.nn.Module):
    def forward(self, x):
        return x if x.max() > 0 else -x
def ok():
    net = Net()
    net.gate = torch.nn.Identity()
    return net
"""


def test_cli_import_torch(tmp_path, capsys):
    src = tmp_path / "mymodel.py"
    src.write_text(MODEL_FILE)
    out = tmp_path / "g.json"
    assert main(["import", "torch", f"{src}:ok", "--input", "4x6", "--training", "-o", str(out)]) == 0
    g = io.load(out)
    assert g.names == ["input", "l1", "l2"]  # nn.Identity runs no operator: no layer
    assert g.layer("l1").fwd_flop == 2 * 4 * 6 * 5 and g.layer("l2").bwd_flop == 2 * (2 * 4 * 5 * 3)
    assert g.meta["torch"]["model"] == f"{src}:ok" and g.meta["params"] == 6 * 5 + 5 + 5 * 3 + 3
    capsys.readouterr()
    assert main(["import", "torch", f"{src}:Net", "--input", "4x6", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("splitopt: error: torch.export: cannot trace module 'gate' (Gate)") and "\n" not in err
    assert main(["import", "torch", f"{src}:ok", "--input", "4xq", "-o", str(out)]) == 2
    assert "--input[0]" in capsys.readouterr().err


def test_profile_writes_measured_seconds_that_instances_use(tmp_path, capsys):
    from splitopt.instances.grouping import GroupingInstance
    from splitopt.instances.split import SplitInstance

    spec = "splitopt.instances.importers.torch_examples:residual_cnn"
    path = tmp_path / "cnn.json"
    assert main(["import", "torch", spec, "--input", "2x3x16x16", "--training", "-o", str(path)]) == 0
    assert main(["profile", str(path), "--repeat", "3", "--warmup", "1", "--training"]) == 0
    assert "median of 3" in capsys.readouterr().out
    g = io.load(path)
    p = g.meta["profile"]
    assert p["machine"] == "cpu" and p["repeat"] == 3 and p["warmup"] == 1 and p["date"].endswith("Z")
    assert g.layer("input").fwd_seconds["cpu"] == 0.0
    for lay in g.layers[1:]:
        s, pr = lay.fwd_seconds["cpu"], lay.meta["profile"]
        assert 0 < pr["fwd_min_s"] <= s <= pr["fwd_max_s"]
        assert "cpu" in lay.bwd_seconds
    assert p["fwd_total_s"] == pytest.approx(math.fsum(lay.fwd_seconds["cpu"] for lay in g.layers), rel=1e-12)
    # every builder takes the measured seconds as it takes FLOP
    gi = GroupingInstance.from_graph(g, 2, machine="cpu")
    assert gi.t[0] == pytest.approx(g.layer("stem.0").fwd_seconds["cpu"], rel=1e-12)   # input + stem.0
    assert math.fsum(gi.t) == pytest.approx(p["fwd_total_s"], rel=1e-9)
    si = SplitInstance.from_graph(g, up_bytes_per_s=1e6, mode="training", machine_class="cpu", timing="measured")
    assert si.graph.layer("fc").bwd_seconds["cpu"] == g.layer("fc").bwd_seconds["cpu"]


def test_profile_onnx(tmp_path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from splitopt.instances.profile import profile_onnx

    path = tmp_path / "m.onnx"
    torch.onnx.export(Plain().eval(), (torch.randn(1, 3, 8, 8),), str(path), dynamo=False)
    g = profile_onnx(path, repeat=3, warmup=1)
    assert g.meta["profile"]["tool"].startswith("onnxruntime")
    assert all("cpu" in lay.fwd_seconds for lay in g.layers if lay.op != "input")


def test_torchvision_resnet18_matches_the_zoo():
    try:
        import torchvision  # noqa: F401
    except Exception:  # noqa: BLE001 - PyPI's torchvision fails to import beside the CPU torch wheel
        pytest.skip("torchvision is not importable")
    from splitopt.instances import zoo

    m = load_factory("torchvision:resnet18")
    g = from_torch(m, (torch.randn(1, 3, 224, 224),))
    assert g.totals()["params"] == zoo.get("resnet18").totals()["params"] == 11_689_512


class _Basic(nn.Module):
    def __init__(self, c_in, c, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.downsample = (nn.Sequential(nn.Conv2d(c_in, c, 1, stride, bias=False), nn.BatchNorm2d(c))
                           if stride != 1 or c_in != c else None)

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + idt)


class _ResNet18(nn.Module):
    """ResNet-18 as torchvision.models.resnet18 defines it (He et al. 2016, v1.5), written out here."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        c, stages = 64, []
        for w, s in ((64, 1), (128, 2), (256, 2), (512, 2)):
            stages.append(nn.Sequential(_Basic(c, w, s), _Basic(w, w, 1)))
            c = w
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def test_resnet18_written_out_matches_the_zoo():
    """The analytic zoo and the importer agree on ResNet-18: parameters, and forward FLOP = 2 x the
    zoo's conv + linear MACs (FlopCounterMode counts exactly those ops)."""
    from splitopt.instances import zoo

    g = from_torch(_ResNet18().eval(), (torch.randn(1, 3, 224, 224),))
    z = zoo.get("resnet18").totals()
    assert g.totals()["params"] == z["params"] == 11_689_512
    assert g.totals()["fwd_flop"] == 2 * z["macs"]
    # the default units: stem modules, the eight residual blocks, pool and classifier
    assert g.names[1:] == ["conv1", "bn1", "relu", "maxpool", *[f"layer{i}.{j}" for i in range(1, 5) for j in (0, 1)],
                           "avgpool", "fc"]


def test_measured_seconds_as_flop_for_flop_only_builders():
    """A layer measured at s seconds, stated as FLOP at rate R, costs s on a node of rate R and s/4 on
    one 4x faster (the throughput family's per-layer compute time c_i / eta_k)."""
    from splitopt.instances.profile import measured_as_flop, profile_torch
    from splitopt.instances.throughput import ThroughputInstance

    m = load_factory("splitopt.instances.importers.torch_examples:residual_cnn")
    x = torch.randn(1, 3, 16, 16)
    g = profile_torch(from_torch(m, (x,)), m, (x,), repeat=2, warmup=1)
    gf = measured_as_flop(g, "cpu", 1e9)
    assert gf.layer("fc").meta["counted_fwd_flop"] == g.layer("fc").fwd_flop
    inst = ThroughputInstance.from_graph(gf, [1e9, 4e9], 1e8)
    from splitopt.families import evaluate

    total = math.fsum(lay.fwd_seconds["cpu"] for lay in g.layers)
    # every layer on one node, no transfer: the family's evaluator gives the measured total / speed-up
    assert evaluate(inst, ["n0"] * len(inst.layers))[0] == pytest.approx(total, rel=1e-9)
    assert evaluate(inst, ["n1"] * len(inst.layers))[0] == pytest.approx(total / 4, rel=1e-9)
    with pytest.raises(InstanceError, match="no measured seconds"):
        measured_as_flop(g, "gpu")


class _Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50, 16)
        self.wpe = nn.Embedding(8, 16)
        self.h = nn.ModuleList(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True) for _ in range(3))
        self.ln_f = nn.LayerNorm(16)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class _LM(nn.Module):
    """The Hugging Face GPT-2 layout: a wrapper module holding the blocks, a tied head beside it."""

    def __init__(self):
        super().__init__()
        self.transformer = _Enc()
        self.lm_head = nn.Linear(16, 50, bias=False)
        self.lm_head.weight = self.transformer.wte.weight

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


def test_auto_depth_opens_wrappers_down_to_the_blocks():
    g = from_torch(_LM().eval(), (torch.zeros(2, 8, dtype=torch.long),))
    assert g.names == ["input", "transformer.wte", "transformer.wpe", "transformer.h.0", "transformer.h.1",
                       "transformer.h.2", "transformer.ln_f", "lm_head"] and g.is_chain()
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    assert from_torch(seq.eval(), (torch.randn(2, 4),)).names == ["input", "0", "1", "2"]
