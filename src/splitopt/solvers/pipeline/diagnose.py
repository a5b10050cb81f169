"""Why a ``pipeline`` instance has no feasible plan (issue 24 item 4): one
:class:`~splitopt.errors.InstanceError` that names the constraint and the element -- which client
cannot reach a server, which client's memory cannot hold even the first layer, which layer fits on
no server -- at every allowed micro-batch size.

The checks use the evaluator's own memory functions (:func:`splitopt.models.pipeline.client_memory`,
:func:`~splitopt.models.pipeline.block_memory`, Eq. 11 or the ``resident`` model) at the
non-dominated micro-batch sizes of :func:`.shortest_path.candidate_bs` (a dominated ``b`` has the
same number of micro-batches and client loads at least as large, so no smaller memory), each at its
most favourable position (the client block of one layer, a server block of one layer last in the
chain). When every element fits alone, the message says that no chain of server blocks fits the
servers' memories along a route, with the topology and relay that restrict the routes.
"""

from __future__ import annotations

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import PipelineInstance
from splitopt.models.pipeline import MEM_TOL, block_memory, client_memory


def _over(use: float, cap) -> bool:
    return cap is not None and use > cap * (1 + MEM_TOL) + 1e-300


def infeasible(instance: PipelineInstance, b_values=None) -> InstanceError:
    """The error to raise when no plan is feasible at the micro-batch sizes ``b_values`` (default:
    every allowed one; see the module docstring)."""
    from splitopt.solvers.pipeline.shortest_path import candidate_bs

    inst = instance
    M, N, I = inst.n_clients, inst.n_servers, inst.n_layers
    bs = candidate_bs(inst, b_values)
    at = "any allowed micro-batch size" if b_values is None else f"micro-batch size(s) {sorted(b_values)[:8]}"
    routes = f"topology {inst.topology!r}, relay {inst.relay!r}"
    for m in range(M):
        if all(inst.route(m, inst.server_node(n)) is None for n in range(N)):
            return InstanceError(f"clients[{m}]", f"client {inst.clients[m]!r} reaches no server ({routes}, or a "
                                                  "zero link rate in rates_bytes_per_s)")
    for m in range(M):
        cap = inst.client_memory_bytes[m]
        uses = [(client_memory(inst, b, 1, 2)[m], b) for b in bs if inst.local_batches(b)[m] > 0]
        if uses and all(_over(u, cap) for u, _b in uses):
            u, b = min(uses)
            return InstanceError(f"clients[{m}].memory_bytes",
                                 f"client {inst.clients[m]!r} cannot hold the first layer {inst.layers[0]!r} at {at}: "
                                 f"it needs at least {u:.6g} bytes (b = {b}), memory is "
                                 f"{cap:.6g} bytes")
    caps = inst.server_memory_bytes
    for lay in range(1, I):
        best = None
        for b in bs:
            u = block_memory(inst, b, lay, lay + 1, 1, 2)
            if not all(_over(u, caps[n]) for n in range(N)):
                best = None
                break
            best = u if best is None else min(best, u)
        if best is not None:
            n = max(range(N), key=lambda j: caps[j])
            return InstanceError(f"layers[{lay}]", f"layer {inst.layers[lay]!r} fits on no server at {at}: "
                                                   f"it needs at least {best:.6g} bytes, the "
                                                   f"largest server memory is {caps[n]:.6g} bytes "
                                                   f"({inst.servers[n]!r})")
    bmsg = at
    return InstanceError("instance", f"no feasible assignment: every client and every layer fits alone, but at "
                                     f"{bmsg} no chain of server blocks fits the servers' memory_bytes along a route "
                                     f"({routes}" + (f", max_submodels {inst.max_submodels}" if inst.max_submodels
                                                     else "") + ")")


__all__ = ["infeasible"]
