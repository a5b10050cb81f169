"""The device communication model of the throughput family (issue 11): on seeded small DAGs
(chains with skips, training mirrors, memory limits, colour classes, CPU-only nodes) brute force =
the MILP = the ideal branch and bound, for both objectives and every contiguity; bounds never above
the optimum; on the four shipped workloads of msr-fiddle/dnn-partitioning the branch and bound's
proven contiguous optimum equals the peer's DP value measured on its own code."""

import itertools
import math

import numpy as np
import pytest

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.families import solve
from splitopt.instances import io
from splitopt.instances.importers.dnn_partitioning import (
    MS,
    PACKAGED,
    REFERENCE,
    from_peer,
    load_packaged,
    placement_from_peer,
    placement_to_peer,
    to_peer,
)
from splitopt.instances.placement import PlacementInstance, generate
from splitopt.models.placement import evaluate, work_bound
from splitopt.solvers.placement.common import Contracted, isolation_bound


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def case(seed, objective, contiguity):
    return generate(seed, n_nodes=5 + seed % 2, n_accelerators=2, n_cpus=1, training=seed % 4 == 3,
                    objective=objective, contiguity=contiguity)


COMBOS = list(itertools.product(("max-load", "fwd+bwd"), ("none", "convex", "chain")))


@pytest.mark.parametrize("objective,contiguity", COMBOS)
@pytest.mark.parametrize("seed", range(10))
def test_bruteforce_milp_ideals_agree(seed, objective, contiguity):
    optimum, exact = _agreement(seed, objective, contiguity)
    assert exact and all(s.status == "optimal" and close(s.objective, optimum) for s in exact)


def _agreement(seed, objective, contiguity):
    """Brute-force optimum and the exact algorithms' solutions; bounds and baselines checked here."""
    inst = case(seed, objective, contiguity)
    bf = solve(inst, "bruteforce")
    m = solve(inst, "milp")
    assert m.bound <= bf.objective * (1 + 1e-9)
    # the ideal search alone, and the DP over all ideals first (one direction; max-load)
    exact = [m] + ([solve(inst, "ideals", dp=False), solve(inst, "ideals", direction="forward")]
                   if contiguity == "chain" else [])
    # every bound is below the optimum; every baseline at or above it
    assert work_bound(inst) <= bf.objective * (1 + 1e-12)
    con = Contracted(inst, fuse_cycles=contiguity == "chain")
    assert isolation_bound(con, inst)[0] <= bf.objective * (1 + 1e-12)
    assert solve(inst, "lp").bound <= bf.objective * (1 + 1e-9)
    for algo in ("linearised", "local"):
        try:
            assert solve(inst, algo).objective >= bf.objective * (1 - 1e-12)
        except InfeasibleSolution:  # the linearised DP may find no run split under memory limits
            pass
    return bf.objective, exact


@pytest.mark.slow
@pytest.mark.parametrize("objective,contiguity", COMBOS)
@pytest.mark.parametrize("seed", range(10, 60))
def test_bruteforce_milp_ideals_agree_more(seed, objective, contiguity):
    optimum, exact = _agreement(seed, objective, contiguity)
    assert exact and all(s.status == "optimal" and close(s.objective, optimum) for s in exact)


def test_evaluator_by_hand():
    # a -> b -> c, a -> c; tensor times: a 1, b 2; acc a=10, b=20, c=30; cpu 10x
    inst = PlacementInstance(("a", "b", "c"), (100.0, 200.0, 300.0), (10.0, 20.0, 30.0),
                          ((0, (1, 2), 1.0), (1, (2,), 2.0)), n_accelerators=2, n_cpus=1)
    # a, b on acc0; c on acc1: acc0 sends a (once, although only c is remote) and b: 10+20+1+2;
    # acc1 receives a and b: 30+1+2
    v, b = evaluate(inst, ["acc0", "acc0", "acc1"])
    assert v == 33.0 and b["load[acc0]"] == 33.0 and b["load[acc1]"] == 33.0
    # a on the CPU: the CPU pays no communication; acc0 receives a once (two consumers there)
    v, b = evaluate(inst, ["cpu0", "acc0", "acc0"])
    assert b["load[cpu0]"] == 100.0 and b["load[acc0]"] == 20.0 + 30.0 + 1.0 and v == 100.0
    # fwd+bwd with no backward node equals max-load
    assert evaluate(inst.with_(objective="fwd+bwd"), ["acc0", "acc0", "acc1"])[0] == 33.0


def test_convex_is_weaker_than_chain():
    # two branches a1 -> b2 and b1 -> a2: {a1, a2} and {b1, b2} are each convex but feed each other
    inst = PlacementInstance(("a1", "a2", "b1", "b2"), (1.0,) * 4, (1.0,) * 4,
                          ((0, (3,), 0.0), (2, (1,), 0.0)), n_accelerators=2, n_cpus=0, contiguity="convex")
    split = ["acc0", "acc0", "acc1", "acc1"]
    assert evaluate(inst, split)[0] == 2.0
    with pytest.raises(InfeasibleSolution, match="cycle"):
        evaluate(inst.with_(contiguity="chain"), split)
    # a path leaving a set and re-entering it is not convex
    chain3 = PlacementInstance(("x", "y", "z"), (1.0,) * 3, (1.0,) * 3, ((0, (1,), 0.0), (1, (2,), 0.0)),
                            n_accelerators=2, n_cpus=0, contiguity="convex")
    with pytest.raises(InfeasibleSolution, match="convex"):
        evaluate(chain3, ["acc0", "acc1", "acc0"])


def test_constraints_rejected():
    inst = generate(3, n_nodes=6, training=False, memory=True, unsupported=1, colours=1)
    cpu_only = inst.supported.index(False)
    p = ["cpu0"] * inst.n_nodes
    p[cpu_only] = "acc0"
    for cl in inst.colour_classes:
        if cpu_only in cl:
            for i in cl:
                p[i] = "acc0"
    with pytest.raises(InfeasibleSolution, match="not supported"):
        evaluate(inst, p)
    with pytest.raises(InfeasibleSolution, match="memory"):
        evaluate(inst.with_(acc_memory_bytes=1.0), ["acc0"] * inst.n_nodes if all(inst.supported) else
                 ["acc0" if s else "cpu0" for s in inst.supported])


@pytest.mark.parametrize("name", list(PACKAGED))
def test_workloads_equal_reference_dp(name):
    inst = load_packaged(name, contiguity="chain")
    sol = solve(inst, "ideals", time_limit=60)
    ref = REFERENCE[name][0] * MS
    assert sol.status == "optimal"
    assert close(sol.objective, ref)
    assert sol.bound <= sol.objective
    # the linearised DP is a feasible chain placement, never below the optimum
    assert solve(inst, "linearised").objective >= sol.objective * (1 - 1e-12)


@pytest.mark.parametrize("name", list(PACKAGED))
def test_round_trips(name, tmp_path):
    import json

    from splitopt.instances.importers.dnn_partitioning import _data_dir

    raw = json.loads((_data_dir() / PACKAGED[name][0]).read_text())
    inst = from_peer(raw, name=name)
    again = from_peer(to_peer(inst), name=name)
    assert again.to_dict()["nodes"] == inst.to_dict()["nodes"] or all(
        close(a["cpu_seconds"], b["cpu_seconds"]) and close(a["acc_seconds"], b["acc_seconds"])
        for a, b in zip(again.to_dict()["nodes"], inst.to_dict()["nodes"]))
    assert [t[:2] for t in again.tensors] == [t[:2] for t in inst.tensors]
    # our JSON
    path = tmp_path / "inst.json"
    io.save(inst, path)
    back = io.load(path)
    assert isinstance(back, PlacementInstance) and back == inst
    # a placement out in their shape and back: same assignment, loads = our evaluator's
    a = solve(inst.with_(contiguity="chain"), "linearised").assignment
    out = placement_to_peer(inst, a)
    assert close(out["maxLoad"] * MS, evaluate(inst, a)[0])
    assert placement_from_peer(inst, out) == a


def test_round_trip_of_an_unlimited_memory():
    # to_peer writes 1e300 for "no memory limit" (the peer's format needs a number); from_peer reads
    # any value above the package's 1e30 bound on quantities as "no limit" again (it refused it)
    inst = generate(4, n_nodes=6, n_accelerators=2, memory=False)
    assert inst.acc_memory_bytes is None
    out = to_peer(inst)
    assert out["maxSizePerFPGA"] > 1e30
    again = from_peer(out)
    assert again.acc_memory_bytes is None and again.n_nodes == inst.n_nodes
    assert [t[:2] for t in again.tensors] == [t[:2] for t in inst.tensors]


def test_expert_splits_scored():
    for name in ("bert24_inference", "resnet50_inference"):
        inst = load_packaged(name, contiguity="chain")
        e = solve(inst, "expert")
        opt = REFERENCE[name][0] * MS
        assert e.objective > opt  # the experts' splits are feasible and worse than the optimum


def test_bad_input_named():
    with pytest.raises(InstanceError, match="maxCPUs"):
        from_peer({"maxFPGAs": 1, "maxSizePerFPGA": 1, "nodes": [], "edges": []})
    with pytest.raises(InstanceError, match=r"nodes\[0\]\.cpuLatency"):
        from_peer({"maxFPGAs": 1, "maxCPUs": 1, "maxSizePerFPGA": 1, "edges": [],
                   "nodes": [{"id": 1, "supportedOnFpga": 1, "cpuLatency": -1, "fpgaLatency": 1,
                              "isBackwardNode": 0}]})
    with pytest.raises(InstanceError, match="cycle"):
        PlacementInstance(("a", "b"), (1.0, 1.0), (1.0, 1.0), ((0, (1,), 0.0), (1, (0,), 0.0)), n_accelerators=1)
    with pytest.raises(InstanceError, match="contiguity"):
        generate(0, contiguity="sometimes")
    inst = load_packaged("bert24_inference")
    with pytest.raises(InstanceError, match="unknown algorithm 'bnb' for family 'placement'"):
        solve(inst, "bnb")  # seed 004's B&B belongs to throughput (issue 22)
    with pytest.raises(InstanceError, match="contiguity"):
        solve(inst, "ideals")  # convex: the ideal B&B handles chain only


def test_cli_import_and_export(tmp_path, capsys):
    import json

    from splitopt.cli import main
    from splitopt.instances.importers.dnn_partitioning import _data_dir

    src = tmp_path / "w.json"
    src.write_text((_data_dir() / "bert24_inference.json").read_text())
    out = tmp_path / "inst.json"
    assert main(["import", "dnn-partitioning", str(src), "-o", str(out), "--contiguity", "chain"]) == 0
    place = tmp_path / "place.json"
    assert main(["solve", str(out), "-a", "ideals", "--export-placement", str(place)]) == 0
    d = json.loads(place.read_text())
    assert close(d["maxLoad"], REFERENCE["bert24_inference"][0])
    bad = tmp_path / "bad.json"
    bad.write_text('{"maxFPGAs": 2}')
    assert main(["import", "dnn-partitioning", str(bad), "-o", str(out)]) == 2
    assert "maxCPUs" in capsys.readouterr().err


def test_isolation_bound_exact_on_single_node():
    # one node, three accelerators: the bound is the node's time
    inst = PlacementInstance(("a",), (5.0,), (2.0,), (), n_accelerators=3, n_cpus=1, contiguity="chain")
    assert isolation_bound(Contracted(inst), inst)[0] == 2.0
    assert math.isclose(solve(inst, "ideals").objective, 2.0)


@pytest.mark.parametrize("objective,contiguity", [c for c in COMBOS if c[1] != "chain"])
@pytest.mark.parametrize("seed", range(4))
def test_peer_ip_agrees_with_bruteforce(seed, objective, contiguity):
    # the peer's IP (no symmetry breaking, no bounds, no incumbent) is exact too: same optimum
    inst = case(seed, objective, contiguity)
    bf = solve(inst, "bruteforce")
    p = solve(inst, "peer_ip")
    assert p.status == "optimal" and close(p.objective, bf.objective)
    assert p.bound <= bf.objective * (1 + 1e-9)


def test_peer_ip_declines_chain():
    with pytest.raises(InstanceError, match="contiguity"):
        solve(case(0, "max-load", "chain"), "peer_ip")


def _runs_by_definition(con, cap):
    """Every run's accelerator load from the definition (compute + each tensor whose producer is in
    the run and a consumer out, or the other way round), run by run."""
    import numpy as np

    n = con.n
    acc = np.full((n + 1, n + 1), np.inf)
    for i in range(n + 1):
        acc[i, i] = 0.0
        for j in range(i + 1, n + 1):
            run = set(range(i, j))
            if not all(con.sup[s] for s in run) or (cap is not None and sum(con.size[s] for s in run) > cap):
                continue
            comm = 0.0
            for p, cm, sec, _b in con.tensors:
                cons = {b for b in range(n) if (cm >> b) & 1} - {p}
                if (p in run and cons - run) or (p not in run and cons & run):
                    comm += sec
            acc[i, j] = sum(con.accf[s] + con.accb[s] for s in run) + comm
    return acc


@pytest.mark.parametrize("seed", range(12))
def test_run_costs_against_the_definition(seed):
    # the linearised DP's table of run loads (rectangles in the plane of runs) against the
    # definition, on training graphs (gradients flow against the topological order) with memory
    import numpy as np

    from splitopt.solvers.placement.common import Contracted
    from splitopt.solvers.placement.linearised import _run_costs

    inst = generate(seed, n_nodes=9 + seed % 4, n_accelerators=2, n_cpus=1, training=seed % 2 == 1,
                    contiguity="chain")
    con = Contracted(inst)
    cap = inst.acc_memory_bytes
    if seed % 3 == 0:  # a cap that cuts some runs (a hair off any run's exact size)
        cap = 0.5 * math.fsum(con.size) * (1 + 1e-9)
    acc, _cpu = _run_costs(con, cap)
    want = _runs_by_definition(con, cap)
    assert (np.isfinite(acc) == np.isfinite(want)).all()
    fin = np.isfinite(want)
    assert np.allclose(acc[fin], want[fin], rtol=1e-12, atol=1e-15 * np.abs(want[fin]).max())


def test_one_device_fallback():
    # the incumbent of last resort: every node on one device, where that is feasible
    from splitopt.solvers.placement.incumbent import _one_device

    inst = generate(2, n_nodes=7, n_accelerators=2, n_cpus=1, contiguity="none")
    a, v = _one_device(inst)
    assert a == ["cpu0"] * 7 and close(v, evaluate(inst, a)[0])
    no_cpu = inst.with_(n_cpus=0, supported=None, acc_memory_bytes=None)
    a, v = _one_device(no_cpu)
    assert a == ["acc0"] * 7 and close(v, evaluate(no_cpu, a)[0])
    tight = no_cpu.with_(size_bytes=(1.0,) * 7, acc_memory_bytes=3.0)  # 7 bytes on a 3-byte accelerator
    assert _one_device(tight) == (None, math.inf)


@pytest.mark.parametrize("seed", range(12))
def test_greedy_split_is_a_chain_placement_no_better_than_the_linearised_optimum(seed):
    """:func:`~.linearised.greedy_blocks` (the linearised DP's fallback past its deadline) splits the
    same topological order into runs: a chain placement the evaluator accepts, never below the best
    split of that order (the linearised DP), and what ``linearised_blocks`` returns once its
    deadline has passed."""
    import time

    from splitopt.solvers.placement.common import Contracted, assignment_from_blocks
    from splitopt.solvers.placement.linearised import greedy_blocks, linearised_blocks

    rng = np.random.default_rng([seed, 77])
    n_cpus = int(rng.integers(0, 3))
    inst = generate(seed, n_nodes=int(rng.integers(6, 14)), n_accelerators=int(rng.integers(1, 4)), n_cpus=n_cpus,
                    skips=int(rng.integers(0, 4)), training=seed % 3 == 2, contiguity="chain",
                    **({} if n_cpus else {"unsupported": 0, "memory": False}))
    try:
        con = Contracted(inst)
    except InstanceError:
        pytest.skip("backward-only colour classes")
    best = linearised_blocks(inst, con)
    greedy = greedy_blocks(inst, con)
    if best is None:
        assert greedy is None
        return
    if greedy is None:  # (a greedy may miss a split that fits: then the caller has none either)
        return
    v_best = evaluate(inst, assignment_from_blocks(inst, con, best))[0]
    v_greedy = evaluate(inst, assignment_from_blocks(inst, con, greedy))[0]
    assert v_greedy >= v_best * (1 - 1e-9)
    late = linearised_blocks(inst, con, deadline=time.perf_counter() - 1.0)
    assert late == greedy


def test_lp_and_colgen_name_an_instance_without_placement():
    # brute force finds no placement; the LP relaxation is infeasible (was SolverFailed) and colgen
    # on a chain instance whose heuristics find nothing asks the MILP, which proves there is none
    # (was InstanceError "no feasible placement found to bound against"); 2026-11-28
    none = generate(402, n_nodes=7, n_accelerators=1, n_cpus=0, skips=2, memory=True, colours=0,
                    contiguity="none")
    chain = generate(422, n_nodes=9, n_accelerators=3, n_cpus=0, skips=2, memory=True, colours=2,
                     contiguity="chain")
    for inst in (none, chain):
        with pytest.raises(InfeasibleSolution):
            solve(inst, "bruteforce")
    with pytest.raises(InfeasibleSolution, match="LP relaxation is infeasible"):
        solve(none, "lp", time_limit=10)
    with pytest.raises(InfeasibleSolution, match="no placement exists"):
        solve(chain, "colgen", time_limit=10)


@pytest.mark.parametrize("seed", [5, 17, 21])
def test_milp_names_a_class_above_the_memory(seed):
    # a class a hair larger than an accelerator's memory, no CPU core: brute force finds no
    # placement, and the MILP said "status numerical" (found by fuzzing, 2026-11-29)
    from splitopt.errors import NoFeasibleSolution

    inst = generate(seed, n_nodes=4, n_accelerators=2, n_cpus=0, memory=False, unsupported=0, contiguity="none")
    inst = inst.with_(acc_memory_bytes=max(inst.size_bytes) * (1 - 1e-9))
    with pytest.raises(InfeasibleSolution):
        solve(inst, "bruteforce")
    with pytest.raises(NoFeasibleSolution, match="more than an accelerator's memory"):
        solve(inst, "milp", time_limit=10)
