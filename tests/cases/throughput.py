"""Named throughput cases with optima derived by hand (seed 004 digest)."""

from splitopt.instances.throughput import ThroughputInstance


def skip_counterexample() -> ThroughputInstance:
    """Digest 004 §3.2: N = 2, eta = 1, theta = 1, c = (1, 3, 2, 2), edges L1->L2: 5, L2->L3: 3,
    L3->L4: 3 and the skip edge L1->L3: 4 (per-edge sizes: L1 has two tensors). Optimum p = (1, 2,
    1, 1): loads 5 and 3, transfers 5 (1->2) and 3 (2->1), period 5. The paper's padded bound prunes
    the prefix (1, 2) (its padded leaf (1, 2, 2, 2) sends 5 + 4 = 9 > 8) and returns period 6."""
    return ThroughputInstance(("L1", "L2", "L3", "L4"), (1.0, 3.0, 2.0, 2.0),
                              ((0, (1,), 5.0), (0, (2,), 4.0), (1, (2,), 3.0), (2, (3,), 3.0)),
                              ("n1", "n2"), (1.0, 1.0), ((0.0, 1.0), (1.0, 0.0)), name="digest-3.2")
