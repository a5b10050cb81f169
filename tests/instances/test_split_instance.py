"""Issue 22 §5: the split instance needs neither the evaluator nor a baseline (the import circle
instances/split -> models/split -> solvers/split/baselines -> instances/split is gone)."""

import subprocess
import sys

import pytest

from splitopt.instances.split import _mask_cost, generate
from splitopt.models.split import evaluate

SCRIPT = """
import sys
from splitopt.instances.split import generate
generate(3, kind=None, mode=None, up_mbps=None, device_flops=None, server_flops=None, costs=None)
bad = sorted(m for m in sys.modules if m.startswith(("splitopt.models", "splitopt.solvers", "splitopt.families")))
print(bad)
"""


def test_generating_an_instance_imports_no_model_or_solver():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("seed", range(40))
def test_generator_cost_equals_the_evaluator(seed):
    inst = generate(seed, kind=None, mode=None, up_mbps=None, device_flops=None, server_flops=None, costs=None)
    for mask in (inst.min_device_mask, inst.max_device_mask):
        assert _mask_cost(inst, mask) == evaluate(inst, inst.names_of(mask))[0]
