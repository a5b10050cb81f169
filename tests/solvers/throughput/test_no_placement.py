"""An instance with no feasible placement is said to be one (:class:`NoFeasibleSolution`) by every
exact method of ``throughput`` alike (found by fuzzing, 2026-11-29: brute force and bnb raised
InstanceError, the RLT MILP SolverFailed with status infeasible)."""

import pytest

from splitopt.errors import NoFeasibleSolution
from splitopt.families import get_family, solve


def _no_room(seed: int):
    inst = get_family("throughput").generate(seed, n_layers=3, n_nodes=2, kind=None)
    # every node holds less than half of all layers' bytes (one layer carries all of them but a hair)
    mem = (1e9, 1.0, 1.0)
    return inst.with_(mem_bytes=mem, node_memory_bytes=tuple([0.5e9] * 2))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("algorithm", ["auto", "bruteforce", "bnb", "rlt"])
def test_no_placement_said_alike(seed, algorithm):
    inst = _no_room(seed)
    with pytest.raises(NoFeasibleSolution, match="no feasible placement"):
        solve(inst, algorithm, time_limit=20) if algorithm != "bruteforce" else solve(inst, algorithm)
