"""Digest counterexamples (seed 000 checks A, B, C, E and the §3.2 fan-out example; seed 002 §2.6,
§3.1 and §3.3) as regression tests: the corrected algorithms are optimal, the printed ones fail in
the documented way. Every expected number is computed by hand in the comments (or quoted from the
digest), never taken from the code under test."""


import pytest

from cases.split import check_a, check_b, fig_2_6, fig_3_1, inference, training
from splitopt.errors import InfeasibleSolution  # noqa: E402
from splitopt.instances.graph import DNNGraph, Layer  # noqa: E402
from splitopt.models.split import evaluate, relaxed_cost  # noqa: E402
from splitopt.solvers.split import blockwise, bruteforce, mincut, qdmp


# ---------------------------------------------------------------- seed 000
def test_check_a_case2_unique_optimum():
    # digest 000 §3.6 item 2: unique optimum {v0,p,q,u} with T = 100, runner-up 2040;
    # hand: 10*(1+1+1+1) + 10*(1+1) + 20*a_p + 20*a_u = 40 + 20 + 20 + 20 = 100.
    inst = check_a()
    assert mincut.solve(inst) == ["p", "q", "u", "v0"]
    assert evaluate(inst, mincut.solve(inst))[0] == pytest.approx(100.0, rel=1e-12)
    best, names, costs = bruteforce.solve_detailed(inst)
    assert names == ["p", "q", "u", "v0"] and costs[0] == pytest.approx(100.0)
    assert costs[1] == pytest.approx(2040.0)  # runner-up (all on the device: 10*(4+200))
    # moving u to the server (the proof's Case 2 argument) costs 2079 (digest):
    # 10*3 + 10*(0.9+1+1) + 20*1 (p) + 20*100 (q) = 30 + 29 + 20 + 2000
    assert evaluate(inst, ["v0", "p", "q"])[0] == pytest.approx(2079.0)


def test_check_a_paper_weights_swap_fails():
    # Eq. 9/10 as printed put N*xi_D on (D,v): a layer on the device side is charged N*xi_S and
    # vice versa. With xi_S < xi_D everywhere, the printed graph keeps everything on the device,
    # whose true cost is the runner-up 2040 (hand: 10*(1+1+1+1+100+100)).
    inst = check_a()
    dev = mincut.solve(inst, variant="paper")
    assert dev == sorted(["v0", "p", "q", "u", "a", "out"])
    assert evaluate(inst, dev)[0] == pytest.approx(2040.0)


def test_check_b_no_closure_arcs_gives_infeasible_split():
    inst = check_b()
    # without closure arcs x -> w (server -> device) is free:
    # {v0,p,w}: 10*(1+1+1) + 10*0.5 + 20*0.05 (p's tensor) = 30 + 5 + 1 = 36.
    relaxed = mincut.solve_detailed(inst, closure=False)
    assert relaxed.device == ["p", "v0", "w"]
    assert relaxed_cost(inst, relaxed.device) == pytest.approx(36.0)
    with pytest.raises(InfeasibleSolution, match="'x' -> 'w'"):
        evaluate(inst, relaxed.device)
    # feasible optimum {v0}: 10*1 + 10*1.5 + 20*50 = 1025 (hand; others: {v0,p} 1031, all 1030)
    dev = mincut.solve(inst)
    assert dev == ["v0"]
    assert evaluate(inst, dev)[0] == pytest.approx(1025.0)
    assert bruteforce.solve_detailed(inst)[0] == pytest.approx(1025.0)
    assert bruteforce.solve_detailed(inst, closed=False)[0] == pytest.approx(36.0)


def test_check_c_unpinned_input_makes_all_server_optimal():
    # chain with xi_D >= xi_S: without the input pin the empty device set is optimal, cost
    # N*sum(xi_S) = 10*(0.5+0.5+0.5) = 15 (digest 000 E3, Check C).
    L = [("a", 1, 0.5, 0.1), ("b", 2, 0.5, 0.1), ("c", 3, 0.5, 0.1)]
    inst = training(L, [("a", "b"), ("b", "c")])
    assert mincut.solve(inst, pins=False) == []
    assert relaxed_cost(inst, []) == pytest.approx(15.0)
    with pytest.raises(InfeasibleSolution, match="input layer"):
        evaluate(inst, [])
    # pinned: {a} costs 10*1 + 10*1 + 20*0.1 = 22, the optimum (hand: {a,b} 30+5+2 = 37)
    assert mincut.solve(inst) == ["a"]
    assert evaluate(inst, ["a"])[0] == pytest.approx(22.0)


def test_check_e_plain_block_rule_abstracts_wrongly():
    # pre -> v_in -> x -> {y1,y2,y3} -> out -> post; block {x, y1..y3, out}; a_in = 10, a_x = 4,
    # a_y = 20. xi_S = 0; xi_D: pre 4, v_in 4, x 0, others 100. Tensor cost 20*a.
    # cut after v_in: 10*(4+4) + 20*10 = 280; cut after x: 80 + 20*4 = 160 (digest: 280 vs 160).
    L = [("pre", 4, 0, 100), ("v_in", 4, 0, 10), ("x", 0, 0, 4), ("y1", 100, 0, 20), ("y2", 100, 0, 20),
         ("y3", 100, 0, 20), ("out", 100, 0, 1), ("post", 100, 0, 1)]
    E = [("pre", "v_in"), ("v_in", "x"), ("x", "y1"), ("x", "y2"), ("x", "y3"), ("y1", "out"), ("y2", "out"),
         ("y3", "out"), ("out", "post")]
    inst = training(L, E, blocks={n: "B" for n in ("x", "y1", "y2", "y3", "out")})
    assert evaluate(inst, mincut.solve(inst))[0] == pytest.approx(160.0)
    assert mincut.solve(inst) == ["pre", "v_in", "x"]
    # the printed rule: plain block min cut = min(10, 3*4, 3*20) = 10 >= a_in = 10 -> abstracted
    r = blockwise.blockwise_detailed(inst, "paper", regions="labels")
    assert ["x", "y1", "y2", "y3", "out"] in r["groups"]
    assert evaluate(inst, r["device"])[0] == pytest.approx(280.0)
    # corrected rule: transmit-once block min cut = 4 < 10 -> block kept expanded, optimum 160
    for regions in ("labels", "sese"):
        r = blockwise.blockwise_detailed(inst, "corrected", regions=regions)
        assert evaluate(inst, r["device"])[0] == pytest.approx(160.0)


def test_plain_mincut_overcounts_fanout_110_vs_80():
    # digest 000 §3.2: v0 -> p -> {c1,c2,c3} -> out, a_v0 = 2.5, a_p = 1, N = 10, R = 1, v0 pinned.
    # compute: v0 on device 10*1, c_i on server 10*1 each, out on server 10*2 -> 60 in both splits.
    # {v0}: 60 + 20*2.5 = 110; {v0,p}: 60 + 20*1 = 80; plain cut of {v0,p}: 60 + 3*20 = 120.
    L = [("v0", 1, 1, 2.5), ("p", 0, 0, 1), ("c1", 100, 1, 100), ("c2", 100, 1, 100), ("c3", 100, 1, 100),
         ("out", 100, 2, 1)]
    E = [("v0", "p"), ("p", "c1"), ("p", "c2"), ("p", "c3"), ("c1", "out"), ("c2", "out"), ("c3", "out")]
    inst = training(L, E)
    assert mincut.plain_mincut(inst) == ["v0"]
    assert evaluate(inst, ["v0"])[0] == pytest.approx(110.0)
    assert mincut.solve(inst) == ["p", "v0"]
    assert evaluate(inst, ["p", "v0"])[0] == pytest.approx(80.0)


# ---------------------------------------------------------------- seed 002
def test_qdmp_2_6_missing_closure_arcs():
    inst = fig_2_6()
    r = qdmp.solve_detailed(inst, "paper")
    # digest 002 §2.6: paper graph min cut V_e = {v1,p,w}, value 4.5 (x's output returns for free)
    assert r.device == ["p", "v1", "w"]
    assert r.value == pytest.approx(4.5)
    assert relaxed_cost(inst, r.device) == pytest.approx(4.5)
    with pytest.raises(InfeasibleSolution, match="'x' -> 'w'"):
        evaluate(inst, r.device)
    # best closed partition: all on the edge, 1+1+100+1 = 103
    for dev in (qdmp.solve(inst), mincut.solve(inst)):
        assert dev == ["p", "v1", "w", "x"]
        assert evaluate(inst, dev)[0] == pytest.approx(103.0)


def test_qdmp_theorem2_counterexample_3_1():
    inst = fig_3_1()
    # global min cut of the paper graph: 8.0 (cuts p->x and p2->x2 on both sides of w):
    # t_e of v1,p,w,p2,w2 = 5; t_c of x,x2 = 1; two transmissions of 1 -> 8.
    r = qdmp.solve_detailed(inst, "paper")
    assert r.value == pytest.approx(8.0)
    assert relaxed_cost(inst, r.device) == pytest.approx(8.0)
    with pytest.raises(InfeasibleSolution):
        evaluate(inst, r.device)
    # segment-wise with correct boundaries but no closure arcs: 106.5 (digest):
    # prefix v1,p,x = 102, then w,p2,w2 on edge (3), x2 on cloud (0.5), p2 -> x2 (1).
    assert qdmp.solve_detailed(inst, closure=False).value == pytest.approx(106.5)
    # closed optimum: everything on the edge, 1+1+100+1+1+100+1 = 205
    assert evaluate(inst, qdmp.solve(inst))[0] == pytest.approx(205.0)
    assert evaluate(inst, mincut.solve(inst))[0] == pytest.approx(205.0)


def test_qdmp_paper_boundaries_chain_3_3():
    # digest 002 §3.3: chain t_e = (1,1,1,50), t_c = 0.1, d/B = 100 each, tau = 100.
    L = [("v1", 1, 0.1, 100), ("v2", 1, 0.1, 100), ("v3", 1, 0.1, 100), ("v4", 50, 0.1, 100)]
    inst = inference(L, [("v1", "v2"), ("v2", "v3"), ("v3", "v4")], tau=100)
    r = qdmp.solve_detailed(inst, "paper")
    assert r.value == pytest.approx(2.2)          # reported: v2's output to v3 is never charged
    assert r.device == ["v1", "v2"]
    assert evaluate(inst, r.device)[0] == pytest.approx(102.2)   # 1+1+100+0.1+0.1
    dev = qdmp.solve(inst)
    assert dev == ["v1", "v2", "v3", "v4"] and evaluate(inst, dev)[0] == pytest.approx(53.0)


def test_bridge_test_misses_articulation_points():
    # digest 002 §3.2: s -> {a,b} -> m -> {c,d} -> t: true cut vertex set {m}; '>' finds none.
    names = ["s", "a", "b", "m", "c", "d", "t"]
    E = [("s", "a"), ("s", "b"), ("a", "m"), ("b", "m"), ("m", "c"), ("m", "d"), ("c", "t"), ("d", "t")]
    g = DNNGraph([Layer(n) for n in names], E)
    assert qdmp.cut_layers(g, variant="paper") == []
    assert [g.layers[i].name for i in qdmp.cut_layers(g)] == ["m"]
