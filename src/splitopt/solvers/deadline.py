"""One wall-clock deadline shared by the loops of an algorithm (over micro-batch sizes, rounds,
search nodes) and the sub-solvers they call, so that a user's ``time_limit`` bounds the whole run.

Convention of the algorithms that use it: the limit is checked between units of work (one ``b``,
one round); once it has passed, an algorithm that already holds an answer stops and returns it with
status ``"time_limit"`` (with a bound only where the work left undone is covered by a proven one),
and an algorithm that holds none yet goes on to its first answer where its units are short (a
combinatorial step) or raises :meth:`Deadline.no_answer` (a
:class:`~splitopt.errors.SolverFailed` with status ``"time_limit"``, what the validation harness
records as a time-out) where they are not.
"""

from __future__ import annotations

import time

from splitopt.errors import SolverFailed, check_number

#: the smallest time handed to a sub-solver once the deadline has passed (a solver rejects 0)
MIN_REMAINING = 1e-3


def wrapped(time_limit: float | None, share: float, most: float = 0.25) -> float | None:
    """``time_limit`` less ``min(most, share x time_limit)``: the deadline of an algorithm's steps,
    which each may end a check late, leaving time to score and hand back the answer within the
    limit (``None``: no limit). ``time_limit`` is checked as :class:`Deadline` checks it, so that an
    error names the value the caller gave, not the shifted one."""
    if time_limit is None:
        return None
    time_limit = check_number("time_limit", time_limit, minimum=0.0, strict=True)
    return time_limit - min(most, share * time_limit)


class Deadline:
    """``Deadline(time_limit)``: ``time_limit`` seconds from now, or never when ``None``.

    ``time_limit`` must be a finite number > 0 (else :class:`~splitopt.errors.InstanceError`
    naming ``time_limit``)."""

    def __init__(self, time_limit: float | None):
        self.limit = time_limit
        if time_limit is None:
            self.end = None
        else:
            t = check_number("time_limit", time_limit, minimum=0.0, strict=True)
            self.end = time.perf_counter() + t
        self.hit = False  # set by over() once it has returned True

    def over(self) -> bool:
        """Whether the deadline has passed (remembered in :attr:`hit`)."""
        if self.end is not None and time.perf_counter() > self.end:
            self.hit = True
        return self.hit

    def remaining(self) -> float | None:
        """Seconds left for a sub-solver: ``None`` without a limit, at least :data:`MIN_REMAINING`."""
        if self.end is None:
            return None
        return max(self.end - time.perf_counter(), MIN_REMAINING)

    def no_answer(self, what: str = "") -> SolverFailed:
        """The error to raise when the deadline passed before any answer was found."""
        return SolverFailed(f"time_limit: no feasible assignment found within {self.limit} s{what}",
                            status="time_limit")


__all__ = ["Deadline", "MIN_REMAINING"]
