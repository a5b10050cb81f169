"""Plans in module names (splitopt.export) and `splitopt export` (issue 23, part 3).

Each expected export is rebuilt here from the plan's own stage lists (cumulative counts for
DeepSpeed's parts, first module of each later stage for the split_spec), and each refusal is a plan
that the target really cannot express."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from cases.torch_models import Reuse  # noqa: E402
from splitopt.cli import main  # noqa: E402
from splitopt.export import ExportError, export, plan_of  # noqa: E402
from splitopt.instances import io, zoo  # noqa: E402
from splitopt.instances.grouping import GroupingInstance  # noqa: E402
from splitopt.instances.importers.torch import from_torch, load_factory  # noqa: E402
from splitopt.instances.split import SplitInstance  # noqa: E402

CNN = "splitopt.instances.importers.torch_examples:residual_cnn"


@pytest.fixture(scope="module")
def cnn_graph():
    return from_torch(load_factory(CNN), (torch.randn(1, 3, 16, 16),))


def test_grouping_plan_and_every_format(cnn_graph):
    inst = GroupingInstance.from_graph(cnn_graph, 3, flop_rate=1e9)
    sizes = [2, 5, 4]
    plan = plan_of(inst, sizes)
    parts = list(inst.names)
    assert parts[0] == "stem.0" and inst.meta["part_layers"]["stem.0"] == ["input", "stem.0"]
    assert [s["fqns"] for s in plan["stages"]] == [parts[:2], parts[2:7], parts[7:]]
    assert plan["stages"][0]["layers"] == ["input", *parts[:2]]          # the graph input rides with stage 0
    assert export(plan, "pipelining")["split_spec"] == {parts[2]: "BEGINNING", parts[7]: "BEGINNING"}
    assert export(plan, "torchtitan")["module_fqns_per_model_part"] == [parts[:2], parts[2:7], parts[7:]]
    ds = export(plan, "deepspeed")
    assert ds["layers"] == parts and ds["parts"] == [0, 2, 7, 11]
    dm = export(plan, "device-map", devices=["cuda:0", "cuda:1", "cpu"])["device_map"]
    assert dm == {**{f: "cuda:0" for f in parts[:2]}, **{f: "cuda:1" for f in parts[2:7]},
                  **{f: "cpu" for f in parts[7:]}}
    with pytest.raises(ExportError, match="--devices"):
        export(plan, "device-map", devices=["cuda:0"])


def test_non_contiguous_placement_is_refused_as_a_pipeline(cnn_graph):
    from splitopt.export.plan import torch_meta
    from splitopt.instances.throughput import ThroughputInstance

    inst = ThroughputInstance.from_graph(cnn_graph, [1e10, 1e10], 1e9, meta=torch_meta(cnn_graph))
    names = list(inst.layers)
    assign = ["n0" if i % 2 == 0 else "n1" for i in range(len(names))]      # alternating devices
    plan = plan_of(inst, assign)
    for fmt in ("pipelining", "torchtitan", "deepspeed"):
        with pytest.raises(ExportError, match="not contiguous"):
            export(plan, fmt)
    dm = export(plan, "device-map")["device_map"]
    assert dm == {n: a for n, a in zip(names, assign) if n != "input"}


class TwoBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.c = nn.Linear(4, 2)

    def forward(self, x):
        return self.c(self.a(x) + self.b(x))


def test_split_that_is_no_prefix_of_execution_is_refused():
    g = from_torch(TwoBranch().eval(), (torch.randn(2, 4),))
    assert g.names == ["input", "a", "b", "c"] and not g.is_chain()
    inst = SplitInstance.from_graph(g, up_bytes_per_s=1e6, device_flops=1e9, server_flops=1e10, mode="inference")
    plan = plan_of(inst, ["b", "input"])                                    # closed, but 'a' runs before 'b'
    assert [s["layers"] for s in plan["stages"]] == [["input", "b"], ["a", "c"]]
    with pytest.raises(ExportError, match="not contiguous"):
        export(plan, "pipelining")
    assert export(plan, "device-map")["device_map"] == {"a": "server", "b": "device", "c": "server"}
    ok = plan_of(inst, ["a", "input"])
    assert export(ok, "pipelining")["split_spec"] == {"b": "BEGINNING"}
    server_only = plan_of(inst, [])                                         # the device holds no module
    with pytest.raises(ExportError, match="device holds no module"):
        export(server_only, "pipelining")
    assert set(export(server_only, "device-map")["device_map"].values()) == {"server"}


def test_stage_beginning_at_a_reused_module_is_refused():
    g = from_torch(Reuse().eval(), (torch.randn(2, 4),))
    inst = GroupingInstance.from_graph(g, 2, flop_rate=1e9)
    assert inst.names == ("act", "a", "act@1", "b")
    with pytest.raises(ExportError, match="no split point"):
        export(plan_of(inst, [2, 2]), "pipelining")
    assert export(plan_of(inst, [3, 1]), "pipelining")["split_spec"] == {"b": "BEGINNING"}


def test_a_graph_without_modules_names_layers_but_exports_nothing():
    inst = GroupingInstance.from_zoo("resnet18", 2)
    plan = plan_of(inst, [5, inst.n - 5])
    assert plan["stages"][0]["layers"] == list(inst.names[:5]) and plan["torch"] is None
    with pytest.raises(ExportError, match="names no modules"):
        export(plan, "pipelining")


def test_cli_solve_json_carries_the_plan_and_export_writes_files(tmp_path, capsys):
    g = tmp_path / "g.json"
    assert main(["import", "torch", CNN, "--input", "1x3x16x16", "-o", str(g)]) == 0
    inst = tmp_path / "k3.json"
    assert main(["make", "grouping", str(g), "--k", "3", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["solve", str(inst), "--json"]) == 0
    sol = json.loads(capsys.readouterr().out)
    sizes = sol["assignment"]
    names = list(io.load(inst).names)
    assert sol["instance"] == str(inst.resolve())
    assert [s["fqns"] for s in sol["plan"]["stages"]] == [names[:sizes[0]], names[sizes[0]:sizes[0] + sizes[1]],
                                                          names[sizes[0] + sizes[1]:]]
    sol_path = tmp_path / "sol.json"
    sol_path.write_text(json.dumps(sol))
    out = tmp_path / "spec.json"
    assert main(["export", str(sol_path), "--format", "pipelining", "-o", str(out)]) == 0
    spec = json.loads(out.read_text())
    assert spec["split_spec"] == {names[sizes[0]]: "BEGINNING", names[sizes[0] + sizes[1]]: "BEGINNING"}
    code = (tmp_path / "spec.py").read_text()
    assert "SplitPoint.BEGINNING" in code and "pipeline(module, mb_args, split_spec=split_spec)" in code
    ns: dict = {}  # the snippet runs as printed (the per-rank stage line needs a process group)
    exec(compile(code.replace("stage = pipe.build_stage", "# stage = pipe.build_stage"), "spec.py", "exec"), ns)
    assert ns["pipe"].num_stages == 3
    # without the stored plan, the instance path is enough
    del sol["plan"]
    sol_path.write_text(json.dumps(sol))
    capsys.readouterr()
    assert main(["export", str(sol_path), "-f", "torchtitan"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n# Python")[0])["module_fqns_per_model_part"][0] \
        == names[:sizes[0]]


def test_cli_export_refusal_is_one_line(tmp_path, capsys):
    inst = tmp_path / "z.json"
    assert main(["make", "grouping", "resnet18", "--k", "2", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["solve", str(inst), "--json"]) == 0
    sol = tmp_path / "sol.json"
    sol.write_text(capsys.readouterr().out)
    assert main(["export", str(sol), "-f", "deepspeed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("splitopt: error: deepspeed: the plan names no modules") and "\n" not in err
    assert main(["export", str(inst), "-f", "deepspeed"]) == 2
    assert "is not a solution" in capsys.readouterr().err


def test_zoo_layers_are_plain_names():
    g = zoo.get("resnet18")
    assert "torch" not in g.meta


def test_pipeline_and_throughput_solutions_name_their_modules(tmp_path, capsys):
    g = tmp_path / "g.json"
    assert main(["import", "torch", CNN, "--input", "1x3x16x16", "-o", str(g)]) == 0
    names = [n for n in io.load(g).names if n != "input"]
    # pipeline (seed 001): client block, then one block per server; assignment "cuts" are layer counts
    pi = tmp_path / "p.json"
    assert main(["make", "pipeline", str(g), "--clients", "1", "--servers", "2", "-o", str(pi)]) == 0
    capsys.readouterr()
    assert main(["solve", str(pi), "--json"]) == 0
    sol = json.loads(capsys.readouterr().out)
    ends = [*sol["assignment"]["cuts"], len(names) + 1]
    blocks = [(0, ends[0])] + [(ends[j], ends[j + 1]) for j in range(len(ends) - 1)]
    layers = ["input", *names]
    want = [[n for n in layers[lo:hi] if n != "input"] for lo, hi in blocks if hi > lo]
    assert [s["fqns"] for s in sol["plan"]["stages"]] == want
    assert [s["device"] for s in sol["plan"]["stages"]][0] == "client"
    # throughput (seed 004): one node per layer
    ti = tmp_path / "t.json"
    assert main(["make", "throughput", str(g), "--setup", "3", "-o", str(ti)]) == 0
    capsys.readouterr()
    assert main(["solve", str(ti), "--json"]) == 0
    sol = json.loads(capsys.readouterr().out)
    by_node: dict = {}
    for n, node in zip(layers, sol["assignment"]):
        if n != "input":
            by_node.setdefault(node, []).append(n)
    assert {s["device"]: s["fqns"] for s in sol["plan"]["stages"]} == by_node
