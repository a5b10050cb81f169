"""Plans in module names for the frameworks that run them (issue 23, part 3).

:func:`~splitopt.export.plan.plan_of` names the stages (or sides) of any family's solution with
layer names and, for graphs imported from PyTorch, module FQNs; :mod:`splitopt.export.formats`
writes a plan as a ``torch.distributed.pipelining`` ``split_spec``, torchtitan's
``module_fqns_per_model_part``, DeepSpeed's ``PipelineModule`` layer list and ``parts``, or an
HF-style device map, and refuses plans a target cannot express.
"""

from splitopt.export.formats import FORMATS, ExportError, export, snippet
from splitopt.export.plan import plan_of, torch_info

__all__ = ["FORMATS", "ExportError", "export", "snippet", "plan_of", "torch_info"]
