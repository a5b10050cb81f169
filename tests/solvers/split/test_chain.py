"""Chain prefix scan (solvers/chain.py)."""


import pytest

from cases.split import close, random_instance  # noqa: E402
from splitopt.errors import InstanceError  # noqa: E402
from splitopt.instances.graph import DNNGraph, Layer  # noqa: E402
from splitopt.instances.split import SplitInstance  # noqa: E402
from splitopt.models.split import evaluate  # noqa: E402
from splitopt.solvers.split import bruteforce, chain  # noqa: E402


def _chain(dev, srv, out, mode="inference", **kw):
    g = DNNGraph([Layer(f"l{i}", out_bytes=b) for i, b in enumerate(out)],
                 [(f"l{i}", f"l{i + 1}") for i in range(len(out) - 1)])
    return SplitInstance(g, dev, srv, 10.0, 10.0, mode, 1, **kw)


def test_hand_chain_inference():
    # Neurosurgeon-style: t_e = (1,2,4), t_c = (0.1,0.1,0.1), out = (100, 5, 0) bytes at 10 B/s,
    # raw input 200 bytes uploaded when l0 is on the cloud.
    inst = _chain([1, 2, 4], [0.1, 0.1, 0.1], [100, 5, 0], input_bytes=200)
    # p=0: 0.3 + 20 = 20.3; p=1: 1 + 0.2 + 10 = 11.2; p=2: 3 + 0.1 + 0.5 = 3.6; p=3: 7
    costs = chain.prefix_costs(inst)
    assert costs.tolist() == pytest.approx([20.3, 11.2, 3.6, 7.0])
    assert chain.solve(inst) == ["l0", "l1"]
    assert evaluate(inst, ["l0", "l1"])[0] == pytest.approx(3.6)


def test_pins_restrict_prefixes():
    inst = _chain([1, 2, 4], [0.1, 0.1, 0.1], [100, 5, 0], input_bytes=200, pin_server=("l1",))
    assert chain.solve(inst) == ["l0"]  # p <= 1: best of 20.3, 11.2
    inst = _chain([1, 2, 4], [0.1, 0.1, 0.1], [100, 5, 0], input_bytes=200, pin_device=("l2",))
    assert chain.solve(inst) == ["l0", "l1", "l2"]


def test_random_chains_equal_bruteforce():
    count = 0
    for s in range(0, 600, 6):  # kind index 0 = chain
        inst = random_instance(s, kind="chain")
        assert inst.graph.is_chain()
        assert close(evaluate(inst, chain.solve(inst))[0], bruteforce.solve_detailed(inst)[0]), s
        count += 1
    assert count == 100


def test_refuses_non_chains():
    g = DNNGraph([Layer("a"), Layer("b"), Layer("c")], [("a", "b"), ("a", "c"), ("b", "c")])
    inst = SplitInstance(g, [1, 1, 1], [1, 1, 1], 1.0, 1.0)
    with pytest.raises(InstanceError, match="needs a chain; layer 'a' feeds"):
        chain.solve(inst)
