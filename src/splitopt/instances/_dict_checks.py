"""Checks shared by the families' ``from_dict`` (the JSON form of an instance): each raises
:class:`~splitopt.errors.InstanceError` naming the JSON path, with the same messages everywhere
(``layers[3].foo: unknown field``, ``parts: must be a list, got ...``, ``meta: must be an object``)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from splitopt.errors import InstanceError


def check_instance_object(d: Any, family: str, known: Iterable[str]) -> None:
    """``d`` is an object (a Mapping) whose fields are all in ``known``."""
    if not isinstance(d, Mapping):
        raise InstanceError("", f"a {family} instance must be an object, got {type(d).__name__}")
    unknown = sorted(set(d) - set(known))
    if unknown:
        raise InstanceError(unknown[0], "unknown field")


def check_lists(d: Mapping, keys: Iterable[str]) -> None:
    """Each of ``keys`` is present in ``d`` and a list."""
    for key in keys:
        if not isinstance(d.get(key), list):
            raise InstanceError(key, f"must be a list, got {d.get(key)!r}"[:200])


def check_record(path: str, rec: Any, fields: Iterable[str], required: Iterable[str] = ()) -> None:
    """``rec`` (at JSON path ``path``, e.g. ``parts[2]``) is an object with fields from ``fields``
    only and every field of ``required``."""
    if not isinstance(rec, Mapping):
        raise InstanceError(path, f"must be an object, got {rec!r}"[:200])
    bad = sorted(set(rec) - set(fields))
    if bad:
        raise InstanceError(f"{path}.{bad[0]}", "unknown field")
    for key in required:
        if key not in rec:
            raise InstanceError(f"{path}.{key}", "missing")


def meta_of(d: Mapping) -> Mapping:
    """The optional ``meta`` object (``{}`` when absent or null)."""
    meta = d.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise InstanceError("meta", f"must be an object, got {meta!r}")
    return meta


__all__ = ["check_instance_object", "check_lists", "check_record", "meta_of"]
