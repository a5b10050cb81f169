"""Import PipeDream layer profiles (``graph.txt``) as DNN graphs.

PipeDream (Narayanan et al., SOSP 2019; code: msr-fiddle/pipedream, MIT licence) profiles a DNN
graph on one GPU and writes one text file per DNN graph:

* one line per layer ``id -- module text -- forward_compute_time=F, backward_compute_time=B,
  activation_size=A, parameter_size=P`` with an optional trailing `` -- stage_id=k``
  (partitioned graphs). ``F``/``B`` are milliseconds per mini-batch, ``A`` and ``P`` bytes. ``A``
  may be a list ``[a0; a1; a2]`` when the layer returns a tuple (LSTM outputs in GNMT);
* one tab-indented line per edge ``src -- dst``.

Mapping onto :class:`~splitopt.instances.graph.Layer` (units converted here, at the edge):

* ``forward_compute_time`` / ``backward_compute_time`` (ms) -> ``fwd_seconds`` /
  ``bwd_seconds`` ``{machine_class: seconds}`` (``machine_class`` defaults to
  ``"pipedream_gpu"``);
* ``activation_size`` -> ``out_bytes``; for a list, element 0 is ``out_bytes`` and the others are
  ``extra_out_bytes`` (ports 1, 2, ...). An edge into a ``__getitem__(k)`` layer carries port
  ``k``; any other consumer of a multi-output layer receives the whole tuple, i.e. one edge per
  port. (PipeDream's own reader sums the list instead; the totals are the same, but ports let an
  algorithm charge only the element that actually crosses a cut.);
* ``parameter_size`` -> ``param_bytes``;
* the module text -> ``meta["module"]`` and its class name (text before the first ``(``) -> ``op``;
* input layers (module text ``Input``, ``Input0``, ``Input1`` ...): their forward time is data
  loading, not compute; it is kept in ``meta["load_seconds"]`` and ``fwd_seconds`` is 0. Their
  ``op`` is ``"Input"``.

Layers are handed to :class:`DNNGraph` sorted by a natural key of their ids (``node2`` before
``node10``), so topological ties are broken by PipeDream's numbering rather than by the (hash
order) sequence of the file. Every parse error raises :class:`~splitopt.errors.InstanceError` whose
path is ``line N`` (1-based line number of the offending line).
"""

from __future__ import annotations

import math
import os
import re
from importlib import resources
from pathlib import Path

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph, Edge, Layer

MACHINE_CLASS = "pipedream_gpu"
PACKAGED_LICENCE = "MIT"
PACKAGED_COPYRIGHT = "Copyright (c) 2015 - present Microsoft Corporation"
_REPO = "msr-fiddle/pipedream"
_PACKAGED_SOURCE = {
    "gnmt": "profiler/translation/profiles/gnmt/graph.txt",
}
_REQUIRED = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")
_INPUT_RE = re.compile(r"^Input\d*$")
_GETITEM_RE = re.compile(r"^__getitem__\(\s*(\d+)\s*\)$")


def _natural_key(name: str):
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name) if t)


def _number(lineno: int, key: str, text: str, where: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InstanceError(f"line {lineno}", f"{key} must be a number, got {text!r}{where}") from None
    if math.isnan(v) or math.isinf(v):
        raise InstanceError(f"line {lineno}", f"{key} must be a finite number, got {text!r}{where}")
    if v < 0:
        raise InstanceError(f"line {lineno}", f"{key} must be >= 0, got {text!r}{where}")
    return v


def _parse_layer(lineno: int, line: str, machine_class: str, where: str):
    tokens = line.split(" -- ")
    meta_idx = next((i for i in range(2, len(tokens)) if "forward_compute_time=" in tokens[i]), None)
    if len(tokens) < 3 or meta_idx is None:
        raise InstanceError(f"line {lineno}", "expected 'id -- module -- forward_compute_time=..., "
                            f"backward_compute_time=..., activation_size=..., parameter_size=...', "
                            f"got {line[:120]!r}{where}")
    name = tokens[0].strip()
    if not name:
        raise InstanceError(f"line {lineno}", f"empty layer id{where}")
    module = " -- ".join(tokens[1:meta_idx]).strip()
    fields: dict[str, str] = {}
    for item in tokens[meta_idx].split(","):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InstanceError(f"line {lineno}", f"expected key=value, got {item!r}{where}")
        if key in fields:
            raise InstanceError(f"line {lineno}", f"{key} given twice{where}")
        fields[key] = value.strip()
    missing = [k for k in _REQUIRED if k not in fields]
    if missing:
        raise InstanceError(f"line {lineno}", f"missing {missing[0]}{where}")
    fwd_ms = _number(lineno, "forward_compute_time", fields["forward_compute_time"], where)
    bwd_ms = _number(lineno, "backward_compute_time", fields["backward_compute_time"], where)
    param = _number(lineno, "parameter_size", fields["parameter_size"], where)
    act_text = fields["activation_size"]
    if act_text.startswith("["):
        if not act_text.endswith("]"):
            raise InstanceError(f"line {lineno}", f"activation_size list is not closed: {act_text!r}{where}")
        parts = [p.strip() for p in act_text[1:-1].split(";")]
        if not parts or any(not p for p in parts):
            raise InstanceError(f"line {lineno}", f"activation_size list has an empty element: {act_text!r}{where}")
        acts = [_number(lineno, f"activation_size[{j}]", p, where) for j, p in enumerate(parts)]
    else:
        acts = [_number(lineno, "activation_size", act_text, where)]
    meta: dict[str, object] = {"module": module}
    extra = {k: v for k, v in fields.items() if k not in _REQUIRED}
    for tok in tokens[meta_idx + 1:]:
        key, eq, value = tok.strip().partition("=")
        if not eq or not key.strip():
            raise InstanceError(f"line {lineno}", f"expected key=value after the profile fields, got {tok!r}{where}")
        extra[key.strip()] = value.strip()
    if "stage_id" in extra:
        try:
            meta["stage_id"] = int(extra.pop("stage_id"))
        except ValueError:
            raise InstanceError(f"line {lineno}", f"stage_id must be an integer{where}") from None
    if extra:
        meta["pipedream_fields"] = extra
    op = module.split("(", 1)[0].strip() or "layer"
    fwd_s = fwd_ms / 1000.0
    if _INPUT_RE.match(module):
        op = "Input"
        meta["load_seconds"] = fwd_s
        fwd_s = 0.0
    layer = Layer(name=name, op=op, out_bytes=acts[0], extra_out_bytes=tuple(acts[1:]), param_bytes=param,
                  fwd_seconds={machine_class: fwd_s}, bwd_seconds={machine_class: bwd_ms / 1000.0},
                  meta=meta)
    return layer


def parse_pipedream(text: str, name: str = "pipedream", *, machine_class: str = MACHINE_CLASS,
                    source: str | None = None, licence: str | None = None,
                    copyright: str | None = None) -> DNNGraph:
    """Parse the text of a PipeDream ``graph.txt`` (see the module docstring for the mapping)."""
    where = f" (in {source})" if source else ""
    layers: list[Layer] = []
    layer_line: dict[str, int] = {}
    raw_edges: list[tuple[int, str, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line[0] in " \t":
            parts = line.strip().split(" -- ")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise InstanceError(f"line {lineno}", f"expected an edge 'src -- dst', got {line.strip()[:120]!r}{where}")
            raw_edges.append((lineno, parts[0].strip(), parts[1].strip()))
            continue
        lay = _parse_layer(lineno, line, machine_class, where)
        if lay.name in layer_line:
            raise InstanceError(f"line {lineno}", f"duplicate layer id {lay.name!r} "
                                f"(first defined on line {layer_line[lay.name]}){where}")
        layer_line[lay.name] = lineno
        layers.append(lay)
    if not layers:
        raise InstanceError("line 1", f"no layer lines found: not a PipeDream profile{where}")
    by_name = {lay.name: lay for lay in layers}
    edges: list[Edge] = []
    edge_line: dict[tuple[str, str], int] = {}
    for lineno, s, d in raw_edges:
        for end, nm in (("source", s), ("destination", d)):
            if nm not in by_name:
                raise InstanceError(f"line {lineno}", f"edge {end} {nm!r} is not a layer defined in the file{where}")
        if s == d:
            raise InstanceError(f"line {lineno}", f"self-loop on layer {s!r}{where}")
        if (s, d) in edge_line:
            raise InstanceError(f"line {lineno}", f"duplicate edge {s!r} -> {d!r} "
                                f"(first on line {edge_line[(s, d)]}){where}")
        edge_line[(s, d)] = lineno
        src = by_name[s]
        if src.n_outputs == 1:
            edges.append(Edge(s, d, 0))
            continue
        m = _GETITEM_RE.match(str(by_name[d].meta.get("module", "")))
        if m and int(m.group(1)) < src.n_outputs:
            edges.append(Edge(s, d, int(m.group(1))))
        else:
            edges.extend(Edge(s, d, p) for p in range(src.n_outputs))
    layers.sort(key=lambda lay: _natural_key(lay.name))
    meta = {
        "source": source or "<text>",
        "licence": licence or "unknown (not a packaged profile: check the licence of the source)",
        "format": "pipedream-profile",
        "machine_class": machine_class,
        "units": "fwd_seconds/bwd_seconds: seconds per mini-batch (PipeDream ms / 1000); "
                 "out_bytes/param_bytes: bytes",
    }
    if copyright:
        meta["copyright"] = copyright
    try:
        return DNNGraph(layers, edges, name=name, meta=meta, _validated_numbers=True)
    except InstanceError as exc:
        if exc.path == "edges" and "cyclic" in exc.detail:
            cyc = exc.detail.split(": ", 1)[-1].split(" -> ")
            lines = [edge_line.get((a, b)) for a, b in zip(cyc, cyc[1:])]
            first = min((ln for ln in lines if ln is not None), default=None)
            if first is not None:
                raise InstanceError(f"line {first}", f"{exc.detail} (edges on lines "
                                    f"{', '.join(str(ln) for ln in sorted(x for x in lines if x is not None))}){where}") from None
        raise InstanceError(exc.path, exc.detail + where) from None


def load_pipedream(path_or_text: str | os.PathLike, name: str | None = None, *,
                   machine_class: str = MACHINE_CLASS, licence: str | None = None,
                   copyright: str | None = None) -> DNNGraph:
    """Load a PipeDream profile from a file path or from its text.

    A ``str`` containing a newline or `` -- `` is taken as the text itself; anything else is a
    path. ``name`` defaults to the directory name for ``<model>/graph.txt`` files (else the file
    stem, or ``"pipedream"`` for text). The graph's ``meta`` records ``source`` and ``licence``
    (pass ``licence=`` when you know it; packaged profiles set it to MIT).
    """
    if isinstance(path_or_text, str) and ("\n" in path_or_text or " -- " in path_or_text):
        return parse_pipedream(path_or_text, name or "pipedream", machine_class=machine_class,
                               licence=licence, copyright=copyright)
    p = Path(path_or_text)
    from splitopt.instances.io import read_text_file

    text = read_text_file(p)
    if name is None:
        name = p.parent.name if p.name == "graph.txt" and p.parent.name else p.stem
    return parse_pipedream(text, name, machine_class=machine_class, source=str(p), licence=licence,
                           copyright=copyright)


def _data_dir():
    return resources.files("splitopt.instances").joinpath("data", "pipedream")


def packaged_profiles() -> list[str]:
    """Names of the PipeDream profiles shipped with splitopt (sorted)."""
    root = _data_dir()
    return sorted(entry.name for entry in root.iterdir()
                  if entry.is_dir() and entry.joinpath("graph.txt").is_file())


def load_packaged(name: str, *, machine_class: str = MACHINE_CLASS) -> DNNGraph:
    """Load a packaged profile (``packaged_profiles()``), with its source and MIT licence in meta."""
    names = packaged_profiles()
    if name not in names:
        raise InstanceError("name", f"unknown PipeDream profile {name!r}; available: {', '.join(names)}")
    text = _data_dir().joinpath(name, "graph.txt").read_text(encoding="utf-8")
    rel = _PACKAGED_SOURCE.get(name, f"profiler/image_classification/profiles/{name}/graph.txt")
    return parse_pipedream(text, name, machine_class=machine_class, source=f"{_REPO}: {rel}",
                           licence=f"{PACKAGED_LICENCE} (full text: splitopt/instances/data/pipedream/LICENSE.txt)",
                           copyright=PACKAGED_COPYRIGHT)


__all__ = ["MACHINE_CLASS", "parse_pipedream", "load_pipedream", "packaged_profiles", "load_packaged"]
