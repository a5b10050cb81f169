"""The install-time warm-up (:mod:`splitopt.solvers.placement.warmup`) runs every compiled kernel
the family's solvers call, so that ``make setup`` leaves none to compile inside a user's first time
limit."""

import json
import re
import subprocess
import sys
from pathlib import Path

from numba.core.registry import CPUDispatcher

from splitopt.solvers.placement import idealdp_kernel, pricing_kernels, warmup

PACKAGE = Path(warmup.__file__).parent
KERNEL_MODULES = {"idealdp_kernel": idealdp_kernel, "pricing_kernels": pricing_kernels}


def _called_from_python() -> dict[str, CPUDispatcher]:
    """The kernels the solvers import (``from ...<kernel module> import a, b``): the entry points;
    the helpers only compiled code calls are compiled with them."""
    found = {}
    for path in PACKAGE.glob("*.py"):
        if path.stem in KERNEL_MODULES:
            continue
        for mod, names in re.findall(r"from splitopt\.solvers\.placement\.(\w+_kernels?) import ([\w, ]+)",
                                     path.read_text()):
            for name in (x.strip() for x in names.split(",")):
                obj = getattr(KERNEL_MODULES[mod], name)
                if isinstance(obj, CPUDispatcher):
                    found[f"{mod}.{name}"] = obj
    return found


CHECK = """
import json, sys
sys.path.insert(0, {tests!r})
from test_warmup import _called_from_python
from splitopt.solvers.placement import warmup
took = warmup.warm()
print(json.dumps({{"took": sorted(took), "missing": sorted(n for n, k in _called_from_python().items() if not k.signatures)}}))
"""


def test_the_warm_up_compiles_every_kernel_the_solvers_call():
    kernels = _called_from_python()
    # (the scan must see the five entry points of today, or it proves nothing)
    assert {"idealdp_kernel.list_run", "idealdp_kernel.covers", "idealdp_kernel.dp_run",
            "pricing_kernels._dp_step", "pricing_kernels._knapsacks"} <= set(kernels)
    # in a fresh process: in this one another test may have run the kernels already
    out = subprocess.run([sys.executable, "-c", CHECK.format(tests=str(Path(__file__).parent))],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["took"] == ["DP pricing", "ideal DP", "ideal listing"]
    assert not got["missing"], f"kernels the warm-up does not reach (add them to warmup.warm): {got['missing']}"
