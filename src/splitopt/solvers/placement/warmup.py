"""Compile the ``placement`` family's numba kernels once, at install time (``make setup`` runs
``python -m splitopt.solvers.placement.warmup``), so that a user's first ``splitopt solve`` does
not pay for the compilation inside its time limit.

Why (measured 2026-11-29 on the 2-core machine): the kernels of :mod:`.idealdp_kernel` (ideal
listing and DP) and :mod:`.pricing_kernels` (the configuration LP's DP pricing) are compiled with
``cache=True``, so numba writes their machine code next to the modules on first use: about 9 s in
all (2 s for the DP, 5.6 s for the pricing) against 0.9 s to load them once cached. Before the cache
exists, the ideal DP gives way to the search when the compilation does not fit in its share of the
limit, and the search alone is much weaker: on the peer's BERT-L12 training operator graph (chain,
2,012 nodes) the lower bound of the orphan bracket (:mod:`.orphans`) with a 5 s share was 311.3 ms
on a fresh install (DP not run; the call then overran its 5 s by 2 s while numba compiled) and
437.85 ms (0.034 % below the optimum, in 2.4 s) once the kernels were cached. So the first solve on
a fresh install answered with a 28 % gap where every later one answered within 0.034 %.

This module runs each kernel through the code paths that use it, on a tiny generated instance (the
same argument types as real runs, so numba caches the signatures the solvers need); it changes no
result, only when the compilation happens. Running it again costs the load alone (about 1 s).
"""

from __future__ import annotations

import math
import time

import numpy as np


def warm() -> dict[str, float]:
    """Run every compiled kernel once; returns the seconds each step took (the first run compiles
    and caches, later runs load the cache)."""
    from splitopt.instances.placement_gen import layer_graph
    from splitopt.models.placement import work_bound
    from splitopt.solvers.placement import configlp, idealdp
    from splitopt.solvers.placement.common import contracted

    took = {}
    inst = layer_graph(0, n_branches=2, length=6, contiguity="chain")
    con = contracted(inst)
    t = time.perf_counter()
    lat = idealdp.lattice(con, load=True)  # list_run, covers
    if lat is None:
        raise RuntimeError("the compiled ideal listing returned nothing on the warm-up instance")
    took["ideal listing"] = time.perf_counter() - t
    t = time.perf_counter()
    idealdp.solve_dp(inst, con, math.inf, listed=lat)  # dp_run
    took["ideal DP"] = time.perf_counter() - t
    none = inst.with_(contiguity="none")
    t = time.perf_counter()
    configlp.prove_above(none, work_bound(none), time_limit=60.0)  # _dp_step, _knapsacks, _completion
    d = configlp._Data(none)
    V = 0.5 * work_bound(none) * d.k
    dp = configlp._PathDP.build(d, V, relax_memory=True)
    if dp is None:
        raise RuntimeError("the DP pricing does not apply to the warm-up instance")
    dp.price(np.ones(d.G), floor=1.0, memory=np.full(d.G, 2.0 / d.G))  # _dp_step_memory
    took["DP pricing"] = time.perf_counter() - t
    return took


def main() -> int:
    took = warm()
    print("splitopt: placement kernels compiled and cached ("
          + ", ".join(f"{k} {v:.1f} s" for k, v in took.items()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
