"""The :class:`Solution` every algorithm and exact solve returns through :func:`splitopt.families.solve`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|objective - bound| / |objective|`` (0 when they are equal, ``inf`` when the objective is 0
    and the bound is not); ``None`` without a finite bound or objective. Relative to the objective
    alone, with no floor: an instance whose costs are all 1e-300 still shows its true gap."""
    if objective is None or bound is None or not (math.isfinite(objective) and math.isfinite(bound)):
        return None
    diff = abs(objective - bound)
    if diff == 0.0:
        return 0.0
    return diff / abs(objective) if objective != 0.0 else math.inf


def format_gap(gap: float | None) -> str:
    """``"0 %"``, ``"0.0123 %"``, ``"inf %"``; ``"no bound"`` for ``None``."""
    if gap is None:
        return "no bound"
    if gap == 0.0:
        return "gap 0 %"
    return f"gap {100.0 * gap:.3g} %"


@dataclass
class Solution:
    """An assignment plus its objective (always from the family's evaluator) and how it was found.

    ``assignment`` is family-specific plain data: for ``split`` the sorted list of device-side layer
    names; for ``grouping`` the list of group sizes. ``breakdown`` is the evaluator's cost breakdown.
    ``bound`` is a proven lower bound when an exact solver gave one; ``status`` is ``"ok"`` for
    algorithms and the solver's termination status for exact solves. :attr:`gap` is the relative gap
    between the objective and the bound (``None`` without a bound), carried by :meth:`to_dict`.
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

    @property
    def gap(self) -> float | None:
        """Relative gap ``|objective - bound| / |objective|`` (:func:`relative_gap`)."""
        return relative_gap(self.objective, self.bound)

    def status_line(self) -> str:
        """``status time_limit: objective X, bound Y, gap Z %`` (``no bound`` without a finite
        bound): what was verified, never more (issue 21 §1)."""
        head = f"status {self.status}: objective {self.objective:.9g}"
        if self.gap is None:
            return head + ", no bound"
        return head + f", bound {self.bound:.9g}, {format_gap(self.gap)}"

    def to_dict(self) -> dict:
        gap = self.gap
        return {"family": self.family, "algorithm": self.algorithm, "objective": self.objective,
                "assignment": self.assignment, "breakdown": self.breakdown, "seconds": self.seconds,
                "status": self.status, "bound": self.bound if gap is not None else None,
                "gap": gap if gap is None or math.isfinite(gap) else None, "info": self.info}
