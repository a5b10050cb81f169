"""A family's solution as a *plan*: named stages (or sides) of named layers, with module FQNs.

:func:`plan_of` turns any family's assignment (grouping's group sizes, pipeline's cut counts,
split's device-side names, throughput's node per layer) into one shape that every export format
reads::

    {"family": "grouping", "kind": "stages", "layers": [every layer, in graph order],
     "stages": [{"name": "stage0", "device": 0, "layers": [...], "fqns": [...], "begin": "layer2.0"}, ...],
     "torch": {"level": "module", ...} | None}

``layers`` of a stage are the DNN-graph layers it runs (a grouping part expands into its member
layers); ``fqns`` the module FQNs of those layers (empty for layers that are no module, such as
the graph input); ``begin`` the FQN at whose ``SplitPoint.BEGINNING`` the stage starts in
``torch.distributed.pipelining`` (``None`` when the stage's first layer is no split point). FQNs
come from the ``torch`` metadata that :func:`splitopt.instances.importers.torch.from_torch` writes
into the graph (``graph.meta["torch"]``: ``fqn`` and ``split_points`` per layer), found on the
instance (``instance.meta["torch"]``, or ``instance.graph.meta`` for split) or in a graph passed
explicitly; without it, ``fqns`` are empty and ``torch`` is ``None``: the plan still names layers.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from splitopt.errors import InstanceError


def torch_info(instance: Any, graph=None) -> dict | None:
    """The ``torch`` metadata (``fqn``, ``split_points``, ``level``) of the graph an instance came from."""
    for src in (getattr(graph, "meta", None), getattr(instance, "meta", None),
                getattr(getattr(instance, "graph", None), "meta", None)):
        if isinstance(src, Mapping) and isinstance(src.get("torch"), Mapping):
            return dict(src["torch"])
    return None


def torch_meta(graph, chain=None) -> dict:
    """Instance ``meta`` entries that let a plan name modules: ``{"torch": ..., "part_layers": ...}``
    when ``graph`` came from PyTorch (else ``{}``). ``chain``: the collapsed graph whose layers the
    instance's parts are (their ``meta["members"]``), when the family collapsed ``graph``."""
    info = getattr(graph, "meta", {}).get("torch") if graph is not None else None
    if not isinstance(info, Mapping):
        return {}
    out: dict = {"torch": dict(info)}
    if chain is not None and chain is not graph:
        out["part_layers"] = {lay.name: list(lay.meta.get("members") or [lay.name]) for lay in chain.layers}
    return out


def _stage(name: str, device: Any, layers: Sequence[str], info: dict | None) -> dict:
    fqn = (info or {}).get("fqn", {}) or {}
    sp = (info or {}).get("split_points", {}) or {}
    fqns: list[str] = []
    for lay in layers:
        f = fqn.get(lay)
        if f and f not in fqns:
            fqns.append(f)
    return {"name": name, "device": device, "layers": list(layers), "fqns": fqns,
            "begin": sp.get(layers[0]) if layers else None}


def _members(instance, part: str) -> list[str]:
    pl = (getattr(instance, "meta", None) or {}).get("part_layers")
    if isinstance(pl, Mapping) and isinstance(pl.get(part), list):
        return list(pl[part])
    return [part]


def _layer_names(instance) -> list[str]:
    """The layer names an instance assigns: ``layers`` (throughput, links model), else ``nodes``
    (throughput's device model, whose DNN-graph vertices are called nodes)."""
    for attr in ("layers", "nodes"):
        v = getattr(instance, attr, None)
        if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
            return list(v)
    return []


def plan_of(instance: Any, assignment: Any, *, graph=None) -> dict:
    """The plan of ``assignment`` for ``instance`` (see the module docstring); raises
    :class:`InstanceError` for an assignment that does not fit the instance."""
    fam = getattr(instance, "family", None)
    info = torch_info(instance, graph)
    if fam == "grouping":
        sizes = list(assignment)
        if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in sizes) or sum(sizes) != instance.n:
            raise InstanceError("assignment", f"must be positive group sizes adding up to {instance.n}, got {sizes!r}"[:200])
        stages, lo = [], 0
        for s, size in enumerate(sizes):
            layers = [m for part in instance.names[lo:lo + size] for m in _members(instance, part)]
            stages.append(_stage(f"stage{s}", s, layers, info))
            lo += size
        order = [m for part in instance.names for m in _members(instance, part)]
        kind = "stages"
    elif fam == "split":
        names = instance.graph.names
        dev = set(assignment)
        unknown = sorted(dev - set(names))
        if unknown:
            raise InstanceError("assignment", f"unknown layer {unknown[0]!r}")
        stages = [_stage("device", "device", [n for n in names if n in dev], info),
                  _stage("server", "server", [n for n in names if n not in dev], info)]
        order, kind = list(names), "sides"
    elif fam == "pipeline":
        from splitopt.models.pipeline import parse_assignment

        p = parse_assignment(instance, assignment)
        names = list(instance.layers)
        stages = []
        for j, (lo, hi) in enumerate(p.blocks(len(names))):
            who = "client" if j == 0 else instance.servers[p.servers[j - 1]]
            stages.append(_stage(f"stage{j}", who, [m for part in names[lo:hi] for m in _members(instance, part)],
                                 info))
        stages = [s for s in stages if s["layers"]]
        order, kind = [m for part in names for m in _members(instance, part)], "stages"
    elif isinstance(assignment, (list, tuple)) and all(isinstance(v, str) for v in assignment) \
            and len(_layer_names(instance)) == len(assignment):
        # one node/device name per layer (throughput; the device model's accelerators and CPU cores;
        # placement): stages in order of first use
        names = _layer_names(instance)
        by: dict[str, list[str]] = {}
        for lay, node in zip(names, assignment):
            by.setdefault(node, []).append(lay)
        stages = [_stage(f"stage{j}", node, lays, info) for j, (node, lays) in enumerate(by.items())]
        order, kind = names, "devices"
    else:
        raise InstanceError("family", f"no plan for a {fam!r} solution of shape {type(assignment).__name__}")
    return {"family": fam, "kind": kind, "name": getattr(instance, "name", None), "layers": order,
            "stages": stages, "torch": info and {k: info[k] for k in ("level", "depth", "model", "inputs", "dtype")
                                                  if k in info}}


__all__ = ["plan_of", "torch_info", "torch_meta"]
