"""The branch and price of the device model (branchprice): the DP pricing under branching pairs is
the exact maximum over the sets that meet them (by enumeration), and a decision at a value is
never wrong against the brute-force optimum (no proof at the optimum, no placement below it)."""

import math

import networkx as nx
import numpy as np
import pytest

from splitopt.errors import NoFeasibleSolution
from splitopt.families import solve
from splitopt.instances.placement import generate
from splitopt.models.placement import evaluate
from splitopt.solvers.placement.branchprice import BranchPrice, Node
from splitopt.solvers.placement.colgen import EXACT, relaxation
from splitopt.solvers.placement.columns import _placement
from splitopt.solvers.placement.configlp import prove_above
from splitopt.solvers.placement.pathdp import _PathDP
from splitopt.solvers.placement.pricing import _Data


def _subsets(G):
    for mask in range(1, 1 << G):
        yield np.array([(mask >> g) & 1 for g in range(G)], bool)


def _convex(inst, d, S):
    # no forward path leaves the set's forward nodes and re-enters them (transitive closure)
    fwd = nx.DiGraph([(u, c) for u, cons, _s in inst.tensors if not inst.backward[u] for c in cons
                      if not inst.backward[c]])
    fwd.add_nodes_from(i for i in range(inst.n_nodes) if not inst.backward[i])
    inside = {i for g in np.flatnonzero(S) for i in d.classes[g] if not inst.backward[i]}
    tc = nx.transitive_closure_dag(fwd)
    return not any(tc.has_edge(a, v) and tc.has_edge(v, b) for a in inside for b in inside
                   for v in fwd if v not in inside)


@pytest.mark.parametrize("contiguity", ("none", "convex"))
@pytest.mark.parametrize("seed", range(6))
def test_pricing_under_pairs_is_the_exact_maximum(seed, contiguity):
    inst = generate(seed, n_nodes=8, n_accelerators=2, n_cpus=1, skips=3, memory=False, colours=0,
                    unsupported=seed % 2, contiguity=contiguity)
    d = _Data(inst)
    rng = np.random.default_rng(seed)
    total = math.fsum(d.acc) + math.fsum(s for _u, _g, s in d.tens)
    V = 0.5 * total
    root = _PathDP.build(d, V)
    assert root is not None and root.convex == (contiguity == "convex")
    ok = [S for S in _subsets(d.G) if d.fits(S, V) and (contiguity == "none" or _convex(inst, d, S))]
    for _ in range(4):
        a, b, c, e = (int(x) for x in rng.choice(d.G, 4, replace=False))
        pairs = ((a, b, True), (c, e, False))
        dp = _PathDP(d, V, root.order, root.convex, pairs=pairs)
        node = Node(pairs, np.zeros(d.G, bool), np.zeros(d.G, bool))
        meet = [S for S in ok if node.admitted([S], False)[0]]
        assert len(meet) < len(ok)  # the pairs exclude sets: the test can fail
        pi = rng.random(d.G)
        want = max((math.fsum(pi[S]) for S in meet), default=0.0)
        got, sets = dp.price(pi, ncols=5)
        assert math.isclose(got, want, rel_tol=1e-12), (got, want)
        assert all(node.admitted([S], False)[0] for S in sets)


def _case(seed, contiguity):
    rng = np.random.default_rng([seed, 5])
    return generate(seed, n_nodes=int(rng.integers(5, 8)), n_accelerators=int(rng.integers(2, 4)),
                    n_cpus=int(rng.integers(0, 3)), training=seed % 3 == 0, contiguity=contiguity, memory=False,
                    skips=int(rng.integers(0, 4)), colours=0)


@pytest.mark.parametrize("contiguity", ("none", "convex"))
@pytest.mark.parametrize("seed", range(8))
def test_decisions_agree_with_brute_force(seed, contiguity):
    inst = _case(seed, contiguity)
    opt = solve(inst, "bruteforce").objective
    d = _Data(inst)
    below = BranchPrice(inst, d, opt * (1 - 1e-7))
    assert below.ok
    assert below.decide(None, max_nodes=500)[0] == "proven"
    # the value that certifies an optimum (colgen.EXACT below it) is proven too: the DP's load
    # tolerance admits none of the optimum's sets there
    assert BranchPrice(inst, d, opt * (1 - EXACT)).decide(None, max_nodes=500)[0] == "proven"
    at = BranchPrice(inst, d, opt * (1 + 1e-9))
    verdict, place = at.decide(None, max_nodes=500)
    assert verdict == "found"
    assert evaluate(inst, _placement(inst, d, place))[0] <= opt * (1 + 1e-9)


def test_decisions_agree_with_brute_force_where_memory_binds(monkeypatch):
    # memory that binds (2026-11-29: a node's LP switches to the LP with memory, priced by the DP
    # with memory exact): just below the optimum "proven" (before, a node's LP without memory left
    # leaves whose columns do not fit: undecided); on cases where some node switched (counted)
    from splitopt.solvers.placement import configlp
    from splitopt.solvers.placement.pricing import _max_memory

    switched = []
    real = configlp._ColGen._with_memory

    def spy(self):
        out = real(self)
        switched.append(out and self.node is not None)
        return out

    monkeypatch.setattr(configlp._ColGen, "_with_memory", spy)
    cases = 0
    for seed in range(40):
        rng = np.random.default_rng([seed, 7])
        inst = generate(seed, n_nodes=int(rng.integers(5, 8)), n_accelerators=int(rng.integers(2, 4)),
                        n_cpus=int(rng.integers(0, 2)), training=seed % 3 == 0, memory=True, colours=0,
                        skips=int(rng.integers(0, 4)))
        d = _Data(inst)
        try:
            opt = solve(inst, "bruteforce").objective
        except NoFeasibleSolution:
            continue
        if d.cap is None or _max_memory(d, opt) <= d.cap:
            continue  # memory cannot bind here
        switched.clear()
        assert BranchPrice(inst, d, opt * (1 - 1e-7)).decide(None, max_nodes=500)[0] == "proven", seed
        cases += any(switched)
        # at the optimum never "proven"; a placement found meets it (a leaf whose placement the
        # evaluator rejects, e.g. its CPU classes over V, leaves the search undecided: allowed)
        verdict, place = BranchPrice(inst, d, opt * (1 + 1e-9)).decide(None, max_nodes=500)
        assert verdict != "proven", seed
        if verdict == "found":
            assert evaluate(inst, _placement(inst, d, place))[0] <= opt * (1 + 1e-9)
        if cases >= 3:
            break
    assert cases >= 3


@pytest.mark.parametrize("seed, length, contiguity", ((13, 4, "none"), (6, 5, "none"), (38, 5, "convex")))
def test_branching_proves_where_the_lp_cannot(seed, length, contiguity):
    # three branches of a few layers, training, three accelerators: just below the optimum (the
    # exact MILP's, a second method) the configuration LP reaches k columns, so only branching
    # proves the value; at the optimum it finds a placement
    from splitopt.instances.placement_gen import layer_graph

    inst = layer_graph(seed, 3, length, training=True, n_accelerators=3 + (contiguity == "convex"), n_cpus=1,
                       contiguity=contiguity)
    ref = solve(inst, "milp")
    assert ref.status == "optimal"
    V = ref.objective * (1 - 1e-7)
    assert prove_above(inst, V)[0] == "no"
    d = _Data(inst)
    bp = BranchPrice(inst, d, V)
    assert bp.decide(None, max_nodes=2000)[0] == "proven" and bp.nodes > 1
    verdict, place = BranchPrice(inst, d, ref.objective * (1 + 1e-9)).decide(None, max_nodes=2000)
    assert verdict == "found"
    assert evaluate(inst, _placement(inst, d, place))[0] <= ref.objective * (1 + 1e-9)


def test_relaxation_bound_passes_the_lps_with_branching():
    # colgen's search: with branch and price its bound passes the LP's own threshold, stays at or
    # below the exact MILP's optimum, and its placement is scored by the evaluator
    from splitopt.instances.placement_gen import layer_graph

    inst = layer_graph(13, 3, 4, training=True, n_accelerators=3, n_cpus=1, contiguity="none")
    opt = solve(inst, "milp").objective
    lp = relaxation(inst, time_limit=20, target_gap=1e-9, branch=False)
    bp = relaxation(inst, time_limit=20, target_gap=1e-9)
    assert lp.bound < opt * (1 - 1e-6)  # the LP alone leaves a gap: the test can fail
    assert lp.bound < bp.bound <= opt * (1 + 1e-9)
    assert any("branch_and_price" in t for t in bp.info["tried"])
    assert evaluate(inst, bp.assignment)[0] >= opt * (1 - 1e-9)


def test_dives_beside_the_branch_and_price_only_near_the_threshold(monkeypatch):
    # where the branch and price decides values, a value the LP reaches k at gets a dive only just
    # above the largest proven value (within 2.5 climbs) and only where its Lagrangian is within
    # DIVE_SLACK of k; a dive's placement is real (never below the optimum) and the bound holds
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement import colgen

    inst = layer_graph(13, 3, 4, training=True, n_accelerators=3, n_cpus=1, contiguity="none")
    opt = solve(inst, "milp").objective
    monkeypatch.setattr(colgen, "DIVE_SLACK", 1.0)  # every Lagrangian qualifies: the window decides
    r = relaxation(inst, time_limit=20, target_gap=1e-9)
    tried = r.info["tried"]
    assert any("branch_and_price" in t for t in tried)
    dives = [i for i, t in enumerate(tried) if "dive" in t]
    assert dives  # (the test can fail: no dive at all)
    for i in dives:
        below = [t["V"] for t in tried[:i] if t.get("verdict") == "proven"]
        assert tried[i]["verdict"] == "no" and below
        assert tried[i]["V"] <= max(below) * (1 + 2.5 * 0.8e-3) * (1 + 1e-12)
        assert tried[i]["dive"] >= opt * (1 - 1e-9)
    assert r.bound <= opt * (1 + 1e-9) and evaluate(inst, r.assignment)[0] >= opt * (1 - 1e-9)
    monkeypatch.setattr(colgen, "DIVE_SLACK", -1.0)  # no Lagrangian qualifies: no dive
    assert not any("dive" in t for t in relaxation(inst, time_limit=20, target_gap=1e-9).info["tried"])
    # convex: no such dive (they found nothing there and took the branching's time); without the
    # rule this instance dives at its third value the LP reaches k at
    monkeypatch.setattr(colgen, "DIVE_SLACK", 1.0)
    conv = inst.with_(contiguity="convex")
    tried = relaxation(conv, time_limit=20, target_gap=1e-9).info["tried"]
    assert any(t.get("verdict") == "no" for t in tried) and not any("dive" in t for t in tried)


def test_wide_dives_bring_a_poor_placement_within_the_branching(monkeypatch):
    # WIDE_DIVES: with the placement more than BRANCH_GAP above the proven bound (here every class on
    # one accelerator), the branch and price would not start; dives at values between the two find
    # placements (real ones: never below the optimum) and the bound holds. Without them (and no
    # re-placement beside) the poor placement is the answer.
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement import colgen

    inst = layer_graph(13, 3, 4, training=True, n_accelerators=3, n_cpus=1, contiguity="none")
    opt = solve(inst, "milp").objective
    poor = [inst.devices[0]] * len(inst.nodes)
    pv = evaluate(inst, poor)[0]
    assert pv > opt * (1 + 2 * colgen.BRANCH_GAP)
    r = relaxation(inst, time_limit=30, target_gap=1e-9, incumbent=poor)
    wide = [t for t in r.info["tried"] if "wide_dive" in t]
    assert wide
    assert all(t["wide_dive"] >= opt * (1 - 1e-9) for t in wide)
    v = evaluate(inst, r.assignment)[0]
    assert r.bound <= opt * (1 + 1e-9) <= v * (1 + 1e-9)
    assert v < pv * (1 - colgen.BRANCH_GAP)  # (can fail: no dive found a placement)
    monkeypatch.setattr(colgen, "WIDE_DIVES", ())
    r = relaxation(inst, time_limit=30, target_gap=1e-9, incumbent=poor)
    assert not any("wide_dive" in t for t in r.info["tried"])
    assert not any("branch_and_price" in t for t in r.info["tried"])


def test_dives_go_on_after_an_undecided_branch_and_price(monkeypatch):
    # DIVE_FLOOR: where the branch and price ends undecided with nothing better, the wide dives take
    # the LP's time left (BERT-L12 training, non-contiguous: 373.424 ms where the MILP after it left
    # 374.24 ms). Here the branch and price is made to end undecided at once; the dives after it
    # are real (never below the optimum) and the bound holds.
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement import colgen

    def undecided(self, deadline, max_nodes=None):
        self.nodes = 0
        return "undecided", None

    monkeypatch.setattr(colgen.BranchPrice, "decide", undecided)
    runs = 0
    for seed in (13, 6, 3, 8):
        inst = layer_graph(seed, 3, 4, training=True, n_accelerators=3, n_cpus=1, contiguity="none")
        opt = solve(inst, "milp").objective
        poor = [inst.devices[0]] * len(inst.nodes)
        r = relaxation(inst, time_limit=30, target_gap=1e-9, incumbent=poor)
        tried = r.info["tried"]
        v = evaluate(inst, r.assignment)[0]
        assert r.bound <= opt * (1 + 1e-9) <= v * (1 + 1e-9)
        bp = [i for i, t in enumerate(tried) if "branch_and_price" in t]
        if not bp:
            continue
        runs += 1
        after = [t for t in tried[bp[0] + 1:] if "wide_dive" in t]
        assert after
        assert all(t["wide_dive"] >= opt * (1 - 1e-9) for t in after)
    assert runs  # (can fail: every case closed before the branch and price)


@pytest.mark.parametrize("contiguity", ("none", "convex"))
@pytest.mark.parametrize("seed", range(8))
def test_relaxation_certifies_only_true_optima(seed, contiguity):
    # target_gap 0 (what milp asks without a mip_gap): the bound never passes the brute-force
    # optimum, and where it meets the placement's value within the package's 1e-9 that placement is
    # the optimum
    inst = _case(seed, contiguity)
    opt = solve(inst, "bruteforce").objective
    r = relaxation(inst, time_limit=20, target_gap=0.0)
    value = evaluate(inst, r.assignment)[0]
    assert r.bound <= opt * (1 + 1e-12)
    if value - r.bound <= 1e-9 * value:
        assert math.isclose(value, opt, rel_tol=1e-12)


@pytest.mark.parametrize("seed, length, contiguity", ((13, 4, "none"), (6, 5, "none")))
def test_milp_certifies_by_branch_and_price(seed, length, contiguity):
    # where the LP reaches k just below the optimum (the cases above; the convex one starts 1.6 %
    # apart, beyond colgen.BRANCH_GAP: the MILP proves it), milp without a mip_gap
    # still ends optimal by the configuration LP's branch and price (EXACT below the optimum), and
    # agrees with the MILP run alone (a second method)
    from splitopt.instances.placement_gen import layer_graph

    inst = layer_graph(seed, 3, length, training=True, n_accelerators=3 + (contiguity == "convex"), n_cpus=1,
                       contiguity=contiguity)
    alone = solve(inst, "milp")  # no time limit: no configuration LP
    r = solve(inst, "milp", time_limit=30)
    assert alone.status == r.status == "optimal"
    assert r.info["proof"] == "colgen"
    assert math.isclose(r.objective, alone.objective, rel_tol=1e-9)
    assert r.objective - r.bound <= 1e-9 * r.objective


def test_time_the_milp_leaves_certifies_its_placement(monkeypatch):
    # the configuration LP starts from a poor placement (all on the CPU core: too far for the
    # branching), the MILP phase (stubbed) ends with the optimum but only the LP's bound: the time
    # left goes to the branch and price, which certifies that placement (the optimum of the exact
    # MILP run alone, a second method)
    from splitopt.families import AlgoResult
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.solvers.placement import milp

    inst = layer_graph(13, 3, 4, training=True, n_accelerators=3, n_cpus=1, contiguity="none")
    ref = solve(inst, "milp")
    assert ref.status == "optimal"
    poor = ["cpu0"] * inst.n_nodes
    monkeypatch.setattr(milp, "_incumbent", lambda instance, limit, notes=None, chain_dp=None: (poor, evaluate(instance, poor)[0]))
    seen = {}

    def phase(instance, solver, time_limit, mip_gap, symmetry, t0, polish, early, inc, inc_val, inc_src, lb, lbs,
              info, proven):
        seen["lb"] = lb
        return AlgoResult(list(ref.assignment), status="time_limit", bound=lb, info=info)

    monkeypatch.setattr(milp, "_milp_phase", phase)
    # (with its wide dives the LP finds and certifies the optimum itself: no MILP phase)
    from splitopt.solvers.placement import colgen

    monkeypatch.setattr(colgen, "WIDE_DIVES", ())
    r = milp.solve(inst, time_limit=20)
    assert seen["lb"] < ref.objective * (1 - 1e-6)  # the LP alone left a gap: the test can fail
    assert r.status == "optimal" and r.info["proof"] == "colgen" and "certify" in r.info
    value = evaluate(inst, r.assignment)[0]
    assert math.isclose(value, ref.objective, rel_tol=1e-9) and value - r.bound <= 1e-9 * value
