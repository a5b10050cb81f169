"""Dynamic re-splitting vs. OSS vs. device-only (seed 000 Sec. VII-B, Figs. 12-13)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from splitopt.errors import InstanceError
from splitopt.instances.graph import chain
from splitopt.instances.split import SplitInstance, generate
from splitopt.solvers.split import bruteforce
from splitopt.solvers.split.dynamic import NETWORKS, compare, epoch_instances, optimal_static_split, rate_trace


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12


def hand_instance() -> SplitInstance:
    """Chain in -> a -> b; bytes in 4, a 2; (device, server) seconds: a (1, 0), b (10, 0); N = 1.

    With up = down = r, a byte costs 2 / r. Device sets: S0 = {in}: 8/r; S1 = {in, a}: 1 + 4/r;
    S2 = {in, a, b}: 11.
    """
    g = chain([{"out_bytes": 4.0}, {"out_bytes": 2.0}, {"out_bytes": 1.0}])
    return SplitInstance(graph=g, device_s=[0.0, 1.0, 10.0], server_s=[0.0, 0.0, 0.0], up_bytes_per_s=1.0)


def test_hand_computed_case():
    # r = 8: S0 1, S1 1.5, S2 11 -> 1;  r = 2: 4, 3, 11 -> 3;  r = 0.25: 32, 17, 11 -> 11.
    # dynamic = 15; OSS = S1 = 1.5 + 3 + 17 = 21.5; device-only = 33; server-only = 37.
    res = compare(hand_instance(), [(8.0, 8.0), (2.0, 2.0), (0.25, 0.25)])
    df = res.per_epoch
    assert np.allclose(df["dynamic_s"], [1.0, 3.0, 11.0])
    assert np.allclose(df["oss_s"], [1.5, 3.0, 17.0])
    assert np.allclose(df["device_only_s"], [11.0, 11.0, 11.0])
    assert list(df["dynamic_device_layers"]) == [1, 2, 3]
    assert list(df["dynamic_changed"]) == [False, True, True]
    assert res.oss_device == ["l0", "l1"]
    assert close(res.totals["dynamic"], 15.0) and close(res.totals["oss"], 21.5)
    assert close(res.totals["device_only"], 33.0) and close(res.totals["server_only"], 37.0)
    assert close(res.reduction_pct["oss"], 100 * 6.5 / 21.5)
    assert close(res.reduction_pct["device_only"], 100 * 18 / 33)
    assert close(res.summary().loc["oss", "total_s"], 21.5)


@pytest.mark.parametrize("seed", range(8))
def test_oss_is_the_brute_force_optimum_of_summed_costs(seed):
    rng = np.random.default_rng(seed)
    inst = generate(seed, kind=("layered_dag", "residual_stack")[seed % 2], n=9 if seed % 2 == 0 else 4,
                    iterations=5)
    trace = [(float(u), float(d)) for u, d in rng.uniform(2e5, 5e7, (5, 2))]
    insts = epoch_instances(inst, trace)
    summed: dict[int, float] = {}
    for e_inst in insts:
        for cost, mask in bruteforce.enumerate_splits(e_inst):
            summed[mask] = summed.get(mask, 0.0) + cost
    best = min(summed.values())
    names, total = optimal_static_split(insts)
    assert close(total, best)
    res = compare(inst, trace)
    assert close(res.totals["oss"], best)
    # dynamic <= OSS <= device-only, in total and (dynamic vs OSS) per epoch
    assert res.totals["dynamic"] <= res.totals["oss"] * (1 + 1e-12)
    assert res.totals["oss"] <= res.totals["device_only"] * (1 + 1e-12)
    assert (res.per_epoch["dynamic_s"] <= res.per_epoch["oss_s"] * (1 + 1e-12)).all()
    # each epoch's dynamic split is that epoch's brute-force optimum
    for e_inst, dyn in zip(insts, res.per_epoch["dynamic_s"]):
        assert close(dyn, bruteforce.solve_detailed(e_inst)[0])


def test_device_speed_scales_device_seconds():
    # hand instance at r = 2 with a device twice as fast: S2 = 0.5 + 5 = 5.5, S1 = 0.5 + 2 = 2.5
    res = compare(hand_instance(), [(2.0, 2.0)], device_speed=[2.0])
    assert close(res.totals["dynamic"], 2.5)
    assert close(res.totals["device_only"], 5.5)


def _independent_rate(net: str, d: float, chi: float, uplink: bool) -> float:
    p = NETWORKS[net]
    tx_dbm = p["device_dbm"] if uplink else p["eirp_dbm"] - 10 * math.log10(p["beams"])
    pl_db = 32.5 + 20 * math.log10(p["carrier_ghz"]) + 10 * p["eta"] * math.log10(d) + chi   # Eq. 26
    noise_dbm = -174 + p["noise_figure_db"] + 10 * math.log10(p["bandwidth_hz"])
    snr = 10 ** ((tx_dbm - pl_db - noise_dbm) / 10)
    return p["bandwidth_hz"] * math.log2(1 + snr) / 8


@pytest.mark.parametrize("net", ["mmwave", "sub6"])
def test_rate_trace_follows_eq_26(net):
    tr = rate_trace(3, 40, net, "normal")
    assert tr.equals(rate_trace(3, 40, net, "normal"))          # seeded
    assert not tr.equals(rate_trace(4, 40, net, "normal"))
    assert list(tr["device"][:22]) == list(range(20)) + [0, 1]    # round-robin over 20 devices
    p = NETWORKS[net]
    assert tr["distance_m"].between(p["d_min_m"], p["d_max_m"]).all()
    for row in tr.itertuples():
        assert close(row.up_bytes_per_s, _independent_rate(net, row.distance_m, row.shadowing_db, True), 1e-9)


def test_rate_trace_device_moves_at_30_kmh():
    tr = rate_trace(0, 41, "sub6", "good", devices=20, epoch_seconds=1.0)
    # device 0 is selected at epochs 0, 20, 40: 20 s apart at 30 km/h = 166.67 m, unless it reflects
    d = tr[tr["device"] == 0]["distance_m"].to_numpy()
    steps = np.abs(np.diff(d))
    assert np.all(steps <= 20 * 30 / 3.6 + 1e-9)
    assert np.any(np.isclose(steps, 20 * 30 / 3.6))


def test_channel_states_set_the_shadowing_spread():
    for ch, sigma in (("good", 2.0), ("poor", 6.0)):
        s = rate_trace(1, 3000, "mmwave", ch)["shadowing_db"].std()
        assert abs(s - sigma) < 0.1 * sigma


def test_bad_input():
    with pytest.raises(InstanceError, match=r"trace\[1\]\.up_bytes_per_s"):
        compare(hand_instance(), [(1.0, 1.0), (-2.0, 1.0)])
    with pytest.raises(InstanceError, match="network"):
        rate_trace(0, 5, "lte")
    with pytest.raises(InstanceError, match="channel"):
        rate_trace(0, 5, "mmwave", "bad")
    with pytest.raises(InstanceError, match="device_speed"):
        compare(hand_instance(), [(1.0, 1.0)], device_speed=[1.0, 2.0])
