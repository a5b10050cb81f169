import pytest

from cases import knapsack as validation_fakefam  # noqa: F401  (registers the fake "vknap" family)
from splitopt.validation import harness


@pytest.fixture(autouse=True)
def _fresh_cache():
    harness.clear_cache()
    validation_fakefam.CALLS["milp"] = 0
    yield
