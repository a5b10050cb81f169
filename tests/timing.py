"""How long a call ran, for the tests that check that a time limit is kept, measured so that a
machine shared with other jobs cannot fail them (the project's rule: no test depends on how fast
this machine is today).

:class:`Stopwatch` records the wall time and the CPU seconds of this process and its reaped
children. :meth:`Stopwatch.spent` is the smaller of the two: work that ignores a deadline shows in
both, a machine busy with other jobs stretches only the wall time (a 5 s limit measured 8.2 s
beside three CPU-bound processes on two cores, and 4.9 s alone), and a solver's helper threads
only the CPU time. A call that *waits* past its limit (a deadlock, a child never stopped) uses no
CPU, so :func:`assert_kept` also bounds the wall time, loosely: :data:`WALL_FACTOR` times the limit
plus the slack, what no load on the test machine has come near and any hang exceeds.
"""

from __future__ import annotations

import os
import time

WALL_FACTOR = 3.0


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Stopwatch:
    """``with Stopwatch() as sw: ...``; then :attr:`wall`, :attr:`cpu`, :meth:`spent`."""

    def __enter__(self) -> "Stopwatch":
        self._w, self._c = time.perf_counter(), _cpu()
        self.wall = self.cpu = None
        return self

    def __exit__(self, *exc) -> None:
        self.wall, self.cpu = time.perf_counter() - self._w, _cpu() - self._c

    def spent(self) -> float:
        return min(self.wall, self.cpu)


def assert_kept(sw: Stopwatch, limit: float, slack: float, what: str = "") -> None:
    """The call timed by ``sw`` kept ``limit`` within ``slack`` (see the module's docstring)."""
    assert sw.spent() <= limit + slack, f"{what}: {sw.wall:.2f} s wall, {sw.cpu:.2f} s CPU for a {limit} s limit"
    assert sw.wall <= WALL_FACTOR * limit + slack, f"{what}: {sw.wall:.2f} s wall for a {limit} s limit (a wait?)"
