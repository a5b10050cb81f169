"""Versioned JSON files: round trips, atomic writes, precise errors."""

from __future__ import annotations

import json
import os

import pytest

from splitopt.errors import InstanceError
from splitopt.instances import io
from splitopt.instances.graph import DNNGraph, Edge, Layer
from splitopt.instances.platform import star, two_tier


def small_graph():
    return DNNGraph([Layer("in", op="input", out_bytes=3.0),
                     Layer("lstm", fwd_flop=5.0, out_bytes=2.0, extra_out_bytes=(1.0,), fwd_seconds={"gpu": 0.5}),
                     Layer("g", op="__getitem__", out_bytes=1.0)],
                    [("in", "lstm"), Edge("lstm", "g", 1)], name="small", meta={"source": "test"})


def test_graph_round_trip(tmp_path):
    g = small_graph()
    p = io.save(g, tmp_path / "g.json")
    raw = json.loads(p.read_text())
    assert raw["format"] == io.FORMAT_VERSION and raw["kind"] == "graph"
    g2 = io.load(p)
    assert isinstance(g2, DNNGraph) and g2 == g and g2.meta == {"source": "test"}
    assert [(e.src, e.dst, e.port) for e in g2.edges] == [("in", "lstm", 0), ("lstm", "g", 1)]


def test_platform_round_trip(tmp_path):
    for p in (two_tier(1e9, 1e12, 1e6, 2e6, device_memory_bytes=1e9), star(1e12, [1e9, 2e9], 2, 5e5)):
        q = io.load(io.save(p, tmp_path / "p.json"))
        assert q == p
    assert io.loads(io.dumps(p)) == p


def test_atomic_write_leaves_only_target(tmp_path):
    io.save(small_graph(), tmp_path / "sub" / "g.json")
    assert sorted(os.listdir(tmp_path / "sub")) == ["g.json"]


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_failed_write_keeps_old_target_and_no_temp(tmp_path, monkeypatch, fail_at):
    target = tmp_path / "g.json"
    io.save(two_tier(1, 2, 3, 4), target)
    before = target.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(io.os, fail_at, boom)
    with pytest.raises(OSError, match="disk full"):
        io.save(small_graph(), target)
    monkeypatch.undo()
    assert target.read_text() == before           # never half-written
    assert os.listdir(tmp_path) == ["g.json"]     # temp file removed
    assert isinstance(io.load(target), type(two_tier(1, 2, 3, 4)))


def test_format_and_kind_errors():
    good = json.loads(io.dumps(small_graph()))
    with pytest.raises(InstanceError) as ei:
        io.from_envelope(dict(good, format=2))
    assert ei.value.path == "format" and "2" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        io.from_envelope(dict(good, kind="spreadsheet"))
    assert ei.value.path == "kind" and "'spreadsheet'" in str(ei.value)
    with pytest.raises(InstanceError) as ei:
        io.loads("[1, 2]")
    assert "JSON object" in str(ei.value)
    with pytest.raises(InstanceError, match="not valid JSON"):
        io.loads("{\"format\": 1,")
    with pytest.raises(InstanceError) as ei:
        io.from_envelope(dict(good, kind="instance", family="no-such-family"))
    assert ei.value.path == "family"


def test_nan_and_infinity_rejected_with_path():
    d = json.loads(io.dumps(small_graph()))
    text = json.dumps(d).replace('"out_bytes": 2.0', '"out_bytes": NaN')
    assert "NaN" in text
    with pytest.raises(InstanceError) as ei:
        io.loads(text)
    assert ei.value.path == "data.layers[1].out_bytes" and "NaN" in str(ei.value).replace("nan", "NaN")
    text = json.dumps(json.loads(io.dumps(two_tier(1, 2, 3, 4)))).replace('"rate_bytes_per_s": 3', '"rate_bytes_per_s": Infinity')
    with pytest.raises(InstanceError) as ei:
        io.loads(text)
    assert ei.value.path == "data.links[0].rate_bytes_per_s"
    # Python-side: a NaN never reaches a file
    with pytest.raises(ValueError):
        json.dumps({"x": float("nan")}, allow_nan=False)


def test_field_errors_name_file_and_path(tmp_path):
    d = json.loads(io.dumps(small_graph()))
    d["data"]["layers"][2]["param_bytes"] = -3
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InstanceError) as ei:
        io.load(p)
    assert str(p) in ei.value.path and ei.value.path.endswith("data.layers[2].param_bytes")
    assert "must be >= 0, got -3" in str(ei.value)
    d = json.loads(io.dumps(two_tier(1, 2, 3, 4)))
    d["data"]["nodes"][1]["role"] = "boss"
    with pytest.raises(InstanceError) as ei:
        io.loads(json.dumps(d))
    assert ei.value.path == "data.nodes[1].role"
    with pytest.raises(InstanceError, match="no such file"):
        io.load(tmp_path / "missing.json")
