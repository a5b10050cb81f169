"""Where a PyTorch model and its example inputs come from (``splitopt import torch`` and ``splitopt
profile``): :func:`load_factory` for ``PKG.MOD:FACTORY``, ``FILE.py:FACTORY`` and ``torchvision:NAME``,
:func:`parse_inputs` for ``1x3x224x224`` and ``1x128:int64``."""

from __future__ import annotations

import importlib
import importlib.util
import math
from pathlib import Path
from typing import Any, Sequence

from splitopt.errors import InstanceError, MissingDependency

DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool")


def require_torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - exercised only without torch
        raise MissingDependency("PyTorch is not installed: pip install 'splitopt[torch]'") from None
    return torch


def load_factory(spec: str, *, training: bool = False):
    """The module named by ``spec``: ``PKG.MOD:FACTORY`` (a callable returning a module, or a module
    class), ``path/to/file.py:FACTORY``, or ``torchvision:NAME`` (``torchvision.models.get_model(NAME,
    weights=None)``). Returned in ``eval()`` mode unless ``training``."""
    torch = require_torch()
    if not isinstance(spec, str) or ":" not in spec:
        raise InstanceError("model", f"must be PKG.MOD:FACTORY, FILE.py:FACTORY or torchvision:NAME, got {spec!r}")
    mod_name, _, attr = spec.rpartition(":")
    if not mod_name or not attr:
        raise InstanceError("model", f"must be PKG.MOD:FACTORY, got {spec!r}")
    if mod_name == "torchvision":
        try:
            import torchvision
        except Exception as exc:  # noqa: BLE001 - torchvision may fail to import beside this torch
            raise MissingDependency(f"model {spec!r}: torchvision is not importable ({type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        try:
            module = torchvision.models.get_model(attr, weights=None)
        except ValueError as exc:
            raise InstanceError("model", f"{spec!r}: {exc}") from None
    else:
        if mod_name.endswith(".py"):
            path = Path(mod_name)
            if not path.is_file():
                raise InstanceError("model", f"{spec!r}: no file {mod_name}")
            s = importlib.util.spec_from_file_location(f"splitopt_user_{path.stem}", path)
            pymod = importlib.util.module_from_spec(s)
            try:
                s.loader.exec_module(pymod)
            except Exception as exc:  # noqa: BLE001 - the user's file: one line, not a traceback
                raise InstanceError("model", f"{spec!r}: running {mod_name} failed: {type(exc).__name__}: "
                                             f"{_first_line(exc)}") from None
        else:
            try:
                pymod = importlib.import_module(mod_name)
            except ImportError as exc:
                raise InstanceError("model", f"{spec!r}: cannot import {mod_name!r} ({exc})") from None
        obj: Any = pymod
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise InstanceError("model", f"{spec!r}: {mod_name!r} has no attribute {attr!r}")
            obj = getattr(obj, part)
        if isinstance(obj, torch.nn.Module):
            module = obj
        elif callable(obj):
            try:
                module = obj()
            except Exception as exc:  # noqa: BLE001 - the user's factory: one line, not a traceback
                raise InstanceError("model", f"{spec!r}: calling {attr}() failed: {type(exc).__name__}: "
                                             f"{_first_line(exc)}") from None
        else:
            module = obj
    if not isinstance(module, torch.nn.Module):
        raise InstanceError("model", f"{spec!r} gave a {type(module).__name__}, not a torch.nn.Module")
    return module.train(training)


def _first_line(exc: BaseException) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")[:300]


def parse_inputs(shapes: Sequence[str], dtype: str = "float32", *, seed: int = 0) -> tuple:
    """Example inputs from ``["1x3x224x224", "1x16:int64"]``: floats ~ N(0, 1) (seeded), integers 0."""
    torch = require_torch()
    if not shapes:
        raise InstanceError("--input", "give at least one input shape, e.g. 1x3x224x224")
    gen = torch.Generator().manual_seed(seed)
    out = []
    for j, s in enumerate(shapes):
        text, _, dt = str(s).partition(":")
        dt = dt or dtype
        if dt not in DTYPES:
            raise InstanceError(f"--input[{j}]", f"dtype must be one of {', '.join(DTYPES)}, got {dt!r}")
        try:
            dims = [int(d) for d in text.lower().split("x")]
        except ValueError:
            raise InstanceError(f"--input[{j}]", f"must be sizes joined by 'x' (1x3x224x224), got {s!r}") from None
        if not dims or any(d < 1 or d > 1 << 24 for d in dims) or math.prod(dims) > 1 << 31:
            raise InstanceError(f"--input[{j}]", f"sizes must be in 1..16,777,216 with at most 2^31 elements, got {s!r}")
        tdt = getattr(torch, dt)
        if tdt.is_floating_point:
            out.append(torch.randn(*dims, generator=gen).to(tdt))
        else:
            out.append(torch.zeros(*dims, dtype=tdt))
    return tuple(out)
