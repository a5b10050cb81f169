"""``splitopt.families.solve`` (the Python API's front door): an option the algorithm does not take
is a clean :class:`InstanceError` naming it, as the CLI says it, not a ``TypeError`` traceback; a
``TypeError`` raised inside an algorithm stays what it is."""

from __future__ import annotations

import pytest

from splitopt.errors import InstanceError
from splitopt.families import get_family, solve
from splitopt.instances import grouping


def test_unknown_option_is_named():
    inst = grouping.generate(1, n=12, k=3)
    with pytest.raises(InstanceError) as err:
        solve(inst, "auto", time_limit=5)  # grouping's auto is a DP without a limit
    msg = str(err.value)
    assert msg.startswith("time_limit:") and "'auto'" in msg and "milp_compact" in msg
    assert solve(inst, "auto").objective > 0  # and without it the call works


def test_type_error_inside_an_algorithm_is_not_renamed(monkeypatch):
    inst = grouping.generate(1, n=12, k=3)
    algo = get_family("grouping").algorithm("auto")

    def broken(instance, **kw):
        raise TypeError("f() got an unexpected keyword argument 'time_limit'")

    monkeypatch.setattr(type(algo), "resolve", lambda self: broken)
    with pytest.raises(TypeError):
        solve(inst, "auto", time_limit=5)
