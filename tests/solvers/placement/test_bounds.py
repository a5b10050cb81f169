"""Issue 11 follow-up: the pigeonhole (cardinality) bound and the MILP's combinatorial certificate
against brute force, and the harness's per-instance reference for device instances."""

from __future__ import annotations

import itertools
import math

import pytest

from splitopt.families import get_family, solve
from splitopt.instances.placement import PlacementInstance, generate, generate_mixed
from splitopt.models.placement import cardinality_bound
from splitopt.solvers.placement.bounds import combinatorial_bound

COMBOS = list(itertools.product(("max-load", "fwd+bwd"), ("none", "convex", "chain")))


@pytest.mark.parametrize("objective,contiguity", COMBOS)
@pytest.mark.parametrize("seed", range(6))
def test_combinatorial_bounds_below_bruteforce(seed, objective, contiguity):
    # many equal-ish nodes on few accelerators: the regime where the pigeonhole bound is active
    no_cpu = seed % 2 == 0  # without a CPU core: nothing unsupported, no memory limit (else infeasible)
    inst = generate(seed, n_nodes=6, n_accelerators=2 + seed % 2, n_cpus=0 if no_cpu else 1, training=seed % 3 == 2,
                    objective=objective, contiguity=contiguity, **(dict(unsupported=0, memory=False) if no_cpu else {}))
    bf = solve(inst, "bruteforce").objective
    lb, parts = combinatorial_bound(inst)
    assert lb == max(parts.values())
    assert lb <= bf * (1 + 1e-12)
    m = solve(inst, "milp")
    assert m.status == "optimal" and math.isclose(m.objective, bf, rel_tol=1e-9)
    assert m.bound <= bf * (1 + 1e-9)


def test_cardinality_bound_is_the_pigeonhole_value():
    # 7 identical 1-second layers on 3 accelerators, no CPU core: some accelerator runs 3 of them,
    # and 3 is also achievable with no communication cost, so the bound is the optimum
    n = 7
    inst = PlacementInstance(tuple(f"v{i}" for i in range(n)), (10.0,) * n, (1.0,) * n, (), n_accelerators=3, n_cpus=0)
    assert cardinality_bound(inst) == 3.0
    assert solve(inst, "bruteforce").objective == 3.0
    m = solve(inst, "milp")
    assert m.status == "optimal" and m.bound == 3.0 and m.info.get("proof") == "cardinality"
    # a CPU core that runs a layer in 2.5 s takes one of them: 6 left for 3 accelerators -> 2 each,
    # but then the CPU core's 2.5 s is the max: the bound drops to the CPU time (F(V) empties at V >= 2.5)
    inst2 = PlacementInstance(inst.nodes, (2.5,) * n, (1.0,) * n, (), n_accelerators=3, n_cpus=1)
    bf2 = solve(inst2, "bruteforce").objective
    assert cardinality_bound(inst2) <= bf2 and cardinality_bound(inst2) == 2.5 and bf2 == 2.5


def test_harness_reference_for_placement_instances():
    fam = get_family("placement")
    dev = generate_mixed(3)
    assert fam.reference(dev) == ("milp", ("lp",))
    from splitopt.validation import harness

    rows = {r["algorithm"]: r for r in harness.validate_instance(dev, ["bruteforce", "local", "auto"])}
    assert rows["milp"]["outcome"] == "reference" and rows["milp"]["is_reference"] == 1
    assert rows["bruteforce"]["outcome"] == "agree"
    assert rows["auto"]["outcome"] == "agree"
    assert rows["local"]["outcome"] in ("agree", "worse")
    # throughput (seed 004) holds its own algorithms alone again (issue 22)
    assert not any(a.startswith("device_") or a in ("ideals", "colgen") for a in get_family("throughput").algorithms)


def test_device_sets_list_and_load():
    from splitopt.instances.sets import get_set

    ws = list(get_set("workloads").members())
    assert len(ws) == 8 and {m.member_id.rsplit("/", 1)[1] for m in ws} == {"chain", "none"}
    inst = ws[0].load()
    assert isinstance(inst, PlacementInstance) and inst.contiguity == "chain"
    ds = list(get_set("device-random").members())
    assert len(ds) == 100
    assert all(isinstance(m.load(), PlacementInstance) for m in ds[:5])


def test_device_set_validation_resumes(tmp_path):
    # the store holds milp (the per-instance reference), not the family's rlt: a re-run skips
    from splitopt.instances.sets import get_set
    from splitopt.validation.runner import run_validation

    store = tmp_path / "runs.sqlite"
    s = get_set("device-random:3")
    first = run_validation(s, algorithms="bruteforce", store=store, progress=False)
    assert first.attrs["tasks"] == 3
    row = first.set_index("algorithm").loc["bruteforce"]
    assert row["agreements"] == 3
    again = run_validation(s, algorithms="bruteforce", store=store, progress=False)
    assert again.attrs["tasks"] == 0 and again.attrs["skipped"] == 3
