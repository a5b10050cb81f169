"""The :class:`Solution` every algorithm and exact solve returns through :func:`splitopt.families.solve`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Solution:
    """An assignment plus its objective (always from the family's evaluator) and how it was found.

    ``assignment`` is family-specific plain data: for ``split`` the sorted list of device-side layer
    names; for ``grouping`` the list of group sizes. ``breakdown`` is the evaluator's cost breakdown.
    ``bound`` is a proven lower bound when an exact solver gave one; ``status`` is ``"ok"`` for
    algorithms and the solver's termination status for exact solves.
    """

    family: str
    algorithm: str
    assignment: Any
    objective: float
    breakdown: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    status: str = "ok"
    bound: float | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"family": self.family, "algorithm": self.algorithm, "objective": self.objective,
                "assignment": self.assignment, "breakdown": self.breakdown, "seconds": self.seconds,
                "status": self.status, "bound": self.bound, "info": self.info}
