"""Plans (:mod:`splitopt.export.plan`) in the shapes that training and serving frameworks take.

* ``pipelining``: the ``split_spec`` of ``torch.distributed.pipelining.pipeline(module, mb_args,
  split_spec=...)``: ``{fqn: SplitPoint.BEGINNING}`` for the first module of every stage after the
  first (``pipeline`` inserts a ``pipe_split()`` before that module's forward and cuts the exported
  graph there, so stage ``s`` runs exactly the layers between two consecutive split points).
* ``torchtitan``: ``module_fqns_per_model_part``, one list of module FQNs per stage (torchtitan's
  pipeline-parallel option), in execution order.
* ``deepspeed``: ``PipelineModule(layers=..., ...)`` takes an ordered list of layers and assigns
  stage ``s`` the layers ``parts[s]:parts[s+1]``; this export gives that list (as FQNs of the
  plan's units) and the ``parts`` boundaries.
* ``device-map``: an HF accelerate style ``{fqn: device}`` (grouping and pipeline: the stage
  index or the names given with ``devices``; split: ``"device"``/``"server"``; throughput and
  placement: the node of each layer).

Each exporter refuses, with :class:`ExportError` (a :class:`~splitopt.errors.InstanceError`), a plan
that its target cannot express: a stage that is not one contiguous range of the graph's execution
order, a stage boundary at a layer that is no split point (a module called twice, an operator inside
a module), a module whose layers fall on two stages, or a plan without module names.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from splitopt.errors import InstanceError

FORMATS = ("pipelining", "torchtitan", "deepspeed", "device-map")


class ExportError(InstanceError):
    """The plan cannot be expressed in the requested format (the message says why)."""


def _need_fqns(plan: dict, fmt: str, *, every_stage: bool = True) -> None:
    if not plan.get("torch"):
        raise ExportError(fmt, "the plan names no modules: its graph did not come from PyTorch (import the "
                               "model with `splitopt import torch` or from_torch, then make and solve again)")
    for s in plan["stages"] if every_stage else ():
        if not s["fqns"]:
            raise ExportError(fmt, f"{s['name']} holds no module ({', '.join(s['layers'][:3]) or 'no layers'}): "
                                   "nothing for the framework to place there")


def contiguous(plan: dict, fmt: str) -> None:
    """Stages must be consecutive ranges of the graph's layer order, in stage order."""
    order = plan["layers"]
    pos = {n: i for i, n in enumerate(order)}
    nxt = 0
    for s in plan["stages"]:
        idx = sorted(pos[n] for n in s["layers"])
        if not idx:
            continue
        if idx[0] != nxt or idx[-1] - idx[0] + 1 != len(idx):
            missing = next((order[i] for i in range(idx[0], idx[-1] + 1) if order[i] not in set(s["layers"])), None)
            where = (f"{s['name']} runs {order[idx[0]]!r} .. {order[idx[-1]]!r} but not {missing!r}" if missing
                     else f"{s['name']} starts at {order[idx[0]]!r}, not where the previous stage ends")
            raise ExportError(fmt, f"the plan is not contiguous in execution order ({where}): a pipeline "
                                   "split cannot express it (use --format device-map)")
        nxt = idx[-1] + 1


def _one_stage_per_module(plan: dict, fmt: str) -> None:
    owner: dict[str, str] = {}
    for s in plan["stages"]:
        for f in s["fqns"]:
            if owner.setdefault(f, s["name"]) != s["name"]:
                raise ExportError(fmt, f"module {f!r} has layers on {owner[f]} and {s['name']}: a module "
                                       "cannot be placed on two devices (a module called twice, or an op-level "
                                       "graph cut inside a module)")


def pipelining(plan: dict) -> dict:
    """``{"split_spec": {fqn: "BEGINNING"}, "num_stages": k, "stages": [[fqn, ...], ...]}``."""
    _need_fqns(plan, "pipelining")
    contiguous(plan, "pipelining")
    spec = {}
    for s in plan["stages"][1:]:
        if not s["begin"]:
            raise ExportError("pipelining", f"{s['name']} begins at layer {s['layers'][0]!r}, which is no split "
                                            "point (a module called more than once, or an operator inside a "
                                            "module): no SplitPoint.BEGINNING names it")
        spec[s["begin"]] = "BEGINNING"
    _one_stage_per_module(plan, "pipelining")
    return {"format": "pipelining", "split_spec": spec, "num_stages": len(plan["stages"]),
            "stages": [s["fqns"] for s in plan["stages"]]}


def torchtitan(plan: dict) -> dict:
    """``{"module_fqns_per_model_part": [[fqn, ...], ...]}``, one list per stage."""
    _need_fqns(plan, "torchtitan")
    contiguous(plan, "torchtitan")
    _one_stage_per_module(plan, "torchtitan")
    return {"format": "torchtitan", "module_fqns_per_model_part": [s["fqns"] for s in plan["stages"]]}


def deepspeed(plan: dict) -> dict:
    """``{"layers": [fqn, ...], "parts": [0, ..., n], "num_stages": k}``: stage ``s`` owns
    ``layers[parts[s]:parts[s+1]]``."""
    _need_fqns(plan, "deepspeed")
    contiguous(plan, "deepspeed")
    _one_stage_per_module(plan, "deepspeed")
    layers, parts = [], [0]
    for s in plan["stages"]:
        layers.extend(s["fqns"])
        parts.append(len(layers))
    return {"format": "deepspeed", "layers": layers, "parts": parts, "num_stages": len(plan["stages"])}


def device_map(plan: dict, devices: Sequence[Any] | None = None) -> dict:
    """``{"device_map": {fqn: device}}``; ``devices`` renames stage ``s``'s device to ``devices[s]``."""
    _need_fqns(plan, "device-map", every_stage=False)  # a side or device may hold no module
    _one_stage_per_module(plan, "device-map")
    if devices is not None and len(devices) < len(plan["stages"]):
        raise ExportError("--devices", f"names {len(devices)} devices for {len(plan['stages'])} stages")
    out = {}
    for j, s in enumerate(plan["stages"]):
        dev = devices[j] if devices is not None else s["device"]
        for f in s["fqns"]:
            out[f] = dev
    return {"format": "device-map", "device_map": out}


def export(plan: dict, fmt: str, *, devices: Sequence[Any] | None = None) -> dict:
    if fmt == "pipelining":
        return pipelining(plan)
    if fmt == "torchtitan":
        return torchtitan(plan)
    if fmt == "deepspeed":
        return deepspeed(plan)
    if fmt == "device-map":
        return device_map(plan, devices)
    raise InstanceError("--format", f"must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _example(shape: str) -> str:
    dims, _, dt = str(shape).partition(":")
    size = dims.replace("x", ", ")
    if dt and not dt.startswith("float") and dt != "bfloat16":
        return f"torch.zeros({size}, dtype=torch.{dt})"
    return f"torch.randn({size})"


def snippet(out: dict, plan: dict) -> str:
    """A short Python snippet that hands the export to its framework."""
    t = plan.get("torch") or {}
    model = t.get("model", "module")
    mod, _, fac = str(model).rpartition(":")
    if mod and fac and not mod.endswith(".py") and mod != "torchvision":
        load = f"from {mod} import {fac.split('.')[0]}\n\nmodule = {fac}()"
    elif mod == "torchvision":
        load = f"import torchvision\n\nmodule = torchvision.models.get_model({fac!r}, weights=None)"
    else:
        load = f"module = ...  # {model}" if mod else "module = ...  # the model"
    shapes = t.get("inputs") or ["..."]
    fmt = out["format"]
    if fmt == "pipelining":
        spec = ",\n    ".join(f"{k!r}: SplitPoint.BEGINNING" for k in out["split_spec"])
        args = ", ".join(_example(s) for s in shapes)
        return (f"import torch\nfrom torch.distributed.pipelining import SplitPoint, pipeline\n\n{load}\n"
                f"mb_args = ({args},)"
                f"  # one micro-batch\nsplit_spec = {{\n    {spec}\n}}\n"
                f"pipe = pipeline(module, mb_args, split_spec=split_spec)\n"
                f"assert pipe.num_stages == {out['num_stages']}\n"
                f"stage = pipe.build_stage(rank, device)  # one stage per rank\n")
    if fmt == "torchtitan":
        return ("# torchtitan job config ([parallelism] section) or "
                "pipeline_module_split(..., module_names_per_stage=...)\n"
                f"module_fqns_per_model_part = {json.dumps(out['module_fqns_per_model_part'])}\n")
    if fmt == "deepspeed":
        return ("from deepspeed.pipe import PipelineModule\n\n"
                f"{load}\nLAYERS = {json.dumps(out['layers'])}\nPARTS = {out['parts']}  "
                "# stage s owns LAYERS[PARTS[s]:PARTS[s+1]]\n"
                "layers = [module.get_submodule(f) for f in LAYERS]\n\n"
                "class PlannedPipeline(PipelineModule):\n"
                "    def _partition_layers(self, method='uniform'):\n"
                "        super()._partition_layers('uniform')\n"
                "        self.parts = list(PARTS)\n"
                "        s = self._topo.get_coord(self.global_rank).pipe\n"
                "        self._set_bounds(start=self.parts[s], stop=self.parts[s + 1])\n\n"
                f"net = PlannedPipeline(layers=layers, num_stages={out['num_stages']})\n")
    return f"device_map = {json.dumps(out['device_map'], indent=1)}\n# e.g. accelerate.dispatch_model(module, device_map)\n"


__all__ = ["FORMATS", "ExportError", "export", "pipelining", "torchtitan", "deepspeed", "device_map", "snippet",
           "contiguous"]
