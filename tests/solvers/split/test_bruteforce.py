"""Brute-force enumeration of predecessor-closed device sets (solvers/bruteforce.py)."""

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Layer
from splitopt.instances.split import SplitInstance
from splitopt.solvers.split import bruteforce


def _inst(names, edges, **kw):
    g = DNNGraph([Layer(n, out_bytes=1.0) for n in names], edges)
    n = len(names)
    kw.setdefault("input_policy", "upload")
    return SplitInstance(g, [1.0] * n, [1.0] * n, 1.0, 1.0, "inference", 1, **kw)


def test_number_of_ideals():
    # chain of 5: L + 1 = 6 closed sets
    assert len(list(bruteforce.enumerate_splits(_inst("abcde", [("a", "b"), ("b", "c"), ("c", "d"),
                                                                ("d", "e")])))) == 6
    # diamond a -> {b, c} -> d: {}, {a}, {a,b}, {a,c}, {a,b,c}, {a,b,c,d} = 6
    assert len(list(bruteforce.enumerate_splits(_inst("abcd", [("a", "b"), ("a", "c"), ("b", "d"),
                                                               ("c", "d")])))) == 6
    # three independent inputs feeding d: 2^3 sets without d plus 1 with d = 9
    assert len(list(bruteforce.enumerate_splits(_inst("abcd", [("a", "d"), ("b", "d"), ("c", "d")])))) == 9
    # all subsets of 4 layers
    assert len(list(bruteforce.enumerate_splits(_inst("abcd", [("a", "b"), ("b", "c"), ("c", "d")]),
                                                closed=False))) == 16


def test_pins_reduce_enumeration():
    inst = _inst("abcd", [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], pin_device=("b",), pin_server=("c",))
    masks = sorted(m for _c, m in bruteforce.enumerate_splits(inst))
    assert masks == [0b0011]  # only {a, b}


def test_hand_costs_diamond():
    # a -> {b,c} -> d, all compute 1 both sides, every tensor 1 byte at 1 B/s, inference, no input cost:
    # {} 4; {a} 4+1; {a,b} 4+2 (a's tensor once, b's); {a,b,c} 4+2; all 4.
    inst = _inst("abcd", [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    costs = sorted(c for c, _m in bruteforce.enumerate_splits(inst))
    assert costs == pytest.approx([4, 4, 5, 6, 6, 6])


def test_limit():
    names = [f"l{i}" for i in range(25)]
    inst = _inst(names, [(names[i], names[i + 1]) for i in range(24)])
    with pytest.raises(InstanceError, match="limited to 22 layers"):
        bruteforce.solve(inst)


def test_size_is_checked_before_any_table_is_built(monkeypatch):
    """Issue 21: 100,000 layers were refused only after 45 s and 2.2 GB of bitmask tables."""
    import pytest

    from cases.split import random_instance
    from splitopt.errors import InstanceError
    from splitopt.solvers.split import bruteforce as bf

    def boom(*a, **k):
        raise AssertionError("tables built before the size check")

    monkeypatch.setattr(bf, "_tables", boom)
    inst = random_instance(0, kind="layered", n=23)
    with pytest.raises(InstanceError, match="limited to 22 layers, got 23"):
        bf.solve(inst)
