"""splitopt: optimal splitting of deep neural networks across devices.

Families (see :mod:`splitopt.families`): ``split`` (two-tier min-cut), ``grouping`` (balanced
grouping of a chain into pipeline stages), later ``pipeline`` and ``throughput``.
"""

from splitopt.errors import InstanceError, SplitoptError, SolverFailed, SolverUnavailable, InfeasibleSolution
from splitopt.instances.graph import DNNGraph, Layer, Edge

__version__ = "0.1.0"

__all__ = ["DNNGraph", "Layer", "Edge", "InstanceError", "SplitoptError", "SolverUnavailable",
           "InfeasibleSolution", "SolverFailed", "__version__"]
