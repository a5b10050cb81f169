"""Importer and exporter for the input and placement formats of msr-fiddle/dnn-partitioning (MIT;
code of Tarnawski et al., "Efficient Algorithms for Device Placement of DNN Graph Operators",
NeurIPS 2020).

Input (one JSON object): ``maxFPGAs`` (k identical accelerators; "FPGA" in their code means any
accelerator), ``maxCPUs`` (l CPU cores), ``maxSizePerFPGA`` (bytes), ``nodes[]`` with ``id``,
``supportedOnFpga``, ``cpuLatency`` and ``fpgaLatency`` (milliseconds in their files),
``isBackwardNode``, optional ``colorClass`` and ``size`` (bytes), and ``edges[]`` with ``sourceId``,
``destId`` and ``cost`` (milliseconds to move the source's output between an accelerator and host
memory; one value per source). Extra keys (``name``, ``layerId``, edge ``size``) are kept in
``meta`` only where needed. The importer converts milliseconds to seconds; node names are the peer's
ids as strings, so a placement exports back to the same ids.

Placement (their DP's output and ``human-experts/*.json``): ``{"cpus": [{"load", "nodes"}], "fpgas":
[{"load", "nodes"}], "maxLoad"}`` with node ids; a load of -1 means "not computed". Expert splits
list forward nodes only for training graphs; :func:`read_placement` completes them through colour
classes, as the peer's ``-expert`` mode does.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from splitopt.errors import InstanceError, check_number
from splitopt.instances.limits import MAX_VALUE
from splitopt.instances.placement import CONTIGUITIES, OBJECTIVES, PlacementInstance

MS = 1e-3  # their times are milliseconds

SOURCE = "msr-fiddle/dnn-partitioning (commit b207b6a)"
LICENCE = "MIT"
COPYRIGHT = "Copyright (c) 2020 - present Microsoft Corporation"
CITATION = ("J. Tarnawski, A. Phanishayee, N. Devanur, D. Mahajan, F. Nina Paravecino: Efficient Algorithms for "
            "Device Placement of DNN Graph Operators, NeurIPS 2020")

#: the shipped workloads: name -> (file, expert split file or None)
PACKAGED = {
    "bert24_inference": ("bert24_inference.json", "bert24_inference_expert.json"),
    "bert24_training": ("bert24_training.json", None),
    "resnet50_inference": ("resnet50_inference.json", "resnet50_inference_expert.json"),
    "bert_l-3_inference": ("bert_l-3_inference.json", None),
}

#: the peer's DP (contiguous, max-load; milliseconds) and its wall time in seconds including reading
#: the JSON, measured on a 2-core x86_64 machine on 2026-11-22 (the data directory's README)
REFERENCE = {
    "bert24_inference": (17.78990625, 0.01),
    "bert24_training": (41.7458125, 0.01),
    "resnet50_inference": (33.774666015625, 0.19),
    "bert_l-3_inference": (27.9185676799125, 1.53),
}


def _data_dir():
    return resources.files("splitopt.instances") / "data" / "dnn_partitioning"


def _flag(path: str, v: Any) -> bool:
    if isinstance(v, bool) or v in (0, 1):
        return bool(v)
    raise InstanceError(path, f"must be 0, 1, true or false, got {v!r}")


def from_peer(d: Mapping, *, name: str = "dnn-partitioning", objective: str = "max-load",
              contiguity: str = "convex", meta: Mapping | None = None) -> PlacementInstance:
    """Their input object -> a :class:`PlacementInstance` (times converted to seconds)."""
    if not isinstance(d, Mapping):
        raise InstanceError("", f"a dnn-partitioning input must be a JSON object, got {type(d).__name__}")
    for key in ("maxFPGAs", "maxCPUs", "maxSizePerFPGA", "nodes", "edges"):
        if key not in d:
            raise InstanceError(key, "missing")
    if objective not in OBJECTIVES:
        raise InstanceError("objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if contiguity not in CONTIGUITIES:
        raise InstanceError("contiguity", f"must be one of {', '.join(CONTIGUITIES)}, got {contiguity!r}")
    for key in ("nodes", "edges"):
        if not isinstance(d[key], list):
            raise InstanceError(key, f"must be a list, got {type(d[key]).__name__}")
    k, l_ = d["maxFPGAs"], d["maxCPUs"]
    for key, v in (("maxFPGAs", k), ("maxCPUs", l_)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InstanceError(key, f"must be a non-negative integer, got {v!r}")
    mem = check_number("maxSizePerFPGA", d["maxSizePerFPGA"])
    if mem > MAX_VALUE:  # "no limit": :func:`to_peer` writes 1e300 for an unlimited memory
        mem = None
    index: dict[int, int] = {}
    names, cpu, acc, sup, size, back, col, labels = [], [], [], [], [], [], [], {}
    for i, nd in enumerate(d["nodes"]):
        if not isinstance(nd, Mapping):
            raise InstanceError(f"nodes[{i}]", "must be an object")
        for key in ("id", "supportedOnFpga", "cpuLatency", "fpgaLatency", "isBackwardNode"):
            if key not in nd:
                raise InstanceError(f"nodes[{i}].{key}", "missing")
        nid = nd["id"]
        if isinstance(nid, bool) or not isinstance(nid, int):
            raise InstanceError(f"nodes[{i}].id", f"must be an integer, got {nid!r}")
        if nid in index:
            raise InstanceError(f"nodes[{i}].id", f"duplicate id {nid}")
        index[nid] = i
        names.append(str(nid))
        cpu.append(check_number(f"nodes[{i}].cpuLatency", nd["cpuLatency"]) * MS)
        acc.append(check_number(f"nodes[{i}].fpgaLatency", nd["fpgaLatency"]) * MS)
        sup.append(_flag(f"nodes[{i}].supportedOnFpga", nd["supportedOnFpga"]))
        back.append(_flag(f"nodes[{i}].isBackwardNode", nd["isBackwardNode"]))
        size.append(check_number(f"nodes[{i}].size", nd.get("size", 0.0)))
        c = nd.get("colorClass")
        if c is not None and (isinstance(c, bool) or not isinstance(c, int)):
            raise InstanceError(f"nodes[{i}].colorClass", f"must be an integer, got {c!r}")
        col.append(c)
        if "name" in nd:
            labels[str(nid)] = str(nd["name"])
    cons: dict[int, list[int]] = {}
    cost: dict[int, float] = {}
    for e_i, e in enumerate(d["edges"]):
        if not isinstance(e, Mapping) or not {"sourceId", "destId", "cost"} <= set(e):
            raise InstanceError(f"edges[{e_i}]", "must be an object with sourceId, destId and cost")
        for key in ("sourceId", "destId"):
            if e[key] not in index:
                raise InstanceError(f"edges[{e_i}].{key}", f"unknown node id {e[key]!r}")
        u, v = index[e["sourceId"]], index[e["destId"]]
        if u == v:
            raise InstanceError(f"edges[{e_i}]", f"self-loop on node {e['sourceId']}")
        c = check_number(f"edges[{e_i}].cost", e["cost"])
        if u in cost and abs(cost[u] - c) > 1e-6:  # the peer's own tolerance (milliseconds)
            raise InstanceError(f"edges[{e_i}].cost", f"node {e['sourceId']} already has outgoing cost {cost[u]!r}, "
                                                      f"got {c!r} (one cost per source tensor)")
        cost.setdefault(u, c)
        lst = cons.setdefault(u, [])
        if v not in lst:
            lst.append(v)
    tensors = tuple((u, tuple(vs), cost[u] * MS) for u, vs in sorted(cons.items()))
    info = {"source": SOURCE, "licence": LICENCE, "copyright": COPYRIGHT, "citation": CITATION,
            "time_unit": "imported from milliseconds"}
    if labels:
        info["labels"] = labels
    info.update(meta or {})
    return PlacementInstance(tuple(names), tuple(cpu), tuple(acc), tensors, n_accelerators=k, n_cpus=l_,
                          acc_memory_bytes=mem, supported=tuple(sup), size_bytes=tuple(size), backward=tuple(back),
                          colour=tuple(col), objective=objective, contiguity=contiguity, name=name, meta=info)


def to_peer(instance: PlacementInstance) -> dict:
    """A :class:`PlacementInstance` -> their input object (times in milliseconds; ids from node names
    when they are integers, else positions)."""
    ids = _peer_ids(instance)
    labels = instance.meta.get("labels", {}) if isinstance(instance.meta, Mapping) else {}
    nodes = []
    for i, nm in enumerate(instance.nodes):
        nd = {"id": ids[i], "supportedOnFpga": int(instance.supported[i]), "cpuLatency": instance.cpu_seconds[i] / MS,
              "fpgaLatency": instance.acc_seconds[i] / MS, "isBackwardNode": int(instance.backward[i]),
              "size": instance.size_bytes[i]}
        if instance.colour[i] is not None:
            nd["colorClass"] = instance.colour[i]
        if nm in labels:
            nd["name"] = labels[nm]
        nodes.append(nd)
    edges = [{"sourceId": ids[u], "destId": ids[v], "cost": s / MS} for u, cons, s in instance.tensors for v in cons]
    return {"maxSizePerFPGA": instance.acc_memory_bytes if instance.acc_memory_bytes is not None else 1e300,
            "maxFPGAs": instance.n_accelerators, "maxCPUs": instance.n_cpus, "nodes": nodes, "edges": edges}


def _peer_ids(instance: PlacementInstance) -> list[int]:
    try:
        ids = [int(nm) for nm in instance.nodes]
        if len(set(ids)) == len(ids) and all(str(i) == nm for i, nm in zip(ids, instance.nodes)):
            return ids
    except ValueError:
        pass
    return list(range(instance.n_nodes))


def placement_to_peer(instance: PlacementInstance, assignment) -> dict:
    """An assignment -> their placement shape ``{"cpus", "fpgas", "maxLoad"}`` with loads (in
    milliseconds) from our evaluator, one entry per accelerator and CPU core."""
    from splitopt.models.placement import device_indices, device_loads, evaluate

    obj, _b = evaluate(instance, assignment)
    p = device_indices(instance, assignment)
    fwd, bwd, _c = device_loads(instance, p)
    ids = _peer_ids(instance)
    k = instance.n_accelerators
    machines = [{"load": float((fwd[d] + bwd[d]) / MS), "nodes": sorted(ids[i] for i in range(instance.n_nodes)
                                                                        if p[i] == d)}
                for d in range(instance.n_devices)]
    return {"cpus": machines[k:], "fpgas": machines[:k], "maxLoad": float(obj / MS)}


def placement_from_peer(instance: PlacementInstance, d: Mapping, *, complete: bool = True) -> list[str]:
    """Their placement object -> our assignment (device name per node). Loads in the file are
    ignored (our evaluator recomputes them). With ``complete``, nodes the file leaves out (the
    backward nodes of an expert split) go to the device of their colour class, as the peer's
    ``-expert`` mode does; a node that cannot be placed so is an error."""
    if not isinstance(d, Mapping) or not isinstance(d.get("cpus"), list) or not isinstance(d.get("fpgas"), list):
        raise InstanceError("placement", "must be an object with lists cpus and fpgas")
    ids = _peer_ids(instance)
    pos = {v: i for i, v in enumerate(ids)}
    out: list[str | None] = [None] * instance.n_nodes
    for kind, lst, limit, prefix in (("fpgas", d["fpgas"], instance.n_accelerators, "acc"),
                                     ("cpus", d["cpus"], instance.n_cpus, "cpu")):
        used = [m for m in lst if isinstance(m, Mapping) and m.get("nodes")]
        if len(used) > limit:
            raise InstanceError(f"placement.{kind}", f"uses {len(used)} devices, the instance has {limit}")
        j = 0
        for m_i, m in enumerate(lst):
            if not isinstance(m, Mapping) or not isinstance(m.get("nodes", []), list):
                raise InstanceError(f"placement.{kind}[{m_i}]", "must be an object with a list nodes")
            if not m.get("nodes"):
                continue
            for v in m["nodes"]:
                if v not in pos:
                    raise InstanceError(f"placement.{kind}[{m_i}].nodes", f"unknown node id {v!r}")
                if out[pos[v]] is not None:
                    raise InstanceError(f"placement.{kind}[{m_i}].nodes", f"node {v!r} placed twice")
                out[pos[v]] = f"{prefix}{j}"
            j += 1
    if complete:
        for cl in instance.colour_classes:
            ds = {out[i] for i in cl if out[i] is not None}
            if len(ds) == 1:
                dev = ds.pop()
                for i in cl:
                    if out[i] is None:
                        out[i] = dev
    missing = [instance.nodes[i] for i, v in enumerate(out) if v is None]
    if missing:
        raise InstanceError("placement", f"{len(missing)} nodes are not placed (first: {missing[0]})")
    return [str(v) for v in out]


def read_peer_file(path, **kw) -> PlacementInstance:
    from splitopt.instances.io import read_text_file

    text = read_text_file(path)
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(str(path), f"not valid JSON: {exc}") from None
    kw.setdefault("name", Path(str(path)).stem)
    return from_peer(d, **kw)


def load_packaged(name: str, **kw) -> PlacementInstance:
    """One of the shipped workloads (:data:`PACKAGED`) with its expert split (if any) in
    ``meta["expert"]`` (device name per node) and the peer's DP optimum in seconds in
    ``meta["reference_dp"]``."""
    if name not in PACKAGED:
        raise InstanceError("workload", f"unknown workload {name!r} (known: {', '.join(PACKAGED)})")
    fname, expert = PACKAGED[name]
    d = json.loads((_data_dir() / fname).read_text())
    ref, secs = REFERENCE[name]
    kw.setdefault("name", name)
    inst = from_peer(d, meta={"reference_dp": ref * MS, "reference_dp_seconds": secs}, **kw)
    if expert is not None:
        e = json.loads((_data_dir() / expert).read_text())
        meta = dict(inst.meta)
        meta["expert"] = placement_from_peer(inst, e)
        inst = inst.with_(meta=meta)
    return inst


def load_workload(name: str, contiguity: str = "chain") -> PlacementInstance:
    """``load_packaged(name, contiguity=contiguity)`` with positional arguments: the loader of the
    ``workloads`` validation set's members (:mod:`splitopt.instances.sets`)."""
    return load_packaged(name, contiguity=contiguity)


def write_json(obj: Any, path) -> None:
    from splitopt.instances.io import write_text_atomic

    write_text_atomic(path, json.dumps(obj, indent=1, allow_nan=False))


__all__ = ["from_peer", "to_peer", "placement_to_peer", "placement_from_peer", "read_peer_file", "load_packaged",
           "PACKAGED", "REFERENCE", "MS", "write_json"]


