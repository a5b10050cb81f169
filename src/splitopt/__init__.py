"""splitopt: optimal splitting of deep neural networks across devices.

Families (see :mod:`splitopt.families`): ``split`` (two-tier min-cut), ``grouping`` (balanced
grouping of a chain into pipeline stages), ``pipeline`` (multi-hop pipelined split learning) and
``throughput`` (throughput partitioning over edge nodes).

The DNN-graph classes are imported on first use (PEP 562), so ``import splitopt`` (and
``splitopt --help``) does not pay for numpy.
"""

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed, SolverUnavailable, SplitoptError

__version__ = "0.1.0"

_LAZY = {"DNNGraph": "splitopt.instances.graph", "Layer": "splitopt.instances.graph",
         "Edge": "splitopt.instances.graph"}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'splitopt' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


__all__ = ["DNNGraph", "Layer", "Edge", "InstanceError", "SplitoptError", "SolverUnavailable",
           "InfeasibleSolution", "SolverFailed", "__version__"]
