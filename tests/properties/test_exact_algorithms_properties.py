"""Property tests (hypothesis): on arbitrary small DAGs and chains, with costs drawn over many
orders of magnitude (zeros included), every exact algorithm reaches the brute-force optimum as
judged by the family's evaluator. Hypothesis shrinks any counterexample to a minimal graph."""

from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from splitopt.families import get_family, solve
from splitopt.instances.graph import DNNGraph, Edge, Layer
from splitopt.instances.grouping import GroupingInstance
from splitopt.instances.split import SplitInstance

# SPLITOPT_HYPOTHESIS_EXAMPLES=5000 for a long hunt; 150 keeps the default suite fast
SETTINGS = settings(max_examples=int(os.environ.get("SPLITOPT_HYPOTHESIS_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# 0, or 10^e for e in [-6, 6]: twelve orders of magnitude, as real DNN costs span
cost = st.one_of(st.just(0.0), st.integers(-6, 6).map(lambda e: 10.0 ** e),
                 st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False))
positive = st.floats(1e-4, 1e4, allow_nan=False, allow_infinity=False)


@st.composite
def split_instances(draw):
    n = draw(st.integers(2, 11))
    # every layer v >= 1 reads at least one earlier layer (so layer 0 is the only input) ...
    edges = {(draw(st.integers(0, v - 1)), v) for v in range(1, n)}
    # ... plus arbitrary extra forward edges (fan-out, skips, joins)
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n))
    edges |= {(min(a, b), max(a, b)) for a, b in extra if a != b}
    layers = [Layer(f"v{i}", out_bytes=draw(cost), param_bytes=draw(cost)) for i in range(n)]
    g = DNNGraph(layers, [Edge(f"v{a}", f"v{b}") for a, b in sorted(edges)], name="hyp")
    dev = [draw(cost) for _ in range(n)]
    srv = [draw(cost) for _ in range(n)]
    mode = draw(st.sampled_from(["training", "inference"]))
    policy = draw(st.sampled_from(["pin", "upload"]))
    pin_d, pin_s = [], []
    if draw(st.booleans()):
        d = draw(st.integers(0, n - 1))
        ancestors = {d}
        for v in range(d, -1, -1):  # indices are topological: walk producers backwards
            if v in ancestors:
                ancestors.update(g.pred(v))
        pin_d = [f"v{d}"]
        free = [v for v in range(n) if v not in ancestors and not (policy == "pin" and v in g.inputs)]
        if free and draw(st.booleans()):
            pin_s = [f"v{draw(st.sampled_from(free))}"]
    return SplitInstance(g, dev, srv, draw(positive), draw(positive), mode, draw(st.sampled_from([1, 10])),
                         pin_device=tuple(pin_d), pin_server=tuple(pin_s), input_bytes=draw(cost),
                         input_policy=policy)


def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12


SPLIT_EXACT = [a.name for a in get_family("split").algorithms.values()
               if a.exact and not a.formulation and a.name not in ("bruteforce", "chain")]


@SETTINGS
@given(split_instances())
def test_split_exact_algorithms_equal_bruteforce(inst):
    best = solve(inst, "bruteforce").objective
    for algo in SPLIT_EXACT:
        got = solve(inst, algo).objective  # the evaluator's value: raises if infeasible
        assert _agree(got, best), (algo, got, best)
    if inst.graph.is_chain():
        assert _agree(solve(inst, "chain").objective, best)


@st.composite
def grouping_instances(draw):
    n = draw(st.integers(1, 9))
    t = [draw(st.floats(0.0, 10.0, allow_nan=False)) for _ in range(n)]
    s = [draw(st.floats(0.0, 1e7, allow_nan=False)) for _ in range(n)]
    c = [draw(st.integers(0, 5)) for _ in range(n)]
    k = draw(st.integers(1, n))
    objective = draw(st.sampled_from(["perf", "bottleneck", "thesis_cost"]))
    if objective == "thesis_cost" and not math.fsum(t) > 1e-300:
        t[0] = 1.0  # the thesis cost normalises by the total time (a subnormal total is rejected)
    return GroupingInstance.from_arrays(t, s, c, k=k, objective=objective, requests=draw(st.integers(1, 12)),
                                        bandwidth_bytes_per_s=draw(st.floats(1e3, 1e9)),
                                        transfers=draw(st.booleans()))


@SETTINGS
@given(grouping_instances())
def test_grouping_exact_algorithms_equal_bruteforce(inst):
    fam = get_family("grouping")
    best = solve(inst, "bruteforce").objective
    for a in fam.algorithms.values():
        if not a.exact or a.formulation or a.name == "bruteforce":
            continue
        try:
            got = solve(inst, a.name).objective
        except Exception as exc:  # an algorithm may decline an objective it does not handle
            from splitopt.errors import InstanceError

            assert isinstance(exc, InstanceError), (a.name, exc)
            continue
        assert _agree(got, best), (a.name, got, best)
