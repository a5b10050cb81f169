"""Issue 24 item 4: an infeasible pipeline instance is reported with the constraint and the element
that make it so (which client's memory, which layer, which client's route), by every exact method
and by the No Pipeline baseline (which names the micro-batch size B it is restricted to)."""

from __future__ import annotations

import pytest

from splitopt.errors import InstanceError
from splitopt.families import solve
from splitopt.instances.pipeline_generate import generate


def base(**kw):
    return generate(3, n_layers=5, n_servers=3, n_clients=2, batch=16, tight_memory=False, **kw)


def _errors(inst, algos=("shortest_path", "bruteforce", "milp", "auto")):
    out = []
    for a in algos:
        with pytest.raises(InstanceError) as exc:
            solve(inst, a)
        out.append(exc.value)
    return out


def test_client_memory_named():
    inst = base()
    inst = inst.with_(client_memory_bytes=(1.0, inst.client_memory_bytes[1]))  # client 0 is never idle
    for e in _errors(inst):
        assert e.path == "clients[0].memory_bytes" and repr(inst.clients[0]) in str(e) and "first layer" in str(e)


def test_layer_that_fits_on_no_server_named():
    inst = base()
    mem = list(inst.sample_mem_bytes)
    mem[3] = 1e15
    inst = inst.with_(sample_mem_bytes=tuple(mem), server_memory_bytes=(1e12,) * 3)
    for e in _errors(inst):
        assert e.path == "layers[3]" and repr(inst.layers[3]) in str(e) and "1e+12" in str(e)


def test_client_without_route_named():
    inst = base(topology="line")  # a client links only to the first server
    rates = [list(r) for r in inst.rates]
    rates[0][inst.server_node(0)] = 0.0
    inst = inst.with_(rates=tuple(tuple(r) for r in rates))
    for e in _errors(inst, ("shortest_path", "bruteforce")):
        assert e.path == "clients[0]" and "reaches no server" in str(e) and "'line'" in str(e)


def test_no_pipeline_names_its_micro_batch_size():
    """b = B alone: the first layer does not fit on a client at b = 16, although it does at b = 1."""
    inst = base(client_split="balanced")
    from splitopt.models.pipeline import client_memory

    need1, need16 = client_memory(inst, 1, 1, 2)[0], client_memory(inst, 16, 1, 2)[0]
    assert need1 < need16
    inst = inst.with_(client_memory_bytes=((need1 + need16) / 2,) * 2)
    solve(inst, "shortest_path")  # feasible at small b
    with pytest.raises(InstanceError) as exc:
        solve(inst, "no_pipeline")
    assert exc.value.path == "clients[0].memory_bytes" and "[16]" in str(exc.value)
