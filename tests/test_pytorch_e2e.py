"""Issue 23 end to end: a PyTorch model -> from_torch -> an exact grouping into 3 stages (and an
exact device/server split) -> the ``pipelining`` export -> ``torch.distributed.pipelining.pipeline``
builds exactly the plan's stages, each holding exactly the parameters of the plan's modules, and
running the stage modules one after another on CPU gives the unsplit model's output.

The models are written here (not the package's examples): a residual CNN of 25 modules and a small
transformer whose output head shares the token embedding's weight. Exactness of the plans is shown
against brute force (every grouping / every closed split, scored by the family's evaluator).
"""

from __future__ import annotations

import copy
import itertools

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.distributed.pipelining import SplitPoint, pipeline  # noqa: E402

from splitopt.export import export, plan_of  # noqa: E402
from splitopt.families import evaluate, solve  # noqa: E402
from splitopt.instances.grouping import GroupingInstance  # noqa: E402
from splitopt.instances.importers.torch import from_torch  # noqa: E402
from splitopt.instances.split import SplitInstance  # noqa: E402


class Res(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.c1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.n1 = nn.BatchNorm2d(c_out)
        self.c2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.n2 = nn.BatchNorm2d(c_out)
        self.skip = nn.Conv2d(c_in, c_out, 1, stride, bias=False) if stride != 1 or c_in != c_out else nn.Identity()

    def forward(self, x):
        y = torch.relu(self.n1(self.c1(x)))
        return torch.relu(self.n2(self.c2(y)) + self.skip(x))


class ResCNN(nn.Module):
    """25 modules: stem (conv, bn, relu), four residual blocks, pooling, classifier."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.body = nn.Sequential(Res(8, 8, 1), Res(8, 16, 2), Res(16, 16, 1), Res(16, 32, 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.body(self.stem(x))), 1))


class Layer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.ln(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(x)


class TiedLM(nn.Module):
    def __init__(self, vocab=40, d=16, n=4, ctx=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.layers = nn.ModuleList(Layer(d) for _ in range(n))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, vocab, bias=False)
        self.out.weight = self.emb.weight  # tied input/output embeddings

    def forward(self, idx):
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.out(self.norm(x))


def _canonical(module) -> dict[str, str]:
    """Parameter name -> the first name of the same tensor (tied weights share one canonical name)."""
    first: dict[int, str] = {}
    out = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        out[name] = first.setdefault(id(p), name)
    return out


def _run_pipeline(module, x, plan, n_stages):
    """Feed the plan's pipelining export to torch's pipeline(); check stages and output."""
    out = export(plan, "pipelining")
    assert out["num_stages"] == n_stages
    split_spec = {fqn: SplitPoint[v] for fqn, v in out["split_spec"].items()}
    ref = module(x)
    mod = copy.deepcopy(module)
    pipe = pipeline(mod, (x,), split_spec=split_spec)
    assert pipe.num_stages == n_stages
    canon = _canonical(module)
    y = x
    for s, stage in enumerate(plan["stages"]):
        sm = pipe.get_stage_module(s)
        # the stage holds exactly the parameters of the plan's modules, by name (a tied weight is in
        # each stage that uses it, under either of its names: pipelining replicates it)
        want = {canon[f"{f}.{n}"] for f in stage["fqns"]
                for n, _ in module.get_submodule(f).named_parameters(remove_duplicate=False)}
        got = {canon[n] for n, _ in sm.named_parameters(remove_duplicate=False)}
        assert got == want, stage["name"]
        y = sm(*(y if isinstance(y, tuple) else (y,)))
    y = y[0] if isinstance(y, tuple) else y
    torch.testing.assert_close(y, ref)
    return pipe


def _brute_grouping(inst):
    best = None
    for cuts in itertools.combinations(range(1, inst.n), inst.k - 1):
        b = (0, *cuts, inst.n)
        sizes = [b[i + 1] - b[i] for i in range(inst.k)]
        v = evaluate(inst, sizes)[0]
        best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("kind", ["cnn", "transformer"])
def test_grouping_3_stages_runs_in_torch_pipelining(kind):
    torch.manual_seed(0)
    if kind == "cnn":
        module, x = ResCNN().eval(), torch.randn(2, 3, 16, 16)
        assert len(list(module.modules())) - 1 >= 20
    else:
        module, x = TiedLM().eval(), torch.randint(0, 40, (2, 8))
    g = from_torch(module, (x,))
    # parameter bytes: every parameter once (tied weights included once)
    assert g.totals()["param_bytes"] == 4 * sum(p.numel() for p in module.parameters())
    inst = GroupingInstance.from_graph(g, 3, flop_rate=1e9, objective="bottleneck")
    sol = solve(inst, "dp")
    assert sol.objective == pytest.approx(_brute_grouping(inst), rel=1e-12)
    plan = plan_of(inst, sol.assignment)
    assert [len(s["fqns"]) > 0 for s in plan["stages"]] == [True] * 3
    assert sum(len(s["layers"]) for s in plan["stages"]) == len(g)
    _run_pipeline(module, x, plan, 3)
    if kind == "transformer":  # the tied weight: counted once in the graph, present in both end stages
        stages = plan["stages"]
        assert "emb" in stages[0]["fqns"] and "out" in stages[-1]["fqns"]
        assert g.layer("out").param_bytes == 0 and g.layer("emb").param_bytes == 4 * 40 * 16


def test_split_device_server_runs_in_torch_pipelining():
    torch.manual_seed(1)
    module, x = ResCNN().eval(), torch.randn(2, 3, 16, 16)
    g = from_torch(module, (x,))
    # split learning: the stem stays on the device, the classifier on the server
    inst = SplitInstance.from_graph(g, up_bytes_per_s=2e6, down_bytes_per_s=2e6, mode="inference",
                                    device_flops=2e9, server_flops=2e11, pin_device=["stem.0"], pin_server=["fc"])
    sol = solve(inst, "mincut")
    assert sol.objective == pytest.approx(solve(inst, "bruteforce").objective, rel=1e-9)
    plan = plan_of(inst, sol.assignment)
    assert [s["name"] for s in plan["stages"]] == ["device", "server"]
    assert "stem.0" in plan["stages"][0]["fqns"] and "fc" in plan["stages"][1]["fqns"]
    _run_pipeline(module, x, plan, 2)
    dm = export(plan, "device-map")["device_map"]
    assert dm["stem.0"] == "device" and dm["fc"] == "server" and len(dm) == len(g) - 1
