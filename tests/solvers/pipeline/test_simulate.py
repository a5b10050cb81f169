"""The discrete-event simulator: under ``bottleneck="stages"`` with ``distinct`` or ``revisit``
placement every stage is its own resource, so the simulated makespan must equal the closed form
``T_f + xi T_i`` of Eq. (14) (an independent check of the evaluator); under ``aggregate`` and
``resource`` the simulated schedules obey the resource lower bounds."""

from __future__ import annotations

import itertools
import random

import pytest

from splitopt.errors import InfeasibleSolution
from splitopt.models.pipeline import Plan, evaluate_plan, make_assignment
from splitopt.solvers.pipeline.simulate import plot_timeline, simulate

from .helpers import close, small


def random_plans(inst, count, rnd):
    """Feasible random plans (b, cuts, servers) of ``inst``."""
    I, N = inst.n_layers, inst.n_servers
    out = []
    for _ in range(count * 20):
        P = rnd.randint(1, min(I - 1, 3))
        cuts = tuple(sorted(rnd.sample(range(1, I), P)))
        seq = tuple(rnd.randrange(N) for _ in range(P))
        b = rnd.choice(inst.allowed_b())
        try:
            evaluate_plan(inst, Plan(b, cuts, seq), check=True)
        except InfeasibleSolution:
            continue
        out.append(make_assignment(inst, b, cuts, seq))
        if len(out) == count:
            break
    return out


@pytest.mark.parametrize("placement", ("distinct", "revisit"))
@pytest.mark.parametrize("seed", range(15))
def test_stages_makespan_equals_closed_form(placement, seed):
    inst = small(seed, placement, n_layers=6, batch=60, b=None).with_(bottleneck="stages")
    for a in random_plans(inst, 4, random.Random(seed)):
        s = simulate(inst, a)
        assert s.micro_batches == -(-inst.batch // a["b"])
        assert close(s.makespan, s.closed_form), (a, s.makespan, s.closed_form)


@pytest.mark.parametrize("seed", range(10))
def test_shared_resources_obey_load_bounds(seed):
    rnd = random.Random(seed)
    for placement, bottleneck in itertools.product(("aggregate", "distinct"), ("stages", "resource")):
        if placement == "distinct" and bottleneck == "stages":
            continue
        inst = small(seed, placement, n_layers=6, batch=60, b=None).with_(bottleneck=bottleneck)
        for a in random_plans(inst, 3, rnd):
            for policy in ("fifo", "1f1b", "gpipe"):
                s = simulate(inst, a, policy)
                load: dict = {}
                for t in s.tasks:
                    load[t.resource] = load.get(t.resource, 0.0) + (t.end - t.start)
                assert s.makespan >= max(load.values()) * (1 - 1e-12)
                # every micro-batch goes through its whole chain: at least T_f of work in sequence
                _L, br = evaluate_plan(inst, Plan(a["b"], tuple(a["cuts"]), tuple(
                    inst.servers.index(x) for x in a["servers"])))
                assert len(s.tasks) == s.micro_batches * len({(t.op, t.resource) for t in s.tasks})
                assert s.makespan >= br["client_fwd"] + br["client_bwd"] - 1e-12
                # tasks on one resource never overlap
                by_res: dict = {}
                for t in s.tasks:
                    by_res.setdefault(t.resource, []).append((t.start, t.end))
                for iv in by_res.values():
                    iv.sort()
                    assert all(iv[i][1] <= iv[i + 1][0] + 1e-15 for i in range(len(iv) - 1))


def test_gpipe_flushes_before_backward():
    inst = small(1, "distinct", n_layers=6, batch=60, b=None).with_(bottleneck="resource")
    a = random_plans(inst, 1, random.Random(3))[0]
    g = simulate(inst, a, "gpipe")
    last_fwd = max(t.end for t in g.tasks if not t.backward)
    assert all(t.start >= last_fwd - 1e-15 for t in g.tasks if t.backward and t.label.startswith("BP"))


def test_timeline_plot(tmp_path):
    inst = small(2, "distinct", n_layers=6, batch=30, b=None)
    a = random_plans(inst, 1, random.Random(0))[0]
    ax = plot_timeline(inst, a, path=str(tmp_path / "t.png"))
    s = simulate(inst, a)
    assert (tmp_path / "t.png").stat().st_size > 1000
    assert len(ax.collections) == sum(1 for t in s.tasks if t.end > t.start)


def test_bad_policy():
    from splitopt.errors import InstanceError

    inst = small(0, "distinct")
    with pytest.raises(InstanceError, match="policy"):
        simulate(inst, {"b": inst.allowed_b()[0], "cuts": [1], "servers": [inst.servers[0]]}, "lifo")
