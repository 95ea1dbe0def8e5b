"""One registry per extension point (retriever, generator, embedder) and one spec grammar.

A spec names a registered family, then optionally an argument after the family's
separator (':' for retrievers and generators, '/' for embedders):

    bm25                               family "bm25", no argument
    dense:openai/text-embedding-3-large  family "dense", argument "openai/text-embedding-3-large"
    openai/nomic-embed-text:v1.5       embedder family "openai", argument "nomic-embed-text:v1.5"

`parse_spec` is that grammar: the first separator splits, and the argument keeps any
later separator. A family whose argument holds other specs (dense's embedder, summary's
EMBEDDER[@GENERATOR]) interprets it once, in its entry's `parts`, which says which
registered components the spec uses; cost estimates and tests read `parts` instead of
parsing specs again.

    RETRIEVERS.build("summary:openai@openai:gpt-4o-mini", settings)
    RETRIEVERS.parts("summary:openai@openai:gpt-4o-mini")
    # (Part("embedder", "openai"), Part("generator", "openai:gpt-4o-mini"))

`py:MODULE:CLASS` and `py:PATH.py:CLASS` name a user's own class; the loading they share
(file or module, class, code fingerprint, clear errors) is at the end of this module.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, NamedTuple, TypeVar

from target_core.config import PROJECT_ROOT, Settings
from target_core.errors import ConfigError, UnknownNameError, closest

T = TypeVar("T")


class DuplicateNameError(ConfigError):
    """A second entry under a name a registry already holds (it would replace the first)."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"{kind} '{name}' is registered twice")


@dataclass(frozen=True)
class Spec:
    """A parsed spec: the family name and its argument ("" when there is none)."""

    name: str
    arg: str = ""


def parse_spec(text: str, separator: str = ":") -> Spec:
    """Split `text` at the first `separator`: "dense:openai/m" -> Spec("dense", "openai/m").

    Both parts are stripped of surrounding spaces; the argument may contain `separator`
    again (it belongs to a nested spec or a model name)."""
    name, _, arg = text.strip().partition(separator)
    return Spec(name.strip(), arg.strip())


class Part(NamedTuple):
    """A registered component a spec uses: its registry kind and its full spec."""

    kind: str
    spec: str


def no_parts(arg: str) -> tuple[Part, ...]:
    """For families that use no other registered component."""
    return ()


def no_paid_model(arg: str) -> str | None:
    """For families that run locally: nothing is billed per token."""
    return None


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One family of a registry."""

    name: str
    description: str
    """One line, shown by the CLI's listing commands."""
    build: Callable[[str, Settings], T]
    """build(argument after the separator, or "" when none, settings); configuration
    errors (e.g. no API key) raise here, before any work."""
    examples: tuple[str, ...]
    """Full specs of this family: offered in the UI, suggested on a typo, and each one
    built by the contract test of the registry's kind."""
    parts: Callable[[str], tuple[Part, ...]] = no_parts
    """parts(argument): the registered components a spec of this family uses, with
    defaults filled in ("hybrid" -> (Part("embedder", "minilm"),))."""
    paid_model: Callable[[str], str | None] = no_paid_model
    """paid_model(argument): the model an API bills per token for this spec (priced in
    costs.py when known), or None when it runs locally."""
    version: str = ""
    """Set (or bumped) when this family's results change for the same spec, e.g. a new
    default; part of a run's key, so a run made by the old code is never reused or
    resumed as one of the new. Empty: keys are as they always were."""


class Registry(Generic[T]):
    """Entries of one kind by name, in registration order; a name is registered once."""

    def __init__(self, kind: str, entries: Iterable[Entry[T]] = (), *,
                 separator: str = ":") -> None:
        self.kind = kind
        """Singular noun used in messages: "retriever", "generator", "embedder"."""
        self.separator = separator
        self._entries: dict[str, Entry[T]] = {}
        for entry in entries:
            self.register(entry)

    def register(self, entry: Entry[T]) -> Entry[T]:
        """Add `entry`; a name already registered raises DuplicateNameError."""
        if entry.name in self._entries:
            raise DuplicateNameError(self.kind, entry.name)
        self._entries[entry.name] = entry
        return entry

    def get(self, name: str) -> Entry[T]:
        """The entry called `name`; an unknown name raises UnknownNameError, which
        suggests the closest registered name."""
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None

    def parse(self, spec: str) -> tuple[Entry[T], str]:
        """The entry `spec` names and its argument. An unknown family raises
        UnknownNameError naming the whole spec and suggesting the closest example."""
        parsed = parse_spec(spec, self.separator)
        entry = self._entries.get(parsed.name)
        if entry is None:
            raise UnknownNameError(self.kind, spec.strip(), self.examples())
        return entry, parsed.arg

    def build(self, spec: str, settings: Settings) -> T:
        """A fresh component for `spec`."""
        entry, arg = self.parse(spec)
        return entry.build(arg, settings)

    def parts(self, spec: str) -> tuple[Part, ...]:
        """The registered components `spec` uses (see Entry.parts)."""
        entry, arg = self.parse(spec)
        return entry.parts(arg)

    def paid_model(self, spec: str) -> str | None:
        """The model billed per token for `spec` itself (not its parts), or None."""
        entry, arg = self.parse(spec)
        return entry.paid_model(arg)

    def version(self, spec: str) -> str:
        """The version of the family `spec` names (see Entry.version); "" for an
        unknown family (building it reports that)."""
        entry = self._entries.get(parse_spec(spec, self.separator).name)
        return entry.version if entry is not None else ""

    def names(self) -> list[str]:
        return list(self._entries)

    def examples(self) -> tuple[str, ...]:
        """Every entry's example specs, in registration order."""
        return tuple(spec for entry in self._entries.values() for spec in entry.examples)

    def __iter__(self) -> Iterator[Entry[T]]:
        """The entries in registration order (the CLI lists them)."""
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


# --- py: a user's own class -------------------------------------------------------------
#
# `py:MODULE:CLASS` (a module on the Python path) or `py:PATH.py:CLASS` (a file, relative
# to the working directory, else to the project's root where examples/ lives). The
# retriever and generator registries each have a `py` entry that adapts the class to
# their protocol (retrievers/plugin.py, generators/plugin.py); loading is shared here.

PLUGIN = "py"
"""The family name of a user's own class, in every registry that accepts one."""


class PluginError(ConfigError):
    """A py: spec whose file, module or class cannot be loaded, or a class that fits no
    accepted shape, or one that broke its contract while running."""


@dataclass(frozen=True)
class ClassRef:
    """The argument of a py: spec: where the class lives, and its name there."""

    target: str
    """A module name (`my_pkg.retrievers`) or a file path (`examples/x.py`), as written."""
    name: str
    """The class (or any no-argument factory) in it; dots reach nested attributes."""

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py") or "/" in self.target or "\\" in self.target

    def __str__(self) -> str:
        return f"{self.target}:{self.name}"


def parse_class_ref(arg: str, kind: str) -> ClassRef:
    """`MODULE:CLASS` or `PATH.py:CLASS` (the last ':' splits, so a Windows drive stays in
    the path); anything else raises PluginError showing the expected form."""
    target, _, name = arg.strip().rpartition(":")
    if not target.strip() or not name.strip():
        raise PluginError(f"{kind} 'py:{arg}': expected py:MODULE:CLASS or py:PATH.py:CLASS, "
                          f"e.g. py:examples/protocol_retriever.py:OverlapRetriever")
    return ClassRef(target.strip(), name.strip())


def plugin_file(ref: ClassRef, kind: str) -> Path:
    """The file of a file reference: as given when it exists (relative to the working
    directory), else relative to the project's root; missing raises PluginError naming
    both places and any file of a close name."""
    given = Path(ref.target).expanduser()
    candidates = [given] if given.is_absolute() else [given, PROJECT_ROOT / given]
    for path in candidates:
        if path.is_file():
            return path.resolve()
    where = " or ".join(str(p.resolve()) for p in dict.fromkeys(candidates))
    message = f"{kind} 'py:{ref}': no file {where}"
    folder = candidates[-1].parent
    if folder.is_dir():
        near = closest(given.name, [p.name for p in folder.glob("*.py")])
        if near:
            message += f"; did you mean '{given.with_name(near).as_posix()}'?"
    raise PluginError(message)


def code_fingerprint(ref: ClassRef, kind: str = "plugin") -> str | None:
    """sha256 (16 hex chars) of the source the class comes from: the file, or the
    module's file; None when it has no source file (a built-in or namespace module).
    Only that one file counts: edits to modules it imports are not seen."""
    if ref.is_file:
        path: Path | None = plugin_file(ref, kind)
    else:
        try:
            found = importlib.util.find_spec(ref.target)
        except (ImportError, ValueError):
            found = None
        origin = found.origin if found is not None else None
        path = Path(origin) if origin and Path(origin).is_file() else None
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path else None


def spec_fingerprints(specs: Iterable[str]) -> dict[str, str]:
    """{class reference: code fingerprint} of every py: class `specs` use, at their top
    or nested after '@' (summary:EMBEDDER@py:...); empty when they use none. The run
    store puts it in a run's key, so an edited plugin makes a new run instead of
    resuming or reusing one made by the old code."""
    found: dict[str, str] = {}
    for spec in specs:
        for part in spec.split("@"):
            parsed = parse_spec(part)
            if parsed.name != PLUGIN or not parsed.arg:
                continue
            try:
                ref = parse_class_ref(parsed.arg, "plugin")
                code = code_fingerprint(ref)
            except PluginError:
                continue  # building the component reports it
            if code:
                found[str(ref)] = code
    return found


def _import_file(path: Path, kind: str, ref: ClassRef) -> ModuleType:
    """Import `path` as a module named after its file and content, so an edited file is
    imported again and two files of one name do not collide."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"target_plugin_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{kind} 'py:{ref}': {path} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PluginError(f"{kind} 'py:{ref}': importing {path} failed: "
                          f"{type(exc).__name__}: {exc}") from exc
    return module


def _import_module(ref: ClassRef, kind: str) -> ModuleType:
    try:
        return importlib.import_module(ref.target)
    except ModuleNotFoundError as exc:
        if exc.name and ref.target.startswith(exc.name):
            raise PluginError(f"{kind} 'py:{ref}': no module '{ref.target}' on the Python "
                              "path (for a file, give its path ending in .py)") from exc
        raise PluginError(f"{kind} 'py:{ref}': importing module '{ref.target}' failed: "
                          f"{exc}") from exc
    except Exception as exc:
        raise PluginError(f"{kind} 'py:{ref}': importing module '{ref.target}' failed: "
                          f"{type(exc).__name__}: {exc}") from exc


def load_class(ref: ClassRef, kind: str) -> Any:
    """The object `ref` names (not called). A missing file, module or attribute raises
    PluginError naming it, with the closest class of the module when one is close."""
    module = (_import_file(plugin_file(ref, kind), kind, ref) if ref.is_file
              else _import_module(ref, kind))
    value: Any = module
    for attr in ref.name.split("."):
        if not hasattr(value, attr):
            classes = [n for n, v in vars(module).items() if isinstance(v, type)
                       and v.__module__ == module.__name__ and not n.startswith("_")]
            message = f"{kind} 'py:{ref}': {ref.target} has no '{ref.name}'"
            if near := closest(ref.name, classes):
                message += f"; did you mean '{near}'?"
            raise PluginError(message + (f" Classes there: {', '.join(sorted(classes))}"
                                         if classes else ""))
        value = getattr(value, attr)
    return value


def instantiate(ref: ClassRef, kind: str) -> Any:
    """An instance of the class `ref` names, built with no arguments."""
    factory = load_class(ref, kind)
    if not callable(factory):
        raise PluginError(f"{kind} 'py:{ref}': '{ref.name}' is a "
                          f"{type(factory).__name__}, not a class")
    try:
        return factory()
    except Exception as exc:
        raise PluginError(f"{kind} 'py:{ref}': {ref.name}() failed (it is built with no "
                          f"arguments): {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class CheckReport:
    """What checking a class against its kind's contract found (check_retriever,
    check_generator): `problems` break runs, `warnings` make results doubtful, `notes`
    say what the engine will do with it."""

    subject: str
    """The spec or class checked, and the shape it was taken for."""
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        verdict = "OK" if self.ok else f"{len(self.problems)} problem(s)"
        lines = [f"{self.subject}: {verdict}"]
        for title, items in (("problem", self.problems), ("warning", self.warnings),
                             ("note", self.notes)):
            lines += [f"  {title}: {item}" for item in items]
        return "\n".join(lines)

    def raise_for_problems(self) -> CheckReport:
        """PluginError carrying the whole report when there is a problem, else self."""
        if self.problems:
            raise PluginError(str(self))
        return self
