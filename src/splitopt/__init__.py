"""splitopt: optimal splitting of deep neural networks across devices.

Families (see :mod:`splitopt.families`): ``split`` (two-tier min-cut), ``grouping`` (balanced
grouping of a chain into pipeline stages), later ``pipeline`` and ``throughput``.
"""

from splitopt.errors import InfeasibleSolution, InstanceError, SolverFailed, SolverUnavailable, SplitoptError
from splitopt.instances.graph import DNNGraph, Edge, Layer

__version__ = "0.1.0"

__all__ = ["DNNGraph", "Layer", "Edge", "InstanceError", "SplitoptError", "SolverUnavailable",
           "InfeasibleSolution", "SolverFailed", "__version__"]
