"""Seeded small ``pipeline`` instances that cycle through the semantics fields, for the tests of
the algorithms (brute force is the independent reference)."""

from __future__ import annotations

import math

from splitopt.instances.pipeline_generate import generate
from splitopt.models.pipeline import evaluate


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def semantics(seed: int, placement: str) -> dict:
    """Semantics fields drawn deterministically from ``seed`` (every combination appears)."""
    kw = {"placement": placement, "bottleneck": ("stages", "resource")[seed % 2]}
    if seed % 3 == 1:
        kw["memory"] = "resident"
    if seed % 4 == 2:
        kw["max_submodels"] = 3
    if seed % 5 == 3:
        kw["client_split"] = "paper"
    if seed % 7 == 4:
        kw.update(topology=("line", "star", "tree")[seed % 3], relay="store_forward")
    elif seed % 7 == 5:
        kw["topology"] = "star"
    return kw


def small(seed: int, placement: str, *, n_layers=5, n_servers=3, n_clients=2, batch=None, b="draw"):
    """A small instance: one drawn ``b`` (``b="draw"``) or every ``b`` of a small batch (``b=None``)."""
    if b is None and batch is None:
        batch = 12 + seed % 13
    return generate(seed, n_layers=n_layers, n_servers=n_servers, n_clients=n_clients, batch=batch, b=b,
                    **semantics(seed, placement))


def value(inst, assignment) -> float:
    return evaluate(inst, assignment)[0]
