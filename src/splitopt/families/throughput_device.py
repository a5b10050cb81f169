"""Registry pieces of the ``throughput`` family's device communication model (issue 11), merged into
:mod:`splitopt.families.throughput`: the algorithms for :class:`DeviceInstance`, a guard that
makes the links-model algorithms decline device instances with a clear message, and
``describe``/``render`` for device instances."""

from __future__ import annotations

import functools

from splitopt.errors import InstanceError
from splitopt.families import MIP_GAP, NODE_LIMIT, SOLVER_OPTIONS, TIME_LIMIT, Algorithm, Option
from splitopt.instances.throughput_device import DeviceInstance

T = "splitopt.solvers.throughput."

DEVICE_ALGORITHMS = {a.name: a for a in (
    Algorithm("device_ideals", T + "device_ideals:solve", "exact",
              "device model, contiguity chain: branch and bound over ideals (isolation min-cut bound, memo of failed "
              "states, forward/reverse portfolio); proven bound at any limit", options=(TIME_LIMIT, NODE_LIMIT)),
    Algorithm("device_milp", T + "device_milp:solve", "formulation",
              "device model: the peer's IP strengthened (classes, symmetry breaking, work bound; convex or chain "
              "contiguity) through HiGHS, warm-started from the best baseline", options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("device_peer_ip", T + "device_milp:peer_ip", "formulation",
              "device model: the peer's IP as published (no symmetry breaking, bounds or incumbent; convex or none) "
              "through HiGHS: the baseline for device_milp on the same solver", options=SOLVER_OPTIONS + (MIP_GAP,)),
    Algorithm("device_lp", T + "device_milp:relaxation", "relaxation",
              "device model: LP relaxation of device_milp (bound)", options=SOLVER_OPTIONS),
    Algorithm("device_lns", T + "device_lns:solve", "heuristic",
              "device model: exact re-placement on pairs and triples of devices, the others frozen (convex or "
              "none), from the MILP's incumbent phase", options=(TIME_LIMIT,)),
    Algorithm("device_colgen", T + "device_colgen:relaxation", "relaxation",
              "device model: configuration-LP bound by column generation (sees communication; exact DP pricing "
              "where few tensors are open, else a MILP), with dives and a restricted master MILP for placements",
              options=(TIME_LIMIT,)),
    Algorithm("device_linearised", T + "device_baselines:linearised_dp", "baseline",
              "device model: PipeDream-style DP over runs of one topological order (the peer's -linearize)"),
    Algorithm("device_local", T + "device_baselines:local_search", "heuristic",
              "device model: the peer's local search (best single-class moves, 10 seeded restarts)",
              options=(Option("restarts", int, 10, "random restarts"), Option("seed", int, 0, "random seed"))),
    Algorithm("device_expert", T + "device_baselines:expert", "baseline",
              "device model: the human-expert split shipped with the workload"),
    Algorithm("device_bruteforce", T + "device_baselines:bruteforce", "exact",
              "device model: every class assignment up to relabelling identical devices (tiny instances)"),
)}


def _declines(name: str, model: str):
    def check(instance):
        is_device = isinstance(instance, DeviceInstance)
        if model == "links" and is_device:
            raise InstanceError("comm_model", f"algorithm {name!r} handles the links model; this instance uses "
                                              f"comm_model 'device' (algorithms: {', '.join(DEVICE_ALGORITHMS)})")
        if model == "device" and not is_device:
            raise InstanceError("comm_model", f"algorithm {name!r} handles comm_model 'device'; this instance uses "
                                              "the links model")
    return check


def guard(algo: Algorithm, model: str) -> Algorithm:
    """``algo`` with a target that first checks the instance's communication model."""
    check = _declines(algo.name, model)

    def target(instance, **kw):
        check(instance)
        return algo.resolve()(instance, **kw)

    functools.update_wrapper(target, algo.resolve) if not isinstance(algo.target, str) else None
    return Algorithm(algo.name, target, algo.kind, algo.description, algo.options, algo.fixed, algo.exact)


def merge(links_algorithms: dict) -> dict:
    """The family's algorithm table: the links algorithms guarded, then the device ones guarded."""
    out = {name: guard(a, "links") for name, a in links_algorithms.items()}
    out.update({name: guard(a, "device") for name, a in DEVICE_ALGORITHMS.items()})
    return out


def reference_for(instance) -> tuple[str, tuple[str, ...]] | None:
    """The harness's exact reference for a device instance: the device MILP (``device_milp``, any
    contiguity; its certificate adds the combinatorial bounds) with its LP relaxation
    (``device_lp``); ``None`` (the family's ``rlt``) for links-model instances, which ``rlt``
    handles and ``device_milp`` declines."""
    if isinstance(instance, DeviceInstance):
        return "device_milp", ("device_lp",)
    return None


def describe(instance: DeviceInstance) -> dict:
    return {"family": "throughput", "comm_model": "device", "name": instance.name, "nodes": instance.n_nodes,
            "tensors": len(instance.tensors), "accelerators": instance.n_accelerators, "cpu_cores": instance.n_cpus,
            "acc_memory_bytes": instance.acc_memory_bytes, "objective": instance.objective,
            "contiguity": instance.contiguity, "backward_nodes": sum(instance.backward),
            "colour_classes": len(instance.colour_classes),
            "total_acc_seconds": sum(instance.acc_seconds), "total_cpu_seconds": sum(instance.cpu_seconds)}


def render(instance: DeviceInstance, solution) -> str:
    b = solution.breakdown
    lines = [f"{instance.name}: {instance.objective} {solution.objective:.6g} s ({solution.algorithm}; "
             f"fwd max {b.get('fwd_max', 0):.6g} s, bwd max {b.get('bwd_max', 0):.6g} s, "
             f"{int(b.get('devices_used', 0))} devices used)"]
    from splitopt.models.throughput_device import device_indices

    p = device_indices(instance, solution.assignment)
    for d, dev in enumerate(instance.devices):
        nodes = [instance.nodes[i] for i in range(instance.n_nodes) if p[i] == d]
        if nodes:
            shown = ", ".join(nodes[:8]) + (f", ... ({len(nodes)} nodes)" if len(nodes) > 8 else "")
            lines.append(f"  {dev:>6}: load {b.get(f'load[{dev}]', 0):.6g} s: {shown}")
    return "\n".join(lines)


__all__ = ["DEVICE_ALGORITHMS", "guard", "merge", "describe", "render", "reference_for"]
