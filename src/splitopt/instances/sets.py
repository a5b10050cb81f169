"""Named instance sets for batch validation.

A *set* is a lazily listed sequence of :class:`Member` descriptors. A member is plain, picklable
data that says how to materialise one instance; the instance itself is only built where it is
used (in the worker process or on the Dask worker), so a set of 10,000 generated instances costs
nothing to ship: the driver sends ``("generate", "split", seed=7)``, not the instance.

Kinds of member (``Member.kind``):

``"generate"``
    ``Family.generate(seed, **params)`` of a registered family (see :mod:`splitopt.families`).
``"file"``
    an instance JSON file loaded with :func:`splitopt.instances.io.load`.
``"zoo"`` / ``"pipedream"``
    a packaged real DNN graph, from :func:`splitopt.instances.zoo.get` or
    :func:`splitopt.instances.importers.pipedream.load_packaged`, turned into an instance of a
    family by the **graph convention**: ``Family.generate(seed, graph=graph)`` builds an instance
    of that family around the given DNN graph, drawing everything else (platform, rates, k, ...)
    from ``seed``. Every family that wants to appear in the ``zoo`` and ``pipedream`` sets accepts
    that ``graph=`` keyword.
``"callable"``
    ``source[0](*source[1:])`` for a module-level (picklable) function, for user-defined sets.

Built-in sets (``NAME`` or ``NAME:N`` to change the number of seeds where that makes sense):

=================  ===========================================================================
``quick``          4 small generated instances of each family (well under a minute with HiGHS)
``split-random``   ``split`` family, seeds ``0..N-1`` (default N = 1000)
``grouping-random`` ``grouping`` family, seeds ``0..N-1`` (default N = 1000)
``zoo``            every zoo architecture through every family (seed 0; ``zoo:N``: the first N)
``pipedream``      every packaged PipeDream profile through every family (same convention)
=================  ===========================================================================

Any other argument naming an existing directory is a *directory set*: every ``*.json`` file below
it (recursively, sorted) is a member; a single ``.json`` file is a one-member set. Families that
cannot be imported yet (or lack ``generate``) are skipped, with a line in :attr:`InstanceSet.notes`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from splitopt.errors import InstanceError
from splitopt.instances.sources import load_graph

#: Packaged PipeDream profiles (used when the importer offers no listing function).
PIPEDREAM_NAMES: tuple[str, ...] = ("alexnet", "vgg16", "resnet18", "squeezenet1_0", "inception_v3", "gnmt")

MEMBER_KINDS = ("generate", "file", "zoo", "pipedream", "callable")


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no whitespace) used for keys and content hashes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def instance_hash(instance: Any) -> str:
    """SHA-256 (hex) of the instance's canonical versioned JSON envelope.

    Two instances with equal data have equal hashes on every machine, whatever set or file they
    came from; the results store keys its rows on this hash.
    """
    from splitopt.instances.io import envelope

    return hashlib.sha256(canonical_json(envelope(instance)).encode("utf-8")).hexdigest()


@dataclass(frozen=True, eq=True)
class Member:
    """How to materialise one instance (plain data; see the module docstring for ``kind``).

    ``member_id`` is unique within its set and human readable (``"split/seed=3"``);
    :attr:`key` is a stable identity across runs (used to skip work already done): for files it
    includes size and modification time so an edited file is validated again.
    """

    member_id: str
    kind: str
    family: str | None = None
    source: tuple = ()
    params: tuple = ()  # sorted (keyword, value) pairs for "generate" / graph kinds
    key: str = ""

    def __post_init__(self):
        if self.kind not in MEMBER_KINDS:
            raise InstanceError("member.kind", f"must be one of {', '.join(MEMBER_KINDS)}, got {self.kind!r}")
        if not self.key:
            object.__setattr__(self, "key", self._default_key())

    def _default_key(self) -> str:
        if self.kind == "file":
            p = Path(self.source[0]).resolve()
            try:
                st = p.stat()
                stamp = f"{st.st_size}:{st.st_mtime_ns}"
            except OSError:
                stamp = "missing"
            return f"file:{p}:{stamp}"
        if self.kind == "callable":
            fn = self.source[0]
            name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
            return f"callable:{name}:{canonical_json(list(self.source[1:]))}"
        return f"{self.kind}:{self.family}:{canonical_json(list(self.source))}:{canonical_json(dict(self.params))}"

    def load(self) -> Any:
        """Materialise the instance (raises :class:`InstanceError` or the loader's exception)."""
        if self.kind == "file":
            from splitopt.instances.io import load

            return load(self.source[0])
        if self.kind == "callable":
            return self.source[0](*self.source[1:])
        from splitopt.families import get_family

        fam = get_family(self.family)
        if fam.generate is None:
            raise InstanceError("family.generate", f"family {self.family!r} has no instance generator")
        params = dict(self.params)
        seed = params.pop("seed", 0)  # positional: the registry contract is generate(seed, **params)
        if self.kind == "generate":
            return fam.generate(seed, **params)
        graph = load_graph(f"{self.kind}:{self.source[0]}")
        return fam.generate(seed, graph=graph, **params)


@dataclass
class InstanceSet:
    """A named, lazily listed sequence of :class:`Member`.

    ``members()`` yields descriptors only; nothing is generated or loaded. ``notes`` collects
    lines about what was skipped (for example a family that is not importable yet); it is filled
    while ``members()`` is iterated.
    """

    name: str
    description: str
    factory: Callable[["InstanceSet"], Iterable[Member]]
    notes: list[str] = field(default_factory=list)

    def members(self) -> Iterator[Member]:
        self.notes.clear()
        seen: set[str] = set()
        for m in self.factory(self):
            if m.member_id in seen:
                raise InstanceError(f"set {self.name}", f"duplicate member id {m.member_id!r}")
            seen.add(m.member_id)
            yield m

    def __iter__(self) -> Iterator[Member]:
        return self.members()


# ----------------------------------------------------------------------------------------------
# helpers for set factories


def usable_family(name: str, notes: list[str], need_generate: bool = True):
    """The family ``name`` or ``None`` (with a note) when it cannot be imported or has no generator."""
    from splitopt.families import get_family

    try:
        fam = get_family(name)
    except Exception as exc:  # not written yet, broken import, ...
        notes.append(f"family {name!r} skipped: cannot import it ({type(exc).__name__}: {exc})")
        return None
    if need_generate and fam.generate is None:
        notes.append(f"family {name!r} skipped: it has no generate() hook")
        return None
    return fam


def generated_members(family: str, seeds: Iterable[int], **params) -> Iterator[Member]:
    """Members ``Family.generate(seed=s, **params)`` for each seed."""
    extra = tuple(sorted(params.items()))
    for s in seeds:
        yield Member(f"{family}/seed={s}", "generate", family, (), (("seed", int(s)),) + extra)


def graph_members(kind: str, family: str, names: Iterable[str], seeds: Iterable[int], **params) -> Iterator[Member]:
    """Members ``Family.generate(seed=s, graph=<packaged graph name>, **params)``."""
    seeds = list(seeds)
    for name in names:
        for s in seeds:
            yield Member(f"{family}/{kind}/{name}/seed={s}", kind, family, (name,),
                         tuple(sorted({"seed": int(s), **params}.items())))


def recipe_set(name: str, family: str, seeds: Iterable[int], description: str = "", **params) -> InstanceSet:
    """A set of generated instances of one family: ``generate(seed=s, **params)`` for each seed."""
    seeds = list(seeds)

    def factory(st: InstanceSet):
        if usable_family(family, st.notes) is None:
            return
        yield from generated_members(family, seeds, **params)

    return InstanceSet(name, description or f"{family} generated, {len(seeds)} seeds", factory)


def directory_set(path: str | os.PathLike, name: str | None = None) -> InstanceSet:
    """Every ``*.json`` instance file under ``path`` (recursive, sorted), or the single file ``path``."""
    root = Path(path)

    def factory(st: InstanceSet):
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*.json") if p.is_file())
        if not files:
            st.notes.append(f"no *.json files under {root}")
        for p in files:
            rel = p.name if root.is_file() else p.relative_to(root).as_posix()
            yield Member(rel, "file", None, (str(p.resolve()),))

    return InstanceSet(name or str(root), f"instance files under {root}", factory)


def _zoo_names(notes: list[str]) -> list[str]:
    try:
        from splitopt.instances import zoo
    except Exception as exc:
        notes.append(f"zoo skipped: cannot import splitopt.instances.zoo ({type(exc).__name__}: {exc})")
        return []
    for attr in ("list_models", "names", "available", "list_names"):
        fn = getattr(zoo, attr, None)
        if callable(fn):
            return list(fn())
    for attr in ("NAMES", "ARCHITECTURES", "REGISTRY"):
        val = getattr(zoo, attr, None)
        if val:
            return list(val)
    notes.append("zoo skipped: splitopt.instances.zoo offers no list_models() listing")
    return []


def _pipedream_names(notes: list[str]) -> list[str]:
    try:
        from splitopt.instances.importers import pipedream
    except Exception as exc:
        notes.append(f"pipedream skipped: cannot import the importer ({type(exc).__name__}: {exc})")
        return []
    for attr in ("packaged_profiles", "packaged_names", "names", "available"):
        fn = getattr(pipedream, attr, None)
        if callable(fn):
            return list(fn())
    return list(PIPEDREAM_NAMES)


# ----------------------------------------------------------------------------------------------
# built-in sets: each family declares its recipes (``Family.sets``, a SetRecipes)


def accepted_params(func: Callable, params: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``params`` that ``func`` accepts as keywords (all of them if it takes ``**kw``)."""
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return dict(params)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return dict(params)
    return {k: v for k, v in params.items() if k in sig.parameters}


def recipe_families(recipe: str, notes: list[str]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``(family, params)`` for every registered family that declares the recipe ``recipe``
    (``"quick"``, ``"random"`` or ``"graph"``); families that cannot be imported get a note."""
    from splitopt.families import family_names

    for name in family_names():
        fam = usable_family(name, notes)
        if fam is None:
            continue
        params = getattr(fam.sets, recipe)
        if params is not None:
            yield fam, accepted_params(fam.generate, dict(params))


def _quick(st: InstanceSet, n: int | None):
    for fam, params in recipe_families("quick", st.notes):
        yield from generated_members(fam.name, range(fam.sets.quick_seeds if n is None else n), **params)


def _random(family: str):
    def factory(st: InstanceSet, n: int | None):
        fam = usable_family(family, st.notes)
        if fam is None or fam.sets.random is None:
            return
        params = accepted_params(fam.generate, dict(fam.sets.random))
        yield from generated_members(family, range(fam.sets.random_seeds if n is None else n), **params)
    return factory


def _graphs(kind: str):
    def factory(st: InstanceSet, n: int | None):
        names = _zoo_names(st.notes) if kind == "zoo" else _pipedream_names(st.notes)
        if n is not None:  # NAME:N is N instances per family, as for quick and FAMILY-random (issue 24)
            names = names[:n]
        if not names:
            return
        for fam, params in recipe_families("graph", st.notes):
            yield from graph_members(kind, fam.name, names, range(1), **params)
    return factory


def _workloads(st: InstanceSet, n: int | None):
    from splitopt.instances.importers.dnn_partitioning import PACKAGED, load_workload

    for name in list(PACKAGED)[: n or None]:
        for cont in ("chain", "none"):
            yield Member(f"placement/workloads/{name}/{cont}", "callable", "placement", (load_workload, name, cont))


def _device_random(st: InstanceSet, n: int | None):
    from splitopt.instances.placement import generate_mixed

    for s in range(100 if n is None else n):
        yield Member(f"placement/seed={s}", "callable", "placement", (generate_mixed, s))


def _builtin_sets() -> dict[str, tuple[str, Callable[[InstanceSet, int | None], Iterable[Member]]]]:
    """``quick``, ``<family>-random`` for each family with a random recipe, ``zoo``, ``pipedream``."""
    from splitopt.families import family_names, get_family

    out = {"quick": ("a few small generated instances of every family", _quick)}
    for name in family_names():
        try:
            fam = get_family(name)
        except Exception:
            continue
        if fam.sets.random is not None and fam.generate is not None:
            out[f"{name}-random"] = (f"{name} family, generated, seeds 0..N-1 (N={fam.sets.random_seeds})",
                                     _random(name))
    out["workloads"] = ("the four shipped dnn-partitioning workloads (placement family), contiguity chain and "
                        "none (issue 11)", _workloads)
    out["device-random"] = ("placement family, generated (generate_mixed), seeds 0..N-1 (N=100)",
                            _device_random)
    out["zoo"] = ("every zoo architecture through every family (Family.generate(seed, graph=...))", _graphs("zoo"))
    out["pipedream"] = ("every packaged PipeDream profile through every family", _graphs("pipedream"))
    return out


_USER_SETS: dict[str, InstanceSet | Callable[[], InstanceSet]] = {}


def register_set(name: str, set_or_factory: InstanceSet | Callable[[], InstanceSet]) -> None:
    """Make ``get_set(name)`` return this set (or the set built by calling the factory)."""
    _USER_SETS[name] = set_or_factory


def set_names() -> list[str]:
    return list(_builtin_sets()) + sorted(_USER_SETS)


def get_set(spec: "str | os.PathLike | InstanceSet") -> InstanceSet:
    """Resolve a set name (``quick``, ``split-random:200``, a registered name), a directory of
    instance files, a single instance file, or an :class:`InstanceSet` (returned as is)."""
    if isinstance(spec, InstanceSet):
        return spec
    text = os.fspath(spec)
    if text in _USER_SETS:
        s = _USER_SETS[text]
        return s if isinstance(s, InstanceSet) else s()
    base, _, count = text.partition(":")
    builtin = _builtin_sets()
    if base in builtin and not Path(text).exists():
        n = None
        if count:
            try:
                n = int(count)
            except ValueError:
                raise InstanceError("set", f"count after ':' must be an integer, got {count!r}") from None
            if n < 0:
                raise InstanceError("set", f"count after ':' must be >= 0, got {n}")
        desc, fn = builtin[base]
        return InstanceSet(text, desc, lambda st, _fn=fn, _n=n: _fn(st, _n))
    p = Path(text)
    if p.is_dir() or p.is_file():
        return directory_set(p)
    raise InstanceError("set", f"unknown set {text!r}: not a set name ({', '.join(set_names())}) "
                               f"and not an existing directory or file")


__all__ = ["Member", "InstanceSet", "get_set", "register_set", "set_names", "recipe_set", "directory_set",
           "generated_members", "graph_members", "instance_hash", "canonical_json", "load_graph",
           "accepted_params", "recipe_families"]
