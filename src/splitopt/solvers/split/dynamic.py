"""Dynamic networks: re-splitting every epoch vs. the optimal static split (seed 000 Sec. VII-B).

Seed 000 decides the split again in every training epoch, for the device selected in that epoch
(round-robin) and the current channel (digest 000 §1.1, §5.2), and compares the summed training
delay against

* **OSS** (optimal static splitting, ref. [13] of the paper): the best *single* device set used in
  every epoch of the trace;
* **device-only**: every layer on the device (the server only relays data);
* (server-only is reported as well; the paper lists "central" but gives no number).

Figs. 12-13 report the reduction ``(baseline - dynamic) / baseline`` in %. :func:`compare` returns
the same table per epoch and in total, for any trace of ``(uplink, downlink)`` rates.

**OSS is one min cut, exactly** (mine). The cost of a device set ``D`` in epoch ``e`` is
``T_e(D) = sum_{v in D} dev_{e,v} + sum_{v not in D} srv_{e,v} + sum_t w_{e,t} [p_t in D, some consumer
of t not in D] (+ w_{e,in} [an input layer not in D])`` (digest 000 §2.4), where only the
coefficients depend on ``e`` and the indicators depend on ``D`` alone; feasibility (closure, pins)
does not depend on ``e``. Hence ``sum_e T_e(D)`` is the same function with summed coefficients
``sum_e dev_{e,v}``, ``sum_e srv_{e,v}``, ``sum_e w_{e,t}``: a split cost of the same graph, which the
certified min cut of :mod:`splitopt.solvers.split.mincut` minimises exactly. Every epoch's optimum is at
most its cost under the OSS set, and the OSS set is one candidate among the feasible sets that
include device-only, so ``dynamic <= OSS <= device-only`` in total (and ``dynamic_e <= OSS_e`` per
epoch); the tests check this and the OSS optimum by brute force.

:func:`rate_trace` is a seeded stand-in for the paper's simulator, whose radio parameters are
largely unstated (digest 000 §5.2: no ``f``, ``d``, ``eta``, bandwidth, noise figure, device power,
trajectory): the path loss is the paper's Eq. 26, ``PL = 32.5 + 20 log10(f_GHz) + 10 eta log10(d) + chi``
with ``chi ~ N(0, sigma^2)`` and ``sigma`` = 2 / 4 / 6 dB for good / normal / poor channels; the
downlink power is ``P = P_e - 10 log10(beams)`` with the paper's EIRP and beam counts (mmWave n257:
50 dBm, 64 beams; sub-6GHz n1: 40 dBm, 16 beams); the rate is Shannon's
(:func:`splitopt.instances.platform.shannon_rate`) instead of the CQI->MCS table of TS 38.214.
The carrier, bandwidth, path-loss exponent, noise figure, device power (23 dBm, the 3GPP UE
maximum) and distances are our assumptions, listed in :data:`NETWORKS`. Devices move at 30 km/h
(the paper's speed) back and forth along a straight road segment, and one device per epoch is
selected round-robin among ``devices`` (20 in the paper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from splitopt.errors import InstanceError, check_number
from splitopt.instances.platform import dbm_to_watt, shannon_rate
from splitopt.instances.split import SplitInstance

#: Radio profiles. ``eirp_dbm`` and ``beams`` are the paper's (Sec. VII-B1); the rest are assumptions.
NETWORKS: dict[str, dict[str, float]] = {
    "mmwave": {"carrier_ghz": 28.0, "bandwidth_hz": 200e6, "eirp_dbm": 50.0, "beams": 64,
               "device_dbm": 23.0, "eta": 2.1, "noise_figure_db": 9.0, "d_min_m": 10.0, "d_max_m": 150.0},
    "sub6": {"carrier_ghz": 2.1, "bandwidth_hz": 20e6, "eirp_dbm": 40.0, "beams": 16,
             "device_dbm": 23.0, "eta": 3.0, "noise_figure_db": 7.0, "d_min_m": 20.0, "d_max_m": 400.0},
}
#: Shadowing standard deviation in dB per channel state (seed 000 Sec. VII-B2).
CHANNELS: dict[str, float] = {"good": 2.0, "normal": 4.0, "poor": 6.0}
NOISE_DBM_PER_HZ = -174.0


def link_rate(network: str, distance_m: float, shadowing_db: float, *, uplink: bool) -> float:
    """Shannon rate in bytes/s of one link under :data:`NETWORKS` ``[network]`` (Eq. 26 path loss)."""
    p = NETWORKS[network]
    tx_dbm = p["device_dbm"] if uplink else p["eirp_dbm"] - 10.0 * math.log10(p["beams"])
    # Eq. 26 without the distance term; the distance term d^-eta is applied by shannon_rate
    fixed_db = 32.5 + 20.0 * math.log10(p["carrier_ghz"]) + shadowing_db
    n0 = dbm_to_watt(NOISE_DBM_PER_HZ + p["noise_figure_db"])
    return shannon_rate(p["bandwidth_hz"], dbm_to_watt(tx_dbm - fixed_db), distance_m, p["eta"], n0)


def rate_trace(seed: int, epochs: int, network: str = "mmwave", channel: str = "normal", *, devices: int = 20,
               epoch_seconds: float = 60.0, speed_kmh: float = 30.0):
    """A seeded trace of per-epoch ``(uplink, downlink)`` rates, as a pandas DataFrame.

    Columns: ``epoch``, ``device`` (round-robin), ``distance_m``, ``shadowing_db``,
    ``up_bytes_per_s``, ``down_bytes_per_s``. Device ``k`` starts at a uniform position in
    ``[d_min, d_max]`` with a random direction and moves at ``speed_kmh``, reflecting at the ends;
    the shadowing of each epoch is drawn from ``N(0, sigma^2)`` (independently for up- and
    downlink: ``shadowing_db`` reports the uplink one). Identical on every machine for a seed.
    """
    import pandas as pd

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InstanceError("seed", f"must be a non-negative integer, got {seed!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 1:
        raise InstanceError("epochs", f"must be an integer >= 1, got {epochs!r}")
    if network not in NETWORKS:
        raise InstanceError("network", f"must be one of {', '.join(NETWORKS)}, got {network!r}")
    if channel not in CHANNELS:
        raise InstanceError("channel", f"must be one of {', '.join(CHANNELS)}, got {channel!r}")
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or devices < 1:
        raise InstanceError("devices", f"must be an integer >= 1, got {devices!r}")
    check_number("epoch_seconds", epoch_seconds, minimum=0.0, strict=True)
    check_number("speed_kmh", speed_kmh, minimum=0.0)
    p = NETWORKS[network]
    sigma = CHANNELS[channel]
    rng = np.random.default_rng([int(seed), 7])
    lo, hi = p["d_min_m"], p["d_max_m"]
    start = rng.uniform(lo, hi, devices)
    direction = rng.choice([-1.0, 1.0], devices)
    shadow = rng.normal(0.0, sigma, (int(epochs), 2))
    speed = speed_kmh / 3.6
    rows = []
    span = hi - lo
    for e in range(int(epochs)):
        k = e % devices
        # position on the segment, reflecting at both ends (triangle wave)
        s = (start[k] - lo + direction[k] * speed * e * epoch_seconds) % (2.0 * span)
        d = lo + (s if s <= span else 2.0 * span - s)
        rows.append({"epoch": e, "device": k, "distance_m": float(d), "shadowing_db": float(shadow[e, 0]),
                     "up_bytes_per_s": link_rate(network, d, float(shadow[e, 0]), uplink=True),
                     "down_bytes_per_s": link_rate(network, d, float(shadow[e, 1]), uplink=False)})
    return pd.DataFrame(rows)


def _as_pairs(trace) -> list[tuple[float, float]]:
    if hasattr(trace, "to_dict") and hasattr(trace, "columns"):
        for col in ("up_bytes_per_s", "down_bytes_per_s"):
            if col not in trace.columns:
                raise InstanceError(f"trace.{col}", "missing column")
        pairs = list(zip(trace["up_bytes_per_s"].tolist(), trace["down_bytes_per_s"].tolist()))
    else:
        pairs = list(trace)
    if not pairs:
        raise InstanceError("trace", "needs at least one epoch")
    out = []
    for i, pr in enumerate(pairs):
        if not isinstance(pr, (tuple, list)) or len(pr) != 2:
            raise InstanceError(f"trace[{i}]", f"must be (up_bytes_per_s, down_bytes_per_s), got {pr!r}")
        out.append((check_number(f"trace[{i}].up_bytes_per_s", pr[0], minimum=0.0, strict=True),
                    check_number(f"trace[{i}].down_bytes_per_s", pr[1], minimum=0.0, strict=True)))
    return out


def epoch_instances(instance: SplitInstance, trace, device_speed: Sequence[float] | None = None
                    ) -> list[SplitInstance]:
    """One instance per epoch: ``instance`` with the epoch's rates (and, if ``device_speed`` is
    given, device seconds divided by that epoch's device speed factor, for heterogeneous devices)."""
    pairs = _as_pairs(trace)
    if device_speed is not None:
        device_speed = list(device_speed)
        if len(device_speed) != len(pairs):
            raise InstanceError("device_speed", f"has {len(device_speed)} entries but the trace has {len(pairs)} epochs")
        device_speed = [check_number(f"device_speed[{i}]", s, minimum=0.0, strict=True)
                        for i, s in enumerate(device_speed)]
    base_dev = np.asarray(instance.device_s, dtype=float)
    out = []
    for i, (up, down) in enumerate(pairs):
        ch = {"up_bytes_per_s": up, "down_bytes_per_s": down}
        if device_speed is not None:
            ch["device_s"] = tuple((base_dev / device_speed[i]).tolist())
        out.append(instance.replace(**ch))
    return out


def optimal_static_split(instances: Sequence[SplitInstance]) -> tuple[list[str], float]:
    """OSS: the device set minimising the summed cost over ``instances`` (same graph and pins),
    by one certified min cut on the summed coefficients (see the module docstring). Returns the
    device-side names and the summed evaluator cost."""
    from splitopt.models.split import evaluate
    from splitopt.solvers.flow import CutProblem, min_cut
    from splitopt.solvers.split.mincut import cut_problem

    if not instances:
        raise InstanceError("instances", "needs at least one epoch")
    probs = [cut_problem(inst) for inst in instances]
    p0 = probs[0]
    g0 = instances[0].graph
    for i, (inst, pr) in enumerate(zip(instances, probs)):
        if inst.graph is not g0 and inst.graph != g0:
            raise InstanceError(f"instances[{i}].graph", "all epochs must split the same DNN graph")
        if len(pr.tensors) != len(p0.tensors) or not np.array_equal(pr.force_dev, p0.force_dev) \
                or not np.array_equal(pr.force_srv, p0.force_srv):
            raise InstanceError(f"instances[{i}]", "all epochs must have the same pins and input policy")
    dev = np.sum([pr.dev for pr in probs], axis=0)
    srv = np.sum([pr.srv for pr in probs], axis=0)
    tensors = [(p, cons, math.fsum(pr.tensors[k][2] for pr in probs)) for k, (p, cons, _w) in enumerate(p0.tensors)]
    summed = CutProblem(p0.n, dev, srv, tensors, p0.closure, p0.force_dev, p0.force_srv, True)
    res = min_cut(summed)
    names = instances[0].names_of(res.mask)
    total = math.fsum(evaluate(inst, names)[0] for inst in instances)
    return names, total


@dataclass
class DynamicComparison:
    """Result of :func:`compare`: ``per_epoch`` (DataFrame), ``totals`` (seconds per strategy),
    ``reduction_pct`` (dynamic vs each baseline, in %), ``oss_device`` (names of the OSS set)."""

    per_epoch: object
    totals: dict[str, float]
    reduction_pct: dict[str, float]
    oss_device: list[str]
    info: dict = field(default_factory=dict)

    def summary(self):
        """One-row-per-strategy DataFrame: total seconds and the reduction achieved by re-splitting."""
        import pandas as pd

        rows = [{"strategy": k, "total_s": v, "dynamic_reduction_pct": self.reduction_pct.get(k, 0.0)}
                for k, v in self.totals.items()]
        return pd.DataFrame(rows).set_index("strategy")


def compare(instance: SplitInstance, trace, *, algorithm: str = "mincut",
            device_speed: Sequence[float] | None = None) -> DynamicComparison:
    """Re-split every epoch (``algorithm``, exact by default) vs. OSS vs. device-only vs.
    server-only over ``trace`` (a :func:`rate_trace` DataFrame or a list of ``(up, down)`` bytes/s).

    All costs come from the family evaluator. ``per_epoch`` columns: ``epoch``,
    ``up_bytes_per_s``, ``down_bytes_per_s``, ``dynamic_s``, ``oss_s``, ``device_only_s``,
    ``server_only_s``, ``dynamic_device_layers`` (size of the epoch's device set),
    ``dynamic_changed`` (the device set differs from the previous epoch's).
    """
    import pandas as pd

    from splitopt.families import solve
    from splitopt.models.split import evaluate
    from splitopt.solvers.split.baselines import device_only, server_only

    insts = epoch_instances(instance, trace, device_speed)
    oss_names, _ = optimal_static_split(insts)
    rows = []
    prev = None
    for e, inst in enumerate(insts):
        sol = solve(inst, algorithm)
        dev_set = sorted(sol.assignment)
        rows.append({
            "epoch": e, "up_bytes_per_s": inst.up_bytes_per_s, "down_bytes_per_s": inst.down_bytes_per_s,
            "dynamic_s": sol.objective,
            "oss_s": evaluate(inst, oss_names)[0],
            "device_only_s": evaluate(inst, device_only(inst))[0],
            "server_only_s": evaluate(inst, server_only(inst))[0],
            "dynamic_device_layers": len(dev_set),
            "dynamic_changed": prev is not None and dev_set != prev,
        })
        prev = dev_set
    df = pd.DataFrame(rows)
    totals = {"dynamic": math.fsum(df["dynamic_s"]), "oss": math.fsum(df["oss_s"]),
              "device_only": math.fsum(df["device_only_s"]), "server_only": math.fsum(df["server_only_s"])}
    red = {k: (100.0 * (v - totals["dynamic"]) / v if v > 0 else 0.0) for k, v in totals.items() if k != "dynamic"}
    return DynamicComparison(df, totals, red, oss_names, {"algorithm": algorithm, "epochs": len(insts)})


__all__ = ["NETWORKS", "CHANNELS", "link_rate", "rate_trace", "epoch_instances", "optimal_static_split",
           "compare", "DynamicComparison"]
