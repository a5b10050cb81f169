"""The ideal branch and bound (``ideals``, contiguity ``chain``) against brute force and the MILP on
graphs of parallel branches, the shape of the peer's GNMT layer graphs (many incomparable ideals).

Regression: its memo once recorded a max-load state as failed *for any partial load* after a
completion found inside it had brought the incumbent down to that partial load, so a later visit
with a smaller partial load was cut and better chains were skipped. On the 8-node graph below it
called 2.5786 optimal where 2.3069 exists; on a 95-node graph of three branches, the search from the
sources and the one from the sinks each called a different value optimal (23.04, 23.06; the
optimum is 22.95). Found 2026-11-24 by the fuzz this file keeps (4 of 400 seeded graphs)."""

import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

from splitopt.families import solve
from splitopt.instances.placement import PlacementInstance
from splitopt.instances.placement_gen import layer_graph


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def two_branches() -> PlacementInstance:
    """src -> a0 -> a1 -> a2 -> sink and src -> b0 -> b1 -> b2 -> sink; 3 accelerators, 1 CPU core."""
    names = ("src", "a0", "a1", "a2", "b0", "b1", "b2", "sink")
    acc = (0.05, 0.779, 0.166, 0.842, 2.033, 1.150, 0.855, 0.3)
    cpu = (0.877, 4.749, 1.309, 11.878, 33.530, 19.926, 4.919, 5.316)
    tensors = ((0, (1, 4), 0.090), (1, (2,), 0.232), (2, (3,), 0.533), (3, (7,), 0.164),
               (4, (5,), 0.179), (5, (6,), 0.148), (6, (7,), 0.124))
    return PlacementInstance(names, cpu, acc, tensors, n_accelerators=3, n_cpus=1, contiguity="chain")


def branches(seed: int) -> PlacementInstance:
    """2-3 parallel branches of 3-7 layers, 2-4 accelerators, the training mirror every other seed."""
    rng = np.random.default_rng([seed, 2211])
    return layer_graph(seed, int(rng.integers(2, 4)), int(rng.integers(3, 8)), training=seed % 2 == 1,
                       n_accelerators=int(rng.integers(2, 5)))


def test_memo_keeps_partial_loads_that_cut_the_search():
    inst = two_branches()
    bf = solve(inst, "bruteforce")
    for direction in ("forward", "reverse", "auto"):
        r = solve(inst, "ideals", direction=direction, dp=False)
        assert r.status == "optimal" and close(r.objective, bf.objective), direction
    r = solve(inst, "ideals", direction="forward")  # one direction: the DP runs first
    assert r.info["dp"] == "proved" and r.status == "optimal" and close(r.objective, bf.objective)


@pytest.fixture(scope="module")
def kernels():
    """The compiled kernels loaded in this process (the DP runs first only then)."""
    from splitopt.solvers.placement import idealdp
    from splitopt.solvers.placement.warmup import warm

    if not idealdp._loaded():
        warm()


@pytest.mark.parametrize("seed", range(40))
def test_ideals_equals_milp_on_parallel_branches(seed, monkeypatch, kernels):
    """The search from either end, the DP over all ideals (:mod:`.idealdp`) first and alone
    (:func:`.ideals._dp_first`), and the DP after the incumbent and bounds = the MILP."""
    from splitopt.solvers.placement import ideals

    inst = branches(seed)
    m = solve(inst, "milp", time_limit=60)
    assert m.status == "optimal"
    runs = {d: solve(inst, "ideals", direction=d, dp=False) for d in ("forward", "reverse")}
    runs["dp"] = solve(inst, "ideals")
    assert runs["dp"].info["proof"] == "DP over all ideals"  # (a few hundred ideals at most)
    with monkeypatch.context() as mp:
        mp.setattr(ideals, "DP_FIRST", 0)
        runs["dp-late"] = solve(inst, "ideals", direction="forward")  # one direction: the DP runs first
    assert runs["dp-late"].info.get("dp") == "proved" or runs["dp-late"].info.get("proof") == "isolation bound"
    for how, r in runs.items():
        assert r.status == "optimal" and close(r.objective, m.objective, 1e-7), (how, r.objective, m.objective)


def test_dp_gives_way_where_the_ideals_are_too_many():
    import math

    from splitopt.instances.placement_gen import operator_graph
    from splitopt.solvers.placement.common import Contracted
    from splitopt.solvers.placement.idealdp import list_ideals, solve_dp

    # a GNMT-like grid of LSTM cells: a level of more than log2(MAX_IDEALS) incomparable cells
    grid = operator_graph(1, "gnmt", 300, contiguity="chain")
    assert solve_dp(grid, Contracted(grid), math.inf) is None
    layers = layer_graph(0, 3, 31)
    assert list_ideals(Contracted(layers), cap=1000) is None
    # and then the search answers alone, with its bounds
    r = solve(grid, "ideals", time_limit=5)
    assert r.info.get("dp") != "proved" and r.bound <= r.objective


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_dp_after_the_local_search_equals_milp(seed, monkeypatch):
    """On many ideals (``DP_NOW``; here forced on small graphs) the DP runs at once, after a short
    chain local search: still the MILP's optimum."""
    from splitopt.solvers.placement import ideals

    monkeypatch.setattr(ideals, "DP_NOW", 1)
    inst = branches(seed)
    r = solve(inst, "ideals")
    assert r.info.get("dp") == "proved" or r.info.get("proof") == "isolation bound"
    m = solve(inst, "milp", time_limit=60)
    assert m.status == r.status == "optimal" and close(r.objective, m.objective, 1e-7)


@pytest.mark.parametrize("contiguity", ["convex", "none"])
def test_convex_incumbent_is_at_most_the_chain_optimum(contiguity):
    """Every chain placement is convex: where the DP over all ideals applies, the convex search starts
    from the chain optimum (it once answered 33.16 ms on three branches of 50 layers, chain optimum
    33.06 ms, when the chain step had 5 s and the DP half of them). No time limit: the DP then gets
    30 s, where it needs 1.3-5.4 s on this graph depending on the machine's load (with a 20 s limit,
    5 s for the DP, the test failed on a loaded machine on 2026-11-27)."""
    from splitopt.models.placement import evaluate
    from splitopt.solvers.placement.idealdp import listable
    from splitopt.solvers.placement.incumbent import incumbent

    chain = layer_graph(0, 3, 31)  # 20,738 ideals
    assert listable(chain)
    opt = solve(chain, "ideals")
    assert opt.status == "optimal" and opt.info.get("dp") == "proved"
    other = chain.with_(contiguity=contiguity)
    # (the MILP asks for the DP's share for none as well, since 2026-11-27, except in the relaxation
    # that runs beside a convex model for its bound)
    a, v = incumbent(other, time_limit=None, chain_dp=True)
    assert close(v, evaluate(other, a)[0]) and v <= opt.objective * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(60))
def test_compiled_dp_equals_brute_force(seed):
    """The DP over all ideals (:func:`~.idealdp.solve_dp`, its compiled walk up the lattice of
    ideals) against brute force on small chain instances with every option drawn: memory caps,
    CPU-only nodes, 0-2 CPU cores, skip edges, colour pairs, training mirrors. From no incumbent it
    returns the optimum; from the optimum as incumbent it finds nothing strictly below (the
    incumbent is then optimal); from just above it finds the optimum again."""
    import math

    from splitopt.errors import InfeasibleSolution, InstanceError
    from splitopt.instances.placement import generate
    from splitopt.models.placement import evaluate
    from splitopt.solvers.placement.common import contracted
    from splitopt.solvers.placement.idealdp import solve_dp
    from splitopt.solvers.placement.ideals import assignment_from_blocks

    rng = np.random.default_rng([seed, 515])
    n_cpus = int(rng.integers(0, 3))
    inst = generate(seed, n_nodes=int(rng.integers(5, 8)), n_accelerators=int(rng.integers(1, 4)), n_cpus=n_cpus,
                    skips=int(rng.integers(0, 4)), training=bool(seed % 3 == 2), contiguity="chain",
                    **({} if n_cpus else {"unsupported": 0, "memory": False}))
    try:
        bf = solve(inst, "bruteforce")
    except InfeasibleSolution:
        pytest.skip("no placement fits")
    try:
        con = contracted(inst)
    except InstanceError:
        pytest.skip("backward-only colour classes: the DP does not apply")
    blocks, value = solve_dp(inst, con, math.inf)
    assert close(evaluate(inst, assignment_from_blocks(inst, con, blocks))[0], bf.objective)
    assert close(value, bf.objective, 1e-7)
    assert solve_dp(inst, con, bf.objective) == (None, bf.objective)
    blocks, value = solve_dp(inst, con, bf.objective * (1 + 1e-6))
    assert close(evaluate(inst, assignment_from_blocks(inst, con, blocks))[0], bf.objective)
    # from below: targets between a bound and an incumbent; each target that fails is a bound
    proved: list = []
    blocks, value = solve_dp(inst, con, 1.5 * bf.objective, lb=0.6 * bf.objective, bounds=proved)
    assert close(evaluate(inst, assignment_from_blocks(inst, con, blocks))[0], bf.objective)
    assert 0.6 * bf.objective < min(proved, default=bf.objective) and max(proved, default=0) <= bf.objective


@pytest.mark.parametrize("make", [lambda: layer_graph(0, 3, 12), lambda: layer_graph(2, 2, 9, training=True),
                                  lambda: __import__("splitopt.instances.placement_gen", fromlist=["x"]).operator_graph(
                                      0, "inception", 120, contiguity="chain")])
def test_compiled_listing_equals_the_python_listing(make):
    """The compiled reverse search (:func:`~.idealdp._compiled`) lists the same ideals as the Python
    one (:func:`~.idealdp.list_ideals`), each with its work, CPU work, memory and unsupported count;
    its cut tensors are those with ``0 < |M ∩ J| < |M|`` (counted here from the masks), and its
    covers are exactly ``J + s`` for ``s`` on the frontier."""
    from splitopt.solvers.placement.common import Contracted, bits
    from splitopt.solvers.placement.idealdp import _compiled, list_ideals

    con = Contracted(make())
    masks, aw, cw, sz, us, fronts = list_ideals(con, cap=10**6)
    lat = _compiled(con, None, 10**6)
    got = {lat.mask(j): j for j in range(lat.n_ideals)}
    assert len(got) == lat.n_ideals == len(masks) and set(got) == set(masks)
    for i, m in enumerate(masks):
        j = got[m]
        assert close(lat.aw[j], aw[i], 1e-12) and close(lat.cw[j], cw[i], 1e-12) and close(lat.sz[j], sz[i], 1e-12)
        assert lat.us[j] == us[i]
        cut = {}
        for t, (su, cm, sec, _bw) in enumerate(con.tensors):
            members = cm | (1 << su)
            c = bin(members & m).count("1")
            if 0 < c < bin(members).count("1"):
                cut[t] = c
        lo, hi = lat.cut_ptr[j], lat.cut_ptr[j + 1]
        assert dict(zip(lat.cut_idx[lo:hi].tolist(), lat.cut_cnt[lo:hi].tolist())) == cut
        want = sum(con.tensors[t][2] for t in cut)
        assert abs(lat.cut_sec[j] - want) <= 1e-12 * max(want, 1e-300)
        ups = sorted(lat.mask(x) for x in lat.up_idx[lat.up_ptr[j]:lat.up_ptr[j + 1]])
        assert ups == sorted(m | (1 << s) for s in bits(fronts[i]))
    assert lat.mask(lat.full) == con.full


def test_dp_first_proves_the_small_packaged_workloads_and_gives_way_before_the_kernels_load(kernels):
    # the peer's BERT-24 and ResNet-50 (packaged): the DP alone proves the chain optimum (the same
    # value as the full path: the search with its incumbent and bounds); in a process that has not
    # loaded the compiled kernels it gives way to that path (which proves these without them)
    from splitopt.instances.importers.dnn_partitioning import load_packaged
    from splitopt.models.placement import evaluate
    from splitopt.solvers.placement import idealdp, ideals

    for name in ("bert24_training", "resnet50_inference"):
        inst = load_packaged(name, contiguity="chain")
        r = ideals.solve(inst, time_limit=60)
        assert r.status == "optimal" and r.info["proof"] == "DP over all ideals" and r.info["ideals"] <= ideals.DP_FIRST
        full = ideals.solve(inst, time_limit=60, dp=False)
        v, vf = evaluate(inst, r.assignment)[0], evaluate(inst, full.assignment)[0]
        assert full.status == "optimal" and close(v, vf, 1e-12) and r.bound <= v
        with mock.patch.object(idealdp, "_loaded", lambda: False):
            cold = ideals.solve(inst, time_limit=60)
        assert "ideals" not in cold.info and close(evaluate(inst, cold.assignment)[0], v, 1e-12)
    code = ("import sys; from splitopt.instances.importers.dnn_partitioning import load_packaged; "
            "from splitopt.solvers.placement import ideals; "
            "r = ideals.solve(load_packaged('bert24_training', contiguity='chain'), time_limit=60); "
            "print(r.status, 'splitopt.solvers.placement.idealdp_kernel' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["optimal", "False"], out.stderr[-2000:]

