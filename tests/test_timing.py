"""The stopwatch of the time-limit tests (tests/timing.py) fails the two ways a limit is broken:
work past it and a wait past it. Both runs are measured in the quantity they overrun, so a busy
machine cannot make them pass or fail."""

from __future__ import annotations

import time

import pytest
from timing import Stopwatch, _cpu, assert_kept


def test_work_past_the_limit_fails():
    with Stopwatch() as sw:
        start = _cpu()
        while _cpu() - start < 0.3:  # 0.3 CPU seconds, however long they take on this machine
            pass
    assert sw.spent() > 0.25  # os.times counts in clock ticks (10 ms)
    with pytest.raises(AssertionError, match="CPU"):
        assert_kept(sw, 0.1, 0.05)
    assert_kept(sw, sw.wall + sw.cpu, 0.0)  # a limit it kept


def test_a_wait_past_the_limit_fails():
    with Stopwatch() as sw:
        time.sleep(0.5)
    assert sw.spent() < 0.5  # no CPU: the smaller measure alone would miss it
    with pytest.raises(AssertionError, match="a wait"):
        assert_kept(sw, 0.1, 0.05)
