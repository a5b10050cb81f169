"""Exception types.

Every user-facing problem with input data raises :class:`InstanceError`, whose message starts with
the path of the bad field (``layers[12].out_bytes: must be >= 0, got -3``). The CLI prints that one
line and exits with status 2.
"""

from __future__ import annotations


class SplitoptError(Exception):
    """Base class of every error splitopt raises on purpose."""


class InstanceError(SplitoptError, ValueError):
    """Bad input data: the message names the field path and the offending value."""

    #: longest message kept (a bad value is echoed in the message; a huge one must not flood the terminal)
    MAX_CHARS = 600

    def __init__(self, path: str, message: str):
        if len(message) > self.MAX_CHARS:
            message = message[: self.MAX_CHARS - 5] + " ...)"
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class SolverUnavailable(SplitoptError, RuntimeError):
    """A requested solver is not installed; the message names the package to install."""


class SolverFailed(SplitoptError, RuntimeError):
    """An exact solver returned no solution (time limit without incumbent, solver error).

    ``status`` is the normalised solver status of :mod:`splitopt.solvers.exact` (``"time_limit"``,
    ``"error"``, ...). Distinct from :class:`InstanceError` so that the validation harness records a
    time-out as a time-out, not as "the algorithm declines this instance"."""

    def __init__(self, message: str, status: str = "error"):
        self.status = status
        super().__init__(message)


class NonFiniteObjective(SplitoptError, ArithmeticError):
    """The evaluator's objective came out infinite or NaN: the instance's numbers overflow."""


class MissingDependency(SplitoptError, ImportError):
    """An optional package is needed for what was asked; the message names the pip extra."""


class InfeasibleSolution(SplitoptError, ValueError):
    """A solution violates the instance's constraints (e.g. a server -> device data flow)."""


class NoFeasibleSolution(InfeasibleSolution):
    """The instance has no feasible solution (proven: an infeasible MILP or LP relaxation, memory
    that cannot hold the nodes), or an algorithm found none within its time limit (the message
    says which): said of the instance, not of an answer an algorithm returned."""


def check_number(path: str, value, *, minimum: float | None = 0.0, strict: bool = False,
                 allow_none: bool = False) -> float | None:
    """Return ``float(value)`` or raise :class:`InstanceError` naming ``path``.

    Rejects NaN, infinities, non-numbers, and values below ``minimum`` (``strict`` makes the
    bound exclusive, e.g. for rates that must be > 0).
    """
    import math

    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            import numpy as np  # numpy scalars are fine

            if isinstance(value, np.generic) and not isinstance(value, np.bool_):
                value = value.item()
            else:
                raise TypeError
        except (TypeError, ImportError):
            raise InstanceError(path, f"must be a number, got {value!r}") from None
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the double range (JSON allows any number of digits)
        raise InstanceError(path, f"must be finite, got an integer of about {int(int(value).bit_length() * 0.30103)} digits") from None
    if math.isnan(v):
        raise InstanceError(path, "must be a number, got NaN")
    if math.isinf(v):
        raise InstanceError(path, f"must be finite, got {v}")
    if minimum is not None:
        if strict and not v > minimum:
            raise InstanceError(path, f"must be > {minimum:g}, got {value!r}")
        if not strict and v < minimum:
            raise InstanceError(path, f"must be >= {minimum:g}, got {value!r}")
    return v
