"""Lower bounds of the device-placement model that need no solver (Tarnawski et al., NeurIPS 2020,
§4 model; the bounds are ours): the work bound, the communication-aware work bound, the pigeonhole
(cardinality) bound and the isolation min-cut bound, combined by :func:`combinatorial_bound`."""

from __future__ import annotations

import math

from splitopt.errors import InstanceError
from splitopt.instances.placement import PlacementInstance
from splitopt.models.placement import work_bound


def combinatorial_bound(instance: PlacementInstance, deadline: float | None = None) -> tuple[float, dict[str, float]]:
    """The best of the proven lower bounds that need no solver: the work bound
    (:func:`~splitopt.models.placement.work_bound`), the communication-aware work bound
    (:func:`~splitopt.solvers.placement.commbound.comm_work_bound`), the pigeonhole bound
    (:func:`~splitopt.models.placement.cardinality_bound`) and the isolation min-cut bound
    (:func:`~splitopt.solvers.placement.common.isolation_bound`, when the instance can be
    contracted; its min cuts stop at ``deadline``, a ``time.perf_counter()`` value: the maximum
    over the cuts computed is still a bound; the pigeonhole and communication bounds stop there
    too, with a weaker bound). Returns ``(bound, {name: value})``."""
    from splitopt.models.placement import cardinality_bound
    from splitopt.solvers.placement.commbound import comm_work_bound
    from splitopt.solvers.placement.common import contracted, isolation_bound

    lbs = {"work": work_bound(instance), "cardinality": cardinality_bound(instance, deadline),
           "comm": comm_work_bound(instance, deadline=deadline)}
    try:
        con = contracted(instance, fuse_cycles=instance.contiguity == "chain")
        if not con.orphans:
            iso, _n = isolation_bound(con, instance, deadline=deadline)
            # the exact integer flow is rounded once to a double: one ulp down stays a bound
            lbs["isolation"] = math.nextafter(iso, 0.0) if iso > 0 else 0.0
    except InstanceError:
        pass
    return max(lbs.values()), lbs
