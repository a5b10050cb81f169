"""Platform: validation errors name the field; Shannon rate by hand; topologies' link counts."""

from __future__ import annotations

import math

import pytest

from splitopt.errors import InstanceError
from splitopt.instances.platform import (
    Link,
    Node,
    Platform,
    dbm_to_watt,
    line,
    mbps,
    mesh,
    shannon_rate,
    star,
    tree,
    two_tier,
)


def P(nodes, links=()):
    return Platform(tuple(nodes), tuple(links))


@pytest.mark.parametrize("nodes,links,path,fragment", [
    ([Node("a"), Node("a")], [], "nodes[1].name", "unique"),
    ([Node("")], [], "nodes[0].name", "non-empty"),
    ([Node("a", role="phone")], [], "nodes[0].role", "'phone'"),
    ([Node("a", flops=0.0)], [], "nodes[0].flops", "must be > 0"),
    ([Node("a", flops=math.nan)], [], "nodes[0].flops", "NaN"),
    ([Node("a", memory_bytes=-1.0)], [], "nodes[0].memory_bytes", ">= 0"),
    ([Node("a", speedup=0.0)], [], "nodes[0].speedup", "> 0"),
    ([Node("a"), Node("b")], [Link("a", "c", 1.0)], "links[0].dst", "'c'"),
    ([Node("a"), Node("b")], [Link("x", "b", 1.0)], "links[0].src", "'x'"),
    ([Node("a"), Node("b")], [Link("a", "a", 1.0)], "links[0]", "itself"),
    ([Node("a"), Node("b")], [Link("a", "b", 1.0), Link("a", "b", 2.0)], "links[1]", "duplicate"),
    ([Node("a"), Node("b")], [Link("a", "b", -5.0)], "links[0].rate_bytes_per_s", "-5"),
    ([Node("a"), Node("b")], [Link("a", "b", math.inf)], "links[0].rate_bytes_per_s", "finite"),
    ([Node("a"), Node("b")], [Link("a", "b", 1.0, latency_s=-1.0)], "links[0].latency_s", ">= 0"),
    ([], [], "nodes", "at least one"),
])
def test_validation_errors(nodes, links, path, fragment):
    with pytest.raises(InstanceError) as ei:
        P(nodes, links)
    assert ei.value.path == path
    assert fragment in str(ei.value)


def test_from_dict_errors_carry_prefix():
    good = two_tier(1e9, 1e12, 1e6, 2e6).to_dict()
    bad = dict(good, nodes=[dict(good["nodes"][0], gpu=True), good["nodes"][1]])
    with pytest.raises(InstanceError) as ei:
        Platform.from_dict(bad)
    assert ei.value.path == "platform.nodes[0].gpu"
    bad = dict(good, links=[{"src": "device", "dst": "server"}])
    with pytest.raises(InstanceError) as ei:
        Platform.from_dict(bad)
    assert ei.value.path == "platform.links[0].rate_bytes_per_s"
    bad = dict(good, links=[{"src": "device", "dst": "server", "rate_bytes_per_s": 0}])
    with pytest.raises(InstanceError) as ei:
        Platform.from_dict(bad, path="data")
    assert ei.value.path == "data.links[0].rate_bytes_per_s"


def test_round_trip_and_lookup():
    p = two_tier(1e9, 1e12, 1e6, 2e6, device_memory_bytes=4e9)
    q = Platform.from_dict(p.to_dict())
    assert q == p
    assert q.rate("device", "server") == 1e6 and q.rate("server", "device") == 2e6
    assert q.node("device").memory_bytes == 4e9 and math.isinf(q.node("server").memory_bytes)
    assert q.link("device", "device") is None
    with pytest.raises(InstanceError):
        q.rate("server", "nowhere")


def test_unit_helpers():
    assert mbps(8.0) == 1e6            # 8 Mbit/s = 1 MB/s
    assert dbm_to_watt(30.0) == 1.0    # 30 dBm = 1 W
    assert dbm_to_watt(0.0) == pytest.approx(1e-3)
    assert dbm_to_watt(-174.0) == pytest.approx(10 ** -20.4)


def test_shannon_rate_by_hand():
    # W = 1 MHz, p = 0.1 W, d = 100 m, gamma = 3, N0 = -174 dBm/Hz = 10^-20.4 W/Hz.
    # SNR = 0.1 * 100^-3 / (10^-20.4 * 1e6) = 1e-7 / 10^-14.4 = 10^7.4
    # rate = 1e6 * log2(1 + 10^7.4) / 8 ~= 1e6 * 7.4 * 3.3219280949 / 8 = 3,072,783.5 B/s
    r = shannon_rate(1e6, 0.1, 100.0, 3.0, dbm_to_watt(-174.0))
    assert r == pytest.approx(3_072_783.5, rel=1e-6)
    # doubling bandwidth at the same total noise PSD: 2W log2(1 + SNR/2) / 8
    r2 = shannon_rate(2e6, 0.1, 100.0, 3.0, dbm_to_watt(-174.0))
    assert r2 == pytest.approx(2e6 * (7.4 * math.log2(10) - 1.0) / 8, rel=1e-6)
    with pytest.raises(InstanceError) as ei:
        shannon_rate(0.0, 0.1, 100.0, 3.0, 1e-20)
    assert ei.value.path == "bandwidth_hz"
    with pytest.raises(InstanceError) as ei:
        shannon_rate(1e6, 0.1, math.nan, 3.0, 1e-20)
    assert ei.value.path == "distance_m"


def test_topology_link_counts():
    assert len(two_tier(1, 1, 1, 1).links) == 2
    assert len(line(4, 1e9, 1e6).links) == 6                       # 3 hops, both ways
    assert len(line(4, 1e9, 1e6, bidirectional=False).links) == 3
    p = line(["a", "b", "c"], [1.0, 2.0, 3.0], [10.0, 20.0])
    assert p.rate("b", "c") == 20.0 and p.rate("c", "b") == 20.0 and p.node("c").flops == 3.0
    assert len(mesh(4, 1e9, 1e6).links) == 4 * 3                   # ordered pairs
    s = star(1e12, 1e9, 5, 1e6)
    assert len(s.nodes) == 6 and len(s.links) == 10
    t = tree(2, 2, 1e9, 1e6)                                       # 1 + 2 + 4 nodes, 6 tree edges
    assert len(t.nodes) == 7 and len(t.links) == 12
    assert t.link("t.0", "t.0.1") is not None and t.link("t.0", "t.1") is None
