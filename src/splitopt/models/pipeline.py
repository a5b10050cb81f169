"""The mathematics of the ``pipeline`` family (seed 001): the evaluator, the single source of truth
for the round latency ``L = T_f + ceil((B - b) / b) * T_i`` (Eq. 14).

Digest ``papers/001-pipelined-split-learning.md`` (cited as "digest §x"); the semantics fields are
described in :mod:`splitopt.instances.pipeline`.

Assignment (plain JSON)::

    {"b": 32, "cuts": [2, 9], "servers": ["s3", "s0"]}

``b`` is the micro-batch size. ``cuts`` are strictly increasing layer counts in ``1..I-1``: the
clients hold layers ``0..cuts[0]-1`` (submodel 1), server ``servers[j]`` holds layers
``cuts[j]..cuts[j+1]-1`` (with ``cuts[P] = I``, ``P = len(servers) = len(cuts)``). Servers are
names or indices ``0..N-1``. Submodel count = ``P + 1``.

Stage times for one micro-batch (digest §9, with the corrections of digest §7):

* client ``m`` with ``b_m`` samples (``client_split``), rate ``f_m``, first hop ``m -> x``:
  ``F^c_m = b_m W^F_c / f_m + t0c + b_m act(c1) / r(m, x)``,
  ``B^c_m = pi_m W^B_c / f_m + t1c + b_m grad(c1) / r(x, m)``, ``pi_m = max(b_m - th_c, 0)``
  (Eq. 2, 5, 7, 9; FLOP and FLOP/s, digest §7.1 #1); idle clients (``b_m = 0``) cost nothing;
* server block ``j`` on node ``n``: ``F_j = b W^F_j / f_n + t0s``,
  ``B_j = pi W^B_j / f_n + t1s``, ``pi = max(b - th_s, 0)`` (Eq. 2, 7);
* transfer at cut ``c`` over hop ``u -> v``: ``CF = D act(c) / r(u, v)``,
  ``CB = D grad(c) / r(v, u)`` (the gradient returns on the reversed link; digest §7.2 #2), ``D``
  the samples on the hop (``b``, or the clients' share for relayed client traffic).

``T_f = max_m F^c_m + max_m B^c_m + sum_j (F_j + B_j) + sum_hops (CF + CB)`` (Eq. 12, with the
last submodel's compute counted, digest §7.2 #5). ``T_i`` is the largest stage (Eq. 13), where the
stages are grouped by the semantics fields:

=============  ===================================  =====================================================
placement      ``bottleneck="stages"``               ``bottleneck="resource"``
=============  ===================================  =====================================================
distinct,      ``max_m F^c_m``, ``max_m B^c_m``,     ``max_m (F^c_m + B^c_m)``, ``F_j + B_j`` per block,
revisit        each ``F_j``, ``B_j``, each hop's     ``CF + CB`` per hop of each transfer
               ``CF`` and ``CB``
aggregate      as above, but per node ``sum F``,     per node ``sum (F + B)``, per unordered node pair
               ``sum B`` and per directed link        the sum of all ``CF + CB`` on it
               ``sum CF``, ``sum CB`` (C9/C11/C13/C15)
=============  ===================================  =====================================================

Memory (``memory``): ``"paper"`` (Eq. 11) ``b (S + P + O)`` of the block, ``S``/``P``/``O`` the
block's sample, parameter and optimizer bytes; ``"resident"`` ``P + O + b S min(q, K' - s)`` with
``q = ceil(B / b)`` micro-batches and ``s`` the chain position (client 0) of ``K'`` submodels.
Clients use ``b_m``. Per block under ``distinct``/``revisit``, per node under ``aggregate`` (C8).
Limits are checked with a relative tolerance of 1e-9.

# interface

* :func:`evaluate` ``(instance, assignment) -> (latency, breakdown)``; :func:`check_assignment`
  ``-> Plan`` (raises :class:`~splitopt.errors.InstanceError` for malformed input,
  :class:`~splitopt.errors.InfeasibleSolution` for broken memory, topology, placement or
  ``max_submodels``); :func:`make_assignment`.
* Building blocks (plain floats, for algorithms that score arcs): :func:`xi`,
  :func:`server_times` ``(inst, b, server, lo, hi) -> (F, B)``, :func:`client_times`
  ``(inst, b, cut, first_server) -> (F_m list, B_m list, relay hops)``, :func:`transfer_times`
  ``(inst, samples, u, v, cut) -> [((u, v), CF, CB), ...]``, :func:`block_memory`,
  :func:`client_memory`, :func:`stage_items`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from splitopt.errors import InfeasibleSolution, InstanceError
from splitopt.instances.pipeline import PipelineInstance

MEM_TOL = 1e-9


def xi(batch: int, b: int) -> int:
    """``ceil((B - b) / b)``: the number of micro-batches after the first (Eq. 14; printed as
    ``ceil(B - b / b)``, digest §7.2 #1)."""
    return -(-(batch - b) // b)


@dataclass(frozen=True)
class Plan:
    """A checked assignment: ``b``, ``cuts`` and ``servers`` (indices ``0..N-1``)."""

    b: int
    cuts: tuple[int, ...]
    servers: tuple[int, ...]

    def blocks(self, n_layers: int) -> list[tuple[int, int]]:
        """``(lo, hi)`` layer ranges: the client block, then one per server block."""
        ends = (*self.cuts, n_layers)
        return [(0, self.cuts[0])] + [(ends[j], ends[j + 1]) for j in range(len(self.servers))]

    def to_assignment(self, instance: PipelineInstance) -> dict:
        return make_assignment(instance, self.b, self.cuts, self.servers)


def make_assignment(instance: PipelineInstance, b: int, cuts: Sequence[int], servers: Sequence[int | str]) -> dict:
    """The plain JSON assignment (server names) of ``b``, ``cuts`` and servers (indices or names)."""
    names = [instance.servers[s] if not isinstance(s, str) else s for s in servers]
    return {"b": int(b), "cuts": [int(c) for c in cuts], "servers": names}


def _int(path: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        raise InstanceError(path, f"must be an integer, got {v!r}"[:200])
    return int(v)


def parse_assignment(instance: PipelineInstance, assignment: Any) -> Plan:
    """Shape checks only (raises :class:`InstanceError` naming the field)."""
    if not isinstance(assignment, Mapping):
        raise InstanceError("assignment", f"must be an object {{b, cuts, servers}}, got {assignment!r}"[:200])
    bad = sorted(set(assignment) - {"b", "cuts", "servers"})
    if bad:
        raise InstanceError(f"assignment.{bad[0]}", "unknown field")
    for key in ("b", "cuts", "servers"):
        if key not in assignment:
            raise InstanceError(f"assignment.{key}", "missing")
    b = _int("assignment.b", assignment["b"])
    if not 1 <= b <= instance.batch:
        raise InstanceError("assignment.b", f"must be in 1..{instance.batch} (the batch B), got {b}")
    cuts, servers = assignment["cuts"], assignment["servers"]
    if isinstance(cuts, (str, bytes, Mapping)) or not isinstance(cuts, (Sequence, np.ndarray)):
        raise InstanceError("assignment.cuts", f"must be a list of layer counts, got {cuts!r}"[:200])
    if isinstance(servers, (str, bytes, Mapping)) or not isinstance(servers, (Sequence, np.ndarray)):
        raise InstanceError("assignment.servers", f"must be a list of server names, got {servers!r}"[:200])
    I = instance.n_layers
    cuts = [_int(f"assignment.cuts[{j}]", c) for j, c in enumerate(cuts)]
    if not cuts:
        raise InstanceError("assignment.cuts", "must hold at least one cut (the client block ends there)")
    if len(servers) != len(cuts):
        raise InstanceError("assignment.servers", f"has {len(servers)} entries for {len(cuts)} cuts (one server per "
                                                  "block after each cut)")
    prev = 0
    for j, c in enumerate(cuts):
        if not prev < c < I:
            raise InstanceError(f"assignment.cuts[{j}]", f"must be in {prev + 1}..{I - 1} (strictly increasing, "
                                                         f"I = {I} layers), got {c}")
        prev = c
    idx = {nm: a for a, nm in enumerate(instance.servers)}
    srv = []
    for j, s in enumerate(servers):
        if isinstance(s, str):
            if s not in idx:
                raise InstanceError(f"assignment.servers[{j}]", f"unknown server {s!r} (servers: "
                                                                f"{', '.join(instance.servers)})"[:300])
            srv.append(idx[s])
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= int(s) < instance.n_servers:
            srv.append(int(s))
        else:
            raise InstanceError(f"assignment.servers[{j}]", f"must be a server name, got {s!r}"[:200])
    return Plan(b, tuple(cuts), tuple(srv))


# ---------------------------------------------------------------------- building blocks
def server_times(instance: PipelineInstance, b: int, server: int, lo: int, hi: int) -> tuple[float, float]:
    """``(F, B)`` of layers ``lo..hi-1`` on server index ``server`` for a micro-batch of ``b``
    (Eq. 2 and Eq. 7, server branch)."""
    f = instance.server_flops[server]
    F = b * instance.block_sum("fwd_flop", lo, hi) / f + instance.t0_server_s
    pi = max(b - instance.bwd_threshold_server, 0)
    B = pi * instance.block_sum("bwd_flop", lo, hi) / f + instance.t1_server_s
    return F, B


def transfer_times(instance: PipelineInstance, samples: float, u: int, v: int, cut: int
                   ) -> list[tuple[tuple[int, int], float, float]] | None:
    """Hops of the transfer at ``cut`` (layers ``< cut`` on ``u``) from node ``u`` to node ``v``
    with ``samples`` samples: ``[((x, y), CF, CB), ...]``; ``None`` when no route exists."""
    route = instance.route(u, v)
    if route is None:
        return None
    a = instance.act_bytes[cut - 1] * samples
    g = instance.grad_bytes[cut - 1] * samples
    return [((x, y), a / instance.rates[x][y], g / instance.rates[y][x]) for x, y in route]


def client_times(instance: PipelineInstance, b: int, cut: int, first_server: int):
    """``(F^c, B^c, relay)``: per-client FP and BP stage times of the client block ``0..cut-1``
    sending to server index ``first_server`` (client compute plus its own upload or download hop),
    and the relayed hops after the first one as ``{(x, y): samples}``; ``None`` when a client has
    no route."""
    M = instance.n_clients
    Wf = instance.block_sum("fwd_flop", 0, cut)
    Wb = instance.block_sum("bwd_flop", 0, cut)
    target = instance.server_node(first_server)
    F, B, relay = [], [], {}
    for m, bm in enumerate(instance.local_batches(b)):
        if bm == 0:
            F.append(0.0)
            B.append(0.0)
            continue
        route = instance.route(m, target)
        if route is None:
            return None
        f = instance.client_flops[m]
        x = route[0][1]
        pi = max(bm - instance.bwd_threshold_client, 0)
        F.append(bm * Wf / f + instance.t0_client_s + bm * instance.act_bytes[cut - 1] / instance.rates[m][x])
        B.append(pi * Wb / f + instance.t1_client_s + bm * instance.grad_bytes[cut - 1] / instance.rates[x][m])
        for hop in route[1:]:
            relay[hop] = relay.get(hop, 0) + bm
    del M
    return F, B, relay


def client_memory(instance: PipelineInstance, b: int, cut: int, n_submodels: int) -> list[float]:
    """Memory in bytes of each client for the client block ``0..cut-1`` (``memory`` semantics)."""
    S = instance.block_sum("sample_mem_bytes", 0, cut)
    PO = instance.block_sum("param_bytes", 0, cut) + instance.block_sum("opt_bytes", 0, cut)
    out = []
    for bm in instance.local_batches(b):
        if instance.memory == "paper":
            out.append(bm * (S + PO))
        else:
            out.append(PO + bm * S * min(-(-instance.batch // b), n_submodels))
    return out


def block_memory(instance: PipelineInstance, b: int, lo: int, hi: int, position: int, n_submodels: int) -> float:
    """Memory in bytes of server block ``lo..hi-1`` at chain position ``position`` (1 = the first
    server block) of ``n_submodels`` submodels (``memory`` semantics)."""
    S = instance.block_sum("sample_mem_bytes", lo, hi)
    PO = instance.block_sum("param_bytes", lo, hi) + instance.block_sum("opt_bytes", lo, hi)
    if instance.memory == "paper":
        return b * (S + PO)
    return PO + b * S * min(-(-instance.batch // b), n_submodels - position)


def _over(use: float, cap: float | None) -> bool:
    return cap is not None and use > cap * (1 + MEM_TOL) + 1e-300


# ---------------------------------------------------------------------- the evaluator
def check_assignment(instance: PipelineInstance, assignment: Any) -> Plan:
    """Parse and check an assignment: raises :class:`InstanceError` (malformed) or
    :class:`InfeasibleSolution` (``b`` not allowed, too many submodels, consecutive submodels on one
    server, a server reused under ``distinct``, no link or route, memory)."""
    plan = parse_assignment(instance, assignment)
    _check_feasible(instance, plan)
    return plan


def _check_feasible(instance: PipelineInstance, plan: Plan) -> None:
    if instance.micro_batches is not None and plan.b not in instance.micro_batches:
        raise InfeasibleSolution(f"micro-batch b = {plan.b} is not allowed (micro_batches: "
                                 f"{list(instance.micro_batches)})"[:300])
    K = len(plan.servers) + 1
    if instance.max_submodels is not None and K > instance.max_submodels:
        raise InfeasibleSolution(f"{K} submodels, more than max_submodels = {instance.max_submodels}")
    for j in range(1, len(plan.servers)):
        if plan.servers[j] == plan.servers[j - 1]:
            raise InfeasibleSolution(f"consecutive submodels {j + 1} and {j + 2} are both on server "
                                     f"{instance.servers[plan.servers[j]]!r} (they must sit on different nodes)")
    if instance.placement == "distinct" and len(set(plan.servers)) != len(plan.servers):
        dup = next(s for s in plan.servers if plan.servers.count(s) > 1)
        raise InfeasibleSolution(f"server {instance.servers[dup]!r} hosts two blocks (placement 'distinct')")
    mem = memory_use(instance, plan)
    for who, use, cap in mem:
        if _over(use, cap):
            raise InfeasibleSolution(f"{who} needs {use:.6g} bytes of memory, more than its {cap:.6g} "
                                     f"(memory '{instance.memory}', placement '{instance.placement}')")


def memory_use(instance: PipelineInstance, plan: Plan) -> list[tuple[str, float, float | None]]:
    """``(who, bytes, capacity)`` per client, and per server block (``distinct``, ``revisit``) or
    per used server (``aggregate``)."""
    K = len(plan.servers) + 1
    out = [(f"client {instance.clients[m]!r}", u, instance.client_memory_bytes[m])
           for m, u in enumerate(client_memory(instance, plan.b, plan.cuts[0], K))]
    blocks = plan.blocks(instance.n_layers)[1:]
    per_node: dict[int, float] = {}
    for j, ((lo, hi), s) in enumerate(zip(blocks, plan.servers)):
        u = block_memory(instance, plan.b, lo, hi, j + 1, K)
        if instance.placement == "aggregate":
            per_node[s] = per_node.get(s, 0.0) + u
        else:
            out.append((f"server {instance.servers[s]!r} (block {j + 2})", u, instance.server_memory_bytes[s]))
    for s, u in per_node.items():
        out.append((f"server {instance.servers[s]!r}", u, instance.server_memory_bytes[s]))
    return out


def stage_items(instance: PipelineInstance, plan: Plan):
    """``(F^c, B^c, items)``: per-client stage times and every other stage time of one micro-batch
    as ``(label, seconds, stages_key, resource_key)``; keys group the items into bottleneck stages
    under ``bottleneck="stages"`` / ``"resource"`` for the instance's placement semantics. Raises
    :class:`InfeasibleSolution` when a transfer has no link or route."""
    b = plan.b
    agg = instance.placement == "aggregate"
    sv = instance.servers
    names = instance.node_names
    ct = client_times(instance, b, plan.cuts[0], plan.servers[0])
    if ct is None:
        raise InfeasibleSolution(f"no {'route' if instance.relay != 'forbidden' else 'link'} from the clients to "
                                 f"server {sv[plan.servers[0]]!r} (topology '{instance.topology}', relay "
                                 f"'{instance.relay}')")
    Fc, Bc, relay = ct
    items = []

    def hop_items(t, hops):
        for h, ((x, y), cf, cb) in enumerate(hops):
            lab = f"{names[x]}->{names[y]}@cut{t}"
            items.append((f"link FP {lab}", cf, ("LF", x, y) if agg else ("LF", t, h),
                          ("L", min(x, y), max(x, y)) if agg else ("L", t, h)))
            items.append((f"link BP {lab}", cb, ("LB", y, x) if agg else ("LB", t, h),
                          ("L", min(x, y), max(x, y)) if agg else ("L", t, h)))

    c1 = plan.cuts[0]
    hop_items(0, [((x, y), samples * instance.act_bytes[c1 - 1] / instance.rates[x][y],
                   samples * instance.grad_bytes[c1 - 1] / instance.rates[y][x])
                  for (x, y), samples in sorted(relay.items())])
    blocks = plan.blocks(instance.n_layers)[1:]
    for j, ((lo, hi), s) in enumerate(zip(blocks, plan.servers)):
        F, B = server_times(instance, b, s, lo, hi)
        key = s if agg else j
        items.append((f"FP {sv[s]} block {j + 2}", F, ("F", key), ("G", key)))
        items.append((f"BP {sv[s]} block {j + 2}", B, ("B", key), ("G", key)))
        if j + 1 < len(plan.servers):
            u, v = instance.server_node(s), instance.server_node(plan.servers[j + 1])
            hops = transfer_times(instance, b, u, v, plan.cuts[j + 1])
            if hops is None:
                raise InfeasibleSolution(f"no {'route' if instance.relay != 'forbidden' else 'link'} from server "
                                         f"{sv[s]!r} to {sv[plan.servers[j + 1]]!r} (topology "
                                         f"'{instance.topology}', relay '{instance.relay}')")
            hop_items(j + 1, hops)
    return Fc, Bc, items


def evaluate(instance: PipelineInstance, assignment: Any) -> tuple[float, dict[str, Any]]:
    """Round latency ``L = T_f + xi(b) T_i`` (Eq. 14) and its breakdown.

    Breakdown: ``latency``, ``T_f``, ``T_i``, ``xi``, ``b``, ``submodels``, ``client_fwd`` /
    ``client_bwd`` (the largest client stage times), ``bottleneck`` (label of the slowest stage),
    ``stages`` (every bottleneck stage as ``[label, seconds]``, in chain order) and ``memory``
    (``[who, bytes, capacity]``)."""
    plan = check_assignment(instance, assignment)
    return evaluate_plan(instance, plan)


def evaluate_plan(instance: PipelineInstance, plan: Plan, *, check: bool = False) -> tuple[float, dict[str, Any]]:
    """:func:`evaluate` of a :class:`Plan` (``check`` runs the feasibility checks first)."""
    if check:
        _check_feasible(instance, plan)
    Fc, Bc, items = stage_items(instance, plan)
    cf, cb = max(Fc), max(Bc)
    T_f = cf + cb + math.fsum(t for _l, t, _k, _r in items)
    groups: dict[Any, list] = {}
    order = []
    res = instance.bottleneck == "resource"
    for lab, t, ks, kr in items:
        k = kr if res else ks
        if k not in groups:
            groups[k] = [lab, 0.0, 0]
            order.append(k)
        groups[k][1] += t
        groups[k][2] += 1
    if res:
        stages = [["client FP+BP", max(f + b for f, b in zip(Fc, Bc))]]
    else:
        stages = [["client FP", cf], ["client BP", cb]]
    stages += [[g[0] if g[2] == 1 else f"{g[0]} (+{g[2] - 1} more)", g[1]] for g in (groups[k] for k in order)]
    T_i = max(s[1] for s in stages)
    x = xi(instance.batch, plan.b)
    L = T_f + x * T_i
    worst = max(stages, key=lambda s: s[1])[0]
    return L, {"latency": L, "T_f": T_f, "T_i": T_i, "xi": x, "b": plan.b, "submodels": len(plan.servers) + 1,
               "client_fwd": cf, "client_bwd": cb, "bottleneck": worst, "stages": stages,
               "memory": [[w, u, c] for w, u, c in memory_use(instance, plan)]}


def latency(instance: PipelineInstance, assignment: Any) -> float:
    """Shorthand for ``evaluate(instance, assignment)[0]``."""
    return evaluate(instance, assignment)[0]


__all__ = ["evaluate", "evaluate_plan", "check_assignment", "parse_assignment", "make_assignment", "Plan", "xi",
           "server_times", "client_times", "transfer_times", "client_memory", "block_memory", "memory_use",
           "stage_items", "latency", "MEM_TOL"]
