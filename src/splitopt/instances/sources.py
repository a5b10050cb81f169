"""Where DNN graphs come from: the one graph loader behind the CLI and the instance sets.

A *graph spec* is a path (an instance or graph JSON file, a PipeDream ``graph.txt`` or its folder,
an ONNX ``.onnx`` file), a zoo architecture name (``resnet50`` or ``zoo:resnet50``) or a packaged
PipeDream profile (``pipedream:alexnet``). :func:`load_graph` turns a spec into a
:class:`~splitopt.instances.graph.DNNGraph`; :class:`GraphSource` is a spec whose graph is loaded
only when a family asks for it (a family may build its instance from the zoo name alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from splitopt.errors import InstanceError
from splitopt.instances.graph import DNNGraph


def zoo_name(spec: str) -> str | None:
    """The zoo architecture a spec names (``resnet50`` or ``zoo:resnet50``), or ``None``."""
    from splitopt.instances import zoo

    name = spec[4:] if spec.startswith("zoo:") else spec
    if spec.startswith("zoo:") or not Path(spec).exists():
        return name if name in zoo.list_models() else None
    return None


def load_graph(spec: str, *, input_size: int | None = None, batch: int | None = None) -> DNNGraph:
    """A DNN graph from a file, a zoo name or a packaged PipeDream profile (see the module doc)."""
    name = zoo_name(spec)
    if name is not None:
        from splitopt.instances import zoo

        return zoo.get(name, input_size=input_size, batch=batch or 1)
    if spec.startswith("pipedream:") and not Path(spec).exists():
        from splitopt.instances.importers.pipedream import load_packaged

        return load_packaged(spec.split(":", 1)[1])
    p = Path(spec)
    if not p.exists():
        from splitopt.instances import zoo

        raise InstanceError("GRAPH", f"{spec!r} is neither a file nor a zoo model "
                                     f"(zoo: {', '.join(zoo.list_models())}; packaged profiles: pipedream:NAME)")
    if p.suffix == ".onnx":
        from splitopt.instances.importers.onnx import load_onnx

        return load_onnx(p, batch=batch)
    if p.suffix == ".txt" or p.is_dir():
        from splitopt.instances.importers.pipedream import load_pipedream

        return load_pipedream(p / "graph.txt" if p.is_dir() else p)
    from splitopt.instances import io

    obj = io.load(p)
    if isinstance(obj, DNNGraph):
        return obj
    g = getattr(obj, "graph", None)
    if isinstance(g, DNNGraph):
        return g
    raise InstanceError(str(p), f"holds a {type(obj).__name__}, not a DNN graph")


@dataclass
class GraphSource:
    """A graph spec whose graph is loaded at most once, on first access of :attr:`graph`."""

    spec: str
    input_size: int | None = None
    batch: int | None = None

    @property
    def zoo_name(self) -> str | None:
        return zoo_name(self.spec)

    @cached_property
    def graph(self) -> DNNGraph:
        return load_graph(self.spec, input_size=self.input_size, batch=self.batch)


__all__ = ["load_graph", "zoo_name", "GraphSource"]
