"""Seeded generators and layer profiles of the ``pipeline`` family (seed 001, Wei et al.,
arXiv:2505.04368; digest ``papers/001-pipelined-split-learning.md``): Table II platforms
(:func:`table2_platform`, Shannon rates with the corrections of digest §7.1 #2), the VGG-16/CIFAR
and TinyLlama layer profiles, random profiles, and :func:`generate` / :func:`profile_instance`.

Split from :mod:`splitopt.instances.pipeline` (issue 22 §5), which holds the instance data alone
and does not import this module or the evaluator; the memory that keeps a reference plan feasible
(:func:`_feasible_memory`) uses the evaluator's memory functions, so it lives here. The old names
``splitopt.instances.pipeline.generate`` etc. still resolve (lazily) for existing code.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from splitopt.errors import InstanceError
from splitopt.instances.pipeline import GAMMA, NOISE_DBM_PER_HZ, PipelineInstance, _check_int
from splitopt.models.pipeline import block_memory, client_memory


# ---------------------------------------------------------------------- radio (Table II)
def dbm_to_watt(dbm: float) -> float:
    return 10.0 ** (dbm / 10.0) / 1000.0


def shannon_rates(positions_m: Sequence[Sequence[float]], bandwidth_hz: Sequence[Sequence[float]],
                  power_w: Sequence[float], gamma: float = GAMMA, noise_dbm_per_hz: float = NOISE_DBM_PER_HZ,
                  min_distance_m: float = 1.0) -> tuple[tuple[float, ...], ...]:
    """Link rates in **bytes/s**: Eq. (4) corrected (digest §7.1 #2),
    ``r_uv = W_uv log2(1 + p_u d_uv^-gamma / (N0 W_uv)) / 8`` with ``N0`` the noise spectral density
    (Table II: -174 dBm/Hz) and ``d`` at least ``min_distance_m`` (Table II: 1 m). ``W = 0`` means no
    link (rate 0)."""
    n0 = dbm_to_watt(noise_dbm_per_hz)
    pos = np.asarray(positions_m, dtype=float)
    V = len(pos)
    out = []
    for u in range(V):
        row = []
        for v in range(V):
            W = float(bandwidth_hz[u][v])
            if u == v or W <= 0:
                row.append(0.0)
                continue
            d = max(float(np.hypot(*(pos[u] - pos[v]))), min_distance_m)
            snr = power_w[u] * d ** (-gamma) / (n0 * W)
            row.append(W * math.log2(1.0 + snr) / 8.0)
        out.append(tuple(row))
    return tuple(out)


def table2_platform(rng: np.random.Generator, n_clients: int, n_servers: int, *, band: str = "sub6",
                    side_m: float = 500.0, flops_range=(1e12, 10e12), memory_range_gb=(2.0, 16.0),
                    power_range_w=(0.1, 0.5)) -> dict[str, Any]:
    """A platform drawn with Table II's parameters: nodes uniform in a ``side_m`` square, per
    unordered pair a bandwidth uniform over 10-50 MHz (``band="sub6"``) or 100-200 MHz
    (``"mmwave"``), per node a transmit power over 100-500 mW, a rate over 1-10 TFLOP/s and a
    memory over 2-16 GB (1e9 bytes); ``gamma`` 3.5, ``N0`` -174 dBm/Hz. Returns the instance keyword
    arguments (``client_flops``, ..., ``rates``, ``radio``)."""
    bands = {"sub6": (10e6, 50e6), "mmwave": (100e6, 200e6)}
    if band not in bands:
        raise InstanceError("band", f"must be sub6 or mmwave, got {band!r}")
    V = n_clients + n_servers
    pos = rng.uniform(0.0, side_m, size=(V, 2))
    lo, hi = bands[band]
    W = np.zeros((V, V))
    for u in range(V):
        for v in range(u + 1, V):
            W[u, v] = W[v, u] = rng.uniform(lo, hi)
    for u in range(n_clients):  # clients do not talk to each other
        for v in range(n_clients):
            W[u, v] = 0.0
    p = rng.uniform(*power_range_w, size=V)
    flops = rng.uniform(*flops_range, size=V)
    mem = rng.uniform(*memory_range_gb, size=V) * 1e9
    radio = {"positions_m": pos.round(3).tolist(), "bandwidth_hz": W.round(0).tolist(), "power_w": p.round(4).tolist(),
             "gamma": GAMMA, "noise_dbm_per_hz": NOISE_DBM_PER_HZ}
    rates = shannon_rates(radio["positions_m"], radio["bandwidth_hz"], radio["power_w"])
    return {"client_flops": tuple(float(x) for x in flops[:n_clients]),
            "client_memory_bytes": tuple(float(x) for x in mem[:n_clients]),
            "server_flops": tuple(float(x) for x in flops[n_clients:]),
            "server_memory_bytes": tuple(float(x) for x in mem[n_clients:]), "rates": rates, "radio": radio}


# ---------------------------------------------------------------------- layer profiles
#: VGG-16 convolution widths with "M" = a 2x2 max-pool merged into the preceding convolution
VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def vgg16_cifar(optimizer: str = "sgd", dtype_bytes: int = 4) -> dict[str, list]:
    """VGG-16 on CIFAR-10 (32x32x3), the default profile of digest §10 (not in the paper):
    13 3x3 convolutions (pad 1), each max-pool merged into the preceding convolution, classifier
    512-512-512-10, so ``I = 16``; FP FLOP = 2 x MACs per sample (pooling and activations not
    counted), BP = 2 x FP, activations fp32 after pooling, gradients the same size, parameters
    ``dtype_bytes`` each; optimizer state ``0`` (``sgd``), ``1 x`` (``momentum``) or ``2 x``
    (``adam``) the parameters. Totals: 15,245,130 parameters, about 0.627 GFLOP FP per sample."""
    mult = {"sgd": 0, "momentum": 1, "adam": 2}
    if optimizer not in mult:
        raise InstanceError("optimizer", f"must be sgd, momentum or adam, got {optimizer!r}")
    names, fwd, act, params = [], [], [], []
    h, c = 32, 3
    cfg = list(VGG16_CFG)
    for j, w in enumerate(cfg):
        if w == "M":
            continue
        pooled = j + 1 < len(cfg) and cfg[j + 1] == "M"
        fwd.append(2.0 * h * h * c * w * 9)
        params.append(c * w * 9 + w)
        c = w
        if pooled:
            h //= 2
        act.append(float(h * h * c))
        names.append(f"conv{len(names) + 1}")
    for k, (fi, fo) in enumerate(((512, 512), (512, 512), (512, 10))):
        fwd.append(2.0 * fi * fo)
        params.append(fi * fo + fo)
        act.append(float(fo))
        names.append(f"fc{k + 1}")
    act_b = [a * 4.0 for a in act]
    pb = [float(p * dtype_bytes) for p in params]
    return {"names": names, "fwd_flop": fwd, "bwd_flop": [2.0 * f for f in fwd], "act_bytes": act_b,
            "grad_bytes": list(act_b), "param_bytes": pb, "opt_bytes": [mult[optimizer] * p for p in pb],
            "sample_mem_bytes": [2.0 * a for a in act_b], "params": [float(p) for p in params]}


#: TinyLlama-1.1B configuration (HF ``TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T``,
#: ``config.json``): LlamaForCausalLM, untied embeddings
TINYLLAMA_CONFIG = {"hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 32,
                    "num_key_value_heads": 4, "vocab_size": 32000, "num_hidden_layers": 22,
                    "tie_word_embeddings": False}


def tinyllama_chain(seq_len: int = 512, dtype_bytes: int = 2, optimizer: str = "adam") -> dict[str, list]:
    """TinyLlama-1.1B as a chain of its 22 decoder blocks (the paper's motivating model, §I), from
    the published configuration :data:`TINYLLAMA_CONFIG` (hidden 2048, intermediate 5632, 32
    attention heads, 4 key-value heads, vocabulary 32000, 22 layers, untied embeddings; RMSNorm
    weights only, no biases). The token embedding is merged into block 1, the final norm and the
    LM head into block 22, so the parameter total is exact: 1,100,048,384.

    Per sample (one sequence of ``seq_len`` tokens): FP FLOP = 2 x parameters of the matrix
    products per token plus ``4 seq_len hidden`` per token for attention scores and values (no
    causal halving), BP = 2 x FP; the activation crossing a cut is the hidden state
    (``seq_len x hidden x dtype_bytes``), its gradient the same size; optimizer state 2 x the
    parameters (Adam) by default."""
    cfg = TINYLLAMA_CONFIG
    d, ff, H, KV, V, L = (cfg[k] for k in ("hidden_size", "intermediate_size", "num_attention_heads",
                                            "num_key_value_heads", "vocab_size", "num_hidden_layers"))
    mult = {"sgd": 0, "momentum": 1, "adam": 2}
    if optimizer not in mult:
        raise InstanceError("optimizer", f"must be sgd, momentum or adam, got {optimizer!r}")
    seq = _check_int("seq_len", seq_len, 1)
    kv = d // H * KV
    matmul = d * d + 2 * d * kv + d * d + 3 * d * ff  # q, k, v, o, gate, up, down
    block = matmul + 2 * d  # two RMSNorm weight vectors
    names, params, fwd, act = [], [], [], []
    for k in range(L):
        p, f = block, 2.0 * matmul * seq + 4.0 * seq * seq * d
        out = seq * d * dtype_bytes
        if k == 0:
            p += V * d  # embedding lookup: no FLOP
        if k == L - 1:
            p += d + V * d  # final norm + LM head
            f += 2.0 * d * V * seq
            out = seq * V * dtype_bytes  # logits (never crosses a cut)
        names.append(f"block{k + 1}")
        params.append(float(p))
        fwd.append(f)
        act.append(float(out))
    pb = [p * dtype_bytes for p in params]
    return {"names": names, "fwd_flop": fwd, "bwd_flop": [2.0 * f for f in fwd], "act_bytes": act,
            "grad_bytes": list(act), "param_bytes": pb, "opt_bytes": [mult[optimizer] * p for p in pb],
            "sample_mem_bytes": [2.0 * a for a in act], "params": params}


PROFILES = {"vgg16-cifar": vgg16_cifar, "tinyllama": tinyllama_chain}


def random_profile(rng: np.random.Generator, n_layers: int) -> dict[str, list]:
    """A random chain: FP FLOP per sample log-uniform over 1e6..1e9, BP 1-3 x FP, activations
    log-uniform over 1e3..1e6 bytes (gradients the same size), parameters over 1e3..1e7 bytes."""
    fwd = [float(10 ** rng.uniform(6, 9)) for _ in range(n_layers)]
    bwd = [f * float(rng.uniform(1, 3)) for f in fwd]
    act = [float(10 ** rng.uniform(3, 6)) for _ in range(n_layers)]
    par = [float(10 ** rng.uniform(3, 7)) for _ in range(n_layers)]
    return {"names": [f"L{i}" for i in range(n_layers)], "fwd_flop": fwd, "bwd_flop": bwd, "act_bytes": act,
            "grad_bytes": list(act), "param_bytes": par, "opt_bytes": [0.0] * n_layers,
            "sample_mem_bytes": [2.0 * a for a in act]}


def profile_instance(profile: str | Mapping, *, n_clients: int = 5, n_servers: int = 6, seed: int = 0,
                     band: str = "sub6", **kw) -> PipelineInstance:
    """A named profile (``"vgg16-cifar"``, ``"tinyllama"``) or a profile mapping on a Table II
    platform drawn from ``seed`` (``B = 512`` unless given)."""
    if isinstance(profile, str):
        if profile not in PROFILES:
            raise InstanceError("profile", f"must be one of {', '.join(PROFILES)}, got {profile!r}")
        kw.setdefault("name", f"{profile}-M{n_clients}-N{n_servers}-s{seed}")
        profile = PROFILES[profile]()
    else:
        kw.setdefault("name", f"profile-M{n_clients}-N{n_servers}-s{seed}")
    rng = np.random.default_rng([seed, 1001])
    plat = table2_platform(rng, n_clients, n_servers, band=band)
    return PipelineInstance.from_profile(profile, **plat, **kw)


# ---------------------------------------------------------------------- seeded generator
def generate(seed: int, n_layers: int = 5, n_servers: int = 3, n_clients: int = 2, batch: int | None = None,
             b: int | str | None = None, tight_memory: bool | None = None, band: str | None = None,
             profile: str | None = None, graph=None, **options) -> PipelineInstance:
    """A seeded random instance on a Table II platform (:func:`table2_platform`).

    Layers: :func:`random_profile` (or a named ``profile``: ``vgg16-cifar``, ``tinyllama``).
    ``batch`` (``B``) default: drawn from 16..128 (512 for a named profile). ``b``: ``None`` keeps
    every ``b`` in ``1..B`` allowed, an integer allows only that one, ``"draw"`` allows one drawn
    ``b``. ``tight_memory`` (drawn when ``None``): server and client memories are set between 0.6
    and 3 times the memory of an even share of the chain at the largest allowed ``b``, so that the
    memory rows bind. ``band`` (``sub6``/``mmwave``) drawn when ``None``. Other keyword arguments
    are instance fields (``placement="revisit"``, ``topology="star"``, ...). Compute and link
    times are brought to the same order of magnitude by scaling the link rates (the raw Table II
    magnitudes are kept in ``radio``), so that both cuts and placements matter."""
    if graph is not None:
        raise InstanceError("graph", "the pipeline family builds instances from chain profiles; "
                                     "use `splitopt make pipeline` for a graph")
    rng = np.random.default_rng([seed, 1001])
    _check_int("n_layers", n_layers, 2)
    _check_int("n_servers", n_servers, 1)
    _check_int("n_clients", n_clients, 1)
    if band is None:
        band = ("sub6", "mmwave")[int(rng.integers(0, 2))]
    if profile is not None:
        if profile not in PROFILES:
            raise InstanceError("profile", f"must be one of {', '.join(PROFILES)}, got {profile!r}")
        prof = PROFILES[profile]()
        n_layers = len(prof["names"])
    else:
        prof = random_profile(rng, n_layers)
    if batch is None:
        batch = 512 if profile is not None else int(rng.integers(16, 129))
    batch = _check_int("batch", batch, 1)
    if b == "draw":
        b = int(rng.integers(1, batch + 1))
    micro = None if b is None else (_check_int("b", b, 1),)
    plat = table2_platform(rng, n_clients, n_servers, band=band)
    if profile is None:
        # balance links against compute: a typical activation of a typical micro-batch moves in about
        # the time a typical layer computes on a typical server
        f_mean = float(np.mean(plat["server_flops"]))
        t_comp = float(np.mean(prof["fwd_flop"])) / f_mean
        t_link = float(np.mean(prof["act_bytes"])) / float(np.mean([x for row in plat["rates"] for x in row if x > 0]))
        scale = t_link / t_comp * float(10 ** rng.uniform(-0.7, 0.7))
        plat["rates"] = tuple(tuple(x * scale for x in row) for row in plat["rates"])
        options["meta"] = {**dict(options.get("meta") or {}), "rate_scale": scale}
    if tight_memory is None:
        tight_memory = bool(rng.random() < 0.5)
    name = options.pop("name", f"pipeline-{profile or 'random'}-I{n_layers}-M{n_clients}-N{n_servers}-s{seed}")
    inst = PipelineInstance.from_profile(prof, **{**plat, "server_memory_bytes": (None,) * n_servers,
                                                  "client_memory_bytes": (None,) * n_clients},
                                         batch=batch, micro_batches=micro, name=name, **options)
    base = None if tight_memory else (plat["server_memory_bytes"], plat["client_memory_bytes"])
    return _feasible_memory(inst, rng, base)


def _feasible_memory(inst: PipelineInstance, rng: np.random.Generator, base=None) -> PipelineInstance:
    """Memories ``base`` (server, client), or when ``None`` between 0.6 and 3 times an even share of
    the chain's memory at the largest allowed ``b``, raised where needed so that one reference
    assignment stays feasible for every allowed ``b`` (client: layer 0; then an even split over the
    servers in the mesh, all on ``s0`` otherwise)."""
    I, N = inst.n_layers, inst.n_servers
    P = min(N, I - 1) if inst.topology == "mesh" and inst.max_submodels is None else 1
    bounds = [1 + round(k * (I - 1) / P) for k in range(P + 1)]
    order = [int(x) for x in rng.permutation(N)] if P > 1 else [0]
    need_s = [0.0] * N
    need_c = [0.0] * inst.n_clients
    bs = inst.allowed_b()
    for b in (bs if len(bs) <= 64 else bs[:: max(1, len(bs) // 64)] + (bs[-1],)):
        for m, u in enumerate(client_memory(inst, b, 1, P + 1)):
            need_c[m] = max(need_c[m], u)
        for k in range(P):
            u = block_memory(inst, b, bounds[k], bounds[k + 1], k + 1, P + 1)
            need_s[order[k]] = max(need_s[order[k]], u)
    bmax = max(bs)
    total = sum(block_memory(inst, bmax, i, i + 1, 1, 2) for i in range(I))
    share = total / (N + 1)
    if base is None:
        base = ([share * rng.uniform(0.6, 3.0) for _ in range(N)],
                [share / inst.n_clients * rng.uniform(0.6, 3.0) for _ in range(inst.n_clients)])
    smem = tuple(float(max(base[0][a], need_s[a] * (1 + 1e-6))) for a in range(N))
    cmem = tuple(float(max(base[1][m], need_c[m] * (1 + 1e-6))) for m in range(inst.n_clients))
    return inst.with_(server_memory_bytes=smem, client_memory_bytes=cmem)


__all__ = ["shannon_rates", "table2_platform", "vgg16_cifar", "tinyllama_chain", "random_profile", "profile_instance", "generate", "PROFILES", "VGG16_CFG", "TINYLLAMA_CONFIG", "dbm_to_watt"]
