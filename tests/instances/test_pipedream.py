"""PipeDream profile importer.

Expected counts and totals are computed here directly from the raw text of the packaged files
(line counting and a regex), independently of the importer's parser.
"""

from __future__ import annotations

import math
import re
from importlib import resources

import pytest

from splitopt.errors import InstanceError
from splitopt.instances import io
from splitopt.instances.importers.pipedream import load_packaged, load_pipedream, packaged_profiles

PROFILES = ["alexnet", "gnmt", "inception_v3", "resnet18", "squeezenet1_0", "vgg16"]
README_LAYERS = {"alexnet": 23, "vgg16": 41, "resnet18": 71, "inception_v3": 326, "squeezenet1_0": 68}
NUM = r"([0-9]+(?:\.[0-9]*)?)"


def raw(name: str) -> str:
    return resources.files("splitopt.instances").joinpath("data", "pipedream", name, "graph.txt").read_text()


def raw_facts(text: str) -> dict:
    lines = [ln for ln in text.split("\n") if ln.strip()]
    layer_lines = [ln for ln in lines if not ln.startswith("\t")]
    edge_lines = [ln for ln in lines if ln.startswith("\t")]
    fwd = bwd = act = par = load = 0.0
    for ln in layer_lines:
        f = float(re.search(r"forward_compute_time=" + NUM, ln).group(1))
        is_input = re.match(r"^\S+ -- Input\d* -- ", ln) is not None
        if is_input:
            load += f
        else:
            fwd += f
        bwd += float(re.search(r"backward_compute_time=" + NUM, ln).group(1))
        a = re.search(r"activation_size=(\[[^\]]*\]|[0-9.]+)", ln).group(1)
        act += sum(float(x) for x in re.findall(r"[0-9]+(?:\.[0-9]*)?", a))
        par += float(re.search(r"parameter_size=" + NUM, ln).group(1))
    return {"layers": len(layer_lines), "edges": len(edge_lines), "fwd_ms": fwd, "bwd_ms": bwd,
            "act": act, "par": par, "load_ms": load}


def test_packaged_list_and_licence_files():
    assert packaged_profiles() == PROFILES
    root = resources.files("splitopt.instances").joinpath("data", "pipedream")
    lic = root.joinpath("LICENSE.txt").read_text()
    assert lic.startswith("MIT License") and "Microsoft Corporation" in lic
    assert "msr-fiddle/pipedream" in root.joinpath("README.md").read_text()


@pytest.mark.parametrize("name", PROFILES)
def test_packaged_profile_matches_raw_text(name):
    g = load_packaged(name)
    facts = raw_facts(raw(name))
    assert len(g) == facts["layers"]
    if name in README_LAYERS:
        assert len(g) == README_LAYERS[name]
    assert len(g.edges) == facts["edges"]
    fwd_ms = math.fsum(lay.fwd_seconds["pipedream_gpu"] for lay in g.layers) * 1000
    bwd_ms = math.fsum(lay.bwd_seconds["pipedream_gpu"] for lay in g.layers) * 1000
    load_ms = math.fsum(lay.meta.get("load_seconds", 0.0) for lay in g.layers) * 1000
    assert fwd_ms == pytest.approx(facts["fwd_ms"], rel=1e-12, abs=1e-9)
    assert bwd_ms == pytest.approx(facts["bwd_ms"], rel=1e-12, abs=1e-9)
    assert load_ms == pytest.approx(facts["load_ms"], rel=1e-12, abs=1e-9)
    t = g.totals()
    assert t["out_bytes"] == pytest.approx(facts["act"], rel=1e-12)
    assert t["param_bytes"] == pytest.approx(facts["par"], rel=1e-12)
    assert g.meta["licence"].startswith("MIT") and "msr-fiddle/pipedream" in g.meta["source"]
    assert "Microsoft" in g.meta["copyright"]
    for e in g.edges:
        assert g.index(e.src) < g.index(e.dst)
    assert g.collapse().is_chain()


def test_alexnet_details_by_hand():
    g = load_packaged("alexnet")
    first = g.layers[0]
    assert first.name == "node1" and first.op == "Input" and g.inputs == (0,)
    # published fact: the input mini-batch is 256 x 3 x 224 x 224 fp32
    assert first.out_bytes == 256 * 3 * 224 * 224 * 4
    assert first.meta["load_seconds"] == pytest.approx(0.635902)
    assert first.fwd_seconds["pipedream_gpu"] == 0.0
    conv1 = g.layer("node2")
    assert conv1.op == "Conv2d" and conv1.meta["module"].startswith("Conv2d(3, 64, kernel_size=(11, 11)")
    assert conv1.fwd_seconds["pipedream_gpu"] == pytest.approx(0.022316)
    assert conv1.bwd_seconds["pipedream_gpu"] == pytest.approx(0.006405)
    assert conv1.param_bytes == 93184.0  # (3*11*11*64 + 64) * 4
    # node14 (MaxPool) fans out to Size (node15) and View (node16); the only non-articulation layer is node15
    assert g.fan_out(g.index("node14")) == 2
    arts = {g.layers[i].name for i in g.articulation_layers}
    assert set(g.names) - arts == {"node15"}
    # natural order of ids is a topological order of AlexNet's chain-with-one-diamond
    assert g.names == [f"node{i}" for i in range(1, 24)]


def test_gnmt_tuple_outputs_use_ports():
    g = load_packaged("gnmt")
    lstm = g.layer("node7")  # LSTM(2048, 1024) -> [6291456.0; 131072.0; 131072.0]
    assert lstm.out_bytes == 6291456.0 and lstm.extra_out_bytes == (131072.0, 131072.0)
    ports = {(e.src, e.dst): e.port for e in g.edges}
    assert ports[("node7", "node8")] == 0 and ports[("node7", "node9")] == 1       # __getitem__(0), (1)
    assert ports[("node23", "node26")] == 2 and ports[("node23", "node27")] == 3   # RecurrentAttention
    # the 'hidden' layer is single-output: its __getitem__(k) consumers use port 0
    assert ports[("node20", "node30")] == 0
    assert {g.layers[i].name for i in g.inputs} == {"node1", "node2", "node3", "node20"}
    assert g.layer("node5").op == "EmuBidirLSTM"
    assert "(layer2): LSTM(1024, 1024)" in g.layer("node5").meta["module"]


def test_json_round_trip_keeps_attribution(tmp_path):
    g = load_packaged("resnet18")
    g2 = io.load(io.save(g, tmp_path / "r.json"))
    assert g2 == g and g2.meta["licence"] == g.meta["licence"] and g2.meta["source"] == g.meta["source"]


GOOD = (
    "a1 -- Input -- forward_compute_time=5.000, backward_compute_time=0.000, activation_size=100.0, parameter_size=0.000\n"
    "a2 -- Linear(in_features=4, out_features=2, bias=True) -- forward_compute_time=1.500, backward_compute_time=2.000, activation_size=8.0, parameter_size=40.000 -- stage_id=1\n"
    "\ta1 -- a2\n"
)


def test_text_and_file_loading(tmp_path):
    g = load_pipedream(GOOD)
    assert g.name == "pipedream" and g.names == ["a1", "a2"]
    assert g.layer("a2").meta["stage_id"] == 1 and g.layer("a2").op == "Linear"
    assert g.layer("a2").fwd_seconds == {"pipedream_gpu": 0.0015}
    assert g.layer("a1").meta["load_seconds"] == 0.005
    assert "unknown" in g.meta["licence"] and g.meta["source"] == "<text>"
    d = tmp_path / "mymodel"
    d.mkdir()
    (d / "graph.txt").write_text(GOOD)
    g2 = load_pipedream(d / "graph.txt", licence="CC0")
    assert g2.name == "mymodel" and g2.meta["licence"] == "CC0" and str(d / "graph.txt") == g2.meta["source"]
    assert load_pipedream(str(d / "graph.txt"), name="x").name == "x"
    with pytest.raises(InstanceError, match="no such file"):
        load_pipedream(tmp_path / "nope.txt")


def test_multi_output_to_plain_consumer_gets_every_port():
    text = ("n1 -- Input -- forward_compute_time=0.0, backward_compute_time=0.0, activation_size=4.0, parameter_size=0.0\n"
            "n2 -- LSTM(1, 1) -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=[10.0; 2.0; 3.0], parameter_size=8.0\n"
            "n3 -- Concat(1) -- forward_compute_time=0.0, backward_compute_time=0.0, activation_size=15.0, parameter_size=0.0\n"
            "\tn1 -- n2\n\tn2 -- n3\n")
    g = load_pipedream(text)
    assert sorted(e.port for e in g.edges if e.src == "n2") == [0, 1, 2]
    assert g.tensors[1:] == ((1, 0, 10.0, (2,)), (1, 1, 2.0, (2,)), (1, 2, 3.0, (2,)))


def _line(i, body):
    return f"n{i} -- {body}\n"


OK = "forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=0.0"


@pytest.mark.parametrize("bad_line,fragment", [
    ("n3 -- ReLU -- forward_compute_time=-1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=0.0", "forward_compute_time must be >= 0"),
    ("n3 -- ReLU -- forward_compute_time=nan, backward_compute_time=1.0, activation_size=1.0, parameter_size=0.0", "finite"),
    ("n3 -- ReLU -- forward_compute_time=1.0, backward_compute_time=x, activation_size=1.0, parameter_size=0.0", "backward_compute_time must be a number"),
    ("n3 -- ReLU -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0", "missing parameter_size"),
    ("n3 -- ReLU -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=[1.0; 2.0, parameter_size=0.0", "not closed"),
    ("n3 -- ReLU", "expected 'id -- module"),
    (f"n1 -- ReLU -- {OK}", "duplicate layer id 'n1' (first defined on line 1)"),
    ("\tn1 -- n9", "'n9' is not a layer"),
    ("\tn1 n2", "expected an edge"),
    ("\tn1 -- n2", "duplicate edge"),
    ("\tn2 -- n2", "self-loop"),
])
def test_malformed_line_is_named(bad_line, fragment):
    lines = [f"n1 -- Input -- {OK}", f"n2 -- ReLU -- {OK}", "\tn1 -- n2", bad_line]
    with pytest.raises(InstanceError) as ei:
        load_pipedream("\n".join(lines) + "\n")
    assert ei.value.path == "line 4"
    assert fragment in str(ei.value)


def test_cycle_names_lines(tmp_path):
    text = "\n".join([f"n1 -- Input -- {OK}", f"n2 -- ReLU -- {OK}", f"n3 -- ReLU -- {OK}",
                      "\tn1 -- n2", "\tn2 -- n3", "\tn3 -- n2"]) + "\n"
    with pytest.raises(InstanceError) as ei:
        load_pipedream(text)
    assert ei.value.path == "line 5" and "cyclic" in str(ei.value) and "5, 6" in str(ei.value)
    p = tmp_path / "graph.txt"
    p.write_text(f"n1 -- Input -- {OK}\n\n" + "n2 -- Conv2d(1, 1) -- forward_compute_time=inf, backward_compute_time=1.0, activation_size=1.0, parameter_size=0.0\n")
    with pytest.raises(InstanceError) as ei:
        load_pipedream(p)
    assert ei.value.path == "line 3" and str(p) in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        load_pipedream("\n\n")
    assert "no layer lines" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        load_packaged("resnet1000")
    assert ei.value.path == "name" and "alexnet" in str(ei.value)
