"""Versioned JSON files for graphs, platforms and instances.

Every file is an object ``{"format": 1, "kind": "graph" | "platform" | "instance", ...}``;
instance files also carry ``"family"``. The payload sits under ``"data"``. Loading bad data raises
:class:`~splitopt.errors.InstanceError` whose message starts with the JSON path of the bad field
(``data.graph.layers[12].out_bytes: must be >= 0, got -3``). :func:`parse_json` is the one JSON
parser behind every command (``inspect``, ``solve``, ``validate``, graph sources): it rejects
NaN/Infinity tokens, duplicate keys (with their path), nesting deeper than :data:`MAX_DEPTH` and
memory exhaustion with one clean error each; numeric ranges are then enforced by the instance
constructors (:mod:`splitopt.instances.limits`). Writing is atomic: a temporary file
in the target directory, flushed and fsynced, then renamed over the target.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph
from splitopt.instances.platform import Platform

FORMAT_VERSION = 1
KINDS = ("graph", "platform", "instance")


def _reject_constant(c: str):
    raise InstanceError("", f"non-standard JSON number {c} (NaN and infinities are not allowed)")


def envelope(obj: Any) -> dict:
    """Wrap a graph, platform or family instance in the versioned envelope."""
    if isinstance(obj, DNNGraph):
        return {"format": FORMAT_VERSION, "kind": "graph", "data": obj.to_dict()}
    if isinstance(obj, Platform):
        return {"format": FORMAT_VERSION, "kind": "platform", "data": obj.to_dict()}
    family = getattr(obj, "family", None)
    if family is None or not hasattr(obj, "to_dict"):
        raise TypeError(f"cannot serialise {type(obj).__name__}")
    return {"format": FORMAT_VERSION, "kind": "instance", "family": family, "data": obj.to_dict()}


def dumps(obj: Any, indent: int | None = 1) -> str:
    return json.dumps(envelope(obj), indent=indent, allow_nan=False)


def from_envelope(d: Any) -> Any:
    """Inverse of :func:`envelope`, with validation."""
    if not isinstance(d, dict):
        raise InstanceError("", f"a splitopt file must hold a JSON object, got {type(d).__name__}")
    fmt = d.get("format")
    if fmt is None and {"family", "algorithm", "assignment"} <= d.keys():
        where = d.get("instance")
        raise InstanceError("format", "this is a solution (written by `splitopt solve --save` or --json), not an "
                                      "instance: solve the instance file it came from"
                                      + (f" ({where})" if isinstance(where, str) else "")
                                      + ", or give it to `splitopt export`")
    if fmt is None and {"cpus", "fpgas"} <= d.keys():
        raise InstanceError("format", "this is a placement in dnn-partitioning's shape (written by --export-placement), "
                                      "not an instance: solve the instance file, or import the peer's workload with "
                                      "`splitopt import dnn-partitioning`")
    if fmt != FORMAT_VERSION:
        raise InstanceError("format", f"unsupported format version {fmt!r} (this splitopt reads {FORMAT_VERSION})")
    kind = d.get("kind")
    if kind not in KINDS:
        raise InstanceError("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    data = d.get("data")
    if kind == "graph":
        return DNNGraph.from_dict(data, path="data")
    if kind == "platform":
        return Platform.from_dict(data, path="data")
    from splitopt.families import get_family

    fam_name = d.get("family")
    if not isinstance(fam_name, str):
        raise InstanceError("family", f"must be a family name (a string), got {fam_name!r}"[:200])
    try:
        fam = get_family(fam_name)
    except KeyError as exc:
        raise InstanceError("family", str(exc.args[0])) from None
    try:
        return fam.instance_type.from_dict(data)
    except InstanceError as exc:
        raise InstanceError(f"data.{exc.path}" if exc.path else "data", exc.detail) from None


def _nonfinite_path(obj: Any, path: str = "") -> tuple[str, float] | None:
    """JSON path and value of the first NaN/infinity in ``obj`` (depth first, in document order)."""
    for p, v in _walk(obj):
        if isinstance(v, float) and not math.isfinite(v):
            return p, v
    return None


def _walk(obj: Any):
    """Every ``(path, value)`` of a parsed JSON tree in document order (iterative: no recursion)."""
    stack = [("", obj)]
    while stack:
        path, v = stack.pop()
        yield path, v
        if isinstance(v, dict):
            stack.extend((f"{path}.{k}" if path else str(k), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", x) for i, x in reversed(list(enumerate(v))))


#: deepest nesting of arrays and objects a splitopt file may have (instances need about 8 levels;
#: deeper documents would exhaust the recursion of the JSON parser and of every tree walk)
MAX_DEPTH = 100

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_CHUNK = 1 << 23


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in JSON ``text`` (brackets inside strings ignored); linear
    time, constant extra memory per 8 MiB chunk."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the number of openings
    import numpy as np

    raw = _STRING.sub('""', text).encode("utf-8", "replace")
    depth, deepest = 0, 0
    for i in range(0, len(raw), _CHUNK):
        b = np.frombuffer(raw, dtype=np.uint8, count=min(_CHUNK, len(raw) - i), offset=i)
        step = ((b == 91) | (b == 123)).astype(np.int64) - ((b == 93) | (b == 125))
        run = np.cumsum(step) + depth
        if len(run):
            deepest = max(deepest, int(run.max()))
            depth = int(run[-1])
    return deepest


class _DuplicateKeys(dict):
    """A parsed JSON object that repeated a key (``duplicate``: the first repeated key)."""

    duplicate: str = ""


def _pairs_hook(seen: list):
    def hook(pairs):
        d = dict(pairs)
        if len(d) != len(pairs):
            keys: set = set()
            dup = next(k for k, _ in pairs if k in keys or keys.add(k))
            d = _DuplicateKeys(d)
            d.duplicate = dup
            seen.append(d)
        return d

    return hook


def parse_json(text: str) -> Any:
    """The one JSON parser of every splitopt command: standard JSON only, errors as
    :class:`InstanceError` naming the place (never a traceback).

    Rejected: invalid JSON (line and column), ``NaN``/``Infinity`` tokens (the field named),
    nesting deeper than :data:`MAX_DEPTH`, a key repeated in one object (its path: which value was
    meant is ambiguous; Python's ``json`` silently keeps the last), integers of more digits than
    Python converts (4,300), and documents too large for the memory available (``MemoryError``).
    """
    try:
        depth = json_depth(text)
        if depth > MAX_DEPTH:
            raise InstanceError("", f"JSON nested {depth} levels deep; a splitopt file may nest at most {MAX_DEPTH} "
                                    "levels (instances need about 8)")
        dups: list = []
        try:
            d = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_pairs_hook(dups))
        except json.JSONDecodeError as exc:
            raise InstanceError("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
        except InstanceError:
            # NaN / Infinity: parse again leniently only to name the field that holds it.
            hit = _nonfinite_path(json.loads(text))
            if hit is None:  # pragma: no cover - the strict parse found one
                raise
            raise InstanceError(hit[0], f"non-standard JSON number {hit[1]} (NaN and infinities are not allowed)") from None
        except ValueError as exc:  # e.g. an integer of more than 4,300 digits
            raise InstanceError("", f"not valid JSON: {str(exc).split(';')[0]}"[:300]) from None
        except RecursionError:  # pragma: no cover - prevented by the depth check
            raise InstanceError("", "JSON nested too deeply") from None
    except MemoryError:
        raise InstanceError("", f"out of memory while reading {len(text):,} characters of JSON") from None
    if dups:
        first = dups[0]
        path = next(p for p, v in _walk(d) if v is first)
        raise InstanceError(f"{path}.{first.duplicate}" if path else str(first.duplicate),
                            "duplicate key (each key may appear once per object; which value was meant is ambiguous)")
    return d


def loads(text: str) -> Any:
    d = parse_json(text)
    try:
        return from_envelope(d)
    except MemoryError:
        raise InstanceError("", "out of memory while building the instance") from None


def read_text_file(path: str | os.PathLike) -> str:
    """A user's text file as UTF-8; a missing or unreadable file raises :class:`InstanceError`
    naming it."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InstanceError(str(p), "no such file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InstanceError(str(p), f"cannot read: {exc}") from None


def load(path: str | os.PathLike) -> Any:
    """Load a graph, platform or instance file. Errors name the file and the field."""
    p = Path(path)
    text = read_text_file(p)  # its errors already name the file
    try:
        return loads(text)
    except InstanceError as exc:
        raise InstanceError(f"{p}: {exc.path}" if exc.path else str(p), exc.detail) from None
    except MemoryError:
        raise InstanceError(str(p), "out of memory while loading this file") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to ``path`` atomically (temporary file in the same directory, then
    rename). The file gets the mode a plain ``open()`` would give it (0666 less the user's umask),
    not the 0600 of the temporary file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        if exc.strerror is not None:
            exc.filename = str(p)  # name the user's target, not our temporary file
        raise
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w",
                       **({} if isinstance(text, bytes) else {"encoding": "utf-8"})) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.strerror is not None:
            exc.filename = str(p)  # name the user's target, not our temporary file
        raise
    return p


def save(obj: Any, path: str | os.PathLike, indent: int | None = 1) -> Path:
    """Save a graph, platform or instance atomically as versioned JSON."""
    return write_text_atomic(path, dumps(obj, indent=indent) + "\n")


__all__ = ["FORMAT_VERSION", "MAX_DEPTH", "envelope", "from_envelope", "dumps", "loads", "load", "save",
           "write_text_atomic", "read_text_file", "parse_json", "json_depth"]
