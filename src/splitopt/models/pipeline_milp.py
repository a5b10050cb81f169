"""Pyomo formulations of the ``pipeline`` family (seed 001) for a fixed micro-batch ``b``, and the
single joint MILP over ``b`` (digest §8; evaluator and semantics in :mod:`splitopt.models.pipeline`).

* :func:`build_c` -- Formulation C (digest §8.1): layer-to-node binaries ``x[i, v]`` (``v`` = the
  virtual client node or a server), block starts ``o``, McCormick transfer variables
  ``z[i, v, n'] >= x[i, v] + x[i+1, n'] - 1`` (exact: ``z`` only appears with non-negative
  coefficients in the objective and in ``T >=`` rows). ``placement="distinct"`` only.
* :func:`build_a` -- Formulation A (digest §8.2): the paper's stage-indexed variables, prefix
  binaries ``P[i, k]`` (layer ``i`` in submodels ``1..k``) and placement ``y[k, n]``, with the
  products ``q = s y``, ``g = y y'``, ``h = x g``, ``hc = x1 y2`` made exact by RLT equalities
  inside the MILP (``rlt=True``) or by plain McCormick inequalities (``rlt=False``, the weaker
  "plain" relaxation). All three placements: per-node sums for ``aggregate`` (C8/C9/C11/C13/C15),
  per-submodel rows for ``revisit``, plus ``sum_k y[k, n] <= 1`` for ``distinct``.
* :func:`build_b` -- Formulation B (digest §8.3): arc flow on the DAG of digest §3.5 (vertex =
  submodel ``k`` ends at layer ``e`` on node ``n``; every arc carries its additive latency ``a(e)``
  and its largest stage ``beta(e)``, the head's compute included, digest §7.2 #5). Exact for
  ``revisit``; ``distinct`` adds one visit per server. Bottleneck rows per DAG level (at most one
  arc leaves a level).
* :func:`build_joint_c` -- Formulation C over every allowed ``b`` at once (digest §8.5 (ii)):
  choice binaries ``beta_j``, per-``b`` stage rows switched by big-M, ``xi T`` through
  ``w_j >= T - Tbar (1 - beta_j)``, memory rows ``sum psi x <= sum_j (M / b_j) beta_j``.

Corrections to the paper's P2/P4 (digest §2.5, §7.2): client FP compute and upload form one stage
(Eq. 13, not C10/C12 apart); client link rows only for the chosen server (C12/C16 lack ``y_2n'``);
the gradient of C15 uses the reversed link rate; submodel ``K``'s compute is in the bottleneck.

Numerical hygiene (digest §8.6): every time is divided by one unit (the largest per-layer time
coefficient), every memory row by its capacity. Formulations C and A write block compute (and A
block memory) with prefix sums on block start/end indicators (C: ``o``/``e``, see
:func:`_c_variables`; A: the exact RLT products ``h``/``hc`` and ``Elast``, see :func:`build_a`),
so no coefficient is a single tiny layer's time (VGG-16's fc3 at 1e4 FLOP made the per-layer
coefficients span 1e10 and HiGHS's optimum untrustworthy; now C spans about 3e5 and A 6e4 on
VGG-16; the joint MILP, on C's variables, 2.9e7 instead of 1.8e9 over four b). The LP relaxations
of A keep the digest's per-layer products ``q``. These models are solved with HiGHS's integrality
tolerance at 1e-9 (:data:`HIGHS_OPTIONS`). ``memory="resident"``
is modelled in Formulation A only (big-M rows on the active submodels, :func:`_resident_rows`);
C, B and the joint MILP raise :class:`~splitopt.errors.InstanceError` for it.

One module per formulation (issue 22 §5): :mod:`.pipeline_milp_c` (C and the joint C),
:mod:`.pipeline_milp_a`, :mod:`.pipeline_milp_b`, with the shared coefficients and rows in
:mod:`.pipeline_milp_common`; this module gathers them (the import path of every name is unchanged).

# interface

``build_c/build_a/build_b(instance, b, ...) -> model`` (``model._unit`` seconds per model time
unit, ``model._extract()`` -> assignment dict from the loaded values), :class:`Coefficients`
(per-``b`` stage coefficients in seconds), :func:`dag` (the arcs of Formulation B, reusable by a
combinatorial shortest-path algorithm).
"""
from __future__ import annotations

from splitopt.models.pipeline_milp_a import build_a
from splitopt.models.pipeline_milp_b import Arc, build_b, dag
from splitopt.models.pipeline_milp_c import build_c, build_joint_c
from splitopt.models.pipeline_milp_common import HIGHS_OPTIONS, Coefficients, build_deadline

FORMULATIONS = {"C": build_c, "A": build_a, "B": build_b}

__all__ = ["build_c", "build_a", "build_b", "build_joint_c", "dag", "Arc", "Coefficients", "FORMULATIONS",
           "HIGHS_OPTIONS", "build_deadline"]
