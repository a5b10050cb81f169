"""ONNX importer (:func:`splitopt.instances.importers.onnx.load_onnx`).

Small ONNX graphs are built here with ``onnx.helper``; every expected MAC, FLOP, parameter and byte
count is worked out by hand in the comments (shape arithmetic of the ONNX operator spec), not read
from the importer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from splitopt.errors import InstanceError  # noqa: E402
from splitopt.instances import io  # noqa: E402
from splitopt.instances.importers.onnx import load_onnx  # noqa: E402

F32 = 4


def w(name, shape, dtype=np.float32):
    return nh.from_array(np.zeros(shape, dtype), name)


def model(nodes, inputs, outputs, inits=(), name="g", opset=17):
    return h.make_model(h.make_graph(nodes, name, inputs, outputs, list(inits)),
                        opset_imports=[h.make_opsetid("", opset)], producer_name="handmade")


def vi(name, shape, et=T.FLOAT):
    return h.make_tensor_value_info(name, et, shape)


# ----------------------------------------------------------------------------- conv-bn-relu-pool-gemm
def chain_model(batch_dim="N"):
    nodes = [
        h.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("BatchNormalization", ["c1", "g1", "b1", "m1", "v1"], ["n1"], name="bn1"),
        h.make_node("Relu", ["n1"], ["r1"]),  # unnamed: "Relu_2"
        h.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Flatten", ["p1"], ["f"], name="flat"),
        h.make_node("Gemm", ["f", "Wf", "Bf"], ["y"], name="fc", transB=1),
    ]
    inits = [w("W1", [16, 3, 3, 3]), w("B1", [16]), w("g1", [16]), w("b1", [16]), w("m1", [16]),
             w("v1", [16]), w("Wf", [10, 4096]), w("Bf", [10])]
    return model(nodes, [vi("x", [batch_dim, 3, 32, 32])], [vi("y", [batch_dim, 10])], inits, name="tiny")


def test_chain_macs_params_bytes_by_hand():
    g = load_onnx(chain_model())
    assert g.names == ["x", "conv1", "bn1", "Relu_2", "pool1", "flat", "fc"]
    assert g.is_chain()
    L = {lay.name: lay for lay in g.layers}
    # input: 3*32*32 fp32 values
    assert L["x"].op == "input" and L["x"].out_bytes == 3 * 32 * 32 * 4 == 12288
    assert L["x"].fwd_flop == 0
    # conv1: 3x3, pad 1 keeps 32x32; 16 out channels; each output element = 3*3*3 = 27 MACs
    conv_macs = 16 * 32 * 32 * 27
    assert conv_macs == 442368
    assert L["conv1"].meta["macs"] == conv_macs
    assert L["conv1"].fwd_flop == 2 * conv_macs and L["conv1"].bwd_flop == 4 * conv_macs
    assert L["conv1"].param_bytes == (16 * 27 + 16) * F32 == 1792
    assert L["conv1"].out_bytes == 16 * 32 * 32 * F32
    # bn: 4 initializers of 16 values (scale, bias, mean, var); 2 FLOP per element
    assert L["bn1"].param_bytes == 4 * 16 * F32
    assert L["bn1"].fwd_flop == 2 * 16 * 1024 and L["bn1"].meta["macs"] == 0
    assert L["Relu_2"].fwd_flop == 16 * 1024 and L["Relu_2"].param_bytes == 0
    # 2x2 stride-2 pool: 16x16x16 outputs, 4 window elements each
    assert L["pool1"].out_bytes == 16 * 16 * 16 * F32
    assert L["pool1"].fwd_flop == 4096 * 4
    assert L["flat"].fwd_flop == 0 and "flop_unknown" not in L["flat"].meta
    # fc: 4096 -> 10, K = 4096 (transB), bias 10
    assert L["fc"].meta["macs"] == 10 * 4096
    assert L["fc"].param_bytes == (10 * 4096 + 10) * F32
    assert L["fc"].out_bytes == 10 * F32
    tot = g.totals()
    assert tot["macs"] == conv_macs + 40960
    assert tot["params"] == 16 * 27 + 16 + 64 + 10 * 4096 + 10
    assert g.meta["batch"] == 1 and g.meta["opset"] == 17 and g.meta["producer_name"] == "handmade"
    assert g.meta["input_shapes"] == {"x": [1, 3, 32, 32]}
    assert g.meta["flop_unknown_ops"] == [] and g.meta["folded_nodes"] == []
    assert g.name == "tiny"


def test_dynamic_batch_scales_activations_and_flop_not_params():
    g1 = load_onnx(chain_model())
    g4 = load_onnx(chain_model(), batch=4, name="tiny4")
    assert g4.name == "tiny4" and g4.meta["batch"] == 4
    assert g4.meta["input_shapes"] == {"x": [4, 3, 32, 32]}
    for a, b in zip(g1.layers, g4.layers):
        assert b.out_bytes == 4 * a.out_bytes
        assert b.fwd_flop == 4 * a.fwd_flop
        assert b.param_bytes == a.param_bytes
    # an anonymous (neither value nor name) batch dimension is set too
    m = chain_model(batch_dim=None)
    assert load_onnx(m, batch=2).layer("x").out_bytes == 2 * 12288


def test_fixed_batch_kept_and_conflicting_batch_rejected():
    g = load_onnx(chain_model(batch_dim=2))
    assert g.meta["batch"] == 2 and g.layer("x").out_bytes == 2 * 12288
    assert load_onnx(chain_model(batch_dim=2), batch=2).meta["batch"] == 2
    with pytest.raises(InstanceError) as ei:
        load_onnx(chain_model(batch_dim=2), batch=8)
    assert ei.value.path == "batch" and "'x'" in str(ei.value) and "8" in str(ei.value)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InstanceError) as ei:
            load_onnx(chain_model(), batch=bad)
        assert ei.value.path == "batch"


def test_grouped_conv_convtranspose_matmul_by_hand():
    nodes = [
        # 8 -> 16 channels, groups 4: W is [16, 8/4, 3, 3]; 10x10 -> 8x8 (no padding)
        h.make_node("Conv", ["x", "Wg"], ["c"], name="gconv", group=4, kernel_shape=[3, 3]),
        # depthwise: 16 -> 16, groups 16: W [16, 1, 3, 3]; 8x8 -> 6x6
        h.make_node("Conv", ["c", "Wd"], ["d"], name="dwconv", group=16, kernel_shape=[3, 3]),
        # transpose conv 16 -> 2, stride 2, k 3: 6x6 -> (6-1)*2+3 = 13x13; W [C_in, C_out, 3, 3]
        h.make_node("ConvTranspose", ["d", "Wt"], ["t"], name="tconv", strides=[2, 2], kernel_shape=[3, 3]),
        h.make_node("Reshape", ["t", "shp"], ["r"], name="reshape"),  # [1, 2, 169]
        h.make_node("MatMul", ["r", "M"], ["y"], name="mm"),  # [1, 2, 169] x [169, 7] = [1, 2, 7]
    ]
    inits = [w("Wg", [16, 2, 3, 3]), w("Wd", [16, 1, 3, 3]), w("Wt", [16, 2, 3, 3]),
             nh.from_array(np.array([1, 2, 169], np.int64), "shp"), w("M", [169, 7])]
    g = load_onnx(model(nodes, [vi("x", ["N", 8, 10, 10])], [vi("y", ["N", 2, 7])], inits))
    L = {lay.name: lay for lay in g.layers}
    assert L["gconv"].meta["macs"] == 16 * 8 * 8 * (2 * 9) == 18432
    assert L["dwconv"].meta["macs"] == 16 * 6 * 6 * 9 == 5184
    assert L["tconv"].meta["tensor_shape"] == [1, 2, 13, 13]
    # each of the 16*6*6 input elements meets 2 output channels x 9 kernel taps
    assert L["tconv"].meta["macs"] == 16 * 36 * 2 * 9 == 10368
    assert L["reshape"].fwd_flop == 0 and L["reshape"].param_bytes == 3 * 8  # int64 shape tensor
    assert L["mm"].meta["macs"] == 2 * 7 * 169
    assert L["mm"].param_bytes == 169 * 7 * F32
    assert L["gconv"].param_bytes == 16 * 2 * 9 * F32


# ----------------------------------------------------------------------------- residual block
def residual_model():
    nodes = [
        h.make_node("Conv", ["x", "W"], ["a"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["a"], ["ar"], name="relu1"),
        h.make_node("Conv", ["ar", "W"], ["b"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("Add", ["b", "x"], ["s"], name="add"),
        h.make_node("Relu", ["s"], ["y"], name="relu2"),
    ]
    return model(nodes, [vi("x", ["N", 4, 6, 6])], [vi("y", ["N", 4, 6, 6])], [w("W", [4, 4, 3, 3])],
                 name="res")


def test_residual_fan_out_add_and_shared_initializer():
    g = load_onnx(residual_model())
    assert g.names == ["x", "conv1", "relu1", "conv2", "add", "relu2"]
    x, add = g.index("x"), g.index("add")
    assert g.succ(x) == (g.index("conv1"), add)
    assert g.pred(add) == (x, g.index("conv2"))
    # x's tensor is one tensor with two consumers, charged once
    tx = [t for t in g.tensors if t[0] == x]
    assert tx == [(x, 0, 4 * 36 * F32, (g.index("conv1"), add))]
    assert g.articulation_layers == (x, add, g.index("relu2"))
    # the shared weight W (4*4*3*3 values) is attributed once, to its first consumer
    assert g.layer("conv1").param_bytes == 144 * F32
    assert g.layer("conv2").param_bytes == 0
    assert g.layer("add").fwd_flop == 4 * 36  # one FLOP per output element
    assert g.layer("conv1").meta["macs"] == 4 * 36 * 4 * 9


# ----------------------------------------------------------------------------- two outputs, ports
def split_model():
    nodes = [
        h.make_node("Constant", [], ["sizes"], name="sizes",
                    value=nh.from_array(np.array([2, 4], np.int64), "sizes_v")),
        h.make_node("Split", ["x", "sizes"], ["a", "b"], name="split", axis=1),
        h.make_node("Relu", ["a"], ["ra"], name="relu"),
        h.make_node("Sigmoid", ["b"], ["sb"], name="sig"),
        h.make_node("Concat", ["ra", "sb", "b"], ["y"], name="cat", axis=1),
    ]
    return model(nodes, [vi("x", ["N", 6, 5])], [vi("y", ["N", 10, 5])], name="split")


def test_two_outputs_use_ports_and_constant_folds_into_params():
    g = load_onnx(split_model())
    assert g.names == ["x", "split", "relu", "sig", "cat"]  # the Constant is not a layer
    sp = g.layer("split")
    assert sp.out_bytes == 2 * 5 * F32 and sp.extra_out_bytes == (4 * 5 * F32,)
    # the Constant's value (2 int64) is a parameter of its consumer
    assert sp.param_bytes == 2 * 8
    assert g.meta["folded_nodes"] == ["sizes"]
    ports = {(e.src, e.dst): e.port for e in g.edges}
    assert ports == {("x", "split"): 0, ("split", "relu"): 0, ("split", "sig"): 1, ("split", "cat"): 1,
                     ("relu", "cat"): 0, ("sig", "cat"): 0}
    s = g.index("split")
    assert [(t[1], t[2], t[3]) for t in g.tensors if t[0] == s] == [
        (0, 40.0, (g.index("relu"),)), (1, 80.0, (g.index("sig"), g.index("cat")))]
    assert g.layer("cat").fwd_flop == 0 and g.layer("cat").out_bytes == 10 * 5 * F32
    assert g.layer("sig").fwd_flop == 20


def test_cast_of_initializer_is_folded_and_unknown_ops_flagged():
    nodes = [
        h.make_node("Cast", ["W16"], ["W32"], name="cast", to=T.FLOAT),
        h.make_node("MatMul", ["x", "W32"], ["m"], name="mm"),
        h.make_node("Softmax", ["m"], ["y"], name="soft", axis=-1),
    ]
    g = load_onnx(model(nodes, [vi("x", ["N", 3])], [vi("y", ["N", 5])],
                        [w("W16", [3, 5], np.float16)]))
    assert g.names == ["x", "mm", "soft"]
    assert g.layer("mm").param_bytes == 15 * F32  # the folded fp32 value, not the fp16 initializer
    assert g.layer("mm").meta["macs"] == 15
    assert g.layer("soft").meta.get("flop_unknown") is True and g.layer("soft").fwd_flop == 0
    assert "flop_unknown" not in g.layer("mm").meta
    assert g.meta["flop_unknown_ops"] == ["Softmax"] and g.meta["folded_nodes"] == ["cast"]


def test_name_collision_and_fp16_input_bytes():
    nodes = [h.make_node("Relu", ["x"], ["y"], name="x")]
    g = load_onnx(model(nodes, [vi("x", ["N", 7], T.FLOAT16)], [vi("y", ["N", 7], T.FLOAT16)]))
    assert g.names == ["x", "x_1"]
    assert g.layer("x_1").meta["onnx_name"] == "x"
    assert g.layer("x").out_bytes == 7 * 2 and g.layer("x").meta["dtype"] == "float16"


# ----------------------------------------------------------------------------- errors
def test_cyclic_graph_names_the_cycle():
    nodes = [h.make_node("Relu", ["x2"], ["a"], name="na"), h.make_node("Add", ["a", "x"], ["x2"], name="nb"),
             h.make_node("Relu", ["a"], ["y"], name="nc")]
    with pytest.raises(InstanceError) as ei:
        load_onnx(model(nodes, [vi("x", ["N", 3])], [vi("y", ["N", 3])]))
    assert ei.value.path == "graph.node"
    assert "cyclic" in str(ei.value) and "'na'" in str(ei.value) and "'nb'" in str(ei.value)
    assert "'nc'" not in str(ei.value)


def test_unsorted_but_acyclic_nodes_are_accepted():
    nodes = [h.make_node("Relu", ["a"], ["y"], name="second"), h.make_node("Relu", ["x"], ["a"], name="first")]
    g = load_onnx(model(nodes, [vi("x", ["N", 3])], [vi("y", ["N", 3])]))
    assert g.names == ["x", "first", "second"]


def test_dangling_tensor_and_invalid_models():
    nodes = [h.make_node("Add", ["x", "ghost"], ["y"], name="add")]
    with pytest.raises(InstanceError) as ei:
        load_onnx(model(nodes, [vi("x", ["N", 3])], [vi("y", ["N", 3])]))
    assert ei.value.path == "graph.node[0].input[1]" and "'ghost'" in str(ei.value)
    # unknown operator: rejected by the ONNX checker
    with pytest.raises(InstanceError) as ei:
        load_onnx(model([h.make_node("Reluu", ["x"], ["y"])], [vi("x", ["N", 3])], [vi("y", ["N", 3])]))
    assert ei.value.path == "onnx_model" and "Reluu" in str(ei.value)
    # incompatible shapes: rejected by strict shape inference
    bad = model([h.make_node("Add", ["a", "b"], ["y"], name="add")], [vi("a", [2, 3]), vi("b", [4, 5])],
                [vi("y", [2, 3])])
    with pytest.raises(InstanceError) as ei:
        load_onnx(bad)
    assert ei.value.path == "onnx_model" and "add" in str(ei.value)
    # the same tensor produced twice
    two = model([h.make_node("Relu", ["x"], ["y"], name="r1"), h.make_node("Relu", ["x"], ["y"], name="r2")],
                [vi("x", ["N", 3])], [vi("y", ["N", 3])])
    with pytest.raises(InstanceError) as ei:
        load_onnx(two)
    assert ei.value.path == "graph.node[1].output[0]" and "'y'" in str(ei.value)


def reshape_runtime_model():
    # the target shape is a runtime input, so the Reshape output's shape cannot be inferred
    nodes = [h.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             h.make_node("Relu", ["r"], ["y"], name="relu")]
    return model(nodes, [vi("x", ["N", 12]), vi("shape", [2], T.INT64)], [vi("y", ["p", "q"])])


def test_unknown_shape_raises_naming_tensor_or_zero():
    with pytest.raises(InstanceError) as ei:
        load_onnx(reshape_runtime_model())
    assert ei.value.path == "graph.node[0].output[0]" and "'r'" in str(ei.value)
    g = load_onnx(reshape_runtime_model(), unknown_shapes="zero")
    assert g.layer("reshape").out_bytes == 0 and g.layer("reshape").meta["unknown_shape"] is True
    assert g.layer("relu").meta["flop_unknown"] is True and g.layer("relu").fwd_flop == 0
    assert g.meta["unknown_shape_tensors"] == ["r", "y"]
    assert g.layer("x").out_bytes == 12 * F32 and g.layer("shape").out_bytes == 2 * 8
    # a symbolic non-batch input dimension is an unknown shape too, named at the graph input
    m = model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", ["N", "L"])], [vi("y", ["N", "L"])])
    with pytest.raises(InstanceError) as ei:
        load_onnx(m)
    assert ei.value.path == "graph.input[0]" and "'x'" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        load_onnx(m, unknown_shapes="maybe")
    assert ei.value.path == "unknown_shapes"


def test_paths_that_are_not_onnx(tmp_path):
    with pytest.raises(InstanceError) as ei:
        load_onnx(tmp_path / "missing.onnx")
    assert ei.value.path == "path" and "missing.onnx" in str(ei.value)
    txt = tmp_path / "notes.onnx"
    txt.write_text("this is not a protobuf file\n" * 3)
    with pytest.raises(InstanceError) as ei:
        load_onnx(txt)
    assert ei.value.path == "path" and "notes.onnx" in str(ei.value)
    js = tmp_path / "graph.json"
    js.write_text('{"format": 1, "kind": "graph"}')
    with pytest.raises(InstanceError) as ei:
        load_onnx(js)
    assert ei.value.path == "path"
    with pytest.raises(InstanceError) as ei:
        load_onnx(42)
    assert ei.value.path == "path_or_model"


def test_file_round_trip_and_json(tmp_path):
    p = tmp_path / "res.onnx"
    onnx.save(residual_model(), str(p))
    g = load_onnx(p, batch=2)
    assert g.meta["source"] == str(p) and g.name == "res" and g.meta["batch"] == 2
    assert g.layer("x").out_bytes == 2 * 4 * 36 * F32
    out = io.save(g, tmp_path / "res.json")
    back = io.load(out)
    assert back == g
    assert back.meta == g.meta
    assert [lay.meta for lay in back.layers] == [lay.meta for lay in g.layers]
    assert back.edges == g.edges or sorted(map(tuple, back.edges)) == sorted(map(tuple, g.edges))
    sp = load_onnx(split_model())
    back = io.loads(io.dumps(sp))
    assert back == sp and back.layer("split").extra_out_bytes == (80.0,)


# ----------------------------------------------------------------------------- end to end
@pytest.mark.parametrize("builder", [residual_model, split_model, chain_model])
@pytest.mark.parametrize("up", [1e3, 1e5, 1e7])
def test_split_instance_mincut_equals_milp(builder, up):
    from splitopt.families import solve
    from splitopt.instances.split import SplitInstance

    g = load_onnx(builder())
    inst = SplitInstance.from_graph(g, up_bytes_per_s=up, device_flops=1e6, server_flops=1e8,
                                    mode="training", iterations=10)
    # the raw-input layer was recognised as such
    assert inst.input_bytes == g.layer("x").out_bytes
    a = solve(inst, "mincut")
    b = solve(inst, "milp")
    c = solve(inst, "bruteforce")
    assert math.isclose(a.objective, b.objective, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(a.objective, c.objective, rel_tol=1e-9, abs_tol=1e-12)


def bottleneck_model():
    nodes = [
        h.make_node("Conv", ["x", "W1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                    strides=[2, 2]),
        h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        h.make_node("Conv", ["r1", "W2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("GlobalAveragePool", ["c2"], ["p"], name="gap"),
        h.make_node("Flatten", ["p"], ["f"], name="flat"),
        h.make_node("Gemm", ["f", "Wf"], ["y"], name="fc", transB=1),
    ]
    inits = [w("W1", [2, 3, 3, 3]), w("W2", [64, 2, 3, 3]), w("Wf", [10, 64])]
    return model(nodes, [vi("x", ["N", 3, 32, 32])], [vi("y", ["N", 10])], inits, name="bottleneck")


def test_bottleneck_inference_split_by_hand():
    """An interior optimum worked out by hand (seed 002 §1.2 latency: device compute + uploaded
    tensors + server compute, raw input uploaded when it is not processed on the device)."""
    from splitopt.families import solve
    from splitopt.instances.split import SplitInstance

    g = load_onnx(bottleneck_model())
    # forward FLOP by hand: conv1 3->2, stride 2: 2*16*16 outputs x 27 MACs; relu 512;
    # conv2 2->64: 64*16*16 outputs x 18 MACs; gap reads 64*256 elements; fc 64*10 MACs
    fl = {"conv1": 2 * 512 * 27, "relu1": 512, "conv2": 2 * 16384 * 18, "gap": 16384, "flat": 0, "fc": 2 * 640}
    assert {k: g.layer(k).fwd_flop for k in fl} == fl
    dev, srv, up = 1e7, 1e10, 1e5
    inst = SplitInstance.from_graph(g, up_bytes_per_s=up, device_flops=dev, server_flops=srv, mode="inference")
    # best: device runs x and conv1, uploads conv1's 2*16*16 fp32 output (2048 bytes); relu1 has
    # the same output size and is cheaper on the server. All-server pays the 12288 raw bytes.
    best = fl["conv1"] / dev + 2048 / up + (sum(fl.values()) - fl["conv1"]) / srv
    all_server = 12288 / up + sum(fl.values()) / srv
    assert best < all_server
    for algo in ("mincut", "milp", "bruteforce"):
        sol = solve(inst, algo)
        assert math.isclose(sol.objective, best, rel_tol=1e-9), algo
        assert sorted(sol.assignment) == ["conv1", "x"], algo


def test_external_data_initializers_and_ir3_inputs(tmp_path):
    # expected parameter count of chain_model by hand: conv 16*27+16, bn 4*16, fc 10*4096+10
    expected = (16 * 27 + 16 + 64 + 10 * 4096 + 10) * F32
    p = tmp_path / "ext.onnx"
    onnx.save_model(chain_model(), str(p), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert (tmp_path / "weights.bin").stat().st_size >= expected  # the weights really are outside
    g = load_onnx(p)
    assert g.totals()["param_bytes"] == expected and g.layer("conv1").meta["macs"] == 442368
    # IR 3 style: every initializer is also listed as a graph input; none becomes an input layer
    m = chain_model()
    for t in m.graph.initializer:
        m.graph.input.append(h.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    m.ir_version, m.opset_import[0].version = 3, 9
    g = load_onnx(m)
    assert [lay.name for lay in g.layers if lay.op == "input"] == ["x"]
    assert g.totals()["param_bytes"] == expected


def test_if_subgraph_reads_outer_tensor():
    then_g = h.make_graph([h.make_node("Relu", ["a"], ["t"])], "then", [], [vi("t", ["N", 3])])
    else_g = h.make_graph([h.make_node("Neg", ["a"], ["e"])], "else", [], [vi("e", ["N", 3])])
    nodes = [h.make_node("Relu", ["x"], ["a"], name="r"),
             h.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    g = load_onnx(model(nodes, [vi("x", ["N", 3]), vi("cond", [], T.BOOL)], [vi("y", ["N", 3])]))
    assert sorted((e.src, e.dst) for e in g.edges) == [("cond", "if"), ("r", "if"), ("x", "r")]
    assert g.layer("cond").out_bytes == 1 and g.layer("if").meta["flop_unknown"] is True


# ----------------------------------------------------------------------------- published figures
def _light(name):
    from pathlib import Path

    p = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"
    if not p.is_file():
        pytest.skip(f"{p.name} not shipped with this onnx build")
    return p


# torchvision's published figures (docs "Classification" table: params, GFLOPS = GMACs at 224x224):
# vgg19 143,667,240 / 19.63; resnet50 25,557,032 / 4.09; squeezenet1_1 1,235,496 / 0.35;
# plus what ONNX stores beyond trainable parameters: batch-norm running mean and variance
# (ResNet-50: 2 x 26,560 channels = 64 + 1408 + 3584 + 10240 + 11264 over stem and stages) and
# the 2-value int64 shape of the Reshape before the classifier (16 bytes).
@pytest.mark.parametrize("name,params,extra_values,extra_bytes,gmacs", [
    ("vgg19", 143_667_240, 0, 16, 19.63),
    ("resnet50", 25_557_032, 2 * 26_560, 16, 4.09),
    ("squeezenet", 1_235_496, 0, 0, 0.35),
])
def test_onnx_light_models_match_published_counts(name, params, extra_values, extra_bytes, gmacs):
    g = load_onnx(_light(name))
    tot = g.totals()
    assert tot["param_bytes"] == 4 * (params + extra_values) + extra_bytes
    assert round(tot["macs"] / 1e9, 2) == gmacs
    assert sum(lay.param_bytes for lay in g.layers if lay.op == "Reshape") == extra_bytes
    assert g.layers[-1].out_bytes == 1000 * F32 and g.layer(g.inputs[0]).out_bytes == 3 * 224 * 224 * F32


def test_imported_resnet50_split_mincut_equals_milp():
    from splitopt.families import solve
    from splitopt.instances.split import SplitInstance

    g = load_onnx(_light("resnet50"))
    inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, device_flops=1e10, server_flops=1e12,
                                    mode="inference")
    a, b = solve(inst, "mincut"), solve(inst, "milp")
    assert math.isclose(a.objective, b.objective, rel_tol=1e-9)
    # hand check of the optimum's value: all-server pays the raw input upload (3*224*224 fp32
    # bytes at 1e6 B/s) plus the forward FLOP at 1e12 FLOP/s; it beats all-device (FLOP at 1e10)
    fwd = g.totals()["fwd_flop"]
    assert math.isclose(a.objective, min(3 * 224 * 224 * 4 / 1e6 + fwd / 1e12, fwd / 1e10), rel_tol=1e-9)


def test_input_model_is_not_mutated_and_numpy_batch_accepted():
    m = chain_model()
    before = m.SerializeToString()
    g = load_onnx(m, batch=np.int64(3))
    assert g.meta["batch"] == 3 and g.layer("x").out_bytes == 3 * 12288
    assert m.SerializeToString() == before


def test_cli_import_onnx_and_make_split_from_onnx(tmp_path, capsys):
    """`splitopt import onnx` writes the same graph as load_onnx; `make split model.onnx` works."""
    from splitopt.cli import main
    from splitopt.instances import io

    path = tmp_path / "chain.onnx"
    onnx.save(chain_model(), str(path))
    assert main(["import", "onnx", str(path), "--batch", "2", "-o", str(tmp_path / "g.json")]) == 0
    assert io.load(tmp_path / "g.json") == load_onnx(path, batch=2)
    assert main(["make", "split", str(path), "--device-flops", "1e9", "--server-flops", "1e11",
                 "--up-mbps", "10", "-o", str(tmp_path / "s.json")]) == 0
    assert main(["solve", str(tmp_path / "s.json"), "--json"]) == 0
    bad = tmp_path / "bad.onnx"
    bad.write_text("not a model")
    assert main(["import", "onnx", str(bad), "-o", str(tmp_path / "x.json")]) == 2
    capsys.readouterr()
