"""Claims of seed 001 for ``splitopt audit``, recomputed.

Wei, Lin, Li, Li, Chen, "Pipelining Split Learning in Multi-hop Edge Networks", arXiv:2505.04368;
digest ``papers/001-pipelined-split-learning.md`` (cited as "digest §x"). Rows:

* ``001-count`` (Section V-B, digest §2.7): the brute-force size ``sum_{k=2}^{N} B C(I-1, k-1) k!
  C(N, k)`` = 5.76e7 for ``B = 256``, VGG-16 (``I = 16``), ``N = 5``. The arithmetic reproduces;
  the formula is not the size of the search space of the problem it describes: it places all ``k``
  parts, the client's included, on ``k`` distinct of the ``N`` servers (``k! C(N, k) = P(N, k)``
  orders) and stops at ``k = N``. The true count (:func:`true_count`) has the client part on the
  clients and ``P = k - 1`` server blocks, ``P = 1..min(I - 1, N)`` (``distinct``: ``P(N, P)``
  server sequences; ``revisit``: ``N (N - 1)^(P - 1)``, consecutive servers different).
* ``001-alg1`` (Theorem 2: "Algorithm 1 solves P4 optimally"): Algorithm 1 as printed
  (:func:`splitopt.solvers.pipeline.paper.algorithm1`) against the exact optimum on 40 seeded
  small instances like the digest's (§8.7: ``I = 5..6``, ``N = 3``, ``M = 2``, ``b = 20``,
  ``B = 512``, ``revisit``). ``K`` is not given by the paper; the row runs every ``K = 2..min(I,
  N + 1)`` and keeps the plan with the best **own** value (what a user of the algorithm would do),
  and also reports ``K = 2`` alone. ``--slow``: 200 instances.
* ``001-bcd-stop`` (Section V-E, Algorithm 2: converges "within only a few iterations",
  near-optimal): where BCD as printed stops on VGG-16, ``B = 512``, ``M = 5``, Table II (seed 0),
  ``N = 2..10``, and on the digest's 8 synthetic instances (§4.3).
* ``001-fig7`` (Fig. 7, ``N = 10``: BCD 260.9 s vs optimal 256.9 s, 1.6 %): BCD's gap to the exact
  joint optimum over ``N = 2..10`` on the same VGG-16 platform. The paper's seconds are total
  training time over many rounds; ours are per round, so only the ratio compares.
* ``001-nopipe`` (Fig. 4: No Pipeline needs "almost 3x to 7x" the training time): the round
  latency of No Pipeline (``b = B``, cuts and placement optimal) over the exact optimum, VGG-16,
  ``N = 2..10``; ``--slow``: ``N = 6`` (the paper's default) over 20 platform draws. The number
  of rounds to a given accuracy is the same for every scheme (all equal centralised training,
  digest §6.3), so the training-time ratio is the round-latency ratio.

Every latency is the evaluator's (:func:`splitopt.models.pipeline.evaluate`); the exact optimum is
the corrected search (:mod:`splitopt.solvers.pipeline.shortest_path`), whose answers are checked
against brute force and the MILPs in ``tests/solvers/pipeline``.
"""

from __future__ import annotations

import math
from functools import lru_cache

from splitopt.validation.audit import REFUTED, REPRODUCED, Claim, Finding

P001 = "001 Wei et al., Pipelining Split Learning in Multi-hop Edge Networks (arXiv:2505.04368)"
VGG_N = tuple(range(2, 11))


# ---------------------------------------------------------------------- brute-force count
def paper_count(B: int, I: int, N: int) -> int:
    """Section V-B as printed: ``sum_{k=2}^{N} B C(I-1, k-1) k! C(N, k)``."""
    return sum(B * math.comb(I - 1, k - 1) * math.factorial(k) * math.comb(N, k) for k in range(2, N + 1))


def true_count(B: int, I: int, N: int, placement: str = "distinct") -> int:
    """(b, cuts, server sequence) triples of the problem: ``P = 1..min(I-1, N)`` server blocks
    (``distinct``) or ``1..I-1`` (``revisit``), ``C(I-1, P)`` cut sets, the sequences as in the
    module docstring."""
    tot = 0
    for P in range(1, I):
        seqs = math.perm(N, P) if placement == "distinct" else N * (N - 1) ** (P - 1)
        tot += math.comb(I - 1, P) * seqs
    return B * tot


def claim_count() -> Finding:
    B, I, N = 256, 16, 5
    paper = paper_count(B, I, N)
    dist, rev = true_count(B, I, N, "distinct"), true_count(B, I, N, "revisit")
    from splitopt.instances.pipeline_generate import profile_instance
    from splitopt.solvers.pipeline.shortest_path import candidate_bs

    nb = len(candidate_bs(profile_instance("vgg16-cifar", n_clients=5, n_servers=N, seed=0, batch=B)))
    return Finding(f"{paper:,} = {paper:.3g}", REPRODUCED if paper == 57_600_000 else REFUTED,
                   f"the formula places the client's part on one of the N servers and stops at k = N; the true "
                   f"space is {dist:,} ({dist:.3g}) with distinct servers, {rev:,} ({rev:.3g}) with revisits; "
                   f"the exact search needs only {nb} of the {B} b values (ceil(B/b) classes)",
                   data={"paper": paper, "distinct": dist, "revisit": rev, "b_classes": nb})


# ---------------------------------------------------------------------- Algorithm 1 as printed
def small_instance(seed: int):
    """The digest-§8.7-like instance of ``001-alg1`` number ``seed``."""
    from splitopt.instances.pipeline_generate import generate

    return generate(seed, n_layers=5 + seed % 2, n_servers=3, n_clients=2, b=20, batch=512, placement="revisit")


def alg1_records(n: int = 40) -> list[dict]:
    """Per instance: the exact optimum, Algorithm 1's true latency with ``K = 2`` (``None`` if
    exactly 2 parts do not fit) and with the ``K`` of best own value."""
    from splitopt.errors import InstanceError
    from splitopt.models.pipeline import evaluate
    from splitopt.solvers.pipeline import paper, shortest_path

    out = []
    for seed in range(n):
        inst = small_instance(seed)
        opt = evaluate(inst, shortest_path.solve(inst).assignment)[0]
        runs = {}
        for K in range(2, min(inst.n_layers, inst.n_servers + 1) + 1):
            try:
                r = paper.algorithm1(inst, K=K)
            except InstanceError:
                continue
            runs[K] = (float(r.info["own_value"]), evaluate(inst, r.assignment)[0], r.assignment)
        Kb = min(runs, key=lambda k: (runs[k][0], k))
        out.append({"seed": seed, "opt": opt, "K2": runs[2][1] if 2 in runs else None, "K": Kb,
                    "own": runs[Kb][0], "got": runs[Kb][1], "assignment": runs[Kb][2]})
    return out


def _gap_stats(pairs):
    gaps = [g / o - 1 for o, g in pairs]
    worse = [x for x in gaps if x > 1e-9]
    return len(worse), len(gaps), max(gaps, default=0.0), sum(gaps) / len(gaps) if gaps else 0.0


@lru_cache(maxsize=2)
def claim_alg1(n: int = 40) -> Finding:
    recs = alg1_records(n)
    w, m, mx, mean = _gap_stats([(r["opt"], r["got"]) for r in recs])
    w2, m2, mx2, mean2 = _gap_stats([(r["opt"], r["K2"]) for r in recs if r["K2"] is not None])
    return Finding(f"suboptimal on {w} of {m}; max +{mx:.1%}, mean +{mean:.1%}", REFUTED if w else REPRODUCED,
                   f"K of best own value per instance; with K = 2 fixed: {w2} of {m2}, max +{mx2:.1%}, mean "
                   f"+{mean2:.1%}. Causes (digest §7.3 #3): the sum c(e) as the bottleneck, the last submodel's "
                   f"compute on no edge, exactly K parts. Instances: I = 5-6, N = 3, M = 2, b = 20, B = 512, "
                   f"revisit (digest: 12/40, max +49.2 %, mean +4.5 % on its own instances)",
                   data={"records": [{k: v for k, v in r.items() if k != "assignment"} for r in recs],
                         "worse": w, "n": m, "worse_K2": w2, "n_K2": m2, "max": mx, "mean": mean})


# ---------------------------------------------------------------------- VGG-16 sweep (BCD, No Pipeline)
def vgg_instance(N: int, seed: int = 0):
    from splitopt.instances.pipeline_generate import profile_instance

    return profile_instance("vgg16-cifar", n_clients=5, n_servers=N, seed=seed)


@lru_cache(maxsize=64)
def vgg_point(N: int, seed: int = 0, bcd: bool = True) -> dict:
    """Exact optimum, BCD as printed and No Pipeline on VGG-16, ``B = 512``, ``M = 5``, Table II."""
    from splitopt.errors import InstanceError
    from splitopt.models.pipeline import evaluate
    from splitopt.solvers.pipeline import baselines, paper, shortest_path

    inst = vgg_instance(N, seed)
    ex = shortest_path.solve(inst)
    d = {"N": N, "seed": seed, "status": ex.status, "L": evaluate(inst, ex.assignment)[0], "b": ex.assignment["b"]}
    if bcd:
        r = paper.bcd(inst)
        d.update(bcd_L=evaluate(inst, r.assignment)[0], bcd_b=r.assignment["b"], bcd_path=list(r.info["b_history"]),
                 bcd_iter=r.info["iterations"], bcd_assignment=r.assignment)
    try:
        npl = baselines.no_pipeline(inst)
        d["nopipe_L"] = evaluate(inst, npl.assignment)[0]
    except InstanceError:
        d["nopipe_L"] = None  # b = B does not fit in memory (Eq. 11 multiplies the parameters by b)
    return d


def synthetic_bcd(n: int = 8) -> list[dict]:
    """BCD as printed on the digest's 8 synthetic instances (§4.3; ``I = 6``, ``N = 3``, ``M = 2``, ``B = 512``)."""
    from splitopt.instances.pipeline_generate import generate
    from splitopt.models.pipeline import evaluate
    from splitopt.solvers.pipeline import paper, shortest_path

    out = []
    for seed in range(n):
        inst = generate(seed, n_layers=6, n_servers=3, n_clients=2, batch=512)
        ex = shortest_path.solve(inst)
        r = paper.bcd(inst)
        out.append({"seed": seed, "L": evaluate(inst, ex.assignment)[0], "b": ex.assignment["b"],
                    "bcd_L": evaluate(inst, r.assignment)[0], "bcd_path": list(r.info["b_history"])})
    return out


def claim_bcd_stop() -> Finding:
    pts = [vgg_point(N) for N in VGG_N]
    syn = synthetic_bcd()
    bs = [b for p in pts for b in p["bcd_path"]] + [b for s in syn for b in s["bcd_path"]]
    opt_b = sorted({p["b"] for p in pts})
    iters = max(p["bcd_iter"] for p in pts)
    near = all(abs(b - 20) <= 4 for b in bs)
    syn_gaps = [s["bcd_L"] / s["L"] - 1 for s in syn]
    return Finding(f"b stays in {min(bs)}..{max(bs)} (start 20) within {iters} iterations; optimal b* in "
                   f"{{{', '.join(map(str, opt_b))}}} (VGG-16, N = 2..10)", REFUTED if near else REPRODUCED,
                   "it converges in a few iterations, but because the frozen T_1 of the b step pins b near b^0 = "
                   "20 (digest §4.3), not at a near-optimal b; digest's 8 synthetic instances: "
                   f"{sum(g > 1e-6 for g in syn_gaps)} of 8 above the optimum, "
                   f"{min(syn_gaps):.1%}..{max(syn_gaps):.1%} (digest: 8 of 8, 2-22 %)",
                   data={"vgg": [{k: v for k, v in p.items() if k != "bcd_assignment"} for p in pts],
                         "synthetic": syn, "b_range": (min(bs), max(bs)), "opt_b": opt_b})


def claim_fig7() -> Finding:
    pts = [vgg_point(N) for N in VGG_N]
    gaps = {p["N"]: p["bcd_L"] / p["L"] - 1 for p in pts}
    g10 = gaps[10]
    return Finding(f"N = 10: +{g10:.1%}; N = 2..10: +{min(gaps.values()):.1%} to +{max(gaps.values()):.1%}",
                   REPRODUCED if g10 <= 0.03 else REFUTED,
                   "per-round latency against the exact joint optimum over every b (all exact: "
                   + ("yes" if all(p["status"] == "optimal" for p in pts) else "NO")
                   + "); VGG-16, B = 512, M = 5, Table II sub-6 GHz, platform seed 0; the paper's 1.6 % may come "
                   "from an instance whose optimal b is near 20 (digest §7.3 #4)",
                   data={"gaps": gaps, "points": [{k: v for k, v in p.items() if k != "bcd_assignment"} for p in pts]})


def _nopipe(pts, what: str) -> Finding:
    ratios = {(p["N"], p["seed"]): p["nopipe_L"] / p["L"] for p in pts if p["nopipe_L"] is not None}
    nofit = [(p["N"], p["seed"]) for p in pts if p["nopipe_L"] is None]
    lo, hi = min(ratios.values()), max(ratios.values())
    inside = sum(3 * (1 - 1e-9) <= r <= 7 * (1 + 1e-9) for r in ratios.values())
    return Finding(f"{lo:.2f}x to {hi:.2f}x ({inside} of {len(ratios)} in 3-7x)",
                   REPRODUCED if inside == len(ratios) else REFUTED,
                   f"{what}; b = B does not fit in memory (Eq. 11: parameters times b) on {len(nofit)} of "
                   f"{len(pts)}; the ratio depends on the platform draw",
                   data={"ratios": ratios, "no_fit": nofit})


def claim_nopipe() -> Finding:
    return _nopipe([vgg_point(N) for N in VGG_N], "VGG-16, N = 2..10, platform seed 0, round latency over the exact "
                   "optimum")


def claim_nopipe_seeds(n: int = 20) -> Finding:
    return _nopipe([vgg_point(6, s, bcd=False) for s in range(n)], f"VGG-16, N = 6 (the paper's default), {n} "
                   "platform draws")


def claims() -> list[Claim]:
    """Seed 001's rows (module docstring); slow ones run with ``splitopt audit --slow``."""
    return [
        Claim("001-count", P001, "§V-B, digest §2.7",
              "exhaustive search needs sum_{k=2}^N B C(I-1,k-1) k! C(N,k) evaluations: about 5.76e7 for B = 256, "
              "VGG-16, at most 5 edge nodes", "5.76e7", claim_count),
        Claim("001-alg1", P001, "§V-D, Theorem 2",
              "Algorithm 1 solves P4 optimally (checked on 40 small instances)", "optimal; digest check: "
              "suboptimal on 12 of 40", lambda: claim_alg1(40)),
        Claim("001-alg1-200", P001, "§V-D, Theorem 2", "as above, on 200 small instances", "optimal",
              lambda: claim_alg1(200), slow=True),
        Claim("001-bcd-stop", P001, "§V-E, Algorithm 2",
              "BCD converges within only a few iterations, to a near-optimal (x, y, b)",
              "a few iterations, near-optimal; digest: b stalls at 20-21", claim_bcd_stop),
        Claim("001-fig7", P001, "§VI, Fig. 7", "N = 10: BCD 260.9 s vs optimal 256.9 s", "+1.6 %", claim_fig7),
        Claim("001-nopipe", P001, "§VI, Fig. 4",
              "No Pipeline needs almost 3x to 7x the training time (VGG-16, N = 2..10)", "3x-7x", claim_nopipe),
        Claim("001-nopipe-seeds", P001, "§VI, Fig. 4", "as above, N = 6 over 20 platform draws", "3x-7x",
              claim_nopipe_seeds, slow=True),
    ]


__all__ = ["paper_count", "true_count", "claim_count", "alg1_records", "claim_alg1", "vgg_point", "synthetic_bcd",
           "claim_bcd_stop", "claim_fig7", "claim_nopipe", "claim_nopipe_seeds", "claims", "small_instance",
           "vgg_instance"]
